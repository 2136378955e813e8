"""Implausible asks: a shop's placeholder price set aside before it can decide a price.

Shops keep out-of-stock items listed at a placeholder price far above the market (on
2026-10-06/07 two Greek shops listed the RX 7800 XT at EUR 1,885.90 and 2,096.08, three times
the EUR 614.00 the same tracker's cheapest RX 7800 XT cost the days before, and above the
faster RX 7900 XTX's EUR 1,349.00). Where such an ask is a GPU's only listing of the day it
becomes the GPU's price. A MAD outlier test on the day (model/prices.py) cannot see it: it
needs the other figures of the same day, and a lone placeholder has none.

The rule (docs/methodology.md, "Implausible asks"): a new-market observation of an ask
source (`sources.price_origins.ASK_SOURCES`: shop listings, Amazon buy boxes, a tracker's
lowest ask) is set aside when its USD price is more than ASK_FACTOR times the lowest
new-market ask of the same GPU from an ask source of the same country within
ASK_WINDOW_DAYS days either side (itself included, so a lone ask is never compared with
nothing). Only asks are references: a list price (an MSRP below a shortage market) or a sale
(eBay "new" sales of an RTX 3090 at $200-880 in 2021, beside Amazon asks of $3,300: box or
scam sales) would otherwise set aside the real asks of a shortage. A market that is uniformly
high (the RTX 5090 in 2026) keeps every ask: its asks are high against the launch price, not
against each other.

Why 3x and 3 days (sources/data/prices/MANIFEST.md, "Implausible asks"): across the whole
`gpu-prices-gr` file (1,222 asks of 47 GPUs over two days) the largest max/min ratio of one
GPU's asks is 2.85 (RTX 6000 Ada, 7 listings) and 2.52 for a GPU with many listings (RTX 5080,
165); no legitimate spread reaches 3. Three days covers a tracker's daily series around a
two-day snapshot, not a market move: no Keepa price series in the bundled history moves by
3x within a week.
"""

import polars as pl

from sources.price_origins import ASK_SOURCES, ORIGINS

# An ask more than this many times the same-country lowest figure is set aside.
ASK_FACTOR = 3.0
# The lowest figure counts if observed within this many days either side of the ask.
ASK_WINDOW_DAYS = 3
# The drop_reason of a set-aside ask (price_observations.drop_reason, price_drops.reason).
IMPLAUSIBLE_ASK = "implausible_ask"

_COUNTRY = pl.col("source").replace_strict(
    {name: o.country for name, o in ORIGINS.items()}, default=None, return_dtype=pl.Utf8
)


def _new_asks(observations: pl.DataFrame) -> pl.DataFrame:
    """New-market, priced, matched rows of ask sources with `day` and `country`."""
    return observations.filter(
        pl.col("market") == "new",
        pl.col("gpu_id").is_not_null(),
        pl.col("price_usd").is_not_null(),
        pl.col("source").is_in(ASK_SOURCES),
    ).with_columns(day=pl.col("observed_at").dt.date(), country=_COUNTRY)


def lowest_nearby(observations: pl.DataFrame, window_days: int = ASK_WINDOW_DAYS) -> pl.DataFrame:
    """gpu_id, country, day: the lowest new ask within window_days either side.

    Also `ref_source` and `ref_day`, the figure's source and day. Days without an
    observation of their own are included where a neighbour within the window has one.
    """
    daily = (
        _new_asks(observations)
        .filter(pl.col("country").is_not_null())
        .group_by("gpu_id", "country", "day")
        .agg(
            ref_usd=pl.col("price_usd").min(),
            # Ties (two sources at the same lowest ask): the first source by name.
            ref_source=pl.col("source").sort_by("price_usd", "source").first(),
        )
        .with_columns(ref_day=pl.col("day"))
    )
    shifted = pl.concat(
        daily.with_columns(day=pl.col("day") + pl.duration(days=offset))
        for offset in range(-window_days, window_days + 1)
    )
    return (
        shifted.sort("ref_usd", "ref_day")
        .group_by("gpu_id", "country", "day", maintain_order=True)
        .first()
    )


def flag_implausible_asks(
    observations: pl.DataFrame,
    factor: float = ASK_FACTOR,
    window_days: int = ASK_WINDOW_DAYS,
) -> pl.DataFrame:
    """The observations with `implausible_ask`: why an ask is set aside, else null.

    `observations` needs observed_at, source, market, gpu_id and price_usd (USD, net of
    VAT: sources.fx.add_usd). Rows of sources that are not asks, used rows and rows without
    a price or GPU are never flagged. The reason names the ratio and the reference figure.
    """
    reference = lowest_nearby(observations, window_days)
    keyed = observations.with_row_index("_row").with_columns(
        _day=pl.col("observed_at").dt.date(), _country=_COUNTRY
    )
    joined = keyed.join(
        reference.rename({"day": "_day", "country": "_country"}),
        on=["gpu_id", "_country", "_day"],
        how="left",
    ).sort("_row")
    ratio = pl.col("price_usd") / pl.col("ref_usd")
    flagged = (
        (pl.col("market") == "new")
        & pl.col("source").is_in(ASK_SOURCES)
        & pl.col("ref_usd").is_not_null()
        & (ratio > factor)
    )
    why = pl.format(
        "ask ${} is {}x the lowest new ask for the GPU in {} within {} days (${}, {}, {})",
        pl.col("price_usd").round(0),
        ratio.round(2),
        pl.col("_country"),
        pl.lit(window_days),
        pl.col("ref_usd").round(0),
        pl.col("ref_source"),
        pl.col("ref_day"),
    )
    return joined.with_columns(
        implausible_ask=pl.when(flagged).then(why).otherwise(pl.lit(None, dtype=pl.Utf8))
    ).drop("_row", "_day", "_country", "ref_usd", "ref_source", "ref_day")


def set_aside_implausible_asks(
    observations: pl.DataFrame,
    factor: float = ASK_FACTOR,
    window_days: int = ASK_WINDOW_DAYS,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(observations with drop_reason IMPLAUSIBLE_ASK where flagged, the flagged rows).

    Rows that already have a drop_reason keep it. The second frame lists each set-aside
    row (observed_at, source, gpu_id, price, currency, price_usd, why) for the load's log.
    """
    flagged = flag_implausible_asks(observations, factor, window_days)
    hit = pl.col("implausible_ask").is_not_null()
    if "drop_reason" not in flagged.columns:
        flagged = flagged.with_columns(drop_reason=pl.lit(None, dtype=pl.Utf8))
    marked = flagged.with_columns(
        drop_reason=pl.when(hit & pl.col("drop_reason").is_null())
        .then(pl.lit(IMPLAUSIBLE_ASK))
        .otherwise(pl.col("drop_reason"))
    )
    keep = [c for c in ("price", "currency") if c in flagged.columns]
    report = flagged.filter(hit).select(
        "observed_at", "source", "gpu_id", *keep, "price_usd", why="implausible_ask"
    )
    return marked.drop("implausible_ask"), report
