"""The serving measurements the serving model is fitted on (issue 24 item 2's evidence).

A thin asset: `sources.benchmarks.serving.read_serving_benchmarks` reads and checks the
bundled file against the catalog; the table is replaced whole (every row is a published
figure, not a run's output, so it has no run_date).
"""

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.metadata import KINDS, replace_whole_table
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from sources.benchmarks.serving import read_serving_benchmarks
from warehouse.reads import catalog_ids

SERVING_FILE = ("benchmarks", "llm", "serving.csv")


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["gpus"],
    description=(
        "One row per published LLM serving measurement (MLPerf Inference Offline/Server/"
        "Interactive, TensorRT-LLM's performance overview, public vLLM sweeps): GPU and "
        "count, engine, model, precision, scenario, concurrency, whole-system output "
        "tokens/s, latency, power, date and citation (sources/data/benchmarks/llm/)."
    ),
)
def llm_serving_benchmarks(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the bundled serving measurements, replacing the table."""
    path = settings.data_path(*SERVING_FILE)
    with open_warehouse(warehouse) as con:
        rows = read_serving_benchmarks(path, catalog_ids(con))
        written = replace_whole_table(context, con, "llm_serving_benchmarks", rows)
    by = rows.group_by("source", "engine").len().sort("source", "engine")
    return dg.MaterializeResult(
        metadata={
            **written,
            "gpus": rows["gpu_id"].n_unique(),
            "models": rows["model_id"].n_unique(),
            "by_source_engine": ", ".join(f"{s} {e}: {n}" for s, e, n in by.iter_rows()),
            "scenarios": ", ".join(
                f"{s}: {n}" for s, n in rows.group_by("scenario").len().sort("scenario").iter_rows()
            ),
            "power_rows": rows.filter(pl.col("power_w").is_not_null()).height,
        }
    )
