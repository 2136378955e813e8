"""Market consistency of today's prices: street over list, discontinued cards, used <= new.

Three rules (docs/methodology.md §4, "Market consistency"), applied to the per-GPU x market
rows of model/nowcast.current_prices before the `mean` market is formed:

1. **Street beats list.** A list price (a vendor's quoted price, e.g. Lambda's system
   configurator, LIST_PRICE_SOURCES) is not a transaction. Per GPU x market the newest
   street observation is the base of today's price; a list price is used only when it is
   fresh and the street one is not, or when there is no street observation at all. A price
   resting on a list price says so in its `detail`.
2. **Discontinued cards are offered used only unless seen new within the window.** Whether
   a GPU is still made depends on its product line (model/product_lines.py): a consumer
   card is discontinued once a later generation of its vendor's consumer cards has been on
   sale for CONSUMER_SELL_THROUGH_DAYS; a workstation or data-center part once two later
   generations of its vendor's line are out (`discontinued`). Its `new` row is kept only
   when observed within `price_freshness_days`; a nowcast `new` price of such a card (the
   RTX 3080 Ti carried from a 2026-03 shop listing) is dropped, with its reason.
3. **No used price above the new price.** Where both markets are priced and used > new, one
   of the two is not today's market: the older row is dropped (on a tie, the used one,
   since the new card is then the cheaper buy).

Every dropped row is returned with its rule and reason (`resolve`); the current_prices
asset stores them in `price_consistency` and the site's "GPUs without a price" section
says why.
"""

import datetime as dt

import polars as pl

from model.product_lines import product_line_expr
from sources.price_origins import LIST_PRICE_SOURCES

# Sources whose prices are quoted list prices, not street/sold observations.
# Architectures of a vendor first released within this many days of a generation's first
# architecture belong to that generation (Hopper and Ada: 182 days apart; AMD's CDNA 1 and
# CDNA 2, MI100 and MI250: 357 days apart, two generations).
GENERATION_GAP_DAYS = 270
# A consumer card is retired once its successor generation has been on sale this long:
# the shops' old stock is gone within about two quarters (docs/methodology.md §4).
CONSUMER_SELL_THROUGH_DAYS = 182
# Workstation and data-center parts stay on sale new beside one newer generation.
PRO_LATER_GENERATIONS = 2


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


def generations(gpus: pl.DataFrame) -> pl.DataFrame:
    """vendor, architecture, its first release (vendor-wide) and its generation number.

    Architectures of one vendor first released within GENERATION_GAP_DAYS of the
    generation's first architecture are one generation (NVIDIA's Hopper, 2022-03, and Ada,
    2022-09: the H100 and the L40S are contemporaries, not successor and predecessor).
    """
    dated = gpus.filter(pl.col("architecture").is_not_null(), pl.col("release_date").is_not_null())
    first = (
        dated.group_by("vendor", "architecture")
        .agg(arch_first=pl.col("release_date").min())
        .sort("vendor", "arch_first", "architecture")
    )
    rows = []
    for (vendor,), part in first.group_by("vendor", maintain_order=True):
        generation, start = -1, None
        for architecture, day in part.select("architecture", "arch_first").iter_rows():
            if start is None or (day - start).days > GENERATION_GAP_DAYS:
                generation, start = generation + 1, day
            rows.append((vendor, architecture, day, generation))
    return pl.DataFrame(
        rows,
        schema={
            "vendor": pl.Utf8,
            "architecture": pl.Utf8,
            "arch_first": pl.Date,
            "generation": pl.Int64,
        },
        orient="row",
    )


def discontinued(gpus: pl.DataFrame, run_date: dt.date) -> pl.DataFrame:
    """gpu_id and why, for every GPU whose maker has moved on in its product line.

    Per vendor x product line (model/product_lines.py), a later generation counts once a GPU
    of it in that line was released (in the catalog) by the run date:

    - consumer: one later generation released more than CONSUMER_SELL_THROUGH_DAYS before
      the run date (consumer cards are retired within months of their successor);
    - workstation and data center: PRO_LATER_GENERATIONS (2) later generations released by
      the run date (these are sold new for years beside their successor: the H100 beside
      the B200, the RTX 6000 Ada beside the RTX PRO 6000 Blackwell).

    Empty when the catalog frame lacks name, vendor, architecture or release date.
    """
    needed = {"vendor", "architecture", "release_date", "name"}
    if not needed <= set(gpus.columns) or gpus.is_empty():
        return pl.DataFrame(schema={"gpu_id": pl.Utf8, "why": pl.Utf8})
    dated = (
        gpus.filter(pl.col("architecture").is_not_null(), pl.col("release_date").is_not_null())
        .with_columns(line=product_line_expr())
        .join(generations(gpus), on=["vendor", "architecture"])
    )
    consumer = pl.col("line") == "consumer"
    cutoff = (
        pl.when(consumer)
        .then(pl.lit(run_date - dt.timedelta(days=CONSUMER_SELL_THROUGH_DAYS)))
        .otherwise(pl.lit(run_date))
    )
    # Each vendor x line x generation's first release in that line.
    released = dated.group_by("vendor", "line", "generation").agg(
        line_first=pl.col("release_date").min(),
        # Ties (two architectures released the same day): the first by name.
        successor=pl.col("architecture").sort_by("release_date", "architecture").first(),
    )
    later = (
        dated.select("gpu_id", "vendor", "line", "generation")
        .join(released, on=["vendor", "line"], suffix="_later")
        .filter(pl.col("generation_later") > pl.col("generation"))
        .filter(pl.col("line_first") <= cutoff)
        .group_by("gpu_id", "line")
        .agg(
            n_later=pl.col("generation_later").n_unique(),
            # The newest later generation's; ties (same first release): the last by name.
            successor=pl.col("successor").sort_by("line_first", "successor").last(),
            since=pl.col("line_first").max(),
        )
    )
    needed_later = pl.when(pl.col("line") == "consumer").then(1).otherwise(PRO_LATER_GENERATIONS)
    return (
        later.filter(pl.col("n_later") >= needed_later)
        .select(
            "gpu_id",
            why=pl.format(
                "discontinued ({} line): {} later generation(s), the newest {} from {}",
                pl.col("line").str.replace("_", "-"),
                pl.col("n_later"),
                pl.col("successor"),
                pl.col("since"),
            ),
        )
        .sort("gpu_id")
    )


DROP_SCHEMA = {
    "gpu_id": pl.Utf8,
    "market": pl.Utf8,
    "price_usd": pl.Float64,
    "price_day": pl.Date,
    "age_days": pl.Int32,
    "price_method": pl.Utf8,
    "sources": pl.Utf8,
    "rule": pl.Utf8,
    "reason": pl.Utf8,
}


def _drop_rows(rows: pl.DataFrame, rule: str, reason: pl.Expr) -> pl.DataFrame:
    """Dropped rows in DROP_SCHEMA (columns the caller's frame lacks are left NULL)."""
    filled = rows.with_columns(
        pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in DROP_SCHEMA.items()
        if name not in rows.columns and name not in ("rule", "reason")
    )
    return filled.with_columns(rule=pl.lit(rule), reason=reason).select(
        pl.col(name).cast(dtype) for name, dtype in DROP_SCHEMA.items()
    )


def used_above_new(rows: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, the market to drop and why, where the used price is above the new one.

    The two are then not the same market at the same time: the older of the two rows is
    dropped (the fresher kept); on equal age the used one, as the new card is then the
    cheaper buy.
    """
    new = rows.filter(pl.col("market") == "new").select(
        "gpu_id", new_price="price_usd", new_age="age_days"
    )
    used = rows.filter(pl.col("market") == "used").select(
        "gpu_id", used_price="price_usd", used_age="age_days"
    )
    return (
        used.join(new, on="gpu_id")
        .filter(pl.col("used_price") > pl.col("new_price"))
        .select(
            "gpu_id",
            drop_market=pl.when(pl.col("new_age") > pl.col("used_age"))
            .then(pl.lit("new"))
            .otherwise(pl.lit("used")),
            why=pl.format(
                "used ${} ({} d old) above new ${} ({} d old): the older market dropped",
                pl.col("used_price").round(0),
                pl.col("used_age"),
                pl.col("new_price").round(0),
                pl.col("new_age"),
            ),
        )
    )


def resolve(
    single: pl.DataFrame, gpus: pl.DataFrame, run_date: dt.date
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Rules 2 and 3 on per-GPU x market rows; returns (kept rows, dropped rows, DROP_SCHEMA).

    `single` needs gpu_id, market, price_usd, age_days and price_method.
    """
    gone = discontinued(gpus, run_date)
    stale_new = (pl.col("market") == "new") & (pl.col("price_method") == "nowcast")
    marked = single.join(gone, on="gpu_id", how="left").with_columns(
        _stale=stale_new & pl.col("why").is_not_null()
    )
    dropped_stale = _drop_rows(
        marked.filter("_stale"),
        "discontinued",
        pl.format(
            "{}; new price last observed {} days before the run date, not within the window",
            pl.col("why"),
            pl.col("age_days"),
        ),
    )
    rows = marked.filter(~pl.col("_stale")).drop("why", "_stale")
    pair = used_above_new(rows)
    keys = {"left_on": ["gpu_id", "market"], "right_on": ["gpu_id", "drop_market"]}
    inverted = rows.join(pair, **keys, how="inner")
    dropped = pl.concat([dropped_stale, _drop_rows(inverted, "used_above_new", pl.col("why"))])
    kept = rows.join(pair, **keys, how="anti")
    return kept, dropped.sort("gpu_id", "market")
