"""The spec-based estimate of 16-bit training performance for GPUs without a benchmark.

The estimator is chosen among candidates (SPEC_MODELS: Dettmers' fixed 0.5/0.5 scaling by
bandwidth and fp16 tensor TFLOPS, fitted elasticities, + L2, + power (TDP) with vendor and
architecture offsets shrunk by a ridge, + partial pooling along a product line) by
leave-one-GPU-out error; the errors of leaving whole architectures (vendors) out tell what
an estimate is worth for a GPU of an architecture (vendor) without any measured GPU.

Partial pooling along a product line (`line_pooling`): a GPU whose vendor x product line
(consumer, workstation, data center) x architecture has no measured GPU takes its
architecture offset from the *other* lines only (an RTX 5090 from the data-center B200 and
the workstation RTX PRO 6000), although the same line's previous generation (the measured
RTX 4090) says how that line fares beyond its specs. Its offset becomes a blend of both:
w x the nearest measured generation's line effect + (1 - w) x its architecture offset, with
w = n / (n + FAMILY_RIDGE) for n measured GPUs in that generation, and its interval widens
with the years between the two generations (`pooling_sd`).
"""

import datetime as dt

import numpy as np
import polars as pl

from model.product_lines import product_line_expr
from model.segments import segment_expr

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
    "tensor_bandwidth_power_family_line",
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
# An architecture name the family model has no offset for (the line effect is measured
# against the prediction without the architecture's offset).
NO_ARCHITECTURE = "__no_architecture__"
DAYS_PER_YEAR = 365.25
POOLED_SCHEMA = {
    "gpu_id": pl.Utf8,
    "pooled_from": pl.Utf8,
    "pooled_n": pl.Int64,
    "pooled_years": pl.Float64,
    "pooled_weight": pl.Float64,
    "pooled_shift": pl.Float64,
    "pooled_sd": pl.Float64,
}


def spec_features(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, log bandwidth, log fp16 tensor TFLOPS, log L2, log TDP, vendor, architecture.

    Also segment (the spec sheet's fp16 convention), line (consumer, workstation or data
    center: model/product_lines.py) and line_first, the first release date in the catalog
    of the GPU's vendor x line x architecture (the generation's place in its line; null
    without release dates). Missing specs are null (a GPU without tensor cores has no
    tensor rate).
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
    released = (
        pl.col("release_date").cast(pl.Date)
        if "release_date" in gpus.columns
        else pl.lit(None, dtype=pl.Date)
    )
    return (
        gpus.select(
            "gpu_id",
            log_bw=log_of("memory_bandwidth_gbs"),
            log_tf=log_of("fp16_tensor_tflops"),
            log_l2=log_of("l2_cache_mb"),
            log_tdp=log_of("tdp_w"),
            vendor=text("vendor").fill_null("unknown"),
            architecture=text("architecture").fill_null("unknown"),
            segment=segment_expr() if "name" in gpus.columns else pl.lit("professional"),
            line=product_line_expr() if "name" in gpus.columns else pl.lit("data_center"),
            released=released,
        )
        .with_columns(line_first=pl.col("released").min().over("vendor", "line", "architecture"))
        .drop("released")
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
    if model == "tensor_bandwidth_power_family_line":
        family = _fit_family(train)
        return _with_line_pooling(family, train) if family is not None else simpler
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


def _line_effects(predict, train: pl.DataFrame) -> dict:
    """(vendor, line, architecture) -> (first release, [line effect of each measured GPU]).

    A GPU's line effect is its measured log performance minus the family prediction without
    any architecture offset: what its architecture and line add beyond its specs.
    """
    rows = train.drop_nulls(["log_bw", "log_tf", "log_tdp"])
    if rows.is_empty():
        return {}
    effect = rows["log_perf"].to_numpy() - predict(
        rows.with_columns(architecture=pl.lit(NO_ARCHITECTURE))
    )
    cells: dict = {}
    keys = rows.select("vendor", "line", "architecture", "line_first").iter_rows()
    for (vendor, line, arch, first), e in zip(keys, effect, strict=True):
        cells.setdefault((vendor, line, arch), (first, []))[1].append(float(e))
    return cells


def _nearest_generation(cells: dict, vendor: str, line: str, first: dt.date | None):
    """The measured cell of `vendor` x `line` released nearest to `first` (ties: the older)."""
    if first is None:
        return None
    near = [
        (abs((first - cell_first).days), cell_first, arch, effects)
        for (v, ln, arch), (cell_first, effects) in cells.items()
        if v == vendor and ln == line and cell_first is not None
    ]
    if not near:
        return None
    days, _, arch, effects = min(near, key=lambda c: (c[0], c[1]))
    return arch, effects, days / DAYS_PER_YEAR


def pooling_sd(cells: dict) -> float:
    """Per-year standard deviation of a line's effect from one generation to the next.

    From every pair of consecutive measured generations of one vendor x line: the squared
    change of the mean line effect over the years between their first releases (a random
    walk in time); 0 with no such pair.
    """
    lines: dict = {}
    for (vendor, line, _), (first, effects) in cells.items():
        if first is not None:
            lines.setdefault((vendor, line), []).append((first, float(np.mean(effects))))
    steps = []
    for generations in lines.values():
        generations.sort()
        for (t0, e0), (t1, e1) in zip(generations, generations[1:], strict=False):
            years = max((t1 - t0).days / DAYS_PER_YEAR, 0.5)
            steps.append((e1 - e0) ** 2 / years)
    return float(np.sqrt(np.mean(steps))) if steps else 0.0


def line_pooling(predict, train: pl.DataFrame, features: pl.DataFrame) -> pl.DataFrame:
    """The pooled shift of each GPU whose vendor x line x architecture is unmeasured.

    Per GPU of `features` whose cell has no measured GPU in `train`, from the nearest
    measured generation of its vendor and line: gpu_id, pooled_from (that generation's
    architecture), pooled_n (its measured GPUs), pooled_years (between the two
    generations' first releases), pooled_weight (n / (n + FAMILY_RIDGE)), pooled_shift
    (log: weight x (line effect - own architecture offset)) and pooled_sd (log: the
    random-walk sd over those years, `pooling_sd`). GPUs not pooled are left out.
    """
    cells = _line_effects(predict, train)
    step = pooling_sd(cells)
    with_offset = predict(features)
    arch_offset = with_offset - predict(features.with_columns(architecture=pl.lit(NO_ARCHITECTURE)))
    out = []
    keys = features.select("gpu_id", "vendor", "line", "architecture", "line_first").iter_rows()
    for i, (gpu, vendor, line, arch, first) in enumerate(keys):
        if (vendor, line, arch) in cells or np.isnan(with_offset[i]):
            continue
        nearest = _nearest_generation(cells, vendor, line, first)
        if nearest is None:
            continue
        source, effects, years = nearest
        weight = len(effects) / (len(effects) + FAMILY_RIDGE)
        shift = weight * (float(np.mean(effects)) - float(arch_offset[i]))
        out.append((gpu, source, len(effects), years, weight, shift, step * np.sqrt(years)))
    return pl.DataFrame(out, schema=POOLED_SCHEMA, orient="row")


def _with_line_pooling(predict, train: pl.DataFrame):
    """`predict` with the pooled shift of `line_pooling` for GPUs of unmeasured cells."""
    rows = train.drop_nulls(["log_bw", "log_tf", "log_tdp"])

    def corrected(f: pl.DataFrame) -> np.ndarray:
        out = predict(f)
        pooled = line_pooling(predict, rows, f)
        if pooled.is_empty():
            return out
        shift = dict(zip(pooled["gpu_id"], pooled["pooled_shift"], strict=True))
        return out + np.array([shift.get(g, 0.0) for g in f["gpu_id"]])

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


def pooled_estimates(model: str, train: pl.DataFrame, features: pl.DataFrame) -> pl.DataFrame:
    """`line_pooling` of the chosen model's family fit (empty unless it pools)."""
    family = _fit_family(train) if model == "tensor_bandwidth_power_family_line" else None
    if family is None:
        return pl.DataFrame(schema=POOLED_SCHEMA)
    return line_pooling(family, train.drop_nulls(["log_bw", "log_tf", "log_tdp"]), features)


def spec_estimator(measured: pl.DataFrame, gpus: pl.DataFrame):
    """(estimates, logo, chosen model, unseen-family errors) fitted on all measured GPUs.

    The unseen-family dict also holds 'pooled': `line_pooling` of the GPUs the chosen
    model pooled along their product line (an empty frame when it does not pool).
    """
    logo = leave_one_gpu_out(measured, gpus)
    chosen = choose_spec_model(logo)
    train = measured.select("gpu_id", "log_perf").join(spec_features(gpus), on="gpu_id")
    features = spec_features(gpus)
    estimates = features.select("gpu_id").with_columns(
        anchor_log=pl.Series(_predict_with_fallback(chosen, train, features), dtype=pl.Float64)
    )
    unseen = unseen_family_errors(measured, gpus, chosen) if train.height >= 3 else {}
    unseen["pooled"] = pooled_estimates(chosen, train, features)
    return estimates, logo.filter(pl.col("model") == chosen), chosen, unseen
