"""Validation asset: the model's checks against data and Dettmers' figures (methodology §3b).

A thin wrapper around `model.validation`; keyed by `run_date` like every model
table, replaced as a whole for that date.
"""

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.llm import decode_validation
from model.llm_calibration import (
    PREFILL_DETAIL,
    decode_validation_by_stack,
    prefill_validation_by_stack,
    validation_rows,
)
from model.nowcast import NOWCAST_CHECK
from model.nowcast_backtest import HOLDOUT_CHECK
from model.validation import model_validation as compute_model_validation
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from pipeline.defs.steps import check_step


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[
        "benchmark_debiased",
        "relative_performance",
        "benchmark_results",
        "gpus",
        "llm_benchmarks",
    ],
    description=(
        "One row per validation figure: fitted batch-size gain vs Dettmers' 13.6 %/13.5 %, "
        "1-GPU throughput predicted from n-GPU results (fitted e_n vs dividing by n), "
        "leave-one-GPU-out error of the spec-based estimator, and debiased A100/V100 "
        "speedups vs Dettmers' 1.45x/1.70x and the LLM decode model's leave-one-GPU-out error "
        "(current_prices adds the price nowcast's back-test)."
    ),
)
def model_validation(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Compute and store the run's validation figures."""
    with model_step(context, settings, warehouse) as step:
        run_date = step.run_date
        results = step.read_all("benchmark_results")
        catalog = step.read_all("gpus")
        debiased = step.read("benchmark_debiased")
        constants = step.read("model_constants")
        rows = compute_model_validation(
            results,
            catalog,
            debiased,
            constants,
            step.params,
            run_date,
            relative=step.read("relative_performance"),
        )
        llm_benchmarks = step.read_all("llm_benchmarks")
        llm = decode_validation(llm_benchmarks, catalog)
        # The decode model's error per vendor x stack (ROCm, Vulkan, CUDA, Ollama).
        by_stack = validation_rows(decode_validation_by_stack(llm_benchmarks, catalog), run_date)
        # The prefill model's, likewise (per-architecture efficiency, model/llm_prefill.py).
        prefill = validation_rows(
            prefill_validation_by_stack(llm_benchmarks, catalog),
            run_date,
            "llm_prefill_logo_stack",
            PREFILL_DETAIL,
        )
        rows = pl.concat([rows, llm_rows(llm, run_date), by_stack, prefill], how="diagonal_relaxed")
        # The price back-tests' rows belong to current_prices, which runs them to choose.
        step.write(
            "model_validation",
            rows,
            "run_date = ? AND check_name NOT IN (?, ?)",
            [run_date, NOWCAST_CHECK, HOLDOUT_CHECK],
        )
    headline = rows.filter(pl.col("metric").is_in(["median_ape", "speedup"]))
    return step.result(
        checks=", ".join(sorted(set(rows["check_name"]))),
        headline="; ".join(
            f"{s} {m} {v:.3f}"
            for s, m, v in headline.select("subject", "metric", "value").iter_rows()
            if v is not None
        ),
    )


def llm_rows(llm: dict, run_date) -> pl.DataFrame:
    """The decode model's leave-one-GPU-out error as model_validation rows."""
    detail = (
        f"llama.cpp batch-1 decode, a x read time at full bandwidth + c a layer, fitted without "
        f"the GPU predicted; {llm['n']} measured rows on {llm['n_gpus']} GPUs"
    )
    return pl.DataFrame(
        {
            "run_date": [run_date] * 2,
            "check_name": ["llm_decode_logo"] * 2,
            "subject": ["llama.cpp decode"] * 2,
            "metric": ["median_ape", "p90_ape"],
            "value": [llm["median_ape"], llm["p90_ape"]],
            "reference_value": [0.20, None],
            "value_low": [None, None],
            "value_high": [None, None],
            "n": [llm["n"]] * 2,
            "detail": [detail] * 2,
        },
        schema_overrides={
            "value": pl.Float64,
            "reference_value": pl.Float64,
            "value_low": pl.Float64,
            "value_high": pl.Float64,
            "n": pl.Int32,
        },  # fmt: skip
    )


@dg.asset_check(
    pool=WAREHOUSE_POOL,
    asset="relative_performance",
    description="Every 95 % interval brackets its value and the reference GPU is exactly 1.",
)
def relative_performance_intervals(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """value_low <= value <= value_high wherever an interval exists; count the missing."""
    with check_step(context, settings, warehouse) as step:
        rows = step.con.sql(
            "SELECT gpu_id, workload, value, value_low, value_high, reference_gpu "
            "FROM relative_performance WHERE run_date = ?",
            params=[step.run_date],
        ).pl()
    bounded = rows.filter(pl.col("value_low").is_not_null() & pl.col("value_high").is_not_null())
    tolerance = 1e-9
    outside = bounded.filter(
        (pl.col("value_low") > pl.col("value") * (1 + tolerance))
        | (pl.col("value") > pl.col("value_high") * (1 + tolerance))
    )
    reference = bounded.filter(
        (pl.col("gpu_id") == pl.col("reference_gpu"))
        & ((pl.col("value_high") - pl.col("value_low")).abs() > tolerance)
    )
    problems = [f"{g} {w}: interval does not bracket the value" for g, w, *_ in outside.rows()]
    problems += [f"{g} {w}: reference has a non-zero interval" for g, w, *_ in reference.rows()]
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems) if problems else "ok",
        metadata={"rows": rows.height, "without_interval": rows.height - bounded.height},
    )
