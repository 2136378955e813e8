"""Parsed retail listings -> price observations: match, market and why a row is not used.

Every parsed record is kept; `drop_reason` says why it does not feed a daily price (NULL
means it does). Reasons, first match wins:
- `unmatched:<code>`: the title is not one catalog GPU (accessory, laptop, system, lot,
  multi_model, ambiguous, unknown, for_parts, ...; see sources.catalog);
- `for_parts`: the condition says for parts or not working;
- `no_price`: the card shows no price (price_missing_reason says why);
- `price_range`: a range ("$66 - $208") is several variants, not one price;
- `not_sold`: an eBay completed listing that ended unsold;
- `best_offer_hidden`: sold via an accepted best offer, so the real price is hidden;
- `asking_price`: an active eBay listing of a used card (the Browse API): an ask, not a
  sale, so it does not set the used price (new cards' asking prices are what a buyer pays);
- `no_fx_rate`: no exchange rate on or before that day for the currency.
Outliers are decided later, per GPU x market x day (model.prices).
"""

from collections.abc import Callable

import polars as pl

from sources.fx import add_usd

# Condition text -> market. Refurbished cards trade as used; for-parts cards are dropped.
_MARKET_OF_CONDITION = {"new": "new", "used": "used", "refurbished": "used"}
# What a search serves when the card says nothing about condition.
SEARCH_MARKET = {"amazon": "new", "ebay": "used"}


def classify_listings(
    listings: pl.DataFrame,
    match: Callable[[str], tuple[str | None, str]],
    condition_of: Callable[[str | None, str], str | None],
    rates: pl.DataFrame,
) -> pl.DataFrame:
    """Add gpu_id, match_reason, market, price_usd and drop_reason to parsed listings.

    `match(title)` returns (gpu_id or None, reason); `condition_of(condition, title)`
    returns new/used/refurbished/for_parts or None; `rates` has day, currency,
    usd_per_unit (USD needs no rate).
    """
    if listings.is_empty():
        return listings.with_columns(
            gpu_id=pl.lit(None, pl.Utf8),
            match_reason=pl.lit(None, pl.Utf8),
            market=pl.lit(None, pl.Utf8),
            price_usd=pl.lit(None, pl.Float64),
            drop_reason=pl.lit(None, pl.Utf8),
        )
    matched = [match(title) for title in listings["title"]]
    normalized = [
        condition_of(c, t) for c, t in zip(listings["condition"], listings["title"], strict=True)
    ]
    frame = listings.with_columns(
        gpu_id=pl.Series([m[0] for m in matched], dtype=pl.Utf8),
        match_reason=pl.Series([m[1] for m in matched], dtype=pl.Utf8),
        _condition=pl.Series(normalized, dtype=pl.Utf8),
    ).with_columns(
        market=pl.col("_condition")
        .replace_strict(_MARKET_OF_CONDITION, default=None, return_dtype=pl.Utf8)
        .fill_null(pl.col("source").replace_strict(SEARCH_MARKET, default="used")),
    )
    frame = add_usd(frame, rates)
    reason = (
        pl.when(pl.col("gpu_id").is_null())
        .then(
            pl.concat_str(pl.lit("unmatched:"), pl.col("match_reason").str.split(":").list.first())
        )
        .when(pl.col("_condition") == "for_parts")
        .then(pl.lit("for_parts"))
        .when(pl.col("price").is_null())
        .then(pl.lit("no_price"))
        .when(pl.col("price_high").is_not_null())
        .then(pl.lit("price_range"))
        .when(pl.col("sold").eq(False))
        .then(pl.lit("not_sold"))
        .when(pl.col("best_offer_accepted"))
        .then(pl.lit("best_offer_hidden"))
        .when(
            (pl.col("source") == "ebay") & pl.col("sold").is_null() & (pl.col("market") == "used")
        )
        .then(pl.lit("asking_price"))
        .when(pl.col("price_usd").is_null())
        .then(pl.lit("no_fx_rate"))
    )
    return frame.with_columns(drop_reason=reason).drop("_condition")
