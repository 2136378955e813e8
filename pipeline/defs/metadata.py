"""Dagster's standard metadata keys for the assets that write warehouse rows.

Every such asset reports `dagster/row_count` (rows in its table after the write: the UI
charts it, so a table that grows without need shows) and `rows` (what this
materialization wrote). Partitioned assets add `dagster/partition_row_count` per
partition. Dagster 1.13 has no public helper for these keys (its TableMetadataSet is not
exported), so they are spelled here once.
"""

from collections.abc import Mapping

import dagster as dg
import duckdb
import polars as pl

from warehouse.db import replace_rows

# What every asset that writes warehouse rows is drawn with in the UI.
KINDS = {"duckdb", "polars"}
ROW_COUNT = "dagster/row_count"
PARTITION_ROW_COUNT = "dagster/partition_row_count"


def table_rows(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Rows in a warehouse table (DuckDB answers count(*) from its metadata)."""
    return con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]


def partition_rows(context: dg.AssetExecutionContext, written: Mapping[str, int]) -> dict:
    """`dagster/partition_row_count`: the rows written for each partition of the run.

    `written` maps partition keys to rows written (keys without rows may be left out). A
    one-partition run (a night, a provider) gets its count in the returned metadata. A
    range run (a backfill, `make run`) records one materialization per partition with the
    same metadata, so the returned 0 is for the partitions without rows and each partition
    with rows gets its own count attached.
    """
    keys = context.partition_keys
    if len(keys) == 1:
        return {PARTITION_ROW_COUNT: written.get(keys[0], 0)}
    targeted = set(keys)
    for key, n in written.items():
        if key in targeted:
            context.add_asset_metadata({PARTITION_ROW_COUNT: n}, partition_key=key)
    return {PARTITION_ROW_COUNT: 0}


def replace_whole_table(
    context: dg.AssetExecutionContext,
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: pl.DataFrame,
) -> dict:
    """Replace a table read whole from a bundled file; log it; its `rows` and row count.

    For the tables that hold published figures rather than a run's output (no run_date):
    what was written is all the table holds, so `rows` and `dagster/row_count` agree.
    """
    deleted, inserted = replace_rows(con, table, rows, "true")
    context.log.info(f"{table}: {inserted} rows (replaced {deleted})")
    return {"rows": inserted, ROW_COUNT: inserted}
