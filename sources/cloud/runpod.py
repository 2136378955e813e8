"""RunPod GraphQL `gpuTypes`: per-GPU-hour prices in the secure and community clouds.

Accepts `{"data": {"gpuTypes": [...]}}` and a bare list of gpu types. Per GPU type:
securePrice -> on_demand "secure", communityPrice -> on_demand "community",
secureSpotPrice -> spot "secure", communitySpotPrice -> spot "community"; the instance type
is RunPod's GPU type id and the cloud, "NVIDIA H100 80GB HBM3 community" (as the bundled
snapshot's "<gpu_id> community": the registry's marketplace rule reads the " community"
ending, and two RunPod GPU types with one canonical GPU stay two offers, never a
conflicting duplicate). A price of 0 or null means "not offered in that cloud" and gives
no offer. Prices are per GPU-hour, so
gpu_count is 1; region is None (RunPod quotes one global price). The placeholder "unknown"
gpu type is skipped. A list without price fields (a name list) gives zero offers.
"""

from sources.cloud.gpu_names import canonical_gpu
from sources.cloud.records import CloudOffer, MalformedFile, load_json

_PRICES = (
    ("securePrice", "secure", "on_demand"),
    ("communityPrice", "community", "on_demand"),
    ("secureSpotPrice", "secure", "spot"),
    ("communitySpotPrice", "community", "spot"),
)


def _gpu_types(content: bytes) -> list:
    data = load_json(content)
    if isinstance(data, dict):
        if "errors" in data and not data.get("data"):
            raise MalformedFile(f"GraphQL errors: {str(data['errors'])[:200]}")
        data = (data.get("data") or {}).get("gpuTypes")
    if not isinstance(data, list):
        raise MalformedFile("missing 'data.gpuTypes' list")
    return data


def unpriced_note(content: bytes) -> str | None:
    """Why a well-formed gpuTypes list gave no offers, when it is because no type has prices.

    A `gpuTypes` query that did not ask for the price fields returns a name list; parsing
    it gives zero offers, which would otherwise look like "RunPod offers nothing".
    """
    types = [item for item in _gpu_types(content) if isinstance(item, dict)]
    if types and not any(key in item for item in types for key, _, _ in _PRICES):
        return (
            f"no price fields in any of the {len(types)} GPU types: this is a name list "
            f"({', '.join(sorted({k for item in types for k in item}))}), not a price list"
        )
    return None


def parse_runpod(content: bytes) -> list[CloudOffer]:
    """Parse a RunPod gpuTypes response.

    Args:
        content: The response body.

    Returns:
        Up to four offers per GPU type (see the module docstring).

    Raises:
        MalformedFile: Not JSON, no gpuTypes list, a type without an id, or a price that
            is not a number.
    """
    data = _gpu_types(content)
    offers = []
    for index, item in enumerate(data):
        where = f"gpuTypes[{index}]"
        if not isinstance(item, dict):
            raise MalformedFile(f"{where}: not an object")
        if "id" not in item:
            raise MalformedFile(f"{where}: missing 'id'")
        gpu_id = str(item["id"])
        if gpu_id.lower() == "unknown":
            continue
        memory = item.get("memoryInGb")
        memory = float(memory) if isinstance(memory, int | float) and memory > 0 else None
        gpu = canonical_gpu(gpu_id, memory) or canonical_gpu(
            str(item.get("displayName") or ""), memory
        )
        for key, cloud, price_type in _PRICES:
            price = item.get(key)
            if price is None:
                continue
            if isinstance(price, bool) or not isinstance(price, int | float):
                raise MalformedFile(f"{where}.{key}: {price!r} is not a number")
            if price <= 0:
                continue
            offers.append(
                CloudOffer(
                    provider="runpod",
                    instance_type=f"{gpu_id} {cloud}",
                    region=None,
                    price_type=price_type,
                    gpu=gpu,
                    gpu_name=gpu_id,
                    gpu_count=1,
                    usd_per_hour=float(price),
                )
            )
    return offers
