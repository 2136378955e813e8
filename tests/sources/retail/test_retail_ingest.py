import datetime as dt

import polars as pl
import pytest

from model.listings import classify_listings
from model.prices import drop_counts
from sources.archive import Archive
from sources.retail import snapshot
from sources.retail.ingest import LISTING_SCHEMA, parse_responses

DAY = dt.datetime(2026, 4, 15, 12, 0)
RATES = pl.DataFrame(
    {"day": [dt.date(2026, 1, 1)], "currency": ["EUR"], "usd_per_unit": [1.1]},
)


def listing(**values):
    base = {
        "observed_at": DAY,
        "source": "ebay",
        "title": "RTX 4090",
        "price": 1500.0,
        "price_high": None,
        "currency": "USD",
        "url": "https://www.ebay.com/itm/1",
        "listing_id": "1",
        "condition": "Pre-Owned",
        "sponsored": False,
        "sold": True,
        "sold_date": DAY.date(),
        "best_offer_accepted": False,
        "price_missing_reason": None,
        "archive_sha256": "x",
        "citation": "c",
        "extra": None,
    }
    return {**base, **values}


def fake_match(title):
    if "block" in title:
        return None, "accessory: water block"
    return "rtx-4090", "matched: rtx 4090"


def fake_condition(text, title):
    return {
        "Pre-Owned": "used",
        "Brand New": "new",
        "Refurbished": "refurbished",
        "For parts": "for_parts",
    }.get(text)


def classify(rows):
    frame = pl.DataFrame(rows, schema=LISTING_SCHEMA)
    return classify_listings(frame, fake_match, fake_condition, RATES)


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        ({}, None),
        ({"title": "EK water block for RTX 4090"}, "unmatched:accessory"),
        ({"condition": "For parts"}, "for_parts"),
        ({"price": None, "price_missing_reason": "no price shown"}, "no_price"),
        ({"price_high": 1700.0}, "price_range"),
        ({"sold": False}, "not_sold"),
        ({"best_offer_accepted": True}, "best_offer_hidden"),
        ({"currency": "GBP"}, "no_fx_rate"),
        # First reason wins: an accessory without a price is an accessory.
        ({"title": "water block", "price": None}, "unmatched:accessory"),
    ],
)
def test_drop_reasons(values, reason):
    assert classify([listing(**values)])["drop_reason"].to_list() == [reason]


def test_markets_and_usd():
    out = classify(
        [
            listing(condition="Brand New", currency="EUR", price=1000.0),
            listing(condition="Refurbished"),
            listing(condition=None, source="amazon"),
            listing(condition=None, source="ebay"),
        ]
    )
    assert out["market"].to_list() == ["new", "used", "new", "used"]
    assert out["price_usd"].to_list() == [1100.0, 1500.0, 1500.0, 1500.0]


def test_drop_counts_include_outliers_per_source():
    rows = classify(
        [listing(price=p) for p in (1500.0, 1510.0, 1490.0, 1505.0, 99.0)] + [listing(sold=False)]
    )
    counts = drop_counts(rows.with_columns(pl.col("price_usd")))
    assert sorted(counts.select("reason", "n").iter_rows()) == [("not_sold", 1), ("outlier", 1)]


class FakeResponse:
    def __init__(self, status, source, content=b""):
        self.url = "https://www.example.com/x"
        self.status = status
        self.fetched_at = DAY.replace(tzinfo=dt.UTC)
        self.source = source
        self.sha256 = "0" * 64
        self._content = content

    def read(self):
        return self._content


def test_error_pages_are_recorded_not_parsed():
    pages, listings = parse_responses([FakeResponse(503, "amazon"), FakeResponse(200, "nope")])
    assert pages["outcome"].to_list() == ["http_error", "parse_error"]
    assert pages["day"].to_list() == [DAY.date(), DAY.date()]
    assert listings.is_empty()


def test_bundled_archive_is_in_sync_with_the_facts(tmp_path):
    fresh = snapshot.rebuild(tmp_path)
    bundled = Archive(snapshot.ARCHIVE_DIR)
    shipped = sorted(r.sha256 for d in bundled.days() for r in bundled.responses(d))
    assert sorted(fresh["sha256"].to_list()) == shipped, (
        "re-render with `python -m sources.retail.snapshot`"
    )


def test_archived_body_shorter_than_its_content_length_is_a_parse_error(tmp_path):
    page = (
        b'<html><body><ul class="srp-results"><li class="s-item">'
        b'<div class="s-item__title">RTX 4090</div><span class="s-item__price">$369.99</span>'
        b"</li></ul></body></html>"
    )
    archive = Archive(tmp_path)
    when = DAY.replace(tzinfo=dt.UTC)
    cut = page[: page.index(b"$369.99") + 3]
    archive.store(
        "https://www.ebay.com/sch/i.html", 200, cut, when, "ebay", {"Content-Length": "999"}
    )
    archive.store("https://www.ebay.com/sch/i.html?x", 200, page, when, "ebay", {})
    pages, listings = parse_responses(archive.responses(DAY.date()))
    assert pages["outcome"].to_list() == ["parse_error", "ok"]
    assert "truncated body" in pages["detail"][0]
    assert listings["price"].to_list() == [369.99]
