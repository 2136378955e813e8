"""Section `upgrade`: "I already have a PC", the best card by its own price (issue 25, item 2).

Read from the model's `upgrade_picks` table (model/upgrade.py): per workload, one card per
budget and market; each cell says the card, its price and how it was obtained, its
performance with the 95 % interval, P(best), memory, board power and the PSU it needs,
and the best value within the same budget. The full-system view (host and electricity
counted) stays in the `verdict` section, linked from here.
"""

import polars as pl

from model.upgrade import PSU_HEADROOM, PSU_REST_OF_SYSTEM_W, UPGRADE_MARKETS
from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table, gpu_href, interval, money, percent

SECTION_ID = "upgrade"
SECTION_TITLE = "I already have a PC: the best card for your budget"


def price_text(row: dict) -> str:
    """'$759 new, observed, 3 observations, 12 d old' (or nowcast from a price n d old)."""
    n = row.get("n_observations")
    seen = f", {n} observation{'' if n == 1 else 's'}" if n else ""
    if row["price_method"] == "nowcast":
        how = f"nowcast from a price {row['age_days']} d old{seen}"
    else:
        how = f"observed{seen}, {row['age_days']} d old"
    return f"{money(row['price_usd'])} {row['market']} ({how})"


def _tie_label(row: dict) -> str:
    return "tie: " + row["tie_gpu_ids"] if row.get("tie_gpu_ids") else row["gpu_id"]


def pick_cell(row: dict, value: dict | None) -> Cell:
    """The performance pick of one budget x market, with the best value that fits beside it."""
    if row["gpu_id"] is None:
        cheapest = (
            f"; the cheapest eligible card, {row['cheapest_gpu_id']}, costs "
            f"{money(row['cheapest_usd'])}"
            if row.get("cheapest_gpu_id")
            else ""
        )
        return Cell("—", lines=(f"no eligible card priced within the budget{cheapest}",))
    estimated = ", estimated" if row["method"] == "estimated" else ""
    perf = interval(
        row["relative_performance"],
        row["relative_performance_low"],
        row["relative_performance_high"],
    )
    lines = [
        price_text(row),
        f"rel. perf {perf}{estimated}; the fastest in {percent(row['p_best'])} of draws",
        f"{row['memory_gb']:g} GB, {row['tdp_w']:.0f} W → PSU ≥ {row['psu_w']} W",
    ]
    if value is not None and value["gpu_id"] is not None:
        per_k = f"{value['perf_per_dollar'] * 1000:.3g}"
        same = " (this card)" if value["gpu_id"] == row["gpu_id"] else ""
        lines.append(f"best value: {_tie_label(value)}{same}, {per_k} per $1,000 of card")
    return Cell(_tie_label(row), gpu_href(row["gpu_id"]), tuple(lines), strong=True)


def upgrade_tables(picks: pl.DataFrame) -> list[Table]:
    """One table per workload: budgets down, markets across (`cards`: a card per row on phones)."""
    tables = []
    for workload, title in WORKLOAD_TITLES.items():
        rows = picks.filter(pl.col("workload") == workload)
        body = []
        for budget in sorted(set(rows["budget_usd"].to_list())):
            cells = []
            for market in UPGRADE_MARKETS:
                found = {
                    r["criterion"]: r
                    for r in rows.filter(
                        (pl.col("budget_usd") == budget) & (pl.col("market") == market)
                    ).iter_rows(named=True)
                }
                perf = found.get("performance")
                cells.append(pick_cell(perf, found.get("value")) if perf else Cell("—"))
            body.append((Cell(f"≤ {money(budget)}", strong=True), *cells))
        tables.append(
            Table(
                ("card budget", "buy new", "buy used"),
                body,
                heading=title,
                css="cards",
                empty="No card price in this version.",
            )
        )
    return tables


def upgrade_section(picks: pl.DataFrame) -> Section:
    """The `upgrade` section: best card per card budget, workload and market."""
    return Section(
        SECTION_ID,
        SECTION_TITLE,
        [
            "For a desktop you already own: the budget is the **card's price alone** (no "
            "host, no electricity). Each cell is the fastest card priced within the budget "
            "(relative performance with its 95 % interval, and how often it is still the "
            "fastest in the bootstrap draws of performance and price), then the best value "
            "within the same budget (performance per card dollar). Only desktop cards "
            "compete (consumer and workstation PCIe boards: data-center boards are passively "
            "cooled and need a server's airflow), only GPUs whose performance is measured "
            "under a mainstream stack or estimated with a validated error, and a "
            "`tie` names the cards the data cannot separate.",
            f"*PSU* is the power supply the desktop needs: (card board power + "
            f"{PSU_REST_OF_SYSTEM_W:.0f} W for the CPU and the rest) × {PSU_HEADROOM:g}, "
            "rounded up to the next size sold (methodology, *I already have a PC*). The "
            "whole-system view (host, 5 years of electricity, resale, 2-4 GPU systems) is "
            "[What to get, by budget and by memory](#verdict).",
        ],
        upgrade_tables(picks),
    )
