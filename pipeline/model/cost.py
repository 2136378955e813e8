"""Total cost of ownership and performance per dollar (Dettmers B578)."""

import datetime as dt

import polars as pl

from pipeline.model.fit import dettmers_efficiency_table, with_interconnect
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


def systems_frame(
    params: ModelParameters, efficiencies: pl.DataFrame | None = None
) -> pl.DataFrame:
    """One row per system size x interconnect: host cost (scaled) and multi-GPU efficiency.

    `efficiencies` is `fit.efficiency_table` for the run (the e_n the debiasing applied,
    resolved from model_constants); without it, Dettmers' constants. `efficiency_low`/
    `efficiency_high` are the fitted 95 % interval (null for Dettmers' constants) and
    `efficiency_source` says which constant it is.
    """
    table = dettmers_efficiency_table(params) if efficiencies is None else efficiencies
    sizes = pl.DataFrame(
        {
            "system_gpus": list(params.system_sizes),
            "host_cost_usd": [
                params.host_cost_usd[n] * params.host_cost_scale for n in params.system_sizes
            ],
        },
        schema={"system_gpus": pl.Int32, "host_cost_usd": pl.Float64},
    )
    out = sizes.join(
        table.select(
            pl.col("num_gpus").cast(pl.Int32).alias("system_gpus"),
            "interconnect",
            "efficiency",
            "efficiency_low",
            "efficiency_high",
            efficiency_source="source",
        ),
        on="system_gpus",
        how="left",
    )
    missing = sorted(set(out.filter(pl.col("efficiency").is_null())["system_gpus"]))
    if missing:
        raise ValueError(f"no multi-GPU efficiency for system sizes {missing}")
    return out.sort("system_gpus", "interconnect", nulls_last=True)


def costed(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    systems: pl.DataFrame | None = None,
    by: tuple[str, ...] = (),
) -> pl.DataFrame:
    """Relative performance x prices x system sizes with total cost and perf per dollar.

    `by` names extra key columns shared by `relative`, `prices` and (if it has them)
    `systems`, e.g. ("replicate",) for bootstrap draws; without them, a point estimate.
    total cost = n * GPU price + host cost(n) + years * electricity(n * TDP + host watts)
    performance = n * relative performance * multi-GPU efficiency(n, GPU's interconnect)
    The interconnect is the catalog's form factor proxy (fit.with_interconnect), as in the
    debiasing; `systems` defaults to `systems_frame(params)` (Dettmers' e_n).
    """
    systems = systems_frame(params) if systems is None else systems
    system_keys = [k for k in by if k in systems.columns] + ["interconnect"]
    watts = pl.col("system_gpus") * pl.col("tdp_w") + params.host_watts
    catalog = with_interconnect(gpus.select("gpu_id", "tdp_w"), gpus).select(
        "gpu_id", "tdp_w", "interconnect"
    )
    joined = relative.join(prices, on=["gpu_id", *by]).join(catalog, on="gpu_id")
    joined = joined.join(systems, on=system_keys, nulls_equal=True)
    return (
        joined.with_columns(electricity_usd_per_year=electricity_expr(watts, params))
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
        )
    )


RANK_KEYS = ("workload", "system_gpus", "market")


def rank_expr(by: tuple[str, ...] = ()) -> pl.Expr:
    """Rank by perf per dollar (1 = best) within workload x system size x market.

    Equal values share a rank ("min"): an ordinal rank would break ties by row order, which
    a warehouse read does not fix, and reruns must give the same table.
    """
    return (
        pl.col("perf_per_dollar")
        .rank("min", descending=True)
        .over([*by, *RANK_KEYS])
        .cast(pl.Int32)
    )


def perf_per_dollar(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    efficiencies: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per GPU x workload x system size x market (point estimate).

    `efficiencies` is the run's `fit.efficiency_table` (Dettmers' without it); see
    `costed` for the formulas. GPUs without a price in a market get no row for it (the
    report lists them). `rank` is 1 for the best perf per dollar of its workload, system
    size and market.
    """
    return (
        costed(relative, prices, gpus, params, systems_frame(params, efficiencies))
        .with_columns(rank=rank_expr(), run_date=pl.lit(run_date))
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
            "host_cost_usd",
            pl.col("efficiency").alias("multi_gpu_efficiency"),
            "rank",
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
