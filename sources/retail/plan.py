"""The nightly search plan: which retail pages to fetch, within a budget per host.

Pure: catalog rows in, an ordered list of requests out. Amazon searches serve the `new`
market; eBay sold-and-completed searches serve `used` (a sale price is what a used card is
worth, an asking price is not).

Coverage before depth: page 1 of every catalog GPU comes before page 2 of any, so a budget
cut drops depth first. The default budget is derived from the catalog (one request per GPU
and result page), so by default nothing is cut. Only a budget set below the catalog size
drops whole GPUs, and then by rotation (`search_plan`); `unsearched` lists them.
"""

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

# eBay category "Computer Graphics Cards" (27386) keeps systems and laptops mostly out.
EBAY_GPU_CATEGORY = "27386"
# Amazon node "Computer Graphics Cards" (284822).
AMAZON_GPU_NODE = "284822"

# The sites searched and the market each serves, in plan order.
SOURCES = (("amazon", "new"), ("ebay", "used"))
AMAZON_BASE = "https://www.amazon.com"
EBAY_BASE = "https://www.ebay.com"


@dataclass(frozen=True)
class SearchRequest:
    """One page to fetch."""

    source: str  # "amazon" or "ebay"
    market: str  # "new" or "used"
    gpu_id: str  # the catalog GPU the query is for (the matcher decides what each card is)
    query: str
    page: int
    url: str


def search_query(name: str, vendor: str) -> str:
    """A retail search query for a catalog name: brand-neutral, memory kept.

    "GeForce RTX 3060 12 GB" -> "RTX 3060 12GB"; "Tesla V100 SXM2 32 GB" -> "V100 SXM2 32GB";
    "Instinct MI300X" -> "AMD MI300X"; "GH200 Grace Hopper Superchip (...)" -> "GH200".
    """
    query = re.sub(r"\(.*?\)", " ", name)
    query = re.sub(
        r"\b(GeForce|Tesla|Instinct|Radeon|Generation|Workstation Edition|"
        r"Grace Hopper Superchip)\b",
        " ",
        query,
    )
    query = re.sub(r"(\d+) GB\b", r"\1GB", query)
    query = " ".join(query.split())
    if vendor == "amd" and not query.startswith("RX"):
        query = f"AMD {query}"
    return query


def amazon_url(query: str, page: int, base: str = AMAZON_BASE) -> str:
    """An Amazon.com search URL in the graphics-card node."""
    params = {"k": query, "rh": f"n:{AMAZON_GPU_NODE}", "page": page}
    return f"{base}/s?{urlencode(params)}"


def ebay_sold_url(query: str, page: int, base: str = EBAY_BASE) -> str:
    """An eBay.com sold-and-completed search URL in the graphics-card category, 60 per page."""
    params = {
        "_nkw": query,
        "_sacat": EBAY_GPU_CATEGORY,
        "LH_Sold": 1,
        "LH_Complete": 1,
        "_ipg": 60,
        "_pgn": page,
    }
    return f"{base}/sch/i.html?{urlencode(params)}"


def default_budget(gpus: int, pages_per_query: int) -> int:
    """A source's nightly budget when none is set: every catalog GPU at full depth."""
    return max(0, gpus) * max(0, pages_per_query)


def search_plan(
    catalog: Iterable[Mapping[str, object]],
    pages_per_query: int = 2,
    budget: Mapping[str, int | None] | None = None,
    amazon_base: str = AMAZON_BASE,
    ebay_base: str = EBAY_BASE,
    day: dt.date | None = None,
) -> list[SearchRequest]:
    """Requests for every catalog GPU on Amazon (new) and eBay sold (used).

    Args:
        catalog: Rows with gpu_id, name and vendor, in catalog order.
        pages_per_query: Result pages wanted per GPU and site.
        budget: Requests per source tonight. None, or a source mapped to None, means
            `default_budget` (the whole catalog at full depth); a source missing from the
            mapping gets no requests.
        amazon_base: Amazon's origin (a local server in tests).
        ebay_base: eBay's origin.
        day: The night planned; chooses the GPUs searched when a budget is below the
            catalog size (None: as on day 0 of the rotation).

    Returns:
        The requests, ordered by page, then catalog order, then source. Per source, page 1
        of every GPU the budget covers comes before page 2 of any; pages beyond page 1 go
        to GPUs in catalog order while the budget lasts.

    When a source's budget B is below the number of catalog GPUs N, B GPUs are searched
    tonight: with the catalog sorted by gpu_id, the window of B GPUs starting at
    (day.toordinal() * B) mod N, wrapping around. Consecutive nights take consecutive
    windows, so no GPU goes unsearched for more than ceil(N / B) nights, and a rerun of
    the same night plans the same pages. `unsearched` lists tonight's skipped GPUs.
    """
    rows = list(catalog)
    ids = sorted(str(row["gpu_id"]) for row in rows)
    limits = {
        source: default_budget(len(rows), pages_per_query)
        if budget is None or (source in budget and budget[source] is None)
        else max(0, int(budget.get(source) or 0))
        for source, _ in SOURCES
    }
    covered: dict[str, frozenset[str]] = {}
    for source, _ in SOURCES:
        limit = limits[source]
        if limit >= len(ids):
            covered[source] = frozenset(ids)
        else:
            start = ((day.toordinal() if day else 0) * limit) % len(ids)
            covered[source] = frozenset(ids[(start + i) % len(ids)] for i in range(limit))
    plan: list[SearchRequest] = []
    used = dict.fromkeys(limits, 0)
    for page in range(1, pages_per_query + 1):
        for row in rows:
            gpu_id = str(row["gpu_id"])
            query = search_query(str(row["name"]), str(row["vendor"]))
            for source, market in SOURCES:
                if gpu_id not in covered[source] or used[source] >= limits[source]:
                    continue
                url = (
                    amazon_url(query, page, amazon_base)
                    if source == "amazon"
                    else ebay_sold_url(query, page, ebay_base)
                )
                used[source] += 1
                plan.append(SearchRequest(source, market, gpu_id, query, page, url))
    return plan


def unsearched(
    catalog: Iterable[Mapping[str, object]], plan: Iterable[SearchRequest]
) -> dict[str, list[str]]:
    """Per source, the catalog GPUs the plan does not search at all, sorted by gpu_id."""
    ids = sorted(str(row["gpu_id"]) for row in catalog)
    planned: dict[str, set[str]] = {source: set() for source, _ in SOURCES}
    for request in plan:
        planned.setdefault(request.source, set()).add(request.gpu_id)
    return {
        source: [gpu_id for gpu_id in ids if gpu_id not in planned.get(source, set())]
        for source, _ in SOURCES
    }
