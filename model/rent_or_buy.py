"""Rent or buy at your utilisation (issue 25, item 3), per GPU class and per GPU.

Owning a GPU costs, over the ownership period (`years`), what perf_per_dollar counts: the
GPU and its host, bought today, plus the electricity of the hours it runs, less what it
resells for at the end (`resale_usd`, model/resale.py). Renting costs the hours used at the
offer's price. Both are per GPU and per market (new and used are never averaged):

    own(u)  = fixed + electricity per hour used x H(u)      fixed = price + host - resale
    rent(u) = usd_per_gpu_hour x H(u)                       H(u) = years x 8,760 h x u

`fixed` and the electricity per hour come from the run's `perf_per_dollar` row of the
smallest system the GPU is sold in (1 GPU; a module's smallest server, per GPU), so the
host, the resale and the power are the cost model's own: `fixed` = (total_cost_usd -
years x electricity_usd_per_year) / n, and the electricity per GPU-hour used =
electricity_usd_per_year / (n x 8,760 x the run's utilisation).

- Per GPU (`break_even_rows`): at its cheapest fresh offer of each price type, the
  utilisation above which owning is cheaper (resale.break_even_utilization; NULL when
  renting is cheaper even at 100 %, or cheaper an hour than the electricity).
- Per GPU class (`grid_rows`): at each utilisation of RENT_OR_BUY_UTILIZATIONS, the
  cheapest way to get an hour of the reference GPU's work (`reference-GPU-hour`) by owning
  (any GPU of the class, new or used: own(u) / (H(u) x relative performance)) and by
  renting (any fresh offer of the class: usd_per_gpu_hour / relative performance); the
  cheaper one is the answer. Only eligible GPU x workloads compete (model/eligibility.py)
  and only fresh offers (model/cloud_freshness.py), as in the verdicts.

The classes are set by memory, here and nowhere else (GPU_CLASSES).
"""

import datetime as dt
import math

import polars as pl

from model.eligibility import keep_eligible
from model.resale import DAYS_PER_YEAR, break_even_utilization

RENT_OR_BUY_UTILIZATIONS = (0.05, 0.10, 0.20, 0.35, 0.50, 1.0)
RENT_PRICE_TYPES = ("on_demand", "spot")
BUY_MARKETS = ("new", "used")
HOURS_PER_YEAR = 8760.0

# (id, label, memory above, memory at most) in GB. Memory decides what a GPU can train or
# serve, so it is what a buyer compares within: 8-16 GB consumer cards; the 24 GB tier
# (RTX 3090/4090, A5000, L4's 24 GB); 32-48 GB (RTX 5090, A6000, L40S); more than 48 GB
# (80 GB and larger data-center parts: A100/H100/H200/B200, MI300X).
GPU_CLASSES = (
    ("upto16", "up to 16 GB", 0.0, 16.0),
    ("gb24", "20-24 GB", 16.0, 24.0),
    ("gb48", "32-48 GB", 24.0, 48.0),
    ("gb80", "more than 48 GB", 48.0, math.inf),
)

GRID_SCHEMA = {
    "run_date": pl.Date,
    "workload": pl.Utf8,
    "gpu_class": pl.Utf8,
    "utilization": pl.Float64,
    "price_type": pl.Utf8,
    "own_gpu_id": pl.Utf8,
    "own_market": pl.Utf8,
    "own_usd_per_work_hour": pl.Float64,
    "rent_gpu_id": pl.Utf8,
    "rent_provider": pl.Utf8,
    "rent_usd_per_gpu_hour": pl.Float64,
    "rent_usd_per_work_hour": pl.Float64,
    "cheaper": pl.Utf8,
}
GPU_SCHEMA = {
    "run_date": pl.Date,
    "gpu_id": pl.Utf8,
    "gpu_class": pl.Utf8,
    "memory_gb": pl.Float64,
    "market": pl.Utf8,
    "price_usd": pl.Float64,
    "own_fixed_usd": pl.Float64,
    "electricity_usd_per_hour": pl.Float64,
    "price_type": pl.Utf8,
    "provider": pl.Utf8,
    "usd_per_gpu_hour": pl.Float64,
    "offer_day": pl.Date,
    "break_even_utilization": pl.Float64,
    "note": pl.Utf8,
}


def gpu_class_expr(memory: str = "memory_gb") -> pl.Expr:
    """The GPU_CLASSES id of a GPU's memory (NULL without memory)."""
    expr = pl.lit(None, dtype=pl.Utf8)
    for class_id, _label, above, at_most in reversed(GPU_CLASSES):
        expr = (
            pl.when((pl.col(memory) > above) & (pl.col(memory) <= at_most))
            .then(pl.lit(class_id))
            .otherwise(expr)
        )
    return expr


def class_labels() -> dict[str, str]:
    """GPU class id -> its label."""
    return {class_id: label for class_id, label, _a, _b in GPU_CLASSES}


def own_costs(perf: pl.DataFrame, gpus: pl.DataFrame, params: dict) -> pl.DataFrame:
    """Per GPU x workload x market: fixed cost and electricity per hour used, per GPU.

    From the smallest system of each GPU in perf_per_dollar (new and used only).
    """
    years, utilisation = float(params["years"]), float(params["utilization"])
    smallest = (
        perf.filter(pl.col("market").is_in(list(BUY_MARKETS)))
        .with_columns(_min=pl.col("system_gpus").min().over("gpu_id", "workload", "market"))
        .filter(pl.col("system_gpus") == pl.col("_min"))
    )
    n = pl.col("system_gpus").cast(pl.Float64)
    return smallest.join(gpus.select("gpu_id", "memory_gb"), on="gpu_id").select(
        "gpu_id",
        "workload",
        "market",
        "price_usd",
        "relative_performance",
        "memory_gb",
        gpu_class=gpu_class_expr(),
        own_fixed_usd=(pl.col("total_cost_usd") - years * pl.col("electricity_usd_per_year")) / n,
        electricity_usd_per_hour=pl.col("electricity_usd_per_year")
        / (n * HOURS_PER_YEAR * utilisation),
    )


def _fresh_offers(cloud_perf: pl.DataFrame) -> pl.DataFrame:
    """Fresh on-demand and spot rows of cloud_perf_per_dollar (a run without `fresh`: all)."""
    rows = cloud_perf.filter(pl.col("price_type").is_in(list(RENT_PRICE_TYPES)))
    return rows.filter(pl.col("fresh")) if "fresh" in rows.columns else rows


def break_even_rows(
    perf: pl.DataFrame,
    cloud_perf: pl.DataFrame,
    gpus: pl.DataFrame,
    params: dict,
    run_date: dt.date,
) -> pl.DataFrame:
    """Per GPU x market x price type: the break-even utilisation at the cheapest fresh offer.

    Every GPU with a price to buy (new or used) and a fresh offer to rent (GPU_SCHEMA).
    """
    horizon_days = float(params["years"]) * DAYS_PER_YEAR
    own = (
        own_costs(perf, gpus, params)
        .drop("workload", "relative_performance")
        .unique(["gpu_id", "market"])
    )
    offers = (
        _fresh_offers(cloud_perf)
        .sort("usd_per_gpu_hour", "provider")
        .group_by("gpu_id", "price_type", maintain_order=True)
        .first()
        .select("gpu_id", "price_type", "provider", "usd_per_gpu_hour", "offer_day")
    )
    rows = own.join(offers, on="gpu_id").with_columns(
        break_even_utilization=break_even_utilization(
            pl.col("own_fixed_usd"),
            pl.lit(0.0),
            pl.col("usd_per_gpu_hour"),
            pl.col("electricity_usd_per_hour"),
            horizon_days,
        ),
        run_date=pl.lit(run_date),
    )
    margin = pl.col("usd_per_gpu_hour") - pl.col("electricity_usd_per_hour")
    rows = rows.with_columns(
        note=pl.when(pl.col("break_even_utilization").is_not_null())
        .then(pl.lit(None, dtype=pl.Utf8))
        .when(margin <= 0)
        .then(pl.lit("renting is cheaper per hour than the electricity to run the GPU"))
        .otherwise(pl.lit("renting is cheaper even at 100 % use"))
    )
    return rows.select(pl.col(c).cast(t) for c, t in GPU_SCHEMA.items()).sort(
        "gpu_class", "gpu_id", "market", "price_type"
    )


def grid_rows(
    perf: pl.DataFrame,
    cloud_perf: pl.DataFrame,
    gpus: pl.DataFrame,
    params: dict,
    run_date: dt.date,
    basis: pl.DataFrame | None = None,
    utilizations: tuple[float, ...] = RENT_OR_BUY_UTILIZATIONS,
) -> pl.DataFrame:
    """Per workload x GPU class x utilisation x rent price type: owning or renting (GRID_SCHEMA).

    `basis` is the run's evidence_basis: only eligible GPU x workloads compete.
    """
    eligible = None if basis is None else basis.filter(pl.col("eligible"))
    years = float(params["years"])
    grid = pl.DataFrame({"utilization": [float(u) for u in utilizations]})
    hours = pl.col("utilization") * years * HOURS_PER_YEAR
    own = (
        keep_eligible(own_costs(perf, gpus, params), eligible)
        .join(grid, how="cross")
        .with_columns(
            own_usd_per_work_hour=(
                pl.col("own_fixed_usd") + pl.col("electricity_usd_per_hour") * hours
            )
            / (hours * pl.col("relative_performance"))
        )
        .sort("own_usd_per_work_hour", "gpu_id", "market")
        .group_by("workload", "gpu_class", "utilization", maintain_order=True)
        .first()
        .select(
            "workload",
            "gpu_class",
            "utilization",
            own_gpu_id="gpu_id",
            own_market="market",
            own_usd_per_work_hour="own_usd_per_work_hour",
        )
    )
    rent = (
        keep_eligible(_fresh_offers(cloud_perf), eligible)
        .join(gpus.select("gpu_id", "memory_gb"), on="gpu_id")
        .with_columns(
            gpu_class=gpu_class_expr(),
            rent_usd_per_work_hour=pl.col("usd_per_gpu_hour") / pl.col("relative_performance"),
        )
        .sort("rent_usd_per_work_hour", "gpu_id", "provider")
        .group_by("workload", "gpu_class", "price_type", maintain_order=True)
        .first()
        .select(
            "workload",
            "gpu_class",
            "price_type",
            "rent_usd_per_work_hour",
            rent_gpu_id="gpu_id",
            rent_provider="provider",
            rent_usd_per_gpu_hour="usd_per_gpu_hour",
        )
        .join(grid, how="cross")
    )
    types = pl.DataFrame({"price_type": list(RENT_PRICE_TYPES)})
    rows = (
        own.join(types, how="cross")
        .join(rent, on=["workload", "gpu_class", "utilization", "price_type"], how="full")
        .with_columns(
            workload=pl.coalesce("workload", "workload_right"),
            gpu_class=pl.coalesce("gpu_class", "gpu_class_right"),
            utilization=pl.coalesce("utilization", "utilization_right"),
            price_type=pl.coalesce("price_type", "price_type_right"),
        )
        .with_columns(cheaper=_cheaper(), run_date=pl.lit(run_date))
    )
    order = {c[0]: i for i, c in enumerate(GPU_CLASSES)}
    return (
        rows.select(pl.col(c).cast(t) for c, t in GRID_SCHEMA.items())
        .with_columns(_c=pl.col("gpu_class").replace_strict(order, return_dtype=pl.Int32))
        .sort("workload", "_c", "price_type", "utilization")
        .drop("_c")
    )


def _cheaper() -> pl.Expr:
    """'own' or 'rent' (NULL where one side has no candidate in the class)."""
    own, rent = pl.col("own_usd_per_work_hour"), pl.col("rent_usd_per_work_hour")
    return (
        pl.when(own.is_null() | rent.is_null())
        .then(pl.lit(None, dtype=pl.Utf8))
        .when(own < rent)
        .then(pl.lit("own"))
        .otherwise(pl.lit("rent"))
    )
