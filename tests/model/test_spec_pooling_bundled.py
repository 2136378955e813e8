"""The bundled snapshot: the RTX 5090's spec estimate pools with its line's measured RTX 4090.

Before partial pooling along a product line (model/spec_estimator.py `line_pooling`) the
RTX 5090 took the Blackwell architecture offset of the data-center B200 and the workstation
RTX PRO 6000 alone and was estimated below the measured RTX 4090 for 16-bit training
(0.759 vs 0.853 of an A100 SXM4 80 GB), against public measurements of ~1.4x (docs/
methodology.md, "Partial pooling along a product line").
"""

import datetime as dt

import polars as pl
import pytest

from model.debias import debias
from model.fit import fit_constants
from model.parameters import ModelParameters
from model.performance import relative_performance
from sources.benchmarks.flags import flag_benchmarks
from sources.bundled import DATA_DIR, read_benchmark_figures, read_gpu_specs

RUN_DATE = dt.date(2026, 10, 7)


@pytest.fixture(scope="module")
def training() -> dict[str, dict]:
    """16-bit training rows of the bundled snapshot, by GPU."""
    catalog = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")
    ids = frozenset(catalog["gpu_id"])
    files = sorted((DATA_DIR / "benchmarks").glob("*.csv"))
    results = flag_benchmarks(
        pl.concat([read_benchmark_figures(f, ids) for f in files], how="diagonal_relaxed")
    )
    results = results.sort(results.columns)
    params = ModelParameters()
    constants = fit_constants(results, catalog, params)
    debiased = debias(results, params, RUN_DATE, constants, catalog)
    rel = relative_performance(debiased, catalog, params, RUN_DATE)
    return {
        r["gpu_id"]: r
        for r in rel.filter(pl.col("workload") == "training_16bit").iter_rows(named=True)
    }


def test_the_rtx_5090_is_estimated_above_the_measured_rtx_4090(training):
    rtx5090, rtx4090 = training["rtx-5090"], training["rtx-4090"]
    assert rtx4090["evidence"] == "measured"
    assert rtx5090["evidence"] == "spec_estimate"
    assert "line" in rtx5090["interval_method"] or "pooling" in rtx5090["interval_method"]
    assert rtx5090["value"] > rtx4090["value"]
    # Within the public range (1.3-1.5x) widened by the estimate's own interval.
    assert rtx5090["value_low"] < 1.3 * rtx4090["value"] < rtx5090["value_high"]


def test_each_pooled_blackwell_geforce_card_keeps_its_interval_around_its_value(training):
    for gpu in ("rtx-5090", "rtx-5080", "rtx-5070-ti"):
        row = training[gpu]
        assert row["value_low"] < row["value"] < row["value_high"]
        assert "pooling with the measured ada GPUs" in row["interval_method"]
