"""Connect to the warehouse, apply numbered migrations, and load rows idempotently.

DuckDB allows one writer or many readers per file. The pipeline is the only writer of
`warehouse/gpuvalue.duckdb`; people query the published copy (see `warehouse.publish`).

The warehouse may also be a DuckLake (warehouse/location.py), which takes writers from
several processes at once and settles them at commit: a transaction whose changes conflict
with one committed since it began fails, and is retried here on the new snapshot
(`write_transaction`). The same migrations run there through a documented translation
(`ducklake_sql`; docs/deployment.md, "Migrations on DuckLake").
"""

import logging
import random
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import duckdb
import polars as pl

from warehouse.location import parse

SCHEMA_DIR = Path(__file__).parent / "schema"
_MIGRATION_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")

# How the published snapshot lays out each table (warehouse/export.py). A table with one of
# these date columns only grows by dated units (a day of observations, a run date), so it
# is published as one Parquet file per month of that column and a night rewrites only the
# months it touched; the first column present wins. Every other table is small and is
# rewritten whole, as are these few that have a date column but one row per run or source.
PARTITION_COLUMNS = ("run_date", "day", "observed_at")
WHOLE_TABLES = frozenset({"model_runs", "schema_version", "source_status", "history_loads"})
# Bookkeeping of the pipeline itself, never published. The last two exist on a DuckLake
# only: the counter standing in for `publish_changes_seq` and the write guard.
WRITE_GUARD = "warehouse_writes"
INTERNAL_TABLES = frozenset({"publish_changes", "publish_changes_seq", WRITE_GUARD})
# A write that lost a DuckLake conflict is retried this many times, after a randomized wait
# starting at RETRY_WAIT_S and doubling up to RETRY_MAX_WAIT_S (two writers that collided do
# not collide again in step): about a minute in all, longer than another writer's longest
# run of commits (a new lake's migrations); then the conflict is raised.
CONFLICT_RETRIES = 30
RETRY_WAIT_S = 0.05
RETRY_MAX_WAIT_S = 2.0

T = TypeVar("T")
log = logging.getLogger(__name__)


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


def _database_type(con: duckdb.DuckDBPyConnection) -> str | None:
    rows = con.sql(
        "SELECT type FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchall()
    return rows[0][0] if rows else None


def is_ducklake(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's current database is a DuckLake."""
    return _database_type(con) == "ducklake"


def takes_concurrent_writers(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether other processes may write this database at the same time (DuckLake, MotherDuck).

    Those get the write guard and the retries of `write_transaction`. (MotherDuck's are
    untested here: it is a network service.)
    """
    return _database_type(con) in {"ducklake", "motherduck"}


class UnsupportedOnDuckLake(ValueError):
    """A migration uses a feature DuckLake lacks and that has no faithful translation."""


# What DuckLake lacks (its docs, "Unsupported features"; DuckDB 1.5.5 / DuckLake 1.0 here)
# and what the translation does about each. Sequences are emulated; an index is only a way
# to find rows faster, so it is left out; constraints other than NOT NULL would change what
# the warehouse accepts, so a migration using one must say what to do on DuckLake.
_SEQUENCE = re.compile(r"CREATE\s+SEQUENCE\s+(\w+)\s*;", re.IGNORECASE)
_NEXTVAL_DEFAULT = re.compile(r"\s+DEFAULT\s+nextval\(\s*'(\w+)'\s*\)", re.IGNORECASE)
_INDEX = re.compile(r"CREATE\s+INDEX\s+[^;]*;", re.IGNORECASE)
_REFUSED = re.compile(
    r"\b(PRIMARY\s+KEY|UNIQUE|REFERENCES|FOREIGN\s+KEY|CHECK\s*\(|nextval|currval)", re.IGNORECASE
)


def ducklake_sql(sql: str, name: str = "migration") -> str:
    """A migration's SQL as it runs on a DuckLake (comments dropped).

    - `CREATE SEQUENCE s;` becomes a one-row counter table `s` (value 0); a column's
      `DEFAULT nextval('s')` is dropped, and the writer sets the column from the counter
      (`next_values`), inside its own transaction.
    - `CREATE INDEX ...;` (not UNIQUE) is dropped.
    - PRIMARY KEY, UNIQUE, REFERENCES, CHECK and any other nextval/currval are refused.
    """
    text = re.sub(r"--[^\n]*", "", sql)
    counter = r"CREATE TABLE \1 (value BIGINT NOT NULL); INSERT INTO \1 VALUES (0);"
    text = _SEQUENCE.sub(counter, text)
    text = _NEXTVAL_DEFAULT.sub("", text)
    text = _INDEX.sub("", text)
    refused = _REFUSED.search(text)
    if refused:
        raise UnsupportedOnDuckLake(
            f"{name}: {refused.group(1)} has no DuckLake translation (DuckLake has no "
            "indexes, keys, unique or check constraints, or sequences); add one to "
            "warehouse.db.ducklake_sql or write the migration without it"
        )
    return text


def next_values(con: duckdb.DuckDBPyConnection, counter: str, n: int) -> int:
    """Take `n` values from a DuckLake counter table; returns the first.

    Two transactions that both take values update the same row, which DuckLake reports as
    a conflict when the second commits: the loser is retried on the new snapshot, so values
    are handed out in commit order, as a sequence's would be among committed rows.
    """
    con.sql(f"UPDATE {counter} SET value = value + ?", params=[n])
    return con.sql(f"SELECT value FROM {counter}").fetchall()[0][0] - n + 1


def is_conflict(exc: BaseException) -> bool:
    """A DuckLake commit refused because a concurrent commit changed the same tables."""
    return isinstance(exc, duckdb.TransactionException) and "conflict" in str(exc).lower()


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.sql("ROLLBACK")
    except duckdb.TransactionException:
        pass  # a failed COMMIT has already ended the transaction


def write_transaction(
    con: duckdb.DuckDBPyConnection,
    body: Callable[[], T],
    on_retry: Callable[[int, BaseException], None] | None = None,
) -> T:
    """Run `body` in one transaction; on a DuckLake (or MotherDuck), serialize it.

    DuckLake isolates snapshots, and two transactions that each read a table and then write
    it can both commit without conflict when what they deleted did not overlap: two
    first loads of the catalog into an empty table would both insert it. Every write
    transaction here therefore also bumps the one row of WRITE_GUARD, so any two that
    overlap in time conflict, and the one that commits second is rolled back and run again,
    from the start, on a snapshot that holds the first one's rows. `body` must therefore
    read what it needs inside the transaction (every caller does). On a DuckDB file there is
    one writer, and `body` runs once.
    """
    lake = takes_concurrent_writers(con)
    for attempt in range(CONFLICT_RETRIES + 1):
        con.sql("BEGIN TRANSACTION")
        try:
            if lake:
                con.sql(f"UPDATE {WRITE_GUARD} SET value = value + 1")
            result = body()
            con.sql("COMMIT")
            return result
        except Exception as exc:
            _rollback(con)
            if not (lake and is_conflict(exc)) or attempt == CONFLICT_RETRIES:
                raise
            # Said where it happens (stderr, the step's log): a retry is normal, many are not.
            log.warning(
                "DuckLake write conflict, retry %d of %d: %s",
                attempt + 1,
                CONFLICT_RETRIES,
                str(exc).splitlines()[-1][:200],
            )
            if on_retry is not None:
                on_retry(attempt + 1, exc)
            _wait(attempt)
    raise AssertionError("unreachable")


def _wait(attempt: int) -> None:
    time.sleep(min(RETRY_MAX_WAIT_S, RETRY_WAIT_S * 2**attempt) * (0.5 + random.random()))


def _bootstrap(con: duckdb.DuckDBPyConnection, lake: bool) -> None:
    """schema_version, and the write guard where others write too, before any migration.

    `lake`: the database takes concurrent writers (`takes_concurrent_writers`).
    """
    create_version = (
        "CREATE TABLE IF NOT EXISTS schema_version ("
        " version INTEGER NOT NULL, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    if not lake:
        con.sql(create_version)
        return
    try:
        # One cheap query on a lake that has both (every open after the first): listing
        # the catalog (information_schema) reads every table's metadata from the catalog.
        con.sql(
            f"SELECT (SELECT count(*) FROM {WRITE_GUARD}), (SELECT 1 FROM schema_version LIMIT 1)"
        ).fetchall()
        return
    except duckdb.CatalogException:
        pass

    def create() -> None:
        con.sql(create_version)
        con.sql(f"CREATE TABLE IF NOT EXISTS {WRITE_GUARD} (value BIGINT NOT NULL)")
        if not con.sql(f"SELECT count(*) FROM {WRITE_GUARD}").fetchall()[0][0]:
            con.sql(f"INSERT INTO {WRITE_GUARD} VALUES (0)")

    # Not through write_transaction: the guard it bumps is what this creates. Two first
    # connections racing here both create the tables: DuckLake refuses the second commit
    # (two creates of one name), and the retry finds them.
    for attempt in range(CONFLICT_RETRIES + 1):
        con.sql("BEGIN TRANSACTION")
        try:
            create()
            con.sql("COMMIT")
            return
        except Exception as exc:
            _rollback(con)
            if not is_conflict(exc) or attempt == CONFLICT_RETRIES:
                raise
            _wait(attempt)


def migrate(con: duckdb.DuckDBPyConnection) -> list[int]:
    """Apply every pending migration, each in its own transaction; return the versions applied.

    Pending means not recorded in `schema_version`, not just above the highest recorded
    version: a migration numbered below one already applied (two branches landing in either
    order) is still applied, so no warehouse silently misses a table. On a DuckLake each
    migration runs translated (`ducklake_sql`), and a process that loses the race to apply
    one to a new lake finds it applied when its transaction is retried.
    """
    lake = is_ducklake(con)
    _bootstrap(con, takes_concurrent_writers(con))
    applied = []

    def recorded() -> set[int]:
        return {v for (v,) in con.sql("SELECT version FROM schema_version").fetchall()}

    done = recorded()
    for version, name, path in migrations():
        if version in done:
            continue
        # Read again before each pending one: on a new lake another process may be applying
        # the same migrations, and one it has committed is skipped without a transaction.
        done = recorded()
        if version in done:
            continue

        def apply(version: int = version, name: str = name, path: Path = path) -> bool:
            recorded = con.sql(
                "SELECT count(*) FROM schema_version WHERE version = ?", params=[version]
            ).fetchall()[0][0]
            if recorded:  # applied by another process meanwhile (a retry after a conflict)
                return False
            sql = path.read_text()
            con.sql(ducklake_sql(sql, path.name) if lake else sql)
            con.sql(
                "INSERT INTO schema_version VALUES (?, ?, current_timestamp::TIMESTAMP)",
                params=[version, name],
            )
            return True

        if write_transaction(con, apply):
            applied.append(version)
    return applied


def connect(path: str | Path, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the warehouse; a writable connection is migrated to the latest schema.

    `path` is a DuckDB file or any GPUVALUE_WAREHOUSE setting (warehouse/location.py).
    """
    location = parse(str(path))
    if location.kind != "duckdb":
        # Read-only here means only "not migrated": an attached warehouse's transactions
        # already isolate a reader from concurrent writers.
        con = location.connect()
        if not read_only:
            migrate(con)
        return con
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
    lake = is_ducklake(con)

    def load() -> int:
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
                _log_months(con, table, sorted({m for m, _ in months}, key=str), lake)
        else:
            deleted = con.sql(
                f"SELECT count(*) FROM {table} WHERE {where}", params=list(params)
            ).fetchall()[0][0]
        con.sql(f"DELETE FROM {table} WHERE {where}", params=list(params))
        if rows.height:
            con.sql(f"INSERT INTO {table} BY NAME SELECT * FROM incoming_rows")
        return deleted

    con.register("incoming_rows", rows)
    try:
        deleted = write_transaction(con, load)
    finally:
        con.unregister("incoming_rows")
    return deleted, rows.height


def _log_months(con: duckdb.DuckDBPyConnection, table: str, months: list, lake: bool) -> None:
    """Record the months a load touched in publish_changes (see replace_rows)."""
    if not lake:
        con.sql(
            "INSERT INTO publish_changes (table_name, month) SELECT ?, unnest(?::DATE[])",
            params=[table, months],
        )
        return
    # No sequences on DuckLake: the entries take their numbers from the counter table that
    # stands in for publish_changes_seq, in this transaction (see ducklake_sql).
    first = next_values(con, "publish_changes_seq", len(months))
    con.sql(
        "INSERT INTO publish_changes (seq, table_name, month) "
        "SELECT ? + i - 1, ?, m FROM unnest(?::DATE[]) WITH ORDINALITY AS u(m, i)",
        params=[first, table, months],
    )


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
