"""MLPerf Training and Inference results (mlcommons results repositories).

Two tables are read, told apart by their header:

- **Training summary** (one row per round x submitter x system x benchmark: `mlperf_round`,
  `division`, `accelerator_model_name`, `accelerators_per_node`, `number_of_nodes`,
  `total_accelerators`, `benchmark`, `global_batch_size`, `minutes_olympic_mean`, ...).
  MLPerf Training publishes **time to train** (minutes to reach the target quality), not a
  throughput. We store it as a rate so that higher is better like every other figure:
  `throughput = 60 / minutes`, unit `trainings/h` (complete trainings per hour; the minutes
  are 60 / throughput and are printed by the CLI). Precision is not published, so it is
  `mixed`. Only figures of the same benchmark and round compare (the epochs needed to
  converge change with the global batch size and the reference code), hence
  software_era `mlperf-training-<round>`. The batch size per GPU is the global batch divided
  by the accelerator count.
- **Inference summary_results** (CSV or the JSON list it is converted from: `Accelerator`,
  `a#` accelerators per node, `Nodes`, `Model`, `Scenario`, `Category`,
  `weight_data_types`, `Performance_Result`, `Performance_Units`). Only the closed division's
  Offline scenario is kept (peak throughput in samples/s or tokens/s); Server, Interactive
  and the latency scenarios are skipped and counted. MLPerf Inference publishes no batch
  size, so these rows carry the `no_batch_size` flag.

Open-division results (changed models) are skipped and counted, as are benchmarks without a
workload class (DLRM, GNNs, MiniGo) and systems whose node count is not published.
"""

import csv
import datetime as dt
import io
import json
import re

from sources.benchmarks.names import gpu_id_for, model_info
from sources.benchmarks.records import BenchmarkRecord, MalformedFile, ParsedTable

SOURCE = "mlperf"

# Publication dates of the rounds (mlcommons.org result announcements).
ROUND_DATES = {
    "training": {
        "v0.5": dt.date(2018, 12, 12),
        "v0.6": dt.date(2019, 7, 10),
        "v0.7": dt.date(2020, 7, 29),
        "v1.0": dt.date(2021, 6, 30),
        "v1.1": dt.date(2021, 12, 1),
        "v2.0": dt.date(2022, 6, 29),
        "v2.1": dt.date(2022, 11, 9),
        "v3.0": dt.date(2023, 6, 27),
        "v3.1": dt.date(2023, 11, 8),
        "v4.0": dt.date(2024, 6, 12),
        "v4.1": dt.date(2024, 11, 13),
        "v5.0": dt.date(2025, 6, 4),
        "v5.1": dt.date(2025, 11, 12),
    },
    "inference": {
        "v3.1": dt.date(2023, 9, 11),
        "v4.0": dt.date(2024, 3, 27),
        "v4.1": dt.date(2024, 8, 28),
        "v5.0": dt.date(2025, 4, 2),
        "v5.1": dt.date(2025, 9, 9),
    },
}

_TRAINING_MODELS = {
    "resnet": ("resnet50", "cnn"),
    "ssd": ("ssd", "cnn"),
    "retinanet": ("retinanet", "cnn"),
    "maskrcnn": ("maskrcnn", "cnn"),
    "unet3d": ("unet3d", "cnn"),
    "bert": ("bert_large", "transformer"),
    "transformer": ("transformer", "transformer"),
    "gnmt": ("gnmt", "rnn"),
    "rnnt": ("rnnt", "rnn"),
    "gpt3": ("gpt3", "transformer"),
    "llama2_70b_lora": ("llama2_70b_lora", "transformer"),
    "llama31_405b": ("llama31_405b", "transformer"),
    "llama31_8b": ("llama31_8b", "transformer"),
    "stable_diffusion": ("stable_diffusion", "transformer"),
    "flux1": ("flux1", "transformer"),
}
_UNITS = {"samples/s": "samples/s", "tokens/s": "tokens/s", "queries/s": "queries/s"}
_WEIGHT_TYPES = {
    "fp8": "fp8",
    "float8": "fp8",
    "int8": "int8",
    "uint8": "int8",
    "fp16": "fp16",
    "float16": "fp16",
    "bf16": "bf16",
    "fp32": "fp32",
    "fp4": "fp4",
    "mxfp4": "fp4",
    "int4": "int4",
    "uint4": "int4",
}


def _rows(content: bytes, what: str) -> list[dict[str, str]]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedFile(f"{what} is not UTF-8 text: {exc}") from exc
    if text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise MalformedFile(f"{what}: invalid JSON: {exc}") from exc
        if not all(isinstance(row, dict) for row in data):
            raise MalformedFile(f"{what}: the JSON must be a list of objects")
        return [{k: "" if v is None else str(v) for k, v in row.items()} for row in data]
    return list(csv.DictReader(io.StringIO(text)))


def _number(text: str) -> float | None:
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def parse_mlperf(
    content: bytes,
    *,
    source_file: str = "",
    commit: str = "",
    known: frozenset[str] | None = None,
) -> ParsedTable:
    """Records of an MLPerf training summary or inference summary_results file."""
    rows = _rows(content, source_file or "MLPerf file")
    if not rows:
        raise MalformedFile(f"{source_file or 'MLPerf file'} has no rows")
    columns = set(rows[0])
    if {"mlperf_round", "benchmark", "minutes_olympic_mean"} <= columns:
        return _training(rows, source_file, known)
    if {"Accelerator", "a#", "Model", "Scenario", "Performance_Result"} <= columns:
        return _inference(rows, source_file, commit, known)
    raise MalformedFile(
        f"{source_file or 'MLPerf file'}: not an MLPerf training summary (mlperf_round, "
        "benchmark, minutes_olympic_mean) nor inference summary_results (Accelerator, a#, "
        f"Model, Scenario, Performance_Result); columns: {sorted(columns)[:12]}"
    )


def _with_memory(row: dict) -> str:
    """The accelerator name, with the memory column added where the name omits it.

    A bare "Nvidia Tesla V100" or "NVIDIA A100" comes in two memory sizes, and the size is
    often only in `accelerator_memory_capacity` ("32GB", "40G"); without it the name maps
    to the smaller part.
    """
    name = row["accelerator_model_name"].strip()
    memory = re.match(r"\s*(\d+)\s*G", row.get("accelerator_memory_capacity", "") or "")
    if memory and re.search(r"\b(?:V100|A100)\b", name) and not re.search(r"\d\s*GB", name):
        return f"{name} {memory.group(1)}GB"
    return name


def _training(rows, source_file, known) -> ParsedTable:
    result = ParsedTable()
    for row in rows:
        if row.get("division", "").strip().lower() not in ("closed", "close"):
            result.skipped["open division"] += 1
            continue
        model = _TRAINING_MODELS.get(row["benchmark"].strip())
        if model is None:
            result.skipped[f"benchmark {row['benchmark']!r} has no workload class"] += 1
            continue
        per_node = _number(row.get("accelerators_per_node", ""))
        nodes = _number(row.get("number_of_nodes", ""))
        total = _number(row.get("total_accelerators", ""))
        if not total and per_node and nodes:
            total = per_node * nodes
        if not total or total != int(total):
            result.skipped["no accelerator count (number_of_nodes not published)"] += 1
            continue
        minutes = _number(row.get("minutes_olympic_mean", ""))
        round_ = row["mlperf_round"].strip()
        if round_ not in ROUND_DATES["training"]:
            # A round we have no publication date for: no as-of date is better than a false one.
            result.skipped[f"round {round_!r} has no known publication date"] += 1
            continue
        num_gpus = int(total)
        gbs = _number(row.get("global_batch_size", ""))
        per_gpu = int(gbs // num_gpus) if gbs and gbs % num_gpus == 0 else None
        flags, details = [], []
        if minutes is None or minutes <= 0:
            flags.append("missing")
            details.append("no successful run")
        if per_gpu is None:
            flags.append("no_batch_size")
            details.append(f"global batch {row.get('global_batch_size')!r} / {num_gpus} GPUs")
        repo = f"mlcommons/training_results_{round_}"
        commit = row.get("source_commit", "")[:8]
        result.records.append(
            BenchmarkRecord(
                source=SOURCE,
                gpu=gpu_id_for(_with_memory(row), known),
                gpu_name=row["accelerator_model_name"],
                system=f"{row.get('submitter', '')} {row.get('system_name') or row['system']}",
                model=model[0],
                workload_class=model[1],
                task="training",
                precision="mixed",
                num_gpus=num_gpus,
                batch_size_per_gpu=per_gpu,
                throughput=60.0 / minutes if minutes and minutes > 0 else None,
                unit="trainings/h",
                software_era=f"mlperf-training-{round_}",
                as_of=ROUND_DATES["training"][round_],
                citation=f"{repo} {row.get('results_path', '')}@{commit}".strip(),
                source_file=source_file,
                flags=tuple(flags),
                flag_detail=tuple(details),
                extra={"minutes": minutes, "mlperf_round": round_},
            )
        )
    return result


def _inference(rows, source_file, commit, known) -> ParsedTable:
    result = ParsedTable()
    for row in rows:
        if row.get("Category", "").strip().lower() != "closed":
            result.skipped["open division"] += 1
            continue
        availability = row.get("Availability", "available").strip().lower() or "available"
        if availability != "available":
            # Preview and research systems run unreleased hardware or software (the v4.1 B200
            # preview ran Llama 2 70B in FP4 while declaring fp16 weights).
            result.skipped[f"availability {availability} (only available systems are kept)"] += 1
            continue
        if row["Scenario"].strip() != "Offline":
            result.skipped[f"scenario {row['Scenario'].strip()} (only Offline is kept)"] += 1
            continue
        accelerator = row["Accelerator"].strip()
        per_node = _number(row.get("a#", ""))
        nodes = _number(row.get("Nodes", "")) or 1.0
        if not accelerator or accelerator.upper() == "N/A" or not per_node:
            result.skipped["no accelerator (CPU-only system)"] += 1
            continue
        unit = _UNITS.get(row.get("Performance_Units", "").strip().lower())
        value = _number(row["Performance_Result"])
        if unit is None or value is None:
            result.skipped[f"unit {row.get('Performance_Units')!r} is not a throughput"] += 1
            continue
        name = row["Model"].strip()
        base = re.sub(r"-99(?:\.9)?$", "", name)
        info = model_info("resnet50" if base == "resnet" else base)
        if info is None or base.startswith("dlrm"):
            result.skipped[f"model {name!r} has no workload class"] += 1
            continue
        slug = "bert_large" if base.startswith("bert") else info[0]
        accuracy = name[len(base) :]
        version = row.get("version", "").strip() or row.get("ID", "").split("-")[0]
        if version not in ROUND_DATES["inference"]:
            result.skipped[f"round {version!r} has no known publication date"] += 1
            continue
        weights = row.get("weight_data_types", "").strip().lower()
        precision = _WEIGHT_TYPES.get(weights, "mixed")
        total = per_node * nodes
        if total != int(total):
            result.skipped["fractional accelerator count"] += 1
            continue
        location = row.get("Location", "")
        result.records.append(
            BenchmarkRecord(
                source=SOURCE,
                gpu=gpu_id_for(accelerator, known),
                gpu_name=accelerator,
                system=f"{row.get('Submitter', '')} {row.get('System', '')}".strip(),
                model=slug + accuracy.replace("-", "_"),
                workload_class=info[1],
                task="inference",
                precision=precision,
                num_gpus=int(total),
                batch_size_per_gpu=None,
                throughput=value if value > 0 else None,
                unit=unit,
                software_era=f"mlperf-inference-{version}",
                as_of=ROUND_DATES["inference"][version],
                citation=(
                    f"mlcommons/inference_results_{version} {location or row.get('ID', '')}"
                    + (f"@{commit[:8]}" if commit else "")
                ),
                source_file=source_file,
                flags=("no_batch_size",) + (() if value > 0 else ("missing",)),
                flag_detail=("MLPerf Inference publishes no batch size",),
                extra={"scenario": "Offline", "mlperf_id": row.get("ID", "")},
            )
        )
    return result
