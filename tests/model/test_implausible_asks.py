"""Implausible asks: placeholder prices set aside, real (even uniformly high) markets kept."""

import datetime as dt

import polars as pl
import pytest

from model.implausible_asks import (
    ASK_FACTOR,
    IMPLAUSIBLE_ASK,
    flag_implausible_asks,
    set_aside_implausible_asks,
)
from model.prices import daily_prices, drop_counts
from sources.bundled import CURATED_SOURCES, DATA_DIR, read_fx_rates, read_price_facts, to_usd


def rows(*spec: tuple[str, str, str, str, float]) -> pl.DataFrame:
    """Observations from (day, source, market, gpu_id, price_usd) tuples."""
    return pl.DataFrame(
        [
            {
                "observed_at": dt.datetime.fromisoformat(day),
                "source": source,
                "market": market,
                "gpu_id": gpu,
                "price": usd,
                "currency": "USD",
                "price_usd": usd,
            }
            for day, source, market, gpu, usd in spec
        ]
    )


def test_one_placeholder_ask_among_normal_ones_is_set_aside_with_its_reason():
    normal = [("2026-10-05", "gpu-prices-gr", "new", "g", p) for p in (600.0, 640.0, 700.0)]
    frame = rows(*normal, ("2026-10-07", "gpu-prices-gr", "new", "g", 1900.0))
    marked, report = set_aside_implausible_asks(frame)
    assert marked.filter(pl.col("drop_reason") == IMPLAUSIBLE_ASK)["price_usd"].to_list() == [
        1900.0
    ]
    assert marked["drop_reason"].null_count() == 3
    assert report.height == 1
    assert "3.17x the lowest new ask for the GPU in GR within 3 days ($600" in report["why"][0]
    # The daily price then rests on the real asks, and the set-aside row is counted.
    daily = daily_prices(marked.filter(pl.col("drop_reason").is_null()))
    # (the median of the real asks' day; no day priced by the placeholder alone).
    assert daily.select("day", "price_usd").rows() == [(dt.date(2026, 10, 5), 640.0)]
    counts = drop_counts(marked)
    assert counts.filter(pl.col("reason") == IMPLAUSIBLE_ASK)["n"].to_list() == [1]


def test_a_uniformly_high_market_is_kept():
    # An RTX 5090 in a shortage: every ask 2.5-4.8x the $1,999 launch price, none 3x another.
    asks = [3500.0, 4200.0, 5200.0, 6900.0, 9600.0]
    frame = rows(*[("2026-10-06", "gpu-prices-gr", "new", "rtx-5090", p) for p in asks])
    assert flag_implausible_asks(frame)["implausible_ask"].null_count() == len(asks)


def test_only_same_country_new_asks_within_the_window_are_references():
    high = ("2026-10-07", "gpu-prices-gr", "new", "g", 2000.0)
    elsewhere = [
        ("2026-10-07", "keepa-amazon", "new", "g", 500.0),  # another country (US)
        ("2026-09-30", "gpu-prices-gr", "new", "g", 500.0),  # 7 days earlier
        ("2026-10-07", "gpu-prices-gr", "used", "g", 500.0),  # the used market
        ("2026-10-07", "quoted-street-price-de", "new", "g", 500.0),  # a quote, not an ask
    ]
    assert flag_implausible_asks(rows(high, *elsewhere))["implausible_ask"].null_count() == 5
    near = rows(high, ("2026-10-04", "gpu-prices-gr-daily-min", "new", "g", 500.0))
    assert flag_implausible_asks(near)["implausible_ask"].null_count() == 1


def test_sales_and_used_rows_are_never_set_aside():
    frame = rows(
        ("2021-09-09", "keepa-amazon", "new", "g", 300.0),
        ("2021-09-09", "ebay-sold-dataset", "new", "g", 3000.0),  # a sale, not an ask
        ("2021-09-09", "gpu-prices-gr", "used", "h", 100.0),
        ("2021-09-09", "gpu-prices-gr", "used", "h", 900.0),
    )
    assert flag_implausible_asks(frame)["implausible_ask"].null_count() == 4


def test_the_factor_is_a_strict_bound():
    at = rows(
        ("2026-10-07", "gpu-prices-gr", "new", "g", 100.0),
        ("2026-10-07", "gpu-prices-gr", "new", "g", 100.0 * ASK_FACTOR),
    )
    assert flag_implausible_asks(at)["implausible_ask"].null_count() == 2


@pytest.fixture(scope="module")
def bundled_new_daily() -> pl.DataFrame:
    """Daily new prices of the bundled curated history after the rule, in USD."""
    prices = DATA_DIR / "prices"
    facts = read_price_facts(prices, None).filter(pl.col("source").is_in(CURATED_SOURCES))
    usd = to_usd(facts, read_fx_rates(prices / "fx_rates.csv"), prices)
    marked, report = set_aside_implausible_asks(usd)
    daily = daily_prices(marked.filter(pl.col("drop_reason").is_null()))
    return daily.filter(pl.col("market") == "new"), report


def test_bundled_rx_7800_xt_is_priced_below_the_faster_rx_7900_xtx(bundled_new_daily):
    daily, report = bundled_new_daily
    # Only the two placeholder RX 7800 XT asks of the Greek shops are set aside.
    assert sorted(report["price"].to_list()) == [1885.9, 2096.08]
    assert set(report["gpu_id"]) == {"rx-7800-xt"}
    latest = (
        daily.filter(pl.col("day") <= dt.date(2026, 10, 7))
        .sort("day")
        .group_by("gpu_id")
        .last()
        .select("gpu_id", "day", "price_usd")
    )
    price = dict(latest.select("gpu_id", "price_usd").iter_rows())
    assert price["rx-7800-xt"] < price["rx-7700-xt"] * 1.5
    assert price["rx-7800-xt"] < price["rx-7900-xt"] < price["rx-7900-xtx"]
    # The RTX 5090's shortage asks (up to EUR 9,965.61) still decide its price.
    assert price["rtx-5090"] > 2 * 1999.0
