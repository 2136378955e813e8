"""Lambda Cloud `GET /api/v1/instance-types`: on-demand GPU instance prices.

Response shape::

    {"data": {"gpu_1x_a100_sxm4": {
        "instance_type": {"name", "description", "gpu_description",
                          "price_cents_per_hour", "specs": {"vcpus", "memory_gib",
                          "storage_gib", "gpus"}},
        "regions_with_capacity_available": [{"name", "description"}]}}}

One on_demand offer per instance type with region None: Lambda prices an instance type the
same in every region, and which regions have capacity right now is availability, not price
(Lambda has no spot market). usd_per_hour = price_cents_per_hour / 100. CPU-only types
(specs.gpus 0) are skipped.
"""

from sources.cloud.gpu_names import canonical_gpu
from sources.cloud.records import CloudOffer, MalformedFile, load_json


def _require(mapping: object, key: str, where: str) -> object:
    if not isinstance(mapping, dict):
        raise MalformedFile(f"{where}: not an object")
    if key not in mapping:
        raise MalformedFile(f"{where}: missing {key!r}")
    return mapping[key]


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedFile(f"{where}: {value!r} is not a number")
    return float(value)


def parse_lambda(content: bytes) -> list[CloudOffer]:
    """Parse a Lambda Cloud instance-types response into on-demand offers.

    Args:
        content: The response body.

    Returns:
        One offer per GPU instance type, region None.

    Raises:
        MalformedFile: Not JSON, or a missing or non-numeric required field.
    """
    data = load_json(content)
    types = _require(data, "data", "response")
    if not isinstance(types, dict):
        raise MalformedFile("data: not an object")
    offers = []
    for key, entry in types.items():
        where = f"data[{key!r}]"
        instance = _require(entry, "instance_type", where)
        where += ".instance_type"
        name = _require(instance, "name", where)
        cents = _number(_require(instance, "price_cents_per_hour", where), where)
        specs = _require(instance, "specs", where)
        gpus = _number(_require(specs, "gpus", f"{where}.specs"), f"{where}.specs.gpus")
        if gpus < 1 or cents <= 0:
            continue
        offers.append(
            CloudOffer(
                provider="lambda",
                instance_type=str(name),
                region=None,
                price_type="on_demand",
                gpu=canonical_gpu(str(name)),
                gpu_name=str(instance.get("gpu_description") or name),
                gpu_count=int(gpus),
                usd_per_hour=cents / 100,
            )
        )
    return offers
