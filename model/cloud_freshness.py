"""Rent verdicts on live offers: which cloud offers are fresh enough to be picked.

A cloud offer is fresh on a run date when it was observed at most its window ago
(`ModelParameters.cloud_freshness_days`, by `pricing`: how the price is set, stated once per
provider in sources/cloud/providers.py). A stale offer stays in `cloud_offers`,
`cloud_perf_per_dollar` and `cloud_vs_buy`, flagged (`fresh` false, `offer_age_days`), but
it is never ranked (`rank` NULL), never a recommendation, a verdict or a headline pick: a
cheaper stale offer cannot beat a dearer fresh one, and a cell with no fresh offer says so
(`stale_candidates` gives the verdicts what it needs to say it).

Marketplace offers (vast.ai, RunPod Community Cloud) are one host's price. Each pick also
carries how many offer rows of its GPU x provider x price type stand at that price
(`listings`: one per machine on vast.ai's live API, one per region row in the condensed
catalog snapshot, one per GPU type for RunPod) and where (`locations`), so a verdict resting
on a single listing can say so (`offer_caveat`).
"""

import datetime as dt

import polars as pl

# An offer loaded before its pricing was recorded (migration 021) gets the shortest window.
UNKNOWN_PRICING = "marketplace"
# What `cheapest_offers` carries for the pick when the offers have been through
# `with_freshness` (model/cloud.py).
DEPTH_COLUMNS = ("pricing", "offer_age_days", "fresh", "listings", "locations", "reliability")
_KIND_WORDS = {"list": "list prices", "spot": "dynamic spot prices", "marketplace": "marketplace"}
# Which kinds a rent option's offers can be (on-demand is never a dynamic spot price).
_OPTION_KINDS = {
    "rent_on_demand": ("list", "marketplace"),
    "rent_spot": ("list", "spot", "marketplace"),
}


def with_freshness(offers: pl.DataFrame, windows: dict[str, int], run_date: dt.date):
    """`cloud_offers` rows with `pricing`, `offer_age_days` and `fresh` on `run_date`.

    `windows` is the run's cloud_freshness_days (pricing kind -> days). An offer observed
    after the run date is not fresh either (a run never looks ahead).
    """
    pricing = (
        pl.col("pricing").fill_null(UNKNOWN_PRICING)
        if "pricing" in offers.columns
        else pl.lit(UNKNOWN_PRICING)
    )
    reliability = [] if "reliability" in offers.columns else [pl.lit(None, dtype=pl.Float64)]
    age = (pl.lit(run_date) - pl.col("observed_at").cast(pl.Date)).dt.total_days()
    return (
        offers.with_columns(*(r.alias("reliability") for r in reliability))
        .with_columns(pricing=pricing, offer_age_days=age.cast(pl.Int32))
        .with_columns(
            fresh=pl.col("offer_age_days").is_between(
                0, pl.col("pricing").replace_strict(windows, return_dtype=pl.Int32)
            )
        )
    )


def fresh_first() -> list[pl.Expr]:
    """Sort keys that put fresh offers before stale ones (for `cheapest_offers`)."""
    return [pl.col("fresh").not_()]


def depth_aggregations() -> list[pl.Expr]:
    """Per group of offers sorted pick-first: the pick's freshness and its listings.

    `listings` counts the group's offers at the pick's price and freshness; `locations`
    lists their regions; `reliability` is the lowest stated host reliability among them.
    """
    same = (pl.col("usd_per_gpu_hour") == pl.col("usd_per_gpu_hour").first()) & (
        pl.col("fresh") == pl.col("fresh").first()
    )
    regions = pl.col("region").filter(same).drop_nulls().unique().sort()
    return [
        pl.col("pricing").first(),
        pl.col("offer_age_days").first(),
        pl.col("fresh").first(),
        same.sum().cast(pl.Int32).alias("listings"),
        regions.str.join("; ").alias("locations"),
        pl.col("reliability").filter(same).min(),
    ]


def fresh_only(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows that may be picked: fresh ones (all rows of a frame without `fresh`)."""
    if "fresh" not in frame.columns:
        return frame
    return frame.filter(pl.col("fresh").fill_null(False))


def stale_only(frame: pl.DataFrame) -> pl.DataFrame:
    """The rows left out of every pick for their age (none for a frame without `fresh`)."""
    if "fresh" not in frame.columns:
        return frame.clear()
    return frame.filter(~pl.col("fresh").fill_null(False))


def window_text(windows: dict, option: str) -> str:
    """'list prices 180 days, marketplace 30 days' for the kinds an option's offers can be."""
    return ", ".join(
        f"{_KIND_WORDS[kind]} {int(windows[kind])} days"
        for kind in _OPTION_KINDS[option]
        if kind in windows
    )


def stale_candidates(
    stale: pl.DataFrame,
    memory: pl.DataFrame | None,
    hours: float,
    budgets: tuple[float, ...],
    tiers: tuple[float, ...],
) -> pl.DataFrame:
    """Per verdict cell, the stale offers that would have competed had they been fresh.

    `stale` holds eligible, stale cloud_perf_per_dollar rows of the rent price types with
    their `gpu_count` and verdict `option`; `memory` is gpu_id, memory_gb (None: memory
    cells get no count). Returns workload, kind, limit, option, stale_offers and
    stale_newest_days (the youngest such offer's age).
    """
    if "offer_age_days" not in stale.columns:  # offers never dated: nothing is stale
        stale = stale.clear().with_columns(offer_age_days=pl.lit(None, dtype=pl.Int32))
    base = stale.select(
        "workload", "option", "gpu_id", "offer_age_days", "usd_per_gpu_hour", "gpu_count"
    )
    headline = base.with_columns(kind=pl.lit("headline"), limit=pl.lit(0.0))
    budget = (
        base.join(pl.DataFrame({"limit": [float(b) for b in budgets]}), how="cross")
        .filter(pl.col("usd_per_gpu_hour") * pl.col("gpu_count") * hours <= pl.col("limit"))
        .with_columns(kind=pl.lit("budget"))
    )
    parts = [headline, budget]
    if memory is not None:
        parts.append(
            base.join(memory.select("gpu_id", "memory_gb"), on="gpu_id")
            .join(pl.DataFrame({"limit": [float(t) for t in tiers]}), how="cross")
            .filter(pl.col("memory_gb") >= pl.col("limit"))
            .drop("memory_gb")
            .with_columns(kind=pl.lit("memory"))
        )
    columns = ["workload", "kind", "limit", "option", "offer_age_days"]
    return (
        pl.concat([p.select(columns) for p in parts])
        .group_by("workload", "kind", "limit", "option")
        .agg(
            stale_offers=pl.len().cast(pl.Int32),
            stale_newest_days=pl.col("offer_age_days").min(),
        )
    )


def offer_caveat() -> pl.Expr:
    """What a rent pick's price rests on when it is a marketplace host's (NULL otherwise).

    One listing: the single host (or region row) behind the price, which its host can
    reprice or withdraw at any time; several: how many and where.
    """
    where = (
        pl.when(pl.col("locations").fill_null("") != "")
        .then(pl.format(" in {}", pl.col("locations")))
        .otherwise(pl.lit(""))
    )
    reliability = (
        pl.when(pl.col("reliability").is_not_null())
        .then(pl.format(", host reliability {}", pl.col("reliability").round(3)))
        .otherwise(pl.lit(""))
    )
    single = pl.format(
        "rests on a single marketplace listing ({} {}{}{}): one host's price, which it can "
        "change or withdraw at any time",
        pl.col("provider"),
        pl.col("instance_type"),
        where,
        reliability,
    )
    several = pl.format(
        "marketplace price: {} listings at this price{}{}",
        pl.col("listings"),
        where,
        reliability,
    )
    market = pl.col("option").str.starts_with("rent") & (pl.col("pricing") == "marketplace")
    return (
        pl.when(market & (pl.col("listings").fill_null(1) <= 1))
        .then(single)
        .when(market)
        .then(several)
        .otherwise(pl.lit(None, dtype=pl.Utf8))
    )
