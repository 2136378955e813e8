"""The curated price history: a backfill of dated, cited price series into the warehouse.

Aggregates and datasets (Keepa series, Tom's Hardware monthly eBay averages, sold-listing
datasets, list prices; sources/data/prices/MANIFEST.md) are facts with a gpu_id assigned
when they were transcribed, not pages to parse. They enter through the same tables and the
same daily-price step as a live night's parsed pages (`refresh_daily_prices`), in one
materialization rather than one Dagster run per day of history: a partition per day from
2019 would cost more in run bookkeeping than the load itself. The load is idempotent (all
curated rows are replaced as a unit) and skipped when the files are unchanged.
"""

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.implausible_asks import set_aside_implausible_asks
from pipeline.defs.ingest.daily import refresh_daily_prices
from pipeline.defs.metadata import KINDS, ROW_COUNT
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from sources.bundled import (
    CURATED_SOURCES,
    price_fact_files,
    read_fx_rates,
    read_price_facts,
    to_usd,
)
from warehouse.db import replace_rows
from warehouse.loads import code_files, fingerprint, loaded_unchanged, record_load
from warehouse.reads import catalog_ids


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["gpus"],
    description=(
        "One row per curated, cited price observation (one file per source in sources/data/"
        "prices/history/), loaded into price_observations with the daily prices of its days "
        "recomputed; skipped when the files are unchanged since the last load."
    ),
)
def price_history(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Replace every curated-history row and refresh the daily prices of the days touched."""
    prices_dir = settings.data_path("prices")
    fx_path = prices_dir / "fx_rates.csv"
    files = price_fact_files(prices_dir)
    mad_k = settings.parameters().price_mad_k
    code = code_files("sources/bundled.py", "sources/fx.py", "sources/tables.py",
                      "model/prices.py", "model/implausible_asks.py",
                      "sources/price_origins.py")  # fmt: skip
    stamp = fingerprint([*files, fx_path, *code], f"price_mad_k {mad_k}")
    with open_warehouse(warehouse) as con:
        if loaded_unchanged(con, "price_history", stamp):
            context.log.info("price_history: files unchanged since the last load; nothing to do")
            return dg.MaterializeResult(metadata={"status": "unchanged", "fingerprint": stamp})
        ids = catalog_ids(con)
        launch = dict(
            con.sql(
                "SELECT gpu_id, launch_price_usd FROM gpus WHERE launch_price_usd IS NOT NULL"
            ).fetchall()
        )
        facts = read_price_facts(prices_dir, ids, launch)
        curated = facts.filter(pl.col("source").is_in(CURATED_SOURCES))
        rows = to_usd(curated, read_fx_rates(fx_path), prices_dir).with_columns(
            match_reason=pl.lit("curated: gpu_id assigned when transcribed"),
            drop_reason=pl.lit(None, dtype=pl.Utf8),
        )
        # Placeholder asks stay in price_observations with drop_reason 'implausible_ask'
        # (counted in price_drops, shown with the other left-out observations).
        rows, set_aside = set_aside_implausible_asks(rows)
        for row in set_aside.iter_rows(named=True):
            context.log.info(f"price_history: set aside {row['source']} {row['gpu_id']} "
                             f"{row['observed_at']}: {row['why']}")  # fmt: skip
        placeholders = ", ".join("?" for _ in CURATED_SOURCES)
        where = f"source IN ({placeholders})"
        before = con.sql(
            f"SELECT min(CAST(observed_at AS DATE)), max(CAST(observed_at AS DATE)) "
            f"FROM price_observations WHERE {where}",
            params=list(CURATED_SOURCES),
        ).fetchall()[0]
        deleted, inserted = replace_rows(
            con, "price_observations", rows, where, list(CURATED_SOURCES)
        )
        days = rows["observed_at"].dt.date()
        bounds = [d for d in (*before, days.min(), days.max()) if d is not None]
        if bounds:
            daily, _ = refresh_daily_prices(con, min(bounds), max(bounds), mad_k)
        else:
            daily = pl.DataFrame()
        record_load(
            con,
            "price_history",
            stamp,
            inserted,
            f"{sum(p.exists() for p in files)} files, {days.min()}..{days.max()}",
        )
    by_source = rows.group_by("source").agg(pl.len(), pl.col("gpu_id").n_unique()).sort("source")
    context.log.info(
        f"price_history: {inserted} rows (replaced {deleted}) over {rows['gpu_id'].n_unique()} "
        f"GPUs, {days.min()}..{days.max()}; {daily.height} daily prices refreshed"
    )
    return dg.MaterializeResult(
        metadata={
            "status": "loaded",
            "rows": inserted,
            # The asset is the curated rows of price_observations, replaced as a unit.
            ROW_COUNT: inserted,
            "replaced": deleted,
            "gpus": rows["gpu_id"].n_unique(),
            "first_day": str(days.min()),
            "last_day": str(days.max()),
            "daily_prices_refreshed": daily.height,
            "implausible_asks_set_aside": set_aside.height,
            "by_source": ", ".join(f"{s}: {n} rows, {g} GPUs" for s, n, g in by_source.iter_rows()),
            "fingerprint": stamp,
        }
    )
