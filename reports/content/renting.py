"""How a rented price is shown: its age, its freshness and, for a marketplace, its depth.

Every rent list and verdict says how old the offer is; a marketplace offer (vast.ai, RunPod
Community Cloud) also says how many listings stand at its price and where. Only fresh
offers (model/cloud_freshness.py) are listed or ranked; the stale ones stay in the
`cloud_perf_per_dollar` table, flagged, and each list says how many it left out.
"""

import polars as pl

from model.cloud_freshness import fresh_only, stale_only


def age_expr() -> pl.Expr:
    """'2026-08-26, 25 d old' (the offer's day and its age on the run date)."""
    return pl.format("{}, {} d old", pl.col("offer_day").cast(pl.Utf8), pl.col("offer_age_days"))


def market_expr() -> pl.Expr:
    """'marketplace: 1 listing (Hong Kong, HK, AS)' for a marketplace offer, else 'list'."""
    where = (
        pl.when(pl.col("locations").fill_null("") != "")
        .then(pl.format(" ({})", pl.col("locations")))
        .otherwise(pl.lit(""))
    )
    reliability = (
        pl.when(pl.col("reliability").is_not_null())
        .then(pl.format(", reliability {}", pl.col("reliability").round(3)))
        .otherwise(pl.lit(""))
    )
    listings = pl.col("listings").fill_null(1)
    count = pl.format(
        "{} listing{}",
        listings,
        pl.when(listings == 1).then(pl.lit("")).otherwise(pl.lit("s")),
    )
    return (
        pl.when(pl.col("pricing") == "marketplace")
        .then(pl.format("marketplace: {}{}{}", count, where, reliability))
        .otherwise(pl.col("pricing").fill_null("list").replace({"spot": "dynamic spot"}))
    )


def with_offer_text(frame: pl.DataFrame) -> pl.DataFrame:
    """cloud_perf_per_dollar rows with `offer_age` and `market` strings for a table."""
    for column, kind in (
        ("offer_age_days", pl.Int32),
        ("pricing", pl.Utf8),
        ("listings", pl.Int32),
        ("locations", pl.Utf8),
        ("reliability", pl.Float64),
    ):
        if column not in frame.columns:  # a run from before migration 021
            frame = frame.with_columns(pl.lit(None, dtype=kind).alias(column))
    return frame.with_columns(offer_age=age_expr(), market=market_expr())


def rent_price_line(row: dict) -> str:
    """A rent verdict's price: $/GPU-h, provider, instance size, offer age, who sets it."""
    count = row["gpu_count"] or 1
    instance = f"{count}-GPU instance" if count > 1 else "1 GPU"
    line = (
        f"${row['usd_per_gpu_hour']:.2f}/GPU-h at {row['provider']} ({instance}), offer "
        f"{row['age_days']} d old"
    )
    if row.get("pricing") == "marketplace":
        listings = row.get("listings") or 1
        where = f" in {row['locations']}" if row.get("locations") else ""
        line += f"; marketplace, {listings} listing{'' if listings == 1 else 's'}{where}"
    return line


def best_rent_offers(cloud_perf: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's best on-demand and spot offer per workload, ranked among fresh offers.

    A GPU with only stale offers keeps its best stale one, unranked (`rank` NULL); `n` is
    the number of GPUs ranked in its workload and price type.
    """
    rent = cloud_perf.filter(pl.col("price_type").is_in(["on_demand", "spot"]))
    fresh = "fresh" in rent.columns
    order = [pl.col("fresh").not_()] if fresh else []
    best = (
        rent.sort(
            *order,
            pl.col("perf_per_dollar"),
            "provider",
            descending=[False] * len(order) + [True, False],
        )
        .group_by("gpu_id", "workload", "price_type", maintain_order=True)
        .first()
    )
    ranked = pl.col("fresh") if fresh else pl.lit(True)
    return best.with_columns(
        rank=pl.when(ranked)
        .then(pl.col("perf_per_dollar"))
        .rank("min", descending=True)
        .over("workload", "price_type")
        .cast(pl.Int32),
        n=ranked.sum().over("workload", "price_type"),
    ).sort("workload", "price_type")


def rank_text(row: dict) -> str:
    """'2 of 31', or why a GPU's rent offer is not ranked (its age)."""
    if row.get("rank") is None:
        return f"not ranked: offer {row.get('offer_age_days')} d old, past its window"
    return f"{row['rank']} of {row['n']}"


def top_fresh(cloud_perf: pl.DataFrame, k: int) -> pl.DataFrame:
    """The k best fresh offers, best first, with their offer text."""
    return with_offer_text(
        fresh_only(cloud_perf).sort("perf_per_dollar", "provider", descending=[True, False]).head(k)
    )


def stale_note(cloud_perf: pl.DataFrame, parameters: dict) -> str | None:
    """One sentence on the offers left out of the lists for their age (None if none)."""
    stale = stale_only(cloud_perf)
    if stale.is_empty():
        return None
    offers = stale.select("gpu_id", "provider", "price_type").unique()
    by_provider = (
        stale.group_by("provider")
        .agg(pl.col("offer_day").max(), pl.col("offer_age_days").min())
        .sort("provider")
    )
    parts = ", ".join(
        f"{p} (newest {d}, {a} d old)"
        for p, d, a in by_provider.select("provider", "offer_day", "offer_age_days").rows()
    )
    windows = parameters.get("cloud_freshness_days") or {}
    rule = ", ".join(f"{kind} {days} days" for kind, days in windows.items())
    return (
        f"*Left out for their age*: {offers.height} GPU × provider × price-type offers are "
        f"older than their freshness window ({rule}): {parts}. They stay in "
        "`cloud_perf_per_dollar` with `fresh` false and no rank, and never enter a verdict."
    )
