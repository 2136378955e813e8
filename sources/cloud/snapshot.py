"""Bundled cloud facts rendered back into the providers' own formats, and read by the parsers.

The bundled snapshot (`sources/data/cloud/<provider>.csv`) holds facts transcribed from
captured catalogs. Rendering them as the kind of document they came from (an
ec2instances.info `instances.json` for AWS, a SkyPilot `vms.csv` for Azure, GCP, Lambda,
vast.ai, and for CoreWeave and Hyperstack, which publish no machine-readable list) and
parsing that with the live-mode parser checks that every fact is what our own parser would
make of it: the same GPU, GPU count, region, price
type and price. A curated row the parser would read differently is a transcription or
mapping error.

RunPod is not rendered: its facts name the instance by our gpu_id ("<gpu_id> secure"), and
a RunPod `gpuTypes` document names GPUs by RunPod's ids, which the facts do not keep.
Only what the parser reads is rendered (no vCPU, RAM or disk columns): these are not
replicas of the sources, just the facts in the parsers' input format.
"""

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from sources.cloud.aws import parse_aws
from sources.cloud.records import CloudOffer, offers_frame
from sources.cloud.skypilot import _VAST_TYPE, parse_skypilot
from sources.tables import BadInputError

# SkyPilot accelerator names of the GPUs on GCP machine types, by machine family, as the GCP
# catalog writes them (first match wins). Taken from the machine type, not from the fact's
# gpu_id, so a fact with the wrong GPU for its machine type is caught.
GCP_MACHINE_ACCELERATORS = (
    ("a2-ultragpu-", "A100-80GB"),
    ("a2-", "A100"),
    ("a3-ultragpu-", "H200"),
    ("a3-", "H100"),
    ("g2-", "L4"),
)
# CoreWeave and Hyperstack publish no machine-readable price list that we read; their facts
# (from their pricing pages) are rendered as SkyPilot vms.csv, the common catalog format.
SKYPILOT_PROVIDERS = ("azure", "gcp", "lambda", "vast", "coreweave", "hyperstack")
RENDERED = ("aws", *SKYPILOT_PROVIDERS)
_SPOT_KEY = "spot_min"
_RESERVED_KEYS = {
    "reserved_1y": "yrTerm1Standard.noUpfront",
    "reserved_3y": "yrTerm3Standard.noUpfront",
}


def render_instances_json(facts: pl.DataFrame) -> bytes:
    """AWS facts as an ec2instances.info instances.json (Linux prices per region)."""
    instances: dict[str, dict] = {}
    for row in facts.sort("instance_type", "region", "price_type").iter_rows(named=True):
        pricing = instances.setdefault(row["instance_type"], {})
        linux = pricing.setdefault(row["region"], {"linux": {"reserved": {}}})["linux"]
        price = repr(row["usd_per_hour"])
        if row["price_type"] == "on_demand":
            linux["ondemand"] = price
        elif row["price_type"] == "spot":
            linux[_SPOT_KEY] = price
        else:
            linux["reserved"][_RESERVED_KEYS[row["price_type"]]] = price
    document = [
        {"instance_type": name, "family": "GPU instance", "pricing": pricing}
        for name, pricing in instances.items()
    ]
    return json.dumps(document, indent=1).encode()


def render_skypilot(facts: pl.DataFrame, provider: str, memory_gb: Mapping[str, float]) -> bytes:
    """Facts of a SkyPilot-format provider as a SkyPilot vms.csv, one row per instance.

    `memory_gb` (gpu_id -> memory per GPU) fills GpuInfo, which the parser reads to tell
    A100 40 GB from 80 GB on vast.ai; SkyPilot's vast catalog stores the total there.
    """
    out = io.StringIO()
    columns = ("InstanceType", "AcceleratorName", "AcceleratorCount", "GpuInfo", "Price")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow((*columns, "SpotPrice", "Region"))
    keys = ["instance_type", "region", "gpu_id", "gpu_count"]
    for key, group in facts.sort(keys).group_by(keys, maintain_order=True):
        instance, region, gpu, count = key
        prices = dict(zip(group["price_type"], group["usd_per_hour"], strict=True))
        mib = round(memory_gb[gpu] * 1024) * (count if _VAST_TYPE.fullmatch(instance) else 1)
        name = _gcp_accelerator(instance) if provider == "gcp" else gpu
        info = {"Gpus": [{"Name": name, "Count": count, "MemoryInfo": {"SizeInMiB": mib}}]}
        writer.writerow(
            (
                instance,
                name,
                count,
                json.dumps(info),
                repr(prices.get("on_demand", 0.0)),
                repr(prices["spot"]) if "spot" in prices else "",
                region,
            )
        )
    return out.getvalue().encode()


def _gcp_accelerator(machine_type: str) -> str:
    for prefix, name in GCP_MACHINE_ACCELERATORS:
        if machine_type.startswith(prefix):
            return name
    raise ValueError(f"gcp: no accelerator known for machine type {machine_type!r}")


def render(provider: str, facts: pl.DataFrame, memory_gb: Mapping[str, float]) -> bytes:
    """One provider's facts (one observation day and citation) in its parser's format."""
    if provider == "aws":
        return render_instances_json(facts)
    if provider in SKYPILOT_PROVIDERS:
        return render_skypilot(facts, provider, memory_gb)
    raise ValueError(f"{provider}: facts are not rendered (only {', '.join(RENDERED)})")


def parse_rendered(provider: str, content: bytes) -> list[CloudOffer]:
    """Parse a rendered document with the live-mode parser of its format."""
    if provider == "aws":
        return parse_aws(content)
    return parse_skypilot(content, provider)


def replay(
    provider: str, facts: pl.DataFrame, memory_gb: Mapping[str, float]
) -> tuple[pl.DataFrame, dict[str, int]]:
    """Facts -> rendered documents -> parser -> `cloud_offers` rows (and unknown GPU names).

    Facts are rendered per observation day and citation, so each row keeps its own date and
    source.
    """
    frames, unknown = [], {}
    known = frozenset(memory_gb)
    for (observed_at, citation), group in facts.group_by(
        ["observed_at", "citation"], maintain_order=True
    ):
        offers = parse_rendered(provider, render(provider, group, memory_gb))
        rows, missing = offers_frame(offers, observed_at, citation, known)
        frames.append(rows)
        for name, count in missing.items():
            unknown[name] = unknown.get(name, 0) + count
    return pl.concat(frames), unknown


FACT_COLUMNS = (
    "observed_at",
    "provider",
    "instance_type",
    "region",
    "price_type",
    "gpu_id",
    "gpu_count",
    "usd_per_hour",
    "citation",
)


def replay_bundled(
    provider: str, facts: pl.DataFrame, memory_gb: Mapping[str, float], source: str | Path
) -> pl.DataFrame:
    """The bundled facts as the parser reads them; raises when it reads any fact differently.

    Args:
        provider: One of `RENDERED`.
        facts: The provider's validated bundled rows; with a `_line` column (the file line
            of each fact, `read_cloud_offers(..., line_column="_line")`) the error names it.
        memory_gb: gpu_id -> memory per GPU (the catalog).
        source: The file (or its name), for the error message.

    Returns:
        The parsed rows (`cloud_offers` columns), equal to the facts.

    Raises:
        BadInputError: A fact the parser does not reproduce (or an extra offer), named
            with its file line when `facts` has one (a ValueError).
    """
    rows, unknown = replay(provider, facts.drop("_line", strict=False), memory_gb)
    key = list(FACT_COLUMNS)
    ours = set(facts.select(key).iter_rows())
    theirs = set(rows.select(key).iter_rows())
    if unknown or ours != theirs:
        missing = sorted(ours - theirs, key=repr)[:1]
        detail = missing or sorted(theirs - ours, key=repr)[:1]
        line = 0
        if missing and "_line" in facts.columns:
            first = dict(zip(key, missing[0], strict=True))
            match = facts.filter(*(pl.col(k) == v for k, v in first.items() if v is not None))
            line = int(match["_line"][0]) if match.height else 0
        raise BadInputError(
            source,
            line,
            "(replay)",
            f"the {provider} parser does not read the bundled facts as written "
            f"(unknown GPU names {sorted(unknown)}; first differing row {detail})",
        )
    return rows
