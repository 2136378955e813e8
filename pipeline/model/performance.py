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

Anchors and estimates, training: GPUs with no benchmark get p from their specs. Candidate
estimators (SPEC_MODELS: Dettmers' fixed 0.5/0.5 scaling by memory bandwidth and fp16 tensor
TFLOPS, A54, B106; fitted elasticities; + L2 cache; + architecture offsets) are compared by
leave-one-GPU-out error on the measured GPUs and the best one is used.
Anchors and estimates, inference: the GPU's training value (public inference tables cover
too few GPUs for a spec fit); an unmeasured GPU is its training value times the median
inference/training ratio of the measured GPUs.

Intervals (value_low, value_high, 95 %): measured GPUs from the least-squares covariance of
the two-way fit (t on its residual degrees of freedom); GPUs placed through an anchor add
the anchor's error; estimated GPUs take the spec estimator's leave-one-GPU-out error range
(training) or the training interval combined with the spread of inference/training ratios.

8-bit inference: FP8 tensor throughput on Ada, Hopper and Blackwell; older GPUs run 8-bit at
about their 16-bit speed (B536-553). v0 derives it from 16-bit inference with that rule.
"""

import datetime as dt

import numpy as np
import polars as pl

from pipeline.model.fit import t975
from pipeline.model.parameters import ModelParameters

FP8_ARCHITECTURES = ("ada", "hopper", "blackwell", "cdna3", "cdna4")


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
        "log_se": pl.Float64,
        "df": pl.Int64,
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
    log_se, df = _contrast_se(design, target, solution, rows.height, gpus, gpu_component)
    counts = rows.group_by("gpu_id").len()
    ref = reference_gpu if reference_gpu in gpu_component else None
    return (
        pl.DataFrame(
            {
                "gpu_id": gpus,
                "log_perf": solution[: len(gpus)],
                "component": [gpu_component[g] for g in gpus],
                "main": [gpu_component[g] == main for g in gpus],
                "log_se": [log_se(g, ref) for g in gpus],
                "df": [df] * len(gpus),
            }
        )
        .join(counts.rename({"len": "n_results"}), on="gpu_id")
        .with_columns(
            pl.col("n_results").cast(pl.Int64),
            pl.col("component").cast(pl.Int64),
            pl.col("df").cast(pl.Int64),
        )
        .select(list(schema))
    )


def _contrast_se(design, target, solution, n_rows, gpus, gpu_component):
    """Standard errors of log-performance contrasts from the least-squares covariance.

    Cov = s^2 (A'A)^-1 with A the design including the pin rows (which fix each set's free
    constant; a contrast within a set does not depend on how it is pinned). s^2 is the
    residual variance of the data rows. A GPU's contrast is against the reference when they
    share a set, else against its set's mean. Returns (se(gpu, reference), df); se is None
    without residual degrees of freedom.
    """
    rank = np.linalg.matrix_rank(design[:n_rows]) if n_rows else 0
    df = n_rows - rank
    if df <= 0:
        return (lambda g, ref: 0.0 if g == ref else None), df
    resid = target[:n_rows] - design[:n_rows] @ solution
    cov = float(resid @ resid) / df * np.linalg.pinv(design.T @ design)
    index = {g: i for i, g in enumerate(gpus)}

    def se(gpu: str, ref: str | None) -> float:
        c = np.zeros(design.shape[1])
        c[index[gpu]] = 1.0
        if ref is not None and gpu_component[ref] == gpu_component[gpu]:
            c[index[ref]] -= 1.0
        else:
            members = [index[g] for g in gpus if gpu_component[g] == gpu_component[gpu]]
            c[members] -= 1.0 / len(members)
        return float(np.sqrt(max(c @ cov @ c, 0.0)))

    return se, df


def place_on_anchor(measured: pl.DataFrame, anchor: pl.DataFrame) -> pl.DataFrame:
    """Every catalog GPU's log performance on one scale.

    `anchor` (gpu_id, anchor_log) is a prior for every GPU: the spec estimate for
    training, the training value for inference. Each connected set of measured GPUs is
    shifted by the median of (measured - anchor) over its GPUs, which keeps its measured
    ratios exact and puts sets that share no table on the anchor's scale. Unmeasured GPUs
    take the anchor. Also returns `main`, `log_se` and `set_size` (the GPUs in its set) of
    measured GPUs, for the intervals.
    """
    placed = measured.join(anchor, on="gpu_id")
    shifts = placed.group_by("component").agg(
        shift=(pl.col("log_perf") - pl.col("anchor_log")).median(), set_size=pl.len()
    )
    extra = [c for c in ("main", "log_se") if c in measured.columns]
    placed = placed.join(shifts, on="component").select(
        "gpu_id", "n_results", *extra, "set_size", log_perf=pl.col("log_perf") - pl.col("shift")
    )
    return anchor.join(placed, on="gpu_id", how="left").with_columns(
        log_perf=pl.coalesce("log_perf", "anchor_log")
    )


# --- the spec-based estimator, its candidates and their leave-one-GPU-out error ----------

# Candidates, simplest first (a tie goes to the simpler one). Dettmers scaled untested cards
# by bandwidth and tensor throughput (A54, B106); his 2023 priority list adds cache (L2) and
# the architecture (B106, B264-268).
SPEC_MODELS = (
    "dettmers_half_half",
    "bandwidth_tensor",
    "bandwidth_tensor_l2",
    "bandwidth_tensor_l2_arch",
)
MIN_FITTED_GPUS = 8
# Ridge penalty on the architecture offsets: an architecture with k measured GPUs keeps
# k / (k + 1) of its mean residual, one with none gets no offset.
ARCH_RIDGE = 1.0


def spec_features(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, log bandwidth, log fp16 tensor TFLOPS, log L2 (may be null), architecture."""
    l2 = pl.col("l2_cache_mb").log() if "l2_cache_mb" in gpus.columns else pl.lit(None)
    arch = pl.col("architecture") if "architecture" in gpus.columns else pl.lit("unknown")
    return gpus.select(
        "gpu_id",
        log_bw=pl.col("memory_bandwidth_gbs").log(),
        log_tf=pl.col("fp16_tensor_tflops").log(),
        log_l2=l2.cast(pl.Float64),
        architecture=arch.cast(pl.Utf8),
    )


def _fit_spec(model: str, train: pl.DataFrame):
    """Fit one candidate on (features + log_perf) rows; returns predict(features) -> array.

    Candidates that need more GPUs than `train` has, or that fit a negative elasticity,
    fall back to the next simpler one, so every candidate can always predict.
    """
    y = train["log_perf"].to_numpy()
    bw, tf = train["log_bw"].to_numpy(), train["log_tf"].to_numpy()
    if model == "dettmers_half_half" or len(y) < MIN_FITTED_GPUS:
        level = float(np.mean(y - 0.5 * bw - 0.5 * tf)) if len(y) else 0.0
        return lambda f: level + 0.5 * f["log_bw"].to_numpy() + 0.5 * f["log_tf"].to_numpy()
    if model == "bandwidth_tensor":
        coef, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(y)), bw, tf]), y, rcond=None)
        if coef[1] < 0 or coef[2] < 0:
            return _fit_spec("dettmers_half_half", train)
        return lambda f: (
            coef[0] + coef[1] * f["log_bw"].to_numpy() + coef[2] * f["log_tf"].to_numpy()
        )
    simpler = _fit_spec("bandwidth_tensor", train)
    with_l2 = train.filter(pl.col("log_l2").is_not_null())
    if with_l2.height < MIN_FITTED_GPUS:
        return simpler
    archs = sorted(set(with_l2["architecture"])) if model.endswith("_arch") else []
    base = np.column_stack(
        [np.ones(with_l2.height), with_l2["log_bw"], with_l2["log_tf"], with_l2["log_l2"]]
    )
    dummies = np.array([[a == arch for arch in archs] for a in with_l2["architecture"]], float)
    design = np.column_stack([base, dummies.reshape(with_l2.height, len(archs))])
    target = with_l2["log_perf"].to_numpy()
    if archs:
        penalty = np.zeros((len(archs), design.shape[1]))
        penalty[:, 4:] = np.sqrt(ARCH_RIDGE) * np.eye(len(archs))
        design, target = (
            np.vstack([design, penalty]),
            np.concatenate([target, np.zeros(len(archs))]),
        )
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    if min(coef[1], coef[2]) < 0:
        return simpler
    offsets = dict(zip(archs, coef[4:], strict=True))

    def predict(f: pl.DataFrame) -> np.ndarray:
        fallback = simpler(f)
        l2 = f["log_l2"].to_numpy()
        offset = np.array([offsets.get(a, 0.0) for a in f["architecture"]])
        full = coef[0] + coef[1] * f["log_bw"].to_numpy() + coef[2] * f["log_tf"].to_numpy()
        full = full + coef[3] * np.nan_to_num(l2.astype(float), nan=0.0) + offset
        return np.where(np.isnan(l2.astype(float)), fallback, full)

    return predict


def leave_one_gpu_out(measured: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Each candidate's prediction of each measured GPU from all the other measured GPUs.

    `measured` holds one connected set (gpu_id, log_perf). Returns model, gpu_id,
    log_error (predicted - measured) and ape (|predicted / measured - 1|).
    """
    data = measured.select("gpu_id", "log_perf").join(spec_features(gpus), on="gpu_id")
    out = []
    for model in SPEC_MODELS:
        for i in range(data.height):
            held = data.slice(i, 1)
            train = data.filter(pl.col("gpu_id") != held["gpu_id"][0])
            error = float(_fit_spec(model, train)(held)[0] - held["log_perf"][0])
            out.append({"model": model, "gpu_id": held["gpu_id"][0], "log_error": error})
    schema = {"model": pl.Utf8, "gpu_id": pl.Utf8, "log_error": pl.Float64}
    return pl.DataFrame(out, schema=schema).with_columns(ape=(pl.col("log_error").exp() - 1).abs())


def choose_spec_model(logo: pl.DataFrame) -> str:
    """The candidate with the lowest median leave-one-GPU-out error (ties: the simpler)."""
    if logo.is_empty():
        return SPEC_MODELS[0]
    medians = logo.group_by("model").agg(pl.col("ape").median())
    best = dict(zip(medians["model"], medians["ape"], strict=True))
    return min(SPEC_MODELS, key=lambda m: (round(best.get(m, np.inf), 6), SPEC_MODELS.index(m)))


def spec_estimator(measured: pl.DataFrame, gpus: pl.DataFrame):
    """(estimates, logo, chosen model): the chosen candidate fitted on all measured GPUs."""
    logo = leave_one_gpu_out(measured, gpus)
    chosen = choose_spec_model(logo)
    predict = _fit_spec(chosen, measured.join(spec_features(gpus), on="gpu_id"))
    features = spec_features(gpus)
    estimates = features.select("gpu_id").with_columns(
        anchor_log=pl.Series(predict(features), dtype=pl.Float64)
    )
    return estimates, logo.filter(pl.col("model") == chosen), chosen


# --- workloads ----------------------------------------------------------------------------


def _measured(debiased: pl.DataFrame, workload: str, reference: str) -> pl.DataFrame:
    rows = debiased.filter(pl.col("workload") == workload).select(
        "gpu_id",
        "throughput_per_gpu",
        table=pl.concat_str(
            "source", "software_era", "citation", "model", "precision", separator="|"
        ),
    )
    return fit_log_performance(rows, reference)


def _intervals(placed: pl.DataFrame, df: int, anchor_half: pl.Expr, set_sd: float) -> pl.DataFrame:
    """Log half-widths of the 95 % interval and how it was made, per GPU.

    - measured, in the reference's set: t(df) x the least-squares standard error;
    - measured, another set: that plus the anchor's error over the set (sd / sqrt(size));
    - not measured: the anchor's own interval (`anchor_half`).
    """
    t = t975(df) if df >= 1 else None
    own = pl.col("log_se") * t if t is not None else pl.lit(None, dtype=pl.Float64)
    shifted = (pl.col("log_se").pow(2) + set_sd**2 / pl.col("set_size")).sqrt() * (t or 1.96)
    measured = pl.col("n_results").is_not_null()
    return placed.with_columns(
        half=pl.when(measured & pl.col("main"))
        .then(own)
        .when(measured)
        .then(shifted)
        .otherwise(anchor_half),
        interval_method=pl.when(measured & pl.col("main"))
        .then(pl.lit(f"least-squares standard error, t({df}) 95 %"))
        .when(measured)
        .then(pl.lit("least-squares standard error plus anchoring error of its set, 95 %"))
        .otherwise(pl.lit(None, dtype=pl.Utf8)),
    )


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
        value_low=(pl.col("log_perf") - ref_log - pl.col("half")).exp(),
        value_high=(pl.col("log_perf") - ref_log + pl.col("half")).exp(),
        interval_method="interval_method",
    )


def training_16bit(debiased: pl.DataFrame, gpus: pl.DataFrame, reference: str) -> pl.DataFrame:
    """16-bit training: measured where benchmarked, else estimated from specs."""
    measured = _measured(debiased, "training_16bit", reference)
    main = measured.filter(pl.col("main"))
    anchor, logo, chosen = spec_estimator(main, gpus)
    placed = place_on_anchor(measured, anchor)
    # Unmeasured GPUs: the empirical 2.5-97.5 % range of the estimator's leave-one-GPU-out
    # errors (measured - predicted), so the interval is as wide as its tested error.
    if logo.height >= 3:
        q_low = float(logo["log_error"].quantile(0.025, "linear"))
        q_high = float(logo["log_error"].quantile(0.975, "linear"))
        rmse = float(np.sqrt(np.mean(logo["log_error"].to_numpy() ** 2)))
        spread = f"spec estimate ({chosen}), leave-one-GPU-out error range over {logo.height} GPUs"
    else:
        q_low = q_high = rmse = None
        spread = None
    df = int(measured["df"].max()) if measured.height else 0
    with_half = _intervals(placed, df, pl.lit(None, dtype=pl.Float64), rmse or 0.0)
    out = _normalised(with_half, "training_16bit", reference)
    if q_low is None:
        return out
    # The leave-one-out range is asymmetric: low = value * exp(-q_high), high = * exp(-q_low).
    return out.with_columns(
        value_low=pl.when(pl.col("method") == "estimated")
        .then(pl.col("value") * np.exp(-q_high))
        .otherwise("value_low"),
        value_high=pl.when(pl.col("method") == "estimated")
        .then(pl.col("value") * np.exp(-q_low))
        .otherwise("value_high"),
        interval_method=pl.when(pl.col("method") == "estimated")
        .then(pl.lit(spread))
        .otherwise("interval_method"),
    )


def inference_16bit(debiased: pl.DataFrame, training: pl.DataFrame, reference: str) -> pl.DataFrame:
    """16-bit inference: measured where benchmarked, else bridged from training.

    Public inference tables cover few GPUs (mostly data-center parts), too few to fit a
    spec model. Dettmers ranked inference like training; an unmeasured GPU is its 16-bit
    training value times the median inference/training ratio of the measured GPUs. Its
    interval combines the training interval with t(k - 1) x the sd of those k ratios.
    """
    measured = _measured(debiased, "inference_16bit", reference)
    anchor = training.select(
        "gpu_id",
        anchor_log=pl.col("value").log(),
        _train_half=((pl.col("value_high") / pl.col("value_low")).log() / 2),
    )
    placed = place_on_anchor(measured, anchor.select("gpu_id", "anchor_log")).join(
        anchor.select("gpu_id", "_train_half"), on="gpu_id"
    )
    ratios = placed.filter(pl.col("n_results").is_not_null() & pl.col("main")).join(
        anchor.select("gpu_id", "anchor_log").rename({"anchor_log": "_a"}), on="gpu_id"
    )
    offsets = (ratios["log_perf"] - ratios["_a"]).to_numpy()
    ratio_sd = float(np.std(offsets, ddof=1)) if len(offsets) >= 2 else None
    # The sd comes from a handful of ratios: Student t on their len - 1 degrees of freedom.
    ratio_t = t975(len(offsets) - 1) if ratio_sd is not None else None
    df = int(measured["df"].max()) if measured.height else 0
    anchor_half = (
        (pl.col("_train_half").pow(2) + (ratio_t * ratio_sd) ** 2).sqrt()
        if ratio_sd is not None
        else pl.lit(None, dtype=pl.Float64)
    )
    with_half = _intervals(placed, df, anchor_half, ratio_sd or 0.0).with_columns(
        interval_method=pl.coalesce(
            "interval_method",
            pl.when(pl.col("half").is_not_null()).then(
                pl.lit(
                    f"training interval combined with t({len(offsets) - 1}) x the sd "
                    f"({ratio_sd or 0:.3f} in logs) of {len(offsets)} measured "
                    "inference/training ratios"
                )
            ),
        )
    )
    return _normalised(with_half, "inference_16bit", reference)


def relative_performance(
    debiased: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters, run_date: dt.date
) -> pl.DataFrame:
    """One row per catalog GPU x workload: performance relative to the reference GPU.

    value_low/value_high is a 95 % interval (see `interval_method`); NULL where no interval
    can be computed (a fit without residual degrees of freedom, too few GPUs to validate
    the spec estimator).
    """
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
        .select(
            "run_date",
            "gpu_id",
            "workload",
            "value",
            "method",
            "n_results",
            "reference_gpu",
            "value_low",
            "value_high",
            "interval_method",
        )
        .sort("workload", "value", descending=[False, True])
    )


REFERENCE_8BIT = "reference GPU: 1 by definition (8-bit values are relative to its 8-bit speed)"


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
    """8-bit inference relative performance derived from 16-bit inference (always estimated).

    The interval is the 16-bit one scaled by the same factor; the 8-bit rule's own error is
    not quantified (no 8-bit training or MLPerf figures are ingested yet). No 8-bit result
    is behind any row, so `n_results` is 0 as for every estimate; the reference GPU is 1 by
    definition (every 8-bit value is relative to its 8-bit speed), interval [1, 1].
    """
    speed = eight_bit_speedup(gpus)
    ref_speed = speed.filter(pl.col("gpu_id") == reference)["speedup"][0]
    factor = pl.col("speedup") / ref_speed
    is_reference = pl.col("gpu_id") == reference
    return inference_16bit.join(speed, on="gpu_id").select(
        "gpu_id",
        pl.lit("inference_8bit").alias("workload"),
        value=pl.col("value") * factor,
        method=pl.lit("estimated"),
        n_results=pl.col("n_results") * 0,  # same dtype as the 16-bit rows it is stacked on
        value_low=pl.col("value_low") * factor,
        value_high=pl.col("value_high") * factor,
        interval_method=pl.when(is_reference)
        .then(
            pl.lit("reference GPU: 1 by definition (8-bit values are relative to its 8-bit speed)")
        )
        .when(pl.col("interval_method").is_not_null())
        .then(
            pl.lit(
                "16-bit inference interval scaled by the 8-bit speedup (rule error not included)"
            )
        ),
    )
