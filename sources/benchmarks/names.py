"""Benchmark sources' GPU, system and model names -> canonical ids and workload classes.

GPU names come as Lambda row labels ("LambdaCloud 8x H100 80GB SXM5", "Dell 2x H100 80GB
SXM5", "RTX Quadro 8000", "ASUS_8xH200_140GB_SXM_lambda-scalar_v2"), NVIDIA README headings
("NVIDIA DGX A100 (8x A100 80GB)", "DGX-2 (16x V100 32G)", "NVIDIA T4") and MLPerf
accelerator names ("NVIDIA A100-SXM4-80GB (400W)", "AMD Instinct MI300X-NPS1-SPX-192GB-750W").
The shared GPU-name knowledge base (`sources.gpu_names`) reads the GPU, with the same
defaults as a provider's own names (a bare "A100" is SXM4 40 GB, DGX-1's "V100" SXM2);
this module strips what benchmark names add around the GPU (vendors, clouds, GPU counts,
NVLink, power limits). Names with no catalog row (TPU, Gaudi, laptop Max-Q, "H100-SXM5-
96GB", ...) map to None and are reported as unknown, never guessed.
"""

import functools
import re

from sources.bundled import DATA_DIR, bundled_catalog, read_gpu_specs
from sources.gpu_names import CLOUD_DEFAULTS, gpu_for_name, laptop_part

# System/vendor/cloud words around the GPU name in Lambda row labels and MLPerf names.
_PREFIX = re.compile(
    r"^(?:lambda\s*cloud|lambdacloud|lambda\s*od|lambdaod|lambdabm|linode\s*cloud|dell(?:texas)?"
    r"|smc|1cc|raidz1|asus|lennovo|lenovo|aws)\b[\s\-—–_:]*",
    re.IGNORECASE,
)
_COUNT = re.compile(r"(?:^|[\s_\-])(\d+)\s*x\s*(?=[A-Za-z])", re.IGNORECASE)
_GPU_IN_PARENS = re.compile(r"\((?:\s*\d+\s*x\s*)?([^()]*\d[^()]*)\)")


def clean_gpu_name(name: str) -> str:
    """The GPU part of a benchmark's system label: no vendor/cloud words, counts or NVLink."""
    text = name.replace("—", " ").replace("–", " ").strip()
    previous = None
    while previous != text:
        previous = text
        text = _PREFIX.sub("", text).strip()
    # Lambda v2 machine directories: "<vendor>_<Nx>_<site>_<Nx><GPU>_<mem>_<form>_<host>_v2".
    match = re.search(r"(?:^|_)\d+x((?:[A-Z]+\d+[A-Z]*)(?:_\d+GB)?(?:_(?:SXM\d?|PCIe|NVL))?)", text)
    if "_" in text and match:
        text = match.group(1).replace("_", " ")
    text = re.sub(r"^\d+\s*x\s*", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\bNVLink\b|\bV1\b|\bGen\s*5\b|\(\d+\s*W\)|\b\d+\s*W\b", " ", text, flags=re.I)
    text = re.sub(r"\bRTX\s+Quadro\b", "Quadro RTX", text, flags=re.IGNORECASE)
    text = re.sub(r"\bRTX\s+(A\d0)\b", r"\1", text)  # Lambda's "RTX A40" is the A40
    text = re.sub(r"\b(\d+)\s*G\b", r"\1GB", text)  # NVIDIA's "32G"
    return " ".join(text.split())


def gpu_id_for(name: str, known: frozenset[str] | None = None) -> str | None:
    """The canonical gpu_id for a benchmark GPU or system name, or None when unknown.

    Args:
        name: The source's label (row name, heading, accelerator name).
        known: The catalog's ids; an id outside it counts as unknown.
    """
    if not name or laptop_part(name) or re.search(r"\(x\d+\)", name):
        return None  # laptop parts; MLPerf systems mixing two accelerators "(x32), ... (x16)"
    text = clean_gpu_name(name)
    inner = re.search(r"\(([^()]*[A-Z]+\d+[^()]*)\)", text)
    if inner and re.search(r"\bBlackwell|\bGPU\b", text, re.IGNORECASE):
        text = inner.group(1)  # MLPerf "NVIDIA Blackwell GPU (B200-SXM-180GB)"
    if re.search(r"\bTPU|\bGaudi|\bIPU\b|\bAscend", text, re.IGNORECASE):
        return None  # not GPUs
    # MLPerf writes "A100-SXM4-80GB", "MI300X-NPS1-SPX-192GB-750W": the knowledge base reads
    # memory and form factor from them; a memory no card of the family has is no match.
    gpu = gpu_for_name(text, bundled_catalog(), CLOUD_DEFAULTS)
    if gpu is not None and known is not None and gpu not in known:
        return None
    return gpu


def system_gpu_id(heading: str, known: frozenset[str] | None = None) -> str | None:
    """The GPU of an NVIDIA README system heading ("NVIDIA DGX-1 (8x V100 16GB)", "T4").

    DGX systems name their GPU in parentheses; without them, DGX-1 is V100 16 GB (32 GB when
    the heading says 32G), DGX-2 is V100 32 GB (SXM3, mapped to the SXM2 32 GB row, the only
    V100 32 GB id) and DGX A100 is A100 40 GB unless 80GB is named.
    """
    for inner in _GPU_IN_PARENS.findall(heading):
        gpu = gpu_id_for(inner, known)
        if gpu is not None:
            return gpu
    upper = heading.upper()
    big = re.search(r"\b(32|80)\s*G", upper) is not None
    if "DGX-1" in upper or "DGX1" in upper:
        guess = "v100-sxm2-32gb" if big else "v100-sxm2-16gb"
    elif "DGX-2" in upper:
        guess = "v100-sxm2-32gb"
    elif "DGX A100" in upper:
        guess = "a100-sxm4-80gb" if big else "a100-sxm4-40gb"
    elif "DGX H100" in upper:
        guess = "h100-sxm5-80gb"
    else:
        match = re.search(
            r"\b(?:NVIDIA\s+)?((?:[AHLTV]\d{1,3}[A-Z]?|RTX\s*\w+)(?:[\s-]+(?:SXM\d?|PCIe))?"
            r"(?:[\s-]+\d+\s*GB?)?)\b",
            heading,
            re.IGNORECASE,
        )
        return gpu_id_for(match.group(1), known) if match else None
    return guess if known is None or guess in known else None


def gpu_count_in(label: str) -> int | None:
    """The GPU count a system label states ("8x H100", "LambdaOD_8x_Texas_2xH100..." -> 2)."""
    counts = _COUNT.findall(label.replace("—", " "))
    return int(counts[-1]) if counts else None


# Model families: (pattern on the source's model name, model slug, workload class, unit).
# Only models of the classes the model debiases (cnn, transformer, rnn) are kept; others
# (NCF, DLRM, GNNs, reinforcement learning) are skipped and counted by the adapters.
_MODELS: tuple[tuple[re.Pattern[str], str | None, str, str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), slug, workload, unit)
    for pattern, slug, workload, unit in (
        (r"^(?:resnet[-_ ]?50|rn50|resnet50v1\.5|resnet)$", "resnet50", "cnn", "images/s"),
        (r"^resnet[-_ ]?152$", "resnet152", "cnn", "images/s"),
        (r"^(?:resnext[-_ ]?101.*)$", "resnext101", "cnn", "images/s"),
        (r"^(?:se[-_ ]?resnext[-_ ]?101.*)$", "se_resnext101", "cnn", "images/s"),
        (r"^(?:alexnet|vgg16|inception[34])$", None, "cnn", "images/s"),
        (r"^(?:ssd.*|retinanet)$", None, "cnn", "images/s"),
        (r"^(?:mask[-_ ]?rcnn)$", "maskrcnn", "cnn", "images/s"),
        (r"^(?:3d[-_ ]?unet.*|unet3d)$", "unet3d", "cnn", "samples/s"),
        (r"^waveglow$", "waveglow", "cnn", "items/s"),
        (r"^tacotron2?$", "tacotron2", "rnn", "items/s"),
        (r"^gnmt.*$", "gnmt", "rnn", "tokens/s"),
        (r"^rnn[-_ ]?t$", "rnnt", "rnn", "samples/s"),
        (r"^bert[-_ ]?base.*$", None, "transformer", "sequences/s"),
        (r"^bert.*$", None, "transformer", "sequences/s"),
        (r"^transformer[-_ ]?xl[-_ ]?(base|large)?$", None, "transformer", "tokens/s"),
        (r"^transformerxl(base|large)$", None, "transformer", "tokens/s"),
        (r"^(?:gpt.*|llama.*|mixtral.*|deepseek.*|whisper.*)$", None, "transformer", "tokens/s"),
        (r"^stable[-_ ]?diffusion.*$", None, "transformer", "samples/s"),
        (r"^efficient(?:net|det).*$", None, "cnn", "images/s"),
        (r"^(?:nnu-?net|unet.*|u-net.*|hifi-?gan.*|jasper|quartznet)$", None, "cnn", "items/s"),
        (
            r"^(?:electra.*|fastpitch.*|transformer|t5.*|roberta.*|bart.*)$",
            None,
            "transformer",
            "sequences/s",
        ),
    )
)


def model_info(name: str) -> tuple[str, str, str] | None:
    """(model slug, workload class, default unit) for a source's model name, else None."""
    raw = name.strip()
    for pattern, slug, workload, unit in _MODELS:
        match = pattern.match(raw)
        if match:
            if slug is None:
                slug = re.sub(r"[^a-z0-9.]+", "_", raw.lower()).strip("_")
                slug = re.sub(r"^transformerxl(base|large)$", r"transformerxl_\1", slug)
            return slug, workload, unit
    return None


# Architectures without TF32: a framework's "FP32" run is FP32 on them, TF32 after (NGC).
_NO_TF32 = frozenset({"kepler", "maxwell", "pascal", "volta", "turing"})


@functools.cache
def _architectures() -> dict[str, str]:
    """gpu_id -> architecture, from the spec sheet (the one place it is written)."""
    specs = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")
    return dict(zip(specs["gpu_id"].to_list(), specs["architecture"].to_list(), strict=True))


def fp32_precision(gpu: str | None) -> str:
    """'fp32' before Ampere (Pascal, Volta, Turing), 'tf32' on Ampere and newer, as published."""
    return "fp32" if gpu is None or _architectures().get(gpu) in _NO_TF32 else "tf32"


_UNITS = {
    "img/s": "images/s",
    "images/s": "images/s",
    "images/sec": "images/s",
    "img/sec": "images/s",
    "sequences/s": "sequences/s",
    "sequences/sec": "sequences/s",
    "seq/s": "sequences/s",
    "seq/sec": "sequences/s",
    "sent/s": "sequences/s",
    "sent/sec": "sequences/s",
    "sentences/s": "sequences/s",
    "sentences/sec": "sequences/s",
    "tokens/s": "tokens/s",
    "tokens/sec": "tokens/s",
    "tok/s": "tokens/s",
    "samples/s": "samples/s",
    "samples/sec": "samples/s",
    "queries/s": "queries/s",
    "mels/s": "items/s",
    "mels/sec": "items/s",
    "items/s": "items/s",
}


def normalize_unit(text: str) -> str | None:
    """'img/s', 'sent/sec', 'Samples/s' ... -> the project's unit, or None when unknown."""
    return _UNITS.get(re.sub(r"\s+", "", text.lower()).replace("per", "/"))
