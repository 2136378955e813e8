"""The market index (model/market_index.py) on synthetic rising and falling markets."""

import datetime as dt

import numpy as np
import polars as pl
import pytest

from model.market_index import fit_indexes, index_change, market_group_expr
from model.nowcast import backtest, backtest_summary, fit_models, monthly_series
from model.nowcast_backtest import (
    ALL_SEGMENTS,
    choose_nowcast,
    holdout_backtest,
    prices_today,
    segment_summary,
)
from model.parameters import ModelParameters

PARAMS = ModelParameters()
START = dt.date(2024, 1, 1)
AS_OF = dt.date(2025, 12, 31)
# Six comparable consumer cards seen every week, and one seen once, early.
GPUS = pl.DataFrame(
    {
        "gpu_id": [f"c{i}" for i in range(6)] + ["stale"],
        "name": [f"GeForce RTX {i}" for i in range(6)] + ["Radeon RX 9999"],
    }
)
STALE_DAY = START + dt.timedelta(weeks=8)
STALE_PRICE = 800.0


def market(trend: float, noise: float = 0.02, seed: int = 5) -> pl.DataFrame:
    """Weekly prices of c0..c5 following a common trend (log per year) plus own noise,
    and the stale GPU observed once, on STALE_DAY, at STALE_PRICE."""
    rng = np.random.default_rng(seed)
    rows = []
    weeks = (AS_OF - START).days // 7 + 1
    for i in range(6):
        own = 0.0
        for week in range(weeks):
            own += noise * rng.normal() / np.sqrt(52)
            day = START + dt.timedelta(weeks=week)
            years = (day - START).days / 365.25
            price = (500.0 + 100 * i) * np.exp(trend * years + own)
            rows.append((day, f"c{i}", "new", float(price)))
    rows.append((STALE_DAY, "stale", "new", STALE_PRICE))
    return pl.DataFrame(rows, schema=["day", "gpu_id", "market", "price_usd"], orient="row")


def truth(trend: float, day: dt.date) -> float:
    """What the stale GPU would cost on `day` if it followed its market."""
    return STALE_PRICE * np.exp(trend * (day - STALE_DAY).days / 365.25)


def stale_row(daily: pl.DataFrame, as_of: dt.date = AS_OF) -> dict:
    out = prices_today(daily, GPUS, PARAMS, as_of, "market_index")
    return out.filter((pl.col("gpu_id") == "stale") & (pl.col("market") == "new")).row(
        0, named=True
    )


@pytest.mark.parametrize("trend", [0.35, -0.35])
def test_nowcast_follows_a_rising_or_falling_market(trend):
    row = stale_row(market(trend))
    expected = truth(trend, AS_OF)
    assert row["price_method"] == "nowcast"
    # The index moved the price the market's way: within 6 % of where the market went
    # (the month of the observation is matched to the index's monthly clock).
    assert row["price_usd"] == pytest.approx(expected, rel=0.06)
    assert (row["price_usd"] > STALE_PRICE) == (trend > 0)
    assert row["price_low"] < expected < row["price_high"]
    assert "consumer new index" in row["detail"]
    sign = "+" if trend > 0 else "-"
    assert f"({sign}" in row["detail"]


def test_a_depreciation_drift_would_miss_a_rising_market():
    # The counterfactual the index fixes: a drift fitted on the cross-section of ages does
    # not see that the market rose; the index does.
    daily = market(0.35)
    walk = prices_today(daily, GPUS, PARAMS, AS_OF, "random_walk")
    walked = walk.filter(pl.col("gpu_id") == "stale")["price_usd"][0]
    indexed = stale_row(daily)["price_usd"]
    expected = truth(0.35, AS_OF)
    assert abs(np.log(indexed / expected)) < abs(np.log(walked / expected)) / 5


def test_a_thin_period_is_bridged_and_one_gpu_does_not_move_the_index():
    month = pl.col("day").dt.strftime("%Y-%m")
    # Until 2024-04 only c0 and c1 trade (fewer than MIN_MATCHED = 3 GPUs), and they double.
    # In 2025-06 only c0 is seen, at three times its price.
    daily = market(0.0).filter(
        (month >= "2024-04") | pl.col("gpu_id").is_in(["c0", "c1", "stale"]),
        (month != "2025-06") | (pl.col("gpu_id") == "c0"),
    )
    daily = daily.with_columns(
        price_usd=pl.when((month < "2024-04") & (pl.col("gpu_id") != "stale"))
        .then(pl.col("price_usd") / 2)
        .when(month == "2025-06")
        .then(pl.col("price_usd") * 3)
        .otherwise(pl.col("price_usd"))
    )
    fit = fit_indexes(monthly_series(daily), GPUS)["consumer new"]
    early = [(2024 - 1970) * 12 + m - fit.first for m in (1, 2)]
    assert fit.bridged[early].all()
    assert fit.level[early[-1]] == 0.0
    # The thin months are carried with the index's own monthly variance, not trusted.
    assert fit.cov[early[-1], early[-1]] == pytest.approx(2 * fit.tau**2)
    june = (2025 - 1970) * 12 + 5 - fit.first
    assert abs(fit.level[june + 1] - fit.level[june - 1]) < 0.05
    row = stale_row(daily)
    assert np.isfinite(row["log_sd"]) and row["log_sd"] < 1.0
    assert row["price_low"] < STALE_PRICE < row["price_high"]


def test_the_interval_widens_with_the_gap_and_past_the_index():
    daily = market(0.10)
    fits = fit_models(monthly_series(daily), GPUS)[2]
    fit = fits["consumer new"]
    origin = np.array([fit.first + 1] * 4)
    to = np.array([fit.first + 6, fit.last, fit.last + 6, fit.last + 24])
    _, var, beyond = index_change(fit, origin, to)
    assert np.all(np.diff(var) > 0)
    assert list(beyond) == [0, 0, 6, 24]
    # The nowcast's own interval: later run dates give wider intervals.
    widths = [stale_row(daily, day)["log_sd"] for day in (dt.date(2025, 1, 31), AS_OF)]
    later = stale_row(daily.filter(pl.col("day") <= dt.date(2025, 6, 30)), AS_OF)["log_sd"]
    assert widths[0] < widths[1] < later


def test_market_groups_from_catalog_names():
    names = pl.DataFrame(
        {
            "name": [
                "GeForce RTX 4090",
                "Radeon RX 7900 XTX",
                "Arc B580 Limited Edition",
                "NVIDIA TITAN V",
                "RTX A6000",
                "RTX 6000 Ada Generation",
                "RTX PRO 6000 Blackwell Workstation Edition",
                "Quadro RTX 8000",
                "Radeon PRO W7900",
                "A100 PCIe 80 GB",
                "Tesla V100 PCIe 16 GB",
                "Instinct MI300X",
                "L40S",
                "GH200 Grace Hopper Superchip (H100 GPU 96 GB HBM3)",
            ]
        }
    )
    groups = names.select(group=market_group_expr())["group"].to_list()
    assert groups == ["consumer"] * 4 + ["workstation"] * 5 + ["data center"] * 5


def test_held_out_backtest_prefers_the_index_when_the_market_moves():
    # Many stale GPUs each seen a few times in a market that rises then falls: carried with
    # the index they land near their later prices; a drift cannot know the turn.
    rng = np.random.default_rng(11)
    rows, names = [], []
    for i in range(8):
        names.append((f"g{i}", f"GeForce RTX {i}"))
        for month in range(0, 48, 1 + i % 3):
            years = month / 12
            level = 0.4 * years if years < 2 else 0.8 - 0.4 * (years - 2)
            day = dt.date(2021 + month // 12, month % 12 + 1, 15)
            price = (400 + 50 * i) * np.exp(level + 0.03 * rng.normal())
            rows.append((day, f"g{i}", "new", float(price)))
    daily = pl.DataFrame(rows, schema=["day", "gpu_id", "market", "price_usd"], orient="row")
    gpus = pl.DataFrame(names, schema=["gpu_id", "name"], orient="row")
    monthly = monthly_series(daily)
    holdout = segment_summary(holdout_backtest(monthly, gpus, 2.0))
    overall = holdout.filter((pl.col("segment") == ALL_SEGMENTS) & (pl.col("band") == "all"))
    errors = dict(zip(overall["candidate"], overall["median_ape"], strict=True))
    assert errors["market_index"] < min(v for k, v in errors.items() if k != "market_index")
    index = overall.filter(pl.col("candidate") == "market_index")
    assert index["coverage95"][0] > 85
    rolling = backtest_summary(backtest(monthly, gpus, 2.0))
    # The as-of months here are all before 2023, so the rule falls back to the rolling
    # origin's choice; with a post-2023 band it would use the held-out errors.
    assert choose_nowcast(rolling, holdout) in set(rolling["candidate"])
