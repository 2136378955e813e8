"""A GPU page shows the transformer-weighted value beside the all-benchmarks value."""

import polars as pl

from reports.content import performance_section, performance_table


def rows(**extra) -> pl.DataFrame:
    base = {
        "workload": ["training_16bit", "inference_16bit"],
        "value": [2.38, 2.2],
        "value_low": [2.12, 1.9],
        "value_high": [2.67, 2.5],
        "method": ["measured", "measured"],
        "evidence": ["measured", "measured"],
        "n_results": [59, 10],
        "interval_method": ["least-squares standard error, t(900) 95 %", None],
    }
    return pl.DataFrame({**base, **extra})


def test_both_values_with_their_intervals():
    table = performance_table(
        rows(
            value_all_benchmarks=[2.11, 2.2],
            value_all_benchmarks_low=[1.9, 1.9],
            value_all_benchmarks_high=[2.34, 2.5],
        )
    )
    assert table.headers[1].startswith("relative performance, transformer-weighted")
    assert table.headers[2] == "all benchmarks alike (95 %)"
    by_workload = {str(r[0]): r for r in table.rows}
    training = by_workload["16-bit training"]
    assert str(training[1]) == "2.38 (2.12–2.67)"
    assert str(training[2]) == "2.11 (1.9–2.34)"
    assert str(training[5]) == "59"


def test_an_older_warehouse_without_the_column_shows_an_empty_cell():
    table = performance_table(rows())
    assert all(str(r[2]) == "" for r in table.rows)
    section = performance_section(pl.DataFrame())
    assert section.title == "Performance" and "transformer" in section.paragraphs[0]
    assert section.tables[0].rows == []
