"""What an owned GPU sells for at the end of the ownership period (docs/methodology.md §12).

Owning a GPU for `years` costs its price, the host and the electricity, less what the GPU
sells for at the end. That resale value is estimated from the project's used-price history
(eBay sold prices 2020-2023, Tom's Hardware's monthly eBay averages 2021-2023, eBay UK
2026):

1. Retention with age. Over every monthly used price of a GPU with a launch price and
   release date, `log(used price / launch price) = month effect + b * age` (age in years
   since release) is fitted per resale segment (consumer, workstation, data center). The
   month effect absorbs what the whole market did that month (the 2021 mining boom, the
   2022 bust, the 2025-26 AI demand), so b is what one more year of age does to a GPU's
   price among GPUs sold in the same month, not what the market did in the years the
   histories happen to cover (nowcast.fit_depreciation fits the same curve without the
   month effect; here the boom would bias b upward). A segment with too few points or
   GPUs takes the pooled fit of all segments, shifted by how much faster or slower its
   GPUs' new prices fell than the fitted segments' over the same years (segment_trends;
   `level` says which).
2. Resale at the end = today's used price of the GPU x retention(age + years) /
   retention(age). The curve is log-linear, so the ratio is exp(b * years) whatever the
   age today (the fit's residuals show no curvature over ages 0-5 years; methodology §12).
   A GPU bought new is sold used: its resale starts from its used price today, never from
   more than what was paid; a GPU with no used price today starts from its price times the
   typical used/new step of the same GPU in the same month (`used_new_step`).
3. Interval: 95 % from the fit's residual spread (one GPU's deviation from its segment's
   curve), the slope's uncertainty over `years` (clustered by GPU: the monthly points of
   one GPU are not independent draws) and the market's own moves over `years` (the month
   effects as a random walk: the 2021 boom, the 2022 bust and the 2023-26 rise are the
   largest uncertainty of a price five years out; `_market_vol`).
4. Selling costs: eBay's final value fee for most categories, 13.25 % of the sale up to
   $7,500 and 2.35 % of the part above, plus $0.40 per order (eBay 2023 Winter Seller
   Update, fees from 2023-02-15, https://export.ebay.com/en/seller-updates/releases-archive/
   2023-winter-seller-update/fees-financials/; per-order fee $0.40 from 2024-03-15, eBay
   2024 Winter Seller Update), is subtracted: the owner gets the sale price less the fee.

Break-even against renting (`break_even_day`) uses the same curve: selling after d days
returns the resale value at age + d.
"""

import numpy as np
import polars as pl

from model.nowcast import years_since_epoch
from model.product_lines import product_line_expr

SEGMENTS = ("consumer", "workstation", "data_center")
ALL_SEGMENTS = "all"
# A segment gets its own fit with at least this many GPU-month points (in months where
# two or more GPUs sold, the only ones that say anything about age) from this many GPUs;
# the same floors as nowcast.fit_depreciation (MIN_STEPS, 3 GPUs).
MIN_POINTS = 12
MIN_GPUS = 3
Z95 = 1.959964
DAYS_PER_YEAR = 365.0  # the cost model's year (cost.HOURS_PER_YEAR = 24 * 365)

# eBay final value fee, most categories, ebay.com (module docstring for the sources).
EBAY_FEE_RATE = 0.1325
EBAY_FEE_TIER_USD = 7500.0
EBAY_FEE_RATE_ABOVE_TIER = 0.0235
EBAY_FEE_PER_ORDER_USD = 0.40

FIT_SCHEMA = {
    "segment": pl.Utf8,
    "depreciation": pl.Float64,
    "depreciation_se": pl.Float64,
    "residual_sd": pl.Float64,
    "market_vol": pl.Float64,
    "n_points": pl.Int64,
    "n_gpus": pl.Int64,
    "n_months": pl.Int64,
    "level": pl.Utf8,
}
BASIS_SCHEMA = {
    "gpu_id": pl.Utf8,
    "market": pl.Utf8,
    "resale_anchor_ratio": pl.Float64,
    "resale_depreciation": pl.Float64,
    "resale_depreciation_se": pl.Float64,
    "resale_residual_sd": pl.Float64,
    "resale_market_vol": pl.Float64,
    "resale_segment": pl.Utf8,
    "resale_level": pl.Utf8,
}


def _with_segments(gpus: pl.DataFrame) -> pl.DataFrame:
    if "form_factor" not in gpus.columns:
        gpus = gpus.with_columns(form_factor=pl.lit(None, dtype=pl.Utf8))
    if "name" not in gpus.columns:
        gpus = gpus.with_columns(name=pl.lit(None, dtype=pl.Utf8))
    return gpus.with_columns(
        segment=product_line_expr()
    )  # the product line (model/product_lines.py)


def retention_points(monthly: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Used monthly prices as log retention: gpu_id, segment, month, age (years), y.

    `monthly` is nowcast.monthly_series (gpu_id, market, month, price_usd, t); y =
    log(price / launch price). GPUs without a launch price or release date say nothing
    about retention and are left out.
    """
    schema = {"gpu_id": pl.Utf8, "segment": pl.Utf8, "month": pl.Date,
              "age": pl.Float64, "y": pl.Float64}  # fmt: skip
    needed = {"launch_price_usd", "release_date"}
    if monthly.is_empty() or not needed <= set(gpus.columns):
        return pl.DataFrame(schema=schema)
    catalog = _with_segments(gpus).select(
        "gpu_id",
        "segment",
        "launch_price_usd",
        released=years_since_epoch(pl.col("release_date")),
    )
    return (
        monthly.filter(pl.col("market") == "used")
        .join(catalog, on="gpu_id")
        .filter(pl.col("launch_price_usd") > 0, pl.col("released").is_not_null())
        .select(
            "gpu_id",
            "segment",
            "month",
            age=(pl.col("t") - pl.col("released")).clip(lower_bound=0.0),
            y=(pl.col("price_usd") / pl.col("launch_price_usd")).log(),
        )
        .cast(schema)
    )


# A month's market level (its fixed effect) is taken from months with at least this many
# GPUs; with two, one GPU's quirk moves the level as much as the market does.
MIN_GPUS_FOR_LEVEL = 5


def _market_vol(used: pl.DataFrame, slope: float) -> float:
    """Volatility per sqrt-year of the market level (the month effect), 0 if unknown.

    The month effect is mean(y - slope * age) over the month's GPUs; its changes between
    consecutive well-covered months, over the square root of their gap, give a random
    walk's volatility (RMS, as nowcast's: the boom and bust are jumps that count).
    """
    levels = (
        used.filter(pl.col("_k") >= MIN_GPUS_FOR_LEVEL)
        .group_by("month")
        .agg(level=(pl.col("y") - slope * pl.col("age")).mean())
        .sort("month")
        .with_columns(t=years_since_epoch(pl.col("month")))
        .with_columns(d=pl.col("level").diff(), dt=pl.col("t").diff())
        .filter(pl.col("dt") > 0)
    )
    if levels.is_empty():
        return 0.0
    z = levels["d"].to_numpy() / np.sqrt(levels["dt"].to_numpy())
    return float(np.sqrt(np.mean(z**2)))


def _within_month_fit(
    points: pl.DataFrame,
) -> tuple[float, float, float, float, int, int, int] | None:
    """Slope of y on age within months: SE (by GPU), residual SD, market volatility, counts.

    Demeaning y and age within each month is least squares with a month fixed effect;
    months with one GPU drop out (their point only says where that month's market was).
    """
    used = points.with_columns(_k=pl.len().over("month")).filter(pl.col("_k") >= 2)
    used = used.with_columns(
        _yd=pl.col("y") - pl.col("y").mean().over("month"),
        _ad=pl.col("age") - pl.col("age").mean().over("month"),
    )
    n_gpus, n_months = used["gpu_id"].n_unique(), used["month"].n_unique()
    sxx = float((used["_ad"] ** 2).sum()) if used.height else 0.0
    if used.height < MIN_POINTS or n_gpus < MIN_GPUS or sxx <= 0:
        return None
    slope = float((used["_yd"] * used["_ad"]).sum()) / sxx
    used = used.with_columns(_r=pl.col("_yd") - slope * pl.col("_ad"))
    dof = max(used.height - n_months - 1, 1)
    residual_sd = float(np.sqrt(float((used["_r"] ** 2).sum()) / dof))
    # Cluster-robust (by GPU) standard error of the slope: sum over GPUs of the squared
    # score, over sxx^2. The naive SE treats ~40 monthly points of one GPU as 40 GPUs.
    scores = used.group_by("gpu_id").agg((pl.col("_ad") * pl.col("_r")).sum().alias("s"))
    se = float(np.sqrt(float((scores["s"] ** 2).sum()))) / sxx
    return slope, se, residual_sd, _market_vol(used, slope), used.height, n_gpus, n_months


TREND_SCHEMA = {"segment": pl.Utf8, "trend": pl.Float64, "trend_se": pl.Float64,
                "n_points": pl.Int64, "n_gpus": pl.Int64}  # fmt: skip


def segment_trends(monthly: pl.DataFrame, gpus: pl.DataFrame, market: str = "new") -> pl.DataFrame:
    """Within-GPU log-price trend per year of each resale segment in one market.

    Least squares of log price on time with a GPU fixed effect (each GPU's series demeaned),
    over the monthly prices of `market`. It mixes ageing with whatever the market did in
    those years, so it is not a depreciation itself; the difference between two segments'
    trends over the same years is what `fit_retention` uses for a segment without a
    launch-price cross-section. Segments with < MIN_POINTS points or < MIN_GPUS GPUs
    are left out.
    """
    if monthly.is_empty():
        return pl.DataFrame(schema=TREND_SCHEMA)
    series = (
        monthly.filter(pl.col("market") == market, pl.col("price_usd") > 0)
        .join(_with_segments(gpus).select("gpu_id", "segment"), on="gpu_id")
        .with_columns(
            _yd=pl.col("price_usd").log() - pl.col("price_usd").log().mean().over("gpu_id"),
            _td=pl.col("t") - pl.col("t").mean().over("gpu_id"),
        )
    )
    rows = []
    for (segment,), frame in series.group_by("segment", maintain_order=True):
        sxx = float((frame["_td"] ** 2).sum())
        if frame.height < MIN_POINTS or frame["gpu_id"].n_unique() < MIN_GPUS or sxx <= 0:
            continue
        trend = float((frame["_yd"] * frame["_td"]).sum()) / sxx
        scores = frame.group_by("gpu_id").agg(
            (pl.col("_td") * (pl.col("_yd") - trend * pl.col("_td"))).sum().alias("s")
        )
        se = float(np.sqrt(float((scores["s"] ** 2).sum()))) / sxx  # clustered by GPU
        rows.append((segment, trend, se, frame.height, frame["gpu_id"].n_unique()))
    return pl.DataFrame(rows, schema=TREND_SCHEMA, orient="row").sort("segment")


def _trend_offset(
    trends: pl.DataFrame, segment: str, fitted: list[str]
) -> tuple[float, float] | None:
    """Segment's trend minus the fitted segments' (point-weighted), and its standard error.

    The two sides are different GPUs, so their errors add in quadrature.
    """
    own = trends.filter(pl.col("segment") == segment)
    reference = trends.filter(pl.col("segment").is_in(fitted))
    if own.is_empty() or reference.is_empty():
        return None
    w = reference["n_points"].cast(pl.Float64) / reference["n_points"].sum()
    base = float((reference["trend"] * w).sum())
    base_var = float((reference["trend_se"] ** 2 * w**2).sum())
    return float(own["trend"][0]) - base, float(np.sqrt(own["trend_se"][0] ** 2 + base_var))


def fit_retention(points: pl.DataFrame, trends: pl.DataFrame | None = None) -> pl.DataFrame:
    """Depreciation (log retention per year of age) per resale segment, with fallback.

    One row per SEGMENTS entry and one for ALL_SEGMENTS (the pooled fit). A segment too
    thin for its own fit (MIN_POINTS, MIN_GPUS) takes the pooled figures (level 'all
    segments'), shifted, where `trends` (segment_trends) has the segment and a segment
    with its own fit, by the difference of their within-GPU trends in the same market
    (level 'all segments + trend offset'): data-center parts have no launch prices in the
    catalog, but their Amazon prices fall faster than consumer cards' over the same years.
    If even the pool is too thin there are no rows (and no resale).
    """
    pooled = _within_month_fit(points)
    if pooled is None:
        return pl.DataFrame(schema=FIT_SCHEMA)
    trends = pl.DataFrame(schema=TREND_SCHEMA) if trends is None else trends
    own = {s: _within_month_fit(points.filter(pl.col("segment") == s)) for s in SEGMENTS}
    fitted = [s for s, fit in own.items() if fit is not None]
    rows = []
    for segment in SEGMENTS:
        if own[segment] is not None:
            rows.append((segment, *own[segment], "segment"))
            continue
        offset = _trend_offset(trends, segment, fitted)
        if offset is None:
            rows.append((segment, *pooled, "all segments"))
            continue
        slope, se, *rest = pooled
        shifted = (slope + offset[0], float(np.hypot(se, offset[1])), *rest)
        rows.append((segment, *shifted, "all segments + trend offset"))
    rows.append((ALL_SEGMENTS, *pooled, "all segments"))
    return pl.DataFrame(rows, schema=FIT_SCHEMA, orient="row")


def used_new_step(monthly: pl.DataFrame) -> float | None:
    """Typical log(used / new) of one GPU in one month (None without such months).

    The median over GPUs of each GPU's median over the months it was sold both new and
    used. Medians of medians, so a GPU with years of paired months (RTX 3090) weighs no more
    than one with four.
    """
    if monthly.is_empty():
        return None
    both = monthly.filter(pl.col("market").is_in(["new", "used"])).pivot(
        on="market", index=["gpu_id", "month"], values="price_usd", aggregate_function="median"
    )
    if not {"new", "used"} <= set(both.columns):
        return None
    per_gpu = (
        both.drop_nulls(["new", "used"])
        .filter(pl.col("new") > 0, pl.col("used") > 0)
        .group_by("gpu_id")
        .agg(step=(pl.col("used") / pl.col("new")).log().median())
    )
    return None if per_gpu.is_empty() else float(per_gpu["step"].median())


def resale_basis(
    prices: pl.DataFrame, gpus: pl.DataFrame, fits: pl.DataFrame, step: float | None
) -> pl.DataFrame:
    """Per GPU x market priced today: what resale is computed from (see resale_exprs).

    resale_anchor_ratio = the GPU's value on the used market today / the row's price,
    at most 1: its used price today where it has one, else the row's price times
    exp(`step`) (1 without a step). The value is per GPU, whichever market it was bought
    in; as a ratio to the row's price it follows the price draws of the bootstrap.
    """
    if fits.is_empty() or prices.is_empty():
        return pl.DataFrame(schema=BASIS_SCHEMA)
    used = prices.filter(pl.col("market") == "used").select("gpu_id", _used="price_usd")
    segments = _with_segments(gpus).select("gpu_id", "segment")
    no_used_ratio = float(np.exp(step)) if step is not None else 1.0
    return (
        prices.select("gpu_id", "market", "price_usd")
        .join(used, on="gpu_id", how="left")
        .join(segments, on="gpu_id", how="left")
        .with_columns(pl.col("segment").fill_null(ALL_SEGMENTS))
        .join(fits, on="segment", how="left")
        .filter(pl.col("price_usd") > 0)
        .select(
            "gpu_id",
            "market",
            resale_anchor_ratio=pl.when(pl.col("_used").is_not_null())
            .then(pl.col("_used") / pl.col("price_usd"))
            .otherwise(no_used_ratio)
            .clip(upper_bound=1.0),
            resale_depreciation="depreciation",
            resale_depreciation_se="depreciation_se",
            resale_residual_sd="residual_sd",
            resale_market_vol="market_vol",
            resale_segment="segment",
            resale_level="level",
        )
        .cast(BASIS_SCHEMA)
    )


def net_of_fees(value):
    """What a seller keeps of a sale of `value` USD after eBay's fee (never below 0).

    Works on floats, numpy arrays and Polars expressions alike (min/max written with
    abs), so the cost table and the break-even solver cannot use different fees.
    """
    gap = abs(value - EBAY_FEE_TIER_USD)
    below = (value + EBAY_FEE_TIER_USD - gap) / 2  # min(value, tier)
    above = (value - EBAY_FEE_TIER_USD + gap) / 2  # max(value - tier, 0)
    kept = value - EBAY_FEE_RATE * below - EBAY_FEE_RATE_ABOVE_TIER * above
    kept = kept - EBAY_FEE_PER_ORDER_USD
    return (kept + abs(kept)) / 2  # a sale that does not cover the fee is not made


def resale_exprs(price: pl.Expr, years: float) -> dict[str, pl.Expr]:
    """resale_usd, resale_low_usd, resale_high_usd per GPU after `years`, net of fees.

    Needs the resale_basis columns; null where the GPU has no basis (no resale counted).
    """
    value = price * pl.col("resale_anchor_ratio")
    log_sd = (
        pl.col("resale_residual_sd") ** 2
        + (years * pl.col("resale_depreciation_se")) ** 2
        + pl.col("resale_market_vol") ** 2 * years
    ).sqrt()
    centre = pl.col("resale_depreciation") * years
    return {
        "resale_usd": net_of_fees(value * centre.exp()),
        "resale_low_usd": net_of_fees(value * (centre - Z95 * log_sd).exp()),
        "resale_high_usd": net_of_fees(value * (centre + Z95 * log_sd).exp()),
    }


def _own_minus_rent(days, buy, value, depreciation, cloud_per_day, own_per_day):
    """Owning (bought, run and sold after `days`) minus renting for `days`, USD."""
    resale = net_of_fees(value * np.exp(depreciation * days / DAYS_PER_YEAR))
    return buy - resale + (own_per_day - cloud_per_day) * days


def break_even_day(
    buy: np.ndarray,
    value: np.ndarray,
    depreciation: np.ndarray,
    cloud_per_day: np.ndarray,
    own_per_day: np.ndarray,
    horizon_days: float,
) -> np.ndarray:
    """First day d <= horizon_days at which owning and selling costs what renting does.

    Owning for d days costs `buy` + own_per_day * d - net_of_fees(value * exp(b * d/365))
    (`value` the GPU's used value today, b its depreciation); renting costs
    cloud_per_day * d. NaN where owning is still dearer at the horizon (the ownership
    period) or renting costs less a day than running the GPU. The difference starts
    positive (a GPU never resells for what it cost with its host) and, where renting is
    dearer per day, eventually falls for good, so it crosses zero once: bisection.
    """
    args = [np.asarray(a, dtype=float) for a in (buy, value, depreciation, cloud_per_day,
                                                 own_per_day)]  # fmt: skip
    buy, value, depreciation, cloud_per_day, own_per_day = np.broadcast_arrays(*args)
    at_horizon = _own_minus_rent(horizon_days, *args)
    found = (cloud_per_day > own_per_day) & (at_horizon <= 0)
    low, high = np.zeros_like(buy), np.full_like(buy, float(horizon_days))
    for _ in range(60):  # 2^-60 of the horizon: far below a day
        mid = (low + high) / 2
        dearer = _own_minus_rent(mid, *args) > 0
        low, high = np.where(dearer, mid, low), np.where(dearer, high, mid)
    return np.where(found, high, np.nan)


def break_even_utilization(
    buy: pl.Expr, resale: pl.Expr, usd_per_gpu_hour: pl.Expr, usd_per_hour_used: pl.Expr,
    horizon_days: float,
) -> pl.Expr:  # fmt: skip
    """Utilisation at which renting for the whole ownership period costs what owning does.

    Renting u of every hour for `horizon_days` costs usd_per_gpu_hour * 24 * u * days;
    owning costs buy - resale + usd_per_hour_used (electricity) * 24 * u * days. Equal at
    u = (buy - resale) / (24 * days * (usd_per_gpu_hour - usd_per_hour_used)). Null where
    renting is no dearer an hour than the electricity, or u > 1 (never worth owning).
    """
    margin = (usd_per_gpu_hour - usd_per_hour_used) * 24 * horizon_days
    utilization = (buy - resale) / margin
    return pl.when((margin > 0) & (utilization <= 1.0)).then(utilization)
