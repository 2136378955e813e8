"""The one step that makes daily prices, shared by the nightly and the history loads.

`price_observations`' nightly partition and the curated history backfill
(`pipeline/defs/ingest/history.py`) both call it, so neither asset module imports the
other's helpers.
"""

import datetime as dt

import duckdb
import polars as pl

from model.prices import daily_prices, drop_counts
from warehouse.db import replace_rows


def refresh_daily_prices(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date, mad_k: float
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recompute gpu_prices_daily and price_drops for the days first..last from every source.

    The one place daily prices are made: a night's partition and a history backfill both
    call it, so a day's price is the median over all its observations whoever loaded them.
    Returns the rows written (daily prices, drop counts).
    """
    # A range on the column itself (not on a cast of it) lets DuckDB skip every row group
    # outside the days by its min/max, so a night reads its day, not the history.
    observations = con.sql(
        "SELECT * FROM price_observations WHERE observed_at >= ? "
        "AND observed_at < ? + INTERVAL 1 DAY",
        params=[first, last],
    ).pl()
    rows = daily_prices(observations.filter(pl.col("drop_reason").is_null()), mad_k)
    drops = drop_counts(observations, mad_k)
    replace_rows(con, "gpu_prices_daily", rows, "day BETWEEN ? AND ?", [first, last])
    replace_rows(con, "price_drops", drops, "day BETWEEN ? AND ?", [first, last])
    return rows, drops
