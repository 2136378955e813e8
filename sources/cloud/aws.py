"""AWS EC2 GPU prices: pure parsers from AWS documents to `CloudOffer`s.

`parse_aws` detects which of three formats it was given:

1. the AWS Price List bulk offer file for AmazonEC2 (`products` + `terms`);
2. the `aws ec2 describe-spot-price-history` JSON (`SpotPriceHistory`);
3. the ec2instances.info `instances.json` (a list of instance objects with `pricing`).

Decisions, shared by the three formats:

- Only Linux, shared-tenancy, no pre-installed software, "Used" capacity, GPU (or other
  accelerator) instances are kept. Capacity Block SKUs and prices of 0.00 are skipped.
- The GPU and its count come from `INSTANCE_GPUS`, keyed by instance type. Accelerators not
  in the GPU catalog (M2050, K80, K520, M60, V520, T4G, Trainium, Inferentia, Gaudi) keep gpu None
  and are returned, so callers can count unknown names. An instance type of an unknown
  family is returned only by the offer file when its `gpu` attribute gives a GPU count
  (gpu None, gpu_name "unknown (<family>)"): the other formats do not say the count.
- Spot in instances.json: `spot_min` (the lowest current price among the region's zones,
  as AWS's Spot pricing page lists it); `spot_avg` / `spot_max` are not kept.
- Reserved prices: only the Standard, No Upfront hourly rate is kept (`reserved_1y`,
  `reserved_3y`). All/Partial Upfront and Convertible terms are skipped: `CloudOffer` has no
  purchase-option field, so keeping them would yield several reserved_1y prices per
  instance and region.
- Region: `regionCode` when the offer file has it, else the location name mapped through
  `LOCATION_REGIONS`; a location not in that table is kept as the location name.
"""

import re
from datetime import datetime

from sources.cloud.records import CloudOffer, MalformedFile, load_json

PROVIDER = "aws"

# GPU model names as AWS documents them, and their canonical gpu_id (None: not in the catalog).
_GPUS: dict[str, tuple[str, str | None]] = {
    "k80": ("NVIDIA K80", None),
    "m2050": ("NVIDIA Tesla M2050", None),
    "k520": ("NVIDIA GRID K520", None),
    "m60": ("NVIDIA Tesla M60", None),
    "v100": ("NVIDIA V100 16GB", "v100-sxm2-16gb"),
    "v100-32": ("NVIDIA V100 32GB", "v100-sxm2-32gb"),
    "a100": ("NVIDIA A100 40GB", "a100-sxm4-40gb"),
    "a100-80": ("NVIDIA A100 80GB", "a100-sxm4-80gb"),
    "h100": ("NVIDIA H100 80GB", "h100-sxm5-80gb"),
    "h200": ("NVIDIA H200 141GB", "h200-sxm"),
    "b200": ("NVIDIA B200", "b200"),
    "t4": ("NVIDIA T4", "t4"),
    "t4g": ("NVIDIA T4G", None),
    "a10g": ("NVIDIA A10G", "a10g"),
    "l4": ("NVIDIA L4", "l4"),
    "l40s": ("NVIDIA L40S", "l40s"),
    "rtx-pro-6000": ("NVIDIA RTX PRO 6000 Blackwell Server", "rtx-pro-6000-blackwell"),
    "v520": ("AMD Radeon Pro V520", None),
    "trainium": ("AWS Trainium", None),
    "trainium2": ("AWS Trainium2", None),
    "inferentia": ("AWS Inferentia", None),
    "inferentia2": ("AWS Inferentia2", None),
    "gaudi": ("Intel Habana Gaudi", None),
}


def _sizes(gpu: str, counts: dict[str, int]) -> dict[str, tuple[str, int]]:
    return {size: (gpu, count) for size, count in counts.items()}


# g5 / g6 / g6e: one GPU up to 16xlarge, 4 in 12xlarge and 24xlarge, 8 in 48xlarge.
_ONE_TO_EIGHT_SIZES = {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1}
_ONE_TO_FOUR = _ONE_TO_EIGHT_SIZES | {"16xlarge": 1, "12xlarge": 4}
_ONE_TO_EIGHT = _ONE_TO_FOUR | {"24xlarge": 4, "48xlarge": 8}

# family -> size -> (key of _GPUS, GPUs per instance).
_FAMILIES: dict[str, dict[str, tuple[str, int]]] = {
    "cg1": _sizes("m2050", {"4xlarge": 2}),
    "p2": _sizes("k80", {"xlarge": 1, "8xlarge": 8, "16xlarge": 16}),
    "g2": _sizes("k520", {"2xlarge": 1, "8xlarge": 4}),
    "g3": _sizes("m60", {"4xlarge": 1, "8xlarge": 2, "16xlarge": 4}),
    "g3s": _sizes("m60", {"xlarge": 1}),
    "p3": _sizes("v100", {"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}),
    "p3dn": _sizes("v100-32", {"24xlarge": 8}),
    "p4d": _sizes("a100", {"24xlarge": 8}),
    "p4de": _sizes("a100-80", {"24xlarge": 8}),
    "p5": _sizes("h100", {"4xlarge": 1, "48xlarge": 8}),
    "p5e": _sizes("h200", {"48xlarge": 8}),
    "p5en": _sizes("h200", {"48xlarge": 8}),
    "p6-b200": _sizes("b200", {"48xlarge": 8}),
    "g4dn": _sizes("t4", _ONE_TO_FOUR | {"metal": 8}),
    "g4ad": _sizes("v520", {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 2, "16xlarge": 4}),
    "g5": _sizes("a10g", _ONE_TO_EIGHT),
    "g5g": _sizes("t4g", _ONE_TO_EIGHT_SIZES | {"16xlarge": 2, "metal": 2}),
    "g6": _sizes("l4", _ONE_TO_EIGHT),
    "gr6": _sizes("l4", {"4xlarge": 1, "8xlarge": 1}),
    "g6e": _sizes("l40s", _ONE_TO_EIGHT),
    "g7e": _sizes(
        "rtx-pro-6000",
        {"2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "12xlarge": 2, "24xlarge": 4, "48xlarge": 8},
    ),
    "trn1": _sizes("trainium", {"2xlarge": 1, "32xlarge": 16}),
    "trn1n": _sizes("trainium", {"32xlarge": 16}),
    "trn2": _sizes("trainium2", {"48xlarge": 16}),
    "inf1": _sizes("inferentia", {"xlarge": 1, "2xlarge": 1, "6xlarge": 4, "24xlarge": 16}),
    "inf2": _sizes("inferentia2", {"xlarge": 1, "8xlarge": 1, "24xlarge": 6, "48xlarge": 12}),
    "dl1": _sizes("gaudi", {"24xlarge": 8}),
}

# instance type -> (canonical gpu or None, AWS's GPU name, GPUs per instance).
INSTANCE_GPUS: dict[str, tuple[str | None, str, int]] = {
    f"{family}.{size}": (_GPUS[key][1], _GPUS[key][0], count)
    for family, sizes in _FAMILIES.items()
    for size, (key, count) in sizes.items()
}

# AWS location names (offer files before regionCode existed) -> region codes.
LOCATION_REGIONS = {
    "US East (N. Virginia)": "us-east-1",
    "US East (Ohio)": "us-east-2",
    "US West (N. California)": "us-west-1",
    "US West (Oregon)": "us-west-2",
    "Canada (Central)": "ca-central-1",
    "South America (Sao Paulo)": "sa-east-1",
    "EU (Ireland)": "eu-west-1",
    "Europe (Ireland)": "eu-west-1",
    "EU (London)": "eu-west-2",
    "Europe (London)": "eu-west-2",
    "EU (Paris)": "eu-west-3",
    "Europe (Paris)": "eu-west-3",
    "EU (Frankfurt)": "eu-central-1",
    "Europe (Frankfurt)": "eu-central-1",
    "EU (Stockholm)": "eu-north-1",
    "Europe (Stockholm)": "eu-north-1",
    "EU (Milan)": "eu-south-1",
    "Europe (Milan)": "eu-south-1",
    "Asia Pacific (Tokyo)": "ap-northeast-1",
    "Asia Pacific (Seoul)": "ap-northeast-2",
    "Asia Pacific (Osaka)": "ap-northeast-3",
    "Asia Pacific (Singapore)": "ap-southeast-1",
    "Asia Pacific (Sydney)": "ap-southeast-2",
    "Asia Pacific (Jakarta)": "ap-southeast-3",
    "Asia Pacific (Mumbai)": "ap-south-1",
    "Asia Pacific (Hong Kong)": "ap-east-1",
    "Middle East (Bahrain)": "me-south-1",
    "Africa (Cape Town)": "af-south-1",
    "AWS GovCloud (US)": "us-gov-west-1",
    "AWS GovCloud (US-West)": "us-gov-west-1",
    "AWS GovCloud (US-East)": "us-gov-east-1",
}

_RESERVED_TYPES = {"1yr": "reserved_1y", "3yr": "reserved_3y"}
_HOURLY_UNITS = {"Hrs", "Hours", "hrs", "hours"}
_SPOT_LINUX = {"Linux/UNIX", "Linux/UNIX (Amazon VPC)"}


def instance_gpus(instance_type: str) -> tuple[str | None, str, int] | None:
    """(canonical gpu or None, AWS's GPU name, GPU count) of an instance type, None if not GPU."""
    return INSTANCE_GPUS.get(instance_type)


def parse_aws(content: bytes) -> list[CloudOffer]:
    """Parse an AWS offer file, a spot price history or an ec2instances.info instances.json.

    Args:
        content: The document's bytes (JSON).

    Returns:
        One offer per GPU instance type x region (x availability zone for spot) x price type.

    Raises:
        MalformedFile: The bytes are not JSON or not in any of the three formats, or a
            required field is missing or of the wrong type.
    """
    data = _load_json(content)
    if isinstance(data, dict) and "products" in data and "terms" in data:
        return _parse_offer_file(data)
    if isinstance(data, dict) and "SpotPriceHistory" in data:
        return _parse_spot_history(data)
    if isinstance(data, list) and (not data or _is_instances_json(data)):
        return _parse_instances_json(data)
    if isinstance(data, dict):
        keys = ", ".join(sorted(data)[:8])
        raise MalformedFile(
            "not an AWS offer file, spot price history or instances.json: expected "
            f"'products'+'terms' or 'SpotPriceHistory', found keys {keys}"
        )
    raise MalformedFile(
        "not an AWS offer file, spot price history or instances.json: "
        f"top level is a {type(data).__name__}"
    )


def _load_json(content: bytes) -> object:
    return load_json(content)


def _is_instances_json(data: list) -> bool:
    first = data[0]
    return isinstance(first, dict) and "instance_type" in first


def _require(mapping: object, key: str, where: str, kind: type | tuple = str) -> object:
    if not isinstance(mapping, dict):
        raise MalformedFile(f"{where}: expected an object, got {type(mapping).__name__}")
    if key not in mapping:
        raise MalformedFile(f"{where}: missing '{key}'")
    value = mapping[key]
    if not isinstance(value, kind):
        raise MalformedFile(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r:.60}")
    return value


def _kind_name(kind: type | tuple) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _price(text: object, where: str) -> float:
    try:
        return float(text)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise MalformedFile(f"{where}: not a price: {text!r:.60}") from exc


# ---------------------------------------------------------------------------------------------
# 1. Price List bulk offer file


def _parse_offer_file(data: dict) -> list[CloudOffer]:
    products = _require(data, "products", "offer file", dict)
    terms = _require(data, "terms", "offer file", dict)
    on_demand_terms = terms.get("OnDemand", {})
    reserved_terms = terms.get("Reserved", {})
    if not isinstance(on_demand_terms, dict) or not isinstance(reserved_terms, dict):
        raise MalformedFile("terms: 'OnDemand' and 'Reserved' must be objects")

    offers: list[CloudOffer] = []
    for sku, product in products.items():
        kept = _offer_product(sku, product)
        if kept is None:
            continue
        instance_type, region, gpu, gpu_name, count = kept
        for price_type, usd in _offer_prices(sku, on_demand_terms, reserved_terms):
            offers.append(
                CloudOffer(
                    provider=PROVIDER,
                    instance_type=instance_type,
                    region=region,
                    price_type=price_type,
                    gpu=gpu,
                    gpu_name=gpu_name,
                    gpu_count=count,
                    usd_per_hour=usd,
                )
            )
    return offers


def _offer_product(sku: str, product: object) -> tuple[str, str, str | None, str, int] | None:
    """(instance type, region, gpu, gpu name, count) of a kept product, None if skipped."""
    where = f"products[sku {sku}]"
    attributes = _require(product, "attributes", where, dict)
    family = product.get("productFamily", "")  # type: ignore[union-attr]
    where = f"{where}.attributes"
    if "instanceType" not in attributes:
        if str(family).startswith("Compute Instance"):
            raise MalformedFile(f"{where}: missing 'instanceType'")
        return None  # storage, data transfer, IPs...: not an instance
    if family and not str(family).startswith("Compute Instance"):
        return None  # e.g. "Dedicated Host" products carry an instanceType too
    instance_type = _require(attributes, "instanceType", where)
    operating_system = _require(attributes, "operatingSystem", where)
    tenancy = _require(attributes, "tenancy", where)
    if operating_system != "Linux" or tenancy != "Shared":
        return None
    if attributes.get("preInstalledSw", "NA") != "NA":
        return None
    if attributes.get("capacitystatus", "Used") != "Used":
        return None
    if _is_capacity_block(attributes):
        return None
    gpus = instance_gpus(instance_type)  # type: ignore[arg-type]
    if gpus is None:
        count = _gpu_attribute(attributes)
        if count is None:
            return None
        family_name = str(instance_type).split(".")[0]
        gpus = (None, f"unknown ({family_name})", count)
    region = attributes.get("regionCode") or _location_region(attributes, where)
    gpu, gpu_name, count = gpus
    return str(instance_type), str(region), gpu, gpu_name, count


def _is_capacity_block(attributes: dict) -> bool:
    operation = str(attributes.get("operation", "RunInstances"))
    return (
        operation != "RunInstances"  # RunInstances:CB is a Capacity Block; :0002 is Windows...
        or attributes.get("marketoption", "OnDemand") == "CapacityBlock"
        or "CapacityBlock" in str(attributes.get("usagetype", ""))
    )


def _gpu_attribute(attributes: dict) -> int | None:
    text = str(attributes.get("gpu", "")).strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _location_region(attributes: dict, where: str) -> str:
    location = _require(attributes, "location", where)
    return LOCATION_REGIONS.get(location, location)  # type: ignore[arg-type]


def _offer_prices(sku: str, on_demand: dict, reserved: dict) -> list[tuple[str, float]]:
    prices: list[tuple[str, float]] = []
    for code, term in _sku_terms(on_demand, sku, "OnDemand").items():
        for usd in _hourly_rates(term, f"terms.OnDemand[{sku}][{code}]"):
            if usd > 0:
                prices.append(("on_demand", usd))
    for code, term in _sku_terms(reserved, sku, "Reserved").items():
        where = f"terms.Reserved[{sku}][{code}]"
        attributes = _require(term, "termAttributes", where, dict)
        lease = attributes.get("LeaseContractLength")
        if (
            lease not in _RESERVED_TYPES
            or attributes.get("PurchaseOption") != "No Upfront"
            or attributes.get("OfferingClass", "standard") != "standard"
        ):
            continue
        for usd in _hourly_rates(term, where):
            if usd > 0:
                prices.append((_RESERVED_TYPES[lease], usd))
    return prices


def _sku_terms(terms: dict, sku: str, kind: str) -> dict:
    sku_terms = terms.get(sku, {})
    if not isinstance(sku_terms, dict):
        raise MalformedFile(f"terms.{kind}[{sku}]: expected an object")
    return sku_terms


def _hourly_rates(term: object, where: str) -> list[float]:
    dimensions = _require(term, "priceDimensions", where, dict)
    rates = []
    for key, dimension in dimensions.items():
        at = f"{where}.priceDimensions[{key}]"
        unit = _require(dimension, "unit", at)
        if unit not in _HOURLY_UNITS:
            continue  # an upfront fee ("Quantity")
        per_unit = _require(dimension, "pricePerUnit", at, dict)
        usd = _require(per_unit, "USD", f"{at}.pricePerUnit")
        rates.append(_price(usd, f"{at}.pricePerUnit.USD"))
    return rates


# ---------------------------------------------------------------------------------------------
# 2. describe-spot-price-history


def _parse_spot_history(data: dict) -> list[CloudOffer]:
    rows = _require(data, "SpotPriceHistory", "spot price history", list)
    newest: dict[tuple[str, str], tuple[datetime, float]] = {}
    for index, row in enumerate(rows):  # type: ignore[arg-type]
        where = f"SpotPriceHistory[{index}]"
        zone = _require(row, "AvailabilityZone", where)
        instance_type = _require(row, "InstanceType", where)
        description = _require(row, "ProductDescription", where)
        price = _price(_require(row, "SpotPrice", where), f"{where}.SpotPrice")
        stamp = _timestamp(_require(row, "Timestamp", where), f"{where}.Timestamp")
        if description not in _SPOT_LINUX or instance_gpus(instance_type) is None:  # type: ignore[arg-type]
            continue
        key = (str(instance_type), str(zone))
        if key not in newest or stamp > newest[key][0]:
            newest[key] = (stamp, price)

    offers = []
    for (instance_type, zone), (_, price) in newest.items():
        if price <= 0:
            continue
        gpu, gpu_name, count = INSTANCE_GPUS[instance_type]
        offers.append(
            CloudOffer(
                provider=PROVIDER,
                instance_type=instance_type,
                region=_zone_region(zone),
                price_type="spot",
                gpu=gpu,
                gpu_name=gpu_name,
                gpu_count=count,
                usd_per_hour=price,
            )
        )
    return offers


def _timestamp(text: object, where: str) -> datetime:
    try:
        stamp = datetime.fromisoformat(str(text))
    except ValueError as exc:
        raise MalformedFile(f"{where}: not an ISO timestamp: {text!r:.60}") from exc
    if stamp.tzinfo is None:
        raise MalformedFile(f"{where}: timestamp without a time zone: {text!r:.60}")
    return stamp


def _zone_region(zone: str) -> str:
    """us-east-1a -> us-east-1 (the availability zone minus its letter)."""
    return re.sub(r"(?<=\d)[a-z]$", "", zone)


# ---------------------------------------------------------------------------------------------
# 3. ec2instances.info instances.json


def _parse_instances_json(data: list) -> list[CloudOffer]:
    offers = []
    for index, instance in enumerate(data):
        where = f"instances[{index}]"
        instance_type = _require(instance, "instance_type", where)
        where = f"instances[{instance_type}]"
        pricing = _require(instance, "pricing", where, dict)
        gpus = instance_gpus(instance_type)  # type: ignore[arg-type]
        if gpus is None:
            continue
        gpu, gpu_name, count = gpus
        for region, by_os in pricing.items():  # type: ignore[union-attr]
            if not isinstance(by_os, dict):
                raise MalformedFile(f"{where}.pricing[{region}]: expected an object")
            linux = by_os.get("linux")
            if linux is None:
                continue
            if not isinstance(linux, dict):
                raise MalformedFile(f"{where}.pricing[{region}].linux: expected an object")
            for price_type, usd in _instances_prices(linux, f"{where}.pricing[{region}].linux"):
                offers.append(
                    CloudOffer(
                        provider=PROVIDER,
                        instance_type=str(instance_type),
                        region=region,
                        price_type=price_type,
                        gpu=gpu,
                        gpu_name=gpu_name,
                        gpu_count=count,
                        usd_per_hour=usd,
                    )
                )
    return offers


def _instances_prices(linux: dict, where: str) -> list[tuple[str, float]]:
    found: list[tuple[str, object, str]] = [("on_demand", linux.get("ondemand"), "ondemand")]
    reserved = linux.get("reserved") or {}
    if not isinstance(reserved, dict):
        raise MalformedFile(f"{where}.reserved: expected an object")
    for price_type, key in (
        ("reserved_1y", "yrTerm1Standard.noUpfront"),
        ("reserved_3y", "yrTerm3Standard.noUpfront"),
    ):
        found.append((price_type, reserved.get(key), f"reserved.{key}"))
    # Newer instances.json files carry spot_min / spot_avg / spot_max across the region's
    # zones; spot_min is what AWS's own Spot pricing page shows (the lowest price in the
    # region). A region with only spot_avg (no current zone price) gives no spot offer.
    found.append(("spot", linux.get("spot_min"), "spot_min"))
    prices = []
    for price_type, text, key in found:
        if text in (None, "", "N/A", "NA"):
            continue  # not offered in that region
        usd = _price(text, f"{where}.{key}")
        if usd > 0:
            prices.append((price_type, usd))
    return prices
