"""Inputs several model assets share: the run's multi-GPU efficiencies and price bootstrap.

Both are read from the warehouse and computed by `model`.

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
from model.uncertainty import perf_per_dollar_replicates
from warehouse.reads import read_all, read_for_run, read_latest_prices, read_price_observations


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
