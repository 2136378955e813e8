"""The independent-evidence table and its blocking check (issue 22 step 9).

`independent_checks` joins the bundled published pairs
(`sources/data/benchmarks/independent/independent_ratios.csv`) with the run's relative
performance and LLM throughput (`model.independent_check`);
`independent_ratios_within_tolerance` fails the run, before charts, site and publish, when
an enforced pair leaves its tolerance.
"""

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.independent_check import independent_checks as compute_independent_checks
from model.independent_check import independent_problems
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from pipeline.defs.steps import check_step
from sources.bundled import read_independent_ratios
from warehouse.reads import read_for_run

PAIRS_FILE = ("benchmarks", "independent", "independent_ratios.csv")


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["relative_performance", "llm_inference", "gpus"],
    description=(
        "One row per independently published GPU-pair ratio (MLPerf same round, Lambda "
        "PyTorch, llama.cpp): ours beside theirs, the log error, the tolerance and whether "
        "the pair passes (sources/data/benchmarks/independent/independent_ratios.csv)."
    ),
)
def independent_checks(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Compare the run's ratios with the pinned published ones."""
    with model_step(context, settings, warehouse) as step:
        catalog = frozenset(step.read_all("gpus")["gpu_id"])
        pairs = read_independent_ratios(settings.data_path(*PAIRS_FILE), catalog)
        rows = compute_independent_checks(
            pairs, step.read("relative_performance"), step.read("llm_throughput"), step.run_date
        )
        step.write("independent_checks", rows)
    outside = rows.filter(~pl.col("passed"))
    return step.result(
        f"{rows.height} pairs, {rows.height - outside.height} within tolerance",
        pairs=rows.height,
        outside=outside.height,
        outside_not_enforced=outside.filter(~pl.col("enforced")).height,
    )


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset=independent_checks,
    blocking=True,
    description=(
        "Every enforced published pair (MLPerf same round, Lambda PyTorch, llama.cpp) is "
        "within its tolerance of our ratio (model/independent_check.py)."
    ),
)
def independent_ratios_within_tolerance(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """Fail the run on an enforced pair outside its tolerance, naming each such pair."""
    with check_step(context, settings, warehouse) as step:
        run_date = step.run_date
        checks = read_for_run(step.con, "independent_checks", run_date)
    problems = independent_problems(checks)
    if checks.is_empty():
        problems.append(f"no independent pair was compared for {run_date}")
    relaxed = checks.filter(~pl.col("enforced") & ~pl.col("passed"))
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems) if problems else "ok",
        metadata={
            "run_date": str(run_date),
            "pairs": checks.height,
            "problems": len(problems),
            "outside_not_enforced": relaxed.height,
            "not_enforced": ", ".join(
                f"{a}/{b} {w}" for a, b, w in relaxed.select("gpu_a", "gpu_b", "workload").rows()
            ),
        },
    )
