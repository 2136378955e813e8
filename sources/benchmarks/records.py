"""What a benchmark adapter returns: one record per published figure, plus what it skipped.

A figure the source marks as not measured (Lambda's 0) is kept with `throughput` None and
the flag `missing`; a figure without a usable per-GPU batch size keeps `batch_size_per_gpu`
None and the flag `no_batch_size`. Cross-row flags (super-linear scaling, outliers, batch
size changes) are added later by `sources.benchmarks.flags` over the whole set.
"""

import datetime as dt
from collections import Counter
from dataclasses import dataclass, field

import polars as pl

from sources.benchmarks.provenance import with_benchmark_provenance


class MalformedFile(ValueError):
    """The input is not in the adapter's format (missing columns, no tables, bad header)."""


@dataclass(frozen=True)
class BenchmarkRecord:
    """One published measurement, in the warehouse's `benchmark_results` terms."""

    source: str  # lambda, nvidia-dle, mlperf
    gpu: str | None  # canonical gpu_id; None when the source's GPU name is unknown
    gpu_name: str  # the source's own GPU or system name, kept for the unknown-name report
    system: str  # the source's name for the machine (row label, table heading, system name)
    model: str
    workload_class: str  # cnn, transformer, rnn
    task: str  # training, inference
    precision: str
    num_gpus: int
    batch_size_per_gpu: int | None
    throughput: float | None  # of the whole run (all GPUs), as published; None = missing
    unit: str
    software_era: str
    as_of: dt.date
    citation: str
    source_file: str = ""
    flags: tuple[str, ...] = ()  # parse-time flags: missing, no_batch_size
    flag_detail: tuple[str, ...] = ()
    extra: dict[str, object] = field(default_factory=dict, compare=False)

    def to_cli(self) -> dict[str, object]:
        """The JSON object `python -m sources parse <format>` prints for this record."""
        return {
            "gpu": self.gpu,
            "gpu_name": self.gpu_name,
            "model": self.model,
            "task": self.task,
            "precision": self.precision,
            "num_gpus": self.num_gpus,
            "batch_size_per_gpu": self.batch_size_per_gpu,
            "throughput": self.throughput,
            "unit": self.unit,
            "flags": ",".join(sorted(self.flags)),
            **self.extra,
        }


@dataclass
class ParsedTable:
    """An adapter's result: the records, and counts of what it could not use and why."""

    records: list[BenchmarkRecord] = field(default_factory=list)
    skipped: Counter = field(
        default_factory=Counter
    )  # reason -> cells/rows not turned into records

    @property
    def unknown_gpus(self) -> Counter:
        """Source GPU names with no canonical id -> number of figures."""
        return Counter(r.gpu_name for r in self.records if r.gpu is None)

    def extend(self, other: "ParsedTable") -> None:
        """Add another table's records and skip counts."""
        self.records += other.records
        self.skipped.update(other.skipped)


FRAME_SCHEMA = {
    "source": pl.Utf8,
    "gpu_id": pl.Utf8,
    "model": pl.Utf8,
    "workload_class": pl.Utf8,
    "task": pl.Utf8,
    "precision": pl.Utf8,
    "num_gpus": pl.Int64,
    "batch_size_per_gpu": pl.Int64,
    "throughput": pl.Float64,
    "unit": pl.Utf8,
    "software_era": pl.Utf8,
    "as_of": pl.Date,
    "citation": pl.Utf8,
    "system": pl.Utf8,
    "source_file": pl.Utf8,
    "flags": pl.Utf8,
    "flag_detail": pl.Utf8,
    # Provenance (sources.benchmarks.provenance), derived from the source's own words.
    "stack": pl.Utf8,
    "host": pl.Utf8,
    "batch_regime": pl.Utf8,
}


def records_frame(records: list[BenchmarkRecord]) -> pl.DataFrame:
    """Rows for `benchmark_results` from the records with a known GPU.

    Records with an unknown GPU are counted by the caller (`ParsedTable.unknown_gpus`),
    never written with a guessed id. Stack, host and batch regime are set by the rules of
    `sources.benchmarks.provenance` (NULL where the source does not say).
    """
    rows = [
        {
            "source": r.source,
            "gpu_id": r.gpu,
            "model": r.model,
            "workload_class": r.workload_class,
            "task": r.task,
            "precision": r.precision,
            "num_gpus": r.num_gpus,
            "batch_size_per_gpu": r.batch_size_per_gpu,
            "throughput": r.throughput,
            "unit": r.unit,
            "software_era": r.software_era,
            "as_of": r.as_of,
            "citation": r.citation,
            "system": r.system,
            "source_file": r.source_file,
            "flags": ",".join(sorted(r.flags)),
            "flag_detail": "; ".join(r.flag_detail),
            "stack": None,
            "host": None,
            "batch_regime": None,
        }
        for r in records
        if r.gpu is not None
    ]
    return with_benchmark_provenance(pl.DataFrame(rows, schema=FRAME_SCHEMA))
