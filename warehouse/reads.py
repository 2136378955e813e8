"""The warehouse reads more than one floor shares: read-only SQL returning Polars frames.

Model assets, asset checks, the site and the published downloads all read the same few
things (a model table for a run date, today's prices and offers, the price history by week
or month, the catalog's ids); they are written once here so each reads them the same way.
"""

import datetime as dt

import duckdb
import polars as pl


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


def catalog_ids(con: duckdb.DuckDBPyConnection) -> frozenset[str]:
    """The gpu_ids every other input must use."""
    ids = frozenset(r[0] for r in con.sql("SELECT gpu_id FROM gpus").fetchall())
    if not ids:
        raise ValueError("the gpus table is empty: materialize `gpus` first")
    return ids


def newest_observation_day(con: duckdb.DuckDBPyConnection) -> dt.date | None:
    """The newest day any price (retail or cloud) was observed."""
    # max() of the raw column, cast after: DuckDB answers it from row-group statistics
    # (26 ms over 50 M rows; casting every row first takes twice as long), and it is asked
    # once per step that resolves a run date.
    return con.sql(
        "SELECT CAST(max(d) AS DATE) FROM ("
        " SELECT max(observed_at) AS d FROM price_observations"
        " UNION ALL SELECT max(observed_at) FROM cloud_offers)"
    ).fetchall()[0][0]


def read_latest_prices(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Today's price per GPU x market for the run (the current_prices asset's rows)."""
    return read_for_run(con, "current_prices", run_date)


def read_price_observations(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """The usable observations behind the run's observed prices (their day, GPU, market).

    Only these feed the price bootstrap, so the read is bounded by the GPUs priced today,
    not by the length of the history. The days' range is passed as constants so DuckDB
    skips every row group outside it by its min/max (observations arrive in day order);
    a join alone would scan, and fetch every column of, the whole history.
    """
    observed = (
        "FROM current_prices c WHERE c.run_date = ? AND c.price_method = 'observed'"
        " AND c.market <> 'mean'"
    )
    first, last = con.sql(
        f"SELECT min(c.price_day), max(c.price_day) {observed}", params=[run_date]
    ).fetchall()[0]
    if first is None:
        return con.sql("SELECT * FROM price_observations LIMIT 0").pl()
    return con.sql(
        "SELECT o.* FROM price_observations o"
        f" SEMI JOIN (SELECT c.gpu_id, c.market, c.price_day {observed}) c"
        " ON o.gpu_id = c.gpu_id AND o.market = c.market"
        " AND CAST(o.observed_at AS DATE) = c.price_day"
        " WHERE o.drop_reason IS NULL"
        " AND o.observed_at >= ? AND o.observed_at < ? + INTERVAL 1 DAY",
        params=[run_date, first, last],
    ).pl()


def read_latest_offers(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Each provider's newest cloud snapshot on or before the run date (older is history).

    Read by most model assets and the site, so in two bounded steps rather than one
    correlated query over every offer ever kept: each provider's newest day (a max over
    two columns; the raw timestamp compared, never a cast of every row), then only the rows
    from the oldest of those days to the run date, a range DuckDB answers from the row
    groups' min/max (offers arrive in day order). Rows come in table order, as before.
    """
    newest = con.sql(
        "SELECT provider, CAST(max(observed_at) AS DATE) FROM cloud_offers"
        " WHERE observed_at < CAST(? AS DATE) + INTERVAL 1 DAY GROUP BY provider",
        params=[run_date],
    ).fetchall()
    if not newest:
        return con.sql("SELECT * FROM cloud_offers LIMIT 0").pl()
    providers, days = [p for p, _ in newest], [d for _, d in newest]
    return con.sql(
        "SELECT * FROM cloud_offers WHERE observed_at >= ?"
        " AND observed_at < CAST(? AS DATE) + INTERVAL 1 DAY AND CAST(observed_at AS DATE)"
        " = map_extract_value(MAP(?::VARCHAR[], ?::DATE[]), provider)",
        params=[min(days), run_date, providers, days],
    ).pl()


def read_latest_daily(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, list_sources: tuple[str, ...] = ()
) -> pl.DataFrame:
    """Each GPU x market x basis' newest robust daily price on or before the run date.

    `basis` is 'list' where every source of the day is one of `list_sources` (quoted list
    prices), else 'street'; the model chooses between the two (model/market_consistency.py).
    """
    return con.sql(
        "WITH d AS (SELECT *, CASE WHEN sources IS NOT NULL AND sources <> '' AND"
        " list_bool_and(list_transform(string_split(sources, ','),"
        " lambda s: list_contains(?, s)))"
        " THEN 'list' ELSE 'street' END AS basis FROM gpu_prices_daily WHERE day <= ?)"
        " SELECT gpu_id, market, day, price_usd, price_min_usd, price_max_usd, n_observations,"
        " sources, basis FROM d QUALIFY row_number() OVER"
        " (PARTITION BY gpu_id, market, basis ORDER BY day DESC) = 1"
        " ORDER BY gpu_id, market, basis",
        params=[list(list_sources), run_date],
    ).pl()


def read_listing_days(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Daily prices resting on two or more observations, up to the run date.

    What the pooled listing spread (model/price_uncertainty.listing_spreads) is estimated
    from: a bounded read (days with a single observation carry no spread and are most rows).
    """
    return con.sql(
        "SELECT day, gpu_id, market, n_observations, price_min_usd, price_max_usd, sources"
        " FROM gpu_prices_daily WHERE day <= ? AND n_observations >= 2"
        " ORDER BY gpu_id, market, day",
        params=[run_date],
    ).pl()


def read_weekly_history(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Each catalog GPU's price per market and week (`day` = the week's Monday).

    `price_usd` is the median of the week's robust daily prices, `n_observations` their
    listings, `days` the days with a price. The charts draw weeks or coarser steps, so the
    week is aggregated where the data is: the site reads O(GPUs x weeks), not every daily
    row of the history. GPUs no longer in the catalog have no page, so no chart either.
    """
    return con.sql(
        "SELECT gpu_id, market, CAST(date_trunc('week', day) AS DATE) AS day, "
        "median(price_usd) AS price_usd, CAST(sum(n_observations) AS BIGINT) AS "
        "n_observations, count(*) AS days FROM gpu_prices_daily "
        "WHERE day <= ? AND gpu_id IN (SELECT gpu_id FROM gpus) "
        "GROUP BY ALL ORDER BY gpu_id, market, day",
        params=[run_date],
    ).pl()


def read_monthly_series(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Monthly median price per GPU x market up to the run date, `t` its mean day in years.

    The same as nowcast.monthly_series, computed in DuckDB.
    """
    return con.sql(
        "SELECT gpu_id, market, CAST(date_trunc('month', day) AS DATE) AS month,"
        " median(price_usd) AS price_usd, avg(day - DATE '1970-01-01') / 365.25 AS t"
        " FROM gpu_prices_daily WHERE day <= ? GROUP BY ALL ORDER BY gpu_id, market, month",
        params=[run_date],
    ).pl()


def read_monthly_prices(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Each GPU's median daily price per market and month up to the run date.

    The `gpu_prices_monthly` download: the whole history in O(GPUs x months) rows.
    """
    return con.sql(
        "SELECT gpu_id, market, CAST(date_trunc('month', day) AS DATE) AS month, "
        "median(price_usd) AS price_usd, count(*) AS days, "
        "CAST(sum(n_observations) AS BIGINT) AS n_observations FROM gpu_prices_daily "
        "WHERE day <= ? "
        "GROUP BY ALL ORDER BY ALL",
        params=[run_date],
    ).pl()
