"""vast.ai search offers (`/api/v0/bundles/`): marketplace GPU offers.

Response shape: `{"offers": [{"id", "machine_id", "gpu_name", "num_gpus", "gpu_ram" (MB
per GPU), "dph_total" (USD/h for the whole offer, storage included), "min_bid" (USD/h for
the whole offer when interruptible), "reliability2", "geolocation", "rentable", ...}]}`.

- instance_type is f"{num_gpus}x {gpu_name} #{machine_id}" (the offer id changes as
  machines are relisted; the machine does not), or "#{id}" without a machine_id. When one
  machine lists two offers of that size (different ids), each is "#{machine_id}.{id}":
  they are two listings, not a duplicate. The same offer id twice stays one label, so a
  response repeating an offer at another price is a conflicting duplicate (integrity).
- One on_demand offer from dph_total, plus one spot offer from min_bid when > 0.
- Offers with reliability2 below `MIN_RELIABILITY` (0.9) are dropped: a flaky host's low
  price is not a price anyone should plan with. The others keep their reliability2 as
  `reliability` (shown beside a marketplace price). Offers without reliability2 are kept;
  `rentable: false` offers are dropped.
- region = geolocation ("Denmark, DK"), None when absent.
"""

from sources.cloud.gpu_names import canonical_gpu
from sources.cloud.records import CloudOffer, MalformedFile, load_json

MIN_RELIABILITY = 0.9
_REQUIRED = ("id", "gpu_name", "num_gpus", "dph_total")


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedFile(f"{where}: {value!r} is not a number")
    return float(value)


def parse_vast(content: bytes) -> list[CloudOffer]:
    """Parse a vast.ai offers response.

    Args:
        content: The response body `{"offers": [...]}` (a bare list is accepted too).

    Returns:
        On-demand and spot offers (see the module docstring).

    Raises:
        MalformedFile: Not JSON, no offers list, or an offer missing a required key.
    """
    data = load_json(content)
    items = data.get("offers") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise MalformedFile("missing 'offers' list")
    listings = [_listing(index, item) for index, item in enumerate(items)]
    ids: dict[str, set[str]] = {}
    for listing in listings:
        if listing is not None:
            ids.setdefault(listing[0]["instance_type"], set()).add(listing[1])
    offers = []
    for listing in listings:
        if listing is None:
            continue
        base, offer_id, prices = listing
        if len(ids[base["instance_type"]]) > 1:
            base = base | {"instance_type": f"{base['instance_type']}.{offer_id}"}
        offers += [CloudOffer(price_type=kind, usd_per_hour=usd, **base) for kind, usd in prices]
    return offers


def _listing(index: int, item: object) -> tuple[dict, str, list[tuple[str, float]]] | None:
    """One offer's fields, its id and its (price type, USD/h) pairs; None when not kept."""
    where = f"offers[{index}]"
    if not isinstance(item, dict):
        raise MalformedFile(f"{where}: not an object")
    for key in _REQUIRED:
        if key not in item:
            raise MalformedFile(f"{where}: missing {key!r}")
    if item.get("rentable") is False:
        return None
    reliability = item.get("reliability2")
    if reliability is not None:
        reliability = _number(reliability, f"{where}.reliability2")
        if reliability < MIN_RELIABILITY:
            return None
    count = _number(item["num_gpus"], f"{where}.num_gpus")
    if count < 1 or count != int(count):
        return None
    name = str(item["gpu_name"])
    ram = item.get("gpu_ram")
    memory = _number(ram, f"{where}.gpu_ram") / 1024 if ram is not None else None
    machine = item.get("machine_id")
    label = f"#{machine}" if machine is not None else f"#{item['id']}"
    base = {
        "provider": "vast",
        "instance_type": f"{int(count)}x {name} {label}",
        "region": item.get("geolocation") or None,
        "gpu": canonical_gpu(name, memory),
        "gpu_name": name,
        "gpu_count": int(count),
        "reliability": reliability,
    }
    prices = []
    price = _number(item["dph_total"], f"{where}.dph_total")
    if price > 0:
        prices.append(("on_demand", price))
    bid = item.get("min_bid")
    if bid is not None and _number(bid, f"{where}.min_bid") > 0:
        prices.append(("spot", float(bid)))
    return base, str(item["id"]), prices
