"""The label beside every price: how many observations, where, which currency."""

import polars as pl

from reports.content.prices import (
    consistency_table,
    evidence_label,
    priced_with_evidence,
    unpriced_reasons,
    with_price_evidence,
)


def test_one_uk_sale_says_so():
    label = evidence_label(1, "ebay-sold-uk", "GBP")
    assert label == "1 sale, eBay UK, GBP→USD"
    assert priced_with_evidence(2399.85, label) == "$2,400 (1 sale, eBay UK, GBP→USD)"
    assert evidence_label(6, "amazon", "USD") == "6 listings, Amazon US, USD"
    assert evidence_label(3, "keepa-amazon", None) == "3 price points, Amazon US via Keepa, USD"
    assert evidence_label(7, "amazon,ebay-sold-uk", "GBP,USD") == (
        "7 observations, Amazon US + eBay UK, GBP→USD, USD"
    )
    assert evidence_label(2, "new-shop", None) == "2 observations, new-shop, currency unknown"


def test_labels_join_on_gpu_and_market():
    prices = pl.DataFrame(
        {
            "gpu_id": ["rtx-4090", "rtx-4090"],
            "market": ["new", "used"],
            "n_observations": [6, 1],
            "sources": ["amazon", "ebay-sold-uk"],
            "source_currency": ["USD", "GBP"],
        }
    )
    rows = pl.DataFrame({"gpu_id": ["rtx-4090", "rtx-4090", None], "market": ["used", None, None]})
    out = with_price_evidence(rows, prices)["price_evidence"].to_list()
    assert out == ["1 sale, eBay UK, GBP→USD", None, None]


def test_the_unpriced_table_says_why():
    drops = pl.DataFrame(
        {
            "gpu_id": ["rtx-3080-ti"],
            "market": ["new"],
            "price_usd": [1081.35],
            "price_day": ["2026-03-06"],
            "age_days": [198],
            "price_method": ["nowcast"],
            "reason": ["discontinued (consumer line): ..."],
        }
    )
    history = pl.DataFrame({"gpu_id": ["k80"], "day": ["2019-01-01"]})
    prices = pl.DataFrame({"gpu_id": ["x"]})
    table = unpriced_reasons(["k80", "never", "rtx-3080-ti", "x"], prices, drops, history, 730)
    why = {row[0].text: row[1].text for row in table.rows}
    assert why["k80"] == "last observed on sale 2019-01-01, over 730 days ago"
    assert why["never"].startswith("never observed")
    assert why["rtx-3080-ti"].startswith("left out by market consistency: discontinued")
    assert why["x"].startswith("priced, but no performance")
    assert consistency_table(drops).rows[0][4].text.startswith("discontinued")
