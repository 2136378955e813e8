"""NVIDIA DeepLearningExamples README performance tables (Markdown).

Each model directory's README.md has a "Performance" section with Markdown tables such as

    #### Training performance: NVIDIA DGX A100 (8x A100 80GB)
    | GPUs | Batch size / GPU | Throughput - TF32 | Throughput - mixed precision | ... |
    |------|------------------|-------------------|------------------------------|-----|
    | 1    | 256              | 938 img/s         | 2470 img/s                   | ... |

Only tables under a heading containing "performance" are read. Per table:
- task: the nearest heading naming "inference" or "training";
- GPU: the nearest heading naming a system ("DGX-1 (8x V100 16GB)", "NVIDIA T4"), else the
  "Our results were obtained ... on NVIDIA DGX-1 with 8x V100 16G" sentence;
- GPU count: the `GPUs` column (an inference table without one ran on 1 GPU); multi-node
  tables (`Nodes` column) are skipped;
- batch size per GPU: the `Batch size` column; "16 , 8" or "32 and 32" cells follow the order
  the header names ("Batch size / GPU: mixed precision, FP32", "(TF32 and FP16)"), and
  "128 (FP32) / 256 (AMP)" cells name their precision;
- precision: the throughput column's header ("Throughput - TF32", "... mixed precision"),
  else a `Precision` column, else the nearest heading ("Mixed Precision Inference Latency");
- unit: the header ("Throughput (img/sec)"), else the cell ("938 img/s"), else the model's
  usual unit;
- software era: "dle-<NGC container>" from the section's "... 20.06-py3 NGC container"
  sentence, else the era the caller gives.
Anything the table does not state (no GPU, no precision, a model without workload class) is
skipped and counted by reason, never guessed.
"""

import datetime as dt
import re
from dataclasses import dataclass

from sources.benchmarks.names import fp32_precision, model_info, normalize_unit, system_gpu_id
from sources.benchmarks.records import BenchmarkRecord, MalformedFile, ParsedTable

SOURCE = "nvidia-dle"
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$")
_CONTAINER = re.compile(r"(\d{2}\.\d{2})(?:-(?:py3|tf\d?-py3|tf-py3))?\s+NGC\s+container", re.I)
_CONTAINER_NAME = re.compile(r"NGC\s+container\s+\S*?:?(\d{2}\.\d{2})", re.I)
_PRECISIONS = (
    (re.compile(r"\bint8\b", re.I), "int8"),
    (re.compile(r"\bbf16\b", re.I), "bf16"),
    (re.compile(r"\bfp8\b", re.I), "fp8"),
    (re.compile(r"\btf32\b", re.I), "tf32"),
    (re.compile(r"\bfp32\b", re.I), "fp32"),
    (re.compile(r"mixed[\s-]*precision|\bmixed\b|\bamp\b|\bfp16\b|\bhalf\b", re.I), "fp16"),
)


@dataclass
class _Table:
    headings: list[str]  # outermost first
    text_before: str  # paragraphs of the section up to the table (context sentences)
    header: list[str]
    rows: list[list[str]]
    line: int


def _clean(cell: str) -> str:
    cell = re.sub(r"<br\s*/?>", " ", cell, flags=re.I)
    cell = re.sub(r"\*\*|__|`", "", cell)
    cell = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell)
    return " ".join(cell.split())


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    return [_clean(c) for c in body.split("|")]


def _tables(text: str) -> list[_Table]:
    lines = text.splitlines()
    headings: dict[int, str] = {}
    # Text under each open heading: a section's "Our results were obtained ... container"
    # sentence applies to the tables of its sub-sections too.
    texts: dict[int, list[str]] = {0: []}
    level = 0
    found: list[_Table] = []
    in_code = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.strip().startswith("```"):
            in_code = not in_code
            i += 1
            continue
        match = _HEADING.match(line) if not in_code else None
        if match:
            level = len(match.group(1))
            headings = {k: v for k, v in headings.items() if k < level}
            headings[level] = _clean(match.group(2))
            texts = {k: v for k, v in texts.items() if k < level}
            texts[level] = []
            i += 1
            continue
        if (
            not in_code
            and line.strip().startswith("|")
            and i + 1 < len(lines)
            and _SEPARATOR.match(lines[i + 1].strip())
        ):
            header = _cells(line)
            rows, j = [], i + 2
            while j < len(lines) and lines[j].strip().startswith("|"):
                rows.append(_cells(lines[j]))
                j += 1
            chain = [headings[k] for k in sorted(headings)]
            context = " ".join(" ".join(texts[k]) for k in sorted(texts))
            found.append(_Table(chain, context, header, rows, i + 1))
            i = j
            continue
        if not in_code and line.strip():
            texts[level].append(_clean(line))
        i += 1
    return found


def _precision_in(text: str) -> str | None:
    for pattern, precision in _PRECISIONS:
        if pattern.search(text):
            return precision
    return None


def _precisions_in_order(text: str) -> list[str]:
    """Precisions named in a header, in the order they appear ('mixed precision, FP32')."""
    hits = []
    for pattern, precision in _PRECISIONS:
        hits += [(m.start(), precision) for m in pattern.finditer(text)]
    return [p for _, p in sorted(hits)]


def _number(cell: str) -> float | None:
    match = re.match(r"^~?\s*([0-9][0-9,]*(?:\.[0-9]+)?)\b", cell.strip())
    if not match:
        return None
    return float(match.group(1).replace(",", ""))


def _batch_sizes(cell: str, header: str) -> dict[str, int] | int | None:
    """A single batch size, or one per precision, from a batch-size cell."""
    labelled = re.findall(r"(\d+)\s*\(([^)]*)\)", cell)
    if labelled:
        out = {}
        for size, label in labelled:
            precision = _precision_in(label)
            if precision:
                out[precision] = int(size)
        return out or None
    numbers = re.findall(r"\d+", cell)
    if len(numbers) == 1:
        return int(numbers[0])
    order = _precisions_in_order(header.split("/", 1)[-1])
    if len(numbers) >= 2 and len(order) == len(numbers):
        return dict(zip(order, (int(n) for n in numbers), strict=True))
    return None


def _model_of(title: str) -> str:
    name = re.split(r"\s+for\s+", title, maxsplit=1, flags=re.I)[0]
    name = re.sub(r"\bv\d+(?:\.\d+)*\b", "", name, flags=re.I)
    return " ".join(name.split())


def _column(header: list[str], *patterns: str) -> int | None:
    for index, name in enumerate(header):
        if any(re.search(p, name, re.I) for p in patterns):
            return index
    return None


def parse_dle_readme(
    content: bytes,
    *,
    readme_path: str,
    as_of: dt.date,
    software_era: str = "dle",
    citation_prefix: str = "NVIDIA/DeepLearningExamples",
    source_file: str = "",
    known: frozenset[str] | None = None,
) -> ParsedTable:
    """Records of every performance table in one DeepLearningExamples README.

    Args:
        content: The README.md bytes.
        readme_path: Its path in the repository (part of the citation), e.g.
            'PyTorch/Classification/ConvNets/resnet50v1.5/README.md'.
        as_of: Date of the README snapshot.
        software_era: Era for tables whose section names no NGC container.
        citation_prefix: Repository (and commit) the README comes from.
        source_file: The file read, stored with every record.
        known: Canonical gpu_ids; GPUs outside it are reported unknown.
    """
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise MalformedFile(f"{readme_path} is not UTF-8 text: {exc}") from exc
    tables = _tables(text)
    titles = [m.group(1) for m in re.finditer(r"^#\s+(.+)$", text, re.M)]
    title = _model_of(_clean(titles[0])) if titles else ""
    result = ParsedTable()
    perf = [t for t in tables if any("performance" in h.lower() for h in t.headings)]
    if not perf:
        raise MalformedFile(f"{readme_path}: no Markdown table under a 'Performance' heading")
    for table in perf:
        _read_table(
            table,
            title,
            readme_path,
            as_of,
            software_era,
            citation_prefix,
            source_file,
            known,
            result,
        )
    return result


def _read_table(table, title, readme_path, as_of, era, prefix, source_file, known, result):
    nearest_first = table.headings[::-1]
    task = next(
        (
            "inference" if "inference" in h.lower() else "training"
            for h in nearest_first
            if re.search(r"inference|training", h, re.I)
        ),
        None,
    )
    header = table.header
    if task is None:
        result.skipped["table is neither training nor inference"] += len(table.rows)
        return
    if _column(header, r"^(?:num(?:ber of)?\s+)?nodes\b") is not None:
        result.skipped["multi-node scaling table"] += len(table.rows)
        return
    gpu, system = None, ""
    for heading in nearest_first:
        gpu = system_gpu_id(heading, known)
        if gpu is not None:
            system = heading.split(": ", 1)[-1]  # "Training performance: NVIDIA DGX-1 ..."
            break
    if gpu is None:
        sentence = re.search(r"\bon\s+(?:a\s+|an\s+)?(NVIDIA[^.]*?)(?:\.|$)", table.text_before)
        if sentence:
            gpu = system_gpu_id(sentence.group(1), known)
            system = sentence.group(1)
    if gpu is None:
        result.skipped["no known GPU in the headings"] += len(table.rows)
        return
    container = _CONTAINER.search(table.text_before) or _CONTAINER_NAME.search(table.text_before)
    software_era = f"dle-{container.group(1)}" if container else era
    gpus_col = _column(header, r"^#?\s*(?:num(?:ber of)?\s+)?gpus?\b(?!\s*/)")
    batch_col = _column(header, r"^batch\s*size")
    precision_col = _column(header, r"^precision$")
    model_col = _column(header, r"^model$")
    seq_col = _column(header, r"^seq(?:uence)?\s*len")
    throughput_cols = [
        i
        for i, name in enumerate(header)
        if re.search(r"throughput", name, re.I) and not re.search(r"speedup|scaling", name, re.I)
    ]
    if not throughput_cols:
        result.skipped["no throughput column"] += len(table.rows)
        return
    if task == "training" and gpus_col is None:
        result.skipped["training table without a GPUs column"] += len(table.rows)
        return
    heading_precision = next(
        (p for p in (_precision_in(h) for h in nearest_first[:1]) if p is not None), None
    )
    section = nearest_first[0]
    pretraining = any(re.search(r"pre-?training", h, re.I) for h in nearest_first[:2])
    for row in table.rows:
        if len(row) != len(header):
            result.skipped["row with a different number of cells"] += 1
            continue
        family = title
        if model_col is not None and row[model_col]:
            family = f"{title} {row[model_col]}" if title else row[model_col]
        info = model_info(family.replace(" ", "_")) or model_info(family)
        if info is None:
            result.skipped[f"model {family!r} has no workload class"] += len(throughput_cols)
            continue
        model, workload, default_unit = info
        if pretraining:
            model += "_pretraining"
        if seq_col is not None and row[seq_col].strip().isdigit():
            model += f"_seq{row[seq_col].strip()}"
        if gpus_col is not None:
            count = _number(row[gpus_col])
            if count is None or count < 1 or count != int(count):
                result.skipped["GPU count not a whole number"] += len(throughput_cols)
                continue
            num_gpus = int(count)
        else:
            num_gpus = 1
        sizes = _batch_sizes(row[batch_col], header[batch_col]) if batch_col is not None else None
        for col in throughput_cols:
            precision = (
                _precision_in(header[col])
                or (_precision_in(row[precision_col]) if precision_col is not None else None)
                or heading_precision
            )
            if precision is None:
                result.skipped["no precision in the header, row or heading"] += 1
                continue
            if precision == "fp32":
                precision = fp32_precision(gpu) if "tf32" not in header[col].lower() else "tf32"
            value = _number(row[col])
            if value is None:
                result.skipped["throughput cell is not a number"] += 1
                continue
            unit_text = re.search(r"\(([^)]*/[^)]*)\)", header[col])
            cell_unit = re.search(r"[\d.]\s*([A-Za-z]+/[A-Za-z]+)", row[col])
            unit = (
                (normalize_unit(unit_text.group(1)) if unit_text else None)
                or (normalize_unit(cell_unit.group(1)) if cell_unit else None)
                or default_unit
            )
            if isinstance(sizes, dict):
                key = "fp16" if precision in ("fp16", "bf16") else precision
                batch = sizes.get(key) or (sizes.get("fp32") if key == "tf32" else None)
            else:
                batch = sizes
            flags, details = [], []
            if batch is None:
                flags.append("no_batch_size")
                details.append("the table gives no batch size per GPU")
            result.records.append(
                BenchmarkRecord(
                    source=SOURCE,
                    gpu=gpu,
                    gpu_name=system,
                    system=system,
                    model=model,
                    workload_class=workload,
                    task=task,
                    precision=precision,
                    num_gpus=num_gpus,
                    batch_size_per_gpu=batch,
                    throughput=value,
                    unit=unit,
                    software_era=software_era,
                    as_of=as_of,
                    citation=f"{prefix} {readme_path} § {section}",
                    source_file=source_file,
                    flags=tuple(flags),
                    flag_detail=tuple(details),
                )
            )
