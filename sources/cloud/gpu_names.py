"""Cloud providers' GPU names -> canonical gpu_id (sources/data/specs/gpu_specs.csv).

One function, `canonical_gpu`, serves every cloud parser: SkyPilot AcceleratorNames
("A100-80GB", "H100-MEGA"), RunPod ids and display names ("NVIDIA H100 80GB HBM3"),
Lambda instance types ("gpu_8x_a100_80gb_sxm4"), vast.ai gpu_name ("A100 SXM4",
"Q RTX 8000") and Azure armSkuNames ("Standard_ND96isr_H100_v5"). `azure_gpu` also gives
the GPU count of an Azure size, from a table.

The names themselves are read by the shared knowledge base (`sources.gpu_names`) against
the bundled spec sheet's catalog (the ingest keeps only ids of the warehouse catalog when
offers become rows), with its cloud defaults: a bare "A100" is the SXM4 40 GB part (GCP
a2-highgpu, Lambda gpu_*_a100, Azure ND96asr_v4), a bare "H100" ("H100-MEGA", "HBM3") SXM5
80 GB, a bare "V100" SXM2 16 GB, "RTX 6000" the Turing Quadro (Lambda gpu_1x_rtx6000);
memory (name or `memory_gb`) and a stated form factor override them, and a memory size no
card of the family has is no match. This module only unwraps the providers' containers
(Azure armSkuNames, Lambda instance types, SkyPilot's vast instance types). Names with no
catalog row (M60, MI25, TPUs, RTX 5050, ...) return None; callers keep the offer and
report the name.
"""

import re
from fractions import Fraction

from sources.bundled import bundled_catalog
from sources.gpu_names import AGGREGATOR_DEFAULTS, CLOUD_DEFAULTS, gpu_for_name


def _lambda_name(name: str) -> str | None:
    """'gpu_8x_a100_80gb_sxm4' -> 'A100 80GB SXM4'; None when not a Lambda name."""
    match = re.fullmatch(r"gpu_\d+x_(.+)", name.strip(), flags=re.IGNORECASE)
    if not match:
        return None
    parts = [part for part in match.group(1).split("_") if part.lower() != "n"]
    return " ".join(parts)


def _vast_instance_name(name: str) -> str | None:
    """SkyPilot's vast InstanceType '4x-RTX_4070S_Ti-32-65536' -> 'RTX 4070S Ti'."""
    match = re.fullmatch(r"\d+x-(.+)-\d+-\d+", name.strip())
    return match.group(1).replace("_", " ") if match else None


def _from_name(name: str, memory_gb: float | None) -> str | None:
    """A provider's plain GPU name, read with the cloud defaults (bare "A100" = SXM4 40 GB)."""
    if re.match(r"\s*tpu", name, re.IGNORECASE):
        return None
    return gpu_for_name(name.replace("_", " "), bundled_catalog(), CLOUD_DEFAULTS, memory_gb)


def canonical_gpu(name: str, memory_gb: float | None = None, hint: str = "") -> str | None:
    """The canonical gpu_id for a provider's GPU name, or None when unknown.

    Args:
        name: The provider's GPU name (or an Azure armSkuName / Lambda instance type).
        memory_gb: Memory per GPU in GB when the provider states it; decides variants
            (A100 40/80 GB, V100 16/32 GB, H100 NVL, RTX 6000 Turing/Ada) the name does not.
        hint: The instance type, when it names the GPU more precisely than `name`
            (Azure armSkuName, Lambda instance type, SkyPilot's vast InstanceType).

    Returns:
        A gpu_id from gpu_specs.csv, or None.
    """
    for candidate in (hint, name):
        if not candidate:
            continue
        if candidate.startswith("Standard_"):
            found = azure_gpu(candidate)
            if found is not None and found[0] is not None:
                return found[0]
            continue
        lambda_name = _lambda_name(candidate)
        if lambda_name is not None:
            return _from_name(lambda_name, memory_gb)
        vast_name = _vast_instance_name(candidate)
        if vast_name is not None:
            gpu = _from_name(vast_name, memory_gb)
            if gpu is not None:
                return gpu
            continue
        if candidate is hint:
            continue
        return _from_name(candidate, memory_gb)
    return None


# Azure GPU families: armSkuName pattern -> (gpu_id or None, {vCPU size: GPUs per VM}).
# Fractional sizes (NVads A10 v5, NVv4) are Fractions; parsers skip them.
_AZURE_FAMILIES: tuple[tuple[re.Pattern[str], str | None, dict[str, Fraction]], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), gpu, {k: Fraction(v) for k, v in sizes.items()})
    for pattern, gpu, sizes in (
        (r"Standard_NC(\d+)ads_A100_v4", "a100-pcie-80gb", {"24": 1, "48": 2, "96": 4}),
        (r"Standard_ND(\d+)asr_v4", "a100-sxm4-40gb", {"96": 8}),
        (r"Standard_ND(\d+)amsr?_A100_v4", "a100-sxm4-80gb", {"96": 8}),
        (r"Standard_NCC?(\d+)adi?s_H100_v5", "h100-nvl-94gb", {"40": 1, "80": 2}),
        (r"Standard_ND(\d+)isr?_H100_v5", "h100-sxm5-80gb", {"96": 8}),
        (r"Standard_ND(\d+)isr?_H200_v5", "h200-sxm", {"96": 8}),
        (r"Standard_ND(\d+)isr?_MI300X_v5", "mi300x", {"96": 8}),
        (r"Standard_NC(\d+)as_T4_v3", "t4", {"4": 1, "8": 1, "16": 1, "64": 4}),
        (r"Standard_NC(\d+)r?s_v3", "v100-pcie-16gb", {"6": 1, "12": 2, "24": 4}),
        (r"Standard_ND(\d+)rs_v2", "v100-sxm2-32gb", {"40": 8}),
        (r"Standard_NC(\d+)ads_A10_v4", "a10", {"8": 1, "16": 1, "32": 2}),
        (
            r"Standard_NV(\d+)adm?s_A10_v5",
            "a10",
            {"6": "1/6", "12": "1/3", "18": "1/2", "36": 1, "72": 2},
        ),
        (
            r"Standard_NC(\d+)l?ds_xl_RTXPRO6000BSE_v6",
            "rtx-pro-6000-blackwell",
            {"144": 1, "288": 2},
        ),
        (r"Standard_NV(\d+)s_v3", None, {"12": 1, "24": 2, "48": 4}),  # Tesla M60
        (r"Standard_NV(\d+)as_v4", None, {"4": "1/8", "8": "1/4", "16": "1/2", "32": 1}),  # MI25
    )
)


def azure_gpu(arm_sku_name: str) -> tuple[str | None, Fraction | None] | None:
    """The GPU and GPUs per VM of an Azure size.

    Args:
        arm_sku_name: e.g. "Standard_ND96isr_H100_v5".

    Returns:
        None when the size is not a known GPU family (CPU sizes); else (gpu_id or None for
        GPUs with no gpu_specs row, GPU count or None when the family is known but the size
        is not in the table). Counts below 1 are fractional-GPU sizes.
    """
    for pattern, gpu, sizes in _AZURE_FAMILIES:
        match = pattern.fullmatch(arm_sku_name.strip())
        if match:
            return gpu, sizes.get(match.group(1))
    return None


def aggregator_gpu(name: str, memory_gb: float | None = None) -> str | None:
    """The gpu_id for an aggregator's GPU name, or None when the name does not pin one.

    Aggregators list every provider's cards under one name, so a family sold in several
    variants (A100, H100, H200, V100 ...) needs the name or memory to pin one: read with
    `AGGREGATOR_DEFAULTS`, where those families have no default.
    """
    return gpu_for_name(name, bundled_catalog(), AGGREGATOR_DEFAULTS, memory_gb)
