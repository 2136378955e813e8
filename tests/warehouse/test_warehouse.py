import datetime as dt

import duckdb
import polars as pl
import pytest

from warehouse.db import (
    connect,
    migrate,
    migrations,
    replace_rows,
    row_counts,
    schema_version,
    table_columns,
)
from warehouse.export import open_published
from warehouse.publish import publish

CORE_TABLES = {
    "gpus",
    "price_observations",
    "gpu_prices_daily",
    "cloud_offers",
    "benchmark_results",
    "relative_performance",
    "perf_per_dollar",
    "cloud_vs_buy",
}


def model_run(day: str, ref: str = "a100-sxm4-80gb") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run_date": [dt.date.fromisoformat(day)],
            "created_at": [dt.datetime(2026, 1, 1)],
            "reference_gpu": [ref],
            "parameters": ["{}"],
        }
    )


def test_migrations_create_every_table_once(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    assert CORE_TABLES <= set(row_counts(con))
    assert schema_version(con) == max(v for v, _, _ in migrations())
    assert migrate(con) == []  # already up to date
    versions = con.sql("SELECT version FROM schema_version ORDER BY version").fetchall()
    assert [v for (v,) in versions] == [v for v, _, _ in migrations()]


def test_a_migration_numbered_below_an_applied_one_is_still_applied(tmp_path):
    # Two branches can land migrations in either order: a warehouse that has 001-003 and
    # 005 recorded must still get 004 (here: the gpus provenance columns), not skip it.
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    migrate(con)
    con.sql("DROP TABLE spec_conflicts")
    con.sql("DELETE FROM schema_version WHERE version = 4")
    for column in [
        c for c in table_columns(con, "gpus") if c.endswith("_source") and c != "source"
    ]:
        con.sql(f"ALTER TABLE gpus DROP COLUMN {column}")
    con.sql("DROP TABLE gpu_spec_sources")
    con.sql("DROP TABLE spec_inputs")
    assert migrate(con) == [4]
    assert "spec_conflicts" in row_counts(con)
    assert "memory_gb_source" in table_columns(con, "gpus")


def test_replace_rows_is_idempotent(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    for _ in range(3):
        replace_rows(con, "model_runs", model_run("2026-01-01"), "run_date = ?", ["2026-01-01"])
    replace_rows(con, "model_runs", model_run("2026-01-02"), "run_date = ?", ["2026-01-02"])
    assert row_counts(con)["model_runs"] == 2


def test_failed_load_keeps_yesterdays_rows(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    replace_rows(con, "model_runs", model_run("2026-01-01"), "run_date = ?", ["2026-01-01"])
    bad = model_run("2026-01-01").with_columns(reference_gpu=pl.lit(None, dtype=pl.Utf8))
    with pytest.raises(duckdb.ConstraintException):
        replace_rows(con, "model_runs", bad, "run_date = ?", ["2026-01-01"])
    assert con.sql("SELECT reference_gpu FROM model_runs").fetchall() == [("a100-sxm4-80gb",)]


def test_replace_rows_rejects_unknown_columns(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    with pytest.raises(ValueError, match="unknown columns"):
        replace_rows(con, "model_runs", model_run("2026-01-01").with_columns(x=1), "true")


def test_publish_is_read_only_and_swaps_under_an_open_reader(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    replace_rows(con, "model_runs", model_run("2026-01-01"), "run_date = ?", ["2026-01-01"])
    out = tmp_path / "published"
    first = publish(con, out)
    assert first.row_counts["model_runs"] == 1
    # Every table has its Parquet: one file, or a folder of month files (empty here).
    assert {p.stem for p in first.parquet_dir.iterdir()} >= CORE_TABLES

    reader = open_published(out)
    with pytest.raises(duckdb.Error):
        reader.sql("DELETE FROM model_runs")
    # The nightly job publishes again while someone is still reading yesterday's copy.
    replace_rows(con, "model_runs", model_run("2026-01-02"), "run_date = ?", ["2026-01-02"])
    publish(con, out)
    assert reader.sql("SELECT count(*) FROM model_runs").fetchall() == [(1,)]
    reader.close()
    fresh = open_published(out)
    assert fresh.sql("SELECT count(*) FROM model_runs").fetchall() == [(2,)]
    parquet = pl.read_parquet(out / "parquet" / "model_runs.parquet")
    assert parquet.height == 2
    assert not list(out.glob(".*tmp*"))


def test_open_published_explains_a_missing_snapshot(tmp_path):
    with pytest.raises(FileNotFoundError, match="make run"):
        open_published(tmp_path)


def test_a_zero_byte_warehouse_is_created_afresh_and_a_damaged_one_is_kept(tmp_path):
    """A full disk can leave a 0-byte file; it must not block every later run (issue 26)."""
    empty = tmp_path / "empty.duckdb"
    empty.touch()
    con = connect(empty)
    assert schema_version(con) == max(v for v, _, _ in migrations())
    con.close()
    assert empty.stat().st_size > 0
    damaged = tmp_path / "damaged.duckdb"
    damaged.write_bytes(b"not a database\n" * 10)
    with pytest.raises(duckdb.IOException):
        connect(damaged)
    assert damaged.read_bytes() == b"not a database\n" * 10  # nothing of it is lost
