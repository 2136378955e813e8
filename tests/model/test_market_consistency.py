"""Market consistency: street over list, discontinued cards' stale new prices, used <= new."""

import datetime as dt

import polars as pl

from model.market_consistency import choose_basis, discontinued, generations, resolve
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


LINES = pl.DataFrame(
    {
        "gpu_id": ["a100", "h100", "l40s", "b200", "rtx-4090", "rtx-5090", "rtx-a4000",
                   "rtx-6000-ada", "rtx-pro-6000"],
        "name": ["A100 PCIe 80 GB", "H100 PCIe 80 GB", "L40S", "B200 (HGX B200 SXM)",
                 "GeForce RTX 4090", "GeForce RTX 5090", "RTX A4000", "RTX 6000 Ada Generation",
                 "RTX PRO 6000 Blackwell Workstation Edition"],
        "vendor": ["nvidia"] * 9,
        "architecture": ["ampere", "hopper", "ada", "blackwell", "ada", "blackwell", "ampere",
                         "ada", "blackwell"],
        "release_date": [dt.date(2020, 5, 14), dt.date(2022, 3, 22), dt.date(2023, 8, 8),
                         dt.date(2024, 3, 18), dt.date(2022, 10, 12), dt.date(2025, 1, 30),
                         dt.date(2021, 4, 12), dt.date(2022, 12, 3), dt.date(2025, 3, 18)],
    }
)  # fmt: skip


def test_hopper_and_ada_are_one_generation():
    gens = dict(generations(LINES).select("architecture", "generation").iter_rows())
    assert gens["hopper"] == gens["ada"] < gens["blackwell"]
    assert gens["ampere"] < gens["hopper"]


def test_a_data_center_part_keeps_its_new_price_beside_one_newer_generation():
    gone = dict(discontinued(LINES, RUN).iter_rows())
    # H100 and L40S are sold new beside the B200; the RTX 6000 Ada beside the RTX PRO 6000.
    assert not {"h100", "l40s", "b200", "rtx-6000-ada"} & set(gone)
    # Two newer generations (Hopper/Ada, Blackwell): the A100 and the RTX A4000 are retired.
    assert "data-center line" in gone["a100"] and "workstation line" in gone["rtx-a4000"]
    # One consumer generation later, on sale for over CONSUMER_SELL_THROUGH_DAYS: retired.
    assert "consumer line" in gone["rtx-4090"]
    rows = pl.DataFrame([_row("h100", "new", 19794.77, 443, "nowcast"),
                         _row("a100", "new", 11411.55, 277, "nowcast"),
                         _row("a100", "used", 9000.0, 277, "observed")])  # fmt: skip
    kept, dropped = resolve(rows, LINES, RUN)
    assert sorted(kept.select("gpu_id", "market").rows()) == [("a100", "used"), ("h100", "new")]
    reason = dropped.row(0, named=True)
    assert (reason["gpu_id"], reason["rule"]) == ("a100", "discontinued")
    assert "not within the window" in reason["reason"] and "blackwell" in reason["reason"]


def test_a_consumer_card_is_not_retired_while_its_successor_is_new():
    # 100 days after the RTX 5090's release the RTX 4090 is still sold new (old stock).
    early = dt.date(2025, 1, 30) + dt.timedelta(days=100)
    assert "rtx-4090" not in set(discontinued(LINES, early)["gpu_id"])
    assert "rtx-4090" in set(discontinued(LINES, early + dt.timedelta(days=100))["gpu_id"])


def test_used_above_new_keeps_the_fresher_and_records_why():
    rows = pl.DataFrame([_row("rtx-5090", "new", 3399.88, 198, "nowcast"),
                         _row("rtx-5090", "used", 3996.68, 77, "observed"),
                         _row("h100", "new", 20000.0, 30, "observed"),
                         _row("h100", "used", 25000.0, 200, "nowcast")])  # fmt: skip
    kept, dropped = resolve(rows, LINES, RUN)
    assert sorted(kept.select("gpu_id", "market").rows()) == [("h100", "new"), ("rtx-5090", "used")]
    assert set(dropped["rule"]) == {"used_above_new"}
    assert dropped.filter(pl.col("gpu_id") == "rtx-5090")["reason"][0].startswith(
        "used $3997.0 (77 d old) above new $3400.0 (198 d old)"
    )
