"""Prime Intellect marketplace summaries (tugot17/gpu-price-tracker `data/summary/*.jsonl`).

One JSON object per line, one line per snapshot (about every 30 minutes) of one GPU type::

    {"timestamp", "gpu_type": "H100_80GB", "socket_type": "SXM5" | null,
     "price_stats": {"min", "p10", "p25", "median", "p75", "p90", "max", "mean"},
     "availability": {"total", ...},
     "by_provider": {"<cloud>": {"count", "min", "avg"}},
     "by_config": {"8x": {"count", "min_per_gpu", "avg_per_gpu", "min_total", "avg_total",
                          "best_deal": {"provider", "location", "socket", "spot"}}}}

All prices are USD per GPU-hour except `*_total` (per instance-hour). The tracker computes
them over every offer Prime Intellect lists, spot ones included, so a percentile or a
provider's min/avg has no price type: `price_type` is None. Records per line:

- `price_stats`: one per statistic, provider None (marketplace-wide), `offers` = the
  availability total when present;
- `by_provider`: `min` and `avg` per cloud, `offers` = its count;
- `by_config`: per GPU count, `avg` (provider None) and `min`, which is one real offer: the
  tracker's `best_deal` names its cloud, country (kept as region) and spot flag (so its
  price_type is known), and `min_total` is that offer's instance price. Older lines have no
  `best_deal`: provider, region and price_type are then None.

`gpu` comes from gpu_type and socket_type; a bare `H200_141GB` (SXM or NVL not stated)
stays None. Cloud names are the tracker's, with `lambdalabs` written `lambda`.
"""

import re
from datetime import datetime

from sources.cloud.gpu_names import aggregator_gpu
from sources.cloud.records import MalformedFile, ReferencePrice, load_json, provider_id

SOURCE = "primeintellect"
STATISTICS = ("min", "p10", "p25", "median", "p75", "p90", "max", "mean")
_CONFIG = re.compile(r"(\d+)x")
_MEMORY = re.compile(r"_(\d+)GB", re.IGNORECASE)


def _object(mapping: dict, key: str, where: str) -> dict:
    value = mapping.get(key)
    if not isinstance(value, dict):
        raise MalformedFile(f"{where}: missing {key!r} object")
    return value


def _price(mapping: dict, key: str, where: str) -> float:
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedFile(f"{where}.{key}: {value!r} is not a number")
    if value <= 0:
        raise MalformedFile(f"{where}.{key}: price {value!r} is not positive")
    return float(value)


def _count(mapping: dict, key: str, where: str) -> int:
    value = mapping.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise MalformedFile(f"{where}.{key}: {value!r} is not a count")
    return value


def parse_primeintellect(content: bytes) -> list[ReferencePrice]:
    """Parse a Prime Intellect summary JSONL file.

    Args:
        content: The file: one snapshot object per line; blank lines are ignored.

    Returns:
        Reference prices, line by line (see the module docstring).

    Raises:
        MalformedFile: A line that is not a JSON object, or a missing key, a price that is
            not a positive number, a count that is not a count, an unreadable timestamp.
    """
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedFile(f"not UTF-8 text: {exc}") from exc
    prices: list[ReferencePrice] = []
    lines = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        lines += 1
        prices.extend(_snapshot(line, f"line {number}"))
    if not lines:
        raise MalformedFile("no snapshot lines")
    return prices


def _snapshot(line: str, where: str) -> list[ReferencePrice]:
    try:
        snapshot = load_json(line)
    except MalformedFile as exc:
        raise MalformedFile(f"{where}: {exc}") from exc
    if not isinstance(snapshot, dict):
        raise MalformedFile(f"{where}: not an object")
    for key in ("timestamp", "gpu_type"):
        if not isinstance(snapshot.get(key), str):
            raise MalformedFile(f"{where}: missing {key!r}")
    try:
        datetime.fromisoformat(snapshot["timestamp"])
    except ValueError as exc:
        raise MalformedFile(f"{where}.timestamp: {snapshot['timestamp']!r} is not a time") from exc
    gpu_type, socket = snapshot["gpu_type"], snapshot.get("socket_type")
    name = f"{gpu_type} {socket}" if socket else gpu_type
    memory = _MEMORY.search(gpu_type)
    gpu = aggregator_gpu(name.replace("_", " "), float(memory.group(1)) if memory else None)
    base = {"source": SOURCE, "instance_type": None, "gpu": gpu, "gpu_name": name}
    base["observed_at"] = snapshot["timestamp"]
    stats = _object(snapshot, "price_stats", where)
    availability = snapshot.get("availability")
    total = availability.get("total") if isinstance(availability, dict) else None
    records = [
        ReferencePrice(
            **base,
            provider=None,
            region=None,
            price_type=None,
            gpu_count=None,
            usd_per_hour=None,
            usd_per_gpu_hour=_price(stats, statistic, f"{where}.price_stats"),
            statistic=statistic,
            offers=total if isinstance(total, int) else None,
        )
        for statistic in STATISTICS
    ]
    for cloud, figures in _object(snapshot, "by_provider", where).items():
        here = f"{where}.by_provider.{cloud}"
        if not isinstance(figures, dict):
            raise MalformedFile(f"{here}: not an object")
        for statistic in ("min", "avg"):
            records.append(
                ReferencePrice(
                    **base,
                    provider=provider_id(cloud),
                    region=None,
                    price_type=None,
                    gpu_count=None,
                    usd_per_hour=None,
                    usd_per_gpu_hour=_price(figures, statistic, here),
                    statistic=statistic,
                    offers=_count(figures, "count", here),
                )
            )
    for config, figures in _object(snapshot, "by_config", where).items():
        records.extend(_config(config, figures, base, f"{where}.by_config.{config}"))
    return records


def _config(config: str, figures: object, base: dict, where: str) -> list[ReferencePrice]:
    match = _CONFIG.fullmatch(config)
    if not match or int(match.group(1)) < 1:
        raise MalformedFile(f"{where}: {config!r} is not a GPU count like '8x'")
    if not isinstance(figures, dict):
        raise MalformedFile(f"{where}: not an object")
    count, offers = int(match.group(1)), _count(figures, "count", where)
    deal = figures.get("best_deal")
    if deal is not None and not isinstance(deal, dict):
        raise MalformedFile(f"{where}.best_deal: not an object")
    deal = deal or {}
    spot = deal.get("spot")
    if spot is not None and not isinstance(spot, bool):
        raise MalformedFile(f"{where}.best_deal.spot: {spot!r} is not true or false")
    location = deal.get("location")
    cheapest = ReferencePrice(
        **base,
        provider=provider_id(deal["provider"]) if deal.get("provider") else None,
        region=location if location and location != "N/A" else None,
        price_type=None if spot is None else ("spot" if spot else "on_demand"),
        gpu_count=count,
        usd_per_hour=_price(figures, "min_total", where),
        usd_per_gpu_hour=_price(figures, "min_per_gpu", where),
        statistic="min",
        offers=offers,
    )
    average = ReferencePrice(
        **base,
        provider=None,
        region=None,
        price_type=None,
        gpu_count=count,
        usd_per_hour=_price(figures, "avg_total", where),
        usd_per_gpu_hour=_price(figures, "avg_per_gpu", where),
        statistic="avg",
        offers=offers,
    )
    return [cheapest, average]
