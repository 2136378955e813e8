"""Daily prices refreshed one month at a time equal those of one read of the whole range."""

import datetime as dt

import polars as pl

from model.prices import daily_prices, drop_counts
from pipeline.defs.ingest import daily
from pipeline.defs.ingest.daily import batched, month_chunks, refresh_daily_prices
from warehouse.db import connect


def test_month_chunks_cut_a_range_at_month_ends():
    chunks = list(month_chunks(dt.date(2024, 1, 30), dt.date(2024, 3, 2)))
    assert chunks == [
        (dt.date(2024, 1, 30), dt.date(2024, 1, 31)),
        (dt.date(2024, 2, 1), dt.date(2024, 2, 29)),
        (dt.date(2024, 3, 1), dt.date(2024, 3, 2)),
    ]
    assert list(month_chunks(dt.date(2024, 5, 7), dt.date(2024, 5, 7))) == [
        (dt.date(2024, 5, 7), dt.date(2024, 5, 7))
    ]
    assert list(month_chunks(dt.date(2024, 5, 8), dt.date(2024, 5, 7))) == []


def test_months_are_joined_into_pieces_of_at_most_the_row_limit():
    d = dt.date
    months = [
        (d(2024, 1, 30), d(2024, 1, 31), 40),
        (d(2024, 2, 1), d(2024, 2, 29), 50),
        (d(2024, 3, 1), d(2024, 3, 31), 200),  # over the limit alone: a piece of its own
        (d(2024, 4, 1), d(2024, 4, 30), 0),
        (d(2024, 5, 1), d(2024, 5, 2), 90),
    ]
    assert batched(months, 100) == [
        (d(2024, 1, 30), d(2024, 2, 29)),
        (d(2024, 3, 1), d(2024, 3, 31)),
        (d(2024, 4, 1), d(2024, 5, 2)),
    ]
    assert batched(months, 1000) == [(d(2024, 1, 30), d(2024, 5, 2))]
    assert batched([], 10) == []


def observations(first: dt.date, days: int) -> pl.DataFrame:
    """Five listings a day per GPU x market over `days` days, one an outlier, one dropped."""
    rows = []
    for d in range(days):
        day = first + dt.timedelta(days=d)
        for gpu in ("rtx-4090", "rtx-3090"):
            for market, source in (("new", "amazon"), ("used", "ebay")):
                for i in range(5):
                    price = 1000.0 + d + 3 * i + (5000 if i == 4 else 0)
                    rows.append(
                        {
                            "observed_at": dt.datetime.combine(day, dt.time(12, i)),
                            "source": source,
                            "market": market,
                            "gpu_id": gpu,
                            "title": f"{gpu} {i}",
                            "price": price,
                            "currency": "USD",
                            "price_usd": price,
                            "url": f"https://example.com/{gpu}/{day}/{i}",
                            "listing_id": f"{gpu}-{day}-{i}",
                            "drop_reason": "lot" if i == 0 and d % 3 == 0 else None,
                        }
                    )
    return pl.DataFrame(rows)


def test_a_range_over_months_refreshes_as_one_read_would(tmp_path, monkeypatch):
    monkeypatch.setattr(daily, "CHUNK_ROWS", 150)  # pieces of one or two months here
    con = connect(tmp_path / "w.duckdb")
    first = dt.date(2024, 1, 20)
    obs = observations(first, 50)
    con.register("obs", obs)
    con.sql("INSERT INTO price_observations BY NAME SELECT * FROM obs")
    last = first + dt.timedelta(days=49)
    rows, drops = refresh_daily_prices(con, first, last, 3.0)
    assert rows.equals(daily_prices(obs.filter(pl.col("drop_reason").is_null()), 3.0))
    assert drops.equals(drop_counts(obs, 3.0))
    stored = con.sql("SELECT * EXCLUDE (sources) FROM gpu_prices_daily ORDER BY ALL").pl()
    assert stored.height == 50 * 4 and stored["n_dropped"].sum() == 200
    assert con.sql("SELECT count(DISTINCT reason) FROM price_drops").fetchall() == [(2,)]
    con.close()
