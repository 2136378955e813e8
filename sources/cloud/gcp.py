"""GCP Compute Engine GPU prices: a pure parser of Cloud Billing Catalog SKUs.

Input: a `services/6F81-5844-456A/skus` response (`{"skus": [...], "nextPageToken": ...}`)
or a bare list of SKU objects. GPU SKUs are priced per GPU, apart from the VM's cores and
memory, so every offer has gpu_count 1 and usd_per_hour per GPU-hour; its instance_type is
the SKU's GPU name as GCP writes it ("Nvidia H100 80GB Mega"): two SKUs of one canonical
GPU in one region (H100 80GB and H100 80GB Mega, priced apart) are two offers, not a
conflicting duplicate (sources/cloud/integrity.py).

Decisions:

- Price = `units` + `nanos` / 1e9 of `pricingInfo[0].pricingExpression.tieredRates`: the
  list rate for one unit, i.e. the tier that starts at 0 (`startUsageAmount` 0 or absent).
  A later tier is a volume rate (the price past so many GPU-hours a month), never the list
  price (this parser took the last tier until issue 26). One exception: a tier at 0 priced
  0 is a free allowance, and the list rate is then the next tier's (the first priced tier
  by start). Two tiers with one start are a body we cannot read (MalformedFile). A SKU
  with no priced tier is skipped.
- GPU SKUs are recognised by their description, "<prefix><GPU name> GPU [attached to <kind>
  VMs] running in <location>[ for N Year(s)]". Price type: "Commitment v1: ... for 1 Year"
  -> reserved_1y, "... for 3 Year(s)" -> reserved_3y; "Spot Preemptible" / "Preemptible"
  (as a prefix or as the VM kind) -> spot; otherwise on_demand. `category.usageType`
  (OnDemand, Preemptible, Commit1Yr, Commit3Yr), when present, must agree.
- Skipped: "Licensing Fee ..." (an OS licence, not the GPU), "Reserved ..." (the
  reservation pass-through SKUs, including "in Calendar Mode"), GPUs attached to "DWS
  Defined Duration" VMs (Dynamic Workload Scheduler: neither on-demand, spot nor a
  commitment), "Virtual Workstation" SKUs (GPU plus an NVIDIA licence), and any other VM
  kind we do not know.
- Region: one offer per region code in `serviceRegions` when the SKU lists them (the same
  price applies to each). Otherwise (the description-only files) the location of the
  description: a single-region location is mapped to its region code with
  `LOCATION_REGIONS` ("Tokyo" -> asia-northeast1); a region group ("Americas", "EMEA",
  "APAC") or a location not in the table is kept as written.
- GPU: "Tesla A100" -> a100-sxm4-40gb (A2 machines), "A100 80GB" -> a100-sxm4-80gb, any
  H100 80GB ("Mega", "Plus" included; A3 machines) -> h100-sxm5-80gb, "H200" -> h200-sxm,
  "B200" -> b200, "L4" -> l4, "T4" -> t4, "V100" -> v100-sxm2-16gb; K80, P4, P100 and any
  other name -> None (returned, with the GCP name, for the unknown-name report).
"""

import re
from decimal import Decimal, InvalidOperation

from sources.cloud.records import CloudOffer, MalformedFile, load_json

PROVIDER = "gcp"

_DESCRIPTION = re.compile(
    r"^(?P<prefix>Commitment v1: |Spot Preemptible |Preemptible )?"
    r"(?P<name>.+?) GPU"
    r"(?: attached to (?P<vm>.+?) VMs)?"
    r" (?:running )?in (?P<location>.+?)"
    r"(?: for (?P<years>\d+) Years?)?$"
)
_SKIPPED_PREFIXES = ("Licensing Fee", "Reserved ")
_SKIPPED_WORDS = ("Calendar Mode", "DWS", "Virtual Workstation")
_SPOT_VMS = {"Spot Preemptible", "Preemptible"}
_USAGE_TYPES = {
    "OnDemand": "on_demand",
    "Preemptible": "spot",
    "Commit1Yr": "reserved_1y",
    "Commit3Yr": "reserved_3y",
}

# GCP's location names in SKU descriptions -> region codes (single-region locations only).
LOCATION_REGIONS = {
    "Iowa": "us-central1",
    "South Carolina": "us-east1",
    "Northern Virginia": "us-east4",
    "Virginia": "us-east4",
    "Columbus": "us-east5",
    "Alabama": "us-east7",
    "Dallas": "us-south1",
    "Oregon": "us-west1",
    "Los Angeles": "us-west2",
    "Salt Lake City": "us-west3",
    "Las Vegas": "us-west4",
    "Montreal": "northamerica-northeast1",
    "Toronto": "northamerica-northeast2",
    "Mexico": "northamerica-south1",
    "Sao Paulo": "southamerica-east1",
    "Santiago": "southamerica-west1",
    "Belgium": "europe-west1",
    "London": "europe-west2",
    "Frankfurt": "europe-west3",
    "Netherlands": "europe-west4",
    "Zurich": "europe-west6",
    "Milan": "europe-west8",
    "Paris": "europe-west9",
    "Berlin": "europe-west10",
    "Turin": "europe-west12",
    "Warsaw": "europe-central2",
    "Finland": "europe-north1",
    "Stockholm": "europe-north2",
    "Madrid": "europe-southwest1",
    "Israel": "me-west1",
    "TelAviv": "me-west1",
    "Doha": "me-central1",
    "Dammam": "me-central2",
    "Johannesburg": "africa-south1",
    "Taiwan": "asia-east1",
    "Hong Kong": "asia-east2",
    "Tokyo": "asia-northeast1",
    "Osaka": "asia-northeast2",
    "Seoul": "asia-northeast3",
    "Mumbai": "asia-south1",
    "Delhi": "asia-south2",
    "Singapore": "asia-southeast1",
    "Jakarta": "asia-southeast2",
    "Sydney": "australia-southeast1",
    "Melbourne": "australia-southeast2",
}

# First word of the GPU name (after "Nvidia" and "Tesla") -> canonical gpu_id.
_GPU_IDS: dict[str, str | None] = {
    "a100": "a100-sxm4-40gb",
    "h100": "h100-sxm5-80gb",
    "h200": "h200-sxm",
    "b200": "b200",
    "l4": "l4",
    "t4": "t4",
    "v100": "v100-sxm2-16gb",
    "k80": None,
    "p4": None,
    "p100": None,
}


def gpu_id(name: str) -> str | None:
    """Canonical gpu_id of a GCP GPU name ("Nvidia Tesla A100 80GB"), None when unknown."""
    words = [w for w in name.lower().split() if w not in ("nvidia", "tesla")]
    if not words:
        return None
    if words[0] == "a100" and "80gb" in words:
        return "a100-sxm4-80gb"
    return _GPU_IDS.get(words[0])


def parse_gcp(content: bytes) -> list[CloudOffer]:
    """Parse a Cloud Billing Catalog SKU list into per-GPU-hour offers.

    Args:
        content: A `skus` response (`{"skus": [...]}`) or a bare JSON list of SKU objects.

    Returns:
        One offer per GPU SKU x region, instance_type the SKU's GPU name, gpu_count 1.

    Raises:
        MalformedFile: Not JSON, no SKU list, or a SKU without a required field
            (description, pricingInfo, pricingExpression, tieredRates, unitPrice...).
    """
    data = load_json(content)
    if isinstance(data, dict):
        if "skus" not in data:
            keys = ", ".join(sorted(data)[:8])
            raise MalformedFile(f"not a Cloud Billing Catalog response: missing 'skus' ({keys})")
        skus = data["skus"]
    else:
        skus = data
    if not isinstance(skus, list):
        raise MalformedFile(f"skus: expected a list, got {type(skus).__name__}")

    offers = []
    for index, sku in enumerate(skus):
        offers.extend(_sku_offers(sku, index))
    return offers


def _sku_offers(sku: object, index: int) -> list[CloudOffer]:
    if not isinstance(sku, dict):
        raise MalformedFile(f"skus[{index}]: expected an object, got {type(sku).__name__}")
    where = f"skus[{sku.get('skuId', index)}]"
    description = sku.get("description")
    if not isinstance(description, str):
        raise MalformedFile(f"{where}: missing 'description'")
    if "pricingInfo" not in sku:
        raise MalformedFile(f"{where} ({description}): missing 'pricingInfo'")
    parsed = _classify(description, sku, where)
    if parsed is None:
        return []
    name, price_type, location = parsed
    usd = _price(sku, f"{where} ({description})")
    if usd <= 0:
        return []
    gpu = gpu_id(name)
    return [
        CloudOffer(
            provider=PROVIDER,
            instance_type=name,
            region=region,
            price_type=price_type,
            gpu=gpu,
            gpu_name=name,
            gpu_count=1,
            usd_per_hour=usd,
        )
        for region in _regions(sku, location, where)
    ]


def _classify(description: str, sku: dict, where: str) -> tuple[str, str, str] | None:
    """(GPU name, price type, location) of a per-GPU SKU, None for any other SKU."""
    if description.startswith(_SKIPPED_PREFIXES) or any(
        word in description for word in _SKIPPED_WORDS
    ):
        return None
    match = _DESCRIPTION.match(description)
    if match is None:
        return None  # not a GPU SKU (cores, RAM, disks...)
    prefix, vm, years = match["prefix"], match["vm"], match["years"]
    if prefix == "Commitment v1: ":
        if years not in ("1", "3") or vm is not None:
            return None
        price_type = f"reserved_{years}y"
    elif years is not None:
        return None
    elif prefix is not None or vm in _SPOT_VMS:
        price_type = "spot"
    elif vm is None:
        price_type = "on_demand"
    else:
        return None  # a VM kind we do not know
    usage = (sku.get("category") or {}).get("usageType")
    if usage is not None and _USAGE_TYPES.get(usage, price_type) != price_type:
        raise MalformedFile(
            f"{where} ({description}): category.usageType {usage!r} contradicts the "
            f"description ({price_type})"
        )
    return match["name"].strip(), price_type, match["location"]


def _price(sku: dict, where: str) -> float:
    infos = sku["pricingInfo"]
    if not isinstance(infos, list) or not infos:
        raise MalformedFile(f"{where}: 'pricingInfo' is empty or not a list")
    expression = infos[0].get("pricingExpression") if isinstance(infos[0], dict) else None
    if not isinstance(expression, dict):
        raise MalformedFile(f"{where}.pricingInfo[0]: missing 'pricingExpression'")
    tiers = expression.get("tieredRates")
    if not isinstance(tiers, list) or not tiers:
        raise MalformedFile(f"{where}.pricingInfo[0].pricingExpression: missing 'tieredRates'")
    unit = expression.get("usageUnit", "h")
    if unit != "h":
        raise MalformedFile(
            f"{where}.pricingInfo[0].pricingExpression.usageUnit: expected 'h', got {unit!r}"
        )
    starts = [_tier_start(tier, f"{where}.tieredRates[{i}]") for i, tier in enumerate(tiers)]
    if len(set(starts)) != len(starts):
        raise MalformedFile(
            f"{where}.pricingInfo[0].pricingExpression.tieredRates: two tiers start at the "
            f"same usage ({starts}): no single list rate"
        )
    if min(starts) != 0:
        raise MalformedFile(
            f"{where}.pricingInfo[0].pricingExpression.tieredRates: no tier starts at 0 "
            f"({starts}): no list rate for one unit"
        )
    for _, index in sorted((start, i) for i, start in enumerate(starts)):
        price = _tier_price(tiers[index], f"{where}.tieredRates[{index}]")
        if price > 0:
            return price  # the tier at 0, or the first after a free allowance
    return 0.0


def _tier_start(tier: object, where: str) -> float:
    """Where a tier starts (`startUsageAmount`, in usage units; absent means 0)."""
    start = tier.get("startUsageAmount", 0) if isinstance(tier, dict) else None
    if isinstance(start, bool) or not isinstance(start, int | float) or start < 0:
        raise MalformedFile(f"{where}.startUsageAmount: {start!r:.40} is not a usage amount")
    return float(start)


def _tier_price(tier: object, where: str) -> float:
    price = tier.get("unitPrice") if isinstance(tier, dict) else None
    if not isinstance(price, dict):
        raise MalformedFile(f"{where}: missing 'unitPrice'")
    currency = price.get("currencyCode", "USD")
    if currency != "USD":
        raise MalformedFile(f"{where}.unitPrice.currencyCode: expected 'USD', got {currency!r}")
    units, nanos = price.get("units", "0"), price.get("nanos", 0)
    try:
        # Decimal, so that "2" + 933908000 nanos is 2.933908, not 2.9339079999999997.
        return float(Decimal(int(units)) + Decimal(int(nanos)) / Decimal(10**9))
    except (TypeError, ValueError, InvalidOperation) as exc:
        raise MalformedFile(
            f"{where}.unitPrice: units {units!r} / nanos {nanos!r} are not integers"
        ) from exc


def _regions(sku: dict, location: str, where: str) -> list[str]:
    regions = sku.get("serviceRegions")
    if regions:
        if not isinstance(regions, list) or not all(isinstance(r, str) for r in regions):
            raise MalformedFile(f"{where}.serviceRegions: expected a list of region codes")
        return regions
    return [LOCATION_REGIONS.get(location, location)]
