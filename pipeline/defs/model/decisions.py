"""Decision assets: renting, sensitivity and recommendations (thin wrappers, methodology §6-9).

Like every model table, each is keyed by `run_date` and replaced as a whole for that date.
The bootstrap draws are recomputed where needed instead of stored: they are seeded, cheap
(well under a second on the bundled snapshot) and would otherwise add ~10^5 rows per run.
"""

import datetime as dt
import json

import dagster as dg
import duckdb
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.resources import (
    WAREHOUSE_POOL,
    GpuvalueSettings,
    open_warehouse,
    run_date_for,
)
from pipeline.model.cloud import cloud_perf_per_dollar as compute_cloud_perf_per_dollar
from pipeline.model.fit import efficiency_table
from pipeline.model.parameters import ModelParameters
from pipeline.model.recommendations import (
    buy_candidates,
    rent_candidates,
)
from pipeline.model.recommendations import recommendations as compute_recommendations
from pipeline.model.sensitivity import sensitivity as compute_sensitivity
from pipeline.model.uncertainty import (
    cloud_with_intervals,
    perf_per_dollar_replicates,
    performance_replicates,
)
from warehouse.db import replace_rows

KINDS = {"duckdb", "polars"}
SENSITIVITY_KEEP_DAYS = 31


def read_latest_prices(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Today's price per GPU x market for the run (the current_prices asset's rows)."""
    return read_for_run(con, "current_prices", run_date)


def read_price_observations(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """The usable observations behind the run's observed prices (their day, GPU, market).

    Only these feed the price bootstrap, so the read is bounded by the GPUs priced today,
    not by the length of the history.
    """
    return con.sql(
        "SELECT o.* FROM price_observations o JOIN current_prices c"
        " ON o.gpu_id = c.gpu_id AND o.market = c.market"
        " AND CAST(o.observed_at AS DATE) = c.price_day"
        " WHERE c.run_date = ? AND c.price_method = 'observed' AND c.market <> 'mean'"
        " AND o.drop_reason IS NULL",
        params=[run_date],
    ).pl()


def read_latest_offers(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Each provider's newest cloud snapshot on or before the run date (older is history)."""
    return con.sql(
        "SELECT * FROM cloud_offers c WHERE CAST(observed_at AS DATE) = ("
        " SELECT max(CAST(d.observed_at AS DATE)) FROM cloud_offers d"
        " WHERE d.provider = c.provider AND CAST(d.observed_at AS DATE) <= ?)",
        params=[run_date],
    ).pl()


def read_for_run(con: duckdb.DuckDBPyConnection, table: str, run_date: dt.date) -> pl.DataFrame:
    """A model table's rows for the run date, in a fixed order (see read_all)."""
    return con.sql(f"SELECT * FROM {table} WHERE run_date = ? ORDER BY ALL", params=[run_date]).pl()


def read_all(con: duckdb.DuckDBPyConnection, table: str) -> pl.DataFrame:
    """A whole (small) input table in a fixed order.

    The warehouse returns rows in no fixed order, and sums, least squares and group orders
    over permuted rows differ in their last bits: the model reads its inputs sorted so a
    rerun on the same inputs stores the same figures.
    """
    return con.sql(f"SELECT * FROM {table} ORDER BY ALL").pl()


def require_run_parameters(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, params: ModelParameters
) -> None:
    """Fail unless `params` are the parameters model_runs stores for the run date.

    benchmark_debiased writes model_runs; every other model asset reads tables computed
    with those parameters. Rerunning one of them alone with other parameters (run config or
    GPUVALUE_*) would store results model_runs does not describe, mixed with tables made
    under the stored ones, so it fails instead: rerun from benchmark_debiased (e.g. the
    whole model group) to change parameters.
    """
    stored = con.sql(
        "SELECT parameters FROM model_runs WHERE run_date = ?", params=[run_date]
    ).fetchall()
    if not stored:
        raise dg.Failure(
            f"model_runs has no row for {run_date}: materialize benchmark_debiased first "
            "(it stores the run's parameters)"
        )
    stored_params = json.loads(stored[0][0])
    current = json.loads(params.to_json())
    if stored_params != current:
        changed = sorted(
            k for k in stored_params.keys() | current.keys()
            if stored_params.get(k) != current.get(k)
        )  # fmt: skip
        raise dg.Failure(
            f"this run's model parameters differ from model_runs for {run_date} in "
            f"{', '.join(changed)}: the tables this asset reads were computed with the stored "
            "parameters. Rerun from benchmark_debiased (the whole model group) with the new "
            "parameters, or run with the stored ones.",
            metadata={"changed": ", ".join(changed)},
        )


def run_efficiencies(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, params: ModelParameters
) -> pl.DataFrame:
    """The multi-GPU efficiency per GPU count x interconnect the run's debiasing applied.

    Resolved from the run's model_constants by the same rule (fit.efficiency_table), so
    the cost model and the bootstrap never use another e_n than benchmark_debiased did.
    """
    constants = read_for_run(con, "model_constants", run_date)
    if constants.is_empty():
        raise ValueError(
            f"model_constants has no rows for {run_date}: materialize benchmark_debiased "
            "for this run date first (the cost model uses its multi-GPU efficiencies)"
        )
    return efficiency_table(constants, params.constants)


def bootstrap(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, params: ModelParameters
) -> pl.DataFrame:
    """Seeded bootstrap replicates of perf per dollar for the run (uncertainty.py)."""
    return perf_per_dollar_replicates(
        read_for_run(con, "relative_performance", run_date),
        read_latest_prices(con, run_date),
        read_price_observations(con, run_date),
        read_all(con, "gpus"),
        params,
        run_efficiencies(con, run_date, params),
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["relative_performance", "cloud_offers"],
    description=(
        "One row per GPU x workload x provider x price type: relative performance per "
        "rented dollar (per USD per GPU-hour) of the provider's cheapest offer, with a 95 % "
        "interval; price types are never averaged."
    ),
)
def cloud_perf_per_dollar(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Performance per rented dollar."""
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        require_run_parameters(con, run_date, params)
        relative = read_for_run(con, "relative_performance", run_date)
        rows = cloud_with_intervals(
            compute_cloud_perf_per_dollar(read_latest_offers(con, run_date), relative, run_date),
            performance_replicates(relative, params),
        )
        replace_rows(con, "cloud_perf_per_dollar", rows, "run_date = ?", [run_date])
    context.log.info(f"cloud_perf_per_dollar {run_date}: {rows.height} rows")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "rows": rows.height,
            "gpus": rows["gpu_id"].n_unique(),
            "providers": rows["provider"].n_unique(),
        }
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["relative_performance", "current_prices", "gpus"],
    description=(
        "One row per cost parameter x value x GPU x workload x system size x market: perf "
        "per dollar and its rank with that one parameter varied over its stated range, "
        "beside the rank at the run's settings."
    ),
)
def sensitivity(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Rank sensitivity to $/kWh, utilisation, years and host cost."""
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        require_run_parameters(con, run_date, params)
        rows = compute_sensitivity(
            read_for_run(con, "relative_performance", run_date),
            read_latest_prices(con, run_date),
            read_all(con, "gpus"),
            params,
            run_date,
            run_efficiencies(con, run_date, params),
        )
        # What-if rows are for reading today's answer, not history: only the run dates of
        # the last SENSITIVITY_KEEP_DAYS are kept, so the table does not grow by ~16,000
        # rows a night forever (each published site version keeps its own copy).
        replace_rows(
            con,
            "sensitivity",
            rows,
            "run_date = ? OR run_date < ?",
            [run_date, run_date - dt.timedelta(days=SENSITIVITY_KEEP_DAYS)],
        )
    moved = rows.filter(pl.col("rank_change") != 0) if rows.height else rows
    context.log.info(f"sensitivity {run_date}: {rows.height} rows, {moved.height} moved")
    return dg.MaterializeResult(
        metadata={"run_date": str(run_date), "rows": rows.height, "rank_moves": moved.height}
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["perf_per_dollar", "cloud_perf_per_dollar", "current_prices"],
    description=(
        "One row per workload x memory tier (>= 8, 12, 16, 24, 48, 80 GB) x option "
        "(buy_new, buy_used, rent, rent_spot): the best GPU with its 95 % interval, the "
        "probability it is the tier's best, and the runner-up."
    ),
)
def recommendations(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Best GPU to buy new, buy used or rent per workload and memory tier."""
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        require_run_parameters(con, run_date, params)
        buy = buy_candidates(
            read_for_run(con, "perf_per_dollar", run_date), bootstrap(con, run_date, params)
        )
        rent = rent_candidates(
            read_for_run(con, "cloud_perf_per_dollar", run_date),
            performance_replicates(read_for_run(con, "relative_performance", run_date), params),
        )
        rows = compute_recommendations(
            pl.concat([buy[0], rent[0]]),
            pl.concat([buy[1], rent[1]]),
            read_all(con, "gpus"),
            params.memory_tiers_gb,
            run_date,
        )
        replace_rows(con, "recommendations", rows, "run_date = ?", [run_date])
    context.log.info(f"recommendations {run_date}: {rows.height} rows")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "rows": rows.height,
            "bootstrap_replicates": params.bootstrap_replicates,
        }
    )
