"""The held-out-GPU back-test of the nowcast, the rule that chooses the candidate, prices_today.

A stale GPU in a market that kept trading:
The rolling-origin back-test (nowcast.backtest) hides everything after a cut-off, so no
comparable GPU is ever seen after the stale observation and the market index can only
extrapolate (a random walk). A nowcast of today is another situation: one GPU was last
seen months ago, but other GPUs of its market were seen since. This back-test reproduces
it. At as-of months T every `every_months`, each GPU x market priced in month T is held
out: its price at T is the target, and each of its monthly prices in the
`max_age_years` before T is an origin. The market index is refitted on every other GPU's
prices up to T (not the held-out GPU's, at any date); the drift candidates use what was
known at the origin (fit on the months up to it, as in the rolling origin). Every
candidate carries the origin price to T; the error and the 80 % / 95 % coverage are
summarised per market group (the index key) x horizon band.

`choose_nowcast` picks the candidate today's nowcasts use: the lowest median error of the
held-out back-test over all segments, as-of months from 2023 (after GPU mining ended; the
2021 boom and 2022 bust are not the market a nowcast of today works in). The held-out
regime is the one the nowcasts are in; the rolling origin (pure extrapolation) is still
published beside it, and its choice is the fallback when the held-out cases are empty.
"""

import dataclasses
import datetime as dt
import hashlib

import numpy as np
import polars as pl

from model import market_index
from model.backtest_window import (
    BACKTEST_ORIGINS,
    NO_STORE,
    Fingerprints,
    PredictionStore,
    by_origin,
    complete_months,
    month_of_years,
    origin_key,
)
from model.market_consistency import choose_basis
from model.nowcast import (
    _Z,
    AFTER_MINING_BAND,
    CANDIDATES,
    backtest,
    backtest_cutoffs,
    backtest_summary,
    carry,
    choose_candidate,
    current_prices,
    fit_drift_models,
    latest_daily,
    monthly_series,
    with_index_move,
)
from model.parameters import ModelParameters
from model.price_uncertainty import listing_spreads

HOLDOUT_CHECK = "price_nowcast_holdout"
ALL_SEGMENTS = "all segments"

PREDICTION_SCHEMA = {
    "candidate": pl.Utf8,
    "cutoff": pl.Float64,
    "gpu_id": pl.Utf8,
    "market": pl.Utf8,
    "segment": pl.Utf8,
    "horizon": pl.Float64,
    "error": pl.Float64,
    "covered80": pl.Boolean,
    "covered95": pl.Boolean,
    # The as-of month T (months since 1970-01) the prediction belongs to.
    "as_of": pl.Int64,
}


def _keyed(monthly: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    return (
        monthly.join(market_index.series_keys(gpus), on="gpu_id", how="left")
        .with_columns(pl.col("group").fill_null("data center"))
        .with_columns(
            group_key=market_index.index_key_expr(pl.col("group"), pl.col("market")),
            m=market_index.month_number(pl.col("month")).cast(pl.Int64),
        )
    )


def as_of_months(monthly: pl.DataFrame, every_months: int = 6,
                 warmup_years: float = 2.0) -> list[int]:  # fmt: skip
    """The as-of months T (months since 1970-01) of the held-out back-test.

    Every `every_months` from `warmup_years` after the first monthly point, up to the last.
    """
    if monthly.is_empty():
        return []
    months = market_index.month_number(monthly["month"])
    first, last = int(months.min()), int(months.max())
    return list(range(first + round(warmup_years * 12), last + 1, every_months))


def holdout_cases(monthly: pl.DataFrame, gpus: pl.DataFrame, max_age_years: float,
                  every_months: int = 6, warmup_years: float = 2.0,
                  as_of: list[int] | None = None) -> pl.DataFrame:  # fmt: skip
    """One row per (as-of month T, held-out GPU x market, origin month before T).

    `as_of` limits T to those months (default: every as_of_months month).
    """
    keyed = _keyed(monthly, gpus)
    if keyed.is_empty():
        return keyed
    if as_of is None:
        as_of = as_of_months(monthly, every_months, warmup_years)
    max_months = round(max_age_years * 12)
    targets = keyed.filter(pl.col("m").is_in(as_of)).select(
        "gpu_id", "market", "group_key", "group", T="m", target="price_usd", t_target="t"
    )
    return (
        targets.join(
            keyed.select("gpu_id", "market", "price_usd", m0="m", t0="t"),
            on=["gpu_id", "market"],
        )
        .filter(pl.col("m0") < pl.col("T"), pl.col("T") - pl.col("m0") <= max_months)
        .sort("T", "gpu_id", "market", "m0")
    )


def _predictions(carried: pl.DataFrame, candidate: str) -> pl.DataFrame:
    error = pl.col("target").log() - pl.col("log_mean")
    return carried.select(
        candidate=pl.lit(candidate),
        cutoff=pl.col("t_target"),
        gpu_id="gpu_id",
        market="market",
        segment="group_key",
        horizon="horizon",
        error=error,
        covered80=error.abs() <= _Z[0.80] * pl.col("log_sd"),
        covered95=error.abs() <= _Z[0.95] * pl.col("log_sd"),
        as_of="T",
    )


def _index_moves(cases: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    """market_index.CARRY_COLUMNS for every case, each (T, GPU) with its own index fit.

    The fit for (T, GPU) is market_index.fit_for on every other GPU's pairs up to month T.
    """
    parts = []
    upto, upto_month = pairs, None
    for (as_of, gpu_id, key), frame in cases.group_by(
        "T", "gpu_id", "group_key", maintain_order=True
    ):
        if as_of != upto_month:  # once per T, not per held-out GPU
            upto, upto_month = pairs.filter(pl.col("m2") <= as_of), as_of
        fit = market_index.fit_for(upto.filter(pl.col("gpu_id") != gpu_id), key)
        if fit is None:
            change = var = np.zeros(frame.height)
            beyond, sigma, name, last = np.zeros(frame.height, dtype=np.int64), None, None, None
        else:
            change, var, beyond = market_index.index_change(
                fit, frame["m0"].to_numpy(), frame["T"].to_numpy()
            )
            sigma, name, last = fit.sigma * np.sqrt(12.0), fit.key, fit.last
        parts.append(
            frame.select("_case").with_columns(
                index_key=pl.lit(name, pl.Utf8),
                index_change=pl.Series(change, dtype=pl.Float64),
                index_var=pl.Series(var, dtype=pl.Float64),
                index_sigma=pl.lit(sigma, pl.Float64),
                index_last=pl.lit(last, pl.Int64),
                index_extrapolated=pl.Series(beyond, dtype=pl.Int64),
            )
        )
    return pl.concat(parts)


def holdout_backtest(monthly: pl.DataFrame, gpus: pl.DataFrame, max_age_years: float,
                     every_months: int = 6, warmup_years: float = 2.0,
                     as_of: list[int] | None = None) -> pl.DataFrame:  # fmt: skip
    """Predictions of every candidate for the held-out cases (PREDICTION_SCHEMA rows).

    The drift candidates are fitted on the months up to the start of the origin's
    `every_months` block (never after the origin; one fit per block, not per month).
    `as_of` limits the as-of months (holdout_cases); an as-of month's rows depend only on
    the monthly points up to it.
    """
    cases = holdout_cases(monthly, gpus, max_age_years, every_months, warmup_years, as_of)
    if cases.is_empty():
        return pl.DataFrame(schema=PREDICTION_SCHEMA)
    keyed = _keyed(monthly, gpus)
    cases = cases.with_row_index("_case").with_columns(
        block=pl.col("m0") - (pl.col("m0") - int(keyed["m"].min())) % every_months
    )
    out, carried_rw = [], None
    for (block,), frame in cases.group_by("block", maintain_order=True):
        seen = keyed.filter(pl.col("m") <= block).drop("group_key", "group", "m")
        models = (*fit_drift_models(seen, gpus), {})
        rows = frame.drop("group")
        for candidate in (c for c in CANDIDATES if c != "market_index"):
            carried = carry(rows, models, gpus, pl.col("t_target"), candidate)
            out.append(_predictions(carried, candidate))
            if candidate == "random_walk":
                # The index's fallback volatility, when its market has no index.
                part = carried.select("_case", "horizon", "volatility")
                carried_rw = part if carried_rw is None else pl.concat([carried_rw, part])
    moves = _index_moves(cases, market_index.index_pairs(monthly, gpus))
    indexed = with_index_move(
        cases.join(carried_rw, on="_case").join(moves, on="_case").sort("_case")
    )
    out.append(_predictions(indexed, "market_index"))
    return pl.concat(out).cast(PREDICTION_SCHEMA)


def segment_summary(predictions: pl.DataFrame) -> pl.DataFrame:
    """Per candidate x segment (and all segments) x horizon band (and all, after mining).

    Columns: candidate, segment, band, median_ape, coverage80, coverage95, n, series.
    """
    both = pl.concat([predictions, predictions.with_columns(segment=pl.lit(ALL_SEGMENTS))])
    return backtest_summary(both, by=("candidate", "segment"))


def holdout_validation(summary: pl.DataFrame, chosen: str, run_date) -> pl.DataFrame:
    """The held-out back-test as model_validation rows (check `price_nowcast_holdout`).

    subject = "candidate, segment, band"; metrics median_ape_pct (compared with the random
    walk's), coverage80_pct and coverage95_pct (compared with 80 and 95).
    """
    walk = summary.filter(pl.col("candidate") == "random_walk").select(
        "segment", "band", walk=pl.col("median_ape")
    )
    rows = summary.join(walk, on=["segment", "band"], how="left")
    chosen_note = (
        pl.when(pl.col("candidate") == chosen).then(pl.lit("; chosen")).otherwise(pl.lit(""))
    )
    base = dict(
        run_date=pl.lit(run_date),
        check_name=pl.lit(HOLDOUT_CHECK),
        subject=pl.concat_str(["candidate", "segment", "band"], separator=", "),
        value_low=pl.lit(None, dtype=pl.Float64),
        value_high=pl.lit(None, dtype=pl.Float64),
        n=pl.col("n").cast(pl.Int32),
    )
    specs = (
        ("median_ape_pct", "median_ape", pl.col("walk"),
         "held-out GPU at as-of months every 6 months; {} series; vs the random walk"),
        ("coverage80_pct", "coverage80", pl.lit(80.0), "{} series; nominal 80 %"),
        ("coverage95_pct", "coverage95", pl.lit(95.0), "{} series; nominal 95 %"),
    )  # fmt: skip
    return pl.concat(
        [
            rows.select(
                **base,
                metric=pl.lit(metric),
                value=pl.col(column),
                reference_value=reference,
                detail=pl.format(text, pl.col("series")) + chosen_note,
            )
            for metric, column, reference, text in specs
        ]
    ).sort("subject", "metric")


def choose_nowcast(rolling: pl.DataFrame, holdout: pl.DataFrame) -> str:
    """The candidate with the lowest held-out median error (all segments, from 2023).

    `rolling` is backtest_summary's output, `holdout` segment_summary's; the rolling
    origin's choice stands in when the held-out back-test has no such band.
    """
    band = holdout.filter(
        (pl.col("segment") == ALL_SEGMENTS) & (pl.col("band") == AFTER_MINING_BAND)
    ).sort("median_ape", "candidate")
    return band["candidate"][0] if band.height else choose_candidate(rolling)


ROLLING_SCHEMA = {k: v for k, v in PREDICTION_SCHEMA.items() if k not in ("segment", "as_of")}


@dataclasses.dataclass(frozen=True)
class Origins:
    """The window's origins of both back-tests and the store key of each."""

    rolling: dict[float, str]  # cut-off (years since 1970-01-01) -> key
    holdout: dict[int, str]  # as-of month (months since 1970-01) -> key

    @property
    def summary_key(self) -> str:
        """The key of the summaries of exactly these origins' predictions."""
        text = "|".join(["summaries", *self.rolling.values(), *self.holdout.values()])
        return hashlib.sha256(text.encode()).hexdigest()


def window_origins(monthly: pl.DataFrame, gpus: pl.DataFrame, max_age_years: float,
                   every_months: int = 6, warmup_years: float = 2.0,
                   origins: int = BACKTEST_ORIGINS) -> Origins:  # fmt: skip
    """The last `origins` cut-offs and as-of months of `monthly` (complete months), keyed.

    A cut-off's predictions depend on the points up to `max_age_years` after it, an as-of
    month's on those up to it: each key fingerprints exactly those (backtest_window).
    """
    settings = (float(max_age_years), every_months, float(warmup_years))
    prints = Fingerprints(monthly, gpus)
    cutoffs = backtest_cutoffs(monthly, every_months, warmup_years)[-origins:]
    months = as_of_months(monthly, every_months, warmup_years)[-origins:]
    return Origins(
        rolling={
            c: origin_key("rolling", c, settings, prints.upto(month_of_years(c + max_age_years)))
            for c in cutoffs
        },
        holdout={T: origin_key("holdout", T, settings, prints.upto(T)) for T in months},
    )


def windowed_backtests(
    monthly: pl.DataFrame,
    gpus: pl.DataFrame,
    max_age_years: float,
    store: PredictionStore = NO_STORE,
    every_months: int = 6,
    warmup_years: float = 2.0,
    origins: int = BACKTEST_ORIGINS,
    keyed: Origins | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """(rolling-origin predictions, held-out predictions, counts) over the last `origins`.

    `monthly` is the complete months (complete_months). The rows are those backtest and
    holdout_backtest return for the same origins; counts says how many origins each
    back-test evaluated and how many it computed (the rest came from `store`).
    """
    if keyed is None:
        keyed = window_origins(monthly, gpus, max_age_years, every_months, warmup_years, origins)
    rolling, rolling_new = by_origin(
        list(keyed.rolling),
        keyed.rolling,
        store,
        lambda todo: backtest(
            monthly, gpus, max_age_years, every_months, warmup_years, cutoffs=todo
        ),
        "cutoff",
        ROLLING_SCHEMA,
    )
    holdout, holdout_new = by_origin(
        list(keyed.holdout),
        keyed.holdout,
        store,
        lambda todo: holdout_backtest(
            monthly, gpus, max_age_years, every_months, warmup_years, as_of=todo
        ),
        "as_of",
        PREDICTION_SCHEMA,
    )
    counts = {
        "rolling_origins": len(keyed.rolling),
        "rolling_computed": rolling_new,
        "holdout_origins": len(keyed.holdout),
        "holdout_computed": holdout_new,
    }
    return rolling, holdout, counts


def windowed_summaries(
    monthly: pl.DataFrame,
    gpus: pl.DataFrame,
    max_age_years: float,
    store: PredictionStore = NO_STORE,
    origins: int = BACKTEST_ORIGINS,
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """(backtest_summary, segment_summary, counts) of windowed_backtests' predictions.

    The summaries of a window whose origins are all unchanged are the stored ones: a
    night within a month reads two small frames, not every origin's predictions.
    """
    keyed = window_origins(monthly, gpus, max_age_years, origins=origins)
    key = keyed.summary_key
    rolling, holdout = store.get(key + "-rolling"), store.get(key + "-holdout")
    if rolling is not None and holdout is not None:
        counts = {
            "rolling_origins": len(keyed.rolling),
            "rolling_computed": 0,
            "holdout_origins": len(keyed.holdout),
            "holdout_computed": 0,
        }
        return rolling, holdout, counts
    predictions, held_out, counts = windowed_backtests(
        monthly, gpus, max_age_years, store, keyed=keyed
    )
    rolling, holdout = backtest_summary(predictions), segment_summary(held_out)
    store.put(key + "-rolling", rolling)
    store.put(key + "-holdout", holdout)
    return rolling, holdout, counts


def prices_today(
    daily: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    as_of: dt.date,
    candidate: str | None = None,
) -> pl.DataFrame:
    """current_prices from a frame of daily prices (for tests, benchmarks and ad hoc use).

    `candidate` defaults to the one the back-tests of these histories choose
    (choose_nowcast), as the pipeline does.
    """
    upto = daily.filter(pl.col("day") <= as_of)
    monthly = monthly_series(upto)
    if candidate is None:
        max_age = params.price_max_age_days / 365.25
        rolling, holdout, _ = windowed_summaries(complete_months(monthly, as_of), gpus, max_age)
        candidate = choose_nowcast(rolling, holdout)
    latest = choose_basis(latest_daily(upto, as_of), params.price_freshness_days, as_of)
    spread_columns = {"n_observations", "price_min_usd", "price_max_usd", "sources"}
    spreads = listing_spreads(upto, gpus, as_of) if spread_columns <= set(upto.columns) else None
    return current_prices(latest, monthly, gpus, params, as_of, candidate, spreads)
