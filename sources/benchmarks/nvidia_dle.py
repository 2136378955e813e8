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
    readme = _Readme(
        title=_model_of(_clean(titles[0])) if titles else "",
        path=readme_path,
        as_of=as_of,
        era=software_era,
        prefix=citation_prefix,
        source_file=source_file,
        known=known,
    )
    result = ParsedTable()
    perf = [t for t in tables if any("performance" in h.lower() for h in t.headings)]
    if not perf:
        raise MalformedFile(f"{readme_path}: no Markdown table under a 'Performance' heading")
    for table in perf:
        _read_table(table, readme, result)
    return result


@dataclass(frozen=True)
class _Readme:
    """What holds for every table of one README."""

    title: str  # the model named by the README's first heading ("ResNet50")
    path: str
    as_of: dt.date
    era: str  # for tables whose section names no NGC container
    prefix: str  # repository (and commit) cited
    source_file: str
    known: frozenset[str] | None


@dataclass(frozen=True)
class _Columns:
    """Where a table keeps each fact (None: the table has no such column)."""

    gpus: int | None
    batch: int | None
    precision: int | None
    model: int | None
    seq: int | None  # sequence length, part of the model slug
    throughput: list[int]  # one record per row and throughput column


@dataclass(frozen=True)
class _Setting:
    """What a table states once for all its rows."""

    task: str
    gpu: str
    system: str
    software_era: str
    section: str  # the nearest heading, cited
    heading_precision: str | None
    pretraining: bool
    header: list[str]
    columns: _Columns


@dataclass(frozen=True)
class _Row:
    """What one row states for all its throughput cells."""

    cells: list[str]
    model: str
    workload: str
    default_unit: str
    num_gpus: int
    sizes: dict[str, int] | int | None  # see _batch_sizes


class _Skip(Exception):
    """A table, row or cell the README does not state enough about; the reason is counted."""


def _read_table(table: _Table, readme: _Readme, result: ParsedTable) -> None:
    try:
        setting = _setting(table, readme)
    except _Skip as skip:
        result.skipped[str(skip)] += len(table.rows)
        return
    for cells in table.rows:
        if len(cells) != len(table.header):
            result.skipped["row with a different number of cells"] += 1
            continue
        try:
            row = _row(cells, setting, readme.title)
        except _Skip as skip:
            result.skipped[str(skip)] += len(setting.columns.throughput)
            continue
        for col in setting.columns.throughput:
            try:
                result.records.append(_record(col, row, setting, readme))
            except _Skip as skip:
                result.skipped[str(skip)] += 1


def _setting(table: _Table, readme: _Readme) -> _Setting:
    """The table's task, GPU, era and columns; raises _Skip when one is not stated."""
    nearest_first = table.headings[::-1]
    task = _task_of(nearest_first)
    if task is None:
        raise _Skip("table is neither training nor inference")
    if _column(table.header, r"^(?:num(?:ber of)?\s+)?nodes\b") is not None:
        raise _Skip("multi-node scaling table")
    gpu, system = _gpu_of(nearest_first, table.text_before, readme.known)
    if gpu is None:
        raise _Skip("no known GPU in the headings")
    columns = _columns(table.header)
    if not columns.throughput:
        raise _Skip("no throughput column")
    if task == "training" and columns.gpus is None:
        raise _Skip("training table without a GPUs column")
    return _Setting(
        task=task,
        gpu=gpu,
        system=system,
        software_era=_software_era(table.text_before, readme.era),
        section=nearest_first[0],
        heading_precision=_precision_in(nearest_first[0]),
        pretraining=any(re.search(r"pre-?training", h, re.I) for h in nearest_first[:2]),
        header=table.header,
        columns=columns,
    )


def _task_of(nearest_first: list[str]) -> str | None:
    """The nearest heading naming "inference" or "training"."""
    for heading in nearest_first:
        if re.search(r"inference|training", heading, re.I):
            return "inference" if "inference" in heading.lower() else "training"
    return None


def _gpu_of(
    nearest_first: list[str], text_before: str, known: frozenset[str] | None
) -> tuple[str | None, str]:
    """(gpu_id, system) from the nearest heading naming a system, else the section's sentence."""
    for heading in nearest_first:
        gpu = system_gpu_id(heading, known)
        if gpu is not None:
            return gpu, heading.split(": ", 1)[-1]  # "Training performance: NVIDIA DGX-1 ..."
    sentence = re.search(r"\bon\s+(?:a\s+|an\s+)?(NVIDIA[^.]*?)(?:\.|$)", text_before)
    if sentence:
        return system_gpu_id(sentence.group(1), known), sentence.group(1)
    return None, ""


def _software_era(text_before: str, era: str) -> str:
    """The era "dle-<NGC container>" from the section's container sentence, else `era`."""
    container = _CONTAINER.search(text_before) or _CONTAINER_NAME.search(text_before)
    return f"dle-{container.group(1)}" if container else era


def _columns(header: list[str]) -> _Columns:
    return _Columns(
        gpus=_column(header, r"^#?\s*(?:num(?:ber of)?\s+)?gpus?\b(?!\s*/)"),
        batch=_column(header, r"^batch\s*size"),
        precision=_column(header, r"^precision$"),
        model=_column(header, r"^model$"),
        seq=_column(header, r"^seq(?:uence)?\s*len"),
        throughput=[
            i
            for i, name in enumerate(header)
            if re.search(r"throughput", name, re.I)
            and not re.search(r"speedup|scaling", name, re.I)
        ],
    )


def _row(cells: list[str], setting: _Setting, title: str) -> _Row:
    """The row's model and GPU count; raises _Skip when either is unusable."""
    columns = setting.columns
    family = title
    if columns.model is not None and cells[columns.model]:
        family = f"{title} {cells[columns.model]}" if title else cells[columns.model]
    info = model_info(family.replace(" ", "_")) or model_info(family)
    if info is None:
        raise _Skip(f"model {family!r} has no workload class")
    model, workload, default_unit = info
    if setting.pretraining:
        model += "_pretraining"
    if columns.seq is not None and cells[columns.seq].strip().isdigit():
        model += f"_seq{cells[columns.seq].strip()}"
    num_gpus = 1  # an inference table without a GPUs column ran on one GPU
    if columns.gpus is not None:
        count = _number(cells[columns.gpus])
        if count is None or count < 1 or count != int(count):
            raise _Skip("GPU count not a whole number")
        num_gpus = int(count)
    batch = columns.batch
    sizes = _batch_sizes(cells[batch], setting.header[batch]) if batch is not None else None
    return _Row(cells, model, workload, default_unit, num_gpus, sizes)


def _record(col: int, row: _Row, setting: _Setting, readme: _Readme) -> BenchmarkRecord:
    """The record of one throughput cell; raises _Skip when its precision or value is missing."""
    header = setting.header[col]
    precision = _cell_precision(header, row.cells, setting)
    value = _number(row.cells[col])
    if value is None:
        raise _Skip("throughput cell is not a number")
    batch = _batch_for(row.sizes, precision)
    flags, details = [], []
    if batch is None:
        flags.append("no_batch_size")
        details.append("the table gives no batch size per GPU")
    return BenchmarkRecord(
        source=SOURCE,
        gpu=setting.gpu,
        gpu_name=setting.system,
        system=setting.system,
        model=row.model,
        workload_class=row.workload,
        task=setting.task,
        precision=precision,
        num_gpus=row.num_gpus,
        batch_size_per_gpu=batch,
        throughput=value,
        unit=_unit(header, row.cells[col], row.default_unit),
        software_era=setting.software_era,
        as_of=readme.as_of,
        citation=f"{readme.prefix} {readme.path} § {setting.section}",
        source_file=readme.source_file,
        flags=tuple(flags),
        flag_detail=tuple(details),
    )


def _cell_precision(header: str, cells: list[str], setting: _Setting) -> str:
    """The column header's precision, else the row's Precision cell, else the heading's."""
    col = setting.columns.precision
    precision = (
        _precision_in(header)
        or (_precision_in(cells[col]) if col is not None else None)
        or setting.heading_precision
    )
    if precision is None:
        raise _Skip("no precision in the header, row or heading")
    if precision == "fp32":
        # "FP32" on Ampere and newer ran as TF32 unless the header says otherwise.
        return fp32_precision(setting.gpu) if "tf32" not in header.lower() else "tf32"
    return precision


def _unit(header: str, cell: str, default_unit: str) -> str:
    """The header's unit ("(img/sec)"), else the cell's ("938 img/s"), else the model's."""
    unit_text = re.search(r"\(([^)]*/[^)]*)\)", header)
    cell_unit = re.search(r"[\d.]\s*([A-Za-z]+/[A-Za-z]+)", cell)
    return (
        (normalize_unit(unit_text.group(1)) if unit_text else None)
        or (normalize_unit(cell_unit.group(1)) if cell_unit else None)
        or default_unit
    )


def _batch_for(sizes: dict[str, int] | int | None, precision: str) -> int | None:
    """The batch size of one precision; bf16 runs share fp16's, tf32 falls back to fp32's."""
    if not isinstance(sizes, dict):
        return sizes
    key = "fp16" if precision in ("fp16", "bf16") else precision
    return sizes.get(key) or (sizes.get("fp32") if key == "tf32" else None)
