"""The nightly search plan: which retail pages to fetch, within a budget per host.

Pure: catalog rows in, an ordered list of requests out. Amazon searches serve the `new`
market; eBay sold-and-completed searches serve `used` (a sale price is what a used card is
worth, an asking price is not). Page 1 of every query comes before page 2 of any, so a
budget cut drops depth, never whole GPUs.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlencode

# eBay category "Computer Graphics Cards" (27386) keeps systems and laptops mostly out.
EBAY_GPU_CATEGORY = "27386"
# Amazon node "Computer Graphics Cards" (284822).
AMAZON_GPU_NODE = "284822"

DEFAULT_BUDGET = {"amazon": 60, "ebay": 120}
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


def search_plan(
    catalog: Iterable[Mapping[str, object]],
    pages_per_query: int = 2,
    budget: Mapping[str, int] | None = None,
    amazon_base: str = AMAZON_BASE,
    ebay_base: str = EBAY_BASE,
) -> list[SearchRequest]:
    """Requests for every catalog GPU on Amazon (new) and eBay sold (used).

    `catalog` rows need gpu_id, name and vendor. Requests beyond a site's nightly budget
    (requests per source) are left out; order: by page, then catalog order, then source.
    """
    budget = dict(DEFAULT_BUDGET if budget is None else budget)
    rows = list(catalog)
    plan: list[SearchRequest] = []
    used: dict[str, int] = {}
    for page in range(1, pages_per_query + 1):
        for row in rows:
            query = search_query(str(row["name"]), str(row["vendor"]))
            for source, market, url in (
                ("amazon", "new", amazon_url(query, page, amazon_base)),
                ("ebay", "used", ebay_sold_url(query, page, ebay_base)),
            ):
                if used.get(source, 0) >= budget.get(source, 0):
                    continue
                used[source] = used.get(source, 0) + 1
                plan.append(SearchRequest(source, market, str(row["gpu_id"]), query, page, url))
    return plan
