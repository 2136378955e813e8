"""How a break-even reads on the site: days within the ownership period, else "never".

`cloud_vs_buy` reports a break-even only within the ownership period (model/resale.py);
beyond it the day is NULL and `break_even_note` says why. The site never prints a number
of days larger than the period (it once showed 74,822 days, 205 years).
"""

import polars as pl


def break_even_days_text(years: float) -> pl.Expr:
    """'293' (days), 'never (within 5 years)' or 'never (renting costs less than power)'."""
    never = f"never (within {years:g} years)"
    return (
        pl.when(pl.col("break_even_days").is_not_null())
        .then(pl.col("break_even_days").round(0).cast(pl.Int64).cast(pl.Utf8))
        .when(pl.col("break_even_note").fill_null("").str.starts_with("renting is cheaper"))
        .then(pl.lit("never (renting costs less than power)"))
        .otherwise(pl.lit(never))
    )


def break_even_use_text() -> pl.Expr:
    """The utilisation above which owning is cheaper over the period: '12 %', or '-'.

    '-' where it does not exist: over 100 %, renting cheaper than the electricity, or a
    reservation billed for every hour (utilisation does not enter).
    """
    return (
        pl.when(pl.col("break_even_utilization").is_not_null())
        .then(pl.format("{} %", (pl.col("break_even_utilization") * 100).round(1)))
        .otherwise(pl.lit("-"))
    )
