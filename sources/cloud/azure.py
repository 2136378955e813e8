"""Azure Retail Prices API (prices.azure.com): GPU VM prices.

`fetch_azure` pages through the API and returns the raw page bodies (archived by the
client); `parse_azure` turns one page (or a bare list of items) into offers.

What is kept: serviceName "Virtual Machines", unitOfMeasure "1 Hour", retailPrice > 0,
GPU sizes only (see `sources.cloud.gpu_names.azure_gpu`), and
- type "Consumption": on_demand, or spot when skuName ends with " Spot";
- type "Reservation": reserved_1y / reserved_3y from reservationTerm. The retailPrice of a
  reservation is the TOTAL for the whole term, so it is converted to an hourly price:
  retailPrice / (8760 * years).
What is skipped: volume tiers (`tierMinimumUnits` > 0: a rate from so many units on, not
the list rate for one unit; the row with `tierMinimumUnits` 0 or absent is the price),
DevTestConsumption, Windows (productName contains "Windows"; Windows,
Linux, Spot and Low Priority rows share one armSkuName), "Low Priority" skuNames, Cloud
Services, fractional-GPU sizes (NVads A10 v5 below NV36, NVv4: gpu_count must be a whole
number) and GPU sizes whose GPU count is not in the table (both counted in
`parse_azure_report`).
"""

import logging
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from sources.cloud.gpu_names import azure_gpu
from sources.cloud.records import CloudOffer, MalformedFile, load_json
from sources.http import PoliteClient

log = logging.getLogger("gpuvalue.cloud.azure")

API_URL = "https://prices.azure.com/api/retail/prices"
# Filters are case-sensitive ('Virtual Machines', not 'virtual machines'). One filter
# covers every price type (Consumption, DevTestConsumption, Reservation) of the N-series
# (NC, ND, NV: every Azure GPU family); the parser drops what it does not keep.
DEFAULT_FILTER = "serviceName eq 'Virtual Machines' and contains(armSkuName, 'Standard_N')"
PAGE_SIZE = 1000  # items per page the API returns
HOURS_PER_YEAR = 8760
_TERMS = {"1 Year": ("reserved_1y", 1), "3 Years": ("reserved_3y", 3)}
_REQUIRED = (
    "serviceName",
    "type",
    "armSkuName",
    "armRegionName",
    "skuName",
    "productName",
    "unitOfMeasure",
    "retailPrice",
)


@dataclass
class AzureParse:
    """Offers from one Azure file and what was skipped for a reason worth reporting."""

    offers: list[CloudOffer] = field(default_factory=list)
    fractional: set[str] = field(default_factory=set)  # fractional-GPU sizes skipped
    unknown_count: set[str] = field(default_factory=set)  # GPU family, size not in table


def _items(content: bytes) -> list:
    data = load_json(content)
    if isinstance(data, list):
        return data
    if not isinstance(data, dict) or not isinstance(data.get("Items"), list):
        raise MalformedFile("missing 'Items' list")
    return data["Items"]


def _tier_minimum(item: dict, where: str) -> float:
    """The item's `tierMinimumUnits` (absent: 0): > 0 is a volume tier, not the list rate."""
    minimum = item.get("tierMinimumUnits", 0)
    if minimum is None:
        return 0.0
    if isinstance(minimum, bool) or not isinstance(minimum, int | float) or minimum < 0:
        raise MalformedFile(f"{where}: tierMinimumUnits {minimum!r:.40} is not a unit count")
    return float(minimum)


def parse_azure_report(content: bytes) -> AzureParse:
    """Parse an Azure Retail Prices page and say what was skipped.

    Args:
        content: A response body `{"Items": [...], "NextPageLink": ..., "Count": ...}` or a
            bare JSON list of items.

    Returns:
        The offers and the GPU sizes skipped for a fractional or unknown GPU count.

    Raises:
        MalformedFile: Not JSON, no Items, an item missing a required key or with a
            non-numeric price, a non-USD currency or an unknown reservation term.
    """
    result = AzureParse()
    for index, item in enumerate(_items(content)):
        where = f"Items[{index}]"
        if not isinstance(item, dict):
            raise MalformedFile(f"{where}: not an object")
        for key in _REQUIRED:
            if key not in item:
                raise MalformedFile(f"{where}: missing {key!r}")
        currency = item.get("currencyCode", "USD")
        if currency != "USD":
            raise MalformedFile(f"{where}: currencyCode {currency!r}, expected 'USD'")
        price = item["retailPrice"]
        if isinstance(price, bool) or not isinstance(price, int | float):
            raise MalformedFile(f"{where}: retailPrice {price!r} is not a number")
        if (
            _tier_minimum(item, where) > 0
            or item["serviceName"] != "Virtual Machines"
            or item["unitOfMeasure"] != "1 Hour"
            or "Windows" in item["productName"]
            or "Low Priority" in item["skuName"]
            or price <= 0
        ):
            continue
        if item["type"] == "Consumption":
            price_type = "spot" if item["skuName"].endswith(" Spot") else "on_demand"
            hourly = float(price)
        elif item["type"] == "Reservation":
            term = item.get("reservationTerm")
            if term not in _TERMS:
                raise MalformedFile(f"{where}: unknown reservationTerm {term!r}")
            price_type, years = _TERMS[term]
            hourly = float(price) / (HOURS_PER_YEAR * years)
        else:  # DevTestConsumption and anything new
            continue
        sku = item["armSkuName"]
        found = azure_gpu(sku)
        if found is None:
            continue  # not a GPU size
        gpu, count = found
        if count is None:
            result.unknown_count.add(sku)
            continue
        if count.denominator != 1:
            result.fractional.add(sku)
            continue
        result.offers.append(
            CloudOffer(
                provider="azure",
                instance_type=sku,
                region=item["armRegionName"] or None,
                price_type=price_type,
                gpu=gpu,
                gpu_name=sku,
                gpu_count=int(count),
                usd_per_hour=hourly,
            )
        )
    if result.fractional:
        log.info("azure: skipped fractional-GPU sizes %s", sorted(result.fractional))
    if result.unknown_count:
        log.warning("azure: GPU sizes with no GPU count in the table %s", result.unknown_count)
    return result


def parse_azure(content: bytes) -> list[CloudOffer]:
    """Parse an Azure Retail Prices page (or a bare list of items) into GPU VM offers.

    Args:
        content: The response body.

    Returns:
        One offer per kept item (see the module docstring).

    Raises:
        MalformedFile: The body is not in the API's format.
    """
    return parse_azure_report(content).offers


def _with_skip(url: str, skip: int) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "$skip"]
    query.append(("$skip", str(skip)))
    return urlunsplit(parts._replace(query=urlencode(query)))


def fetch_azure(
    client: PoliteClient,
    filter: str = DEFAULT_FILTER,  # noqa: A002 - the API's own name for it
    max_pages: int = 50,
    *,
    base_url: str = API_URL,
) -> tuple[list[bytes], str]:
    """Fetch every page of an Azure Retail Prices query.

    Follows NextPageLink. When a page has no NextPageLink but is full (Count == 1000),
    falls back to `$skip` = items fetched so far. Stops on an empty page, a page without a
    NextPageLink that is not full, a failed request, or after `max_pages` pages.

    Args:
        client: The polite client (it retries 429/5xx and archives every response).
        filter: An OData `$filter` (case-sensitive values).
        max_pages: Upper bound on pages requested.
        base_url: The API endpoint.

    Returns:
        (the raw bodies of the successful pages in order, a status string: "ok: N pages",
        "partial: ..." when a page failed after earlier ones succeeded, "failed: ..." when
        the first page failed, or "truncated: ..." when max_pages was reached).
    """
    pages: list[bytes] = []
    url: str | None = urlunsplit(urlsplit(base_url)._replace(query=urlencode({"$filter": filter})))
    fetched = 0
    while url:
        if len(pages) >= max_pages:
            return pages, f"truncated: stopped after max_pages={max_pages} pages"
        result = client.get(url, source="azure")
        if not result.ok:
            state = "partial" if pages else "failed"
            return pages, f"{state}: page {len(pages) + 1}: {result.outcome} ({result.error})"
        try:
            items = _items(result.content)
            body = load_json(result.content)
        except MalformedFile as exc:
            state = "partial" if pages else "failed"
            return pages, f"{state}: page {len(pages) + 1}: {exc}"
        if not items:
            break
        pages.append(result.content)
        fetched += len(items)
        next_link = body.get("NextPageLink") if isinstance(body, dict) else None
        count = body.get("Count", len(items)) if isinstance(body, dict) else len(items)
        if next_link:
            url = next_link
        elif count >= PAGE_SIZE:
            url = _with_skip(result.url, fetched)
        else:
            url = None
    return pages, f"ok: {len(pages)} pages"
