"""The nowcast back-tests over a bounded window of origins, each origin computed once.

Both back-tests (the rolling origin, model/nowcast.backtest; the held-out GPU,
model/nowcast_backtest.holdout_backtest) ask how well a nowcast made at an origin (a
cut-off, an as-of month) predicted prices that came later. Three rules keep a night's cost
bounded by the window, not by the length of the history (docs/methodology.md, "The
back-tests' window"):

- **Complete months only.** The running month's median moves every night until the month
  ends, so it is neither a target nor an as-of month (`complete_months`). Once a month is
  over, nothing a back-test computed from it changes.
- **The last BACKTEST_ORIGINS origins** of each back-test (8 years at one origin every
  6 months): the figures answer "how well did the nowcast do over the recent years", and
  an origin ten years back (a market before mining, before the data centre boom) says
  little about today's nowcasts.
- **Each origin's predictions are a pure function of the months it can see** (a cut-off:
  the points up to `max_age_years` after it; an as-of month T: the points up to T), so
  they are stored under a fingerprint of exactly those points, the catalog rows of the
  GPUs in them, the back-test's settings and the library versions (`origin_key`), and a
  night computes only the origins whose fingerprint is new: none on most nights, one
  as-of month when a new one ends, and the few cut-offs still within `max_age_years` of
  the newest complete month when a month ends.

The store is anything with `get(key) -> DataFrame | None` and `put(key, frame)` (the
pipeline keeps the frames as Parquet files next to its other caches); `NO_STORE`
computes everything, as the back-tests did before the window.
"""

import datetime as dt
import hashlib
import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
import polars as pl

from model import market_index

# The most recent origins each back-test evaluates: 16 at one origin every 6 months is
# 8 years, more than the bundled snapshot's 13 (its prices start in 2018-08), so its
# figures are those of every origin.
BACKTEST_ORIGINS = 16
# Part of every stored origin's key: bump it when a change to the back-tests' code changes
# what an origin's predictions are, so no stored prediction of the old code is reused.
CODE_VERSION = "1"
_EPOCH = dt.date(1970, 1, 1)
_YEAR_DAYS = 365.25


class PredictionStore(Protocol):
    """Where each origin's predictions are kept between nights."""

    def get(self, key: str) -> pl.DataFrame | None:
        """The frame stored under `key`, or None."""

    def put(self, key: str, rows: pl.DataFrame) -> None:
        """Store `rows` under `key`."""


class _NoStore:
    def get(self, key: str) -> pl.DataFrame | None:
        return None

    def put(self, key: str, rows: pl.DataFrame) -> None:
        return None


NO_STORE: PredictionStore = _NoStore()


def complete_months(monthly: pl.DataFrame, run_date: dt.date) -> pl.DataFrame:
    """The monthly points of the months that ended before the run date's month."""
    return monthly.filter(pl.col("month") < run_date.replace(day=1))


def month_of_years(t: float) -> int:
    """An upper bound on the month (since 1970-01) of any point whose `t` is at most `t`.

    `t` is in years since 1970-01-01; the month of the day after it, so rounding never
    leaves a point out.
    """
    day = _EPOCH + dt.timedelta(days=math.ceil(t * _YEAR_DAYS) + 1)
    return (day.year - 1970) * 12 + day.month - 1


class Fingerprints:
    """Digests of the monthly points up to each month, and of the catalog rows they use.

    `upto(m)` chains one digest per month (gpu_id, market, month and the exact bits of
    price_usd and t of every point, in a fixed order), so it changes when any point up to
    month m changes, appears or goes, and not when a later one does.
    """

    def __init__(self, monthly: pl.DataFrame, gpus: pl.DataFrame) -> None:
        self.gpus = gpus.sort("gpu_id")
        frame = monthly.select(
            "gpu_id", "market", "price_usd", "t", m=market_index.month_number(pl.col("month"))
        ).sort("m", "gpu_id", "market")
        self.months: list[int] = []
        self.chain: list[str] = []
        self.ids: list[frozenset[str]] = []
        digest, seen = hashlib.sha256(b"monthly points").hexdigest(), frozenset()
        for (m,), rows in frame.partition_by("m", as_dict=True, maintain_order=True).items():
            h = hashlib.sha256(digest.encode())
            h.update(str(m).encode())
            h.update("\x1f".join(rows["gpu_id"]).encode())
            h.update("\x1f".join(rows["market"]).encode())
            h.update(rows["price_usd"].cast(pl.Float64).to_numpy().tobytes())
            h.update(rows["t"].cast(pl.Float64).to_numpy().tobytes())
            digest, seen = h.hexdigest(), seen | set(rows["gpu_id"])
            self.months.append(int(m))
            self.chain.append(digest)
            self.ids.append(seen)

    def upto(self, month: int) -> str:
        """The digest of every point up to `month` and of the catalog rows of their GPUs."""
        i = int(np.searchsorted(np.array(self.months, dtype=np.int64), month, side="right"))
        if i == 0:
            return "no points"
        used = self.gpus.filter(pl.col("gpu_id").is_in(list(self.ids[i - 1])))
        catalog = hashlib.sha256(used.write_csv().encode()).hexdigest()
        return f"{self.chain[i - 1]}:{catalog}"


def origin_key(kind: str, origin: float | int, settings: tuple, fingerprint: str) -> str:
    """The store key of one origin's predictions (a hex digest)."""
    text = repr((CODE_VERSION, pl.__version__, np.__version__, kind, origin, settings))
    return hashlib.sha256(f"{text}|{fingerprint}".encode()).hexdigest()


def by_origin(
    origins: list,
    keys: dict,
    store: PredictionStore,
    compute: Callable[[list], pl.DataFrame],
    column: str,
    schema: dict,
) -> tuple[pl.DataFrame, int]:
    """The predictions of `origins` and how many origins were computed.

    Stored origins are read; the others are computed in one call (`compute(missing)`) and
    stored one frame per origin. The frames come back in origin order.
    """
    found = {o: store.get(keys[o]) for o in origins}
    missing = [o for o in origins if found[o] is None]
    if missing:
        fresh = compute(missing)
        for o in missing:
            rows = fresh.filter(pl.col(column) == o) if fresh.height else fresh.clear()
            rows = rows.select(list(schema)).cast(schema)
            store.put(keys[o], rows)
            found[o] = rows
    frames = [found[o].cast(schema) for o in origins]
    return (pl.concat(frames) if frames else pl.DataFrame(schema=schema)), len(missing)
