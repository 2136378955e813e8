"""Connect to the warehouse, apply numbered migrations, and load rows idempotently.

DuckDB allows one writer or many readers per file. The pipeline is the only writer of
`warehouse/gpuvalue.duckdb`; people query the published copy (see `warehouse.publish`).
"""

import re
from collections.abc import Sequence
from pathlib import Path

import duckdb
import polars as pl

SCHEMA_DIR = Path(__file__).parent / "schema"
_MIGRATION_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")

# How the published snapshot lays out each table (warehouse/export.py). A table with one of
# these date columns only grows by dated units (a day of observations, a run date), so it
# is published as one Parquet file per month of that column and a night rewrites only the
# months it touched; the first column present wins. Every other table is small and is
# rewritten whole, as are these few that have a date column but one row per run or source.
PARTITION_COLUMNS = ("run_date", "day", "observed_at")
WHOLE_TABLES = frozenset({"model_runs", "schema_version", "source_status", "history_loads"})
# Bookkeeping of the pipeline itself, never published.
INTERNAL_TABLES = frozenset({"publish_changes"})


def migrations() -> list[tuple[int, str, Path]]:
    """The numbered SQL migrations shipped with the package, in order."""
    found = []
    for path in sorted(SCHEMA_DIR.glob("*.sql")):
        match = _MIGRATION_NAME.match(path.name)
        if not match:
            raise ValueError(f"migration file name must look like 001_name.sql: {path.name}")
        found.append((int(match.group(1)), match.group(2), path))
    versions = [v for v, _, _ in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"duplicate migration numbers in {SCHEMA_DIR}")
    return found


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """Highest applied migration, 0 for an empty database."""
    exists = con.sql(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_version'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    return con.sql("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()[0][0]


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every pending migration, each in its own transaction; return the versions applied.

    Pending means not recorded in `schema_version`, not just above the highest recorded
    version: a migration numbered below one already applied (two branches landing in either
    order) is still applied, so no warehouse silently misses a table.
    """
    con.sql(
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version INTEGER NOT NULL, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    done = {v for (v,) in con.sql("SELECT version FROM schema_version").fetchall()}
    applied = []
    for version, name, path in migrations():
        if version in done:
            continue
        con.sql("BEGIN TRANSACTION")
        try:
            con.sql(path.read_text())
            con.sql(
                "INSERT INTO schema_version VALUES (?, ?, current_timestamp::TIMESTAMP)",
                params=[version, name],
            )
            con.sql("COMMIT")
        except Exception:
            con.sql("ROLLBACK")
            raise
        applied.append(version)
    return applied


def connect(path: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse file; a writable connection is migrated to the latest schema."""
    path = Path(path)
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A 0-byte file is a warehouse whose creation never wrote its header (a full disk, a
        # kill): it holds nothing, and DuckDB refuses to open it, which would block every
        # later run. It is created afresh; a non-empty unreadable file still fails loudly.
        if path.is_file() and path.stat().st_size == 0:
            path.unlink()
    con = duckdb.connect(str(path), read_only=read_only)
    if not read_only:
        migrate(con)
    return con


def table_columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """Column names of a table in declaration order."""
    rows = con.sql(
        "SELECT column_name FROM information_schema.columns WHERE table_name = ? "
        "ORDER BY ordinal_position",
        params=[table],
    ).fetchall()
    if not rows:
        raise ValueError(f"no such table: {table}")
    return [r[0] for r in rows]


def partition_column(table: str, columns: Sequence[str]) -> str | None:
    """The date column `table` is published by month of, or None for a whole table."""
    if table in WHOLE_TABLES or table in INTERNAL_TABLES:
        return None
    return next((c for c in PARTITION_COLUMNS if c in columns), None)


def month_sql(column: str) -> str:
    """SQL for the first day of the month of `column` (the partition key)."""
    return f"CAST(date_trunc('month', \"{column}\") AS DATE)"


def _has_change_log(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(
        con.sql(
            "SELECT count(*) FROM information_schema.tables "
            "WHERE table_schema = 'main' AND table_name = 'publish_changes'"
        ).fetchall()[0][0]
    )


def replace_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: pl.DataFrame,
    where: str,
    params: Sequence[object] = (),
) -> tuple[int, int]:
    """Delete the rows matching `where`, insert `rows`, in one transaction.

    This is what makes every load idempotent: a rerun for the same source x day replaces
    exactly what the previous run wrote, and a failure rolls back to yesterday's data.
    `where` may refer to the new rows as `incoming_rows` (e.g. to replace exactly the
    provider x day pairs being loaded). Returns (deleted, inserted).

    For a table published by month (`partition_column`), the months deleted from and
    inserted into are recorded in `publish_changes` in the same transaction, so the next
    publish rewrites exactly those Parquet partitions.
    """
    columns = table_columns(con, table)
    unknown = sorted(set(rows.columns) - set(columns))
    if unknown:
        raise ValueError(f"{table}: unknown columns {unknown}")
    part = partition_column(table, columns)
    log = part is not None and _has_change_log(con)
    con.register("incoming_rows", rows)
    con.sql("BEGIN TRANSACTION")
    try:
        if log:
            months = con.sql(
                f"SELECT {month_sql(part)} AS month, count(*) FROM {table} WHERE {where} "
                "GROUP BY ALL",
                params=list(params),
            ).fetchall()
            deleted = sum(n for _, n in months)
            if rows.height and part in rows.columns:
                months += con.sql(
                    f"SELECT DISTINCT {month_sql(part)}, 0 FROM incoming_rows"
                ).fetchall()
            if months:
                con.sql(
                    "INSERT INTO publish_changes (table_name, month) SELECT ?, unnest(?::DATE[])",
                    params=[table, sorted({m for m, _ in months}, key=str)],
                )
        else:
            deleted = con.sql(
                f"SELECT count(*) FROM {table} WHERE {where}", params=list(params)
            ).fetchall()[0][0]
        con.sql(f"DELETE FROM {table} WHERE {where}", params=list(params))
        if rows.height:
            con.sql(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
        con.sql("COMMIT")
    except Exception:
        con.sql("ROLLBACK")
        raise
    finally:
        con.unregister("incoming_rows")
    return deleted, rows.height


def row_counts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Row count of every table and view in the main schema.

    Views count too: in the published snapshot the month-partitioned tables are views over
    their Parquet files (warehouse/export.py).
    """
    tables = con.sql(
        "SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_type IN ('BASE TABLE', 'VIEW') "
        "ORDER BY table_name"
    ).fetchall()
    return {name: con.sql(f'SELECT count(*) FROM "{name}"').fetchall()[0][0] for (name,) in tables}
