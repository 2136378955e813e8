"""Renting versus buying: break-even days (Dettmers B785-817), net of resale."""

import datetime as dt

import polars as pl

from model.cloud_freshness import DEPTH_COLUMNS, depth_aggregations, fresh_first
from model.cost import (
    HOSTLESS_SCOPES,
    MARKET_PREFERENCE,
    SERVER,
    catalog_platforms,
    price_scope_expr,
)
from model.parameters import ModelParameters
from model.resale import (
    BASIS_SCHEMA,
    DAYS_PER_YEAR,
    break_even_day,
    break_even_utilization,
    resale_exprs,
)


def break_even_days(
    buy_cost_usd: float,
    usd_per_gpu_hour: float,
    utilization: float,
    electricity_usd_per_year: float,
) -> float | None:
    """Days after which owning is cheaper than renting at this utilisation.

    Renting costs price * 24 * utilisation a day; owning costs the purchase up front plus
    electricity a day. None when renting is never more expensive. Dettmers' example: a
    $2,200 desktop (350 W GPU + 100 W CPU at 15 %, $0.12/kWh, $71/year) vs an AWS V100 at
    $2.14/h breaks even after about 300 days.
    """
    cloud_per_day = usd_per_gpu_hour * 24 * utilization
    own_per_day = electricity_usd_per_year / 365
    if cloud_per_day <= own_per_day:
        return None
    return buy_cost_usd / (cloud_per_day - own_per_day)


def cheapest_offers(offers: pl.DataFrame) -> pl.DataFrame:
    """The cheapest offer per GPU-hour per GPU x provider x price type (types never mixed).

    Ties go to the instance type that sorts first, so reruns pick the same instance. Offers
    that have been through `cloud_freshness.with_freshness` put fresh ones first (a stale
    offer is the pick only where the provider has no fresh one) and carry the pick's
    freshness and listings (`cloud_freshness.DEPTH_COLUMNS`).
    """
    dated = "fresh" in offers.columns
    return (
        offers.sort(
            *(fresh_first() if dated else []),
            "usd_per_gpu_hour",
            "instance_type",
            "region",
            nulls_last=True,
        )
        .group_by("gpu_id", "provider", "price_type")
        .agg(
            pl.col("usd_per_gpu_hour").first(),
            pl.col("instance_type").first(),
            pl.col("region").first(),
            *(depth_aggregations() if dated else []),
            offer_day=pl.col("observed_at").first().cast(pl.Date),
            n_offers=pl.len().cast(pl.Int32),
        )
    )


# Price types billed for every hour of their term, used or not (GUIDE §10): a 1- or 3-year
# reservation or commitment. On-demand and spot are billed per hour used.
WHOLE_TERM_PRICE_TYPES = ("reserved_1y", "reserved_3y")


def billing_expr() -> pl.Expr:
    """'whole_term' for reservations/commitments, 'per_hour_used' otherwise."""
    return (
        pl.when(pl.col("price_type").is_in(WHOLE_TERM_PRICE_TYPES))
        .then(pl.lit("whole_term"))
        .otherwise(pl.lit("per_hour_used"))
    )


def buy_prices(prices: pl.DataFrame) -> pl.DataFrame:
    """One price per GPU: mean of new and used where both exist, else new, else used."""
    if "sources" not in prices.columns:
        prices = prices.with_columns(sources=pl.lit(None, dtype=pl.Utf8))
    return (
        prices.with_columns(_rank=pl.col("market").replace_strict(MARKET_PREFERENCE))
        .sort("_rank")
        .group_by("gpu_id")
        .agg(pl.col("price_usd").first(), pl.col("market").first(), pl.col("sources").first())
    )


def _break_even_columns(rows: pl.DataFrame, params: ModelParameters) -> pl.DataFrame:
    """Break-even day, utilisation and the reason for 'never', net of resale.

    Within the ownership period (`params.years`) only: a break-even later than that is
    not one (the GPU is sold by then), so it is null with `break_even_note` saying why.
    """
    horizon = params.years * DAYS_PER_YEAR
    rows = rows.with_columns(
        _value=(pl.col("price_usd") * pl.col("resale_anchor_ratio")).fill_null(0.0),
        _b=pl.col("resale_depreciation").fill_null(0.0),
        resale_usd=resale_exprs(pl.col("price_usd"), params.years)["resale_usd"].fill_null(0.0),
    )
    days = break_even_day(
        rows["buy_cost_usd"].to_numpy(),
        rows["_value"].to_numpy(),
        rows["_b"].to_numpy(),
        rows["cloud_usd_per_day"].to_numpy(),
        rows["own_usd_per_day"].to_numpy(),
        horizon,
    )
    never = f"never within the {params.years:g}-year ownership period"
    return rows.with_columns(
        break_even_days=pl.Series(days, dtype=pl.Float64).fill_nan(None),
    ).with_columns(
        break_even_note=pl.when(pl.col("break_even_days").is_not_null())
        .then(pl.lit(None, dtype=pl.Utf8))
        .when(pl.col("cloud_usd_per_day") <= pl.col("own_usd_per_day"))
        .then(pl.lit("renting is cheaper per hour than the electricity to run the GPU"))
        .otherwise(pl.lit(never)),
        break_even_utilization=pl.when(pl.col("billing") == "per_hour_used").then(
            break_even_utilization(
                pl.col("buy_cost_usd"),
                pl.col("resale_usd"),
                pl.col("usd_per_gpu_hour"),
                pl.col("usd_per_hour_used"),
                horizon,
            )
        ),
        own_period_cost_usd=pl.col("buy_cost_usd")
        - pl.col("resale_usd")
        + pl.col("own_usd_per_day") * horizon,
        rent_period_cost_usd=pl.col("cloud_usd_per_day") * horizon,
    )


def cloud_vs_buy(
    offers: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    resale: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per GPU x provider x price type x utilisation.

    The cloud side is the provider's cheapest offer per GPU-hour of that price type (never
    averaged across price types). The buy side is the smallest system the GPU is sold in,
    per GPU: a PCIe card with a 1-GPU workstation host; a module (SXM/OAM/superchip) as
    its share of the smallest server (`server_system_sizes`), i.e. its price plus
    host / n, or its whole-server price share alone (cost.price_scope_expr); a machine
    sold whole (DGX Spark, Mac Studio) with no host. The price is
    the mean of new and used where both exist, else whichever exists (`buy_market`).
    Owning is net of the GPU's resale value (`resale`: resale.resale_basis; none without
    it): break_even_days is the first day on which buying, running and then selling the
    GPU costs what renting does (resale.break_even_day), reported only within the
    ownership period (`params.years`), else null with `break_even_note`;
    break_even_utilization is the utilisation at which renting for the whole period costs
    what owning net of resale does (resale.break_even_utilization).

    Billing (`billing`): on-demand and spot cost price x 24 x utilisation a day and owning
    costs the electricity of the hours used, so the break-even moves with utilisation. A
    reservation (reserved_1y/3y) is billed 24 x 365 for its term whatever the use; it is
    compared with an owned GPU that is also available around the clock, so neither side
    depends on utilisation, the break-even is the same at every utilisation and there is
    no break-even utilisation (null).
    """
    utilizations = pl.DataFrame({"utilization": list(params.cloud_utilizations)})
    server_n = min(params.server_system_sizes)
    per_gpu_host = (
        pl.when(pl.col("price_scope").is_in(HOSTLESS_SCOPES))
        .then(0.0)
        .when(pl.col("platform") == SERVER)
        .then(params.server_host_cost_usd[server_n] / server_n)
        .otherwise(params.host_cost_usd[1])
        * params.host_cost_scale
    )
    # Electricity per hour the GPU runs (its share of a server host's power is not known;
    # host_watts is per system).
    usd_per_hour_used = (
        (pl.col("tdp_w") + params.host_watts) / 1000.0 * params.electricity_usd_per_kwh
    )
    whole_term = pl.col("billing") == "whole_term"
    hours_a_day = pl.when(whole_term).then(24.0).otherwise(24 * pl.col("utilization"))
    catalog = catalog_platforms(gpus).select("gpu_id", "tdp_w", "platform")
    resale = pl.DataFrame(schema=BASIS_SCHEMA) if resale is None else resale
    rows = (
        cheapest_offers(offers)
        .join(buy_prices(prices), on="gpu_id")
        .join(catalog, on="gpu_id")
        .join(resale.select(*BASIS_SCHEMA), on=["gpu_id", "market"], how="left")
        .join(utilizations, how="cross")
        .with_columns(billing=billing_expr(), price_scope=price_scope_expr())
        .with_columns(
            buy_cost_usd=pl.col("price_usd") + per_gpu_host,
            cloud_usd_per_day=pl.col("usd_per_gpu_hour") * hours_a_day,
            own_usd_per_day=usd_per_hour_used * hours_a_day,
            usd_per_hour_used=usd_per_hour_used,
        )
    )
    return (
        _break_even_columns(rows, params)
        .with_columns(run_date=pl.lit(run_date))
        .select(
            "run_date",
            "gpu_id",
            "provider",
            "price_type",
            "utilization",
            "break_even_days",
            "usd_per_gpu_hour",
            "buy_cost_usd",
            "instance_type",
            pl.col("market").alias("buy_market"),
            pl.col("price_usd").alias("buy_price_usd"),
            "cloud_usd_per_day",
            "own_usd_per_day",
            "billing",
            "platform",
            "resale_usd",
            "break_even_note",
            "break_even_utilization",
            "own_period_cost_usd",
            "rent_period_cost_usd",
            pl.col("_value").alias("used_value_usd"),
            pl.col("_b").alias("resale_depreciation"),
        )
        .sort("gpu_id", "provider", "price_type", "utilization")
    )


def cloud_perf_per_dollar(
    offers: pl.DataFrame, relative: pl.DataFrame, run_date: dt.date
) -> pl.DataFrame:
    """One row per GPU x workload x provider x price type: performance per rented dollar.

    perf_per_dollar = relative performance / USD per GPU-hour of the provider's cheapest
    offer of that price type, i.e. reference-GPU-hours of work bought with one dollar.
    `rank` is 1 for the best of its workload and price type across all providers; with
    offers dated by `cloud_freshness.with_freshness`, only fresh offers are ranked (a stale
    one keeps its row, `fresh` false and `rank` NULL).
    """
    picks = cheapest_offers(offers)
    ranked = pl.col("fresh") if "fresh" in picks.columns else pl.lit(True)
    return (
        picks.join(relative.select("gpu_id", "workload", "value", "method"), on="gpu_id")
        .with_columns(
            perf_per_dollar=pl.col("value") / pl.col("usd_per_gpu_hour"),
            run_date=pl.lit(run_date),
        )
        .with_columns(
            # Equal values share a rank: offers at the same price (T4 on AWS and Azure)
            # must not swap places between reruns.
            rank=pl.when(ranked)
            .then(pl.col("perf_per_dollar"))
            .rank("min", descending=True)
            .over("workload", "price_type")
            .cast(pl.Int32)
        )
        .select(
            "run_date",
            "gpu_id",
            "workload",
            "provider",
            "price_type",
            "instance_type",
            "region",
            "usd_per_gpu_hour",
            pl.col("value").alias("relative_performance"),
            "method",
            "perf_per_dollar",
            "rank",
            "offer_day",
            "n_offers",
            *(c for c in DEPTH_COLUMNS if c in picks.columns),
        )
        .sort("workload", "price_type", "rank", "gpu_id", "provider", nulls_last=True)
    )
