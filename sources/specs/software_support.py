"""The software-support facts published with each GPU (`software_support.csv`, ours).

Which PyTorch stack runs a GPU today, as AMD's ROCm compatibility lists, PyTorch's CUDA
support matrix and its Intel GPU page state it: consumer Radeons on or off AMD's ROCm list
(and from which ROCm release), NVIDIA architectures whose kernels current PyTorch wheels
no longer ship (Kepler; Pascal and Volta only in the CUDA 12.6 legacy wheels), Intel Arc
as a prototype backend, Apple GPUs on a backend (MPS) outside the ranking's evidence. A
row covers one GPU (`gpu_id`) or every GPU of its architecture that has no row of its own.
Each row cites its source and the date it states.

The reader is strict: a bad cell, an architecture or GPU the spec sheet does not know, a
GPU filed under another architecture or vendor, or a repeated row is refused naming file
and line (sources.tables.BadInputError).
"""

import functools
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from sources.bundled import DATA_DIR, SPEC_SHEET, read_gpu_specs
from sources.tables import BadInputError, Column, https_url, read_table

SOFTWARE_SUPPORT = DATA_DIR / "specs" / "software_support.csv"

# What a row may say about a GPU under a stack.
STATUSES: dict[str, str] = {
    "supported": "on the vendor's or PyTorch's list of supported GPUs",
    "partial": "some GPUs of the architecture are on the list, others not (see the GPU rows)",
    "prototype": "the backend itself is a prototype in upstream PyTorch",
    "unofficial": "not on the vendor's list; runs, if at all, without support",
    "legacy-wheel-only": "kernels only in a legacy PyTorch wheel, not the default one",
    "unsupported": "no current PyTorch wheel has kernels for it",
    # Apple GPUs: PyTorch runs on them (MPS), but no benchmark the ranking is built from
    # (Lambda, DeepLearningExamples, MLPerf: CUDA and ROCm) measures that backend.
    "outside-ranking": "its PyTorch backend is not one the ranking's evidence measures",
}
# Statuses that keep a GPU out of every pick (headline, top-3, verdicts), whatever its
# estimate rests on (model/eligibility.py).
EXCLUDED_STATUSES = frozenset({"outside-ranking"})
# The PyTorch backends the statements are about.
SUPPORT_STACKS = frozenset({"pytorch-cuda", "pytorch-rocm", "pytorch-xpu", "pytorch-mps"})
VENDOR_STACKS = {
    "nvidia": "pytorch-cuda",
    "amd": "pytorch-rocm",
    "intel": "pytorch-xpu",
    "apple": "pytorch-mps",
}
_LINE = "_line"


def read_software_support(path: str | Path, catalog: pl.DataFrame | None = None) -> pl.DataFrame:
    """The cited software-support rows (vendor, architecture, gpu_id, stack, status, ...).

    `catalog` (gpu_id, vendor, architecture: the spec sheet) makes every architecture and
    GPU one the sheet knows, under the vendor and architecture it names there; without it
    only the cells are checked.
    """
    columns = [
        Column("vendor", choices=frozenset(VENDOR_STACKS)),
        Column("architecture"),
        Column("gpu_id", required=False),
        Column("stack", choices=SUPPORT_STACKS),
        Column("status", choices=frozenset(STATUSES)),
        Column("since", required=False),
        Column("detail"),
        Column("source_url", check=https_url),
        Column("as_of", "date", not_future=True),
    ]
    frame = read_table(path, columns, unique=("architecture", "gpu_id", "stack"), line_column=_LINE)
    if catalog is not None:
        _check_against(path, frame, catalog)
    return frame.drop(_LINE)


def _check_against(path: str | Path, frame: pl.DataFrame, catalog: pl.DataFrame) -> None:
    """Every row names an architecture (and GPU) of the sheet, of its vendor and stack."""
    vendor_of: Mapping[str, str] = dict(
        catalog.select("architecture", "vendor").unique().iter_rows()
    )
    gpu_of = {g: (v, a) for g, v, a in catalog.select("gpu_id", "vendor", "architecture").rows()}
    for row in frame.iter_rows(named=True):
        arch, gpu, line = row["architecture"], row["gpu_id"], row[_LINE]
        if arch not in vendor_of:
            raise BadInputError(path, line, "architecture", f"{arch!r} is not in the spec sheet")
        if vendor_of[arch] != row["vendor"]:
            raise BadInputError(path, line, "vendor", f"{arch} is {vendor_of[arch]} in the sheet")
        if row["stack"] != VENDOR_STACKS[row["vendor"]]:
            raise BadInputError(
                path, line, "stack", f"{row['vendor']} GPUs run {VENDOR_STACKS[row['vendor']]}"
            )
        if gpu is None:
            continue
        if gpu not in gpu_of:
            raise BadInputError(path, line, "gpu_id", f"{gpu!r} is not in the spec sheet")
        if gpu_of[gpu] != (row["vendor"], arch):
            raise BadInputError(
                path, line, "gpu_id", f"{gpu} is {gpu_of[gpu][0]} {gpu_of[gpu][1]} in the sheet"
            )


@functools.cache
def bundled_software_support() -> pl.DataFrame:
    """The bundled software-support file, checked against the bundled spec sheet."""
    return read_software_support(SOFTWARE_SUPPORT, read_gpu_specs(SPEC_SHEET))


def support_per_gpu(support: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """One row per GPU with a statement: its own row, else its architecture's.

    `gpus` needs gpu_id, vendor and architecture. GPUs without either have no row.
    """
    own = support.filter(pl.col("gpu_id").is_not_null())
    general = support.filter(pl.col("gpu_id").is_null()).drop("gpu_id")
    keys = gpus.select("gpu_id", "vendor", "architecture")
    by_arch = keys.join(general, on=["vendor", "architecture"]).join(
        own.select("gpu_id", "stack"), on=["gpu_id", "stack"], how="anti"
    )
    return (
        pl.concat([own.select(by_arch.columns), by_arch])
        .join(keys.select("gpu_id"), on="gpu_id")
        .sort("gpu_id", "stack")
    )
