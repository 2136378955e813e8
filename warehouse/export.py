"""The warehouse snapshot a release holds: Parquet files and a read-only DuckDB file.

    published/
      gpuvalue.duckdb                        small tables + one view per month-partitioned table
      parquet/<table>.parquet                small tables, rewritten by every release
      parquet/<table>/<YYYY-MM>.parquet      dated tables, one file per month

Every base table of the warehouse except the pipeline's own bookkeeping (`INTERNAL_TABLES`)
is exported. A release writes the Parquet partitions the run changed; the others are hard
links to the previous release's files, so a night writes O(new data). The new DuckDB file's
month-partitioned tables are views over those files, by paths relative to the folder
(`parquet/<table>/*.parquet`), so the folder works wherever it is copied. DuckDB resolves
a relative path against the reader's `file_search_path`, then its working directory, never
against the database file: `open_published` sets that path to the folder it opens (resolved
once, so a connection reads one release's files however long it lives).

Which months changed comes from `publish_changes`, which `warehouse.db.replace_rows` writes
in each load's own transaction; a month whose row count differs from the previous release
is rewritten too, so a write that bypassed the log still reaches the snapshot.
"""

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.db import INTERNAL_TABLES, month_sql, partition_column
from warehouse.release import Release, Tally

DATABASE = "gpuvalue.duckdb"
# What a reader who opens the file by hand needs to know (shown by duckdb_views()).
VIEW_COMMENT = (
    "Parquet under parquet/, relative to this database file's folder: open it with "
    "warehouse.export.open_published, or from that folder, or SET file_search_path to it"
)
_PARQUET = "(FORMAT parquet, COMPRESSION zstd)"


def row_counts_of(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Rows of one table or view."""
    return con.sql(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]


def parquet_files(out_dir: str | Path, table: str) -> list[Path]:
    """The published Parquet files of one table: `<table>.parquet`, or its month files."""
    parquet = Path(out_dir) / "parquet"
    whole = parquet / f"{table}.parquet"
    return [whole] if whole.is_file() else sorted((parquet / table).glob("*.parquet"))


def open_published(out_dir: str | Path) -> duckdb.DuckDBPyConnection:
    """Open the published snapshot in `out_dir` read-only, its views reading the Parquet there.

    `out_dir` is resolved once (`warehouse/published` is a link to the current release), so
    the DuckDB file and the Parquet its views read come from the same release for the whole
    life of the connection, even after later publishes move the link. The search path is
    the connection's own (a session setting): other connections are not affected.
    """
    folder = Path(out_dir).resolve()
    path = folder / DATABASE
    if not path.exists():
        raise FileNotFoundError(f"no published warehouse at {path}: run `make run` first")
    con = duckdb.connect(str(path), read_only=True)
    try:
        con.sql(f"SET file_search_path = {search_path(folder)}")
    except BaseException:
        con.close()
        raise
    return con


def search_path(folder: Path) -> str:
    """`folder` as a quoted `file_search_path` value (a comma-separated list in DuckDB)."""
    if "," in str(folder):
        raise ValueError(
            f"the published folder {folder} has a comma in its path, which DuckDB's "
            "file_search_path (a comma-separated list) cannot hold: move or link it elsewhere"
        )
    return _quote_path(folder)


# --- the change log ------------------------------------------------------------------------


def logged_changes(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, set], int | None]:
    """Months each table's loads touched since the last publish, and the last log entry."""
    exists = con.sql(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_name = 'publish_changes'"
    ).fetchall()[0][0]
    if not exists:
        return {}, None
    rows = con.sql("SELECT seq, table_name, month FROM publish_changes").fetchall()
    changes: dict[str, set] = {}
    for _, table, month in rows:
        changes.setdefault(table, set()).add(month)
    return changes, max((seq for seq, _, _ in rows), default=0)


def clear_changes(con: duckdb.DuckDBPyConnection, last_seq: int) -> None:
    """Forget the log entries a committed release consumed (up to `last_seq`)."""
    con.sql("DELETE FROM publish_changes WHERE seq <= ?", params=[last_seq])


# --- Parquet -------------------------------------------------------------------------------


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[list[str]]:
    return [
        list(r)
        for r in con.sql(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
            params=[table],
        ).fetchall()
    ]


def _quote_path(path: Path | str) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _exported_tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every base table of the warehouse but its internal bookkeeping, by name."""
    return [
        name
        for (name,) in con.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall()
        if name not in INTERNAL_TABLES
    ]


def _sort_order(names: list[str], column: str | None) -> str:
    """ORDER BY of a table's rows: gpu_id, then the partition column, then the rest."""
    first = (["gpu_id"] if "gpu_id" in names else []) + ([column] if column else [])
    return ", ".join(f'"{c}"' for c in dict.fromkeys(first + names))


def _month_where(column: str, month: dt.date | None) -> str:
    """SQL selecting one month's rows (or the undated ones) of a dated table."""
    if month is None:
        return f'"{column}" IS NULL'
    return f"\"{column}\" >= DATE '{month}' AND \"{column}\" < DATE '{month}' + INTERVAL 1 MONTH"


@dataclass(frozen=True)
class _Writer:
    """Where a release's Parquet goes, what it counts, and the step a failure names."""

    con: duckdb.DuckDBPyConnection
    parquet: Path  # the release's published/parquet/
    tally: Tally
    step: list[str]  # step[0]: what is being written, for the message of a failed publish

    def copy(self, select: str, path: Path) -> None:
        """Write the rows of `select` to the Parquet file `path`."""
        self.step[0] = f"writing {path.relative_to(self.parquet.parent.parent)}"
        self.con.sql(f"COPY ({select}) TO {_quote_path(path)} {_PARQUET}")
        self.tally.wrote(path)


def export_tables(
    con: duckdb.DuckDBPyConnection,
    staged: Path,
    previous: Release | None,
    changes: dict[str, set],
    full: bool,
    tally: Tally,
    step: list[str],
) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Write (or link) every table's Parquet; returns the manifest's tables and what was written.

    A whole table is one file, rewritten. A dated table is one file per month, sorted by
    gpu_id and date (so a reader's filter on either skips most row groups); a month is
    rewritten when a load touched it, its row count changed or the table's columns changed,
    and otherwise linked from the previous release. `step[0]` says what is being written,
    for the message of a publish that fails.
    """
    out = _Writer(con, staged / "published" / "parquet", tally, step)
    out.parquet.mkdir(parents=True)
    before = previous.manifest.get("tables", {}) if previous else {}
    manifest: dict[str, dict] = {}
    written: dict[str, list[str]] = {}
    for table in _exported_tables(con):
        columns = _columns(con, table)
        column = partition_column(table, [c for c, _ in columns])
        if column is None:
            manifest[table] = _export_whole(out, table, columns)
            written[table] = ["whole"]
            continue
        old = before.get(table, {})
        reusable = (
            not full
            and previous is not None
            and old.get("layout") == "monthly"
            and old.get("column") == column
            and old.get("columns") == columns
        )
        reuse = (previous, old) if reusable else None
        manifest[table], months = _export_monthly(
            out, table, columns, column, reuse, changes.get(table, set())
        )
        if months:
            written[table] = months
    return manifest, written


def _export_whole(out: _Writer, table: str, columns: list[list[str]]) -> dict:
    """Write a small table as one Parquet file; returns its manifest entry."""
    path = out.parquet / f"{table}.parquet"
    order = _sort_order([c for c, _ in columns], None)
    out.copy(f'SELECT * FROM "{table}" ORDER BY {order}', path)
    return {
        "layout": "whole",
        "columns": columns,
        "rows": row_counts_of(out.con, table),
        "file": f"published/parquet/{path.name}",
    }


def _export_monthly(
    out: _Writer,
    table: str,
    columns: list[list[str]],
    column: str,
    reuse: tuple[Release, dict] | None,
    touched: set,
) -> tuple[dict, list[str]]:
    """Write a dated table one file per month, linking the months the previous release has.

    `reuse` is the previous release and its manifest entry for `table`, or None when none
    of its files can be reused. Returns the manifest entry and the months written.
    """
    order = _sort_order([c for c, _ in columns], column)
    folder = out.parquet / table
    folder.mkdir()
    previous, old = reuse if reuse is not None else (None, None)
    kept_partitions = old.get("partitions", {}) if old is not None else {}
    partitions = {}
    written = []
    for month, rows in _month_counts(out.con, table, column, old, touched):
        key = month.strftime("%Y-%m") if month else "undated"
        path = folder / f"{key}.parquet"
        kept = kept_partitions.get(key)
        if (
            kept
            and kept["rows"] == rows
            and month not in touched
            and (previous.path / kept["file"]).is_file()
        ):
            out.tally.link(previous.path / kept["file"], path)
        else:
            select = f'SELECT * FROM "{table}" WHERE {_month_where(column, month)} ORDER BY {order}'
            out.copy(select, path)
            written.append(key)
        partitions[key] = {"rows": rows, "file": f"published/parquet/{table}/{path.name}"}
    entry = {
        "layout": "monthly",
        "column": column,
        "columns": columns,
        "rows": sum(p["rows"] for p in partitions.values()),
        "partitions": partitions,
    }
    return entry, written


def _month_counts(
    con: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    old: dict | None,
    touched: set,
) -> list[tuple[dt.date | None, int]]:
    """Rows per month of `table`, reading only the months the loads touched when it can.

    The previous release's counts stand for the untouched months as long as the table's
    total agrees with them; when it does not (a write that bypassed the log), every month
    is counted again. So a night reads O(what it changed), plus one count(*).
    """
    if old is not None:
        before = {
            (dt.date.fromisoformat(f"{key}-01") if key != "undated" else None): p["rows"]
            for key, p in old.get("partitions", {}).items()
        }
        dated = sorted(m for m in touched if m is not None)
        ranges = [f"({_month_where(column, m)})" for m in dated] + (
            [_month_where(column, None)] if None in touched else []
        )
        counted = dict(
            con.sql(
                f'SELECT {month_sql(column)}, count(*) FROM "{table}" '
                f"WHERE {' OR '.join(ranges)} GROUP BY ALL"
            ).fetchall()
            if ranges
            else []
        )
        merged = {m: n for m, n in before.items() if m not in touched} | counted
        total = con.sql(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]
        if total == sum(merged.values()):
            return sorted(merged.items(), key=lambda kv: (kv[0] is None, kv[0] or dt.date.min))
    return con.sql(
        f'SELECT {month_sql(column)} AS month, count(*) FROM "{table}" GROUP BY ALL ORDER BY 1'
    ).fetchall()


# --- the DuckDB file -----------------------------------------------------------------------


def build_database(
    con: duckdb.DuckDBPyConnection, published: Path, tables: dict[str, dict], tally: Tally
) -> list[dict]:
    """The published DuckDB file: whole tables stored, dated tables as views over Parquet.

    Views name their Parquet by a path relative to `published` (`parquet/<table>/*.parquet`),
    never by where the build ran, so the folder can be copied or moved. DuckDB binds a view
    when it is created, so this connection searches `published` too. Why views and not
    tables stored in the file: docs/data.md (The published DuckDB). The pipeline's
    own views (e.g. gpu_price_history) are recreated on top. Returns the views, as in the
    manifest.
    """
    views = [
        {"name": name, "sql": sql}
        for name, sql in con.sql(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary "
            "AND schema_name = 'main' AND database_name = current_database() ORDER BY view_oid"
        ).fetchall()
    ]
    path = published / DATABASE
    out = duckdb.connect(str(path))
    try:
        out.sql(f"SET file_search_path = {search_path(published.resolve())}")
        for table, entry in tables.items():
            if entry["layout"] == "whole":
                source = _quote_path(Path(entry["file"]).relative_to("published").as_posix())
                out.sql(f'CREATE TABLE "{table}" AS SELECT * FROM read_parquet({source})')
            elif entry["partitions"]:
                files = _quote_path(f"parquet/{table}/*.parquet")
                out.sql(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet({files})')
                out.sql(f'COMMENT ON VIEW "{table}" IS {_quote_path(VIEW_COMMENT)}')
            else:
                columns = ", ".join(f'"{c}" {t}' for c, t in entry["columns"])
                out.sql(f'CREATE TABLE "{table}" ({columns})')
        for view in views:
            out.sql(view["sql"])
        out.sql("CHECKPOINT")
    finally:
        out.close()
    tally.wrote(path)
    return views


def run_date(con: duckdb.DuckDBPyConnection, tables: dict[str, dict]) -> dt.date | None:
    """The run date of the exported warehouse: the newest in `model_runs`, if exported."""
    if "model_runs" not in tables:
        return None
    return con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
