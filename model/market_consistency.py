"""Market consistency of today's prices: street over list, discontinued cards, used <= new.

Three rules (docs/methodology.md §4, "Market consistency"), applied to the per-GPU x market
rows of model/nowcast.current_prices before the `mean` market is formed:

1. **Street beats list.** A list price (a vendor's quoted price, e.g. Lambda's system
   configurator, LIST_PRICE_SOURCES) is not a transaction. Per GPU x market the newest
   street observation is the base of today's price; a list price is used only when it is
   fresh and the street one is not, or when there is no street observation at all. A price
   resting on a list price says so in its `detail`.
2. **Discontinued cards are offered used only unless seen new within the window.** A GPU is
   discontinued at the run date when its vendor has released, in the same segment
   (model/segments.py), a later architecture: one whose first GPU in the catalog came out
   after this GPU's architecture's first GPU and on or before the run date. Its `new` row is
   kept only when observed within `price_freshness_days`; a nowcast `new` price of such a
   card (the RTX 3080 Ti carried from a 2026-03 shop listing) is dropped.
3. **No used price above the new price.** Where both markets are priced and used > new, one
   of the two is not today's market: the older row is dropped (on a tie, the used one,
   since the new card is then the cheaper buy).
"""

import datetime as dt

import polars as pl

from model.segments import segment_expr

# Sources whose prices are quoted list prices, not street/sold observations.
LIST_PRICE_SOURCES = ("lambda-list-price",)


def is_list_price(sources: pl.Expr) -> pl.Expr:
    """True where every source of a daily price is a list-price source."""
    parts = sources.fill_null("").str.split(",")
    return parts.list.eval(pl.element().is_in(LIST_PRICE_SOURCES)).list.all() & (
        sources.fill_null("") != ""
    )


def choose_basis(latest: pl.DataFrame, freshness_days: int, run_date: dt.date) -> pl.DataFrame:
    """One row per GPU x market from its newest street and newest list row (`basis` column).

    `latest` holds at most one row per GPU x market x basis (`basis` 'street' or 'list').
    The list row wins only when it is fresh and the street row is not, or there is no street
    row (rule 1 of the module docstring).
    """
    age = (pl.lit(run_date) - pl.col("day")).dt.total_days()
    fresh = age <= freshness_days
    keys = ["gpu_id", "market"]
    ranked = latest.with_columns(
        _fresh_street=(fresh & (pl.col("basis") == "street")).any().over(keys),
        _has_street=(pl.col("basis") == "street").any().over(keys),
    )
    keep_list = (pl.col("basis") == "list") & (
        ~pl.col("_has_street") | (fresh & ~pl.col("_fresh_street"))
    )
    chosen = ranked.filter(keep_list | (pl.col("basis") == "street"))
    # Where a list row survived beside a street row it is the fresher one: prefer it.
    return (
        chosen.sort(pl.col("basis") == "list", descending=True)
        .group_by(keys, maintain_order=True)
        .first()
        .drop("_fresh_street", "_has_street")
        .sort(keys)
    )


def discontinued(gpus: pl.DataFrame, run_date: dt.date) -> pl.DataFrame:
    """gpu_id of every GPU whose vendor released a later architecture in its segment.

    An architecture's date is the first release date of its GPUs of that vendor and segment
    in the catalog. Empty when the catalog frame lacks vendor, architecture or release date.
    """
    needed = {"vendor", "architecture", "release_date", "name"}
    if not needed <= set(gpus.columns):
        return pl.DataFrame(schema={"gpu_id": pl.Utf8})
    group = ["vendor", "segment"]
    dated = gpus.filter(
        pl.col("architecture").is_not_null(), pl.col("release_date").is_not_null()
    ).with_columns(segment=segment_expr())
    first = dated.group_by(*group, "architecture").agg(first=pl.col("release_date").min())
    newest = (
        first.filter(pl.col("first") <= run_date).group_by(group).agg(newest=pl.col("first").max())
    )
    return (
        dated.join(first, on=[*group, "architecture"])
        .join(newest, on=group)
        .filter(pl.col("first") < pl.col("newest"))
        .select("gpu_id")
    )


def resolve(
    single: pl.DataFrame, gpus: pl.DataFrame, run_date: dt.date
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rules 2 and 3 on per-GPU x market rows; returns (kept rows, dropped rows + reason)."""
    gone = discontinued(gpus, run_date)["gpu_id"]
    stale_new = (
        (pl.col("market") == "new")
        & (pl.col("price_method") == "nowcast")
        & pl.col("gpu_id").is_in(gone.implode())
    )
    dropped_stale = single.filter(stale_new).with_columns(
        reason=pl.lit("discontinued: new price not observed within the freshness window")
    )
    rows = single.filter(~stale_new)
    pair = (
        rows.filter(pl.col("market").is_in(["new", "used"]))
        .pivot("market", index="gpu_id", values=["price_usd", "age_days"])
        .filter(pl.col("price_usd_used") > pl.col("price_usd_new"))
        if rows.filter(pl.col("market").is_in(["new", "used"]))["market"].n_unique() == 2
        else pl.DataFrame(schema={"gpu_id": pl.Utf8, "drop_market": pl.Utf8})
    )
    if "drop_market" not in pair.columns:
        pair = pair.select(
            "gpu_id",
            drop_market=pl.when(pl.col("age_days_new") > pl.col("age_days_used"))
            .then(pl.lit("new"))
            .otherwise(pl.lit("used")),
        )
    inverted = rows.join(
        pair, left_on=["gpu_id", "market"], right_on=["gpu_id", "drop_market"], how="semi"
    )
    dropped = pl.concat(
        [
            dropped_stale,
            inverted.with_columns(
                reason=pl.lit("used above new: the older of the two markets dropped")
            ),
        ]
    )
    kept = rows.join(
        pair, left_on=["gpu_id", "market"], right_on=["gpu_id", "drop_market"], how="anti"
    )
    return kept, dropped
