"""Model assets: thin wrappers around the pure Polars functions in `model`.

Every model table is keyed by `run_date` (the run's as-of date) and replaced as a whole for
that date, so reruns are idempotent and history stays queryable. `benchmark_debiased` stores
the run's parameters in `model_runs`; every other model asset fails if its own parameters
differ from them (common.require_run_parameters), so model_runs always describes the
tables of its run date. `common.model_step` is the preamble they share.
"""

import datetime as dt

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.cloud import cheapest_offers
from model.cloud import cloud_vs_buy as compute_cloud_vs_buy
from model.cloud_freshness import with_freshness
from model.cost import perf_per_dollar as compute_perf_per_dollar
from model.debias import (
    debias,
    lambda_bert_multi_gpu,
    mlperf_multi_node,
    rows_not_placing,
    select_comparable,
    without_launch_window,
)
from model.fit import fit_constants, mark_used
from model.performance import relative_performance as compute_relative_performance
from model.uncertainty import with_intervals
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.common import model_step
from pipeline.defs.model.inputs import bootstrap, run_efficiencies, run_resale
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from warehouse.reads import read_latest_offers, read_latest_prices


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    # cloud_integrity: its blocking check stops the model when a cloud night was refused.
    deps=["benchmark_results", "gpus", "gpu_prices_daily", "cloud_offers", "cloud_integrity"],
    description=(
        "One row per benchmark figure the model uses, with its batch-size and multi-GPU "
        "correction factors, the constants applied and the resulting per-GPU throughput; "
        "also writes model_constants (Dettmers' and fitted constants with 95 % intervals)."
    ),
)
def benchmark_debiased(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Fit the debiasing constants, then debias benchmark results with the chosen set."""
    # It stores the run's parameters (model_runs), so it is the one asset not checked
    # against them.
    with model_step(context, settings, warehouse, check_parameters=False) as step:
        run_date, params = step.run_date, step.params
        results = step.read_all("benchmark_results")
        catalog = step.read_all("gpus")
        constants = fit_constants(results, catalog, params)
        rows = debias(results, params, run_date, constants, catalog)
        comparable = select_comparable(results, params.mlperf_max_gpus)
        dated = without_launch_window(comparable, catalog, params.launch_window_days)
        constants = mark_used(constants, rows, params.constants, params.system_sizes).with_columns(
            run_date=pl.lit(run_date)
        )
        step.write("benchmark_debiased", rows)
        step.write("model_constants", constants)
        step.write(
            "model_runs",
            pl.DataFrame(
                {
                    "run_date": [run_date],
                    "created_at": [dt.datetime.now(dt.UTC).replace(tzinfo=None)],
                    "reference_gpu": [params.reference_gpu],
                    "parameters": [params.to_json()],
                }
            ),
        )
    fitted_used = constants.filter(pl.col("used") & (pl.col("parameter_set") == "fitted"))
    return step.result(
        f"{rows.height} of {results.height} rows",
        of_results=results.height,
        constants=params.constants,
        fitted_constants_used=", ".join(fitted_used["name"] + " " + fitted_used["key"]),
        # MLPerf systems beyond one node (left out; methodology §3).
        rows_mlperf_multi_node=mlperf_multi_node(results, params.mlperf_max_gpus),
        # Figures from their GPU's launch window (left out; debias.launch_window).
        rows_launch_window=comparable.height - dated.height,
        # Comparable rows whose GPU count has no efficiency constant (left out).
        rows_without_efficiency=dated.height - rows.height,
        # tinygrad or constrained-host figures: kept in benchmark_results, never placing a
        # GPU (model/evidence.py).
        rows_not_placing=rows_not_placing(results),
        # Lambda's multi-GPU BERT/SQuAD figures (super-linear; debias.select_comparable).
        rows_lambda_bert_multi_gpu=lambda_bert_multi_gpu(results),
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[benchmark_debiased, "gpus"],
    description=(
        "One row per GPU x workload (training_16bit, inference_16bit, inference_8bit): "
        "performance relative to the reference GPU, measured or estimated from specs, "
        "with a 95 % interval (value_low, value_high, interval_method)."
    ),
)
def relative_performance(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Relative performance per workload."""
    with model_step(context, settings, warehouse) as step:
        rows = compute_relative_performance(
            step.read("benchmark_debiased"), step.read_all("gpus"), step.params, step.run_date
        )
        step.write("relative_performance", rows)
    measured = rows.filter(pl.col("method") == "measured")
    evidence = rows.group_by("workload", "evidence").len().sort("workload", "evidence")
    return step.result(
        measured=measured.height,
        reference_gpu=step.params.reference_gpu,
        # e.g. "inference_16bit measured 14, inference_16bit bridged 48, ..."
        evidence=", ".join(f"{w} {e} {n}" for w, e, n in evidence.iter_rows()),
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[relative_performance, "current_prices"],
    description=(
        "One row per GPU x workload x system size (1, 2, 4, 8) x market (new, used, mean): "
        "total cost of ownership, relative performance per dollar, its bootstrap 95 % "
        "interval and the probability of being in the workload's top 3."
    ),
)
def perf_per_dollar(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Performance per dollar with total cost of ownership."""
    with model_step(context, settings, warehouse) as step:
        con, run_date, params = step.con, step.run_date, step.params
        relative = step.read("relative_performance")
        catalog = step.read_all("gpus")
        rows = with_intervals(
            compute_perf_per_dollar(
                relative,
                read_latest_prices(con, run_date),
                catalog,
                params,
                run_date,
                run_efficiencies(con, run_date, params),
                run_resale(con, run_date),
            ),
            bootstrap(con, run_date, params),
        )
        step.write("perf_per_dollar", rows)
    return step.result(
        priced_gpus=rows["gpu_id"].n_unique(), bootstrap_replicates=params.bootstrap_replicates
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    # benchmark_debiased: it stores the run's parameters in model_runs, checked here.
    deps=[benchmark_debiased, "cloud_offers", "current_prices", "gpus"],
    description=(
        "One row per GPU x provider x price type x utilisation: days after which buying a "
        "1-GPU system is cheaper than renting that GPU."
    ),
)
def cloud_vs_buy(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Break-even days of buying versus renting."""
    with model_step(context, settings, warehouse) as step:
        con, run_date = step.con, step.run_date
        offers = with_freshness(
            read_latest_offers(con, run_date), step.params.cloud_freshness_days, run_date
        )
        catalog = step.read_all("gpus")
        rows = compute_cloud_vs_buy(
            offers,
            read_latest_prices(con, run_date),
            catalog,
            step.params,
            run_date,
            run_resale(con, run_date),
        )
        # Flag each row's offer (the same pick: fresh first, then cheapest); stale rows
        # stay, with fresh false (model/cloud_freshness.py).
        keys = ["gpu_id", "provider", "price_type"]
        flags = cheapest_offers(offers).select(*keys, "pricing", "offer_age_days", "fresh")
        step.write("cloud_vs_buy", rows.join(flags, on=keys, how="left"))
    return step.result(gpus=rows["gpu_id"].n_unique())
