"""Migration 015: relative_performance keeps the all-benchmarks value beside the headline."""

import datetime as dt
from pathlib import Path

import polars as pl

from warehouse.db import connect, replace_rows, table_columns

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.md"
NEW = ["value_all_benchmarks", "value_all_benchmarks_low", "value_all_benchmarks_high"]


def test_migration_015_adds_the_all_benchmarks_value_and_its_interval(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    columns = table_columns(con, "relative_performance")
    assert set(NEW) <= set(columns)
    row = pl.DataFrame(
        {
            "run_date": [dt.date(2026, 9, 20)],
            "gpu_id": ["h100-sxm5-80gb"],
            "workload": ["training_16bit"],
            "value": [2.38],
            "method": ["measured"],
            "n_results": [59],
            "reference_gpu": ["a100-sxm4-80gb"],
            "value_all_benchmarks": [2.11],
            "value_all_benchmarks_low": [1.9],
            "value_all_benchmarks_high": [2.34],
        },
        schema_overrides={"n_results": pl.Int32},
    )
    replace_rows(con, "relative_performance", row, "run_date = ?", ["2026-09-20"])
    stored = con.sql(
        "SELECT value, value_all_benchmarks, value_all_benchmarks_high FROM relative_performance"
    ).fetchall()
    assert stored == [(2.38, 2.11, 2.34)]


def test_schema_doc_describes_every_relative_performance_column(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    text = SCHEMA_DOC.read_text(encoding="utf-8")
    section = text.split("### `relative_performance`", 1)[1].split("\n### ", 1)[0]
    described = " ".join(
        line.split("|")[1] for line in section.splitlines() if line.startswith("| ")
    )
    missing = [c for c in table_columns(con, "relative_performance") if c not in described]
    assert not missing, f"docs/schema.md, relative_performance: undocumented {missing}"
