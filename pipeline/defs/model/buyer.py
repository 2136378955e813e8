"""The buyer's questions of issue 25: a card for a PC I own, and rent or buy at my use.

Thin assets: read the run's model tables, call model/upgrade.py and model/rent_or_buy.py,
write `upgrade_picks`, `rent_or_buy` and `rent_or_buy_gpus` (migration 029).
"""

import json

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.rent_or_buy import break_even_rows, grid_rows
from model.uncertainty import performance_replicates, price_replicates
from model.upgrade import upgrade_picks as compute_upgrade_picks
from model.upgrade import upgrade_replicates
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from warehouse.reads import read_latest_prices, read_price_observations


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["relative_performance", "current_prices", "evidence_basis", "gpus"],
    description=(
        "One row per workload x market x card budget (<= $300 .. $3,000) x criterion "
        "(performance, value): the best desktop card by its own price alone (no host, no "
        "electricity), with P(best), the tied group, its board power and the PSU it needs."
    ),
)
def upgrade_picks(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """The 'I already have a PC' picks (model/upgrade.py)."""
    with model_step(context, settings, warehouse) as step:
        run_date, params = step.run_date, step.params
        relative = step.read("relative_performance")
        prices = read_latest_prices(step.con, run_date)
        # The same seeded draws as perf_per_dollar's bootstrap (prices and performance).
        draws = upgrade_replicates(
            performance_replicates(relative, params),
            price_replicates(read_price_observations(step.con, run_date), prices, params),
        )
        rows = compute_upgrade_picks(
            relative,
            prices,
            step.read_all("gpus"),
            draws,
            run_date,
            basis=step.read("evidence_basis"),
        )
        step.write("upgrade_picks", rows)
    return step.result(without_gpu=rows["gpu_id"].null_count())


@dg.multi_asset(
    pool=WAREHOUSE_POOL,
    specs=[
        dg.AssetSpec(
            "rent_or_buy",
            group_name="model",
            kinds=KINDS,
            deps=["perf_per_dollar", "cloud_perf_per_dollar", "evidence_basis", "gpus"],
            description=(
                "One row per workload x GPU class x utilisation (5-100 %) x rent price type: "
                "owning or renting, whichever gives a reference-GPU-hour of work for less "
                "over the ownership period (fresh offers only)."
            ),
        ),
        dg.AssetSpec(
            "rent_or_buy_gpus",
            group_name="model",
            kinds=KINDS,
            deps=["perf_per_dollar", "cloud_perf_per_dollar", "gpus"],
            description=(
                "One row per GPU x market x rent price type for every GPU one can both buy "
                "and rent: the utilisation above which owning is cheaper."
            ),
        ),
    ],
)
def rent_or_buy(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
):
    """Rent or buy at each utilisation (model/rent_or_buy.py)."""
    with model_step(context, settings, warehouse) as step:
        run_date = step.run_date
        params = json.loads(step.params.to_json())
        perf, cloud = step.read("perf_per_dollar"), step.read("cloud_perf_per_dollar")
        gpus = step.read_all("gpus")
        grid = grid_rows(perf, cloud, gpus, params, run_date, step.read("evidence_basis"))
        per_gpu = break_even_rows(perf, cloud, gpus, params, run_date)
        step.write("rent_or_buy", grid)
        step.write("rent_or_buy_gpus", per_gpu)
    owning = grid.filter(pl.col("cheaper") == "own").height
    yield step.result(asset="rent_or_buy", owning_cheaper=owning)
    yield step.result(asset="rent_or_buy_gpus", table="rent_or_buy_gpus")
