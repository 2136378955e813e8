"""Today's prices: the `current_prices` asset.

Its reads (warehouse/reads.py) are aggregates DuckDB computes where the data is: the newest
daily price per GPU x market (one row each) and the monthly medians of the histories (GPUs
x markets x months), so a night reads what the model needs, not every observation ever kept.
"""

import datetime as dt
from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.backtest_window import NO_STORE, PredictionStore, complete_months
from model.market_consistency import LIST_PRICE_SOURCES, choose_basis

# current_prices runs the back-tests to choose its candidate and stores their figures under
# NOWCAST_CHECK and HOLDOUT_CHECK in model_validation (the model_validation asset leaves
# those rows alone).
from model.nowcast import (
    NOWCAST_CHECK,
    backtest_validation,
    current_prices_and_drops,
)
from model.nowcast_backtest import (
    HOLDOUT_CHECK,
    choose_nowcast,
    holdout_validation,
    windowed_summaries,
)
from model.price_uncertainty import listing_spreads
from pipeline.defs.freshness import RETAIL_PRICES
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.backtest_store import FilePredictionStore
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from warehouse.reads import read_latest_daily, read_listing_days, read_monthly_series

CATALOG_SQL = (
    "SELECT gpu_id, name, vendor, architecture, launch_price_usd, release_date FROM gpus"
    " ORDER BY gpu_id"
)


def backtest_store(build_dir: str | Path) -> FilePredictionStore:
    """The back-tests' stored origins of the build folder (next to its chart cache)."""
    return FilePredictionStore(Path(build_dir) / "backtest-cache")


def nowcast_choice(
    monthly: pl.DataFrame,
    gpus: pl.DataFrame,
    max_age_days: int,
    run_date: dt.date,
    store: PredictionStore = NO_STORE,
) -> tuple[str, pl.DataFrame, pl.DataFrame, dict[str, int]]:
    """The nowcast candidate the back-tests choose, the rolling-origin and held-out summaries.

    The back-tests run on the complete months before the run date's, over their last
    origins, each origin computed once (model/backtest_window.py; `store` keeps them).
    """
    summary, by_segment, counts = windowed_summaries(
        complete_months(monthly, run_date), gpus, max_age_days / 365.25, store
    )
    return choose_nowcast(summary, by_segment), summary, by_segment, counts


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["benchmark_debiased", "gpu_prices_daily", "gpus"],
    freshness_policy=RETAIL_PRICES,
    description=(
        "One row per GPU x market (new, used, mean) for the run date: the price used today, "
        "observed if seen within price_freshness_days, else nowcast from its last observation "
        "with the candidate the back-tests choose (its market group's price index, or a "
        "drift) and a widening interval; none beyond price_max_age_days. Every price's "
        "interval comes from its evidence (n, spread, pooled spread). Also writes the "
        "rolling-origin and held-out-GPU back-tests to model_validation and the prices "
        "market consistency dropped to price_consistency."
    ),
)
def current_prices(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Today's price per GPU x market, with its method, age and interval."""
    with model_step(context, settings, warehouse) as step:
        con, run_date, params = step.con, step.run_date, step.params
        gpus = con.sql(CATALOG_SQL).pl()
        monthly = read_monthly_series(con, run_date)
        store = backtest_store(settings.build_dir)
        candidate, summary, holdout, origins = nowcast_choice(
            monthly, gpus, params.price_max_age_days, run_date, store
        )
        store.prune()
        latest = choose_basis(
            read_latest_daily(con, run_date, LIST_PRICE_SOURCES),
            params.price_freshness_days,
            run_date,
        )
        spreads = listing_spreads(read_listing_days(con, run_date), gpus, run_date)
        rows, dropped = current_prices_and_drops(
            latest, monthly, gpus, params, run_date, candidate, spreads
        )
        step.write(
            "model_validation",
            pl.concat(
                [
                    backtest_validation(summary, candidate, run_date),
                    holdout_validation(holdout, candidate, run_date),
                ]
            ),
            "run_date = ? AND check_name IN (?, ?)",
            [run_date, NOWCAST_CHECK, HOLDOUT_CHECK],
        )
        step.write("current_prices", rows.with_columns(run_date=pl.lit(run_date)))
        step.write("price_consistency", dropped.with_columns(run_date=pl.lit(run_date)))
    too_old = (
        latest.select("gpu_id", "market").unique().height
        - rows.filter(pl.col("market") != "mean").height
        - dropped.height
    )
    methods = rows.group_by("market", "price_method").len().sort("market", "price_method")
    overall = holdout.filter(
        (pl.col("segment") == "all segments")
        & (pl.col("band") == "all")
        & (pl.col("candidate") == candidate)
    )
    return step.result(
        f"{rows.height} prices ({candidate}); {dropped.height} GPU x market dropped by "
        f"market consistency (price_consistency); {too_old} last seen over "
        f"{params.price_max_age_days} days ago left unpriced",
        gpus=rows["gpu_id"].n_unique(),
        by_method=", ".join(f"{m} {p}: {n}" for m, p, n in methods.iter_rows()),
        too_old=too_old,
        consistency_drops=dropped.height,
        zero_width_intervals=rows.filter(pl.col("price_low") >= pl.col("price_high")).height,
        pooled_listing_spread=", ".join(
            f"{r['line']} {r['market']} {r['pooled_log_sd']:.3f} ({r['level']})"
            for r in spreads.iter_rows(named=True)
        ),
        nowcast_candidate=candidate,
        backtest_origins=", ".join(f"{k} {v}" for k, v in origins.items()),
        backtest_median_ape_pct=float(overall["median_ape"][0]) if overall.height else None,
    )
