"""Cloud providers' GPU names -> canonical gpu_id (sources/data/specs/gpu_specs.csv).

One function, `canonical_gpu`, serves every cloud parser: SkyPilot AcceleratorNames
("A100-80GB", "H100-MEGA"), RunPod ids and display names ("NVIDIA H100 80GB HBM3"),
Lambda instance types ("gpu_8x_a100_80gb_sxm4"), vast.ai gpu_name ("A100 SXM4",
"Q RTX 8000") and Azure armSkuNames ("Standard_ND96isr_H100_v5"). `azure_gpu` also gives
the GPU count of an Azure size, from a table.

Variant decisions (the name alone is ambiguous):
- Bare "A100" is the SXM4 40 GB part (GCP a2-highgpu, Lambda gpu_*_a100, Azure
  ND96asr_v4); 80 GB when the name or `memory_gb` (>= 60) says so; PCIe only when named.
- Bare "H100" (and "H100-MEGA", "HBM3", "SXM") is H100 SXM5 80 GB; "PCIe" -> PCIe,
  "NVL" or >= 90 GB -> H100 NVL. Azure's NC H100 v5 is NVL (from the armSkuName).
- Bare "V100" is SXM2 16 GB (GCP, Lambda); 32 GB by name or memory; PCIe/FHHL when named
  (Azure NCv3 is PCIe, from the armSkuName).
- "RTX 6000" alone is the Turing Quadro RTX 6000 (Lambda gpu_1x_rtx6000, 24 GB) unless
  "Ada" is named or memory >= 40 GB; "RTX PRO 6000" (any edition) is rtx-pro-6000-blackwell.
- Names with no row in gpu_specs.csv (M60, MI25, P100, P4, A2000, RTX 5000 Ada, TPUs,
  RTX 3070 Ti, 4090 D, ...) return None; callers keep the offer and report the name.
"""

import re
from fractions import Fraction

# Words that carry no model information.
_NOISE = re.compile(r"\b(NVIDIA|GEFORCE|TESLA|AMD|INSTINCT|RADEON|GENERATION|OAM|HBM3E?)\b")


def _memory_from_name(text: str) -> float | None:
    match = re.search(r"(\d+)\s*GB", text)
    return float(match.group(1)) if match else None


def _tokens(name: str) -> str:
    """Upper-case, vendor words removed, separators collapsed to single spaces."""
    text = re.sub(r"[^A-Z0-9]+", " ", name.upper())
    text = _NOISE.sub(" ", text)
    return " ".join(text.split())


# GeForce and workstation models: "<series><number>[ TI][ SUPER]" -> gpu_id.
_GEFORCE = {
    "2060": "rtx-2060",
    "2070": "rtx-2070",
    "2080": "rtx-2080",
    "2080 TI": "rtx-2080-ti",
    "3060": "rtx-3060-12gb",
    "3070": "rtx-3070",
    "3080": "rtx-3080-10gb",
    "3080 TI": "rtx-3080-ti",
    "3090": "rtx-3090",
    "3090 TI": "rtx-3090-ti",
    "4060 TI": "rtx-4060-ti-16gb",
    "4070": "rtx-4070",
    "4070 TI": "rtx-4070-ti",
    "4070 TI SUPER": "rtx-4070-ti-super",
    "4080": "rtx-4080",
    "4080 SUPER": "rtx-4080-super",
    "4090": "rtx-4090",
    "5070": "rtx-5070",
    "5070 TI": "rtx-5070-ti",
    "5080": "rtx-5080",
    "5090": "rtx-5090",
}
# Minimum / maximum memory (GB) for GeForce ids that name one memory variant.
_GEFORCE_MEMORY = {
    "rtx-3060-12gb": (11, 13),
    "rtx-3080-10gb": (9, 11),
    "rtx-4060-ti-16gb": (15, 17),
}
_RTX_A = {"4000": "rtx-a4000", "4500": "rtx-a4500", "5000": "rtx-a5000", "5500": "rtx-a5500"}
_RTX_A["6000"] = "rtx-a6000"
_QUADRO = {"5000": "quadro-rtx-5000", "6000": "quadro-rtx-6000", "8000": "quadro-rtx-8000"}
_SIMPLE = {
    "T4": "t4",
    "L4": "l4",
    "L40": "l40",
    "L40S": "l40s",
    "A10": "a10",
    "A10G": "a10g",
    "A30": "a30",
    "A40": "a40",
    "GH200": "gh200-96gb",
    "B200": "b200",
    "MI250": "mi250",
    "MI300X": "mi300x",
    "MI325X": "mi325x",
    "TITAN RTX": "titan-rtx",
    "RX 7900 XTX": "rx-7900-xtx",
    "7900 XTX": "rx-7900-xtx",
}


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


def _from_tokens(text: str, memory_gb: float | None) -> str | None:
    """Map a normalized name (see `_tokens`) to a gpu_id."""
    if not text:
        return None
    memory = _memory_from_name(text) or memory_gb
    words = text.split()
    compact = text.replace(" ", "")

    if text in _SIMPLE:
        return _SIMPLE[text]
    if compact.startswith("TPU") or compact.startswith("TPUV"):
        return None
    if "GH200" in compact:
        return "gh200-96gb"
    if compact.startswith("B200"):
        return "b200"
    if compact.startswith("H200"):
        return "h200-nvl" if "NVL" in words else "h200-sxm"
    if compact.startswith("H100"):
        if "NVL" in words or compact.endswith("NVL") or (memory is not None and memory >= 90):
            return "h100-nvl-94gb"
        if "PCIE" in compact:
            return "h100-pcie-80gb"
        return "h100-sxm5-80gb"
    if compact.startswith("A100"):
        size = "80gb" if memory is not None and memory >= 60 else "40gb"
        form = "pcie" if "PCIE" in compact else "sxm4"
        return f"a100-{form}-{size}"
    if compact.startswith("V100"):
        if memory is not None and memory >= 30:
            return "v100-sxm2-32gb"
        if "PCIE" in compact or "FHHL" in compact:
            return "v100-pcie-16gb"
        return "v100-sxm2-16gb"
    if re.fullmatch(r"(RTX)?PRO6000.*", compact):
        return "rtx-pro-6000-blackwell"
    match = re.fullmatch(r"(?:Q|QUADRO)?RTX(5000|6000|8000)(ADA)?", compact)
    if match:
        number, ada = match.groups()
        if number == "6000" and (ada or (memory is not None and memory >= 40)):
            return "rtx-6000-ada"
        return None if ada else _QUADRO[number]
    match = re.fullmatch(r"(?:RTX)?A(4000|4500|5000|5500|6000)", compact)
    if match:
        return _RTX_A[match.group(1)]
    match = re.fullmatch(r"RTX(\d{4})(S)?(TI)?(S|SUPER)?(\d+GB)?", compact)
    if match:
        number, super_before, ti, super_after, _ = match.groups()
        key = number + (" TI" if ti else "") + (" SUPER" if super_before or super_after else "")
        gpu = _GEFORCE.get(key)
        bounds = _GEFORCE_MEMORY.get(gpu or "")
        if gpu and bounds and memory is not None and not bounds[0] <= memory <= bounds[1]:
            return None
        return gpu
    return _SIMPLE.get(compact)


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
            return _from_tokens(_tokens(lambda_name), memory_gb)
        vast_name = _vast_instance_name(candidate)
        if vast_name is not None:
            gpu = _from_tokens(_tokens(vast_name), memory_gb)
            if gpu is not None:
                return gpu
            continue
        if candidate is hint:
            continue
        return _from_tokens(_tokens(candidate), memory_gb)
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


# Families sold in several form factors (SXM, PCIe, NVL) or memory sizes: canonical_gpu picks
# the common variant for a bare name, which is right for a provider's own catalog (its
# instance types fix the variant) but a guess for an aggregator's bare "A100" or "H100".
_FORM_FACTOR_FAMILIES = re.compile(r"^(A100|H100|H200|V100)")
_FORM_FACTORS = re.compile(r"SXM|PCIE|NVL")


def aggregator_gpu(name: str, memory_gb: float | None = None) -> str | None:
    """The gpu_id for an aggregator's GPU name, or None when the name does not pin one.

    A100 / H100 / H200 / V100 need the form factor in the name ("H100 80GB SXM5"); for
    the A100 and V100 the memory too. Other names map as `canonical_gpu` maps them.
    """
    compact = re.sub(r"[\s_-]", "", name.upper())
    family = _FORM_FACTOR_FAMILIES.match(compact)
    if family:
        if not _FORM_FACTORS.search(compact):
            return None
        if family.group(1) in ("A100", "V100") and memory_gb is None:
            return None
    return canonical_gpu(name, memory_gb)
