"""Currency conversion with a dated rate table."""

import polars as pl


def add_usd(frame: pl.DataFrame, rates: pl.DataFrame) -> pl.DataFrame:
    """Add `price_usd` = price x the newest rate on or before the observation's day.

    `frame` needs observed_at, currency and price; `rates` has day, currency and
    usd_per_unit. USD needs no rate; a currency without an earlier rate gives null
    (callers decide whether that is an error or a counted drop, never a guess).
    """
    dated = frame.with_row_index("_row").with_columns(_day=pl.col("observed_at").dt.date())
    joined = (
        dated.sort("_day")
        .join_asof(
            rates.select("day", "currency", "usd_per_unit").sort("day"),
            left_on="_day",
            right_on="day",
            by="currency",
            strategy="backward",
            check_sortedness=False,  # sorted by day just above; Polars cannot verify per group
        )
        .sort("_row")
    )
    rate = pl.when(pl.col("currency") == "USD").then(1.0).otherwise(pl.col("usd_per_unit"))
    return joined.with_columns(price_usd=(pl.col("price") * rate).round(2)).drop(
        "_row", "_day", "day", "usd_per_unit"
    )
