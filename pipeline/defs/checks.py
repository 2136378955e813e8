"""Asset checks.

Blocking checks stop the run before charts, site and publish, so a bad night never
replaces the previous site or published warehouse.
"""

import dagster as dg
from dagster_duckdb import DuckDBResource

from model.parameters import WORKLOADS
from model.plausibility import (
    form_factor_pairs,
    plausibility_problems,
    same_die_pairs,
)
from model.verdicts import verdict_problems
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from pipeline.defs.steps import check_step
from warehouse.reads import read_for_run


def _result(problems: list[str], **metadata) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems) if problems else "ok",
        metadata={**metadata, "problems": len(problems)},
    )


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="gpus",
    blocking=True,
    description="gpu_id is unique and well formed.",
)
def gpus_unique_ids(warehouse: DuckDBResource) -> dg.AssetCheckResult:
    """No duplicate or empty gpu_id in the catalog."""
    with open_warehouse(warehouse) as con:
        dupes = con.sql("SELECT gpu_id FROM gpus GROUP BY gpu_id HAVING count(*) > 1").fetchall()
        total = con.sql("SELECT count(*) FROM gpus").fetchall()[0][0]
    problems = [f"duplicate gpu_id {d[0]}" for d in dupes]
    if total == 0:
        problems.append("the catalog is empty")
    return _result(problems, gpus=total)


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="benchmark_results",
    blocking=True,
    description=(
        "Every benchmark row names a catalog GPU and has a positive throughput; a missing "
        "throughput or batch size is flagged (missing, no_batch_size), never silent."
    ),
)
def benchmark_results_valid(warehouse: DuckDBResource) -> dg.AssetCheckResult:
    """Referential integrity, sane values, and every gap carrying its flag."""
    with open_warehouse(warehouse) as con:
        orphans = con.sql(
            "SELECT DISTINCT gpu_id FROM benchmark_results WHERE gpu_id NOT IN "
            "(SELECT gpu_id FROM gpus)"
        ).fetchall()
        bad = con.sql(
            "SELECT count(*) FROM benchmark_results WHERE throughput <= 0 OR num_gpus < 1 "
            "OR batch_size_per_gpu < 1"
        ).fetchall()[0][0]
        # NULLs are how a published 0 / an absent batch size are stored; the model skips a
        # row only through its flag, so an unflagged NULL would reach the fits.
        unflagged = con.sql(
            "SELECT count(*) FILTER (throughput IS NULL AND NOT contains(coalesce(flags, ''),"
            " 'missing')), count(*) FILTER (batch_size_per_gpu IS NULL AND NOT"
            " contains(coalesce(flags, ''), 'no_batch_size')) FROM benchmark_results"
        ).fetchall()[0]
    problems = [f"unknown gpu_id {o[0]}" for o in orphans]
    if bad:
        problems.append(f"{bad} rows with non-positive throughput, GPU count or batch size")
    if unflagged[0]:
        problems.append(f"{unflagged[0]} rows without a throughput are not flagged missing")
    if unflagged[1]:
        problems.append(f"{unflagged[1]} rows without a batch size are not flagged no_batch_size")
    return _result(problems)


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="relative_performance",
    blocking=True,
    description="The reference GPU is 1.0 and every workload has measured GPUs.",
)
def relative_performance_anchored(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """The normalisation and coverage of the run's relative performance."""
    with check_step(context, settings, warehouse) as step:
        run_date = step.run_date
        rows = step.con.sql(
            "SELECT workload, max(CASE WHEN gpu_id = reference_gpu THEN value END), "
            "count(*) FILTER (WHERE method = 'measured'), count(*) FILTER (WHERE value <= 0) "
            "FROM relative_performance WHERE run_date = ? GROUP BY workload",
            params=[run_date],
        ).fetchall()
    found = {w: (ref, measured, bad) for w, ref, measured, bad in rows}
    problems = []
    for workload in WORKLOADS:
        if workload not in found:
            problems.append(f"{workload}: no rows")
            continue
        ref, measured, bad = found[workload]
        if ref is None or abs(ref - 1.0) > 1e-9:
            problems.append(f"{workload}: reference GPU value is {ref}, not 1.0")
        if workload != "inference_8bit" and measured == 0:
            problems.append(f"{workload}: no measured GPU")
        if bad:
            problems.append(f"{workload}: {bad} non-positive values")
    return _result(problems, run_date=str(run_date))


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="perf_per_dollar",
    blocking=True,
    description="Every workload has priced GPUs with positive, finite perf per dollar.",
)
def perf_per_dollar_complete(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """The run's perf per dollar covers every workload with sane values."""
    with check_step(context, settings, warehouse) as step:
        run_date = step.run_date
        rows = dict(
            step.con.sql(
                "SELECT workload, count(*) FROM perf_per_dollar WHERE run_date = ? "
                "AND perf_per_dollar > 0 AND isfinite(perf_per_dollar) GROUP BY workload",
                params=[run_date],
            ).fetchall()
        )
    problems = [f"{w}: no priced GPU" for w in WORKLOADS if not rows.get(w)]
    return _result(problems, run_date=str(run_date))


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="gpus",
    blocking=True,
    description=(
        "Every GPU has memory and bandwidth; every key spec it has (memory, bandwidth, TDP, "
        "fp16 tensor TFLOPS) has its source; every spec conflict names a catalog GPU."
    ),
)
def gpus_key_specs_sourced(warehouse: DuckDBResource) -> dg.AssetCheckResult:
    """The catalog's floor: what the model cannot do without, and no unsourced value.

    A tensor rate is NULL for GPUs without tensor units (Pascal, GTX 16) or without a dense
    vendor figure, and a TDP for superchips whose vendor gives only a board figure; the
    model estimates them without that term (model/spec_estimator.py) and leaves a GPU without a TDP
    out of the cost of ownership (no electricity), never with a guessed value.
    """
    required = ("memory_gb", "memory_bandwidth_gbs")
    sourced = ("memory_gb", "memory_bandwidth_gbs", "tdp_w", "fp16_tensor_tflops")
    with open_warehouse(warehouse) as con:
        missing = con.sql(
            "SELECT gpu_id FROM gpus WHERE "
            + " OR ".join(f"{f} IS NULL" for f in required)
            + " OR "
            + " OR ".join(f"({f} IS NOT NULL AND {f}_source IS NULL)" for f in sourced)
        ).fetchall()
        orphans = con.sql(
            "SELECT DISTINCT gpu_id FROM spec_conflicts WHERE gpu_id NOT IN "
            "(SELECT gpu_id FROM gpus)"
        ).fetchall()
        conflicts = con.sql("SELECT count(*) FROM spec_conflicts").fetchall()[0][0]
    problems = [
        f"{g[0]}: memory or bandwidth missing, or a key spec without its source" for g in missing
    ]
    problems += [f"spec conflict for unknown gpu_id {o[0]}" for o in orphans]
    return _result(problems, conflicts=conflicts)


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="relative_performance",
    blocking=True,
    description=(
        "Plausibility (model/plausibility.py): same-die variants within 15 %, "
        "SXM modules not slower than their PCIe cards, inference within 3x of training, "
        "every row marked measured or estimated with its evidence."
    ),
)
def relative_performance_plausible(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """Facts any ranking must respect; a failure keeps the previous site and warehouse."""
    with check_step(context, settings, warehouse) as step:
        run_date = step.run_date
        relative = read_for_run(step.con, "relative_performance", run_date)
        catalog = step.con.sql("SELECT * FROM gpus").pl()
    problems = plausibility_problems(relative, catalog)
    return _result(
        problems,
        run_date=str(run_date),
        same_die_pairs=len(same_die_pairs(catalog)),
        form_factor_pairs=len(form_factor_pairs(catalog)),
    )


@dg.asset_check(
    pool=WAREHOUSE_POOL,  # reads the warehouse: never beside another run's writer
    asset="verdicts",
    blocking=True,
    description=(
        "Every workload x (budget | memory tier) x option has exactly one verdict; a verdict "
        "naming a GPU has a positive perf per dollar inside its 95 % interval and a P(best) "
        "in [0, 1] (model/verdicts.py: verdict_problems)."
    ),
)
def verdicts_complete(
    context: dg.AssetCheckExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.AssetCheckResult:
    """The site's verdict tables have every cell, each with sane figures."""
    with check_step(context, settings, warehouse) as step:
        run_date = step.run_date
        found = read_for_run(step.con, "verdicts", run_date)
    problems = verdict_problems(found, WORKLOADS, settings.parameters().memory_tiers_gb)
    return _result(
        problems,
        run_date=str(run_date),
        rows=found.height,
        without_gpu=found["gpu_id"].null_count(),
    )
