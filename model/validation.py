"""The model's validation figures, computed from the ingested data on every run.

Four checks (docs/methodology.md, "Validation"), one table `model_validation`:

- batch_gain: the fitted gain per batch doubling beside Dettmers' 13.6 % / 13.5 %.
- multi_gpu_prediction: predict 1-GPU throughput from n-GPU results; error with the fitted
  efficiency (leave-one-GPU-out: the GPU's own pairs are not in the fit that predicts them)
  against plain division by n and against Dettmers' constants.
- spec_estimator_logo: leave-one-GPU-out error of each spec-based estimator candidate on
  the measured GPUs (median and 90th-percentile absolute percentage error), per vendor
  for the chosen one (spec_estimator_logo_vendor); and inference_bridge_logo: the same
  for bridging inference from training (each measured GPU's inference/training ratio
  predicted from the other GPUs' ratios, pooled by architecture as the bridge does);
  eight_bit_rule: the 8-bit tensor-rate rule against measured 8-bit results.
- a100_vs_v100: debiased A100/V100 16-bit training speedups for CNNs and transformers
  beside Dettmers' 1.45x (vision) and 1.70x (NLP), under each constant set.
"""

import dataclasses
import datetime as dt

import numpy as np
import polars as pl

from model.bridging import INFERENCE_16BIT_LEVELS, eight_bit_speedup, pooled_ratio
from model.debias import debias
from model.fit import (
    efficiency_key,
    fit_constants,
    fit_scaling_efficiency,
    scaling_pairs,
    t975,
)
from model.parameters import ModelParameters
from model.performance import relative_performance
from model.performance_fit import fit_log_performance, measured_workload, workload_rows
from model.spec_estimator import (
    SPEC_MODELS,
    choose_spec_model,
    leave_one_gpu_out,
    spec_features,
)
from sources.benchmarks.flags import SUPER_LINEAR_TOLERANCE

SCHEMA = {
    "run_date": pl.Date,
    "check_name": pl.Utf8,
    "subject": pl.Utf8,
    "metric": pl.Utf8,
    "value": pl.Float64,
    "reference_value": pl.Float64,
    "value_low": pl.Float64,
    "value_high": pl.Float64,
    "n": pl.Int64,
    "detail": pl.Utf8,
}
# Dettmers' A100/V100 speedups (seeds/parameters.md N3:28, B304-312): 1.45x vision, 1.70x NLP.
DETTMERS_A100_V100 = {"cnn": 1.45, "transformer": 1.70}
A100, V100 = "a100-sxm4-40gb", "v100-sxm2-16gb"


def _row(check: str, subject: str, metric: str, value, detail: str, **extra) -> dict:
    return {"check_name": check, "subject": subject, "metric": metric, "value": value,
            "detail": detail, **extra}  # fmt: skip


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


# --- batch-size gain -----------------------------------------------------------------------


def batch_gain_checks(constants: pl.DataFrame, params: ModelParameters) -> list[dict]:
    """Each fitted gain beside Dettmers' constant for its class."""
    out = []
    fitted = constants.filter(
        (pl.col("parameter_set") == "fitted") & (pl.col("name") == "batch_gain_per_doubling")
    )
    for r in fitted.iter_rows(named=True):
        cls = r["key"].split(":")[-1]
        dettmers = params.batch_gain_per_doubling.get(cls)
        applied = "used by this run" if r["used"] else "not used by this run"
        if ":" in r["key"]:
            applied = "reported only: inference is compared at one batch size, never corrected"
        ci = (
            f"95 % CI {_pct(r['ci_low'])} to {_pct(r['ci_high'])}"
            if r["ci_low"] is not None
            else "no interval"
        )
        out.append(
            _row(
                "batch_gain",
                r["key"],
                "gain_per_doubling",
                r["value"],
                f"Fitted {_pct(r['value'])} per batch doubling ({ci}) vs Dettmers' "
                f"{_pct(dettmers)}; {applied}. Data: {r['data_used']}.",
                reference_value=dettmers,
                value_low=r["ci_low"],
                value_high=r["ci_high"],
                n=r["n"],
            )
        )
    return out


# --- multi-GPU prediction ----------------------------------------------------------------


def multi_gpu_predictions(
    results: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters
) -> pl.DataFrame:
    """Per 1-vs-n pair: absolute percentage error of three predictions of t_1 from t_n."""
    pairs = scaling_pairs(results, gpus)
    out = []
    for gpu in sorted(set(pairs["gpu_id"])):
        others = fit_scaling_efficiency(pairs.filter(pl.col("gpu_id") != gpu))
        fitted = dict(zip(others["key"], others["value"], strict=True))
        for r in pairs.filter(pl.col("gpu_id") == gpu).iter_rows(named=True):
            n, t_n, t_1 = r["n"], r["throughput"], r["t_1"]
            e_fit = fitted.get(efficiency_key(n, r["interconnect"]))
            e_det = params.multi_gpu_efficiency.get(n)
            out.append(
                {
                    "gpu_id": gpu,
                    "n": n,
                    "interconnect": r["interconnect"],
                    "ape_naive": abs(t_n / n / t_1 - 1),
                    "ape_fitted": None if e_fit is None else abs(t_n / (n * e_fit) / t_1 - 1),
                    "ape_dettmers": None if e_det is None else abs(t_n / (n * e_det) / t_1 - 1),
                }
            )
    schema = {"gpu_id": pl.Utf8, "n": pl.Int64, "interconnect": pl.Utf8}
    schema |= {k: pl.Float64 for k in ("ape_naive", "ape_fitted", "ape_dettmers")}
    return pl.DataFrame(out, schema=schema)


def multi_gpu_checks(predictions: pl.DataFrame) -> list[dict]:
    """Median and 90th-percentile error per subject (all pairs, and each n x interconnect)."""
    subjects = [("all pairs", predictions)]
    for (n, link), part in sorted(predictions.group_by("n", "interconnect"), key=lambda kv: kv[0]):
        subjects.append((efficiency_key(n, link), part))
    out = []
    for subject, part in subjects:
        scored = part.filter(pl.col("ape_fitted").is_not_null())
        if scored.is_empty():
            continue
        q = {
            (m, k): float(scored[k].drop_nulls().quantile(p, "linear"))
            if scored[k].drop_nulls().len()
            else None
            for m, p in (("median", 0.5), ("p90", 0.9))
            for k in ("ape_naive", "ape_fitted", "ape_dettmers")
        }
        detail = (
            f"{scored.height} pairs on {scored['gpu_id'].n_unique()} GPUs, same per-GPU batch "
            f"size at 1 and n GPUs, the pairs the scaling fit uses (super-linear pairs, e > "
            f"{SUPER_LINEAR_TOLERANCE:g}, and Lambda BERT excluded). Median error "
            f"predicting 1-GPU throughput: fitted e_n (leave-one-GPU-out) "
            f"{_pct(q['median', 'ape_fitted'])}, divide by n {_pct(q['median', 'ape_naive'])}, "
            f"Dettmers' e_n {_pct(q['median', 'ape_dettmers'])}; 90th percentile "
            f"{_pct(q['p90', 'ape_fitted'])} / {_pct(q['p90', 'ape_naive'])} / "
            f"{_pct(q['p90', 'ape_dettmers'])}."
        )
        for stat in ("median", "p90"):
            out.append(
                _row(
                    "multi_gpu_prediction",
                    subject,
                    f"{stat}_ape_fitted_vs_divide_by_n",
                    q[stat, "ape_fitted"],
                    detail,
                    reference_value=q[stat, "ape_naive"],
                    n=scored.height,
                )
            )
            out.append(
                _row(
                    "multi_gpu_prediction",
                    subject,
                    f"{stat}_ape_dettmers_vs_divide_by_n",
                    q[stat, "ape_dettmers"],
                    detail,
                    reference_value=q[stat, "ape_naive"],
                    n=scored.height,
                )
            )
    return out


# --- spec-based estimator -------------------------------------------------------------------


def training_measured_set(
    debiased: pl.DataFrame, reference: str, weights: dict[str, float] | None = None
) -> pl.DataFrame:
    """Measured 16-bit training log performance of the reference's connected set.

    With `weights` (the run's benchmark-class weights) it is the set the headline spec
    estimator is fitted and chosen on (model/performance.py `training_16bit`).
    """
    if weights is not None:
        return measured_workload(debiased, "training_16bit", reference, weights).filter(
            pl.col("main")
        )
    return fit_log_performance(workload_rows(debiased, "training_16bit"), reference).filter(
        pl.col("main")
    )


def spec_estimator_checks(
    debiased: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    weights: dict[str, float] | None = None,
) -> list[dict]:
    """Leave-one-GPU-out error of each candidate, and per GPU for the chosen one.

    `weights`: the run's benchmark-class weights, so the errors (and the choice) are those
    of the measured values the headline estimates are fitted on.
    """
    measured = training_measured_set(debiased, reference, weights)
    logo = leave_one_gpu_out(measured, gpus)
    if logo.is_empty():
        return []
    chosen = choose_spec_model(logo)
    stats = {
        m: (
            float(part["ape"].median()),
            float(part["ape"].quantile(0.9, "linear")),
            part.height,
        )
        for (m,), part in logo.group_by("model")
    }
    base = stats["dettmers_half_half"]
    out = []
    for model in SPEC_MODELS:
        median, p90, n = stats[model]
        role = "chosen: it drives the estimates" if model == chosen else "candidate"
        detail = (
            f"Spec estimator '{model}' ({role}): predicting each of {n} measured GPUs' 16-bit "
            f"training performance from the other GPUs' specs gives median absolute error "
            f"{_pct(median)}, 90th percentile {_pct(p90)} (Dettmers-style 0.5/0.5 bandwidth/"
            f"tensor scaling: {_pct(base[0])} / {_pct(base[1])}). The choice among candidates "
            f"uses the same errors, so the chosen one's error is slightly optimistic."
        )
        out.append(_row("spec_estimator_logo", model, "median_ape", median, detail,
                        reference_value=base[0], n=n))  # fmt: skip
        out.append(_row("spec_estimator_logo", model, "p90_ape", p90, detail,
                        reference_value=base[1], n=n))  # fmt: skip
    chosen_logo = logo.filter(pl.col("model") == chosen)
    for (vendor,), part in sorted(chosen_logo.group_by("vendor"), key=lambda kv: kv[0]):
        median = float(part["ape"].median())
        out.append(
            _row(
                "spec_estimator_logo_vendor",
                vendor,
                "median_ape",
                median,
                f"{vendor}: {part.height} measured GPUs ({', '.join(sorted(part['gpu_id']))}), "
                f"each predicted by '{chosen}' fitted without it: median absolute error "
                f"{_pct(median)}.",
                n=part.height,
            )
        )
    for r in chosen_logo.sort("gpu_id").iter_rows(named=True):
        out.append(
            _row(
                "spec_estimator_logo_gpu",
                r["gpu_id"],
                "ape",
                r["ape"],
                f"{r['gpu_id']}: spec estimate ({chosen}, fitted without it) is "
                f"{np.exp(r['log_error']):.3f}x its measured 16-bit training performance.",
                n=1,
            )
        )
    return out


def measured_in_both(relative: pl.DataFrame, reference: str, a: str, b: str) -> pl.DataFrame | None:
    """gpu_id and the values of workloads `a` and `b` of the GPUs measured in both.

    `relative` is relative_performance's output. Never the reference GPU (1 in every
    workload by definition); None when a workload has no measured GPU.
    """
    wide = relative.filter(pl.col("evidence") == "measured").pivot(
        on="workload", index="gpu_id", values="value"
    )
    if not {a, b} <= set(wide.columns):
        return None
    return wide.drop_nulls([a, b]).filter(pl.col("gpu_id") != reference)


def _relative(debiased: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters):
    """The run's relative performance, or None when the reference is not in the catalog."""
    if params.reference_gpu not in gpus["gpu_id"].to_list():
        return None
    return relative_performance(debiased, gpus, params, dt.date.min)


def inference_bridge_checks(
    debiased: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    relative: pl.DataFrame | None = None,
) -> list[dict]:
    """Leave-one-GPU-out error of bridging 16-bit inference from 16-bit training.

    Every GPU measured in both workloads (its training in the reference's set; never the
    reference, whose ratio is 1 by definition) is predicted as its training value x the
    architecture-pooled ratio of the *other* GPUs, as bridging.bridged_workload does for
    unmeasured GPUs; the error is against its measured inference value. `relative` is the
    run's relative performance (computed here when not given).
    """
    relative = relative if relative is not None else _relative(debiased, gpus, params)
    if relative is None:
        return []
    both = measured_in_both(relative, params.reference_gpu, "training_16bit", "inference_16bit")
    if both is None:
        return []
    features = (
        spec_features(gpus)
        .select("gpu_id", all=pl.lit("all"))
        .join(spec_features(gpus).select("gpu_id", "vendor", "architecture"), on="gpu_id")
        .select("gpu_id", *INFERENCE_16BIT_LEVELS)
    )
    family = {r[0]: tuple(r[1:]) for r in features.iter_rows()}
    ratio = {
        g: float(np.log(i / t))
        for g, t, i in both.select("gpu_id", "training_16bit", "inference_16bit").iter_rows()
    }
    errors: dict[str, float] = {}
    for g, own in ratio.items():
        others = [(x, family[h]) for h, x in ratio.items() if h != g]
        if len(others) < 3:
            continue
        pooled = pooled_ratio(others, family[g])
        errors[g] = abs(float(np.exp(pooled - own)) - 1)
    if not errors:
        return []
    values = np.array(list(errors.values()))
    median, p90 = float(np.median(values)), float(np.quantile(values, 0.9))
    detail = (
        f"16-bit inference of {len(errors)} GPUs measured in both workloads "
        f"({', '.join(sorted(errors))}), each predicted as its training value times the "
        f"pooled inference/training ratio of the others (all GPUs, vendor, then "
        f"architecture, a level with fewer than two GPUs skipped): "
        f"median absolute error "
        f"{_pct(median)}, 90th percentile {_pct(p90)}. This is how unmeasured GPUs get "
        f"their inference value."
    )
    return [
        _row("inference_bridge_logo", "training x pooled ratio", "median_ape", median, detail,
             n=len(errors)),
        _row("inference_bridge_logo", "training x pooled ratio", "p90_ape", p90, detail,
             n=len(errors)),
    ]  # fmt: skip


def eight_bit_checks(
    debiased: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    relative: pl.DataFrame | None = None,
) -> list[dict]:
    """How well the 8-bit tensor-rate rule predicts measured 8-bit inference.

    For every GPU measured in both 16-bit and 8-bit inference (never the reference, 1 in
    both by definition), the rule's prediction is its measured 16-bit value x its 8-bit
    tensor speedup / the reference's (eight_bit_speedup); the error is against its
    measured 8-bit value (MLPerf INT8/FP8 class, NVIDIA's INT8 tables). `relative` as in
    inference_bridge_checks.
    """
    relative = relative if relative is not None else _relative(debiased, gpus, params)
    if relative is None:
        return []
    both = measured_in_both(relative, params.reference_gpu, "inference_16bit", "inference_8bit")
    if both is None:
        return []
    speed = dict(eight_bit_speedup(gpus).select("gpu_id", "speedup").iter_rows())
    ref_speed = speed[params.reference_gpu]
    errors = {
        g: abs(i16 * speed[g] / ref_speed / i8 - 1)
        for g, i16, i8 in both.select("gpu_id", "inference_16bit", "inference_8bit").iter_rows()
    }
    if not errors:
        return []
    median = float(np.median(list(errors.values())))
    detail = (
        f"8-bit inference of {len(errors)} GPUs measured in both precisions "
        f"({', '.join(sorted(errors))}) predicted by the tensor-rate rule from their 16-bit "
        f"value: median absolute error {_pct(median)}. This is how GPUs without an 8-bit "
        "result get their base before the bridge."
    )
    return [_row("eight_bit_rule", "16-bit x 8-bit tensor speedup", "median_ape", median,
                 detail, n=len(errors))]  # fmt: skip


# --- A100 versus V100 -----------------------------------------------------------------------


def _speedup(debiased: pl.DataFrame, cls: str) -> tuple[float | None, float | None, float | None]:
    rows = debiased.filter(
        (pl.col("workload") == "training_16bit") & (pl.col("workload_class") == cls)
    ).select(
        "gpu_id",
        "throughput_per_gpu",
        table=pl.concat_str(
            "source", "software_era", "citation", "model", "precision", separator="|"
        ),
    )
    fit = fit_log_performance(rows, V100)
    p = {r["gpu_id"]: r for r in fit.iter_rows(named=True)}
    if A100 not in p or V100 not in p or p[A100]["component"] != p[V100]["component"]:
        return None, None, None
    diff = p[A100]["log_perf"] - p[V100]["log_perf"]
    se, df = p[A100]["log_se"], p[A100]["df"]
    if se is None or df < 1:
        return float(np.exp(diff)), None, None
    half = t975(df) * se
    return float(np.exp(diff)), float(np.exp(diff - half)), float(np.exp(diff + half))


def _per_table(debiased: pl.DataFrame, cls: str) -> str:
    """Direct A100/V100 ratios in tables that measured both (geometric mean per table)."""
    rows = debiased.filter(
        (pl.col("workload") == "training_16bit") & (pl.col("workload_class") == cls)
    ).filter(pl.col("gpu_id").is_in([A100, V100]))
    per = (
        rows.group_by("era_term", "gpu_id")
        .agg(pl.col("throughput_per_gpu").log().mean())
        .pivot(on="gpu_id", index="era_term", values="throughput_per_gpu")
    )
    if A100 not in per.columns or V100 not in per.columns:
        return "no table measured both GPUs"
    per = per.drop_nulls().with_columns(ratio=(pl.col(A100) - pl.col(V100)).exp()).sort("era_term")
    if per.is_empty():
        return "no table measured both GPUs"
    return "; ".join(
        f"{t.split('|')[0]} {t.split('|')[1]} {t.split('|')[3]} {r:.2f}x"
        for t, r in zip(per["era_term"], per["ratio"], strict=True)
    )


def a100_v100_checks(
    results: pl.DataFrame, gpus: pl.DataFrame, params: ModelParameters, run_date: dt.date
) -> list[dict]:
    """Debiased A100 SXM4 40GB / V100 SXM2 16GB 16-bit training speedups per class."""
    variants = {
        "speedup": params,
        "speedup_dettmers_constants": dataclasses.replace(params, constants="dettmers"),
        "speedup_fitted_constants": dataclasses.replace(params, constants="fitted"),
        "speedup_no_batch_correction": dataclasses.replace(
            params,
            constants="dettmers",
            batch_gain_per_doubling={k: 0.0 for k in params.batch_gain_per_doubling},
        ),
    }
    debiased = {
        metric: debias(results, p, run_date, fit_constants(results, gpus, p), gpus)
        for metric, p in variants.items()
    }
    out = []
    for cls, dettmers in DETTMERS_A100_V100.items():
        speeds = {metric: _speedup(d, cls) for metric, d in debiased.items()}
        tables = _per_table(debiased["speedup"], cls)
        n = (
            debiased["speedup"]
            .filter(
                (pl.col("workload") == "training_16bit")
                & (pl.col("workload_class") == cls)
                & pl.col("gpu_id").is_in([A100, V100])
            )
            .height
        )
        summary = ", ".join(
            f"{m.removeprefix('speedup').strip('_') or params.constants + ' (this run)'} "
            f"{'n/a' if s[0] is None else f'{s[0]:.2f}x'}"
            for m, s in speeds.items()
        )
        detail = (
            f"{cls} 16-bit training, A100 SXM4 40GB / V100 SXM2 16GB from the two-way fit over "
            f"{cls} tables (bridged through other GPUs), vs Dettmers' {dettmers:.2f}x. By "
            f"constants: {summary}. Tables measuring both (debiased, this run): {tables}."
        )
        for metric, (value, low, high) in speeds.items():
            out.append(
                _row(
                    "a100_vs_v100",
                    f"{cls} training: A100 SXM4 40GB / V100 SXM2 16GB",
                    metric,
                    value,
                    detail,
                    reference_value=dettmers,
                    value_low=low,
                    value_high=high,
                    n=n,
                )
            )
    return out


def model_validation(
    results: pl.DataFrame,
    gpus: pl.DataFrame,
    debiased: pl.DataFrame,
    constants: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    relative: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """All validation rows of one run (see the module docstring).

    `relative` is the run's stored relative performance (the pipeline passes its table, so
    the fit is not run again); computed from `debiased` when not given.
    """
    rows = batch_gain_checks(constants, params)
    rows += multi_gpu_checks(multi_gpu_predictions(results, gpus, params))
    rows += spec_estimator_checks(debiased, gpus, params.reference_gpu, params.benchmark_weights)
    if relative is None:
        relative = _relative(debiased, gpus, params)  # once, for both checks
    rows += inference_bridge_checks(debiased, gpus, params, relative)
    rows += eight_bit_checks(debiased, gpus, params, relative)
    rows += a100_v100_checks(results, gpus, params, run_date)
    frame = pl.DataFrame(
        [{k: r.get(k) for k in SCHEMA if k != "run_date"} for r in rows],
        schema={k: v for k, v in SCHEMA.items() if k != "run_date"},
    )
    return frame.with_columns(run_date=pl.lit(run_date)).select(list(SCHEMA))
