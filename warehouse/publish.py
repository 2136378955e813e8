"""Publish a read-only snapshot of the warehouse for ad hoc queries.

Readers must never hold a lock on the file the nightly job writes, so we copy the database
into a temporary file next to the published one and swap it in with `os.replace` (atomic on
POSIX): a reader sees either yesterday's snapshot or today's, never a half-written file.
Parquet files are written to a temporary folder and swapped in the same way.
"""

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb

from warehouse.db import row_counts


@dataclass(frozen=True)
class Published:
    """What a publish produced."""

    database: Path
    parquet_dir: Path
    row_counts: dict[str, int]


def publish(con: duckdb.DuckDBPyConnection, out_dir: str | Path) -> Published:
    """Copy every table of the open writable warehouse `con` into `out_dir`.

    Writes `out_dir/gpuvalue.duckdb` and `out_dir/parquet/<table>.parquet`.
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / "gpuvalue.duckdb"
    tmp_db = out_dir / f".gpuvalue.{os.getpid()}.tmp.duckdb"
    tmp_db.unlink(missing_ok=True)
    source_catalog = con.sql("SELECT current_database()").fetchall()[0][0]
    con.sql(f"ATTACH '{tmp_db}' AS publish_tmp")
    try:
        con.sql(f"COPY FROM DATABASE {source_catalog} TO publish_tmp")
    finally:
        con.sql("DETACH publish_tmp")
    counts = row_counts(con)

    parquet_dir = out_dir / "parquet"
    tmp_parquet = out_dir / f".parquet.{os.getpid()}.tmp"
    shutil.rmtree(tmp_parquet, ignore_errors=True)
    tmp_parquet.mkdir()
    for table in counts:
        con.sql(f"COPY \"{table}\" TO '{tmp_parquet / (table + '.parquet')}' (FORMAT parquet)")

    os.replace(tmp_db, target)
    old_parquet = out_dir / f".parquet.{os.getpid()}.old"
    if parquet_dir.exists():
        os.replace(parquet_dir, old_parquet)
    os.replace(tmp_parquet, parquet_dir)
    shutil.rmtree(old_parquet, ignore_errors=True)
    return Published(database=target, parquet_dir=parquet_dir, row_counts=counts)


def open_published(out_dir: str | Path) -> duckdb.DuckDBPyConnection:
    """Open the published snapshot read-only."""
    path = Path(out_dir) / "gpuvalue.duckdb"
    if not path.exists():
        raise FileNotFoundError(f"no published warehouse at {path}: run `make run` first")
    return duckdb.connect(str(path), read_only=True)
