"""dstack gpuhunt query output: a list of `{"gpuModel", "price", "provider"}` objects.

This is what a gpuhunt query prints when it keeps only model, price and provider (the
realdata capture: A100 / H100 / MI300X offers across nine clouds, 2024-09). The format says
nothing about the instance type, region, GPU count, memory or whether a price is on-demand
or spot (gpuhunt returns both, interleaved), so each item is a `ReferencePrice` with those
fields None, and none of it becomes a `cloud_offers` row:

- `price` is gpuhunt's price per instance-hour, a string `"$0.44"` (a bare number is
  accepted too). Without the GPU count there is no price per GPU-hour: it stays None.
- `gpu` is set only when the model name pins one catalog GPU ("MI300X", "L4"); a bare
  "A100" or "H100" does not (40/80 GB, SXM/PCIe/NVL), so it stays None.
- `provider` is gpuhunt's name, with `lambdalabs` and `vastai` written as our provider
  names (`lambda`, `vast`).
"""

import re

from sources.cloud.gpu_names import aggregator_gpu
from sources.cloud.records import MalformedFile, ReferencePrice, load_json, provider_id

SOURCE = "gpuhunt"
_PRICE = re.compile(r"\$?\s*(\d+(?:\.\d+)?)")


def _price(value: object, where: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        price = float(value)
    elif isinstance(value, str) and (match := _PRICE.fullmatch(value.strip())):
        price = float(match.group(1))
    else:
        raise MalformedFile(f"{where}: {value!r} is not a price like '$0.44'")
    if price <= 0:
        raise MalformedFile(f"{where}: price {value!r} is not positive")
    return price


def parse_gpuhunt(content: bytes) -> list[ReferencePrice]:
    """Parse a gpuhunt output list.

    Args:
        content: A JSON list of objects with `gpuModel`, `price` and `provider`.

    Returns:
        One reference price per item, in file order (see the module docstring).

    Raises:
        MalformedFile: Not JSON, not a list, an item missing a key, or a price that is not
            a positive dollar amount.
    """
    data = load_json(content)
    if not isinstance(data, list):
        raise MalformedFile("not a list of gpuhunt offers")
    prices = []
    for index, item in enumerate(data):
        where = f"[{index}]"
        if not isinstance(item, dict):
            raise MalformedFile(f"{where}: not an object")
        for key in ("gpuModel", "price", "provider"):
            if not item.get(key) and item.get(key) != 0:
                raise MalformedFile(f"{where}: missing {key!r}")
        model, provider = str(item["gpuModel"]), str(item["provider"]).lower()
        prices.append(
            ReferencePrice(
                source=SOURCE,
                provider=provider_id(provider),
                instance_type=None,
                region=None,
                price_type=None,
                gpu=aggregator_gpu(model),
                gpu_name=model,
                gpu_count=None,
                usd_per_hour=_price(item["price"], f"{where}.price"),
                usd_per_gpu_hour=None,
            )
        )
    return prices
