"""The nowcast back-tests over a bounded window, each origin computed once (backtest_window)."""

import datetime as dt
import os

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from model.backtest_window import (
    Fingerprints,
    by_origin,
    complete_months,
    month_of_years,
)
from model.nowcast import backtest, backtest_cutoffs, backtest_summary, monthly_series
from model.nowcast_backtest import (
    as_of_months,
    holdout_backtest,
    segment_summary,
    windowed_backtests,
    windowed_summaries,
)
from pipeline.defs.model.backtest_store import FilePredictionStore

GPUS = pl.DataFrame(
    {
        "gpu_id": [f"g{i}" for i in range(6)] + ["w0", "w1", "w2"],
        "name": [f"GeForce RTX {i}" for i in range(6)] + ["RTX A4000", "RTX A5000", "RTX A6000"],
    }
)


def monthly_prices(months: int = 40, start: dt.date = dt.date(2021, 1, 1)) -> pl.DataFrame:
    """Monthly points of nine GPUs, some seen every month and some every second or third."""
    rng = np.random.default_rng(5)
    rows = []
    for i, gpu in enumerate(GPUS["gpu_id"]):
        for month in range(0, months, 1 + i % 3):
            day = dt.date(start.year + (start.month - 1 + month) // 12,
                          (start.month - 1 + month) % 12 + 1, 10)  # fmt: skip
            price = (500 + 60 * i) * np.exp(0.01 * month + 0.04 * rng.normal())
            rows.append((day, gpu, "new", float(price)))
            rows.append((day + dt.timedelta(days=5), gpu, "new", float(price) * 1.01))
    daily = pl.DataFrame(rows, schema=["day", "gpu_id", "market", "price_usd"], orient="row")
    return monthly_series(daily)


class MemoryStore:
    """A PredictionStore in a dict, counting what was read and written."""

    def __init__(self) -> None:
        self.frames: dict[str, pl.DataFrame] = {}
        self.writes = 0

    def get(self, key: str) -> pl.DataFrame | None:
        return self.frames.get(key)

    def put(self, key: str, rows: pl.DataFrame) -> None:
        self.frames[key] = rows
        self.writes += 1


def test_complete_months_leave_out_the_running_month():
    monthly = monthly_prices(months=12)
    complete = complete_months(monthly, dt.date(2021, 12, 31))
    assert complete["month"].max() == dt.date(2021, 11, 1)
    assert complete.height == monthly.filter(pl.col("month") < dt.date(2021, 12, 1)).height
    # On the first day of a month the month before is complete.
    assert complete_months(monthly, dt.date(2022, 1, 1)).height == monthly.height


def test_month_of_years_bounds_the_month_of_every_point_up_to_t():
    for day in (dt.date(2021, 1, 31), dt.date(2021, 2, 1), dt.date(2024, 2, 29)):
        t = (day - dt.date(1970, 1, 1)).days / 365.25
        month = (day.year - 1970) * 12 + day.month - 1
        assert month <= month_of_years(t) <= month + 1


def test_fingerprint_changes_with_the_points_up_to_a_month_only():
    monthly = monthly_prices()
    base = Fingerprints(monthly, GPUS)
    june = (2021 - 1970) * 12 + 5
    later = monthly.with_columns(
        price_usd=pl.when(pl.col("month") == dt.date(2022, 3, 1))
        .then(pl.col("price_usd") * 1.5)
        .otherwise(pl.col("price_usd"))
    )
    earlier = monthly.with_columns(
        price_usd=pl.when((pl.col("month") == dt.date(2021, 2, 1)) & (pl.col("gpu_id") == "g0"))
        .then(pl.col("price_usd") + 1e-9)
        .otherwise(pl.col("price_usd"))
    )
    assert Fingerprints(later, GPUS).upto(june) == base.upto(june)
    assert Fingerprints(later, GPUS).upto(june + 12) != base.upto(june + 12)
    assert Fingerprints(earlier, GPUS).upto(june) != base.upto(june)
    # A new point (a backfilled month) changes every later fingerprint.
    extra = pl.DataFrame(
        {
            "gpu_id": ["g1"],
            "market": ["used"],
            "month": [dt.date(2021, 3, 1)],
            "price_usd": [300.0],
            "t": [51.2],
        }  # fmt: skip
    )
    assert Fingerprints(pl.concat([monthly, extra]), GPUS).upto(june) != base.upto(june)
    # Catalog rows count only for GPUs with a point up to the month.
    renamed = GPUS.with_columns(
        name=pl.when(pl.col("gpu_id") == "g0").then(pl.lit("Tesla T4")).otherwise("name")
    )
    assert Fingerprints(monthly, renamed).upto(june) != base.upto(june)
    newcomer = pl.concat([GPUS, pl.DataFrame({"gpu_id": ["z9"], "name": ["GeForce RTX 9090"]})])
    assert Fingerprints(monthly, newcomer).upto(june) == base.upto(june)


def test_by_origin_computes_only_what_the_store_lacks():
    store = MemoryStore()
    schema = {"origin": pl.Int64, "value": pl.Float64}
    calls = []

    def compute(todo):
        calls.append(list(todo))
        return pl.DataFrame({"origin": todo, "value": [o * 1.5 for o in todo]}, schema=schema)

    keys = {o: f"k{o}" for o in (1, 2, 3)}
    rows, computed = by_origin([1, 2], keys, store, compute, "origin", schema)
    assert computed == 2 and rows["value"].to_list() == [1.5, 3.0]
    rows, computed = by_origin([1, 2, 3], keys, store, compute, "origin", schema)
    assert computed == 1 and calls == [[1, 2], [3]]
    assert rows["origin"].to_list() == [1, 2, 3]
    # An origin without predictions is stored too (empty), so it is not computed again.
    empty = {o: f"e{o}" for o in (7,)}
    by_origin([7], empty, store, lambda todo: pl.DataFrame(schema=schema), "origin", schema)
    assert store.frames["e7"].is_empty()
    _, computed = by_origin([7], empty, store, compute, "origin", schema)
    assert computed == 0


@pytest.fixture(scope="module")
def complete() -> pl.DataFrame:
    return complete_months(monthly_prices(), dt.date(2024, 5, 20))


def test_windowed_backtests_equal_the_full_backtests_cold_and_warm(complete):
    full_rolling = backtest_summary(backtest(complete, GPUS, 1.0))
    full_holdout = segment_summary(holdout_backtest(complete, GPUS, 1.0))
    store = MemoryStore()
    for computed in (True, False):
        rolling, holdout, counts = windowed_backtests(complete, GPUS, 1.0, store)
        assert_frame_equal(backtest_summary(rolling), full_rolling)
        assert_frame_equal(segment_summary(holdout), full_holdout)
        n = counts["rolling_origins"] + counts["holdout_origins"]
        assert counts["rolling_computed"] + counts["holdout_computed"] == (n if computed else 0)
    assert counts["rolling_origins"] == len(backtest_cutoffs(complete)) > 1
    assert counts["holdout_origins"] == len(as_of_months(complete)) > 1


def test_windowed_backtests_keep_the_last_origins(complete):
    rolling, holdout, counts = windowed_backtests(complete, GPUS, 1.0, origins=2)
    assert counts["rolling_origins"] == counts["holdout_origins"] == 2
    assert sorted(set(rolling["cutoff"])) == backtest_cutoffs(complete)[-2:]
    assert sorted(set(holdout["as_of"])) == as_of_months(complete)[-2:]


def test_a_new_month_recomputes_only_the_origins_that_see_it():
    monthly = monthly_prices(months=40)
    store = MemoryStore()
    before = complete_months(monthly, dt.date(2024, 3, 15))  # up to 2024-02
    windowed_backtests(before, GPUS, 1.0, store)
    after = complete_months(monthly, dt.date(2024, 4, 15))  # 2024-03 ends
    _, _, counts = windowed_backtests(after, GPUS, 1.0, store)
    # Cut-offs within a year (max age) of 2024-03 see it; older ones are taken as stored.
    newest = (dt.date(2024, 3, 31) - dt.date(1970, 1, 1)).days / 365.25
    open_cutoffs = [c for c in backtest_cutoffs(after) if c + 1.0 >= newest - 1 / 12]
    assert 0 < counts["rolling_computed"] <= len(open_cutoffs) < counts["rolling_origins"]
    # 2024-03 is no as-of month (every 6 months from 2023-01): nothing held out to redo.
    assert counts["holdout_computed"] == 0


def test_file_store_round_trip_unreadable_entries_and_pruning(tmp_path):
    store = FilePredictionStore(tmp_path / "cache")
    assert store.get("a") is None
    rows = pl.DataFrame({"x": [1.0, 2.0]})
    store.put("a", rows)
    assert_frame_equal(store.get("a"), rows)
    (tmp_path / "cache" / "b.parquet").write_bytes(b"not parquet")
    assert store.get("b") is None  # recomputed and rewritten by the caller
    old = tmp_path / "cache" / "a.parquet"
    stamp = old.stat().st_mtime - 30 * 86400
    os.utime(old, (stamp, stamp))
    assert store.prune(keep_days=14) == 1
    assert store.get("a") is None and store.get("b") is None


def test_windowed_summaries_are_stored_for_an_unchanged_window(complete):
    store = MemoryStore()
    rolling, holdout, counts = windowed_summaries(complete, GPUS, 1.0, store)
    assert counts["rolling_computed"] == counts["rolling_origins"]
    writes = store.writes
    again, again_holdout, counts = windowed_summaries(complete, GPUS, 1.0, store)
    assert store.writes == writes and counts["rolling_computed"] == 0
    assert_frame_equal(again, rolling)
    assert_frame_equal(again_holdout, holdout)
    assert_frame_equal(holdout, segment_summary(holdout_backtest(complete, GPUS, 1.0)))
