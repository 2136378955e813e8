"""The answer: verdict tables by budget and memory tier, and the one-line short answer."""

import polars as pl

from model.ties import tie_label
from model.verdicts import HEADLINE_KIND, OPTION_TITLES, SCALE, UNITS, rental_hours
from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table, gpu_href, interval, money, percent
from reports.content.prices import priced_with_evidence, with_price_evidence
from reports.content.renting import rent_price_line
from reports.dataset import Dataset


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
    if row.get("tie_gpu_ids"):
        label = tie_label(row["tie_gpu_ids"], row.get("tie_system_gpus") if buy else None)
        first = f"{value} for {row['gpu_id']}, P(best) {percent(row['p_best'])}"
    if buy:
        price = (
            f"{priced_with_evidence(row['price_usd'], row.get('price_evidence'))} "
            f"{row['market']}, "
            + (
                f"nowcast from a price {row['age_days']} d old"
                if row["price_method"] == "nowcast"
                else f"observed, {row['age_days']} d old"
            )
            + f"; total {money(row['total_cost_usd'])}"
        )
    else:
        price = rent_price_line(row)
    rests = f"rests on: {row['caveat']}" if row.get("caveat") else "rests on: not recorded"
    lines = (first, price, rests, *filter(None, [row.get("offer_caveat")]), row["why"])
    return Cell(label, gpu_href(row["gpu_id"]), lines, strong=True)


def verdict_tables(ds: Dataset, workload: str) -> list[Table]:
    """Buy and rent verdicts for one workload: rows = budgets then memory tiers."""
    rows = with_price_evidence(
        ds.verdicts.filter(pl.col("workload") == workload), ds.current_prices
    )
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


def headline_pick(row: dict | None, title: str) -> str:
    """'buy new **A**' or 'buy new: tie **A**, **B**' (P(best)), from a headline verdict."""
    if row is None or row["gpu_id"] is None:
        return f"{title}: none"
    odds = f" (P(best) {percent(row['p_best'])}"
    odds += ", estimated)" if row["basis"] == "validated_estimate" else ")"
    if row["tie_gpu_ids"]:
        names = ", ".join(f"**{g}**" for g in row["tie_gpu_ids"].split(", "))
        return f"{title}: tie {names}{odds}"
    return f"{title} **{row['gpu_id']}**{odds}"


def short_answer(ds: Dataset) -> list[str]:
    """One line per workload: the headline verdict of each way to get a GPU.

    The best 1-GPU system of all eligible GPUs (verdicts of kind `headline`), or the tied
    group where the pick's P(best) is under 50 % and the intervals overlap.
    """
    heads = ds.verdicts.filter(pl.col("kind") == HEADLINE_KIND)
    lines = []
    for workload, title in WORKLOAD_TITLES.items():
        rows = {
            r["option"]: r
            for r in heads.filter(pl.col("workload") == workload).iter_rows(named=True)
        }
        picks = [headline_pick(rows.get(o), t) for o, t in OPTION_TITLES.items()]
        lines.append(f"{title}: " + ", ".join(picks))
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
            "Only GPUs whose value is measured under a mainstream stack, or estimated with a "
            "validated error, compete (see the methodology's *Headline eligibility and ties*); "
            "*rests on* says which, with the stacks and the number of independent sources. "
            "Where the pick's P(best) is under 50 % and other candidates' intervals overlap "
            "its own, the cell says **tie** and names the group, best point estimate first.",
        ],
        tables,
    )
