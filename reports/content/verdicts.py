"""The answer: verdict tables by budget and memory tier, and the one-line short answer."""

import polars as pl

from model.verdicts import OPTION_TITLES, SCALE, UNITS, rental_hours
from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table, gpu_href, interval, money, percent
from reports.dataset import Dataset
from reports.report import headline


def limit_label(kind: str, limit: float) -> str:
    """A verdict row's budget ('≤ $1,500') or memory tier ('≥ 24 GB')."""
    return f"≤ ${limit:,.0f}" if kind == "budget" else f"≥ {limit:.0f} GB"


def verdict_cell(row: dict) -> Cell:
    """One verdict: GPU (and system size), value with interval, P(best), price, why."""
    if row["gpu_id"] is None:
        return Cell("—", lines=(row["why"],))
    option = row["option"]
    buy = option.startswith("buy")
    label = row["gpu_id"]
    if buy and (row["system_gpus"] or 1) > 1:
        label = f"{row['system_gpus']}× {label}"
    value = interval(
        row["perf_per_dollar"],
        row["perf_per_dollar_low"],
        row["perf_per_dollar_high"],
        SCALE[option],
    )
    estimated = " (estimated perf.)" if row["method"] == "estimated" else ""
    first = f"{value}{estimated}, P(best) {percent(row['p_best'])}"
    if buy:
        price = (
            f"{money(row['price_usd'])} {row['market']}, "
            + (
                f"nowcast from a price {row['age_days']} d old"
                if row["price_method"] == "nowcast"
                else f"observed {row['age_days']} d ago"
            )
            + f"; total {money(row['total_cost_usd'])}"
        )
    else:
        count = row["gpu_count"] or 1
        instance = f"{count}-GPU instance" if count > 1 else "1 GPU"
        price = (
            f"${row['usd_per_gpu_hour']:.2f}/GPU-h at {row['provider']} ({instance}), offer "
            f"{row['age_days']} d old"
        )
    return Cell(label, gpu_href(row["gpu_id"]), (first, price, row["why"]), strong=True)


def verdict_tables(ds: Dataset, workload: str) -> list[Table]:
    """Buy and rent verdicts for one workload: rows = budgets then memory tiers."""
    rows = ds.verdicts.filter(pl.col("workload") == workload)
    hours = rental_hours(ds.data.parameters)
    tables = []
    for group, options in (
        ("buy", ("buy_new", "buy_used")),
        ("rent", ("rent_on_demand", "rent_spot")),
    ):
        body: list[tuple[Cell, ...]] = []
        for kind in ("budget", "memory"):
            part = rows.filter(pl.col("kind") == kind)
            for limit in sorted(set(part["limit"])):
                cells = {
                    r["option"]: verdict_cell(r)
                    for r in part.filter(pl.col("limit") == limit).iter_rows(named=True)
                }
                body.append(
                    (
                        Cell(limit_label(kind, limit), strong=True),
                        *(cells.get(o, Cell("—")) for o in options),
                    )
                )
        if group == "buy":
            title = (
                f"Buy: {UNITS['buy']} (GPUs + host + {_years(ds)} of electricity); "
                "budgets are that total cost"
            )
        else:
            title = (
                f"Rent: {UNITS['rent']}; budgets are what {hours:,.0f} h "
                f"({_utilisation(ds)} of {_years(ds)}) of the instance cost"
            )
        tables.append(
            Table(
                ("budget or memory", *(OPTION_TITLES[o] for o in options)),
                body,
                title=title,
                heading=WORKLOAD_TITLES[workload] if group == "buy" else "",
                unit=UNITS[group],
                css="verdict",
            )
        )
    return tables


def _years(ds: Dataset) -> str:
    return f"{ds.data.parameters['years']:g} years"


def _utilisation(ds: Dataset) -> str:
    return f"{ds.data.parameters['utilization']:.0%} use"


def short_answer(ds: Dataset) -> list[str]:
    """One line per workload: the best of each way to get a GPU (the headline's #1)."""
    lines = []
    for workload, ways in headline(ds.data, k=1).items():
        picks = []
        for way, top in ways.items():
            title = OPTION_TITLES[way]
            picks.append(f"{title} **{top['gpu_id'][0]}**" if top.height else f"{title}: none")
        lines.append(f"{WORKLOAD_TITLES[workload]}: " + ", ".join(picks))
    return lines


def verdict_section(ds: Dataset) -> Section:
    """The answer: verdict tables per workload, by budget and by memory."""
    p = ds.data.parameters
    host = p["host_cost_usd"]["1"] * p.get("host_cost_scale", 1.0)
    tables = [t for w in WORKLOAD_TITLES for t in verdict_tables(ds, w)]
    return Section(
        "verdict",
        "What to get, by budget and by memory",
        [
            "Each cell is the best choice for that budget or memory tier, by performance "
            f"per dollar (relative to **{ds.data.reference_gpu} = 1.0**). Buying counts "
            f"the whole system over {_years(ds)}: GPUs, host (${host:,.0f} for one GPU) and "
            f"electricity at ${p['electricity_usd_per_kwh']:g}/kWh and "
            f"{p['utilization']:.0%} utilisation; a budget may buy a 2- or 4-GPU system. "
            "Renting counts the cheapest offer of each GPU. In brackets the 95 % interval; "
            "*P(best)* is the share of bootstrap replicates in which the pick is the best of "
            "what fits; each price says how it was obtained (`observed` within "
            f"{p.get('price_freshness_days', 180)} days, else `nowcast` from its last "
            "observation) and how old it is. Memory tiers hold 1-GPU systems with at least "
            "that much memory.",
        ],
        tables,
    )
