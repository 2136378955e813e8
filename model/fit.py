"""Fit the debiasing constants from the ingested benchmark figures, with 95 % intervals.

Two constants are fitted, each beside Dettmers' value (docs/methodology.md, section 2):

- Batch-size gain per doubling, per workload class (and task). Identified only from
  *within-GPU* variation: the same GPU, model, precision, GPU count and published table
  (so the same software era) measured at two or more batch sizes. With g the gain,
  log t = a[group] + log2(b) * log(1 + g); the slope is the within-group least-squares
  slope. Rows of one GPU x model are not independent (one sweep published at 1, 4 and 8
  GPUs), so the interval is cluster-robust over (table, GPU, model) with a Student t on
  (clusters - 1) degrees of freedom.
- Multi-GPU scaling efficiency e_n by GPU count and interconnect, from pairs of results
  that report the same GPU, model, precision and table at 1 and n GPUs *at the same
  per-GPU batch size* (so the batch size does not confound it): e = t_n / (n * t_1).
  The interconnect proxy is the spec sheet's form factor (SXM/OAM/superchip boards use
  NVLink, PCIe cards mostly do not). The estimate is the median over GPUs of each GPU's
  median efficiency (robust to the few configurations that scale very badly), with a
  distribution-free order-statistic 95 % interval over GPUs (pairs of one GPU share a
  machine, so GPUs are the independent units).

Which set drives the results is `ModelParameters.constants`: 'dettmers', 'fitted' (fitted
wherever a fit exists) or 'auto' (the default: a fitted constant only where it is well
determined, i.e. its interval exists and is at most `fit_max_ci_width` wide, else
Dettmers'). Scaling efficiencies come from one source for every system size: the fitted
e_n are used only when every GPU count Dettmers configures has, for every interconnect, a
fit the mode accepts; otherwise Dettmers' e_n apply to all counts and interconnects
(`efficiency_table`), so costs never jump between sizes from mixing fitted and textbook
constants. Every constant of both sets is stored in `model_constants`
with `used` saying which one the run applied.
"""

import math
from collections.abc import Callable

import numpy as np
import polars as pl

from model.parameters import ModelParameters
from sources.benchmarks.flags import SUPER_LINEAR_TOLERANCE

SIXTEEN_BIT = ("fp16", "bf16")
# Form factor -> interconnect proxy (GUIDE section 4: e_n depends on the interconnect).
INTERCONNECT = {"sxm": "nvlink", "oam": "nvlink", "superchip": "nvlink", "pcie": "pcie"}
INTERCONNECTS = tuple(sorted(set(INTERCONNECT.values())))
# `batch_changed` (an n-GPU run at another per-GPU batch size than the 1-GPU run) does not
# disturb either fit: the batch fit compares batch sizes at a fixed GPU count, and scaling
# pairs are matched at equal per-GPU batch size (a sweep's 1-GPU row at that size exists).
BATCH_CHANGED_OK = {"batch_changed"}

CONSTANTS_SCHEMA = {
    "parameter_set": pl.Utf8,
    "name": pl.Utf8,
    "key": pl.Utf8,
    "value": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "n": pl.Int64,
    "n_groups": pl.Int64,
    "n_gpus": pl.Int64,
    "data_used": pl.Utf8,
    "determined": pl.Boolean,
    "used": pl.Boolean,
    "detail": pl.Utf8,
}

# Two-sided 95 % Student t quantiles; beyond 30 degrees of freedom a Cornish-Fisher
# expansion of the normal quantile is accurate to < 0.1 %.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179]
_T975 += [2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064]
_T975 += [2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df: int) -> float:
    """The 97.5 % quantile of Student's t with `df` degrees of freedom."""
    if df < 1:
        raise ValueError("a t quantile needs at least one degree of freedom")
    if df <= len(_T975):
        return _T975[df - 1]
    z = 1.959964
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def usable(results: pl.DataFrame) -> pl.DataFrame:
    """Rows with a usable (positive) throughput and batch size, flagged or not."""
    return results.filter(
        pl.col("throughput").is_not_null()
        & (pl.col("throughput") > 0)
        & pl.col("batch_size_per_gpu").is_not_null()
        & (pl.col("batch_size_per_gpu") > 0)
    )


def untolerated_flags(tolerated: set[str] = frozenset()) -> pl.Expr:
    """A row's quality flags (sources/benchmarks/flags.py) bar `tolerated`, as a list."""
    flags = (
        pl.col("flags")
        .fill_null("")
        .str.split(",")
        .list.eval(pl.element().str.strip_chars().filter(pl.element() != ""))
    )
    return flags.list.set_difference(sorted(tolerated)).list.sort()


def clean(results: pl.DataFrame, tolerated: set[str] = frozenset()) -> pl.DataFrame:
    """Rows with a usable throughput and batch size and no quality flag (bar `tolerated`)."""
    rows = usable(results)
    if "flags" not in rows.columns:
        return rows
    return rows.filter(untolerated_flags(tolerated).list.len() == 0)


def with_interconnect(rows: pl.DataFrame, gpus: pl.DataFrame | None) -> pl.DataFrame:
    """Add `interconnect` (nvlink/pcie, null for GPUs missing from the catalog)."""
    if gpus is None or "form_factor" not in gpus.columns:
        return rows.with_columns(interconnect=pl.lit(None, dtype=pl.Utf8))
    proxy = gpus.select(
        "gpu_id",
        interconnect=pl.col("form_factor").replace_strict(
            INTERCONNECT, default=None, return_dtype=pl.Utf8
        ),
    )
    return rows.drop("interconnect", strict=False).join(proxy, on="gpu_id", how="left")


# --- batch-size gain ---------------------------------------------------------------------


def batch_sweep_rows(results: pl.DataFrame) -> pl.DataFrame:
    """16-bit rows in groups that hold one GPU x model x GPU count at >= 2 batch sizes."""
    group = ["source", "software_era", "citation", "gpu_id", "model", "task", "precision"]
    rows = clean(results, BATCH_CHANGED_OK).filter(pl.col("precision").is_in(SIXTEEN_BIT))
    return (
        rows.with_columns(
            group=pl.concat_str(group + ["num_gpus"], separator="|"),
            cluster=pl.concat_str(["citation", "gpu_id", "model"], separator="|"),
            x=pl.col("batch_size_per_gpu").cast(pl.Float64).log(2),
            y=pl.col("throughput").log(),
        )
        .filter(pl.col("batch_size_per_gpu").n_unique().over("group") >= 2)
        .with_columns(
            x_w=pl.col("x") - pl.col("x").mean().over("group"),
            y_w=pl.col("y") - pl.col("y").mean().over("group"),
        )
    )


def _slope_fit(rows: pl.DataFrame) -> dict:
    """Within-group slope of log t on log2(b) with a cluster-robust 95 % interval."""
    x, y = rows["x_w"].to_numpy(), rows["y_w"].to_numpy()
    sxx = float(np.sum(x * x))
    beta = float(np.sum(x * y) / sxx)
    clusters = rows.with_columns(score=pl.col("x_w") * (pl.col("y_w") - beta * pl.col("x_w")))
    # Sorted by cluster and summed exactly (fsum): the same inputs give the same bits in
    # any row order (group_by returns groups in no fixed order).
    scores = (
        clusters.group_by("cluster")
        .agg(pl.col("score").sort())
        .sort("cluster")["score"]
        .map_elements(math.fsum, return_dtype=pl.Float64)
        .to_numpy()
    )
    n_clusters = len(scores)
    low = high = None
    if n_clusters >= 2:
        var = n_clusters / (n_clusters - 1) * math.fsum(scores**2) / sxx**2
        half = t975(n_clusters - 1) * math.sqrt(var)
        low, high = math.expm1(beta - half), math.expm1(beta + half)
    return {"value": math.expm1(beta), "ci_low": low, "ci_high": high, "n_clusters": n_clusters}


def fit_batch_gain(results: pl.DataFrame) -> pl.DataFrame:
    """Fitted gain per batch doubling per (task, workload class); see the module docstring.

    Training classes are keyed by the class alone (`cnn`), because that is what the
    training correction uses; inference fits are keyed `inference:<class>` and are
    reported only (inference tables are compared at one batch size and never corrected).
    """
    rows = batch_sweep_rows(results)
    out = []
    for (task, cls), part in sorted(
        rows.group_by("task", "workload_class"), key=lambda kv: (kv[0][0], kv[0][1])
    ):
        fit = _slope_fit(part)
        lo, hi = part["batch_size_per_gpu"].min(), part["batch_size_per_gpu"].max()
        used = (
            f"{part.height} rows in {part['group'].n_unique()} fixed-GPU-count sweeps, "
            f"{fit['n_clusters']} GPU x model x table clusters, "
            f"{part['citation'].n_unique()} tables, GPUs {', '.join(sorted(set(part['gpu_id'])))}; "
            f"models {', '.join(sorted(set(part['model'])))}; batch sizes {lo}-{hi}"
        )
        out.append(
            {
                "parameter_set": "fitted",
                "name": "batch_gain_per_doubling",
                "key": cls if task == "training" else f"{task}:{cls}",
                **{k: fit[k] for k in ("value", "ci_low", "ci_high")},
                "n": part.height,
                "n_groups": fit["n_clusters"],
                "n_gpus": part["gpu_id"].n_unique(),
                "data_used": used,
            }
        )
    return _frame(out)


# --- multi-GPU scaling efficiency ----------------------------------------------------------


# Why a 1-vs-n pair is left out of the scaling fit (the `excluded` column of
# `candidate_pairs`); each count is reported in the fit's `data_used`.
EXCLUDED_LAMBDA_BERT = "lambda_bert"
EXCLUDED_SUPER_LINEAR = "super_linear"
EXCLUDED_NO_INTERCONNECT = "no_interconnect"
EXCLUDED_FLAGGED = "flagged"


def is_lambda_bert() -> pl.Expr:
    """Lambda's BERT/SQuAD rows: their multi-GPU figures are super-linear (MANIFEST.md)."""
    return (pl.col("source") == "lambda") & pl.col("model").str.starts_with("bert")


def candidate_pairs(results: pl.DataFrame, gpus: pl.DataFrame | None) -> pl.DataFrame:
    """All 1-vs-n pairs with `efficiency`, `n`, `interconnect` and `excluded`.

    A pair is a 1-GPU and an n-GPU result of one GPU x model x table at the same per-GPU
    batch size; `excluded` is null when the pair enters the fit, else why not, in this
    order: either row carries a quality flag bar `batch_changed` (`flagged:<flags>`, e.g.
    the rows flags.py marks super_linear); Lambda's BERT/SQuAD rows (`lambda_bert`: its
    multi-GPU BERT figures are super-linear, see sources/benchmarks/MANIFEST.md);
    super-linear pairs (`super_linear`: e above flags.SUPER_LINEAR_TOLERANCE, the tolerance
    of the `super_linear` flag; pairs between 1
    and that tolerance are measurement noise around linear scaling and are kept, so the fit
    is not cut off at 1 and biased low); GPUs missing from the catalog (`no_interconnect`).
    """
    key = ["source", "software_era", "citation", "gpu_id", "model", "task", "precision"]
    rows = usable(results).filter(pl.col("precision").is_in(SIXTEEN_BIT))
    rows = rows.with_columns(
        _flags=untolerated_flags(BATCH_CHANGED_OK).list.join(",")
        if "flags" in rows.columns
        else pl.lit("")
    )
    single = rows.filter(pl.col("num_gpus") == 1).select(
        key
        + [
            "batch_size_per_gpu",
            pl.col("throughput").alias("t_1"),
            pl.col("_flags").alias("_flags_1"),
        ]
    )
    multi = rows.filter(pl.col("num_gpus") > 1).select(
        key
        + ["batch_size_per_gpu", "workload_class", pl.col("num_gpus").alias("n"), "throughput"]
        + ["_flags"]
    )
    pairs = multi.join(single, on=key + ["batch_size_per_gpu"], nulls_equal=True).with_columns(
        efficiency=pl.col("throughput") / (pl.col("n") * pl.col("t_1")),
        _flags=pl.concat_list("_flags", "_flags_1")
        .list.eval(pl.element().filter(pl.element() != ""))
        .list.unique()
        .list.sort()
        .list.join(","),
    )
    return (
        with_interconnect(pairs.drop("_flags_1"), gpus)
        .with_columns(
            excluded=pl.when(pl.col("_flags") != "")
            .then(pl.lit(EXCLUDED_FLAGGED + ":") + pl.col("_flags"))
            .when(is_lambda_bert())
            .then(pl.lit(EXCLUDED_LAMBDA_BERT))
            .when(pl.col("efficiency") > SUPER_LINEAR_TOLERANCE)
            .then(pl.lit(EXCLUDED_SUPER_LINEAR))
            .when(pl.col("interconnect").is_null())
            .then(pl.lit(EXCLUDED_NO_INTERCONNECT))
        )
        .drop("_flags")
    )


def scaling_pairs(results: pl.DataFrame, gpus: pl.DataFrame | None) -> pl.DataFrame:
    """The pairs of `candidate_pairs` that enter the scaling fit (and its validation)."""
    return candidate_pairs(results, gpus).filter(pl.col("excluded").is_null()).drop("excluded")


def _excluded_note(excluded: pl.DataFrame) -> str:
    """'excluded: 3 super-linear pairs (e > 1.05), ...' for one n x interconnect."""
    labels = {
        EXCLUDED_SUPER_LINEAR: f"super-linear (e > {SUPER_LINEAR_TOLERANCE:g})",
        EXCLUDED_LAMBDA_BERT: "Lambda BERT/SQuAD (known super-linear)",
        EXCLUDED_NO_INTERCONNECT: "GPU not in the catalog",
    }
    counts = excluded.group_by("excluded").len().sort("excluded")
    parts = [
        f"{k} {labels.get(r, r.replace(EXCLUDED_FLAGGED + ':', 'flagged '))}"
        for r, k in counts.iter_rows()
    ]
    return f"excluded {', '.join(parts)} pairs" if parts else "no pairs excluded"


def efficiency_key(n: int, interconnect: str | None) -> str:
    """The model_constants key of a scaling efficiency, e.g. '8|nvlink'."""
    return f"{n}|{interconnect}" if interconnect else str(n)


def median_interval(values: list[float]) -> tuple[float, float] | None:
    """Distribution-free 95 % interval for a median: order statistics x_(j), x_(m+1-j).

    j is the largest rank with P(Binomial(m, 1/2) < j) <= 2.5 %; with fewer than 6 values
    even (min, max) covers less than 95 %, so there is no interval.
    """
    x = sorted(values)
    m = len(x)
    below, j = 0.0, 0
    while True:
        below += math.comb(m, j) / 2**m  # P(Binomial < j + 1)
        if below > 0.025:
            break
        j += 1
    return (x[j - 1], x[m - j]) if j >= 1 else None


def _gpu_median_interval(pairs: pl.DataFrame) -> dict:
    """Median over GPUs of each GPU's median efficiency, with an order-statistic interval.

    Medians, not means: most 1-vs-n pairs scale almost linearly and a few configurations
    scale very badly (e.g. TF2 Mask R-CNN on 8 GPUs, Lambda tacotron2); a mean would move
    every GPU's correction toward those. Each GPU counts once, because its pairs share one
    machine.
    """
    per_gpu = pairs.group_by("gpu_id").agg(pl.col("efficiency").median().alias("m"))["m"]
    values = per_gpu.to_list()
    interval = median_interval(values)
    low, high = interval if interval else (None, None)
    return {"value": float(np.median(values)), "ci_low": low, "ci_high": high,
            "n_gpus": len(values)}  # fmt: skip


def fit_scaling_efficiency(pairs: pl.DataFrame) -> pl.DataFrame:
    """Fitted e_n per (GPU count, interconnect) from `scaling_pairs` or `candidate_pairs`.

    With an `excluded` column (candidate_pairs), only the pairs it leaves null are fitted
    and the excluded ones are counted, by reason, in `data_used`.
    """
    if "excluded" not in pairs.columns:
        pairs = pairs.with_columns(excluded=pl.lit(None, dtype=pl.Utf8))
    out = []
    kept = pairs.filter(pl.col("excluded").is_null())
    for (n, link), part in sorted(kept.group_by("n", "interconnect"), key=lambda kv: kv[0]):
        fit = _gpu_median_interval(part)
        left_out = pairs.filter(
            (pl.col("n") == n) & (pl.col("interconnect") == link) & pl.col("excluded").is_not_null()
        )
        used = (
            f"{part.height} 1-vs-{n}-GPU pairs at equal per-GPU batch size on {fit['n_gpus']} "
            f"{link} GPUs ({', '.join(sorted(set(part['gpu_id'])))}); models "
            f"{', '.join(sorted(set(part['model'])))}; sources "
            f"{', '.join(sorted(set(part['source'] + ' ' + part['software_era'])))}; "
            f"{_excluded_note(left_out)}"
        )
        out.append(
            {
                "parameter_set": "fitted",
                "name": "multi_gpu_efficiency",
                "key": efficiency_key(int(n), link),
                **{k: fit[k] for k in ("value", "ci_low", "ci_high")},
                "n": part.height,
                "n_groups": fit["n_gpus"],
                "n_gpus": fit["n_gpus"],
                "data_used": used,
            }
        )
    return _frame(out)


# --- both sets, and which one is used ---------------------------------------------------


def dettmers_constants(params: ModelParameters) -> pl.DataFrame:
    """Dettmers' constants as configured (seeds/parameters.md B292, B296, A11)."""
    out = [
        {
            "parameter_set": "dettmers",
            "name": "batch_gain_per_doubling",
            "key": cls,
            "value": gain,
            "data_used": "Dettmers 2023 (B292): +13.6 % CNN, +13.5 % transformer per batch "
            "doubling (RTX Titan); rnn is our assumption (transformer value)",
        }
        for cls, gain in sorted(params.batch_gain_per_doubling.items())
    ]
    out += [
        {
            "parameter_set": "dettmers",
            "name": "multi_gpu_efficiency",
            "key": efficiency_key(n, None),
            "value": e,
            "data_used": "Dettmers 2014 (A11: 1.9x on 2, 3.5x on 4 GPUs) and 2023 (B296: "
            "8x V100 6.67x, 8x A100 7.00x -> 0.86); any interconnect",
        }
        for n, e in sorted(params.multi_gpu_efficiency.items())
    ]
    return _frame(out)


def _frame(rows: list[dict]) -> pl.DataFrame:
    full = [{k: r.get(k) for k in CONSTANTS_SCHEMA} for r in rows]
    return pl.DataFrame(full, schema=CONSTANTS_SCHEMA)


def _describe(row: dict) -> str:
    what = (
        f"throughput gain per batch-size doubling ({row['key']})"
        if row["name"] == "batch_gain_per_doubling"
        else f"per-GPU scaling efficiency e_n (n|interconnect = {row['key']})"
    )
    if row["parameter_set"] == "dettmers":
        return f"Dettmers' {what}: {row['value']:.3f}. {row['data_used']}."
    ci = (
        f"95 % CI {row['ci_low']:.3f}-{row['ci_high']:.3f}"
        if row["ci_low"] is not None
        else "no interval (a single cluster; undetermined)"
    )
    state = "well determined" if row["determined"] else "not well determined"
    return f"Fitted {what}: {row['value']:.3f}, {ci}; {state}. Data: {row['data_used']}."


def fit_constants(
    results: pl.DataFrame, gpus: pl.DataFrame | None, params: ModelParameters
) -> pl.DataFrame:
    """Both parameter sets, one row per constant, with `determined`, `used` and `detail`.

    Fitted inference gains are never used (see fit_batch_gain).
    """
    if params.constants not in ("dettmers", "fitted", "auto"):
        raise ValueError(f"constants must be dettmers, fitted or auto, not {params.constants!r}")
    fitted = pl.concat(
        [fit_batch_gain(results), fit_scaling_efficiency(candidate_pairs(results, gpus))]
    ).with_columns(
        determined=pl.col("ci_low").is_not_null()
        & ((pl.col("ci_high") - pl.col("ci_low")) <= params.fit_max_ci_width)
    )
    dettmers = dettmers_constants(params).with_columns(determined=pl.lit(True))
    gains = fitted.filter(
        (pl.col("name") == "batch_gain_per_doubling") & ~pl.col("key").str.contains(":")
    )
    if params.constants == "dettmers":
        gains = gains.clear()
    elif params.constants == "auto":
        gains = gains.filter(pl.col("determined"))
    both = pl.concat([dettmers, fitted])
    efficiencies = efficiency_table(both, params.constants)["source"].unique().to_list()
    # `used` first means "eligible": every Dettmers constant (the fallback), the usable gain
    # fits and the efficiencies `efficiency_table` resolves to. `mark_used` narrows it to
    # what the debiased rows actually applied.
    tag = pl.concat_str("parameter_set", pl.lit(":"), "key")
    both = both.with_columns(
        used=(pl.col("parameter_set") == "dettmers")
        | pl.struct("parameter_set", "name", "key").is_in(
            gains.select(pl.struct("parameter_set", "name", "key")).to_series().implode()
        )
        | ((pl.col("name") == "multi_gpu_efficiency") & tag.is_in(efficiencies))
    )
    return both.with_columns(
        detail=pl.struct(both.columns).map_elements(_describe, return_dtype=pl.Utf8)
    ).select(list(CONSTANTS_SCHEMA))


def gain_lookup(constants: pl.DataFrame) -> dict[str, tuple[float, str]]:
    """Workload class -> (gain per doubling, parameter set) the run uses."""
    rows = constants.filter(
        (pl.col("name") == "batch_gain_per_doubling")
        & pl.col("used")
        & ~pl.col("key").str.contains(":")
    ).sort("parameter_set", descending=True)  # 'fitted' before 'dettmers'
    out: dict[str, tuple[float, str]] = {}
    for r in rows.iter_rows(named=True):
        out.setdefault(r["key"], (r["value"], r["parameter_set"]))
    return out


EFFICIENCY_SCHEMA = {
    "num_gpus": pl.Int32,
    "interconnect": pl.Utf8,
    "efficiency": pl.Float64,
    "efficiency_low": pl.Float64,
    "efficiency_high": pl.Float64,
    "source": pl.Utf8,
}


def efficiency_table(constants: pl.DataFrame | None, mode: str) -> pl.DataFrame:
    """The multi-GPU efficiency a run applies, per GPU count x interconnect.

    `constants` holds model_constants rows (both sets; `used` is ignored, so the stored
    rows of a run give the same table as the fit did); None means Dettmers' only.

    One consistent source for every system size: the fitted e_n are used only when
    *every* GPU count Dettmers configures (above 1) has a fit for *every* interconnect
    (INTERCONNECTS) that the mode accepts ('fitted': any fit; 'auto': a determined one;
    'dettmers': none); otherwise Dettmers' e_n apply to every count and interconnect.
    Mixing the two by size made costs jump (a fitted 0.969 at 4 GPUs next to Dettmers'
    0.86 at 8). With the fitted set, counts Dettmers does not configure (3, 16) get their
    fit where the mode accepts it. Rows with interconnect null (a GPU missing from the
    catalog, never costed) get Dettmers' interconnect-agnostic e_n: a per-interconnect fit
    does not apply to an unknown interconnect. `efficiency_low`/`efficiency_high`
    are the fitted 95 % interval, null for Dettmers' constants; `source` is
    'fitted:<n|link>' or 'dettmers:<n>'.
    """
    rows = (
        []
        if constants is None
        else constants.filter(pl.col("name") == "multi_gpu_efficiency").to_dicts()
    )
    dettmers = {int(r["key"]): r for r in rows if r["parameter_set"] == "dettmers"}
    fitted = {r["key"]: r for r in rows if r["parameter_set"] == "fitted"}

    def accepted(fit: dict | None) -> bool:
        return fit is not None and mode != "dettmers" and (mode == "fitted" or fit["determined"])

    use_fitted = bool(dettmers) and all(
        accepted(fitted.get(efficiency_key(n, link)))
        for n in dettmers
        if n > 1
        for link in INTERCONNECTS
    )
    out = (
        _fitted_efficiencies(dettmers, fitted, accepted)
        if use_fitted
        else _dettmers_efficiencies(dettmers)
    )
    return pl.DataFrame(out, schema=EFFICIENCY_SCHEMA, orient="row")


def _fitted_efficiencies(
    dettmers: dict, fitted: dict, accepted: Callable[[dict | None], bool]
) -> list[tuple]:
    """`efficiency_table` rows from the fitted e_n (every Dettmers count has accepted fits).

    1 GPU keeps Dettmers' e_1; a count whose fits the mode does not all accept gets no row,
    never a mixed source; a row of unknown interconnect gets Dettmers' e_n.
    """
    out = []
    counts = {int(k.split("|")[0]) for k in fitted if "|" in k} | {1}
    for n in sorted(counts):
        fits = [fitted.get(efficiency_key(n, link)) for link in INTERCONNECTS]
        if n == 1:
            one = dettmers.get(1)
            value = one["value"] if one else 1.0
            out += [(1, link, value, None, None, "dettmers:1") for link in INTERCONNECTS]
            out.append((1, None, value, None, None, "dettmers:1"))
            continue
        if not all(accepted(f) for f in fits):
            continue  # e.g. an undetermined 3-GPU fit: no row, never a mixed source
        for link, fit in zip(INTERCONNECTS, fits, strict=True):
            out.append((n, link, fit["value"], fit["ci_low"], fit["ci_high"],
                        f"fitted:{fit['key']}"))  # fmt: skip
        if n in dettmers:  # interconnect unknown: the fits do not apply (efficiency_table)
            out.append((n, None, dettmers[n]["value"], None, None, f"dettmers:{n}"))
    return out


def _dettmers_efficiencies(dettmers: dict) -> list[tuple]:
    """`efficiency_table` rows from Dettmers' e_n, for every interconnect and unknown."""
    return [
        (n, link, dettmers[n]["value"], None, None, f"dettmers:{n}")
        for n in sorted(dettmers)
        for link in (*INTERCONNECTS, None)
    ]


def with_interpolated_counts(table: pl.DataFrame, counts: list[int]) -> pl.DataFrame:
    """`table` plus rows for GPU counts it lacks but that lie between two counts it has.

    The efficiency of an unlisted count (an MLPerf system of 6 GPUs) is interpolated
    linearly in log2(n) between its neighbours of the same source and interconnect, with
    `source` 'interpolated:<low>-<high>|<low source>|<high source>'; counts outside the
    table's range get
    no row (their figures are left out, never extrapolated).
    """
    extra = []
    for (link,), part in table.group_by("interconnect", maintain_order=True):
        known = {int(r["num_gpus"]): r for r in part.to_dicts()}
        for n in sorted(set(counts) - set(known)):
            lower = [k for k in known if k < n]
            upper = [k for k in known if k > n]
            if not lower or not upper:
                continue
            lo, hi = known[max(lower)], known[min(upper)]
            w = (math.log2(n) - math.log2(lo["num_gpus"])) / (
                math.log2(hi["num_gpus"]) - math.log2(lo["num_gpus"])
            )
            value = lo["efficiency"] + w * (hi["efficiency"] - lo["efficiency"])
            source = f"interpolated:{lo['num_gpus']}-{hi['num_gpus']}|{lo['source']}|{hi['source']}"
            extra.append((n, link, value, None, None, source))
    if not extra:
        return table
    return pl.concat([table, pl.DataFrame(extra, schema=EFFICIENCY_SCHEMA, orient="row")])


def dettmers_efficiency_table(params: ModelParameters) -> pl.DataFrame:
    """`efficiency_table` with Dettmers' constants only (no model_constants at hand)."""
    return efficiency_table(dettmers_constants(params), "dettmers")


def constant_tags(sources) -> set[str]:
    """The model_constants tags (`<set>:<key>`) behind debiased rows' source tags.

    An interpolated e_n applied both of its neighbours; 'inference:replicas' (efficiency 1
    for inference) applies no constant.
    """
    tags = set()
    for source in sources:
        if source is None or source.startswith("inference:"):
            continue
        if source.startswith("interpolated:"):
            tags |= set(source.split("|")[1:])
        else:
            tags.add(source)
    return tags


def mark_used(
    constants: pl.DataFrame,
    debiased: pl.DataFrame,
    mode: str | None = None,
    system_sizes: tuple[int, ...] = (),
) -> pl.DataFrame:
    """Set `used` to whether the run applied the constant.

    A constant is used when a debiased row applied it (its `*_source` tag) or, for the
    efficiencies, when the cost model applies it to one of `system_sizes` (the e_n
    `efficiency_table(constants, mode)` resolves for that size).
    """
    tag = pl.concat_str("parameter_set", pl.lit(":"), "key")
    gains = debiased["batch_gain_source"].drop_nulls().unique().to_list()
    efficiencies = constant_tags(debiased["efficiency_source"].drop_nulls().unique().to_list())
    if mode is not None and system_sizes:
        # Catalog GPUs always have an interconnect; the interconnect-null fallback row is
        # for benchmark GPUs outside the catalog, which the cost model never prices.
        table = efficiency_table(constants, mode).filter(
            pl.col("num_gpus").is_in(list(system_sizes)) & pl.col("interconnect").is_not_null()
        )
        efficiencies |= set(table["source"])
    return constants.with_columns(
        used=((pl.col("name") == "batch_gain_per_doubling") & tag.is_in(gains))
        | ((pl.col("name") == "multi_gpu_efficiency") & tag.is_in(sorted(efficiencies)))
    )
