"""gpus.html: every catalog GPU with its prices, memory, performance per dollar and rank.

The list comes pre-sorted four ways, one static page each, linked from one another, so it
sorts without JavaScript: `gpus.html` (by id), `gpus-by-price.html` (cheapest first),
`gpus-by-perf-per-dollar.html` (best first) and `gpus-by-memory.html` (most first). The
sorted copies keep their table out of the search index (`data-pagefind-ignore`), so a
search for a GPU finds gpus.html and the GPU's page once, not four copies of one table.

Performance per dollar and rank are those of the main workload (16-bit training, the first
of `WORKLOAD_TITLES`) for the GPU's smallest system, per market, as on its page ("Where it
ranks"); the index shows the better of new and used.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Table, gpu_href, money, number
from reports.dataset import Dataset

MAIN_WORKLOAD = next(iter(WORKLOAD_TITLES))
MARKETS = ("new", "used")


@dataclass(frozen=True)
class Order:
    """One sorted copy of the list: its file, what it is sorted by, and how."""

    file: str
    label: str  # the link's text: "price"
    detail: str  # what the order means: "cheapest of new and used first"
    by: tuple[str, ...]  # gpu_index_frame columns, NULLs last
    descending: tuple[bool, ...]


ORDERS = (
    Order("gpus.html", "GPU id", "alphabetical", ("gpu_id",), (False,)),
    Order(
        "gpus-by-price.html",
        "price",
        "the cheaper of new and used, cheapest first",
        ("price", "gpu_id"),
        (False, False),
    ),
    Order(
        "gpus-by-perf-per-dollar.html",
        "perf per dollar",
        "performance per $1,000 in 16-bit training, best first",
        ("perf_per_dollar", "gpu_id"),
        (True, False),
    ),
    Order(
        "gpus-by-memory.html", "memory", "most memory first", ("memory_gb", "gpu_id"), (True, False)
    ),
)


def _markets(ds: Dataset) -> pl.DataFrame:
    """Per GPU and market (new, used): the smallest system's price, perf per $ and rank."""
    perf = ds.data.perf.filter(
        (pl.col("workload") == MAIN_WORKLOAD) & pl.col("market").is_in(MARKETS)
    )
    counts = perf.group_by("system_gpus", "market").agg(n=pl.len())
    return (
        perf.filter(pl.col("system_gpus") == pl.col("system_gpus").min().over("gpu_id"))
        .join(counts, on=["system_gpus", "market"])
        .select("gpu_id", "market", "system_gpus", "perf_per_dollar", "rank", "n")
    )


def gpu_index_frame(ds: Dataset) -> pl.DataFrame:
    """One row per catalog GPU: specs, new and used price, best perf per $ and its rank.

    `price` is the cheaper of new and used (the price sort's key); `perf_per_dollar` the
    better market's relative performance per $1,000 of total cost, with its `rank` of `n`
    systems of that size (`rank_market`, `system_gpus`). NULL where the GPU has no price.
    """
    prices = ds.current_prices.filter(pl.col("market").is_in(MARKETS))
    wide = {
        market: prices.filter(pl.col("market") == market).select(
            "gpu_id",
            pl.col("price_usd").alias(f"price_{market}"),
            pl.col("price_method").alias(f"method_{market}"),
        )
        for market in MARKETS
    }
    best = (
        _markets(ds)
        # Ties (new and used at the same value): the market first by name, then fewer GPUs.
        .sort(
            "perf_per_dollar",
            "market",
            "system_gpus",
            descending=[True, False, False],
            nulls_last=True,
        )
        .group_by("gpu_id", maintain_order=True)
        .first()
        .select(
            "gpu_id",
            (pl.col("perf_per_dollar") * 1000).alias("perf_per_dollar"),
            "rank",
            "n",
            pl.col("market").alias("rank_market"),
            "system_gpus",
        )
    )
    training = ds.data.relative.filter(pl.col("workload") == MAIN_WORKLOAD).select(
        "gpu_id", "value", "method"
    )
    return (
        ds.data.gpus.select("gpu_id", "name", "vendor", "memory_gb")
        .join(training, on="gpu_id", how="left")
        .join(wide["new"], on="gpu_id", how="left")
        .join(wide["used"], on="gpu_id", how="left")
        .with_columns(price=pl.min_horizontal("price_new", "price_used"))
        .join(best, on="gpu_id", how="left")
    )


def _price(value: float | None, method: str | None) -> str:
    """'$1,599', or '$1,599 (nowcast)' when no observation is fresh enough."""
    return money(value) + (" (nowcast)" if value is not None and method == "nowcast" else "")


def _rank(r: dict) -> str:
    """'3 of 63 (used)', with the system size when the smallest system has several GPUs."""
    if r["rank"] is None:
        return ""
    size = f", {r['system_gpus']}-GPU" if r["system_gpus"] > 1 else ""
    return f"{r['rank']} of {r['n']} ({r['rank_market']}{size})"


HEADERS = (
    "GPU",
    "name",
    "vendor",
    "memory (GB)",
    "16-bit training (rel.)",
    "price new",
    "price used",
    "perf per $1,000 (16-bit training)",
    "rank (16-bit training)",
)


def gpu_index_table(ds: Dataset, order: Order = ORDERS[0]) -> Table:
    """Every catalog GPU, sorted as `order` says (GPUs without the key last)."""
    frame = gpu_index_frame(ds).sort(
        list(order.by), descending=list(order.descending), nulls_last=True
    )
    rows = [
        (
            Cell(r["gpu_id"], gpu_href(r["gpu_id"])),
            Cell(r["name"] or ""),
            Cell(r["vendor"] or ""),
            Cell("" if r["memory_gb"] is None else f"{r['memory_gb']:g}"),
            Cell(number(r["value"], 2) + (" (est.)" if r["method"] == "estimated" else "")),
            Cell(_price(r["price_new"], r["method_new"])),
            Cell(_price(r["price_used"], r["method_used"])),
            Cell(
                ""
                if r["perf_per_dollar"] is None
                else f"{number(r['perf_per_dollar'])} ({r['rank_market']})"
            ),
            Cell(_rank(r)),
        )
        for r in frame.iter_rows(named=True)
    ]
    title = f"All {len(rows)} catalog GPUs, by {order.label}: {order.detail}"
    return Table(HEADERS, rows, title=title)


INTRO = (
    "Every catalog GPU has a page: specs with their sources, relative performance with its "
    "method and interval, price history, the prices at the as-of date, cloud offers, the "
    "benchmark figures behind it and where it ranks.",
    "Prices are the as-of date's (*nowcast*: projected from an older observation). "
    "Performance per $1,000 is relative 16-bit training performance per $1,000 of the total "
    "cost of the GPU's smallest system (GPUs, host and electricity over the ownership "
    "period), in its better market; the rank is among systems of that size in that market. "
    "A GPU without a price is listed last in the price and performance-per-dollar orders.",
)


def write_gpu_index(ds: Dataset, pages: Path, render: Callable[..., str]) -> list[str]:
    """Write gpus.html and its sorted copies into `pages`; return their file names.

    `render(template, **context)` renders a page template (reports.pages._page).
    """
    for order in ORDERS:
        (pages / order.file).write_text(
            render(
                "gpus.html.j2",
                version=ds.version,
                root="",
                title=f"gpuvalue {ds.version}: GPUs"
                + ("" if order is ORDERS[0] else f" by {order.label}"),
                intro=INTRO,
                orders=ORDERS,
                order=order,
                table=gpu_index_table(ds, order),
                searchable=order is ORDERS[0],
            ),
            encoding="utf-8",
        )
    return [order.file for order in ORDERS]
