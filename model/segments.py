"""Market segment of a GPU: consumer cards vs professional and data-center parts.

One place for the rule, used by the spec estimator (consumer cards get their own offset)
and by the price nowcast (consumer street prices move differently from list-priced parts).
"""

import polars as pl

# GeForce, Radeon RX and Arc are sold to gamers at street prices; everything else (Quadro,
# RTX A/Ada/PRO, Tesla and data-center modules, Instinct, Radeon PRO) is professional.
CONSUMER_NAMES = r"(?i)\b(geforce|radeon rx|arc [ab]\d)"  # not "Arc Pro B60": workstation


def segment_expr(name: str = "name") -> pl.Expr:
    """'consumer' or 'professional' from the GPU's catalog name."""
    consumer = pl.col(name).cast(pl.Utf8).fill_null("").str.contains(CONSUMER_NAMES)
    return pl.when(consumer).then(pl.lit("consumer")).otherwise(pl.lit("professional"))
