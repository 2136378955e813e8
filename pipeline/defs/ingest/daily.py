"""The one step that makes daily prices, shared by the nightly and the history loads.

`price_observations`' nightly partition and the curated history backfill
(`pipeline/defs/ingest/history.py`) both call it, so neither asset module imports the
other's helpers.
"""

import datetime as dt
from collections.abc import Iterator

import duckdb
import polars as pl

from model.prices import daily_prices, drop_counts
from warehouse.db import replace_rows


def month_chunks(first: dt.date, last: dt.date) -> Iterator[tuple[dt.date, dt.date]]:
    """first..last cut at month ends: (first day, last day) of each piece, in order."""
    start = first
    while start <= last:
        next_month = (start.replace(day=1) + dt.timedelta(days=32)).replace(day=1)
        end = min(next_month - dt.timedelta(days=1), last)
        yield start, end
        start = end + dt.timedelta(days=1)


# Observations read at once when a range is refreshed in pieces (~0.6 KB each in memory as
# a Polars frame with its strings, so ~600 MB): the bundled snapshot's whole history is one
# piece, a reload over 10 years of nightly history ~40.
CHUNK_ROWS = 1_000_000


def batched(
    months: list[tuple[dt.date, dt.date, int]], max_rows: int
) -> list[tuple[dt.date, dt.date]]:
    """Consecutive months joined into pieces of at most `max_rows` observations.

    `months`: (first day, last day, observations) in order; a month over the limit is a
    piece of its own.
    """
    pieces: list[tuple[dt.date, dt.date]] = []
    start, end, total = None, None, 0
    for first, last, rows in months:
        if start is not None and total + rows > max_rows:
            pieces.append((start, end))
            start, total = None, 0
        start = first if start is None else start
        end, total = last, total + rows
    if start is not None:
        pieces.append((start, end))
    return pieces


def _pieces(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date
) -> list[tuple[dt.date, dt.date]]:
    """first..last in pieces of whole months of at most CHUNK_ROWS observations."""
    months = list(month_chunks(first, last))
    if len(months) <= 1:
        return months or [(first, last)]
    counts = dict(
        con.sql(
            "SELECT CAST(date_trunc('month', observed_at) AS DATE), count(*) "
            "FROM price_observations WHERE observed_at >= ? AND observed_at < ? + INTERVAL 1 DAY "
            "GROUP BY ALL",
            params=[first, last],
        ).fetchall()
    )
    return batched([(a, b, counts.get(a.replace(day=1), 0)) for a, b in months], CHUNK_ROWS)


def refresh_daily_prices(
    con: duckdb.DuckDBPyConnection, first: dt.date, last: dt.date, mad_k: float
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recompute gpu_prices_daily and price_drops for the days first..last from every source.

    The one place daily prices are made: a night's partition and a history backfill both
    call it, so a day's price is the median over all its observations whoever loaded them.
    Returns the rows written (daily prices, drop counts).

    A day's price and drops depend on that day's observations only, so a long range is
    refreshed in pieces of whole months of at most CHUNK_ROWS observations: memory stays
    bounded whatever the range (a reload of the curated history spans years; over 10 years
    of nightly observations one read of the whole range took the process past 23 GB), and a
    short history is still one read (one read per month made the bundled snapshot's ~100
    months ~15 s slower).
    """
    daily, dropped = [], []
    for start, end in _pieces(con, first, last):
        # A range on the column itself (not on a cast of it) lets DuckDB skip every row
        # group outside the days by its min/max, so a night reads its day, not the history.
        observations = con.sql(
            "SELECT * FROM price_observations WHERE observed_at >= ? "
            "AND observed_at < ? + INTERVAL 1 DAY",
            params=[start, end],
        ).pl()
        rows = daily_prices(observations.filter(pl.col("drop_reason").is_null()), mad_k)
        drops = drop_counts(observations, mad_k)
        del observations
        replace_rows(con, "gpu_prices_daily", rows, "day BETWEEN ? AND ?", [start, end])
        replace_rows(con, "price_drops", drops, "day BETWEEN ? AND ?", [start, end])
        daily.append(rows)
        dropped.append(drops)
    return pl.concat(daily), pl.concat(dropped)
