"""Today's price of each GPU x market: observed when fresh, nowcast when stale, none when old.

A price is a fact of its day. A GPU last seen on sale 10 months ago does not cost today
what it cost then (Keepa shows the RTX 4090's Amazon price up 54 % from 2023-10 to
2025-08), and averaging it with another market's price of another date is meaningless.
So, per GPU x market and run date (docs/methodology.md, "Prices at the as-of date: the
market index"):

- last observed within `price_freshness_days`: that robust daily price (`observed`);
- older, up to `price_max_age_days`: carried to the run date by a log-price random walk
  with drift, `log p(t0 + h) = log p(t0) + mu * h + e`, `e ~ N(0, sigma^2 * h)`, h in
  years (`nowcast`); the interval widens with the square root of the age;
- older still: no price for today (the GPU is unpriced, and the report says why).

`sigma` is fitted per market segment (consumer GeForce/Radeon RX/Arc cards vs professional
and data-center parts) x market from the monthly price histories, falling back to the
market and then to all series when a segment has too few monthly steps. `mu` is one of
CANDIDATES: the segment's depreciation with age (fit_depreciation), its drift of monthly
changes, that drift shrunk toward the GPU's own, or none. The candidate used is the one
with the lowest median error in a rolling-origin back-test (`backtest`), the same rule the
spec estimator's candidates follow.

`mean` (Dettmers priced at the mean of new and used) exists only where both markets are
observed within the freshness window.
"""

import datetime as dt

import numpy as np
import polars as pl

from model import market_index
from model.market_consistency import DROP_SCHEMA, is_list_price, resolve
from model.parameters import ModelParameters
from model.price_uncertainty import evidence_log_sd, with_origins
from model.segments import segment_expr

_YEAR_DAYS = 365.25
_MAD_SCALE = 1.4826
_Z = {0.80: 1.281552, 0.95: 1.959964}
# A segment x market needs this many monthly steps to have its own drift and volatility.
MIN_STEPS = 12
# One month of volatility is the least uncertainty a nowcast carries (a fresh price's
# bootstrap spread is separate, from its own observations).
_MIN_HORIZON_YEARS = 1 / 12
# Candidates for the drift mu: the segment x market's drift of monthly changes, its
# depreciation with age (fit_depreciation), the segment drift shrunk toward the GPU's own
# with a prior of this many years on the segment, and no drift (a pure random walk).
# "market_index" carries the price with its market group's chained index
# (model/market_index.py) over the months the index has data, and as a random walk after.
CANDIDATES = ("depreciation", "segment_drift", "own_drift_shrunk", "random_walk", "market_index")
_OWN_PRIOR_YEARS = 2.0

MONTHLY_SCHEMA = {
    "gpu_id": pl.Utf8,
    "market": pl.Utf8,
    "month": pl.Date,
    "price_usd": pl.Float64,
    "t": pl.Float64,
}
DRIFT_SCHEMA = {
    "segment": pl.Utf8,
    "market": pl.Utf8,
    "drift": pl.Float64,
    "volatility": pl.Float64,
    "n_steps": pl.Int64,
    "level": pl.Utf8,
}


def years_since_epoch(day: pl.Expr) -> pl.Expr:
    """A date as fractional years since 1970-01-01 (the random walk's clock)."""
    return day.cast(pl.Date).cast(pl.Int32).cast(pl.Float64) / _YEAR_DAYS


def monthly_series(daily: pl.DataFrame) -> pl.DataFrame:
    """One point per GPU x market x month: the median daily price and its mean day (`t`).

    The warehouse computes the same thing in SQL over `gpu_prices_daily` (a bounded
    aggregate, see pipeline/defs/model/prices.py); this is the pure form for tests.
    """
    if daily.is_empty():
        return pl.DataFrame(schema=MONTHLY_SCHEMA)
    return (
        daily.with_columns(
            month=pl.col("day").dt.truncate("1mo"), t=years_since_epoch(pl.col("day"))
        )
        .group_by("gpu_id", "market", "month")
        .agg(pl.col("price_usd").median(), pl.col("t").mean())
        .sort("gpu_id", "market", "month")
        .select(list(MONTHLY_SCHEMA))
    )


def _segments(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id -> segment (professional when the catalog frame has no names)."""
    if "name" not in gpus.columns:
        return gpus.select("gpu_id", segment=pl.lit("professional"))
    return gpus.select("gpu_id", segment=segment_expr())


def steps(monthly: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Consecutive monthly points of each series: log change `d` over `dt` years."""
    segments = _segments(gpus)
    return (
        monthly.sort("gpu_id", "market", "t")
        .with_columns(
            d=pl.col("price_usd").log().diff().over("gpu_id", "market"),
            dt=pl.col("t").diff().over("gpu_id", "market"),
        )
        .filter(pl.col("dt") > 0)
        .join(segments, on="gpu_id", how="left")
        .with_columns(pl.col("segment").fill_null("professional"))
        .select("gpu_id", "market", "segment", "d", "dt", "t")
    )


def _drift_and_volatility(d: np.ndarray, dts: np.ndarray) -> tuple[float, float]:
    """Drift per year (sum of changes over sum of time) and the volatility per sqrt-year.

    The volatility is the root mean square of the standardised residuals (change minus
    drift, over the square root of its time step). Not a robust MAD: GPU prices jump
    (the 2021 mining boom, the 2022 bust), and an interval that ignores the jumps covers
    far less than it claims (back-test: 76 % of later prices inside the 95 % interval with
    the MAD, 85 % with the RMS).
    """
    drift = float(d.sum() / dts.sum())
    z = (d - drift * dts) / np.sqrt(dts)
    return drift, float(np.sqrt(np.mean(z**2)))


def fit_depreciation(monthly: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Depreciation per year of each segment x market, from the price-to-launch-price curve.

    Over every monthly price of GPUs with a launch price and release date, fit
    `log(price / launch price) = a + b * age` (age in years since release) per segment x
    market; b is the drift a GPU's price follows as it ages. Unlike the drift of the
    monthly changes, which is whatever the market did in the years the histories cover
    (a boom, a bust), the cross-section of GPUs of every age measures what ageing does.
    Returns segment, market, depreciation, n_points (segments with < MIN_STEPS points
    or fewer than 3 GPUs are left out).
    """
    schema = {"segment": pl.Utf8, "market": pl.Utf8, "depreciation": pl.Float64,
              "n_points": pl.Int64}  # fmt: skip
    needed = {"launch_price_usd", "release_date", "name"}
    if monthly.is_empty() or not needed <= set(gpus.columns):
        return pl.DataFrame(schema=schema)
    points = (
        monthly.join(
            gpus.select(
                "gpu_id",
                "launch_price_usd",
                segment=segment_expr(),
                released=years_since_epoch(pl.col("release_date")),
            ),
            on="gpu_id",
        )
        .filter(pl.col("launch_price_usd") > 0, pl.col("released").is_not_null())
        .with_columns(
            y=(pl.col("price_usd") / pl.col("launch_price_usd")).log(),
            age=(pl.col("t") - pl.col("released")).clip(lower_bound=0.0),
        )
    )
    rows = []
    for (segment, market), frame in points.group_by("segment", "market", maintain_order=True):
        if frame.height < MIN_STEPS or frame["gpu_id"].n_unique() < 3:
            continue
        design = np.column_stack([np.ones(frame.height), frame["age"].to_numpy()])
        coef, *_ = np.linalg.lstsq(design, frame["y"].to_numpy(), rcond=None)
        rows.append((segment, market, float(coef[1]), frame.height))
    return pl.DataFrame(rows, schema=schema, orient="row")


def fit_drift(step_rows: pl.DataFrame) -> pl.DataFrame:
    """Drift and volatility per segment x market, with the level each came from.

    A segment x market with fewer than MIN_STEPS steps takes its market's figures, and a
    market with too few takes all series'. Rows for every segment x market seen.
    """
    if step_rows.is_empty():
        return pl.DataFrame(schema=DRIFT_SCHEMA)

    def fitted(frame: pl.DataFrame) -> tuple[float, float, int] | None:
        if frame.height < MIN_STEPS:
            return None
        drift, vol = _drift_and_volatility(frame["d"].to_numpy(), frame["dt"].to_numpy())
        return drift, vol, frame.height

    overall = fitted(step_rows) or (0.0, 0.0, step_rows.height)
    rows = []
    for (segment, market), frame in step_rows.group_by("segment", "market", maintain_order=True):
        own = fitted(frame)
        by_market = fitted(step_rows.filter(pl.col("market") == market))
        chosen, level = next(
            (fit, name)
            for fit, name in (
                (own, "segment x market"),
                (by_market, "market"),
                (overall, "all series"),
            )
            if fit is not None
        )
        rows.append(
            {
                "segment": segment,
                "market": market,
                "drift": chosen[0],
                "volatility": chosen[1],
                "n_steps": chosen[2],
                "level": level,
            }
        )
    return pl.DataFrame(rows, schema=DRIFT_SCHEMA).sort("segment", "market")


def own_drift(step_rows: pl.DataFrame) -> pl.DataFrame:
    """Each series' own drift per year and the years of history it rests on."""
    return step_rows.group_by("gpu_id", "market").agg(
        own_drift=pl.col("d").sum() / pl.col("dt").sum(), own_years=pl.col("dt").sum()
    )


Models = tuple[pl.DataFrame, pl.DataFrame, dict[str, market_index.IndexFit]]


def fit_drift_models(
    monthly: pl.DataFrame, gpus: pl.DataFrame
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per segment x market: drift, volatility and depreciation; per series: its own drift."""
    step_rows = steps(monthly, gpus)
    drift = fit_drift(step_rows).join(
        fit_depreciation(monthly, gpus).select("segment", "market", "depreciation"),
        on=["segment", "market"],
        how="left",
    )
    return drift, own_drift(step_rows)


def fit_models(monthly: pl.DataFrame, gpus: pl.DataFrame) -> Models:
    """fit_drift_models, plus each market group x market's chained price index."""
    return *fit_drift_models(monthly, gpus), market_index.fit_indexes(monthly, gpus)


def with_index_move(carried: pl.DataFrame) -> pl.DataFrame:
    """mu, log_mean and log_sd of rows carrying market_index.CARRY_COLUMNS.

    `log_sd^2 = sigma_group^2 * h + Var(I(to) - I(t0))`: the GPU's own wander around its
    market over the gap plus the index's uncertainty (its steps' standard errors, bridged
    and extrapolated months at the index's monthly volatility). A market with no index
    falls back to the random walk with the segment's volatility.
    """
    horizon = pl.col("horizon").clip(lower_bound=_MIN_HORIZON_YEARS)
    sigma = pl.col("index_sigma").fill_null(pl.col("volatility"))
    return carried.with_columns(
        mu=pl.when(pl.col("horizon") > 0)
        .then(pl.col("index_change") / pl.col("horizon"))
        .otherwise(0.0),
        log_mean=pl.col("price_usd").log() + pl.col("index_change"),
        log_sd=(sigma.pow(2) * horizon + pl.col("index_var")).sqrt(),
    )


def _carry_with_index(rows: pl.DataFrame, fits, gpus: pl.DataFrame, to_t: pl.Expr):
    """The market_index candidate: the index's move from t0 to to_t (with_index_move)."""
    carried = market_index.carry_columns(
        rows.join(market_index.series_keys(gpus), on="gpu_id", how="left")
        .with_columns(pl.col("group").fill_null("data center"))
        .with_columns(_to_t=to_t),
        fits,
    )
    return with_index_move(carried.drop("_to_t", "group"))


def carry(
    last: pl.DataFrame,
    models: tuple[pl.DataFrame, pl.DataFrame],
    gpus: pl.DataFrame,
    to_t: pl.Expr,
    candidate: str,
) -> pl.DataFrame:
    """Carry each series' last price (`price_usd` at `t0`) to time `to_t` with a candidate.

    `models` is fit_models' output. Adds `mu` (the drift used, per year), `horizon`
    (years), `log_mean` (the predicted log price) and `log_sd`; market_index adds the
    market_index.CARRY_COLUMNS too.
    """
    drift, own, fits = models
    if candidate not in CANDIDATES:
        raise ValueError(f"unknown nowcast candidate {candidate!r}: {CANDIDATES}")
    segments = _segments(gpus)
    fallback_vol = drift["volatility"].median() if drift.height else 0.0
    rows = (
        last.join(segments, on="gpu_id", how="left")
        .with_columns(pl.col("segment").fill_null("professional"))
        .join(
            drift.select("segment", "market", "drift", "volatility", "depreciation"),
            on=["segment", "market"],
            how="left",
        )
        .join(own, on=["gpu_id", "market"], how="left")
        .with_columns(
            pl.col("drift").fill_null(0.0),
            pl.col("volatility").fill_null(fallback_vol),
            own_drift=pl.col("own_drift").fill_null(0.0),
            own_years=pl.col("own_years").fill_null(0.0),
            horizon=(to_t - pl.col("t0")).clip(lower_bound=0.0),
        )
    )
    if candidate == "market_index":
        return _carry_with_index(rows, fits, gpus, to_t)
    mu = {
        "random_walk": pl.lit(0.0),
        "segment_drift": pl.col("drift"),
        "depreciation": pl.col("depreciation").fill_null(pl.col("drift")),
        "own_drift_shrunk": (
            pl.col("own_years") * pl.col("own_drift") + _OWN_PRIOR_YEARS * pl.col("drift")
        )
        / (pl.col("own_years") + _OWN_PRIOR_YEARS),
    }[candidate]
    horizon = pl.col("horizon").clip(lower_bound=_MIN_HORIZON_YEARS)
    return rows.with_columns(mu=mu).with_columns(
        log_mean=pl.col("price_usd").log() + pl.col("mu") * pl.col("horizon"),
        log_sd=pl.col("volatility") * horizon.sqrt(),
    )


def backtest_cutoffs(
    monthly: pl.DataFrame, every_months: int = 6, warmup_years: float = 2.0
) -> list[float]:
    """The rolling origin's cut-offs, in years since 1970-01-01.

    Every `every_months` from `warmup_years` after the first monthly point, before the last.
    """
    if monthly.height < 2:
        return []
    first, last_t = monthly["t"].min(), monthly["t"].max()
    return [float(c) for c in np.arange(first + warmup_years, last_t, every_months / 12)]


def backtest(
    monthly: pl.DataFrame,
    gpus: pl.DataFrame,
    max_age_years: float,
    every_months: int = 6,
    warmup_years: float = 2.0,
    cutoffs: list[float] | None = None,
) -> pl.DataFrame:
    """Rolling-origin back-test: hide everything after a cut-off, nowcast what came later.

    Cut-offs every `every_months` from `warmup_years` after the first monthly point
    (backtest_cutoffs), or those given. At each, drift and volatility are fitted on the
    points before it; every series' last point before it is carried to each of its later
    points up to `max_age_years` ahead. Returns one row per prediction: candidate, cutoff,
    gpu_id, market, horizon, error (log), covered80/95. A cut-off's rows depend only on
    the points up to `max_age_years` after it (model/nowcast_backtest.py stores them).
    """
    schema = {
        "candidate": pl.Utf8,
        "cutoff": pl.Float64,
        "gpu_id": pl.Utf8,
        "market": pl.Utf8,
        "horizon": pl.Float64,
        "error": pl.Float64,
        "covered80": pl.Boolean,
        "covered95": pl.Boolean,
    }
    if monthly.height < 2:
        return pl.DataFrame(schema=schema)
    if cutoffs is None:
        cutoffs = backtest_cutoffs(monthly, every_months, warmup_years)
    out = []
    for cutoff in cutoffs:
        train = monthly.filter(pl.col("t") < cutoff)
        later = monthly.filter(pl.col("t") >= cutoff)
        if train.is_empty() or later.is_empty():
            continue
        models = fit_models(train, gpus)
        last = (
            train.sort("t")
            .group_by("gpu_id", "market")
            .agg(pl.col("price_usd").last(), t0=pl.col("t").last())
        )
        targets = (
            later.select("gpu_id", "market", target=pl.col("price_usd"), t=pl.col("t"))
            .join(last, on=["gpu_id", "market"])
            .filter(pl.col("t") - pl.col("t0") <= max_age_years)
        )
        if targets.is_empty():
            continue
        for candidate in CANDIDATES:
            carried = carry(targets, models, gpus, pl.col("t"), candidate)
            error = pl.col("target").log() - pl.col("log_mean")
            out.append(
                carried.select(
                    candidate=pl.lit(candidate),
                    cutoff=pl.lit(float(cutoff)),
                    gpu_id="gpu_id",
                    market="market",
                    horizon="horizon",
                    error=error,
                    covered80=error.abs() <= _Z[0.80] * pl.col("log_sd"),
                    covered95=error.abs() <= _Z[0.95] * pl.col("log_sd"),
                )
            )
    return pl.concat(out) if out else pl.DataFrame(schema=schema)


# GPU mining ended with Ethereum's move to proof of stake (the merge, 2022-09-15); the 2021
# boom and 2022 bust dominate the long-horizon errors, so the summary also reports the
# cut-offs from 2023 on, the market the nowcast works in today.
_AFTER_MINING = (dt.date(2023, 1, 1) - dt.date(1970, 1, 1)).days / _YEAR_DAYS
AFTER_MINING_BAND = "all, cut-offs from 2023"
HORIZON_BANDS = ((0.0, 0.5, "0-6 months"), (0.5, 1.0, "6-12 months"), (1.0, 2.0, "12-24 months"))


def horizon_band() -> pl.Expr:
    """The HORIZON_BANDS name of a prediction's `horizon` ('over 24 months' beyond them)."""
    band = pl.lit("over 24 months")
    for low, high, name in reversed(HORIZON_BANDS):
        band = (
            pl.when((pl.col("horizon") > low) & (pl.col("horizon") <= high))
            .then(pl.lit(name))
            .otherwise(band)
        )
    return band


def backtest_summary(
    predictions: pl.DataFrame, by: tuple[str, ...] = ("candidate",)
) -> pl.DataFrame:
    """Per `by` x horizon band (and all, and after mining): median absolute % error, coverage."""
    banded = predictions.with_columns(band=horizon_band())

    def summary(frame):
        return frame.agg(
            median_ape=(pl.col("error").abs().median().exp() - 1) * 100,
            coverage80=pl.col("covered80").mean() * 100,
            coverage95=pl.col("covered95").mean() * 100,
            n=pl.len(),
            series=pl.struct("gpu_id", "market").n_unique(),
        )

    calm = banded.filter(pl.col("cutoff") >= _AFTER_MINING)
    return pl.concat(
        [
            summary(banded.group_by(*by, "band")),
            summary(banded.group_by(*by)).with_columns(band=pl.lit("all")),
            summary(calm.group_by(*by)).with_columns(band=pl.lit(AFTER_MINING_BAND)),
        ],
        how="diagonal",
    ).sort(*by, "band")


def choose_candidate(summary: pl.DataFrame) -> str:
    """The candidate with the lowest median error over all horizons (depreciation if none)."""
    overall = summary.filter(pl.col("band") == "all").sort("median_ape", "candidate")
    return overall["candidate"][0] if overall.height else "depreciation"


CURRENT_SCHEMA = {
    "gpu_id": pl.Utf8,
    "market": pl.Utf8,
    "price_usd": pl.Float64,
    "price_low": pl.Float64,
    "price_high": pl.Float64,
    "log_sd": pl.Float64,
    "price_day": pl.Date,
    "age_days": pl.Int32,
    "price_method": pl.Utf8,
    "observed_price_usd": pl.Float64,
    "n_observations": pl.Int32,
    "sources": pl.Utf8,
    "detail": pl.Utf8,
    "listing_log_sd": pl.Float64,
    "source_country": pl.Utf8,
    "source_currency": pl.Utf8,
}


def current_prices(
    latest: pl.DataFrame,
    monthly: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    candidate: str,
    spreads: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Today's price per GPU x market (new, used and, where both are fresh, mean).

    `latest` holds each GPU x market's newest daily price on or before the run date
    (gpu_id, market, day, price_usd, n_observations, sources); `monthly` the monthly
    histories up to the run date; `spreads` the pooled listing spreads
    (model/price_uncertainty.listing_spreads). Observed prices keep their value with the
    interval of their evidence (n, own and pooled spread); nowcasts carry the random
    walk's `log_sd` on top. Every row has `log_sd` and a 95 % interval. Rows older than
    `price_max_age_days` are left out; market consistency drops are in
    current_prices_and_drops.
    """
    return current_prices_and_drops(latest, monthly, gpus, params, run_date, candidate, spreads)[0]


def current_prices_and_drops(
    latest: pl.DataFrame,
    monthly: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    candidate: str,
    spreads: pl.DataFrame | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """current_prices and the rows market consistency dropped (market_consistency.resolve)."""
    if latest.is_empty():
        return pl.DataFrame(schema=CURRENT_SCHEMA), pl.DataFrame(schema=DROP_SCHEMA)
    if "basis" not in latest.columns:
        latest = latest.with_columns(basis=pl.lit("street"))
    models = fit_models(monthly, gpus)
    run_t = (run_date - dt.date(1970, 1, 1)).days / _YEAR_DAYS
    dated = latest.with_columns(
        age_days=(pl.lit(run_date) - pl.col("day")).dt.total_days().cast(pl.Int32),
        t0=years_since_epoch(pl.col("day")),
    ).filter(pl.col("age_days") <= params.price_max_age_days)
    # The observed price's own uncertainty (model/price_uncertainty.py): n, spread, pool.
    dated = evidence_log_sd(dated, spreads, gpus)
    carried = carry(dated, models, gpus, pl.lit(run_t), candidate)
    fresh = pl.col("age_days") <= params.price_freshness_days
    z = _Z[0.95]
    rows = carried.with_columns(
        price_method=pl.when(fresh).then(pl.lit("observed")).otherwise(pl.lit("nowcast")),
        observed_price_usd=pl.col("price_usd"),
        price_usd=pl.when(fresh).then(pl.col("price_usd")).otherwise(pl.col("log_mean").exp()),
        # A nowcast is as uncertain as its base observation plus the walk since.
        log_sd=pl.when(fresh)
        .then(pl.col("evidence_log_sd"))
        .otherwise((pl.col("log_sd") ** 2 + pl.col("evidence_log_sd") ** 2).sqrt()),
    ).with_columns(
        price_low=pl.col("price_usd") * (-z * pl.col("log_sd")).exp(),
        price_high=pl.col("price_usd") * (z * pl.col("log_sd")).exp(),
        detail=pl.when(fresh)
        .then(
            pl.format(
                "observed {} days before the run date; {}",
                pl.col("age_days"),
                pl.col("spread_note"),
            )
        )
        .otherwise(_nowcast_detail(candidate, rows_have_index="index_key" in carried.columns)),
    )
    list_note = (
        pl.when(pl.col("basis") == "list")
        .then(pl.format("list price ({}), not a street price; ", pl.col("sources")))
        .otherwise(pl.lit(""))
    )
    single = rows.select(
        "gpu_id",
        "market",
        pl.col("price_usd").round(2),
        pl.col("price_low").round(2),
        pl.col("price_high").round(2),
        "log_sd",
        price_day="day",
        age_days="age_days",
        price_method="price_method",
        observed_price_usd="observed_price_usd",
        n_observations=pl.col("n_observations").cast(pl.Int32),
        sources="sources",
        detail=list_note + pl.col("detail"),
        listing_log_sd="listing_log_sd",
    )
    # Market consistency (model/market_consistency.py): discontinued cards' stale "new"
    # prices and the older side of a used > new pair are not today's market.
    single, dropped = resolve(single, gpus, run_date)
    today = (
        with_origins(pl.concat([single, mean_market(single)], how="diagonal_relaxed"))
        .sort("gpu_id", "market")
        .select(pl.col(name).cast(dtype) for name, dtype in CURRENT_SCHEMA.items())
    )
    return today, dropped


def _nowcast_detail(candidate: str, rows_have_index: bool) -> pl.Expr:
    """What moved a nowcast: the drift used, or the index, its move and its last month."""
    drift = pl.format(
        "{}: last observed {} days before at ${}; drift {}/year ({})",
        pl.lit(candidate),
        pl.col("age_days"),
        pl.col("observed_price_usd").round(2),
        (pl.col("mu") * 100).round(1).cast(pl.Utf8) + "%",
        pl.col("segment") + " " + pl.col("market"),
    )
    if not rows_have_index:
        return drift
    last = pl.col("index_last")
    through = pl.format(
        "{}-{}", (last // 12 + 1970).cast(pl.Utf8), (last % 12 + 1).cast(pl.Utf8).str.zfill(2)
    )
    move = (pl.col("index_change").exp() - 1) * 100
    sign = pl.when(move >= 0).then(pl.lit("+")).otherwise(pl.lit(""))
    flat = (
        pl.when(pl.col("index_extrapolated") > 0)
        .then(pl.format(", flat for the {} months after", pl.col("index_extrapolated")))
        .otherwise(pl.lit(""))
    )
    indexed = pl.format(
        "market_index: carried {} days with the {} index ({}{} %, observed through {}{}); "
        "last observed at ${}",
        pl.col("age_days"),
        pl.col("index_key"),
        sign,
        move.round(1),
        through,
        flat,
        pl.col("observed_price_usd").round(2),
    )
    # A system segment too thin for an index (market_index.fit_flat): carried flat.
    flat_carry = pl.format(
        "market_index: carried {} days flat ({}: too few repeat prices of machines sold whole "
        "for an index, and a GPU board index does not price them); last observed at ${}",
        pl.col("age_days"),
        pl.col("index_key"),
        pl.col("observed_price_usd").round(2),
    )
    return (
        pl.when(pl.col("index_key").str.ends_with("(flat)"))
        .then(flat_carry)
        .when(pl.col("index_key").is_not_null())
        .then(indexed)
        .otherwise(drift)
    )


def mean_market(single: pl.DataFrame) -> pl.DataFrame:
    """Dettmers' mean of new and used, only where both are observed (fresh) prices.

    Its price_day is the older of the two, so its age is never understated.
    """
    fresh = single.filter(pl.col("price_method") == "observed")
    return (
        fresh.group_by("gpu_id")
        .agg(
            n_markets=pl.col("market").n_unique(),
            price_usd=pl.col("price_usd").mean().round(2),
            price_low=pl.col("price_low").mean().round(2),
            price_high=pl.col("price_high").mean().round(2),
            price_day=pl.col("price_day").min(),
            age_days=pl.col("age_days").max(),
            observed_price_usd=pl.col("observed_price_usd").mean(),
            n_observations=pl.col("n_observations").sum(),
            sources=pl.col("sources")
            .drop_nulls()
            .str.split(",")
            .explode()
            .unique()
            .sort()
            .str.join(","),
        )
        .filter(pl.col("n_markets") == 2)
        .select(
            "gpu_id",
            market=pl.lit("mean"),
            price_usd="price_usd",
            price_low="price_low",
            price_high="price_high",
            log_sd=pl.lit(None, dtype=pl.Float64),
            price_day="price_day",
            age_days="age_days",
            price_method=pl.lit("observed"),
            observed_price_usd="observed_price_usd",
            n_observations="n_observations",
            sources="sources",
            detail=pl.lit("mean of the new and used prices, both observed within the window"),
        )
    )


def latest_daily(daily: pl.DataFrame, as_of: dt.date) -> pl.DataFrame:
    """Each GPU x market x basis' newest daily price on or before `as_of`.

    `basis` is 'list' where every source is a list-price source, else 'street'
    (model/market_consistency.py; choose_basis picks one per GPU x market). The pure form
    of the warehouse query in warehouse/reads.py (read_latest_daily).
    """
    if "sources" not in daily.columns:
        daily = daily.with_columns(sources=pl.lit(None, dtype=pl.Utf8))
    for column in ("price_min_usd", "price_max_usd"):
        if column not in daily.columns:
            daily = daily.with_columns(pl.col("price_usd").alias(column))
    if "n_observations" not in daily.columns:
        daily = daily.with_columns(n_observations=pl.lit(1, dtype=pl.Int32))
    return (
        daily.filter(pl.col("day") <= as_of)
        .with_columns(
            basis=pl.when(is_list_price(pl.col("sources")))
            .then(pl.lit("list"))
            .otherwise(pl.lit("street"))
        )
        .sort("day")
        .group_by("gpu_id", "market", "basis")
        .last()
        .select(
            "gpu_id",
            "market",
            "day",
            "price_usd",
            "price_min_usd",
            "price_max_usd",
            "n_observations",
            "sources",
            "basis",
        )
        .sort("gpu_id", "market")
    )


# The model_validation check the back-test's rows are stored under.
NOWCAST_CHECK = "price_nowcast_backtest"


def backtest_validation(summary: pl.DataFrame, chosen: str, run_date: dt.date) -> pl.DataFrame:
    """The back-test as model_validation rows (check `price_nowcast_backtest`).

    Per candidate x horizon band: median absolute % error (compared with the random walk's)
    and the share of later prices inside the 80 % and 95 % intervals (compared with 80, 95).
    """
    walk = summary.filter(pl.col("candidate") == "random_walk").select(
        "band", walk=pl.col("median_ape")
    )
    rows = summary.join(walk, on="band", how="left")
    chosen_note = (
        pl.when(pl.col("candidate") == chosen).then(pl.lit("; chosen")).otherwise(pl.lit(""))
    )
    base = dict(
        run_date=pl.lit(run_date),
        check_name=pl.lit(NOWCAST_CHECK),
        subject=pl.col("candidate") + ", " + pl.col("band"),
        value_low=pl.lit(None, dtype=pl.Float64),
        value_high=pl.lit(None, dtype=pl.Float64),
        n=pl.col("n").cast(pl.Int32),
    )
    return pl.concat(
        [
            rows.select(
                **base,
                metric=pl.lit(metric),
                value=pl.col(column),
                reference_value=reference,
                detail=pl.format(text, pl.col("series")) + chosen_note,
            )
            for metric, column, reference, text in (
                (
                    "median_ape_pct",
                    "median_ape",
                    pl.col("walk"),
                    "rolling origin every 6 months; {} GPU x market series; vs the random walk",
                ),
                ("coverage80_pct", "coverage80", pl.lit(80.0), "{} series; nominal 80 %"),
                ("coverage95_pct", "coverage95", pl.lit(95.0), "{} series; nominal 95 %"),
            )  # fmt: skip
        ]
    ).sort("subject", "metric")
