"""What changed since the previous published version (issue 13).

A published version is immutable, and each one carries its tables under `data/`, so the
comparison reads the previous version's own files: what readers saw, not what the
warehouse holds now. Compared: verdicts (by budget and memory), ranks of 1-GPU systems,
the run's prices beyond their noise, GPUs newly priced or in the catalog, and inputs that
went stale or failed.
"""

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from warehouse.versions import is_version, version_key

# A price move is news when it exceeds both this share and 1.96 x the combined spread of
# the two prices' intervals (observed: the day's lowest-highest kept observation, taken as
# a 95 % range; nowcast: its 95 % interval).
PRICE_MOVE_MIN = 0.05
RANK_WATCH = 10  # rank moves are listed for GPUs ranked this high or better in either version
_Z95 = 1.959964
# The tables a version keeps for the next one to compare against (under data/).
SNAPSHOT_TABLES = ("perf_per_dollar", "current_prices", "gpus", "input_freshness", "verdicts")


@dataclass(frozen=True)
class Snapshot:
    """The tables 'what changed' compares, for one version (empty frames when absent)."""

    version: str
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)

    def get(self, name: str) -> pl.DataFrame:
        """A table of the snapshot, or an empty frame when the version lacks it."""
        return self.tables.get(name, pl.DataFrame())


@dataclass(frozen=True)
class Changes:
    """Differences between the previous version and this one."""

    previous_version: str
    verdicts: pl.DataFrame
    ranks: pl.DataFrame
    prices: pl.DataFrame
    gpus: pl.DataFrame
    stale: pl.DataFrame
    missing: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """True when nothing changed (or nothing could be compared)."""
        return all(
            f.is_empty() for f in (self.verdicts, self.ranks, self.prices, self.gpus, self.stale)
        )


def previous_version(site_dir: Path | None, version: str) -> Path | None:
    """The newest published version folder before `version` that has a `data/` folder.

    "Before" is by date, then number (warehouse/versions.py): `2026-10-07.2` follows
    `2026-10-07`, and `2026-10-14` follows `2026-10-07.2`, whatever the dates.
    """
    if site_dir is None or not Path(site_dir).is_dir():
        return None
    key = version_key(version)
    earlier = sorted(
        (
            p
            for p in Path(site_dir).iterdir()
            if p.is_dir() and is_version(p.name) and version_key(p.name) < key
        ),
        key=lambda p: version_key(p.name),
        reverse=True,
    )
    return next((p for p in earlier if (p / "data").is_dir()), None)


def read_snapshot(folder: Path) -> Snapshot:
    """The comparison tables a published version kept in its `data/` folder."""
    tables = {}
    for name in SNAPSHOT_TABLES:
        path = folder / "data" / f"{name}.parquet"
        if path.is_file():
            tables[name] = pl.read_parquet(path)
    return Snapshot(folder.name, tables)


def _has(frame: pl.DataFrame, *columns: str) -> bool:
    return not frame.is_empty() and set(columns) <= set(frame.columns)


def verdict_changes(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Verdicts whose GPU (or system size) changed: workload, kind, limit, option, before, after."""
    keys = ["workload", "kind", "limit", "option"]
    cols = [*keys, "gpu_id", "system_gpus"]
    if not (_has(before, *cols) and _has(after, *cols)):
        return pl.DataFrame(schema={**{k: pl.Utf8 for k in keys}, "before": pl.Utf8})

    def label(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.select(
            *keys,
            pl.when(pl.col("gpu_id").is_null())
            .then(pl.lit("nothing"))
            .when(pl.col("option").str.starts_with("buy") & (pl.col("kind") == "budget"))
            .then(pl.format("{}× {}", pl.col("system_gpus"), pl.col("gpu_id")))
            .otherwise(pl.col("gpu_id"))
            .alias("pick"),
        )

    return (
        label(before)
        .rename({"pick": "before"})
        .join(label(after).rename({"pick": "after"}), on=keys, how="full", coalesce=True)
        .filter(pl.col("before").fill_null("") != pl.col("after").fill_null(""))
        .sort(keys)
    )


def rank_changes(
    before: pl.DataFrame, after: pl.DataFrame, watch: int = RANK_WATCH
) -> pl.DataFrame:
    """1-GPU ranks (new and used) that moved, for GPUs in the top `watch` of either version."""
    cols = ["workload", "system_gpus", "market", "gpu_id", "rank"]
    if not (_has(before, *cols) and _has(after, *cols)):
        return pl.DataFrame()

    def ranks(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(
            (pl.col("system_gpus") == 1) & pl.col("market").is_in(["new", "used"])
        ).select("workload", "market", "gpu_id", "rank")

    keys = ["workload", "market", "gpu_id"]
    return (
        ranks(before)
        .rename({"rank": "rank_before"})
        .join(ranks(after).rename({"rank": "rank_after"}), on=keys, how="full", coalesce=True)
        .filter(
            (pl.min_horizontal("rank_before", "rank_after") <= watch)
            & (
                # A GPU that moves by one because another left is no news: moves of two
                # or more places, into or out of the top 3 or the watched ranks are.
                ((pl.col("rank_before") - pl.col("rank_after")).abs() >= 2)
                | pl.col("rank_before").is_null()
                | pl.col("rank_after").is_null()
                | ((pl.col("rank_before") <= 3) != (pl.col("rank_after") <= 3))
                | ((pl.col("rank_before") <= watch) != (pl.col("rank_after") <= watch))
            )
        )
        .with_columns(move=pl.col("rank_before") - pl.col("rank_after"))
        .sort("workload", "market", "rank_after", "gpu_id", nulls_last=True)
    )


def _log_sd() -> pl.Expr:
    ok = (pl.col("price_low") > 0) & (pl.col("price_high") >= pl.col("price_low"))
    width = (pl.col("price_high").log() - pl.col("price_low").log()) / (2 * _Z95)
    return pl.when(ok).then(width).otherwise(0.0).fill_null(0.0)


def price_changes(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """The run's new and used prices that moved beyond their noise (see PRICE_MOVE_MIN)."""
    cols = ["gpu_id", "market", "price_usd", "price_low", "price_high", "price_method"]
    if not (_has(before, *cols) and _has(after, *cols)):
        return pl.DataFrame()

    def prices(frame: pl.DataFrame) -> pl.DataFrame:
        return frame.filter(pl.col("market").is_in(["new", "used"])).select(
            "gpu_id", "market", "price_usd", "price_method", sd=_log_sd()
        )

    keys = ["gpu_id", "market"]
    joined = prices(before).join(prices(after), on=keys, suffix="_after")
    change = pl.col("price_usd_after").log() - pl.col("price_usd").log()
    noise = pl.max_horizontal(
        pl.lit(PRICE_MOVE_MIN),
        _Z95 * (pl.col("sd") ** 2 + pl.col("sd_after") ** 2).sqrt(),
    )
    return (
        joined.with_columns(log_change=change, noise=noise)
        .filter(pl.col("log_change").abs() > pl.col("noise"))
        .select(
            *keys,
            before="price_usd",
            after="price_usd_after",
            change_pct=(pl.col("log_change").exp() - 1) * 100,
            noise_pct=(pl.col("noise").exp() - 1) * 100,
            method_before="price_method",
            method_after="price_method_after",
        )
        .sort(pl.col("change_pct").abs(), descending=True)
    )


def gpu_changes(before: Snapshot, after: Snapshot) -> pl.DataFrame:
    """GPUs new to the catalog, newly priced or no longer priced: gpu_id, change."""
    rows: list[tuple[str, str]] = []
    old_gpus, new_gpus = before.get("gpus"), after.get("gpus")
    if _has(old_gpus, "gpu_id") and _has(new_gpus, "gpu_id"):
        for gpu in sorted(set(new_gpus["gpu_id"]) - set(old_gpus["gpu_id"])):
            rows.append((gpu, "new in the catalog"))
    old_p, new_p = before.get("current_prices"), after.get("current_prices")
    if _has(old_p, "gpu_id", "market") and _has(new_p, "gpu_id", "market"):

        def priced(frame: pl.DataFrame) -> set[tuple[str, str]]:
            part = frame.filter(pl.col("market").is_in(["new", "used"]))
            return set(part.select("gpu_id", "market").iter_rows())

        old, new = priced(old_p), priced(new_p)
        for gpu, market in sorted(new - old):
            rows.append((gpu, f"newly priced ({market})"))
        for gpu, market in sorted(old - new):
            rows.append((gpu, f"no longer priced ({market})"))
    return pl.DataFrame(rows, schema={"gpu_id": pl.Utf8, "change": pl.Utf8}, orient="row")


_SEVERITY = {"ok": 0, "stale": 1, "failed": 2}


def stale_changes(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Inputs whose status worsened: ok -> stale or failed, stale -> failed.

    An input the previous version did not have counts as having been ok.
    """
    cols = ["input", "source", "status"]
    if not (_has(before, *cols) and _has(after, *cols)):
        return pl.DataFrame()
    keys = ["input", "source"]

    def severity(column: str) -> pl.Expr:
        return pl.col(column).replace_strict(_SEVERITY, default=0, return_dtype=pl.Int32)

    return (
        after.select(*keys, "status", "detail")
        .join(before.select(*keys, status_before="status"), on=keys, how="left")
        .with_columns(pl.col("status_before").fill_null("ok"))
        .filter(severity("status") > severity("status_before"))
        .select(*keys, "status_before", "status", "detail")
        .sort(keys)
    )


def compare(before: Snapshot, after: Snapshot) -> Changes:
    """Everything that changed from `before` (the previous version) to `after`."""
    missing = tuple(name for name in SNAPSHOT_TABLES if name not in before.tables)
    return Changes(
        previous_version=before.version,
        verdicts=verdict_changes(before.get("verdicts"), after.get("verdicts")),
        ranks=rank_changes(before.get("perf_per_dollar"), after.get("perf_per_dollar")),
        prices=price_changes(before.get("current_prices"), after.get("current_prices")),
        gpus=gpu_changes(before, after),
        stale=stale_changes(before.get("input_freshness"), after.get("input_freshness")),
        missing=missing,
    )
