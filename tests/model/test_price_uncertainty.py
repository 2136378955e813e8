"""The interval of an observed price from its evidence (model/price_uncertainty.py)."""

import dataclasses
import datetime as dt
import math

import numpy as np
import polars as pl
import pytest

from model.nowcast_backtest import prices_today
from model.parameters import ModelParameters
from model.price_uncertainty import (
    FALLBACK_LOG_SD,
    PRIOR_DF,
    d2,
    evidence_log_sd,
    listing_spreads,
    median_variance_factor,
)
from model.uncertainty import price_replicates

RUN = dt.date(2026, 9, 20)
GPUS = pl.DataFrame(
    {
        "gpu_id": ["c1", "c2", "c3", "w1"],
        "name": ["GeForce RTX A", "GeForce RTX B", "Radeon RX C", "RTX A4000"],
    }
)
Z = 1.959964


def _day(gpu_id, market, n, low, high, sources="ebay-sold-uk", day=dt.date(2026, 7, 1)):
    return {
        "day": day,
        "gpu_id": gpu_id,
        "market": market,
        "price_usd": (low * high) ** 0.5,
        "n_observations": n,
        "price_min_usd": low,
        "price_max_usd": high,
        "sources": sources,
    }


def _spreads(sd=0.05):
    """A pool where three consumer GPUs' used listings spread by `sd` (range = d2(5) sd)."""
    high = 1000.0 * math.exp(sd * d2(5))
    rows = [_day(g, "used", 5, 1000.0, high) for g in ("c1", "c2", "c3")]
    return listing_spreads(pl.DataFrame(rows), GPUS, RUN)


def test_d2_is_the_expected_range_of_normal_draws():
    assert d2(1) == 0.0
    assert d2(2) == pytest.approx(2 / math.sqrt(math.pi), abs=1e-4)
    assert [round(d2(n), 3) for n in (3, 5, 10)] == [1.693, 2.326, 3.078]
    # f(n): the median's variance factor, 1 for one draw, about pi/(2n) for many.
    factor = pl.select(a=median_variance_factor(pl.lit(1)), b=median_variance_factor(pl.lit(1000)))
    assert factor.row(0) == pytest.approx((1.0, math.pi / 2000), rel=0.01)


def test_the_pool_is_per_line_and_market_with_its_level():
    spreads = _spreads(0.05)
    cell = spreads.filter((pl.col("line") == "consumer") & (pl.col("market") == "used"))
    assert cell.row(0, named=True)["pooled_log_sd"] == pytest.approx(0.05, rel=1e-6)
    assert cell["level"][0] == "consumer used" and cell["n_gpus"][0] == 3
    # Workstation used has no GPU of its own: the market over all lines; new has nothing.
    work = spreads.filter((pl.col("line") == "workstation") & (pl.col("market") == "used"))
    assert work["level"][0] == "all lines, used"
    new = spreads.filter(pl.col("market") == "new")["level"].unique().to_list()
    assert new == ["all lines and markets"]


def test_repeated_points_of_one_offer_do_not_count_as_listings():
    # Keepa's same-day points of one Amazon product: tight, but not a spread of listings.
    rows = [_day(g, "new", 6, 1000.0, 1001.0, "keepa-amazon") for g in ("c1", "c2", "c3")]
    spreads = listing_spreads(pl.DataFrame(rows), GPUS, RUN)
    assert set(spreads["level"]) == {"fallback"}
    latest = pl.DataFrame([_day("c1", "new", 6, 1000.0, 1001.0, "keepa-amazon")])
    out = evidence_log_sd(latest, spreads, GPUS)
    assert out["evidence_log_sd"][0] == pytest.approx(FALLBACK_LOG_SD)  # n counts as 1


def test_one_sale_gets_the_pooled_listing_spread_never_zero_width():
    spreads = _spreads(0.05)
    latest = pl.DataFrame([_day("c1", "used", 1, 2399.85, 2399.85)])
    out = evidence_log_sd(latest, spreads, GPUS).row(0, named=True)
    # One sale is one draw from the listing spread: its SE is the pooled SD itself.
    assert out["evidence_log_sd"] == pytest.approx(0.05, rel=1e-6)
    assert out["listing_log_sd"] == pytest.approx(0.05, rel=1e-6)
    assert "1 independent listing" in out["spread_note"]


def test_ten_tight_listings_are_narrower_than_one_sale_and_shrunk_to_the_pool():
    spreads = _spreads(0.05)
    one = evidence_log_sd(pl.DataFrame([_day("c1", "used", 1, 700.0, 700.0)]), spreads, GPUS)
    ten = evidence_log_sd(pl.DataFrame([_day("c1", "used", 10, 695.0, 705.0)]), spreads, GPUS)
    own = math.log(705 / 695) / d2(10)
    shrunk = math.sqrt((PRIOR_DF * 0.05**2 + 9 * own**2) / (PRIOR_DF + 9))
    assert ten["listing_log_sd"][0] == pytest.approx(shrunk, rel=1e-6)
    expected = shrunk * math.sqrt(math.pi / (18 + math.pi))
    assert ten["evidence_log_sd"][0] == pytest.approx(expected, rel=1e-6)
    assert 0 < ten["evidence_log_sd"][0] < one["evidence_log_sd"][0] / 4


def _daily():
    """Observed days: one eBay UK sale of c1 (used) and Amazon listings of c2 (new)."""
    pool = [_day(g, "used", 5, 1000.0, 1000.0 * math.exp(0.05 * d2(5)), day=dt.date(2021, 7, 1))
            for g in ("c1", "c2", "c3")]  # fmt: skip
    return pl.DataFrame(
        [
            *pool,
            _day("c1", "used", 1, 2399.85, 2399.85, day=dt.date(2026, 7, 3)),
            _day("c2", "new", 6, 3259.97, 3589.0, "amazon", day=dt.date(2026, 4, 15)),
        ]
    )


def test_current_prices_have_no_zero_width_interval_and_say_where_they_come_from():
    today = prices_today(_daily(), GPUS, ModelParameters(), RUN, "random_walk")
    single = today.filter(pl.col("market") != "mean")
    assert single.filter(pl.col("price_high") <= pl.col("price_low")).is_empty()
    sale = today.filter((pl.col("gpu_id") == "c1") & (pl.col("market") == "used")).row(
        0, named=True
    )
    assert sale["log_sd"] == pytest.approx(0.05, rel=1e-3)
    assert sale["price_low"] == pytest.approx(2399.85 * math.exp(-Z * 0.05), abs=0.01)
    assert sale["price_high"] == pytest.approx(2399.85 * math.exp(Z * 0.05), abs=0.01)
    assert (sale["source_country"], sale["source_currency"]) == ("GB", "GBP")
    amazon = today.filter(pl.col("gpu_id") == "c2").filter(pl.col("market") == "new")
    assert amazon.select("source_country", "source_currency").row(0) == ("US", "USD")
    assert amazon["log_sd"][0] < sale["log_sd"]


def test_the_bootstrap_draws_each_price_with_its_published_log_sd():
    today = prices_today(_daily(), GPUS, ModelParameters(), RUN, "random_walk")
    params = dataclasses.replace(ModelParameters(), bootstrap_replicates=4000)
    no_observations = pl.DataFrame(
        schema={
            "gpu_id": pl.Utf8,
            "market": pl.Utf8,
            "observed_at": pl.Datetime,
            "price_usd": pl.Float64,
        }  # fmt: skip
    )
    reps = price_replicates(no_observations, today, params)
    sale = reps.filter((pl.col("gpu_id") == "c1") & (pl.col("market") == "used"))
    logs = np.log(sale["price_usd"].to_numpy() / 2399.85)
    assert logs.std() == pytest.approx(0.05, rel=0.05)
    assert abs(np.median(logs)) < 0.005
