"""Relative performance per GPU and workload, measured where possible, estimated otherwise.

Measured: Dettmers takes the geometric mean over models of each GPU's speed relative to a
reference GPU. We fit the equivalent two-way log-linear model
    log t[gpu, table] = p[gpu] + q[table]
by least squares, where a table is one (source, software era, file, model, precision).
With every GPU measured in every table this is exactly the geometric mean of ratios; with
gaps it bridges them through the GPUs two tables share, and it never compares figures
across tables (and so across software eras) directly. GPUs that share no table with the
reference's set are placed on the common scale through an anchor (below), keeping their
measured ratios to each other.

Anchors and estimates, training: GPUs with no benchmark get p from their specs, by a fit of
    p = a + b * log(memory bandwidth) + c * log(fp16 tensor TFLOPS)
on the measured GPUs (Dettmers scaled untested cards linearly by these specs, A54, B106).
Anchors and estimates, inference: the GPU's training value (public inference tables cover
too few GPUs for a spec fit); an unmeasured GPU is its training value times the median
inference/training ratio of the measured GPUs.

8-bit inference: FP8 tensor throughput on Ada, Hopper and Blackwell; older GPUs run 8-bit at
about their 16-bit speed (B536-553). v0 derives it from 16-bit inference with that rule.
"""

import datetime as dt

import numpy as np
import polars as pl

from pipeline.model.parameters import ModelParameters

FP8_ARCHITECTURES = ("ada", "hopper", "blackwell", "cdna3")


def _components(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Union-find over a bipartite gpu-table graph: node -> component root."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    return {node: find(node) for node in list(parent)}


def fit_log_performance(rows: pl.DataFrame, reference_gpu: str) -> pl.DataFrame:
    """Least-squares p[gpu] from rows (gpu_id, table, throughput_per_gpu).

    GPUs that share no table, directly or through other GPUs, cannot be compared: each
    connected set is fitted with its own free constant. Returns gpu_id, log_perf,
    n_results, component (an int) and main (the set holding the reference GPU, or the
    largest set when the reference was not measured). Within a set, differences of
    log_perf are the measured log ratios.
    """
    schema = {
        "gpu_id": pl.Utf8,
        "log_perf": pl.Float64,
        "n_results": pl.Int64,
        "component": pl.Int64,
        "main": pl.Boolean,
    }
    if rows.is_empty():
        return pl.DataFrame(schema=schema)
    pairs = list(zip(rows["gpu_id"], ("table:" + rows["table"]), strict=True))
    component = _components(pairs)
    gpus = sorted(rows["gpu_id"].unique().to_list())
    roots = sorted({component[g] for g in gpus})
    gpu_component = {g: roots.index(component[g]) for g in gpus}
    sizes = [sum(1 for g in gpus if gpu_component[g] == k) for k in range(len(roots))]
    main = (
        gpu_component[reference_gpu]
        if reference_gpu in gpu_component
        else max(range(len(roots)), key=lambda k: (sizes[k], -k))
    )

    tables = sorted(rows["table"].unique().to_list())
    g_index = {g: i for i, g in enumerate(gpus)}
    t_index = {t: len(gpus) + i for i, t in enumerate(tables)}
    design = np.zeros((rows.height + len(roots), len(gpus) + len(tables)))
    target = np.zeros(rows.height + len(roots))
    for i, (g, t, y) in enumerate(
        zip(rows["gpu_id"], rows["table"], rows["throughput_per_gpu"], strict=True)
    ):
        design[i, g_index[g]] = 1.0
        design[i, t_index[t]] = 1.0
        target[i] = np.log(y)
    # Pin one GPU per connected set to 0: each set is otherwise free by one constant.
    for k in range(len(roots)):
        first = next(g for g in gpus if gpu_component[g] == k)
        design[rows.height + k, g_index[first]] = 1.0
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    counts = rows.group_by("gpu_id").len()
    return (
        pl.DataFrame(
            {
                "gpu_id": gpus,
                "log_perf": solution[: len(gpus)],
                "component": [gpu_component[g] for g in gpus],
                "main": [gpu_component[g] == main for g in gpus],
            }
        )
        .join(counts.rename({"len": "n_results"}), on="gpu_id")
        .with_columns(pl.col("n_results").cast(pl.Int64), pl.col("component").cast(pl.Int64))
        .select(list(schema))
    )


def place_on_anchor(measured: pl.DataFrame, anchor: pl.DataFrame) -> pl.DataFrame:
    """Every catalog GPU's log performance on one scale.

    `anchor` (gpu_id, anchor_log) is a prior for every GPU: the spec estimate for
    training, the training value for inference. Each connected set of measured GPUs is
    shifted by the median of (measured - anchor) over its GPUs, which keeps its measured
    ratios exact and puts sets that share no table on the anchor's scale. Unmeasured GPUs
    take the anchor.
    """
    placed = measured.join(anchor, on="gpu_id")
    shifts = placed.group_by("component").agg(
        shift=(pl.col("log_perf") - pl.col("anchor_log")).median()
    )
    placed = placed.join(shifts, on="component").select(
        "gpu_id", "n_results", log_perf=pl.col("log_perf") - pl.col("shift")
    )
    return anchor.join(placed, on="gpu_id", how="left").with_columns(
        log_perf=pl.coalesce("log_perf", "anchor_log")
    )


def estimate_from_specs(measured: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Predict log_perf for every catalog GPU from bandwidth and fp16 tensor TFLOPS.

    With at least 8 measured GPUs and non-negative fitted elasticities, both elasticities
    are fitted; otherwise (too little data, or an implausible fit) they are fixed at 0.5 each
    (the geometric mean of the bandwidth and compute ratios) and only the level is fitted.
    """
    features = gpus.select(
        "gpu_id",
        log_bw=pl.col("memory_bandwidth_gbs").log(),
        log_tf=pl.col("fp16_tensor_tflops").log(),
    )
    train = measured.join(features, on="gpu_id")
    x = train.select("log_bw", "log_tf").to_numpy()
    y = train["log_perf"].to_numpy()
    coef = None
    if train.height >= 8:
        design = np.column_stack([np.ones(len(y)), x])
        fitted, *_ = np.linalg.lstsq(design, y, rcond=None)
        if fitted[1] >= 0 and fitted[2] >= 0:
            coef = fitted
    if coef is None:
        level = float(np.mean(y - 0.5 * x[:, 0] - 0.5 * x[:, 1])) if len(y) else 0.0
        coef = np.array([level, 0.5, 0.5])
    return features.select(
        "gpu_id",
        estimated_log_perf=coef[0] + coef[1] * pl.col("log_bw") + coef[2] * pl.col("log_tf"),
    )


def _measured(debiased: pl.DataFrame, workload: str, reference: str) -> pl.DataFrame:
    rows = debiased.filter(pl.col("workload") == workload).select(
        "gpu_id",
        "throughput_per_gpu",
        table=pl.concat_str(
            "source", "software_era", "citation", "model", "precision", separator="|"
        ),
    )
    return fit_log_performance(rows, reference)


def _normalised(merged: pl.DataFrame, workload: str, reference: str) -> pl.DataFrame:
    """Normalise: value = exp(log_perf - log_perf[reference]); method = was it measured."""
    ref_log = merged.filter(pl.col("gpu_id") == reference)["log_perf"][0]
    return merged.select(
        "gpu_id",
        pl.lit(workload).alias("workload"),
        value=(pl.col("log_perf") - ref_log).exp(),
        method=pl.when(pl.col("n_results").is_not_null())
        .then(pl.lit("measured"))
        .otherwise(pl.lit("estimated")),
        n_results=pl.col("n_results").fill_null(0),
    )


def training_16bit(debiased: pl.DataFrame, gpus: pl.DataFrame, reference: str) -> pl.DataFrame:
    """16-bit training: measured where benchmarked, else estimated from specs."""
    measured = _measured(debiased, "training_16bit", reference)
    anchor = estimate_from_specs(measured.filter(pl.col("main")), gpus).rename(
        {"estimated_log_perf": "anchor_log"}
    )
    return _normalised(place_on_anchor(measured, anchor), "training_16bit", reference)


def inference_16bit(debiased: pl.DataFrame, training: pl.DataFrame, reference: str) -> pl.DataFrame:
    """16-bit inference: measured where benchmarked, else bridged from training.

    Public inference tables cover few GPUs (mostly data-center parts), too few to fit a
    spec model. Dettmers ranked inference like training; an unmeasured GPU is its 16-bit
    training value times the median inference/training ratio of the measured GPUs.
    """
    measured = _measured(debiased, "inference_16bit", reference)
    anchor = training.select("gpu_id", anchor_log=pl.col("value").log())
    return _normalised(place_on_anchor(measured, anchor), "inference_16bit", reference)


def relative_performance(
    debiased: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters, run_date: dt.date
) -> pl.DataFrame:
    """One row per catalog GPU x workload: performance relative to the reference GPU."""
    reference = params.reference_gpu
    if reference not in gpus["gpu_id"].to_list():
        raise ValueError(f"reference GPU {reference!r} is not in the catalog")
    training = training_16bit(debiased, gpus, reference)
    inference = inference_16bit(debiased, training, reference)
    eight_bit = inference_8bit(inference, gpus, reference)
    return (
        pl.concat([training, inference, eight_bit])
        .with_columns(
            run_date=pl.lit(run_date),
            reference_gpu=pl.lit(reference),
            n_results=pl.col("n_results").cast(pl.Int32),
        )
        .select("run_date", "gpu_id", "workload", "value", "method", "n_results", "reference_gpu")
        .sort("workload", "value", descending=[False, True])
    )


def eight_bit_speedup(gpus: pl.DataFrame) -> pl.DataFrame:
    """8-bit over 16-bit tensor speed: FP8/FP16 on FP8-capable GPUs, else 1 (Dettmers)."""
    has_fp8 = (
        pl.col("architecture").is_in(FP8_ARCHITECTURES) & pl.col("fp8_tensor_tflops").is_not_null()
    )
    return gpus.select(
        "gpu_id",
        speedup=pl.when(has_fp8)
        .then(pl.col("fp8_tensor_tflops") / pl.col("fp16_tensor_tflops"))
        .otherwise(1.0),
    )


def inference_8bit(
    inference_16bit: pl.DataFrame, gpus: pl.DataFrame, reference: str
) -> pl.DataFrame:
    """8-bit inference relative performance derived from 16-bit inference (always estimated)."""
    speed = eight_bit_speedup(gpus)
    ref_speed = speed.filter(pl.col("gpu_id") == reference)["speedup"][0]
    return inference_16bit.join(speed, on="gpu_id").select(
        "gpu_id",
        pl.lit("inference_8bit").alias("workload"),
        value=pl.col("value") * pl.col("speedup") / ref_speed,
        method=pl.lit("estimated"),
        n_results="n_results",
    )
