"""Today's prices: observed when fresh, nowcast when stale, none when too old (nowcast.py)."""

import datetime as dt

import numpy as np
import polars as pl
import pytest

from model.nowcast import (
    backtest,
    backtest_summary,
    choose_candidate,
    fit_depreciation,
    fit_drift,
    monthly_series,
    steps,
)
from model.nowcast_backtest import prices_today
from model.parameters import ModelParameters
from reports.report import freshness_status

PARAMS = ModelParameters()
GPUS = pl.DataFrame(
    {
        "gpu_id": [f"c{i}" for i in range(6)] + [f"p{i}" for i in range(6)],
        "name": [f"GeForce RTX {i}" for i in range(6)] + [f"RTX A{i}000" for i in range(6)],
    }
)


def synthetic_daily(drift: dict[str, float], vol: float = 0.05, years: int = 4) -> pl.DataFrame:
    """Weekly prices of 6 consumer and 6 professional GPUs on a random walk with drift."""
    rng = np.random.default_rng(3)
    start = dt.date(2021, 1, 1)
    rows = []
    for gpu in GPUS["gpu_id"]:
        segment = "consumer" if gpu.startswith("c") else "professional"
        log_price = np.log(1000.0 + 100 * int(gpu[1]))
        for week in range(52 * years):
            log_price += drift[segment] / 52 + vol * rng.normal() / np.sqrt(52)
            day = start + dt.timedelta(weeks=week)
            rows.append((day, gpu, "new", float(np.exp(log_price))))
    return pl.DataFrame(rows, schema=["day", "gpu_id", "market", "price_usd"], orient="row")


def test_drift_is_fitted_per_segment():
    daily = synthetic_daily({"consumer": -0.20, "professional": 0.05})
    drift = fit_drift(steps(monthly_series(daily), GPUS))
    by = {r["segment"]: r for r in drift.iter_rows(named=True)}
    assert by["consumer"]["drift"] == pytest.approx(-0.20, abs=0.03)
    assert by["professional"]["drift"] == pytest.approx(0.05, abs=0.03)
    assert by["consumer"]["level"] == "segment x market"
    # Monthly medians of weekly prices: the volatility per sqrt-year is of the right size.
    assert 0.02 < by["consumer"]["volatility"] < 0.10


def test_backtest_prefers_the_drift_that_is_there_and_covers_its_intervals():
    daily = synthetic_daily({"consumer": -0.30, "professional": -0.30}, vol=0.03)
    summary = backtest_summary(backtest(monthly_series(daily), GPUS, 2.0))
    assert choose_candidate(summary) in {"depreciation", "segment_drift", "own_drift_shrunk"}
    walk = summary.filter((pl.col("candidate") == "random_walk") & (pl.col("band") == "all"))
    seg = summary.filter((pl.col("candidate") == "segment_drift") & (pl.col("band") == "all"))
    assert seg["median_ape"][0] < walk["median_ape"][0]
    # The 95 % interval of the chosen candidate covers about 95 % of what came later.
    assert seg["coverage95"][0] > 80


def test_nowcast_interval_widens_with_age_and_old_prices_expire():
    daily = synthetic_daily({"consumer": -0.20, "professional": 0.0}, years=3)
    last = daily["day"].max()
    params = ModelParameters(price_freshness_days=180, price_max_age_days=730)
    ages = {}
    for months in (1, 9, 20, 30):
        as_of = last + dt.timedelta(days=30 * months)
        out = prices_today(daily, GPUS, params, as_of, "segment_drift")
        ages[months] = out.filter((pl.col("gpu_id") == "c1") & (pl.col("market") == "new"))
    assert ages[1]["price_method"][0] == "observed"
    assert ages[1]["price_usd"][0] == pytest.approx(
        abs=0.01,
        expected=daily.filter((pl.col("gpu_id") == "c1") & (pl.col("day") == last))["price_usd"][0],
    )
    assert ages[9]["price_method"][0] == ages[20]["price_method"][0] == "nowcast"
    # Falling consumer prices: the nowcast is below the last observation, which it keeps.
    assert ages[9]["price_usd"][0] < ages[9]["observed_price_usd"][0]
    assert ages[9]["price_day"][0] == last
    width = {m: ages[m]["price_high"][0] / ages[m]["price_low"][0] for m in (9, 20)}
    assert width[20] > width[9] > 1
    assert ages[30].is_empty()  # 900 days: no price today


def test_freshness_statuses_are_never_ok_when_stale():
    rows = pl.DataFrame(
        {
            "input": ["retail prices", "retail prices", "cloud prices", "specs"],
            "source": ["keepa-amazon (new)", "amazon (new)", "azure", "curated"],
            "as_of": [dt.date(2025, 8, 21), dt.date(2026, 11, 1), dt.date(2026, 11, 20), None],
            "age_days": [459, 22, 3, None],
            "attempt": [None, None, "failed", None],
            "detail": [None, None, "HTTP 503", None],
        }
    )
    out = freshness_status(rows, PARAMS.stale_after_days)
    assert out["status"].to_list() == ["stale", "ok", "failed", "ok"]
    assert out["detail"][0] == "older than 180 days"
    assert "HTTP 503" in out["detail"][2] and "kept" in out["detail"][2]


def test_depreciation_is_the_slope_of_price_over_launch_price_with_age():
    # Five cards released a year apart, each priced launch x exp(-0.25 x age) every quarter.
    gpus = pl.DataFrame(
        {
            "gpu_id": [f"g{i}" for i in range(5)],
            "name": [f"GeForce {i}" for i in range(5)],
            "launch_price_usd": [500.0 + 100 * i for i in range(5)],
            "release_date": [dt.date(2018 + i, 1, 1) for i in range(5)],
        }
    )
    rows = []
    for gpu in gpus.iter_rows(named=True):
        for quarter in range(12):
            day = dt.date(2023, 1, 15) + dt.timedelta(days=91 * quarter)
            age = (day - gpu["release_date"]).days / 365.25
            rows.append((day, gpu["gpu_id"], "used", gpu["launch_price_usd"] * np.exp(-0.25 * age)))
    daily = pl.DataFrame(rows, schema=["day", "gpu_id", "market", "price_usd"], orient="row")
    fit = fit_depreciation(monthly_series(daily), gpus)
    assert fit.row(0, named=True)["segment"] == "consumer"
    assert fit["depreciation"][0] == pytest.approx(-0.25, abs=0.01)
