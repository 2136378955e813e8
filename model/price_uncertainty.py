"""The uncertainty of an observed price, from its evidence (docs/methodology.md §4).

An observed price is the median of one day's kept observations of a GPU x market. Before
this module its interval was that day's [min, max], so a price resting on one sale was
published as exact ("$2,400-$2,400") and the bootstrap drew it without spread, while a
nowcast got a wide band. Now:

- **Listing spread `sigma`.** How far separate listings of one GPU on one day scatter
  around their middle, on the log scale. A day's spread is estimated from its range,
  `ln(max/min) / d2(n)` (`d2(n)`: the expected range of n standard normal draws; the
  classical range estimator, exact for normal data and cheap, since gpu_prices_daily
  keeps min, max and n). Only days whose sources all count separate listings
  (sources/price_origins.py: eBay sales, Amazon search results, Newegg; not Keepa's
  repeated points of one offer, not a list price) and with at least MIN_POOL_N of them
  enter the pool.
- **Pooled by product line x market.** Per GPU the root mean square of its days' spreads
  (the pooled variance: a median of days understates the spread of a market whose days
  differ, and the one-sale interval then covers the market price only 87 % of the time),
  then per product line (consumer, workstation, data center: model/product_lines.py) x
  market the median over GPUs, when at least MIN_POOL_GPUS GPUs have such days; else the
  market over all lines; else all markets (`level` says which).
- **Shrunk with the GPU's own spread.** The GPU's own day gives `s` (n >= 2 separate
  listings); `sigma^2 = (k * pooled^2 + (n - 1) * s^2) / (k + n - 1)`, the pooled value
  counting as PRIOR_DF degrees of freedom (a conjugate normal-variance update).
- **The published interval is the market price's.** The price is a median of n listings;
  its standard error is `sigma * sqrt(f(n))` with `f(n) = pi / (2 (n - 1) + pi)`
  (`f(1) = 1`: one sale is one draw from the listing spread; `f(n) -> pi / (2n)`, the
  median's large-sample variance; within 3 % of the exact small-sample values for
  n = 3..10). `log_sd` is that standard error and the 95 % interval is
  `price * exp(+-1.96 * log_sd)`. So one sale gets the pooled listing spread (never zero),
  and ten tight listings a narrower band. What one buyer pays scatters further: the
  listing spread `listing_log_sd` is stored beside it (a prediction interval for one
  purchase is `exp(+-1.96 * sqrt(log_sd^2 + listing_log_sd^2))`).

Observations that are not separate listings (Keepa, list prices, monthly averages) count
as one observation however many points the day has.
"""

import datetime as dt
import math
from functools import cache

import numpy as np
import polars as pl

from model.product_lines import LINES, product_lines
from sources.price_origins import all_listings, countries, currencies

MARKETS = ("new", "used")
# A day enters the pool with at least this many separate listings (d2(2) rests on one
# difference; three is the bootstrap's own minimum, bootstrap_min_observations).
MIN_POOL_N = 3
# A product line x market pools its own spread only with this many GPUs behind it.
MIN_POOL_GPUS = 3
# Degrees of freedom the pooled spread counts for against a GPU's own day.
PRIOR_DF = 4
# When nothing at all can be pooled: 10 % per listing (documented fallback; the bundled
# snapshot's pools are 5-8 %, so it is never used there).
FALLBACK_LOG_SD = 0.10

SPREAD_SCHEMA = {
    "line": pl.Utf8,
    "market": pl.Utf8,
    "pooled_log_sd": pl.Float64,
    "n_gpus": pl.Int64,
    "n_days": pl.Int64,
    "level": pl.Utf8,
}


@cache
def d2(n: int) -> float:
    """Expected range of n independent standard normal draws (d2(1) = 0).

    `integral over x of 1 - Phi(x)^n - (1 - Phi(x))^n`, by the trapezoid rule on
    [-8, 8] (d2(2) = 2/sqrt(pi) = 1.128, d2(5) = 2.326, d2(10) = 3.078).
    """
    if n < 2:
        return 0.0
    x = np.linspace(-8.0, 8.0, 16001)
    phi = 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))
    y = 1.0 - phi**n - (1.0 - phi) ** n
    return float(np.sum((y[1:] + y[:-1]) / 2.0) * (x[1] - x[0]))


def median_variance_factor(n: pl.Expr) -> pl.Expr:
    """f(n) = pi / (2 (n - 1) + pi): Var(median of n) / sigma^2, approximately."""
    return math.pi / (2.0 * (n.cast(pl.Float64) - 1.0) + math.pi)


def _by_value(expr: pl.Expr, f, dtype: pl.DataType) -> pl.Expr:
    """`f` of each value of `expr` (nulls stay null), called once per distinct value.

    The listing spread pools every daily price of the history: a Python call per row
    (map_elements) took ~6 s of a night at 10 years; the columns hold a few dozen values.
    """

    def apply(column: pl.Series) -> pl.Series:
        values = column.drop_nulls().unique().to_list()
        if not values:
            return pl.Series(column.name, [None] * column.len(), dtype=dtype)
        mapped = [f(v) for v in values]
        return column.replace_strict(values, mapped, default=None, return_dtype=dtype)

    return expr.map_batches(apply, return_dtype=dtype)


def _range_sd(n: pl.Expr) -> pl.Expr:
    """A day's log spread from its range: ln(max / min) / d2(n) (NULL for n < 2)."""
    d2n = _by_value(n, lambda k: d2(int(k)) or None, pl.Float64)
    return (pl.col("price_max_usd") / pl.col("price_min_usd")).log() / d2n


def effective_n(sources: pl.Expr, n: pl.Expr) -> pl.Expr:
    """The day's n where every source counts separate listings, else 1."""
    separate = _by_value(sources, all_listings, pl.Boolean)
    return pl.when(separate.fill_null(False)).then(n).otherwise(1).cast(pl.Int64)


def listing_spreads(daily: pl.DataFrame, gpus: pl.DataFrame, run_date: dt.date) -> pl.DataFrame:
    """Pooled log listing spread per product line x market (SPREAD_SCHEMA, all 6 cells).

    `daily`: gpu_prices_daily rows (day, gpu_id, market, n_observations, price_min_usd,
    price_max_usd, sources); rows after the run date are ignored. The pool uses the whole
    history up to the run date: how widely one day's listings scatter is a property of
    the market that changes slowly, and most multi-listing days are 2020-2021 eBay data.
    """
    lines = product_lines(gpus)
    days = (
        daily.filter(pl.col("day") <= run_date, pl.col("market").is_in(MARKETS))
        .with_columns(n_eff=effective_n(pl.col("sources"), pl.col("n_observations")))
        .filter(pl.col("n_eff") >= MIN_POOL_N, pl.col("price_min_usd") > 0)
        .with_columns(sd=_range_sd(pl.col("n_eff")))
        .join(lines, on="gpu_id")
    )
    per_gpu = days.group_by("line", "market", "gpu_id").agg(
        sd=(pl.col("sd") ** 2).mean().sqrt(), n_days=pl.len()
    )
    rows = []
    for line in LINES:
        for market in MARKETS:
            rows.append(_pool(per_gpu, line, market))
    return pl.DataFrame(rows, schema=SPREAD_SCHEMA, orient="row")


def _pool(per_gpu: pl.DataFrame, line: str, market: str) -> tuple:
    """One cell of listing_spreads: its own pool, else its market's, else everything."""
    levels = (
        (f"{line} {market}", (pl.col("line") == line) & (pl.col("market") == market)),
        (f"all lines, {market}", pl.col("market") == market),
        ("all lines and markets", pl.lit(True)),
    )
    for level, where in levels:
        part = per_gpu.filter(where)
        if part.height >= MIN_POOL_GPUS:
            sd = float(part["sd"].median())
            return (line, market, sd, part.height, int(part["n_days"].sum()), level)
    return (line, market, FALLBACK_LOG_SD, 0, 0, "fallback")


def evidence_log_sd(
    latest: pl.DataFrame, spreads: pl.DataFrame | None, gpus: pl.DataFrame
) -> pl.DataFrame:
    """`latest` with listing_log_sd, evidence_log_sd and spread_note per GPU x market row.

    `latest` holds the day's n_observations, price_min_usd, price_max_usd and sources;
    `spreads` is listing_spreads' table (None: every cell the fallback). evidence_log_sd is
    the market price's log standard error (module docstring), never zero.
    """
    if spreads is None or spreads.is_empty():
        spreads = pl.DataFrame(
            [(ln, m, FALLBACK_LOG_SD, 0, 0, "fallback") for ln in LINES for m in MARKETS],
            schema=SPREAD_SCHEMA,
            orient="row",
        )
    lines = product_lines(gpus)
    n = pl.col("_n")
    own = pl.when(n >= 2).then(_range_sd(n.clip(lower_bound=2))).otherwise(None)
    shrunk = (
        (PRIOR_DF * pl.col("pooled_log_sd") ** 2 + (n - 1) * pl.col("_own").fill_null(0.0) ** 2)
        / (PRIOR_DF + n - 1)
    ).sqrt()
    return (
        latest.with_columns(
            _n=effective_n(pl.col("sources"), pl.col("n_observations").fill_null(1)).clip(
                lower_bound=1
            )
        )
        .join(lines, on="gpu_id", how="left")
        .with_columns(pl.col("line").fill_null("data_center"))
        .join(spreads.select("line", "market", "pooled_log_sd", "level"), on=["line", "market"])
        .with_columns(_own=own)
        .with_columns(listing_log_sd=shrunk)
        .with_columns(
            evidence_log_sd=pl.col("listing_log_sd") * median_variance_factor(n).sqrt(),
            spread_note=pl.format(
                "{} independent {}; listing spread {}% ({} pool {}%)",
                n,
                pl.when(n == 1).then(pl.lit("listing")).otherwise(pl.lit("listings")),
                (pl.col("listing_log_sd") * 100).round(1),
                pl.col("level"),
                (pl.col("pooled_log_sd") * 100).round(1),
            ),
        )
        .drop("_n", "_own", "line", "pooled_log_sd", "level")
    )


def with_origins(prices: pl.DataFrame) -> pl.DataFrame:
    """`prices` with source_country and source_currency from its `sources` (price_origins)."""
    return prices.with_columns(
        source_country=pl.col("sources").map_elements(countries, return_dtype=pl.Utf8),
        source_currency=pl.col("sources").map_elements(currencies, return_dtype=pl.Utf8),
    )
