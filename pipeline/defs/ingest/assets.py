"""Ingest: the bundled snapshot (and, later, live fetchers) into the warehouse.

Each asset is a thin wrapper: a pure reader from `sources` returns validated rows, and
`warehouse.db.replace_rows` swaps them in per source x day in one transaction. A malformed
input raises before anything is written, so yesterday's rows stay.
"""

import datetime as dt

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.partitions import daily
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from pipeline.model.prices import daily_prices
from sources.bundled import (
    manifest_as_of,
    read_benchmark_figures,
    read_cloud_offers,
    read_fx_rates,
    read_gpu_specs,
    read_retail_observations,
    to_usd,
)
from warehouse.db import replace_rows

KINDS = {"duckdb", "polars"}


def _counts(rows: pl.DataFrame, column: str) -> str:
    """'a: 3, b: 5' for run metadata."""
    counts = rows.group_by(column).len().sort(column)
    return ", ".join(f"{k}: {n}" for k, n in counts.iter_rows())


def _day_range(context: dg.AssetExecutionContext) -> tuple[dt.date, dt.date]:
    """First and last day of the run's partition range (one day for a nightly run)."""
    keys = context.partition_keys
    return dt.date.fromisoformat(min(keys)), dt.date.fromisoformat(max(keys))


def catalog_ids(con) -> frozenset[str]:
    """The gpu_ids every other input must use."""
    ids = frozenset(r[0] for r in con.sql("SELECT gpu_id FROM gpus").fetchall())
    if not ids:
        raise ValueError("the gpus table is empty: materialize `gpus` first")
    return ids


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    description="One row per canonical GPU: specs from the curated, cited spec sheet.",
)
def gpus(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the curated spec sheet into `gpus`."""
    path = settings.data_path("specs", "gpu_specs.csv")
    rows = read_gpu_specs(path).with_columns(as_of=pl.lit(manifest_as_of(path.parent)))
    with open_warehouse(warehouse) as con:
        deleted, inserted = replace_rows(con, "gpus", rows, "true", [])
    context.log.info(f"gpus: replaced {deleted} rows with {inserted} from {path}")
    return dg.MaterializeResult(
        metadata={"rows": inserted, "source_file": str(path), "as_of": str(rows["as_of"][0])}
    )


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[gpus],
    description=(
        "One row per published benchmark measurement (source, GPU, model, precision, GPU "
        "count, batch size per GPU, throughput), transcribed with a citation."
    ),
)
def benchmark_results(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load every bundled benchmark file; each file replaces the rows of its sources."""
    files = sorted(settings.data_path("benchmarks").glob("*.csv"))
    if not files:
        raise FileNotFoundError(f"no benchmark files in {settings.data_path('benchmarks')}")
    with open_warehouse(warehouse) as con:
        ids = catalog_ids(con)
        frames = [read_benchmark_figures(path, ids) for path in files]
        rows = pl.concat(frames)
        sources = sorted(rows["source"].unique().to_list())
        placeholders = ", ".join("?" for _ in sources)
        deleted, inserted = replace_rows(
            con, "benchmark_results", rows, f"source IN ({placeholders})", sources
        )
    context.log.info(f"benchmark_results: {inserted} rows from {len(files)} files")
    return dg.MaterializeResult(
        metadata={
            "rows": inserted,
            "gpus": rows["gpu_id"].n_unique(),
            "sources": ", ".join(sources),
            "newest_as_of": str(rows["as_of"].max()),
        }
    )


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[gpus],
    partitions_def=daily,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description=(
        "One row per retail offer or sale (Amazon new, eBay used, ...) observed on the "
        "partition day, with its price in USD and where it was seen."
    ),
)
def price_observations(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the partition days' retail observations from the bundled snapshot.

    A run may cover a range of days (a backfill); each source x day in it is replaced.
    """
    first, last = _day_range(context)
    path = settings.data_path("prices", "retail_observations.csv")
    rates = read_fx_rates(settings.data_path("prices", "fx_rates.csv"))
    with open_warehouse(warehouse) as con:
        everything = read_retail_observations(path, catalog_ids(con))
        sources = sorted(everything["source"].unique().to_list())
        in_range = everything.filter(pl.col("observed_at").dt.date().is_between(first, last))
        rows = to_usd(in_range, rates, path)
        placeholders = ", ".join("?" for _ in sources)
        deleted, inserted = replace_rows(
            con,
            "price_observations",
            rows,
            f"CAST(observed_at AS DATE) BETWEEN ? AND ? AND source IN ({placeholders})",
            [first, last, *sources],
        )
    days = rows["observed_at"].dt.date().n_unique()
    context.log.info(
        f"price_observations {first}..{last}: {inserted} rows on {days} days (replaced {deleted})"
    )
    return dg.MaterializeResult(
        metadata={
            "rows": inserted,
            "replaced": deleted,
            "days_with_rows": days,
            "by_source": _counts(rows, "source"),
        }
    )


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[price_observations],
    partitions_def=daily,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description=(
        "One row per GPU x market (new, used) x day: the median USD price after dropping "
        "MAD outliers, with counts of observations kept and dropped."
    ),
)
def gpu_prices_daily(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Aggregate the partition days' observations into robust daily prices."""
    first, last = _day_range(context)
    with open_warehouse(warehouse) as con:
        observations = con.sql(
            "SELECT * FROM price_observations WHERE CAST(observed_at AS DATE) BETWEEN ? AND ?",
            params=[first, last],
        ).pl()
        rows = daily_prices(observations, settings.parameters().price_mad_k)
        deleted, inserted = replace_rows(
            con, "gpu_prices_daily", rows, "day BETWEEN ? AND ?", [first, last]
        )
    dropped = int(rows["n_dropped"].sum()) if rows.height else 0
    context.log.info(
        f"gpu_prices_daily {first}..{last}: {inserted} prices, {dropped} outliers dropped"
    )
    return dg.MaterializeResult(metadata={"rows": inserted, "outliers_dropped": dropped})


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[gpus],
    description=(
        "One row per cloud offer: provider x instance type x region x price type, with USD "
        "per instance-hour and per GPU-hour."
    ),
)
def cloud_offers(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the bundled cloud offers; each provider x day is replaced as a unit."""
    path = settings.data_path("cloud", "offers.csv")
    with open_warehouse(warehouse) as con:
        rows = read_cloud_offers(path, catalog_ids(con))
        same_provider_day = (
            "EXISTS (SELECT 1 FROM incoming_rows i WHERE i.provider = cloud_offers.provider "
            "AND CAST(i.observed_at AS DATE) = CAST(cloud_offers.observed_at AS DATE))"
        )
        deleted, _ = replace_rows(con, "cloud_offers", rows, same_provider_day)
    context.log.info(f"cloud_offers: {rows.height} rows (replaced {deleted})")
    return dg.MaterializeResult(
        metadata={"rows": rows.height, "by_provider": _counts(rows, "provider")}
    )
