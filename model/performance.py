"""Relative performance per GPU and workload, measured where possible, estimated otherwise.

Measured values come from a weighted least-squares fit over benchmark tables
(model/performance_fit.py: Dettmers' geometric mean of ratios to a reference GPU, bridged
through the GPUs two tables share, never comparing figures across tables and so across
software eras). The headline `value` weights each table by its benchmark class
(model/benchmark_weights.py: transformer and LLM tables 1, diffusion 0.5, CNN and RNN 0.1),
because the three workloads describe transformer work; `value_all_benchmarks` is the same
model with every table weight 1. A GPU measured in one table only is placed by its
same-table ratio to its nearest anchor there, so the benchmark mix of the other GPUs does
not move it. GPUs that share no table with the reference's set are placed on the common
scale through their *measured* anchors only, keeping their measured ratios.

16-bit training (`evidence`): `measured` in the reference's set of tables; `spec_placed`
for a set of tables that shares no GPU with it (its measured ratios are kept, its level
comes from the spec estimates: marked estimated); `spec_estimate` for GPUs without a
benchmark. The spec estimator (model/spec_estimator.py) is chosen among candidates by
leave-one-GPU-out error; a GPU of an architecture (vendor) without any measured GPU takes
the error range of leaving whole architectures (vendors) out, so it gets a wider interval.

Inference (16- and 8-bit): measured where benchmarked, else bridged from a base workload
(16-bit training; 16-bit inference x the 8-bit tensor speedup) by the pooled ratio of the
GPU's segment, vendor and architecture, each level used only with two or more measured
GPUs, or Dettmers' rule (ratio 1) with too few measured ratios (model/bridging.py).
"""

import datetime as dt

import numpy as np
import polars as pl

from model.benchmark_weights import uniform_weights
from model.bridging import inference_8bit, inference_16bit
from model.fit import t975
from model.parameters import ModelParameters
from model.performance_fit import measured_workload, place_on_anchor
from model.performance_rows import log_row, workload_frame
from model.spec_estimator import spec_estimator, spec_features

# Two-sided 95 % normal quantile for the pooling term of an interval.
POOLED_Z = 1.96


def _quantile_range(errors: np.ndarray) -> tuple[float, float] | None:
    """(2.5 %, 97.5 %) of log errors (predicted - measured); None with fewer than 3."""
    if len(errors) < 3:
        return None
    return float(np.quantile(errors, 0.025)), float(np.quantile(errors, 0.975))


def training_16bit(
    debiased: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    weights: dict[str, float] | None = None,
) -> pl.DataFrame:
    """16-bit training: measured where benchmarked, else estimated from specs.

    `weights`: the benchmark-class weights of the fit (None: every table 1).
    """
    measured = measured_workload(debiased, "training_16bit", reference, weights)
    main = measured.filter(pl.col("main"))
    anchor, logo, chosen, unseen = spec_estimator(main, gpus)
    placed = place_on_anchor(measured, anchor).join(
        measured.select("gpu_id", "placed_by"), on="gpu_id", how="left"
    )
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
    pooled_frame = unseen.get("pooled")
    pooled = (
        {} if pooled_frame is None else {r["gpu_id"]: r for r in pooled_frame.iter_rows(named=True)}
    )
    rows = []
    for r in placed.join(features, on="gpu_id", how="left").iter_rows(named=True):
        value = r["log_perf"] - ref_log
        if r["n_results"] is not None and r["main"]:
            half = t * r["log_se"] if t is not None and r["log_se"] is not None else None
            text = _measured_text(df, half, r["placed_by"])
            low = -half if half is not None else None
            rows.append(
                log_row(r["gpu_id"], value, low, half, "measured", "measured", r["n_results"], text)
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
        if r["gpu_id"] in pooled and bounds is not None:
            low, high, method_text = _pooled_interval(low, high, method_text, pooled[r["gpu_id"]])
        if r["n_results"] is not None:
            # Measured, but in tables that share no GPU with the reference's: its level
            # comes from the spec estimates of its set, so it is an estimate.
            rows.append(log_row(r["gpu_id"], value, low, high, "estimated", "spec_placed",
                             r["n_results"], method_text))  # fmt: skip
        else:
            rows.append(log_row(r["gpu_id"], value, low, high, "estimated", "spec_estimate", 0,
                             method_text))  # fmt: skip
    return workload_frame(rows, "training_16bit")


def _pooled_interval(low: float, high: float, text: str, pooled: dict):
    """Widen a spec estimate's log interval by its line pooling's random-walk sd.

    The pooled shift comes from the nearest measured generation of the GPU's product line
    (model/spec_estimator.py `line_pooling`); how far that line's effect may have moved
    since grows with the years between the generations, added in quadrature (normal 95 %)
    to each side of the leave-one-GPU-out error range.
    """
    extra = POOLED_Z * pooled["pooled_sd"]
    low = -float(np.hypot(max(-low, 0.0), extra))
    high = float(np.hypot(max(high, 0.0), extra))
    text = (
        f"{text}, widened for pooling with the measured {pooled['pooled_from']} GPUs of its "
        f"product line ({pooled['pooled_years']:.1f} years apart; shift "
        f"{np.exp(pooled['pooled_shift']):.3f}x)"
    )
    return low, high, text


def _measured_text(df: int, half: float | None, placed_by: str | None) -> str | None:
    """The interval text of a measured GPU (`placed_by`: how a single-table GPU was placed)."""
    text = f"least-squares standard error, t({df}) 95 %" if half is not None else None
    if placed_by:
        what = f"its anchor's {text} and the fit's residual variance" if text else "none"
        return f"{placed_by}; interval: {what}"
    return text


def _widest(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]), max(a[1], b[1]))


def workloads(
    debiased: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    weights: dict[str, float] | None,
) -> pl.DataFrame:
    """The three workloads' rows (gpu_id, workload, value, ...) fitted with `weights`."""
    training = training_16bit(debiased, gpus, reference, weights)
    inference = inference_16bit(debiased, training, gpus, reference, weights)
    eight_bit = inference_8bit(debiased, inference, gpus, reference, training, weights)
    return pl.concat([training, inference, eight_bit])


def relative_performance(
    debiased: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters, run_date: dt.date
) -> pl.DataFrame:
    """One row per catalog GPU x workload: performance relative to the reference GPU.

    `value` is fitted with the benchmark-class weights (`params.benchmark_weights`),
    `value_all_benchmarks` with every table weight 1 (module docstring), each with its 95 %
    interval. value_low/value_high is NULL where no interval can be computed (a fit without
    residual degrees of freedom, too few GPUs to validate the spec estimator). `evidence`
    says what the value rests on (module docstring).
    """
    reference = params.reference_gpu
    if reference not in gpus["gpu_id"].to_list():
        raise ValueError(f"reference GPU {reference!r} is not in the catalog")
    weighted = workloads(debiased, gpus, reference, params.benchmark_weights)
    every = workloads(debiased, gpus, reference, uniform_weights()).select(
        "gpu_id",
        "workload",
        value_all_benchmarks="value",
        value_all_benchmarks_low="value_low",
        value_all_benchmarks_high="value_high",
    )
    return (
        weighted.join(every, on=["gpu_id", "workload"], how="left")
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
            "value_all_benchmarks",
            "value_all_benchmarks_low",
            "value_all_benchmarks_high",
        )
        .sort("workload", "value", descending=[False, True])
    )
