"""Market consistency: street over list, discontinued cards' stale new prices, used <= new."""

import datetime as dt

import polars as pl

from model.market_consistency import choose_basis, discontinued, resolve
from model.nowcast import latest_daily
from model.parameters import ModelParameters

RUN = dt.date(2026, 9, 20)
GPUS = pl.DataFrame(
    {
        "gpu_id": ["old-card", "new-card"],
        "name": ["GeForce RTX 3080 Ti", "GeForce RTX 5080"],
        "vendor": ["nvidia", "nvidia"],
        "architecture": ["ampere", "blackwell"],
        "release_date": [dt.date(2021, 6, 3), dt.date(2025, 1, 30)],
    }
)


def _row(gpu_id, market, price, age, method):
    return {
        "gpu_id": gpu_id,
        "market": market,
        "price_usd": price,
        "age_days": age,
        "price_method": method,
    }


def test_an_older_architecture_in_the_segment_is_discontinued():
    assert discontinued(GPUS, RUN)["gpu_id"].to_list() == ["old-card"]
    # Before the successor's release nothing is discontinued.
    assert discontinued(GPUS, dt.date(2024, 1, 1)).is_empty()


def test_a_stale_nowcast_new_price_of_a_discontinued_card_is_dropped_a_fresh_one_kept():
    stale = pl.DataFrame([_row("old-card", "new", 1081.0, 198, "nowcast"),
                          _row("old-card", "used", 458.0, 75, "observed")])  # fmt: skip
    kept, dropped = resolve(stale, GPUS, RUN)
    assert kept["market"].to_list() == ["used"]
    assert dropped["reason"][0].startswith("discontinued")
    fresh = stale.with_columns(price_method=pl.lit("observed"), age_days=pl.lit(30, dtype=pl.Int64))
    kept, dropped = resolve(fresh, GPUS, RUN)
    assert sorted(kept["market"].to_list()) == ["new", "used"] and dropped.is_empty()


def test_a_current_card_keeps_its_nowcast_new_price():
    rows = pl.DataFrame([_row("new-card", "new", 1200.0, 198, "nowcast")])
    kept, _ = resolve(rows, GPUS, RUN)
    assert kept.height == 1


def test_no_used_price_above_new_after_the_rule():
    rows = pl.DataFrame([_row("new-card", "new", 3400.0, 198, "nowcast"),
                         _row("new-card", "used", 3997.0, 77, "observed"),
                         _row("other", "new", 500.0, 10, "observed"),
                         _row("other", "used", 520.0, 10, "observed")])  # fmt: skip
    kept, dropped = resolve(rows, GPUS, RUN)
    # The older side goes: the 198-day new nowcast; on a tie, the used price.
    assert sorted(dropped.select("gpu_id", "market").rows()) == [
        ("new-card", "new"),
        ("other", "used"),
    ]
    wide = kept.pivot("market", index="gpu_id", values="price_usd")
    assert wide.filter(pl.col("used") > pl.col("new")).is_empty()


def _daily(rows):
    return pl.DataFrame(
        rows, schema=["gpu_id", "market", "day", "price_usd", "sources"], orient="row"
    )


def test_a_street_price_beats_an_older_or_stale_list_price():
    daily = _daily([("a6000", "new", dt.date(2025, 8, 22), 5190.0, "keepa-amazon"),
                    ("a6000", "new", dt.date(2025, 12, 17), 4437.5, "lambda-list-price")])  # noqa: E501  # fmt: skip
    latest = latest_daily(daily, RUN)
    assert sorted(latest["basis"].to_list()) == ["list", "street"]
    chosen = choose_basis(latest, ModelParameters().price_freshness_days, RUN)
    # Both are stale: the street observation is the base, not the newer list quote.
    assert chosen.rows(named=True)[0]["price_usd"] == 5190.0
    newer_street = _daily([("a6000", "new", dt.date(2026, 6, 1), 5000.0, "amazon"),
                           ("a6000", "new", dt.date(2026, 5, 1), 4400.0, "lambda-list-price")])  # noqa: E501  # fmt: skip
    chosen = choose_basis(latest_daily(newer_street, RUN), 180, RUN)
    assert chosen["basis"].to_list() == ["street"] and chosen["price_usd"][0] == 5000.0


def test_a_fresh_list_price_is_used_over_a_stale_street_one_and_labelled():
    daily = _daily([("a6000", "new", dt.date(2025, 8, 22), 5190.0, "keepa-amazon"),
                    ("a6000", "new", dt.date(2026, 8, 1), 4437.5, "lambda-list-price")])  # noqa: E501  # fmt: skip
    chosen = choose_basis(latest_daily(daily, RUN), 180, RUN)
    assert chosen["basis"].to_list() == ["list"] and chosen["price_usd"][0] == 4437.5
