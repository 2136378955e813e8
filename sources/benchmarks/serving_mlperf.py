"""MLPerf Inference summaries -> rows of the serving file (`serving.csv`), pure.

Two summary layouts exist. Rounds up to v5.1 publish `summary_results.json` (converted to
CSV unchanged): `Submitter`, `Category`, `Suite`, `Accelerator`, `a#`, `Nodes`,
`Performance_Result`, `Power_Result`... From v6.0 the repository root holds `summary.csv`
with other names for the same facts (`Organization`, `Division`, `SystemType`,
`accelerator_model_name`, `accelerators_per_node`, `total_accelerators`, `Result`, and no
power columns). `COLUMN_MAPS` maps each layout onto one set of field names; a layout is
recognised by its header, never guessed.

Kept: the closed division's datacenter LLM results (Llama 2 70B, Llama 3.1 8B/405B, Mixtral
8x7B, DeepSeek-R1, gpt-oss-120b) in Offline, Server and Interactive, of available systems
whose accelerator is a catalog GPU and whose software names an engine of the vocabulary.
Everything else is counted in `skipped` with its reason, never dropped silently.

Throughput is the whole system's (`num_gpus` GPUs). MLPerf publishes no concurrency, so
it stays NULL; a Server or Interactive row's `ttft_ms` / `tpot_ms` are the scenario's
99th-percentile limits (`LATENCY_LIMITS`), which the run met, not measured values.
"""

import datetime as dt
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from sources.benchmarks.names import gpu_id_for

# Field names used below <- each layout's own header.
COLUMN_MAPS: dict[str, dict[str, str]] = {
    # mlcommons/inference_results_v4.1 / v5.1 summary_results.json (and its CSV form).
    "summary_results": {
        "Submitter": "submitter",
        "Availability": "availability",
        "Category": "division",
        "Suite": "suite",
        "Platform": "system",
        "Model": "model",
        "Scenario": "scenario",
        "Performance_Result": "result",
        "Performance_Units": "units",
        "Accuracy": "accuracy",
        "Nodes": "nodes",
        "Accelerator": "accelerator",
        "a#": "per_node",
        "Location": "location",
        "Software": "software",
        "version": "version",
        "weight_data_types": "weights",
        "Power_Result": "power",
        "Power_Units": "power_units",
    },
    # mlcommons/inference_results_v6.0 / v6.1 summary.csv.
    "summary_csv": {
        "Organization": "submitter",
        "Availability": "availability",
        "Division": "division",
        "SystemType": "suite",
        "Platform": "system",
        "Model": "model",
        "Scenario": "scenario",
        "Result": "result",
        "Units": "units",
        "Accuracy": "accuracy",
        "number_of_nodes": "nodes",
        "accelerator_model_name": "accelerator",
        "accelerators_per_node": "per_node",
        "total_accelerators": "total",
        "Location": "location",
        "framework": "software",
        "version": "version",
        "weight_data_types": "weights",
    },
}
# The columns that tell a layout apart.
_SIGNATURES = {
    "summary_results": {"Submitter", "Accelerator", "a#", "Performance_Result"},
    "summary_csv": {"Organization", "accelerator_model_name", "total_accelerators", "Result"},
}

# MLPerf benchmark name (accuracy suffix removed, "_" read as ".") -> model id.
MODELS = {
    "llama2-70b": "llama-2-70b",
    "llama3.1-8b": "llama-3.1-8b",
    "llama3.1-405b": "llama-3.1-405b",
    "mixtral-8x7b": "mixtral-8x7b",
    "deepseek-r1": "deepseek-r1",
    "gpt-oss-120b": "gpt-oss-120b",
}
SCENARIOS = {"Offline": "offline", "Server": "server", "Interactive": "interactive"}

# 99th-percentile (TTFT ms, TPOT ms) a Server / Interactive run must meet, from LoadGen's
# mlperf.conf (mlcommons/inference loadgen/mlperf.conf @ 001712e9; the v4.1-era copy @
# 982b2063 has the same llama2-70b, mixtral-8x7b and llama3.1-405b Server values).
# gpt-oss-120b (v6.0+) is not in the stored copy of mlperf.conf: its limits stay NULL.
LATENCY_LIMITS = {
    ("llama-2-70b", "server"): (2000.0, 200.0),
    ("llama-2-70b", "interactive"): (450.0, 40.0),
    ("mixtral-8x7b", "server"): (2000.0, 200.0),
    ("llama-3.1-405b", "server"): (6000.0, 175.0),
    ("llama-3.1-405b", "interactive"): (4500.0, 80.0),
    ("llama-3.1-8b", "server"): (2000.0, 100.0),
    ("llama-3.1-8b", "interactive"): (500.0, 30.0),
    ("deepseek-r1", "server"): (2000.0, 80.0),
    ("deepseek-r1", "interactive"): (1500.0, 15.0),
}

# Declared weight types, lowest bits first: a mixed declaration ("fp8, bf16") is the
# format of the bulk of the weights, the narrowest one listed.
_WEIGHT_FORMATS = (
    ("nvfp4", "nvfp4"),
    ("mxfp4", "mxfp4"),
    ("fp4", "fp4"),
    ("int4", "int4"),
    ("fp8", "fp8"),
    ("int8", "int8"),
    ("bf16", "bf16"),
    ("fp16", "fp16"),
)

# NVIDIA's v4.1 TensorRT submissions declare fp16 weights for Llama 2 70B, but the
# harness quantises to FP8: every Hopper system class of closed/NVIDIA/configs/llama2-70b
# (mlcommons/inference_results_v4.1 @ a2f5d66d) sets `use_fp8 = True` (H100 SXM, H100 NVL,
# H200 SXM and its CTS variant, GH200 144GB). A GH200 96GB could not hold the 138 GB of
# fp16 weights at all. OEM submissions run the same harness on the same GPUs.
FP8_DECLARED_FP16 = {
    "v4.1": frozenset({"h100-sxm5-80gb", "h100-nvl-94gb", "h200-sxm", "gh200-144gb", "gh200-96gb"})
}
FP8_EVIDENCE = (
    "fp8 per mlcommons/inference_results_v4.1 "
    "closed/NVIDIA/configs/llama2-70b/Offline/__init__.py@a2f5d66d (use_fp8 = True; "
    "summary declares fp16)"
)

# Names the shared matcher reads as another card: MLPerf's "RTX PRO 6000 Blackwell Server
# Edition" is the same GB202 board with 96 GB and 600 W as the catalog's workstation card.
_GPU_OVERRIDES = ((re.compile(r"RTX\s*PRO\s*6000\s+Blackwell", re.I), "rtx-pro-6000-blackwell"),)

_ACCURACY_SUFFIX = re.compile(r"-99(?:\.9)?$")
_TOKENS_PER_SAMPLE = re.compile(r"TOKENS_PER_SAMPLE:\s*([\d.]+)")


def layout_of(header: Iterable[str]) -> str:
    """Which summary layout a header is ('summary_results' or 'summary_csv').

    Raises:
        ValueError: A header of neither layout.
    """
    names = set(header)
    for layout, needed in _SIGNATURES.items():
        if needed <= names:
            return layout
    raise ValueError(f"not an MLPerf Inference summary header: {sorted(names)[:10]}")


def normalised(row: Mapping[str, str], layout: str) -> dict[str, str]:
    """The row under the common field names of `COLUMN_MAPS` (missing fields: '')."""
    mapping = COLUMN_MAPS[layout]
    out = {field: "" for field in {*COLUMN_MAPS["summary_results"].values(), "total"}}
    for column, field in mapping.items():
        value = row.get(column)
        out[field] = "" if value is None else str(value).strip()
    return out


def engine_of(software: str) -> tuple[str | None, str | None]:
    """(engine, version) named by a submission's software field; (None, None) if none.

    NVIDIA's harness runs LLMs on TensorRT-LLM (its field often names only "TensorRT");
    it is checked first because NVIDIA-based fields also list the vLLM used for another
    benchmark. A vendor platform built on vLLM (MangoBoost LLMBoost) is not vLLM.
    """
    text = software.lower()
    if "llmboost" in text:
        return None, None
    if "tensorrt" in text or "trtllm" in text:
        match = re.search(r"tensorrt-llm\s+([0-9][\w.]*)", software, re.I)
        return "tensorrt-llm", match.group(1) if match else None
    for engine in ("sglang", "vllm"):
        if engine in text:
            match = re.search(engine + r"[\s-]+v?([0-9][\w.+]*)", software, re.I)
            return engine, match.group(1).rstrip(".,") if match else None
    return None, None


def precision_of(weights: str) -> str | None:
    """The weight format a declaration names (the narrowest listed), else None."""
    text = weights.lower()
    for token, precision in _WEIGHT_FORMATS:
        if token in text:
            return precision
    return None


def gpu_of(accelerator: str, known: frozenset[str] | None) -> str | None:
    """The catalog GPU of an MLPerf accelerator name (None: not a catalog GPU)."""
    for pattern, gpu in _GPU_OVERRIDES:
        if pattern.search(accelerator):
            return gpu if known is None or gpu in known else None
    return gpu_id_for(accelerator, known)


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _gpu_count(fields: Mapping[str, str]) -> int | None:
    total = _number(fields["total"])
    if not total:
        per_node, nodes = _number(fields["per_node"]), _number(fields["nodes"]) or 1.0
        total = per_node * nodes if per_node else None
    return int(total) if total and total == int(total) else None


def _model(name: str) -> str | None:
    return MODELS.get(_ACCURACY_SUFFIX.sub("", name).replace("_", "."))


def _reason_to_skip(fields: Mapping[str, str]) -> str | None:
    """Why a result is not a serving row, checked before anything is parsed."""
    checks: tuple[tuple[bool, Callable[[], str]], ...] = (
        (fields["division"].lower() != "closed", lambda: "not the closed division"),
        (fields["suite"].lower() != "datacenter", lambda: "not the datacenter suite"),
        (
            fields["availability"].lower() != "available",
            lambda: f"availability {fields['availability']} (only available systems are kept)",
        ),
        (_model(fields["model"]) is None, lambda: f"model {fields['model']} is not an LLM kept"),
        (
            fields["scenario"] not in SCENARIOS,
            lambda: f"scenario {fields['scenario']} is not a serving scenario",
        ),
        (fields["units"].lower() != "tokens/s", lambda: f"unit {fields['units']!r}"),
    )
    return next((reason() for failed, reason in checks if failed), None)


def _serving_row(fields, gpu, count, engine, version, precision, *, commit, as_of) -> dict:
    model = _model(fields["model"])
    scenario = SCENARIOS[fields["scenario"]]
    ttft, tpot = LATENCY_LIMITS.get((model, scenario), (None, None))
    tokens = _TOKENS_PER_SAMPLE.search(fields["accuracy"])
    power = _number(fields["power"]) if fields["power_units"].lower() in ("watts", "w") else None
    repo = f"mlcommons/inference_results_{fields['version']}"
    location = fields["location"].removeprefix("./")
    return {
        "source": "mlperf",
        "gpu_id": gpu,
        "num_gpus": count,
        "engine": engine,
        "engine_version": version,
        "model_id": model,
        "precision": precision,
        "scenario": scenario,
        "concurrency": None,
        "input_tokens": None,
        "output_tokens": round(float(tokens.group(1))) if tokens else None,
        "output_tokens_per_s": float(fields["result"]),
        "output_tokens_per_s_per_user": None,
        "ttft_ms": ttft,
        "tpot_ms": tpot,
        "power_w": power if power and power > 0 else None,
        "as_of": as_of,
        "citation": f"{repo} {location}@{commit[:8]}",
    }


def mlperf_serving_rows(
    rows: Iterable[Mapping[str, str]],
    *,
    commit: str,
    as_of: dt.date,
    known: frozenset[str] | None = None,
) -> tuple[list[dict], Counter]:
    """Serving rows of one round's summary, and the count of results skipped by reason.

    Args:
        rows: The summary's rows (either layout; all rows must share one header).
        commit: The results repository commit the summary was read at (cited).
        as_of: The round's publication date.
        known: The catalog's GPU ids (None: any id the name matcher returns).
    """
    rows = list(rows)
    skipped: Counter = Counter()
    if not rows:
        return [], skipped
    layout = layout_of(rows[0])
    kept: dict[tuple, dict] = {}
    for raw in rows:
        fields = normalised(raw, layout)
        reason = _reason_to_skip(fields)
        gpu = gpu_of(fields["accelerator"], known) if reason is None else None
        engine, version = engine_of(fields["software"])
        precision = precision_of(fields["weights"])
        count = _gpu_count(fields)
        if reason is None and gpu is None:
            reason = f"accelerator {fields['accelerator']!r} is not a catalog GPU"
        if reason is None and engine is None:
            reason = "software names no engine of the vocabulary"
        if reason is None and (precision is None or count is None):
            reason = "no weight format or GPU count"
        if reason is not None:
            skipped[reason] += 1
            continue
        row = _serving_row(
            fields, gpu, count, engine, version, precision, commit=commit, as_of=as_of
        )
        if precision == "fp16" and gpu in FP8_DECLARED_FP16.get(fields["version"], ()):
            if engine == "tensorrt-llm" and row["model_id"] == "llama-2-70b":
                row["precision"] = "fp8"
                row["citation"] += f" [{FP8_EVIDENCE}]"
        _keep_once(kept, row, fields, skipped)
    return list(kept.values()), skipped


def _keep_once(kept: dict, row: dict, fields: Mapping[str, str], skipped: Counter) -> None:
    """Keep one row per system x model x scenario x figure.

    A system meeting the 99.9 % accuracy target is usually submitted for the 99 % target
    too with the same figure: one measurement, kept once (the 99.9 % path is cited).
    """
    key = (
        fields["submitter"],
        fields["system"],
        row["model_id"],
        row["scenario"],
        row["output_tokens_per_s"],
        row["num_gpus"],
    )
    if key in kept:
        skipped["same figure submitted for both accuracy targets"] += 1
        if "-99.9/" in row["citation"]:
            kept[key] = row
        return
    kept[key] = row
