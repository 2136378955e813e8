"""Lambda's deep-learning benchmark CSVs: a throughput and a batch-size table per precision.

Sources: lambdal/deeplearning-benchmark (PyTorch) and the older lambda-tensorflow-benchmark.

Format: one row per system (`name_gpu`, e.g. "8x A100 80GB SXM4"), `num_gpu`, `watt`,
`price`, then one column per model. A cell is the throughput of the whole run; **0 means not
measured** (kept as a missing figure, never as 0). The matching `*-bs-*` table has the same
shape and holds the **global** batch size (all GPUs), divided here by the GPU count. The
per-machine "v2" tables have an unnamed first column holding machine directories
("LambdaOD_8x_Texas_2xH100_80GB_SXM5_..."), no num_gpu column and no batch-size table; the
GPU count is read from the name and the batch size is left unknown.

Precision comes from the file name (`...-fp16.csv` AMP -> fp16; `...-fp32.csv` -> tf32 on
Ampere and newer, fp32 before, as NGC runs FP32 as TF32 by default). Columns without a
workload class (ncf, Lambda's recommender) are skipped and counted.
"""

import csv
import datetime as dt
import io
import math
import re
from pathlib import Path

from sources.benchmarks.names import fp32_precision, gpu_count_in, gpu_id_for, model_info
from sources.benchmarks.records import BenchmarkRecord, MalformedFile, ParsedTable

SOURCE = "lambda"
_META = {"name_gpu", "num_gpu", "watt", "price", ""}


def precision_of(path: str | Path) -> str:
    """'fp16' or 'fp32' from a Lambda file name; MalformedFile when it names neither."""
    name = Path(path).name.lower()
    found = [p for p in ("fp16", "fp32") if p in name]
    if len(found) != 1:
        raise MalformedFile(f"{name}: the file name must say fp16 or fp32")
    return found[0]


def batch_size_file_for(path: str | Path) -> Path:
    """The batch-size table that pairs with a throughput table (same folder)."""
    path = Path(path)
    return path.with_name(path.name.replace("-throughput-", "-bs-"))


def _table(content: bytes, what: str) -> tuple[list[str], list[list[str]]]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedFile(f"{what} is not UTF-8 text: {exc}") from exc
    rows = [row for row in csv.reader(io.StringIO(text)) if any(cell.strip() for cell in row)]
    if not rows:
        raise MalformedFile(f"{what} is empty")
    header = [cell.strip() for cell in rows[0]]
    if header[0] not in ("name_gpu", ""):
        raise MalformedFile(f"{what}: first column must be name_gpu, got {header[0]!r}")
    models = [h for h in header if h not in _META]
    if not models:
        raise MalformedFile(f"{what}: no model columns in {header}")
    bad = [i for i, row in enumerate(rows[1:], start=2) if len(row) != len(header)]
    if bad:
        raise MalformedFile(f"{what}: line {bad[0]} has a different number of cells")
    return header, rows[1:]


def _number(cell: str) -> float | None:
    try:
        value = float(cell)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _join_key(name: str) -> str:
    # Lambda's v0 tables spell the same system "8x RTX Quadro 8000" in the throughput
    # table and "8x Quadro RTX 8000" in the batch-size table.
    text = re.sub(r"\brtx quadro\b", "quadro rtx", name.lower())
    return " ".join(text.split())


def parse_lambda_csv(
    throughput: bytes,
    batch_sizes: bytes | None,
    *,
    precision: str,
    software_era: str,
    as_of: dt.date,
    citation: str,
    source_file: str = "",
    known: frozenset[str] | None = None,
) -> ParsedTable:
    """Records of one Lambda throughput table, batch sizes joined from its pair.

    Args:
        throughput: The `*-throughput-*` CSV.
        batch_sizes: The matching `*-bs-*` CSV (global batch sizes), or None.
        precision: 'fp16' or 'fp32' (see `precision_of`).
        software_era: The software-stack group (the file does not say; the caller knows).
        as_of: Date of the source commit.
        citation: Where the table comes from (repository, path, commit).
        source_file: The file read, stored with every record.
        known: Canonical gpu_ids; names mapping outside it are reported unknown.
    """
    header, rows = _table(throughput, "throughput table")
    sizes: dict[tuple[str, str], float | None] = {}
    if batch_sizes is not None:
        bs_header, bs_rows = _table(batch_sizes, "batch-size table")
        for row in bs_rows:
            for column, cell in zip(bs_header, row, strict=True):
                if column not in _META:
                    sizes[(_join_key(row[0]), column)] = _number(cell)
    result = ParsedTable()
    for line, row in enumerate(rows, start=2):
        cells = dict(zip(header, row, strict=True))
        label = row[0].strip()
        count = _number(cells.get("num_gpu", "")) if "num_gpu" in cells else gpu_count_in(label)
        if count is None and "num_gpu" not in cells:
            count = 1.0 if not re.search(r"\d+x", label) else None
        if count is None or count < 1 or count != int(count):
            result.skipped[f"no GPU count in row label {label!r} (line {line})"] += 1
            continue
        num_gpus = int(count)
        gpu = gpu_id_for(label, known)
        for column in header:
            if column in _META:
                continue
            info = model_info(column)
            if info is None:
                result.skipped[f"model {column!r} has no workload class"] += 1
                continue
            model, workload, unit = info
            value = _number(cells[column])
            if value is None and cells[column].strip():
                result.skipped[f"not a number: {cells[column]!r}"] += 1
                continue
            flags, details = [], []
            if value is None or value <= 0:
                flags.append("missing")
                details.append(f"published as {cells[column].strip() or 'empty'} (not measured)")
                value = None
            per_gpu = None
            if batch_sizes is None:
                flags.append("no_batch_size")
                details.append("no batch-size table for this file")
            else:
                global_bs = sizes.get((_join_key(label), column))
                if global_bs is None or global_bs <= 0:
                    flags.append("no_batch_size")
                    details.append("no batch size published for this cell")
                elif global_bs % num_gpus:
                    flags.append("no_batch_size")
                    details.append(f"global batch {global_bs:g} does not divide by {num_gpus}")
                else:
                    per_gpu = int(global_bs // num_gpus)
            result.records.append(
                BenchmarkRecord(
                    source=SOURCE,
                    gpu=gpu,
                    gpu_name=label,
                    system=label,
                    model=model,
                    workload_class=workload,
                    task="training",
                    precision="fp16" if precision == "fp16" else fp32_precision(gpu),
                    num_gpus=num_gpus,
                    batch_size_per_gpu=per_gpu,
                    throughput=value,
                    unit=unit,
                    software_era=software_era,
                    as_of=as_of,
                    citation=citation,
                    source_file=source_file,
                    flags=tuple(flags),
                    flag_detail=tuple(details),
                )
            )
    return result
