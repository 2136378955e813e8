"""Inputs several model assets share: multi-GPU efficiencies, resale basis, price bootstrap.

All three are read from the warehouse and computed by `model`.

The bootstrap draws are recomputed where needed instead of stored: they are seeded, cheap
(well under a second on the bundled snapshot) and would otherwise add ~10^5 rows per run.
`perf_per_dollar` draws them for its intervals and `decisions` once for both the
recommendations and the verdicts.
"""

import datetime as dt

import duckdb
import polars as pl

from model.fit import efficiency_table
from model.parameters import ModelParameters
from model.resale import (
    fit_retention,
    resale_basis,
    retention_points,
    segment_trends,
    used_new_step,
)
from model.uncertainty import perf_per_dollar_replicates
from warehouse.reads import (
    read_all,
    read_for_run,
    read_latest_prices,
    read_monthly_series,
    read_price_observations,
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


def run_resale(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """The resale basis (resale.resale_basis) of every GPU x market priced for the run.

    Fitted from the monthly used prices up to the run date (the same aggregate the nowcast
    reads), so perf_per_dollar, its bootstrap, the sensitivity and cloud_vs_buy all count
    the same resale value.
    """
    monthly = read_monthly_series(con, run_date)
    gpus = read_all(con, "gpus")
    fits = fit_retention(retention_points(monthly, gpus), segment_trends(monthly, gpus))
    return resale_basis(read_latest_prices(con, run_date), gpus, fits, used_new_step(monthly))


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
        run_resale(con, run_date),
    )
