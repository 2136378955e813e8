"""LLM inference assets: the benchmark rows, then tokens/s and $ per million tokens.

Thin wrappers around `model.llm` (its docstring has the model); keyed by run_date
like every model table.
"""

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.cloud_freshness import fresh_only, with_freshness
from model.llm import llm_cost, llm_throughput, memory_fit
from model.llm_calibration import measured_decode_rates, rates_for_cost
from pipeline.defs.metadata import KINDS, replace_whole_table
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from sources.benchmarks.provenance import host_from_form_factor
from sources.bundled import read_llm_benchmarks
from warehouse.reads import catalog_ids, read_latest_offers

LLM_FILE = ("benchmarks", "llm", "llm_inference.csv")
# llama-bench figures from llama.cpp pull requests and other public threads (ROCm, Vulkan
# and CUDA, with context depth): sources/data/benchmarks/llm/MANIFEST.md section 5.
LLM_THREADS_FILE = ("benchmarks", "llm", "llamacpp_threads.csv")


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["gpus"],
    description=(
        "One row per published LLM inference measurement (GPU, GPU count, engine, model, "
        "weight bits and format, phase decode/prefill/serving, batch, context, tokens/s), "
        "with a citation (sources/data/benchmarks/llm/) and provenance (software stack, host "
        "class, batch regime; NULL where unknown)."
    ),
)
def llm_benchmarks(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the bundled LLM results, replacing the table."""
    path = settings.data_path(*LLM_FILE)
    with open_warehouse(warehouse) as con:
        form_factors = con.sql("SELECT gpu_id, form_factor FROM gpus").pl()
        ids = catalog_ids(con)
        read = [read_llm_benchmarks(p, ids) for p in (path, settings.data_path(*LLM_THREADS_FILE))]
        rows = host_from_form_factor(pl.concat(read, how="vertical_relaxed"), form_factors)
        written = replace_whole_table(context, con, "llm_benchmarks", rows)
    by = rows.group_by("source", "phase").len().sort("source", "phase")
    stacks = rows.group_by("stack").len().sort("stack", nulls_last=True)
    return dg.MaterializeResult(
        metadata={
            **written,
            "gpus": rows["gpu_id"].n_unique(),
            "by_source_phase": ", ".join(f"{s} {p}: {n}" for s, p, n in by.iter_rows()),
            "by_stack": ", ".join(f"{s}: {n}" for s, n in stacks.iter_rows()),
        }
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[llm_benchmarks, "perf_per_dollar", "cloud_offers", "benchmark_debiased"],
    description=(
        "One row per GPU x model size x weight bits x GPU count x context (llm_throughput): "
        "whether it fits in memory and its batch-1 decode and prefill tokens/s, measured or "
        "modelled with an interval; and per basis (buy new/used, rent on-demand/spot) the "
        "dollars per million generated tokens (llm_cost)."
    ),
)
def llm_inference(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Memory fit, tokens/s and $ per million tokens for the run."""
    with model_step(context, settings, warehouse) as step:
        run_date, params = step.run_date, step.params
        gpus = step.read_all("gpus")
        benchmarks = step.read_all("llm_benchmarks")
        fit = memory_fit(
            gpus,
            params.llm_model_sizes_b,
            params.llm_bits,
            params.llm_gpu_counts,
            params.llm_context_tokens,
            params.llm_overhead_gib,
        )
        throughput = llm_throughput(fit, gpus, benchmarks)
        # One cost of ownership per GPU x system size x market: the perf_per_dollar row's
        # (its cost does not depend on the workload).
        buy = step.read("perf_per_dollar").filter(pl.col("workload") == "inference_16bit")
        # The cost tables price a measured rate where one matches, else the model's.
        modelled = throughput.filter(pl.col("method").str.starts_with("modelled"))
        priced = rates_for_cost(modelled, measured_decode_rates(benchmarks, gpus))
        # Renting prices tokens at fresh offers only (model/cloud_freshness.py): a rank-1
        # rent row never rests on an offer older than its window.
        offers = fresh_only(
            with_freshness(
                read_latest_offers(step.con, run_date), params.cloud_freshness_days, run_date
            )
        )
        cost = llm_cost(priced, buy, offers, params.years, params.utilization)
        step.write("llm_throughput", throughput.with_columns(run_date=pl.lit(run_date)))
        step.write("llm_cost", cost.with_columns(run_date=pl.lit(run_date)))
    fits = throughput.filter(pl.col("fits") & pl.col("method").str.starts_with("modelled"))
    # rows and dagster/row_count are llm_throughput's (the asset's first table).
    return step.result(
        f"{throughput.height} throughput rows ({fits.height} configurations fit), "
        f"{cost.height} cost rows",
        table="llm_throughput",
        fitting_configurations=fits.height,
        gpus_running_8b_4bit=fits.filter((pl.col("model_params_b") == 8) & (pl.col("bits") == 4))[
            "gpu_id"
        ].n_unique(),
        cost_rows=cost.height,
        cost_rows_measured=cost.filter(pl.col("rate_source") == "measured").height,
    )
