"""Model assets: thin wrappers around the pure Polars functions in `pipeline.model`.

Every model table is keyed by `run_date` (the run's as-of date) and replaced as a whole for
that date, so reruns are idempotent and history stays queryable. `benchmark_debiased` stores
the run's parameters in `model_runs`; every other model asset fails if its own parameters
differ from them (decisions.require_run_parameters), so model_runs always describes the
tables of its run date.
"""

import datetime as dt

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.model.decisions import (
    bootstrap,
    read_all,
    read_for_run,
    read_latest_offers,
    read_latest_prices,
    require_run_parameters,
    run_efficiencies,
)
from pipeline.defs.resources import (
    WAREHOUSE_POOL,
    GpuvalueSettings,
    open_warehouse,
    run_date_for,
)
from pipeline.model.cloud import cloud_vs_buy as compute_cloud_vs_buy
from pipeline.model.cost import perf_per_dollar as compute_perf_per_dollar
from pipeline.model.debias import (
    debias,
    lambda_bert_multi_gpu,
    mlperf_multi_node,
    select_comparable,
    without_launch_window,
)
from pipeline.model.fit import fit_constants, mark_used
from pipeline.model.performance import relative_performance as compute_relative_performance
from pipeline.model.uncertainty import with_intervals
from warehouse.db import replace_rows

KINDS = {"duckdb", "polars"}


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["benchmark_results", "gpus", "gpu_prices_daily", "cloud_offers"],
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
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        results = read_all(con, "benchmark_results")
        catalog = read_all(con, "gpus")
        constants = fit_constants(results, catalog, params)
        rows = debias(results, params, run_date, constants, catalog)
        comparable = select_comparable(results, params.mlperf_max_gpus)
        dated = without_launch_window(comparable, catalog, params.launch_window_days)
        constants = mark_used(constants, rows, params.constants, params.system_sizes).with_columns(
            run_date=pl.lit(run_date)
        )
        replace_rows(con, "benchmark_debiased", rows, "run_date = ?", [run_date])
        replace_rows(con, "model_constants", constants, "run_date = ?", [run_date])
        replace_rows(
            con,
            "model_runs",
            pl.DataFrame(
                {
                    "run_date": [run_date],
                    "created_at": [dt.datetime.now(dt.UTC).replace(tzinfo=None)],
                    "reference_gpu": [params.reference_gpu],
                    "parameters": [params.to_json()],
                }
            ),
            "run_date = ?",
            [run_date],
        )
    context.log.info(f"benchmark_debiased {run_date}: {rows.height} of {results.height} rows")
    fitted_used = constants.filter(pl.col("used") & (pl.col("parameter_set") == "fitted"))
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "rows": rows.height,
            "of_results": results.height,
            "constants": params.constants,
            "fitted_constants_used": ", ".join(fitted_used["name"] + " " + fitted_used["key"]),
            # MLPerf systems beyond one node (left out; methodology §3).
            "rows_mlperf_multi_node": mlperf_multi_node(results, params.mlperf_max_gpus),
            # Figures from their GPU's launch window (left out; debias.launch_window).
            "rows_launch_window": comparable.height - dated.height,
            # Comparable rows whose GPU count has no efficiency constant (left out).
            "rows_without_efficiency": dated.height - rows.height,
            # Lambda's multi-GPU BERT/SQuAD figures (super-linear; debias.select_comparable).
            "rows_lambda_bert_multi_gpu": lambda_bert_multi_gpu(results),
        }
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
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        require_run_parameters(con, run_date, params)
        debiased = read_for_run(con, "benchmark_debiased", run_date)
        catalog = read_all(con, "gpus")
        rows = compute_relative_performance(debiased, catalog, params, run_date)
        replace_rows(con, "relative_performance", rows, "run_date = ?", [run_date])
    measured = rows.filter(pl.col("method") == "measured")
    evidence = rows.group_by("workload", "evidence").len().sort("workload", "evidence")
    context.log.info(f"relative_performance {run_date}: {rows.height} rows")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "dagster/row_count": rows.height,
            "measured": measured.height,
            "reference_gpu": params.reference_gpu,
            # e.g. "inference_16bit measured 14, inference_16bit bridged 48, ..."
            "evidence": ", ".join(f"{w} {e} {n}" for w, e, n in evidence.iter_rows()),
        }
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
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        require_run_parameters(con, run_date, params)
        relative = read_for_run(con, "relative_performance", run_date)
        catalog = read_all(con, "gpus")
        rows = with_intervals(
            compute_perf_per_dollar(
                relative,
                read_latest_prices(con, run_date),
                catalog,
                params,
                run_date,
                run_efficiencies(con, run_date, params),
            ),
            bootstrap(con, run_date, params),
        )
        replace_rows(con, "perf_per_dollar", rows, "run_date = ?", [run_date])
    context.log.info(f"perf_per_dollar {run_date}: {rows.height} rows")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "rows": rows.height,
            "priced_gpus": rows["gpu_id"].n_unique(),
            "bootstrap_replicates": params.bootstrap_replicates,
        }
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
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        require_run_parameters(con, run_date, params)
        offers = read_latest_offers(con, run_date)
        catalog = read_all(con, "gpus")
        rows = compute_cloud_vs_buy(
            offers, read_latest_prices(con, run_date), catalog, params, run_date
        )
        replace_rows(con, "cloud_vs_buy", rows, "run_date = ?", [run_date])
    context.log.info(f"cloud_vs_buy {run_date}: {rows.height} rows")
    return dg.MaterializeResult(
        metadata={"run_date": str(run_date), "rows": rows.height, "gpus": rows["gpu_id"].n_unique()}
    )
