"""Currency conversion with a dated rate table."""

import polars as pl

from sources.price_origins import ORIGINS


def add_usd(frame: pl.DataFrame, rates: pl.DataFrame) -> pl.DataFrame:
    """Add `price_usd` = price x the newest rate on or before the observation's day, net of VAT.

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
    return joined.with_columns(
        price_usd=(pl.col("price") * rate / (1.0 + _vat_rate(joined))).round(2)
    ).drop("_row", "_day", "day", "usd_per_unit")


def _vat_rate(frame: pl.DataFrame) -> pl.Expr:
    """The sales tax included in each row's price, by its source (sources/price_origins.py).

    EU shops quote prices with VAT, US prices are before sales tax: without this a Greek
    ask would look 24 % dearer than the same US price. Rows without a `source` column (or
    of a source without a row) are taken as tax-free, as before.
    """
    if "source" not in frame.columns:
        return pl.lit(0.0)
    rates = {name: o.vat_rate for name, o in ORIGINS.items() if o.vat_rate}
    return pl.col("source").replace_strict(rates, default=0.0, return_dtype=pl.Float64)
