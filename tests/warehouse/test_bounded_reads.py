"""Shared reads bounded by the run, not the history (issue 26 item 8): same rows as before."""

import datetime as dt

import duckdb
import pytest

from warehouse.reads import read_latest_offers

# The read as it was (a correlated query over every offer): the definition to match.
REFERENCE = (
    "SELECT * FROM cloud_offers c WHERE CAST(observed_at AS DATE) = ("
    " SELECT max(CAST(d.observed_at AS DATE)) FROM cloud_offers d"
    " WHERE d.provider = c.provider AND CAST(d.observed_at AS DATE) <= ?)"
)


@pytest.fixture
def offers() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.sql(
        "CREATE TABLE cloud_offers (observed_at TIMESTAMP, provider VARCHAR, gpu_id VARCHAR,"
        " usd_per_gpu_hour DOUBLE)"
    )
    rows = []
    start = dt.datetime(2024, 1, 1, 2, 0)
    for day in range(400):
        at = start + dt.timedelta(days=day)
        rows += [(at, "daily", "h100", 2.0 + day / 1000), (at, "daily", "a100", 1.0)]
        if day % 30 == 0:  # a provider seen monthly, late in the day
            rows.append((at + dt.timedelta(hours=21), "monthly", "h100", 2.5))
    rows.append((start, "gone", "v100", 0.5))  # seen once, long before any run date
    con.executemany("INSERT INTO cloud_offers VALUES (?, ?, ?, ?)", rows)
    return con


@pytest.mark.parametrize(
    "run_date",
    [dt.date(2024, 1, 1), dt.date(2024, 3, 15), dt.date(2024, 12, 31), dt.date(2026, 1, 1)],
)
def test_latest_offers_are_each_providers_newest_day_on_or_before_the_run(offers, run_date):
    expected = offers.sql(REFERENCE, params=[run_date]).pl()
    got = read_latest_offers(offers, run_date)
    assert got.equals(expected)  # same rows, same (table) order
    assert set(got["provider"]) == {"daily", "monthly", "gone"}
    assert got["observed_at"].dt.date().max() <= run_date


def test_latest_offers_before_any_offer_are_empty(offers):
    assert read_latest_offers(offers, dt.date(2023, 12, 31)).is_empty()
