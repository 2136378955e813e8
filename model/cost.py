"""Total cost of ownership and performance per dollar (Dettmers B578)."""

import datetime as dt

import polars as pl

from model.fit import dettmers_efficiency_table, with_interconnect
from model.parameters import ModelParameters
from model.resale import BASIS_SCHEMA, resale_exprs

HOURS_PER_YEAR = 24 * 365


def electricity_usd_per_year(watts: float, utilization: float, usd_per_kwh: float) -> float:
    """Yearly electricity cost: W * utilisation * 24 * 365 h * $/kWh.

    450 W at 15 % and $0.175/kWh is 591 kWh, about $103.5 a year (B578, B785-817).
    """
    return watts / 1000.0 * utilization * HOURS_PER_YEAR * usd_per_kwh


def electricity_expr(watts: pl.Expr, params: ModelParameters) -> pl.Expr:
    """`electricity_usd_per_year` as a Polars expression."""
    return watts / 1000.0 * params.utilization * HOURS_PER_YEAR * params.electricity_usd_per_kwh


# Data-center modules (SXM boards, OAM, Grace superchips) are not sold as cards for a
# desktop: they come as 4- or 8-GPU servers (GUIDE §10). PCIe cards go in workstations.
MODULE_FORM_FACTORS = ("sxm", "oam", "superchip")
# Machines sold only whole (DGX Spark, Mac Studio, Ryzen AI Max mini PCs): the price is the
# whole computer's, so no host is added, and they are costed only as one machine (linking
# several is not what the multi-GPU efficiencies describe). Their `tdp_w` is the system's.
SYSTEM_FORM_FACTOR = "system"
WORKSTATION, SERVER, SYSTEM = "workstation", "server", "system"
# Sources whose per-GPU price of a module is a whole-server price divided by its GPU count
# (host included): Lambda's benchmark tables price each system that way (sources/data/
# prices/MANIFEST.md). For a PCIe card the same figure is within ~10 % of the card's own
# price (RTX A6000: $4,437.50 vs $4,650 at launch) and is used as a card price.
SERVER_PRICE_SOURCES = ("lambda-list-price",)


def one_machine_expr(form_factor: pl.Expr, num_gpus: pl.Expr) -> pl.Expr:
    """False for several machines sold whole (2x DGX Spark, 8x Mac Studio).

    Such machines are costed (systems_frame: platform 'system' has one size), sized and
    served only as one machine.
    """
    return (form_factor != SYSTEM_FORM_FACTOR).fill_null(True) | (num_gpus == 1)


def platform_expr() -> pl.Expr:
    """'server' for modules, 'system' for whole machines, 'workstation' for PCIe cards."""
    return (
        pl.when(pl.col("form_factor").is_in(MODULE_FORM_FACTORS))
        .then(pl.lit(SERVER))
        .when(pl.col("form_factor") == SYSTEM_FORM_FACTOR)
        .then(pl.lit(SYSTEM))
        .otherwise(pl.lit(WORKSTATION))
    )


def catalog_platforms(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, tdp_w, interconnect and platform of each catalog GPU.

    Without a form factor (a hand-made catalog) a GPU is a workstation card with an
    unknown interconnect (Dettmers' interconnect-agnostic e_n).
    """
    if "form_factor" not in gpus.columns:
        gpus = gpus.with_columns(form_factor=pl.lit(None, dtype=pl.Utf8))
    # Without a TDP there is no electricity and so no cost of ownership: such a GPU is
    # left out of buying (it can still be rented), never costed with a guessed power.
    costable = gpus.filter(pl.col("tdp_w").is_not_null())
    return with_interconnect(costable.select("gpu_id", "tdp_w", "form_factor"), gpus).select(
        "gpu_id", "tdp_w", "interconnect", platform=platform_expr()
    )


# Price scopes that already include the host: no host cost is added to them.
HOSTLESS_SCOPES = ("server_share", "system")


def price_scope_expr() -> pl.Expr:
    """How much a price buys: 'system' (a whole machine), 'server_share', else 'gpu'.

    'server_share' where a module's price comes only from whole-server prices. Needs
    `platform` and the price's comma-separated `sources` (null: a GPU price).
    """
    only_server = pl.col("sources").fill_null("").str.split(",").list.eval(
        pl.element().is_in(SERVER_PRICE_SOURCES)
    ).list.all() & (pl.col("sources").fill_null("") != "")
    return (
        pl.when(pl.col("platform") == SYSTEM)
        .then(pl.lit("system"))
        .when((pl.col("platform") == SERVER) & only_server)
        .then(pl.lit("server_share"))
        .otherwise(pl.lit("gpu"))
    )


def systems_frame(
    params: ModelParameters, efficiencies: pl.DataFrame | None = None
) -> pl.DataFrame:
    """One row per platform x system size x interconnect: host cost and efficiency.

    Workstations (PCIe cards) come in `system_sizes` with `host_cost_usd`; servers
    (modules) only in `server_system_sizes` with `server_host_cost_usd`; both scaled by
    `host_cost_scale`. A machine sold whole (platform 'system') is one machine with no
    host cost. `efficiencies` is `fit.efficiency_table` for the run (the e_n the
    debiasing applied, resolved from model_constants); without it, Dettmers' constants.
    `efficiency_low`/`efficiency_high` are the fitted 95 % interval (null for Dettmers'
    constants) and `efficiency_source` says which constant it is.
    """
    table = dettmers_efficiency_table(params) if efficiencies is None else efficiencies
    hosts = [(WORKSTATION, n, params.host_cost_usd[n]) for n in params.system_sizes]
    hosts += [(SERVER, n, params.server_host_cost_usd[n]) for n in params.server_system_sizes]
    hosts.append((SYSTEM, 1, 0.0))
    sizes = pl.DataFrame(
        [(kind, n, cost * params.host_cost_scale) for kind, n, cost in hosts],
        schema={"platform": pl.Utf8, "system_gpus": pl.Int32, "host_cost_usd": pl.Float64},
        orient="row",
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
    return out.sort("platform", "system_gpus", "interconnect", nulls_last=True)


def costed(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    systems: pl.DataFrame | None = None,
    by: tuple[str, ...] = (),
    resale: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Relative performance x prices x system sizes with total cost and perf per dollar.

    `by` names extra key columns shared by `relative`, `prices` and (if it has them)
    `systems`, e.g. ("replicate",) for bootstrap draws; without them, a point estimate.
    total cost = n * GPU price + host cost + years * electricity(n * TDP + host watts)
                 - n * resale value of one GPU after `years` (net of selling fees)
    performance = n * relative performance * multi-GPU efficiency(n, GPU's interconnect)
    PCIe cards are costed in workstations of `system_sizes`; modules (SXM/OAM/superchip)
    only in servers of `server_system_sizes` with a server host; a module priced by a
    whole-server price share (`price_scope` 'server_share') already includes its host, so
    no host is added; nor to a machine sold whole (form factor 'system', `price_scope`
    'system': DGX Spark, Mac Studio), costed as one machine whose TDP is the system's.
    The interconnect is the catalog's form factor proxy (fit.with_interconnect), as in
    the debiasing; `systems` defaults to
    `systems_frame(params)` (Dettmers' e_n). `resale` is resale.resale_basis per GPU x
    market (resale_usd and its interval scale with each row's price, so bootstrap price
    draws move them); without it, or for a GPU it lacks, no resale is counted (null).
    """
    systems = systems_frame(params) if systems is None else systems
    resale = pl.DataFrame(schema=BASIS_SCHEMA) if resale is None else resale
    system_keys = [k for k in by if k in systems.columns] + ["platform", "interconnect"]
    watts = pl.col("system_gpus") * pl.col("tdp_w") + params.host_watts
    catalog = catalog_platforms(gpus)
    if "sources" not in prices.columns:
        prices = prices.with_columns(sources=pl.lit(None, dtype=pl.Utf8))
    if "price_method" not in prices.columns:  # bootstrap draws and hand-made test prices
        prices = prices.with_columns(price_method=pl.lit("observed"))
    wanted = [*by, "gpu_id", "market", "price_usd", "price_day", "sources", "price_method"]
    prices = prices.select([c for c in wanted if c in prices.columns])
    joined = (
        relative.join(prices, on=["gpu_id", *by])
        .join(catalog, on="gpu_id")
        .join(resale.select(*BASIS_SCHEMA), on=["gpu_id", "market"], how="left")
        .with_columns(**resale_exprs(pl.col("price_usd"), params.years))
    )
    joined = joined.with_columns(price_scope=price_scope_expr()).join(
        systems, on=system_keys, nulls_equal=True
    )
    return (
        joined.with_columns(
            host_cost_usd=pl.when(pl.col("price_scope").is_in(HOSTLESS_SCOPES))
            .then(0.0)
            .otherwise("host_cost_usd"),
            electricity_usd_per_year=electricity_expr(watts, params),
        )
        .with_columns(
            total_cost_usd=pl.col("system_gpus") * pl.col("price_usd")
            + pl.col("host_cost_usd")
            + params.years * pl.col("electricity_usd_per_year")
            - pl.col("system_gpus") * pl.col("resale_usd").fill_null(0.0),
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
    resale: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per GPU x workload x system size x market (point estimate).

    `efficiencies` is the run's `fit.efficiency_table` (Dettmers' without it); `resale`
    the run's resale.resale_basis (no resale without it); see `costed` for the formulas.
    GPUs without a price in a market get no row for it (the report lists them). `rank` is
    1 for the best perf per dollar (net of resale) of its workload, system size and market;
    resale_usd (low/high: 95 %) is what one GPU sells for after `years`, net of fees.
    """
    return (
        costed(relative, prices, gpus, params, systems_frame(params, efficiencies), resale=resale)
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
            "price_method",
            "host_cost_usd",
            pl.col("efficiency").alias("multi_gpu_efficiency"),
            "rank",
            "platform",
            "price_scope",
            "resale_usd",
            "resale_low_usd",
            "resale_high_usd",
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
