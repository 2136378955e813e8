"""LLM serving cost assets: API list prices (ingest) and $ per million tokens at a target.

Thin wrappers around `model.llm_serving_cost` (its docstring has the formulas) and
`sources.llm_api_prices`. `llm_serving_cost` reads the `llm_serving` table (the serving
throughput curves, asset `llm_serving`) and fails loudly when it is missing or empty for
the run: a cost table without its throughput would be silently empty.
"""

import datetime as dt

import dagster as dg
import duckdb
import polars as pl
from dagster_duckdb import DuckDBResource

from model.cloud_freshness import fresh_only, with_freshness
from model.llm_serving_cost import input_not_cheaper
from model.llm_serving_cost import llm_serving_cost as price_serving
from pipeline.defs.metadata import KINDS, replace_whole_table
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from sources.llm_api_prices import read_llm_api_prices
from warehouse.reads import read_for_run, read_latest_offers

API_PRICES_FILE = ("llm", "api_prices.csv")
# The cost of ownership does not depend on the workload; llm_cost reads the same rows.
TCO_WORKLOAD = "inference_16bit"


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    description=(
        "One row per open LLM x API provider: the published list price per million input "
        "and output tokens, its date and source (sources/data/llm/api_prices.csv). A sanity "
        "band beside llm_serving_cost, never an input to it."
    ),
)
def llm_api_prices(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the bundled API list prices, replacing the table."""
    rows = read_llm_api_prices(settings.data_path(*API_PRICES_FILE))
    with open_warehouse(warehouse) as con:
        written = replace_whole_table(context, con, "llm_api_prices", rows)
    return dg.MaterializeResult(
        metadata={
            **written,
            "models": rows["model_id"].n_unique(),
            "providers": ", ".join(sorted(set(rows["provider"]))),
            "as_of": f"{rows['as_of'].min()} to {rows['as_of'].max()}",
        }
    )


def grounded_gpus(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Catalog GPUs whose architecture has a published serving measurement.

    The serving model is fitted on those architectures; elsewhere (RDNA, Pascal, Turing,
    Arc, Apple ...) its rate is an extrapolation, which never outranks the evidence.
    """
    rows = con.sql(
        "SELECT g.gpu_id FROM gpus g WHERE g.architecture IN ("
        " SELECT DISTINCT c.architecture FROM llm_serving_benchmarks b"
        " JOIN gpus c USING (gpu_id))"
    ).fetchall()
    return {r[0] for r in rows}


def read_serving(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """The run's `llm_serving` rows; dg.Failure when the run has none.

    Migration 023 makes the table, so an empty run means llm_serving did not run first.
    """
    rows = read_for_run(con, "llm_serving", run_date)
    if rows.is_empty():
        raise dg.Failure(f"llm_serving has no rows for {run_date}: materialize llm_serving first")
    return rows


def buy_rows(perf: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """One perf_per_dollar workload's systems with the GPU's 95 % price interval.

    `prices` is the run's `current_prices` (price_low, price_high per GPU x market).
    """
    interval = prices.select(
        "gpu_id", "market", price_low_usd="price_low", price_high_usd="price_high"
    )
    return perf.filter(pl.col("workload") == TCO_WORKLOAD).join(
        interval, on=["gpu_id", "market"], how="left"
    )


def api_band(cost: pl.DataFrame, api: pl.DataFrame, target: int = 20) -> str:
    """Per model: the cheapest rented output token at `target` beside the API list prices."""
    cheapest = (
        cost.filter(
            (pl.col("basis") == "rent_on_demand") & (pl.col("min_tokens_per_s_per_user") == target)
        )
        .group_by("model_id")
        .agg(pl.col("usd_per_million_output_tokens").min().alias("ours"))
    )
    band = api.group_by("model_id").agg(
        lo=pl.col("usd_per_million_output_tokens").min(),
        hi=pl.col("usd_per_million_output_tokens").max(),
    )
    rows = cheapest.join(band, on="model_id").sort("model_id")
    return "; ".join(
        f"{m} ${ours:.2f} (API ${lo:.2f}-{hi:.2f})" for m, ours, lo, hi in rows.iter_rows()
    )


@dg.asset(
    group_name="model",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[
        "llm_serving",
        "llm_serving_benchmarks",
        "perf_per_dollar",
        "current_prices",
        "cloud_offers",
        llm_api_prices,
    ],
    description=(
        "One row per GPU x model x precision x GPU count x basis (buy new/used, rent "
        "on-demand/spot) x target tokens/s per user (10, 20, 50): the concurrency a provider "
        "runs to give each user the target and the $ per million output and input tokens "
        "there, with an interval; rank 1 is the cheapest of model x precision x basis x "
        "target."
    ),
)
def llm_serving_cost(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """$ per million tokens of serving for the run (fails if llm_serving is missing)."""
    with model_step(context, settings, warehouse) as step:
        run_date, params = step.run_date, step.params
        serving = read_serving(step.con, run_date)
        buy = buy_rows(step.read("perf_per_dollar"), step.read("current_prices"))
        # Renting prices tokens at fresh offers only, as llm_cost does.
        offers = fresh_only(
            with_freshness(
                read_latest_offers(step.con, run_date), params.cloud_freshness_days, run_date
            )
        )
        grounded = grounded_gpus(step.con)
        cost = price_serving(
            serving, buy, offers, params.years, params.utilization, grounded_gpus=grounded
        )
        bad = input_not_cheaper(cost)
        if not bad.is_empty():
            raise dg.Failure(
                f"{bad.height} llm_serving_cost rows price an input token at or above an "
                "output token (prefill rate not above decode throughput), e.g. "
                + ", ".join(
                    f"{g} {m} {b}-bit x{n}"
                    for g, m, b, n in bad.select(
                        "gpu_id", "model_id", "precision_bits", "num_gpus"
                    ).head(5).iter_rows()
                )
            )  # fmt: skip
        step.write("llm_serving_cost", cost)
        band = api_band(cost, step.read_all("llm_api_prices"))
    return step.result(
        f"{cost.height} rows, {cost['gpu_id'].n_unique()} GPUs, "
        f"{cost['model_id'].n_unique()} models",
        gpus=cost["gpu_id"].n_unique(),
        models=cost["model_id"].n_unique(),
        rent_on_demand_20_vs_api=band,
    )
