"""Decision assets: renting, sensitivity, recommendations and verdicts (methodology §6-9).

Like every model table, each is keyed by `run_date` and replaced as a whole for that date.
The price bootstrap (inputs.bootstrap) is drawn once here for both recommendations and
verdicts (the `decisions` step).
"""

import datetime as dt
import json
from collections.abc import Iterator

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.cloud import cloud_perf_per_dollar as compute_cloud_perf_per_dollar
from model.cloud_freshness import with_freshness
from model.eligibility import keep_eligible
from model.parameters import WORKLOADS
from model.recommendations import (
    buy_candidates,
    rent_candidates,
)
from model.recommendations import recommendations as compute_recommendations
from model.sensitivity import sensitivity as compute_sensitivity
from model.uncertainty import (
    cloud_with_intervals,
    performance_replicates,
)
from model.verdicts import HEADLINE_LIMIT
from model.verdicts import verdicts as compute_verdicts
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.common import model_step
from pipeline.defs.model.inputs import bootstrap, run_efficiencies, run_resale
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from warehouse.reads import (
    read_latest_offers,
    read_latest_prices,
)

SENSITIVITY_KEEP_DAYS = 31


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["relative_performance", "cloud_offers"],
    description=(
        "One row per GPU x workload x provider x price type: relative performance per "
        "rented dollar (per USD per GPU-hour) of the provider's cheapest offer, with a 95 % "
        "interval; price types are never averaged."
    ),
)
def cloud_perf_per_dollar(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Performance per rented dollar."""
    with model_step(context, settings, warehouse) as step:
        relative = step.read("relative_performance")
        # Dated so that only fresh offers are ranked (model/cloud_freshness.py).
        offers = with_freshness(
            read_latest_offers(step.con, step.run_date),
            step.params.cloud_freshness_days,
            step.run_date,
        )
        rows = cloud_with_intervals(
            compute_cloud_perf_per_dollar(offers, relative, step.run_date),
            performance_replicates(relative, step.params),
        )
        step.write("cloud_perf_per_dollar", rows)
    return step.result(
        gpus=rows["gpu_id"].n_unique(),
        providers=rows["provider"].n_unique(),
        stale_rows=rows.filter(~pl.col("fresh")).height,
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["relative_performance", "current_prices", "gpus"],
    description=(
        "One row per cost parameter x value x GPU x workload x system size x market: perf "
        "per dollar and its rank with that one parameter varied over its stated range, "
        "beside the rank at the run's settings."
    ),
)
def sensitivity(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Rank sensitivity to $/kWh, utilisation, years and host cost."""
    with model_step(context, settings, warehouse) as step:
        run_date, params = step.run_date, step.params
        rows = compute_sensitivity(
            step.read("relative_performance"),
            read_latest_prices(step.con, run_date),
            step.read_all("gpus"),
            params,
            run_date,
            run_efficiencies(step.con, run_date, params),
            run_resale(step.con, run_date),
        )
        # What-if rows are for reading today's answer, not history: only the run dates of
        # the last SENSITIVITY_KEEP_DAYS are kept, so the table does not grow by ~16,000
        # rows a night forever (each published site version keeps its own copy).
        step.write(
            "sensitivity",
            rows,
            "run_date = ? OR run_date < ?",
            [run_date, run_date - dt.timedelta(days=SENSITIVITY_KEEP_DAYS)],
        )
    moved = rows.filter(pl.col("rank_change") != 0) if rows.height else rows
    return step.result(f"{rows.height} rows, {moved.height} moved", rank_moves=moved.height)


@dg.multi_asset(
    pool=WAREHOUSE_POOL,
    specs=[
        dg.AssetSpec(
            "recommendations",
            group_name="model",
            kinds=KINDS,
            deps=["perf_per_dollar", "cloud_perf_per_dollar", "current_prices", "evidence_basis"],
            description=(
                "One row per workload x memory tier (>= 8, 12, 16, 24, 48, 80 GB) x option "
                "(buy_new, buy_used, rent, rent_spot): the best eligible GPU with its 95 % "
                "interval, the probability it is the tier's best, the runner-up and, under "
                "50 %, the tied group."
            ),
        ),
        dg.AssetSpec(
            "verdicts",
            group_name="model",
            kinds=KINDS,
            deps=[
                "recommendations",
                "perf_per_dollar",
                "cloud_perf_per_dollar",
                "cloud_offers",
                "evidence_basis",
            ],
            description=(
                "One row per workload x (budget | memory tier) x option (buy_new, buy_used, "
                "rent_on_demand, rent_spot): the site's verdict, the GPU (or system) with "
                "the highest perf per dollar that fits, its 95 % interval, P(best), the "
                "price behind it, the runner-up and one line of why (NULL gpu_id: nothing "
                "fits, and why says so)."
            ),
        ),
    ],
)
def decisions(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    """Best GPU per workload and memory tier (recommendations), then by budget (verdicts).

    One step writes both so the price bootstrap, the run's slowest draw, runs once a night:
    the verdicts' P(best) uses the same replicates as the recommendations'.
    """
    with model_step(context, settings, warehouse) as step:
        run_date, params = step.run_date, step.params
        perf, cloud = step.read("perf_per_dollar"), step.read("cloud_perf_per_dollar")
        basis = step.read("evidence_basis")
        eligible = basis.filter(pl.col("eligible"))
        replicates = bootstrap(step.con, run_date, params)
        performance = performance_replicates(step.read("relative_performance"), params)
        # Only eligible GPU x workloads compete (model/eligibility.py).
        buy = buy_candidates(keep_eligible(perf, eligible), keep_eligible(replicates, eligible))
        rent = rent_candidates(keep_eligible(cloud, eligible), performance)
        candidates = (pl.concat([buy[0], rent[0]]), pl.concat([buy[1], rent[1]]))
        gpus = step.read_all("gpus")
        rows = compute_recommendations(*candidates, gpus, params.memory_tiers_gb, run_date)
        step.write("recommendations", rows)
        # The headline: the same pick over any memory (a 0 GB tier), a verdicts row only.
        headline = compute_recommendations(*candidates, gpus, (HEADLINE_LIMIT,), run_date)
        found = compute_verdicts(
            perf,
            cloud,
            pl.concat([rows, headline]),
            read_latest_offers(step.con, run_date),
            replicates,
            performance,
            json.loads(params.to_json()),
            run_date,
            WORKLOADS,
            basis=basis,
            gpus=gpus,
        )
        step.write("verdicts", found)
    yield step.result(asset="recommendations", bootstrap_replicates=params.bootstrap_replicates)
    ties = found["tie_gpu_ids"].is_not_null().sum()
    yield step.result(
        f"{found.height} rows, {found['gpu_id'].null_count()} without a GPU, {ties} ties",
        asset="verdicts",
        without_gpu=found["gpu_id"].null_count(),
        ties=ties,
    )
