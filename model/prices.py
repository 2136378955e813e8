"""Robust daily prices from individual observations."""

import polars as pl

# 1.4826 * MAD estimates the standard deviation of normally distributed prices.
_MAD_SCALE = 1.4826


def flag_outliers(observations: pl.DataFrame, mad_k: float = 3.0) -> pl.DataFrame:
    """Priced, matched observations with `day` and an `outlier` flag.

    An observation is an outlier when it lies more than `mad_k` scaled MADs from the
    median of its day x gpu x market; when the MAD is 0 (all equal, or a single
    observation) nothing is flagged.
    """
    keys = ["day", "gpu_id", "market"]
    priced = observations.filter(
        pl.col("gpu_id").is_not_null() & pl.col("price_usd").is_not_null()
    ).with_columns(day=pl.col("observed_at").dt.date())
    distance = (pl.col("price_usd") - pl.col("_median")).abs()
    return (
        priced.with_columns(_median=pl.col("price_usd").median().over(keys))
        .with_columns(_mad=distance.median().over(keys))
        .with_columns(
            outlier=(pl.col("_mad") > 0) & (distance > mad_k * _MAD_SCALE * pl.col("_mad"))
        )
        .drop("_median", "_mad")
    )


def daily_prices(observations: pl.DataFrame, mad_k: float = 3.0) -> pl.DataFrame:
    """One row per day x gpu x market: median USD price after dropping MAD outliers.

    Observations without a gpu_id or a USD price are not priced (see flag_outliers).
    """
    keys = ["day", "gpu_id", "market"]
    kept = ~pl.col("outlier")
    return (
        flag_outliers(observations, mad_k)
        .group_by(keys)
        .agg(
            price_usd=pl.col("price_usd").filter(kept).median(),
            n_observations=kept.sum().cast(pl.Int32),
            n_dropped=pl.col("outlier").sum().cast(pl.Int32),
            price_min_usd=pl.col("price_usd").filter(kept).min(),
            price_max_usd=pl.col("price_usd").filter(kept).max(),
            sources=pl.col("source").filter(kept).unique().sort().str.join(","),
        )
        .with_columns(pl.col("price_usd").round(2))
        .sort(keys)
    )


def drop_counts(observations: pl.DataFrame, mad_k: float = 3.0) -> pl.DataFrame:
    """Observations left out of the daily price, per day x source x reason.

    Rows with a drop_reason count under it; priced rows flagged as outliers under
    `outlier`. Returns day, source, reason, n.
    """
    dated = observations.with_columns(day=pl.col("observed_at").dt.date())
    by_reason = dated.filter(pl.col("drop_reason").is_not_null()).select(
        "day", "source", reason=pl.col("drop_reason")
    )
    usable = observations.filter(pl.col("drop_reason").is_null())
    outliers = (
        flag_outliers(usable, mad_k)
        .filter(pl.col("outlier"))
        .select("day", "source", reason=pl.lit("outlier"))
    )
    return (
        pl.concat([by_reason, outliers])
        .group_by("day", "source", "reason")
        .agg(n=pl.len().cast(pl.Int32))
        .sort("day", "source", "reason")
    )
