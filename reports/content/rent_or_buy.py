"""Section `rent-or-buy`: which is cheaper at your utilisation (issue 25, item 3).

Read from the model's `rent_or_buy` (per GPU class and utilisation) and `rent_or_buy_gpus`
(per GPU: the break-even utilisation) tables, model/rent_or_buy.py. Static: every
utilisation is computed at build time, so the page needs no server and no script.
"""

import polars as pl

from model.rent_or_buy import GPU_CLASSES, HOURS_PER_YEAR, class_labels
from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table, gpu_href, money

SECTION_ID = "rent-or-buy"
SECTION_TITLE = "Rent or buy at your utilisation"
MAIN_WORKLOAD = "training_16bit"
PRICE_TYPE = "on_demand"


def _per_hour(value: float | None) -> str:
    return "" if value is None else f"${value:.2f}"


def grid_cell(row: dict | None) -> Cell:
    """'own' or 'rent', with the cheapest way each side gets an hour of the reference GPU's work."""
    if row is None:
        return Cell("—")
    own = (
        f"own {row['own_gpu_id']} ({row['own_market']}): {_per_hour(row['own_usd_per_work_hour'])}"
        if row["own_gpu_id"]
        else "own: no priced GPU"
    )
    rent = (
        f"rent {row['rent_gpu_id']} at {row['rent_provider']}: "
        f"{_per_hour(row['rent_usd_per_work_hour'])}"
        if row["rent_gpu_id"]
        else "rent: no fresh offer"
    )
    verdict = {"own": "buy", "rent": "rent"}.get(row["cheaper"] or "", "—")
    return Cell(verdict, lines=(own, rent), strong=True)


def grid_table(grid: pl.DataFrame, years: float, reference: str) -> Table:
    """Utilisations down, GPU classes across; each cell the cheaper way and both costs."""
    rows = grid.filter((pl.col("workload") == MAIN_WORKLOAD) & (pl.col("price_type") == PRICE_TYPE))
    present = [c for c in GPU_CLASSES if c[0] in set(rows["gpu_class"].to_list())]
    body = []
    for use in sorted(set(rows["utilization"].to_list())):
        at = {
            r["gpu_class"]: r
            for r in rows.filter(pl.col("utilization") == use).iter_rows(named=True)
        }
        hours = use * years * HOURS_PER_YEAR
        label = Cell(f"{use:.0%} use", lines=(f"{hours:,.0f} h in {years:g} years",), strong=True)
        body.append((label, *(grid_cell(at.get(c[0])) for c in present)))
    return Table(
        ("utilisation", *(c[1] for c in present)),
        body,
        title=(
            f"{WORKLOAD_TITLES[MAIN_WORKLOAD]}: the cheaper way to an hour of "
            f"{reference} work, on-demand renting"
        ),
        css="cards",
        empty="No GPU class has both a price and a fresh offer in this version.",
    )


def _break_even(row: dict | None) -> str:
    if row is None:
        return "—"
    if row["break_even_utilization"] is None:
        return "never: " + (row["note"] or "renting is cheaper")
    return f"{row['break_even_utilization']:.0%} use"


def break_even_table(per_gpu: pl.DataFrame) -> Table:
    """Each GPU one can both buy and rent: break-even utilisation new and used."""
    rows = per_gpu.filter(pl.col("price_type") == PRICE_TYPE)
    labels = class_labels()
    body = []
    order = {c[0]: i for i, c in enumerate(GPU_CLASSES)}
    gpus = (
        rows.select("gpu_class", "gpu_id")
        .unique()
        .with_columns(_c=pl.col("gpu_class").replace_strict(order, default=len(order)))
        .sort("_c", "gpu_id")
    )
    for gpu in gpus.select("gpu_class", "gpu_id").rows():
        found = {
            r["market"]: r for r in rows.filter(pl.col("gpu_id") == gpu[1]).iter_rows(named=True)
        }
        first = next(iter(found.values()))
        cells = []
        for market in ("new", "used"):
            r = found.get(market)
            lines = (
                (
                    f"{money(r['price_usd'])} card; own: {money(r['own_fixed_usd'])} "
                    f"(card + host − resale) + ${r['electricity_usd_per_hour']:.3f}/h power",
                )
                if r
                else ("no price",)
            )
            cells.append(Cell(_break_even(r), lines=lines))
        offer = Cell(
            f"${first['usd_per_gpu_hour']:.2f}/GPU-h",
            lines=(f"{first['provider']}, offer of {first['offer_day']}",),
        )
        name = Cell(
            gpu[1],
            gpu_href(gpu[1]),
            (f"{labels.get(gpu[0], gpu[0])}",),
            strong=True,
        )
        body.append((name, *cells, offer))
    return Table(
        ("GPU", "buy new: owning is cheaper above", "buy used: owning is cheaper above", "rent"),
        body,
        title="Break-even utilisation of each GPU you can both buy and rent (on-demand)",
        css="cards",
        empty="No GPU has both a price and a fresh on-demand offer in this version.",
    )


def rent_or_buy_section(
    grid: pl.DataFrame, per_gpu: pl.DataFrame, parameters: dict, reference: str
) -> Section:
    """The `rent-or-buy` section: the utilisation grid per GPU class, then each GPU."""
    years = float(parameters["years"])
    host = float(parameters["host_cost_usd"].get("1", parameters["host_cost_usd"].get(1, 0)))
    return Section(
        SECTION_ID,
        SECTION_TITLE,
        [
            "How much of the time would the GPU work? Dettmers' rule of thumb: a personal "
            "machine 5-10 %, a PhD desktop under 15 %, a shared cluster 35 % and more. "
            f"Owning counts what it costs over {years:g} years: the card and a host "
            f"(${host:,.0f} for one card), the electricity of the hours it works, less what "
            "it resells for at the end; renting counts the hours at the cheapest fresh offer "
            "(no stale price decides). Both are divided by the work done, so a class "
            f"compares its best GPU to own with its best GPU to rent: *$ per hour of "
            f"{reference} work* (lower is better). GPU classes are by memory.",
        ],
        [grid_table(grid, years, reference), break_even_table(per_gpu)],
        after=[
            "Spot offers and the inference workloads are in the `rent_or_buy` download; "
            "break-evens at every fresh offer in `rent_or_buy_gpus`. Renting for a year at a "
            "time (reserved) is billed for every hour and is compared in "
            "[Renting versus buying](tables.html#renting) on the tables page.",
        ],
    )
