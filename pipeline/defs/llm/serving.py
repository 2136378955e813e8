"""LLM serving assets: the model table, and batched serving throughput per configuration.

Thin wrappers around `model.llm_serving` and `model.llm_serving_fit` (their docstrings
have the model); llm_serving is keyed by run_date like every model table.
"""

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.llm_serving import llm_serving as serving_rows
from model.llm_serving_anchor import bandwidth_anchor, proxy_compute
from model.llm_serving_fit import engine_fits, summaries
from pipeline.defs.metadata import KINDS, replace_whole_table
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from pipeline.defs.steps import check_step
from sources.llm_models import read_llm_models

MODELS_FILE = ("llm", "models.csv")
EVIDENCE_TABLE = "llm_serving_benchmarks"


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    description=(
        "One row per LLM the serving model sizes (sources/data/llm/models.csv): total and "
        "active parameters, layers, attention type and KV-cache shape (GQA, MHA, sliding "
        "window, MLA), experts, context, licence, source (config.json / model card)."
    ),
)
def llm_models(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the bundled model table, replacing the table."""
    rows = read_llm_models(settings.data_path(*MODELS_FILE))
    with open_warehouse(warehouse) as con:
        written = replace_whole_table(context, con, "llm_models", rows)
    moe = rows.filter(pl.col("num_experts").is_not_null())["model_id"].to_list()
    return dg.MaterializeResult(metadata={**written, "mixture_of_experts": ", ".join(moe)})


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[llm_models, EVIDENCE_TABLE, "gpus", "llm_benchmarks", "relative_performance"],
    description=(
        "One row per GPU x model x weight bits x GPU count (tensor parallel) x concurrency "
        "(llm_serving): fits, KV capacity, output tokens/s (system and per user) with an "
        "interval, prefill tokens/s, TTFT, joules per output token; and per engine the "
        "serving fit's efficiencies, leave-one-GPU-out error and interval coverage "
        "(llm_serving_validation). Bandwidth shares are anchored on the batch-1 decode rows "
        "(llm_benchmarks); GPUs without a tensor figure use a relative-performance proxy."
    ),
)
def llm_serving(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Fit the engines on the measured serving rows, then the serving grid."""
    with model_step(context, settings, warehouse) as step:
        catalog = step.read_all("gpus")
        models = step.read_all("llm_models")
        evidence = step.read_all(EVIDENCE_TABLE)
        # Bandwidth shares from the batch-1 decode rows; tensor rates by proxy where the
        # spec sheet has none (model/llm_serving_anchor.py).
        anchor = bandwidth_anchor(step.read_all("llm_benchmarks"), catalog)
        gpus = proxy_compute(catalog, step.read("relative_performance"))
        validation = engine_fits(evidence, gpus, models, anchor)
        rows = serving_rows(
            gpus, models, summaries(validation), evidence, anchor, step.params.host_watts
        )
        run_date = pl.lit(step.run_date)
        step.write("llm_serving", rows.with_columns(run_date=run_date))
        step.write("llm_serving_validation", validation.with_columns(run_date=run_date))
    engines = summaries(validation)
    return step.result(
        f"{rows.height} serving rows, {engines.height} engine fits",
        table="llm_serving",
        evidence_rows=evidence.height,
        fitting_configurations=rows.filter(pl.col("fits") & (pl.col("concurrency") == 1)).height,
        engine_fits=", ".join(
            f"{e}: compute {c:.2f}, {u:g} us/layer, LOGO median APE "
            + (f"{a:.0%}" if a is not None else "n/a")
            for e, c, u, a in engines.select(
                "engine", "eff_compute", "layer_overhead_us", "median_ape"
            ).iter_rows()
        ),
    )


def _fits(con, gpu_id: str, run_date) -> bool | None:
    """Does 8x `gpu_id` hold DeepSeek-R1 at 8 bits (None: no row)."""
    found = con.sql(
        "SELECT bool_or(fits) FROM llm_serving WHERE run_date = ? AND gpu_id = ? AND "
        "model_id = 'deepseek-r1' AND precision_bits = 8 AND num_gpus = 8",
        params=[run_date, gpu_id],
    ).fetchall()
    return found[0][0] if found else None


@dg.asset_check(
    pool=WAREHOUSE_POOL,
    asset=llm_serving,
    blocking=True,
    description=(
        "Memory fit uses total parameters: 8x H100 80 GB does not hold DeepSeek-R1 (671B) at "
        "8 bits while 8x H200 (141 GB) does; every fitting modelled row has a positive rate "
        "inside its interval."
    ),
)
def llm_serving_sane(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """The DeepSeek-R1 fit rule and the intervals."""
    with check_step(context, settings, warehouse) as step:
        h100, h200 = (_fits(step.con, g, step.run_date) for g in ("h100-sxm5-80gb", "h200-sxm"))
        bad = step.con.sql(
            "SELECT count(*) FROM llm_serving WHERE run_date = ? AND output_tokens_per_s IS NOT "
            "NULL AND (output_tokens_per_s <= 0 OR low > output_tokens_per_s OR "
            "high < output_tokens_per_s OR NOT fits)",
            params=[step.run_date],
        ).fetchall()[0][0]
    problems = []
    if h100 is not False:
        problems.append(f"8x H100 80 GB holds DeepSeek-R1 at 8 bits: {h100}")
    if h200 is not True:
        problems.append(f"8x H200 does not hold DeepSeek-R1 at 8 bits: {h200}")
    if bad:
        problems.append(f"{bad} rows with a rate outside its interval or without a fit")
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems) if problems else "ok",
        metadata={"problems": len(problems)},
    )
