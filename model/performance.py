"""Relative performance per GPU and workload, measured where possible, estimated otherwise.

Measured: Dettmers takes the geometric mean over models of each GPU's speed relative to a
reference GPU. We fit the equivalent two-way log-linear model
    log t[gpu, table] = p[gpu] + q[table]
by least squares, where a table is one (source, software era, file, model, precision), or
for MLPerf one round x benchmark x precision. With every GPU measured in every table this
is exactly the geometric mean of ratios; with gaps it bridges them through the GPUs two
tables share, and it never compares figures across tables (and so across software eras)
directly. GPUs that share no table with the reference's set are placed on the common
scale through their *measured* anchors only (below), keeping their measured ratios.

16-bit training (`evidence`): `measured` in the reference's set of tables; `spec_placed`
for a set of tables that shares no GPU with it (its measured ratios are kept, its level
comes from the spec estimates: marked estimated); `spec_estimate` for GPUs without a
benchmark. The spec estimator is chosen among candidates (SPEC_MODELS: Dettmers' fixed
0.5/0.5 scaling by bandwidth and fp16 tensor TFLOPS, fitted elasticities, + L2, + power
(TDP) with vendor and architecture offsets shrunk by a ridge) by leave-one-GPU-out error;
a GPU of an architecture (vendor) without any measured GPU takes the error range of
leaving whole architectures (vendors) out, so it gets a wider interval.

Inference (16- and 8-bit), `bridge`: measured where a GPU has results; a set of inference
tables without the reference is placed through its GPUs whose base value (training for
16-bit; 16-bit inference x the 8-bit tensor speedup for 8-bit) is itself measured. Other
GPUs are bridged: base x the inference/base ratio of their family — vendor, then
architecture for 16-bit; segment (consumer or data-center/professional), vendor, then
architecture for 8-bit — each level pooled toward the one above and the top toward the
mean of all measured GPUs (`pooled_ratio`; never counting the reference's ratio, 1 by
definition), with an interval from the spread of those ratios and how few support it.
With fewer than three measured ratios Dettmers' rule applies (inference ranks like
training, ratio 1) and the row says so (`evidence` = `dettmers_rule`).

8-bit tensor speed (`eight_bit_speedup`): the fastest 8-bit tensor rate the GPU has (INT8
from Turing on, FP8 on Ada, Hopper, Blackwell and CDNA3+) over its fp16 tensor rate; 1
(Dettmers: old GPUs run 8-bit at about their 16-bit speed, B536-553) where neither applies.
"""

import datetime as dt

import numpy as np
import polars as pl

from model.debias import era_term
from model.fit import t975
from model.parameters import ModelParameters
from model.segments import segment_expr

FP8_ARCHITECTURES = ("ada", "hopper", "blackwell", "cdna3", "cdna4")
INT8_ARCHITECTURES = ("turing", "ampere")


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
    # A fixed row order: least squares over permuted rows differs in the last bits, and
    # a rerun on the same inputs must store the same figures.
    rows = rows.sort("table", "gpu_id", "throughput_per_gpu")
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
# the architecture (B106, B264-268); power-limited parts (A30, L4, H100 NVL) run their
# tensor cores below peak, so the last candidate adds the TDP, and vendor and architecture
# offsets (software stacks and microarchitectures differ) shrunk toward zero by a ridge.
SPEC_MODELS = (
    "dettmers_half_half",
    "bandwidth_tensor",
    "bandwidth_tensor_l2",
    "bandwidth_tensor_l2_arch",
    "tensor_bandwidth_power_family",
    "tensor_bandwidth_power_family_neighbours",
)
MIN_FITTED_GPUS = 8
# Ridge penalty on the architecture offsets: an architecture with k measured GPUs keeps
# k / (k + 1) of its mean residual, one with none gets no offset.
ARCH_RIDGE = 1.0
# Ridge penalty on vendor and architecture offsets of the family model (same meaning).
FAMILY_RIDGE = 1.0
# The neighbours variant adds the residuals of measured siblings (same vendor and segment)
# weighted by spec distance: exp(-d^2 / 2 NEIGHBOUR_SCALE^2) with d the Euclidean distance
# of log bandwidth, log tensor rate and log TDP, shrunk by one pseudo-neighbour with
# residual 0. An RTX 5090 then inherits what the measured RTX 4090 does beyond its specs.
NEIGHBOUR_SCALE = 0.5


def spec_features(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, log bandwidth, log fp16 tensor TFLOPS, log L2, log TDP, vendor, architecture.

    Missing specs are null (a GPU without tensor cores has no tensor rate).
    """

    def log_of(name: str) -> pl.Expr:
        if name not in gpus.columns:
            return pl.lit(None, dtype=pl.Float64)
        return pl.when(pl.col(name) > 0).then(pl.col(name).cast(pl.Float64).log())

    def text(name: str) -> pl.Expr:
        return pl.col(name).cast(pl.Utf8) if name in gpus.columns else pl.lit("unknown")

    # Consumer cards: GeForce spec sheets give the fp16 tensor rate with fp32 accumulate at
    # half rate, which understates what mixed-precision training reaches on them (much of
    # it is bandwidth-bound); the family model gives the segment its own shrunk offset.
    return gpus.select(
        "gpu_id",
        log_bw=log_of("memory_bandwidth_gbs"),
        log_tf=log_of("fp16_tensor_tflops"),
        log_l2=log_of("l2_cache_mb"),
        log_tdp=log_of("tdp_w"),
        vendor=text("vendor").fill_null("unknown"),
        architecture=text("architecture").fill_null("unknown"),
        segment=segment_expr() if "name" in gpus.columns else pl.lit("professional"),
    )


def _ridge(design: np.ndarray, target: np.ndarray, penalised: list[int], lam: float):
    """Least squares with an L2 penalty `lam` on the columns `penalised`."""
    if penalised:
        penalty = np.zeros((len(penalised), design.shape[1]))
        for row, col in enumerate(penalised):
            penalty[row, col] = np.sqrt(lam)
        design = np.vstack([design, penalty])
        target = np.concatenate([target, np.zeros(len(penalised))])
    coef, *_ = np.linalg.lstsq(design, target, rcond=None)
    return coef


def _fit_family(train: pl.DataFrame, use_tensor: bool = True):
    """Power and family model: log perf ~ bw + [tensor] + TDP + family offsets.

    Offsets for vendor, architecture and segment (consumer GeForce/Radeon RX cards vs
    professional and data-center parts) are ridge-penalised (FAMILY_RIDGE), so an
    architecture seen on one GPU keeps half its residual and an unseen one none (its
    vendor's offset only). Returns predict(features) -> array, NaN where a needed spec is
    missing; None when the fit is not possible or not physical (a negative bandwidth or
    tensor term).
    """
    needed = ["log_bw", "log_tdp"] + (["log_tf"] if use_tensor else [])
    rows = train.drop_nulls(needed)
    if rows.height < MIN_FITTED_GPUS:
        return None
    vendors = sorted(set(rows["vendor"]))
    archs = sorted(set(rows["architecture"]))
    segments = sorted(set(rows["segment"]))
    base = np.column_stack([np.ones(rows.height)] + [rows[c].to_numpy() for c in needed])
    dummies = [
        np.array([[v == x for x in vendors] for v in rows["vendor"]], float),
        np.array([[a == x for x in archs] for a in rows["architecture"]], float),
        np.array([[a == x for x in segments] for a in rows["segment"]], float),
    ]
    design = np.column_stack([base, *dummies])
    first = base.shape[1]
    coef = _ridge(
        design, rows["log_perf"].to_numpy(), list(range(first, design.shape[1])), FAMILY_RIDGE
    )
    slopes = dict(zip(needed, coef[1:first], strict=True))
    if slopes["log_bw"] < 0 or slopes.get("log_tf", 0.0) < 0:
        return None
    offsets = coef[first:]
    vendor_off = dict(zip(vendors, offsets[: len(vendors)], strict=True))
    arch_off = dict(zip(archs, offsets[len(vendors) : len(vendors) + len(archs)], strict=True))
    segment_off = dict(zip(segments, offsets[len(vendors) + len(archs) :], strict=True))

    def predict(f: pl.DataFrame) -> np.ndarray:
        out = np.full(f.height, coef[0])
        for name, slope in slopes.items():
            out = out + slope * f[name].cast(pl.Float64).fill_null(np.nan).to_numpy()
        out = out + np.array([vendor_off.get(v, 0.0) for v in f["vendor"]])
        out = out + np.array([segment_off.get(v, 0.0) for v in f["segment"]])
        return out + np.array([arch_off.get(a, 0.0) for a in f["architecture"]])

    return predict


def _fit_spec(model: str, train: pl.DataFrame):
    """Fit one candidate on (features + log_perf) rows; returns predict(features) -> array.

    Candidates that need more GPUs than `train` has, or that fit a negative elasticity,
    fall back to the next simpler one, so every candidate can always predict (NaN where a
    GPU lacks a spec the candidate uses; `spec_estimator` fills those).
    """
    train = train.drop_nulls(["log_bw", "log_tf"])
    y = train["log_perf"].to_numpy()
    bw, tf = train["log_bw"].to_numpy(), train["log_tf"].to_numpy()
    if model == "dettmers_half_half" or len(y) < MIN_FITTED_GPUS:
        level = float(np.mean(y - 0.5 * bw - 0.5 * tf)) if len(y) else 0.0
        return lambda f: (
            level
            + 0.5 * f["log_bw"].fill_null(np.nan).to_numpy()
            + 0.5 * f["log_tf"].fill_null(np.nan).to_numpy()
        )
    if model == "bandwidth_tensor":
        coef, *_ = np.linalg.lstsq(np.column_stack([np.ones(len(y)), bw, tf]), y, rcond=None)
        if coef[1] < 0 or coef[2] < 0:
            return _fit_spec("dettmers_half_half", train)
        return lambda f: (
            coef[0]
            + coef[1] * f["log_bw"].fill_null(np.nan).to_numpy()
            + coef[2] * f["log_tf"].fill_null(np.nan).to_numpy()
        )
    simpler = _fit_spec("bandwidth_tensor", train)
    if model == "tensor_bandwidth_power_family":
        return _fit_family(train) or simpler
    if model == "tensor_bandwidth_power_family_neighbours":
        family = _fit_family(train)
        return _with_neighbours(family, train) if family is not None else simpler
    with_l2 = train.filter(pl.col("log_l2").is_not_null())
    if with_l2.height < MIN_FITTED_GPUS:
        return simpler
    archs = sorted(set(with_l2["architecture"])) if model.endswith("_arch") else []
    base = np.column_stack(
        [np.ones(with_l2.height), with_l2["log_bw"], with_l2["log_tf"], with_l2["log_l2"]]
    )
    dummies = np.array([[a == arch for arch in archs] for a in with_l2["architecture"]], float)
    design = np.column_stack([base, dummies.reshape(with_l2.height, len(archs))])
    coef = _ridge(
        design, with_l2["log_perf"].to_numpy(), list(range(4, design.shape[1])), ARCH_RIDGE
    )
    if min(coef[1], coef[2]) < 0:
        return simpler
    offsets = dict(zip(archs, coef[4:], strict=True))

    def predict(f: pl.DataFrame) -> np.ndarray:
        fallback = simpler(f)
        l2 = f["log_l2"].cast(pl.Float64).fill_null(np.nan).to_numpy()
        offset = np.array([offsets.get(a, 0.0) for a in f["architecture"]])
        full = coef[0] + coef[1] * f["log_bw"].fill_null(np.nan).to_numpy()
        full = full + coef[2] * f["log_tf"].fill_null(np.nan).to_numpy()
        full = full + coef[3] * np.nan_to_num(l2, nan=0.0) + offset
        return np.where(np.isnan(l2), fallback, full)

    return predict


def _with_neighbours(predict, train: pl.DataFrame):
    """`predict` plus the distance-weighted residuals of measured siblings (NEIGHBOUR_SCALE)."""
    rows = train.drop_nulls(["log_bw", "log_tf", "log_tdp"])
    residual = rows["log_perf"].to_numpy() - predict(rows)
    keys = ["log_bw", "log_tf", "log_tdp"]
    known = rows.select(keys).to_numpy()
    family = list(zip(rows["vendor"], rows["segment"], strict=True))

    def corrected(f: pl.DataFrame) -> np.ndarray:
        base = predict(f)
        points = f.select([pl.col(k).cast(pl.Float64).fill_null(np.nan) for k in keys]).to_numpy()
        out = base.copy()
        for i, (point, vendor, segment) in enumerate(
            zip(points, f["vendor"], f["segment"], strict=True)
        ):
            same = np.array([fam == (vendor, segment) for fam in family], bool)
            if not same.any() or np.isnan(point).any():
                continue
            d2 = ((known[same] - point) ** 2).sum(axis=1)
            w = np.exp(-d2 / (2 * NEIGHBOUR_SCALE**2))
            out[i] = base[i] + float((w * residual[same]).sum() / (w.sum() + 1.0))
        return out

    return corrected


def _predict_with_fallback(model: str, train: pl.DataFrame, target: pl.DataFrame) -> np.ndarray:
    """The candidate's prediction, with fallbacks for GPUs it cannot predict.

    A GPU without a tensor rate (or TDP) takes the family model without the tensor term,
    then Dettmers' rule by bandwidth alone.
    """
    out = _fit_spec(model, train)(target)
    missing = np.isnan(out)
    if missing.any():
        no_tensor = _fit_family(train, use_tensor=False)
        if no_tensor is not None:
            out = np.where(missing, no_tensor(target), out)
    missing = np.isnan(out)
    if missing.any():
        rows = train.drop_nulls(["log_bw"])
        level = float((rows["log_perf"] - rows["log_bw"]).mean()) if rows.height else 0.0
        out = np.where(missing, level + target["log_bw"].fill_null(np.nan).to_numpy(), out)
    return out


def _held_out_errors(model: str, data: pl.DataFrame, key: str) -> pl.DataFrame:
    """Prediction error of each measured GPU with every GPU sharing its `key` held out."""
    out = []
    for value in sorted(set(data[key])):
        held = data.filter(pl.col(key) == value)
        train = data.filter(pl.col(key) != value)
        if train.is_empty():
            continue
        predicted = _predict_with_fallback(model, train, held)
        for gpu, p, y in zip(held["gpu_id"], predicted, held["log_perf"], strict=True):
            if not np.isnan(p):
                out.append({"gpu_id": gpu, key: value, "log_error": float(p - y)})
    schema = {"gpu_id": pl.Utf8, key: pl.Utf8, "log_error": pl.Float64}
    return pl.DataFrame(out, schema=schema)


def leave_one_gpu_out(measured: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Each candidate's prediction of each measured GPU from all the other measured GPUs.

    `measured` holds one connected set (gpu_id, log_perf). Returns model, gpu_id, vendor,
    architecture, log_error (predicted - measured) and ape (|predicted / measured - 1|).
    """
    data = measured.select("gpu_id", "log_perf").join(spec_features(gpus), on="gpu_id")
    logo = pl.concat(
        [
            _held_out_errors(model, data, "gpu_id").select(
                pl.lit(model).alias("model"), "gpu_id", "log_error"
            )
            for model in SPEC_MODELS
        ]
    )
    return logo.join(
        data.select("gpu_id", "vendor", "architecture"), on="gpu_id", how="left"
    ).with_columns(ape=(pl.col("log_error").exp() - 1).abs())


def choose_spec_model(logo: pl.DataFrame) -> str:
    """The candidate with the lowest median leave-one-GPU-out error (ties: the simpler)."""
    if logo.is_empty():
        return SPEC_MODELS[0]
    medians = logo.group_by("model").agg(pl.col("ape").median())
    best = dict(zip(medians["model"], medians["ape"], strict=True))
    return min(SPEC_MODELS, key=lambda m: (round(best.get(m, np.inf), 6), SPEC_MODELS.index(m)))


def unseen_family_errors(measured: pl.DataFrame, gpus: pl.DataFrame, model: str) -> dict:
    """The chosen estimator's errors with whole architectures / vendors left out.

    {'architecture': errors, 'vendor': errors}: what an estimate is worth for a GPU whose
    architecture (vendor) has no measured GPU.
    """
    data = measured.select("gpu_id", "log_perf").join(spec_features(gpus), on="gpu_id")
    return {
        key: _held_out_errors(model, data, key)["log_error"].to_numpy()
        for key in ("architecture", "vendor")
    }


def spec_estimator(measured: pl.DataFrame, gpus: pl.DataFrame):
    """(estimates, logo, chosen model, unseen-family errors) fitted on all measured GPUs."""
    logo = leave_one_gpu_out(measured, gpus)
    chosen = choose_spec_model(logo)
    train = measured.select("gpu_id", "log_perf").join(spec_features(gpus), on="gpu_id")
    features = spec_features(gpus)
    estimates = features.select("gpu_id").with_columns(
        anchor_log=pl.Series(_predict_with_fallback(chosen, train, features), dtype=pl.Float64)
    )
    unseen = unseen_family_errors(measured, gpus, chosen) if train.height >= 3 else {}
    return estimates, logo.filter(pl.col("model") == chosen), chosen, unseen


# --- workloads ----------------------------------------------------------------------------


def workload_rows(debiased: pl.DataFrame, workload: str) -> pl.DataFrame:
    """gpu_id, throughput_per_gpu and table of one workload's debiased figures.

    The table is the debiasing's era term (source, era, file, model, precision; an
    MLPerf round x benchmark x precision, whose citations name single systems).
    """
    table = pl.col("era_term") if "era_term" in debiased.columns else era_term()
    return debiased.filter(pl.col("workload") == workload).select(
        "gpu_id", "throughput_per_gpu", table=table
    )


def _measured(debiased: pl.DataFrame, workload: str, reference: str) -> pl.DataFrame:
    return fit_log_performance(workload_rows(debiased, workload), reference)


def _quantile_range(errors: np.ndarray) -> tuple[float, float] | None:
    """(2.5 %, 97.5 %) of log errors (predicted - measured); None with fewer than 3."""
    if len(errors) < 3:
        return None
    return float(np.quantile(errors, 0.025)), float(np.quantile(errors, 0.975))


def training_16bit(debiased: pl.DataFrame, gpus: pl.DataFrame, reference: str) -> pl.DataFrame:
    """16-bit training: measured where benchmarked, else estimated from specs."""
    measured = _measured(debiased, "training_16bit", reference)
    main = measured.filter(pl.col("main"))
    anchor, logo, chosen, unseen = spec_estimator(main, gpus)
    placed = place_on_anchor(measured, anchor)
    df = int(measured["df"].max()) if measured.height else 0
    t = t975(df) if df >= 1 else None
    ref_log = placed.filter(pl.col("gpu_id") == reference)["log_perf"][0]
    features = spec_features(gpus).select("gpu_id", "vendor", "architecture")
    seen = features.filter(pl.col("gpu_id").is_in(main["gpu_id"].to_list()))
    seen_archs, seen_vendors = set(seen["architecture"]), set(seen["vendor"])
    # Unmeasured GPUs: the empirical 2.5-97.5 % range of the estimator's held-out errors,
    # so the interval is as wide as its tested error: leave-one-GPU-out for a GPU of a
    # measured architecture, leave-one-architecture-out (-vendor-out) for a GPU whose
    # architecture (vendor) no measured GPU shares; never narrower than the seen case.
    seen_range = _quantile_range(logo["log_error"].to_numpy()) if logo.height else None
    new_arch = _quantile_range(unseen.get("architecture", np.array([])))
    new_vendor = _quantile_range(unseen.get("vendor", np.array([])))
    ranges = {"seen": seen_range, "new_architecture": _widest(seen_range, new_arch)}
    ranges["new_vendor"] = _widest(ranges["new_architecture"], new_vendor)
    rows = []
    for r in placed.join(features, on="gpu_id", how="left").iter_rows(named=True):
        value = r["log_perf"] - ref_log
        if r["n_results"] is not None and r["main"]:
            half = t * r["log_se"] if t is not None and r["log_se"] is not None else None
            text = f"least-squares standard error, t({df}) 95 %" if half is not None else None
            low = -half if half is not None else None
            rows.append(
                _row(r["gpu_id"], value, low, half, "measured", "measured", r["n_results"], text)
            )
            continue
        context = (
            "seen"
            if r["architecture"] in seen_archs
            else "new_architecture"
            if r["vendor"] in seen_vendors
            else "new_vendor"
        )
        bounds = ranges[context]
        low = -bounds[1] if bounds else None
        high = -bounds[0] if bounds else None
        what = {
            "seen": "leave-one-GPU-out",
            "new_architecture": "leave-one-architecture-out (no measured GPU of its architecture)",
            "new_vendor": "leave-one-vendor-out (no measured GPU of its vendor)",
        }[context]
        method_text = (
            f"spec estimate ({chosen}), {what} error range" if bounds is not None else None
        )
        if r["n_results"] is not None:
            # Measured, but in tables that share no GPU with the reference's: its level
            # comes from the spec estimates of its set, so it is an estimate.
            rows.append(_row(r["gpu_id"], value, low, high, "estimated", "spec_placed",
                             r["n_results"], method_text))  # fmt: skip
        else:
            rows.append(_row(r["gpu_id"], value, low, high, "estimated", "spec_estimate", 0,
                             method_text))  # fmt: skip
    return _frame(rows, "training_16bit")


def _widest(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]), max(a[1], b[1]))


def _row(gpu, log_value, low, high, method, evidence, n, interval_method) -> dict:
    """One output row in logs: `low`/`high` are offsets from `log_value` (None: unknown)."""
    return {
        "gpu_id": gpu,
        "log_value": log_value,
        "log_low": log_value + low if low is not None else None,
        "log_high": log_value + high if high is not None else None,
        "method": method,
        "evidence": evidence,
        "n_results": int(n or 0),
        "interval_method": interval_method,
    }


ROW_SCHEMA = {
    "gpu_id": pl.Utf8,
    "log_value": pl.Float64,
    "log_low": pl.Float64,
    "log_high": pl.Float64,
    "method": pl.Utf8,
    "evidence": pl.Utf8,
    "n_results": pl.Int64,
    "interval_method": pl.Utf8,
}


def _frame(rows: list[dict], workload: str) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=ROW_SCHEMA).select(
        "gpu_id",
        pl.lit(workload).alias("workload"),
        value=pl.col("log_value").exp(),
        method="method",
        evidence="evidence",
        n_results="n_results",
        value_low=pl.col("log_low").exp(),
        value_high=pl.col("log_high").exp(),
        interval_method="interval_method",
    )


REFERENCE_8BIT = "reference GPU: 1 by definition (8-bit values are relative to its 8-bit speed)"


def reference_text(workload: str) -> str:
    """Why the reference GPU's row is exactly 1 where it has no measurement."""
    if workload == "inference_8bit":
        return REFERENCE_8BIT
    return f"reference GPU: 1 by definition ({workload} values are relative to its speed)"


# Pseudo-observations at the prior: each architecture's ratio is pooled toward the mean
# ratio as if the mean had been seen this many more times, and the mean toward Dettmers'
# ratio 1 likewise, so one measured GPU never sets an architecture's ratio alone.
POOLING_PSEUDO_GPUS = 2.0
MIN_BRIDGE_RATIOS = 3


def pooled_ratio(ratios: list[tuple[float, tuple[str, ...]]], family: tuple[str, ...]) -> float:
    """A GPU family's log inference/base ratio, partially pooled down a hierarchy.

    `ratios` holds (log ratio, family) of measured GPUs, a family being a tuple of levels
    from the broadest, e.g. (vendor, architecture). The mean of all ratios is shrunk
    toward 0 (Dettmers' ratio 1), each level's ratios toward the level above, as if the
    level above had been seen POOLING_PSEUDO_GPUS more times: one GPU never sets a family's
    ratio alone, and a family without measured GPUs takes the nearest level that has some.
    """
    k = POOLING_PSEUDO_GPUS
    level = sum(x for x, _ in ratios) / (len(ratios) + k)
    for depth in range(1, len(family) + 1):
        same = [x for x, f in ratios if f[:depth] == family[:depth]]
        level = (sum(same) + k * level) / (len(same) + k)
    return level


def bridged_workload(
    debiased: pl.DataFrame,
    workload: str,
    base: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    base_name: str,
    levels: tuple[str, ...] = ("vendor", "architecture"),
) -> pl.DataFrame:
    """A workload measured on few GPUs, bridged from a base workload for the others.

    `base` has gpu_id, base_log (log value relative to the reference), base_half (log
    half-width of its 95 % interval, may be null) and base_measured (whether the base rests
    on the GPU's own measurement). `levels` is the pooling hierarchy of the bridge's
    ratios (`pooled_ratio`). See the module docstring.
    """
    measured = _measured(debiased, workload, reference)
    arch = spec_features(gpus).select("gpu_id", "segment", "vendor", "architecture")
    base = base.join(arch, on="gpu_id", how="left")
    base_of = {r["gpu_id"]: r for r in base.iter_rows(named=True)}
    ref_measured = measured.filter((pl.col("gpu_id") == reference) & pl.col("main"))
    ref_log = ref_measured["log_perf"][0] if ref_measured.height else None
    df = int(measured["df"].max()) if measured.height else 0
    t = t975(df) if df >= 1 else None

    # 1. The reference's set: measured ratios to the reference, exact.
    placed: dict[str, dict] = {}
    if ref_log is not None:
        for r in measured.filter(pl.col("main")).iter_rows(named=True):
            half = t * r["log_se"] if t is not None and r["log_se"] is not None else None
            placed[r["gpu_id"]] = {"log": r["log_perf"] - ref_log, "half": half, "main": True,
                                   "n": r["n_results"]}  # fmt: skip

    def ratio(gpu: str, log: float) -> float | None:
        b = base_of.get(gpu)
        if gpu == reference or b is None or not b["base_measured"]:
            return None  # the reference's ratio is 1 by definition, not evidence
        return log - b["base_log"]

    main_ratios = [x for g, p in placed.items() if (x := ratio(g, p["log"])) is not None]
    k = len(main_ratios)
    level = float(np.mean(main_ratios)) * k / (k + POOLING_PSEUDO_GPUS) if k else 0.0

    # 2. Other sets: placed so that the median ratio of their GPUs with a measured base
    # equals the reference set's pooled ratio; a set without such a GPU is not placed.
    others = measured.filter(~pl.col("main")) if ref_log is not None else measured
    for (_,), part in others.sort("component", "gpu_id").group_by("component", maintain_order=True):
        offsets = [
            r["log_perf"] - base_of[r["gpu_id"]]["base_log"]
            for r in part.iter_rows(named=True)
            if r["gpu_id"] in base_of and base_of[r["gpu_id"]]["base_measured"]
        ]
        if not offsets:
            continue
        shift = level - float(np.median(offsets))
        spread = float(np.std(offsets, ddof=1)) if len(offsets) >= 2 else None
        for r in part.iter_rows(named=True):
            se = r["log_se"]
            half = None
            if spread is not None and se is not None:
                half = (t or 1.96) * float(np.sqrt(se**2 + spread**2 / len(offsets)))
            placed[r["gpu_id"]] = {"log": r["log_perf"] + shift, "half": half, "main": False,
                                   "n": r["n_results"]}  # fmt: skip

    # 3. The bridge: ratios of measured GPUs with a measured base, pooled down `levels`.
    def family(gpu: str) -> tuple[str, ...]:
        return tuple(base_of[gpu][level] for level in levels)

    ratios = {g: (x, family(g)) for g, p in placed.items() if (x := ratio(g, p["log"])) is not None}
    n_ratios = len(ratios)
    rule = n_ratios < MIN_BRIDGE_RATIOS
    values = np.array([x for x, _ in ratios.values()])
    sd = float(values.std(ddof=1)) if n_ratios >= 2 else None

    def bridge(gpu: str) -> tuple[float, float | None, int]:
        own = family(gpu)
        n_arch = sum(1 for _, f in ratios.values() if f == own)
        if rule:
            return 0.0, None, n_arch
        pooled = pooled_ratio(list(ratios.values()), own)
        half = t975(n_ratios - 1) * sd * np.sqrt(1 + 1 / (n_arch + POOLING_PSEUDO_GPUS))
        return pooled, float(half), n_arch

    rows = []
    for b in base.iter_rows(named=True):
        gpu = b["gpu_id"]
        if gpu in placed:
            p = placed[gpu]
            what = (
                f"least-squares standard error, t({df}) 95 %"
                if p["main"]
                else "least-squares standard error plus the placing error of its set, 95 %"
            )
            low = -p["half"] if p["half"] is not None else None
            text = what if p["half"] is not None else None
            rows.append(_row(gpu, p["log"], low, p["half"], "measured", "measured", p["n"], text))
            continue
        shift, half, n_arch = bridge(gpu)
        base_half = b["base_half"]
        total = float(np.sqrt(half**2 + (base_half or 0.0) ** 2)) if half is not None else base_half
        if rule:
            text = (
                f"Dettmers' rule ({workload} ranks like {base_name}, ratio 1): only "
                f"{n_ratios} measured ratios; interval of the {base_name} value"
            )
        else:
            text = (
                f"{base_name} x the {b['architecture']} ratio ({np.exp(shift):.3f}; "
                f"{n_arch} of {n_ratios} measured GPUs share its {' / '.join(levels)}, "
                f"pooled toward the levels above), interval "
                f"with t({n_ratios - 1}) x the sd of the ratios ({sd:.3f} in logs)"
            )
        rows.append(_row(gpu, b["base_log"] + shift, -total if total is not None else None, total,
                         "estimated", "dettmers_rule" if rule else "bridged", 0,
                         text if total is not None else None))  # fmt: skip
    out = _frame(rows, workload)
    # The reference is 1 by definition in every workload, with no interval of its own.
    ref_value = out.filter(pl.col("gpu_id") == reference)["value"]
    if ref_value.len() and ref_value[0] != 1.0:
        scale = ref_value[0]
        out = out.with_columns(pl.col("value", "value_low", "value_high") / scale)
    is_ref = pl.col("gpu_id") == reference
    if ref_log is None:  # not measured: 1 by definition all the same
        out = out.with_columns(
            value_low=pl.when(is_ref).then(1.0).otherwise("value_low"),
            value_high=pl.when(is_ref).then(1.0).otherwise("value_high"),
            interval_method=pl.when(is_ref)
            .then(pl.lit(reference_text(workload)))
            .otherwise("interval_method"),
        )
    return out


def inference_16bit(
    debiased: pl.DataFrame, training: pl.DataFrame, gpus: pl.DataFrame, reference: str
) -> pl.DataFrame:
    """16-bit inference: measured where benchmarked, else bridged from 16-bit training."""
    base = training.select(
        "gpu_id",
        base_log=pl.col("value").log(),
        base_half=(pl.col("value_high") / pl.col("value_low")).log() / 2,
        base_measured=pl.col("evidence") == "measured",
    )
    # Vendor, then architecture: a GeForce RTX 3090 and an A10 share the GA102 die, its
    # tensor cores and kernels, so the architecture is the finest level with evidence.
    return bridged_workload(
        debiased,
        "inference_16bit",
        base,
        gpus,
        reference,
        "16-bit training",
        levels=("vendor", "architecture"),
    )


def eight_bit_speedup(gpus: pl.DataFrame) -> pl.DataFrame:
    """8-bit over 16-bit tensor speed per GPU (module docstring) and its basis.

    The GPU's fastest 8-bit tensor rate over its fp16 tensor rate: INT8 from Turing on,
    FP8 from Ada (and CDNA3) on. Both rates as the spec sheet gives them: GeForce cards
    list fp16 with fp32 accumulate at half rate and INT8 at full rate, so their 8-bit gain
    is 4x against a data-center part's 2x; MLPerf Inference agrees (RTX 4090 0.5x an H100
    in INT8 ResNet-50 against 0.27x in 16-bit training).
    """
    fp8 = pl.col("fp8_tensor_tflops") if "fp8_tensor_tflops" in gpus.columns else pl.lit(None)
    int8 = pl.col("int8_tensor_tops") if "int8_tensor_tops" in gpus.columns else pl.lit(None)
    fp16 = pl.col("fp16_tensor_tflops")
    arch = pl.col("architecture")
    fp8_rate = pl.when(arch.is_in(FP8_ARCHITECTURES) & (fp16 > 0)).then(fp8.cast(pl.Float64))
    int8_rate = pl.when(arch.is_in(INT8_ARCHITECTURES + FP8_ARCHITECTURES) & (fp16 > 0)).then(
        int8.cast(pl.Float64)
    )
    best = pl.max_horizontal(fp8_rate, int8_rate)
    return gpus.select(
        "gpu_id",
        speedup=pl.when(best.is_not_null()).then(best / fp16).otherwise(1.0).cast(pl.Float64),
        speedup_basis=pl.when(fp8_rate.is_not_null() & (fp8_rate >= int8_rate.fill_null(0)))
        .then(pl.lit("fp8/fp16 tensor"))
        .when(int8_rate.is_not_null())
        .then(pl.lit("int8/fp16 tensor"))
        .otherwise(pl.lit("none (8-bit at 16-bit speed)")),
    )


def inference_8bit(
    debiased: pl.DataFrame,
    inference_16bit: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    training: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """8-bit inference: measured (int8/fp8 tables) where benchmarked, else bridged.

    The bridge's base is 16-bit inference x the GPU's 8-bit tensor speedup relative to the
    reference's.
    """
    speed = eight_bit_speedup(gpus)
    ref_speed = speed.filter(pl.col("gpu_id") == reference)["speedup"][0]
    # The base rests on the GPU's own measurement when its 16-bit inference is measured or
    # bridged from its measured training (an RTX 4090 measured in 8 bits only).
    trained = (
        training.filter(pl.col("evidence") == "measured")["gpu_id"].to_list()
        if training is not None
        else []
    )
    base = inference_16bit.join(speed, on="gpu_id").select(
        "gpu_id",
        base_log=pl.col("value").log() + (pl.col("speedup") / ref_speed).log(),
        base_half=(pl.col("value_high") / pl.col("value_low")).log() / 2,
        base_measured=(pl.col("evidence") == "measured")
        | ((pl.col("evidence") == "bridged") & pl.col("gpu_id").is_in(trained)),
    )
    # Segment first: the speedup reads the spec sheets, whose fp16 rate is half-rate on
    # GeForce cards, so a measured GeForce 8-bit ratio speaks for the other GeForce cards,
    # not for a data-center part of the same architecture.
    return bridged_workload(
        debiased,
        "inference_8bit",
        base,
        gpus,
        reference,
        "16-bit inference x 8-bit tensor speedup",
        levels=("segment", "vendor", "architecture"),
    )


def relative_performance(
    debiased: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters, run_date: dt.date
) -> pl.DataFrame:
    """One row per catalog GPU x workload: performance relative to the reference GPU.

    value_low/value_high is a 95 % interval (see `interval_method`); NULL where no interval
    can be computed (a fit without residual degrees of freedom, too few GPUs to validate
    the spec estimator). `evidence` says what the value rests on (module docstring).
    """
    reference = params.reference_gpu
    if reference not in gpus["gpu_id"].to_list():
        raise ValueError(f"reference GPU {reference!r} is not in the catalog")
    training = training_16bit(debiased, gpus, reference)
    inference = inference_16bit(debiased, training, gpus, reference)
    eight_bit = inference_8bit(debiased, inference, gpus, reference, training)
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
            "evidence",
        )
        .sort("workload", "value", descending=[False, True])
    )
