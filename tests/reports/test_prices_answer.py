"""Prices you can trust, on the real build of the bundled snapshot (issue 12's "done when").

Real price history in the published warehouse, today's ranking priced only with fresh or
nowcast prices (never older than the hard limit), wider intervals for nowcasts, and the
report and run summary calling stale inputs stale.
"""

import polars as pl
import pytest

from pipeline.defs.resources import GpuvalueSettings
from pipeline.run import summary
from warehouse.export import open_published


@pytest.fixture(scope="module")
def con(built):
    connection = open_published(built.published)
    yield connection
    connection.close()


def test_the_warehouse_holds_a_real_cited_price_history(con):
    obs = con.sql(
        "SELECT gpu_id, CAST(observed_at AS DATE) AS day, citation, source FROM price_observations"
        " WHERE gpu_id IS NOT NULL AND drop_reason IS NULL"
    ).pl()
    assert obs.height >= 10_000
    assert obs["gpu_id"].n_unique() >= 50
    days = obs.group_by("gpu_id").agg(pl.col("day").n_unique())
    assert days.filter(pl.col("day") >= 30).height >= 25
    assert obs.filter(pl.col("citation").is_null() | (pl.col("citation") == "")).is_empty()
    # The history view answers "price of GPU X over time by market".
    history = con.sql(
        "SELECT market, count(*) AS days, min(day) AS first, max(day) AS last"
        " FROM gpu_price_history WHERE gpu_id = 'rtx-4090' GROUP BY market"
    ).pl()
    assert history["days"].sum() >= 100


def test_todays_ranking_prices_enough_gpus_with_fresh_or_nowcast_prices(con):
    run_date, params = con.sql(
        "SELECT run_date, parameters FROM model_runs ORDER BY run_date DESC LIMIT 1"
    ).fetchall()[0]
    perf = con.sql(
        "SELECT * FROM perf_per_dollar WHERE run_date = ? AND system_gpus = 1"
        " AND workload = 'training_16bit'",
        params=[run_date],
    ).pl()
    assert perf["gpu_id"].n_unique() >= 45
    age = (pl.lit(run_date) - pl.col("price_day")).dt.total_days()
    assert perf.filter(age > 730).is_empty()
    assert perf.filter((age > 180) & (pl.col("price_method") != "nowcast")).is_empty()
    assert perf.filter((age <= 180) & (pl.col("price_method") != "observed")).is_empty()
    # "mean" only where new and used are both observed in the window.
    assert set(perf.filter(pl.col("market") == "mean")["price_method"]) <= {"observed"}
    # Nowcast intervals are wider than fresh prices' (relative width, median by method).
    width = perf.with_columns(
        w=(pl.col("perf_per_dollar_high") - pl.col("perf_per_dollar_low"))
        / pl.col("perf_per_dollar")
    )
    by = dict(width.group_by("price_method").agg(pl.col("w").median()).rows())
    assert by["nowcast"] > by["observed"]


def test_stale_inputs_are_called_stale(built, con):
    text = (built.site / "latest" / "index.html").read_text(encoding="utf-8")
    report = next(built.root.glob(".build/*/report.md")).read_text(encoding="utf-8")
    assert "stale" in report and "older than 180 days" in report
    out = summary(GpuvalueSettings(published_dir=str(built.published), site_dir=str(built.site)))
    stale_lines = [line for line in out.splitlines() if "tomshardware-ebay" in line]
    assert stale_lines and all("stale" in line for line in stale_lines)
    assert "stale" in text
    # The back-test of the nowcast is in the warehouse (and so in docs/methodology.md).
    backtest = con.sql(
        "SELECT * FROM model_validation WHERE check_name = 'price_nowcast_backtest'"
    ).pl()
    assert backtest.filter(pl.col("metric") == "median_ape_pct").height >= 3
