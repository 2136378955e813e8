"""Published LLM serving measurements (`sources/data/benchmarks/llm/serving.csv`).

One row is one published measurement of a serving system: a GPU count running a model
in an engine at a precision, in a scenario (MLPerf Offline / Server / Interactive, or a
concurrency sweep point), with its whole-system output tokens/s. The file's columns are
the warehouse table `llm_serving_benchmarks`' (docs/schema.md); what each source's rows
mean is in sources/data/benchmarks/llm/MANIFEST.md, section "serving.csv".

Reading is pure (path in, Polars frame out) and strict: a cell out of its vocabulary, a
precision whose bits disagree with `precision_bits`, a per-user rate above the system
rate, a concurrency on an Offline row (or none on a sweep row) or a repeated measurement
is refused, naming file, line and field. Throughput is the whole system's; a per-GPU
figure is `output_tokens_per_s / num_gpus`, never stored.
"""

import dataclasses
from collections.abc import Collection
from pathlib import Path

import polars as pl

from sources.llm_models import model_ids as known_model_ids
from sources.tables import BadInputError, Column, read_table

ENGINES = frozenset({"tensorrt-llm", "vllm", "sglang", "llama.cpp", "mlx"})
# Weight format -> its bit class. fp4 is a 4-bit float the source does not name further
# (MLPerf's declared "fp4"); nvfp4 / mxfp4 where the source names the block format.
PRECISION_BITS = {
    "fp4": 4,
    "nvfp4": 4,
    "mxfp4": 4,
    "int4": 4,
    "fp8": 8,
    "int8": 8,
    "bf16": 16,
    "fp16": 16,
}
SCENARIOS = frozenset({"offline", "server", "interactive", "sweep"})
# Who published the rows (MANIFEST.md section per source).
SOURCES = frozenset({"mlperf", "tensorrt-llm-perf-overview", "yobitelcomm-bench"})

SERVING_COLUMNS = (
    Column("source", choices=SOURCES),
    Column("gpu_id"),
    Column("num_gpus", "int", minimum=1),
    Column("engine", choices=ENGINES),
    Column("engine_version", required=False),
    Column("model_id"),
    Column("precision", choices=frozenset(PRECISION_BITS)),
    Column(
        "precision_bits",
        "int",
        check=lambda v: None if v in (4, 8, 16) else f"{v} is not a bit class (4, 8 or 16)",
    ),
    Column("scenario", choices=SCENARIOS),
    Column("concurrency", "int", required=False, minimum=1),
    Column("input_tokens", "int", required=False, minimum=1),
    Column("output_tokens", "int", required=False, minimum=1),
    Column("output_tokens_per_s", "float", exclusive_minimum=0),
    Column("output_tokens_per_s_per_user", "float", required=False, exclusive_minimum=0),
    Column("ttft_ms", "float", required=False, exclusive_minimum=0),
    Column("tpot_ms", "float", required=False, exclusive_minimum=0),
    Column("power_w", "float", required=False, exclusive_minimum=0),
    Column("as_of", "date", not_future=True),
    Column("citation"),
)
COLUMN_NAMES = tuple(c.name for c in SERVING_COLUMNS)
# One measurement: everything that describes the run, and where it was published.
_KEY = (
    "source",
    "gpu_id",
    "num_gpus",
    "engine",
    "engine_version",
    "model_id",
    "precision",
    "scenario",
    "concurrency",
    "input_tokens",
    "output_tokens",
    "citation",
)
_LINE = "_line"


def _columns(gpu_ids: Collection[str] | None, model_ids: Collection[str]) -> list[Column]:
    """The declared columns, with the catalog's GPU ids and the known model ids."""
    chosen = {"model_id": frozenset(model_ids)}
    if gpu_ids is not None:
        chosen["gpu_id"] = frozenset(gpu_ids)
    return [
        dataclasses.replace(c, choices=chosen[c.name]) if c.name in chosen else c
        for c in SERVING_COLUMNS
    ]


def _row_problem(row: dict) -> tuple[str, str] | None:
    """(field, reason) for the first rule across cells a row breaks, else None."""
    bits = PRECISION_BITS[row["precision"]]
    if row["precision_bits"] != bits:
        return "precision_bits", f"{row['precision']} is {bits}-bit, not {row['precision_bits']}"
    per_user, system = row["output_tokens_per_s_per_user"], row["output_tokens_per_s"]
    if per_user is not None and per_user > system:
        return "output_tokens_per_s_per_user", f"{per_user:g} per user > {system:g} for the system"
    if row["scenario"] == "offline" and row["concurrency"] is not None:
        return "concurrency", "an offline row has no concurrency (the system chooses its batch)"
    if row["scenario"] == "sweep" and row["concurrency"] is None:
        return "concurrency", "a sweep point needs its concurrency"
    if not row["citation"].strip():
        return "citation", "missing value"
    return None


def read_serving_benchmarks(
    path: str | Path,
    gpu_ids: Collection[str] | None,
    model_ids: Collection[str] | None = None,
) -> pl.DataFrame:
    """The bundled serving measurements, one row each, in `llm_serving_benchmarks`' columns.

    Args:
        path: The CSV (header exactly `COLUMN_NAMES`; `#` lines are comments).
        gpu_ids: The catalog's ids (None: any id, for tests of other rules).
        model_ids: The model ids a row may name (default: the model table's,
            sources/data/llm/models.csv).

    Raises:
        BadInputError: A malformed cell, a row breaking a rule across cells, or a repeated
            measurement, naming file, line and field.
    """
    known = known_model_ids() if model_ids is None else model_ids
    frame = read_table(path, _columns(gpu_ids, known), unique=_KEY, line_column=_LINE)
    for row in frame.iter_rows(named=True):
        problem = _row_problem(row)
        if problem:
            raise BadInputError(path, row[_LINE], *problem)
    return frame.drop(_LINE)
