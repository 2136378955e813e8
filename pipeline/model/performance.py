"""Relative performance per GPU and workload, measured where possible, estimated otherwise.

Measured: Dettmers takes the geometric mean over models of each GPU's speed relative to a
reference GPU. We fit the equivalent two-way log-linear model
    log t[gpu, table] = p[gpu] + q[table]
by least squares, where a table is one (source, software era, model, precision). With every
GPU measured in every table this is exactly the geometric mean of ratios; with gaps it
bridges them through the GPUs two tables share, and it never compares figures across tables
(and so across software eras) directly.

Estimated: GPUs with no benchmark get p from their specs, by a fit of
    p = a + b * log(memory bandwidth) + c * log(fp16 tensor TFLOPS)
on the measured GPUs (Dettmers scaled untested cards linearly by these specs, A54, B106).

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

    Only the connected set of GPUs that contains the reference GPU (or, if the reference
    was not measured, the largest connected set) is identified; p is defined up to a
    constant, which the caller removes by normalising. Returns gpu_id, log_perf, n_results.
    """
    if rows.is_empty():
        return pl.DataFrame(schema={"gpu_id": pl.Utf8, "log_perf": pl.Float64,
                                    "n_results": pl.Int64})
    pairs = list(zip(rows["gpu_id"], ("table:" + rows["table"]), strict=True))
    component = _components(pairs)
    gpu_roots = {g: component[g] for g in rows["gpu_id"].unique().to_list()}
    if reference_gpu in gpu_roots:
        root = gpu_roots[reference_gpu]
    else:
        sizes: dict[str, int] = {}
        for r in gpu_roots.values():
            sizes[r] = sizes.get(r, 0) + 1
        root = max(sorted(sizes), key=lambda r: sizes[r])
    keep = [g for g, r in gpu_roots.items() if r == root]
    rows = rows.filter(pl.col("gpu_id").is_in(keep))

    gpus = sorted(rows["gpu_id"].unique().to_list())
    tables = sorted(rows["table"].unique().to_list())
    g_index = {g: i for i, g in enumerate(gpus)}
    t_index = {t: len(gpus) + i for i, t in enumerate(tables)}
    design = np.zeros((rows.height + 1, len(gpus) + len(tables)))
    target = np.zeros(rows.height + 1)
    for i, (g, t, y) in enumerate(
        zip(rows["gpu_id"], rows["table"], rows["throughput_per_gpu"], strict=True)
    ):
        design[i, g_index[g]] = 1.0
        design[i, t_index[t]] = 1.0
        target[i] = np.log(y)
    # Pin the first GPU's p to 0: the system is otherwise singular by one constant.
    design[-1, 0] = 1.0
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    counts = rows.group_by("gpu_id").len()
    return (
        pl.DataFrame({"gpu_id": gpus, "log_perf": solution[: len(gpus)]})
        .join(counts.rename({"len": "n_results"}), on="gpu_id")
        .with_columns(pl.col("n_results").cast(pl.Int64))
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


def relative_performance(
    debiased: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters, run_date: dt.date
) -> pl.DataFrame:
    """One row per catalog GPU x workload: performance relative to the reference GPU."""
    reference = params.reference_gpu
    if reference not in gpus["gpu_id"].to_list():
        raise ValueError(f"reference GPU {reference!r} is not in the catalog")
    frames = []
    for workload in ("training_16bit", "inference_16bit"):
        rows = debiased.filter(pl.col("workload") == workload).select(
            "gpu_id",
            "throughput_per_gpu",
            table=pl.concat_str(
                "source", "software_era", "model", "precision", separator="|"
            ),
        )
        measured = fit_log_performance(rows, reference)
        estimated = estimate_from_specs(measured, gpus)
        merged = estimated.join(measured, on="gpu_id", how="left").with_columns(
            log_perf=pl.coalesce("log_perf", "estimated_log_perf"),
            method=pl.when(pl.col("n_results").is_not_null())
            .then(pl.lit("measured"))
            .otherwise(pl.lit("estimated")),
            n_results=pl.col("n_results").fill_null(0),
        )
        ref_log = merged.filter(pl.col("gpu_id") == reference)["log_perf"][0]
        frames.append(
            merged.select(
                "gpu_id",
                pl.lit(workload).alias("workload"),
                value=(pl.col("log_perf") - ref_log).exp(),
                method="method",
                n_results="n_results",
            )
        )
    sixteen = frames[1]
    frames.append(inference_8bit(sixteen, gpus, reference))
    return (
        pl.concat(frames)
        .with_columns(
            run_date=pl.lit(run_date),
            reference_gpu=pl.lit(reference),
            n_results=pl.col("n_results").cast(pl.Int32),
        )
        .select("run_date", "gpu_id", "workload", "value", "method", "n_results",
                "reference_gpu")
        .sort("workload", "value", descending=[False, True])
    )


def eight_bit_speedup(gpus: pl.DataFrame) -> pl.DataFrame:
    """8-bit over 16-bit tensor speed: FP8/FP16 on FP8-capable GPUs, else 1 (Dettmers)."""
    has_fp8 = pl.col("architecture").is_in(FP8_ARCHITECTURES) & pl.col(
        "fp8_tensor_tflops"
    ).is_not_null()
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
