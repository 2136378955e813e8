"""SkyPilot catalog `vms.csv` (AWS, Azure, GCP, Lambda, vast... in one format).

Columns: InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo,
Price, SpotPrice, Region, [AvailabilityZone], [Generation]. Required: InstanceType,
AcceleratorName, AcceleratorCount, Price, Region. GpuInfo is JSON or a Python-dict string
with single quotes (read with `ast.literal_eval`, which evaluates literals only); the
Azure catalog puts a bare name there. Azure rows may carry an unquoted "V1,V2" Generation,
i.e. one field more than the header: extra fields are ignored.

- One on_demand offer per row with Price > 0, one spot offer per row with SpotPrice > 0.
- Rows without an AcceleratorName are skipped (CPU types, GCP's GPU-bundled machine types
  whose Price is host-only: their GPUs are the per-GPU rows).
- GCP per-GPU rows (InstanceType empty) give "<AcceleratorCount>x <AcceleratorName>" as
  instance_type ("8x H100", "8x H100-MEGA": two accelerators of one canonical GPU, or one
  at two counts, stay distinct offers); Price is for AcceleratorCount GPUs attached, so
  usd_per_gpu_hour divides by the count.
- TPU rows (AcceleratorName "tpu-...") are skipped: not GPUs, priced per pod slice.
- Fractional-GPU rows (Azure AcceleratorCount 0.167 ...) are skipped: gpu_count is an int.
- Memory per GPU comes from GpuInfo (Gpus[0].MemoryInfo.SizeInMiB); SkyPilot's vast
  catalog (InstanceType like "4x-RTX_4060_Ti-32-65536") stores the total over all GPUs
  there, so it is divided by the count; its InstanceType also names the GPU more precisely
  ("RTX_4070S_Ti") than AcceleratorName ("RTX4070") and is passed as the hint, as are Azure
  armSkuNames and Lambda instance types.
- Nebius' catalog puts the instance's RAM in GpuInfo's SizeInMiB (204800 for a 1-GPU H100
  with 200 GB RAM), so memory is not read for provider "nebius"; its instance type names
  the part ("gpu-h100-sxm_...").
- Alibaba Cloud's catalog (provider "alicloud") puts "<name> <N>GB" in GpuInfo (e.g. "V100
  32GB"): a bare GpuInfo ending in a GB figure gives memory per GPU. Its vGPU slices name a
  fraction ("A10*1/12", "T4/8") and match no catalog GPU, so they are unknown, not A10s.
- AWS/GCP rows repeat per availability zone (AvailabilityZone): one offer per region, at
  the cheapest of its zones (a spot price differs by zone; anyone renting in the region
  can pick the zone). Rows repeating one zone, or without the column, are left as they
  are: two prices for one offer are a conflicting duplicate, refused by integrity
  (sources/cloud/integrity.py), never resolved here.
"""

import ast
import csv
import io
import json
import math
import re

from sources.cloud.gpu_names import canonical_gpu
from sources.cloud.records import MAX_GPU_COUNT, CloudOffer, MalformedFile

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
_VAST_TYPE = re.compile(r"\d+x-.+-\d+-\d+")
_BARE_MEMORY = re.compile(r".*\s(\d+(?:\.\d+)?)\s*GB", re.IGNORECASE)
# Catalogs whose GpuInfo memory is not GPU memory (see the module docstring).
_NO_GPU_MEMORY = frozenset({"nebius"})


def _gpu_info(text: str) -> dict | None:
    text = text.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
    return value if isinstance(value, dict) else None


def _memory_gib(info: dict | None, text: str = "") -> float | None:
    if not info:
        bare = _BARE_MEMORY.fullmatch(text.strip())
        return float(bare.group(1)) or None if bare else None
    try:
        mib = info["Gpus"][0]["MemoryInfo"]["SizeInMiB"]
    except (KeyError, IndexError, TypeError):
        return None
    return float(mib) / 1024 if isinstance(mib, int | float) and mib > 0 else None


def _price(value: str | None, where: str) -> float | None:
    if value is None or not value.strip():
        return None
    try:
        price = float(value)
    except ValueError as exc:
        raise MalformedFile(f"{where}: {value!r:.40} is not a number") from exc
    if not math.isfinite(price) or price < 0:
        raise MalformedFile(f"{where}: {value!r:.40} is not a price")
    return price if price > 0 else None


def parse_skypilot(content: bytes, provider: str | None = None) -> list[CloudOffer]:
    """Parse a SkyPilot catalog vms.csv into offers.

    Args:
        content: The CSV bytes (UTF-8).
        provider: The catalog's cloud ("azure", "gcp", "lambda", "vast"...), stored on
            every offer; default "skypilot".

    Returns:
        On-demand and spot offers (see the module docstring).

    Raises:
        MalformedFile: Not UTF-8 text, a missing column, or a non-numeric price or count.
    """
    provider = provider or "skypilot"
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedFile(f"vms.csv: not UTF-8 text: {exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    columns = reader.fieldnames or []
    for column in REQUIRED_COLUMNS:
        if column not in columns:
            raise MalformedFile(f"vms.csv: missing column {column!r}")
    offers: list[tuple[str, CloudOffer]] = []
    for row in reader:
        where = f"vms.csv line {reader.line_num}"
        name = (row["AcceleratorName"] or "").strip()
        if not name or name.lower().startswith("tpu"):
            continue
        try:
            count = float(row["AcceleratorCount"] or "")
        except ValueError as exc:
            raise MalformedFile(
                f"{where}: AcceleratorCount {row['AcceleratorCount']!r} is not a number"
            ) from exc
        if not math.isfinite(count) or count > MAX_GPU_COUNT:
            raise MalformedFile(f"{where}: AcceleratorCount {row['AcceleratorCount']!r:.40}")
        if count < 1 or count != int(count):
            continue
        instance = (row["InstanceType"] or "").strip()
        gpu_info = row.get("GpuInfo") or ""
        memory = None if provider in _NO_GPU_MEMORY else _memory_gib(_gpu_info(gpu_info), gpu_info)
        if memory is not None and _VAST_TYPE.fullmatch(instance):
            memory /= count
        base = {
            "provider": provider,
            "instance_type": instance or f"{int(count)}x {name}",
            "region": (row["Region"] or "").strip() or None,
            "gpu": canonical_gpu(name, memory, hint=instance),
            "gpu_name": name,
            "gpu_count": int(count),
        }
        offers += _row_offers(row, base, where)
    return _cheapest_zone(offers)


def _row_offers(row: dict, base: dict, where: str) -> list[tuple[str, CloudOffer]]:
    """A row's on-demand and spot offers, each with the row's availability zone."""
    zone = (row.get("AvailabilityZone") or "").strip()
    found = []
    for price_type, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
        price = _price(row.get(column), f"{where}: {column}")
        if price is not None:
            found.append((zone, CloudOffer(price_type=price_type, usd_per_hour=price, **base)))
    return found


def _cheapest_zone(offers: list[tuple[str, CloudOffer]]) -> list[CloudOffer]:
    """One offer per region where rows differ only by zone: the cheapest zone's.

    An offer repeated without zones, or in one zone, is kept as often as it is written.
    """
    zones: dict[tuple, dict[str, CloudOffer]] = {}
    kept: list[CloudOffer] = []
    for zone, offer in offers:
        if not zone:
            kept.append(offer)
            continue
        key = (offer.instance_type, offer.region, offer.gpu_name, offer.gpu_count)
        by_zone = zones.setdefault((*key, offer.price_type), {})
        if zone in by_zone:
            kept.append(offer)  # the same zone twice: integrity decides
            continue
        by_zone[zone] = offer
    kept += [min(z.values(), key=lambda o: o.usd_per_hour) for z in zones.values()]
    return kept
