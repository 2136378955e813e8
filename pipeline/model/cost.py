"""Total cost of ownership and performance per dollar (Dettmers B578)."""

import datetime as dt

import polars as pl

from pipeline.model.parameters import ModelParameters

HOURS_PER_YEAR = 24 * 365


def electricity_usd_per_year(watts: float, utilization: float, usd_per_kwh: float) -> float:
    """Yearly electricity cost: W * utilisation * 24 * 365 h * $/kWh.

    450 W at 15 % and $0.175/kWh is 591 kWh, about $103.5 a year (B578, B785-817).
    """
    return watts / 1000.0 * utilization * HOURS_PER_YEAR * usd_per_kwh


def electricity_expr(watts: pl.Expr, params: ModelParameters) -> pl.Expr:
    """`electricity_usd_per_year` as a Polars expression."""
    return watts / 1000.0 * params.utilization * HOURS_PER_YEAR * params.electricity_usd_per_kwh


def perf_per_dollar(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
) -> pl.DataFrame:
    """One row per GPU x workload x system size x market.

    total cost = n * GPU price + host cost(n) + years * electricity(n * TDP + host watts)
    performance = n * relative performance * multi-GPU efficiency(n)
    GPUs without a price in a market get no row for it (the report lists them).
    """
    systems = pl.DataFrame(
        {
            "system_gpus": list(params.system_sizes),
            "host_cost_usd": [params.host_cost_usd[n] for n in params.system_sizes],
            "efficiency": [params.multi_gpu_efficiency[n] for n in params.system_sizes],
        },
        schema={"system_gpus": pl.Int32, "host_cost_usd": pl.Float64, "efficiency": pl.Float64},
    )
    watts = pl.col("system_gpus") * pl.col("tdp_w") + params.host_watts
    return (
        relative.join(prices, on="gpu_id")
        .join(gpus.select("gpu_id", "tdp_w"), on="gpu_id")
        .join(systems, how="cross")
        .with_columns(electricity_usd_per_year=electricity_expr(watts, params))
        .with_columns(
            total_cost_usd=pl.col("system_gpus") * pl.col("price_usd")
            + pl.col("host_cost_usd")
            + params.years * pl.col("electricity_usd_per_year"),
        )
        .with_columns(
            perf_per_dollar=pl.col("system_gpus")
            * pl.col("value")
            * pl.col("efficiency")
            / pl.col("total_cost_usd"),
            run_date=pl.lit(run_date),
        )
        .select(
            "run_date",
            "gpu_id",
            "workload",
            "system_gpus",
            "market",
            "price_usd",
            "total_cost_usd",
            "electricity_usd_per_year",
            "perf_per_dollar",
            pl.col("value").alias("relative_performance"),
            "method",
            "price_day",
        )
        .sort(
            "workload",
            "system_gpus",
            "market",
            "perf_per_dollar",
            descending=[False, False, False, True],
        )
    )


MARKET_PREFERENCE = {"mean": 0, "new": 1, "used": 2}


def best_market(perf: pl.DataFrame, system_gpus: int = 1) -> pl.DataFrame:
    """One row per GPU x workload for a system size, at its preferred price.

    Dettmers priced each GPU at the mean of new and used; where only one market has a
    price we use that one, so GPUs sold only new (data-center parts) still rank.
    """
    return (
        perf.filter(pl.col("system_gpus") == system_gpus)
        .with_columns(_rank=pl.col("market").replace_strict(MARKET_PREFERENCE))
        .sort("_rank")
        .group_by("gpu_id", "workload", maintain_order=True)
        .first()
        .drop("_rank")
        .sort("workload", "perf_per_dollar", descending=[False, True])
    )
