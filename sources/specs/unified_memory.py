"""How much of a unified-memory machine's memory its GPU may hold (`unified_memory.csv`).

A Mac Studio, a DGX Spark or a Ryzen AI Max PC shares one memory pool between the CPU and
the GPU. The operating system or driver caps what the GPU may wire: macOS's default
working-set limit (Metal's recommendedMaxWorkingSetSize, about three quarters of the
memory), AMD's largest dedicated allocation on Ryzen AI Max (96 of 128 GB). The LLM
memory fit uses that cap, not the machine's total (`gpus.llm_memory_gb`); a GPU without a
row keeps its whole memory.

The reader is strict: an unknown GPU, a GPU that is not a whole machine (form factor
`system`), a cap above the machine's memory, a bad cell or a repeated GPU is refused naming
file and line (sources.tables.BadInputError).
"""

from pathlib import Path

import polars as pl

from sources.tables import BadInputError, Column, https_url, read_table

UNIFIED_MEMORY = "unified_memory.csv"
_LINE = "_line"


def read_unified_memory(path: str | Path, sheet: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, gpu_memory_gb, basis, citation, source_url, as_of (one row per machine).

    `sheet` is the spec sheet (gpu_id, form_factor, memory_gb): each row's GPU must be a
    whole machine of the sheet, and its cap at most the machine's memory.
    """
    columns = [
        Column("gpu_id", choices=frozenset(sheet["gpu_id"].to_list())),
        Column("gpu_memory_gb", "float", exclusive_minimum=0),
        Column("basis"),
        Column("citation"),
        Column("source_url", check=https_url),
        Column("as_of", "date", not_future=True),
    ]
    frame = read_table(path, columns, unique=("gpu_id",), line_column=_LINE)
    machines = {g: (f, m) for g, f, m in sheet.select("gpu_id", "form_factor", "memory_gb").rows()}
    for row in frame.iter_rows(named=True):
        form, memory = machines[row["gpu_id"]]
        if form != "system":
            raise BadInputError(
                path, row[_LINE], "gpu_id", f"{row['gpu_id']} is not a whole machine ({form})"
            )
        if row["gpu_memory_gb"] > memory:
            raise BadInputError(
                path, row[_LINE], "gpu_memory_gb", f"above the machine's {memory:g} GB"
            )
    return frame.drop(_LINE)


def with_llm_memory(gpus: pl.DataFrame, caps: pl.DataFrame) -> pl.DataFrame:
    """`gpus` with `llm_memory_gb`: the GPU's cap where `caps` has one, else memory_gb."""
    return (
        gpus.join(caps.select("gpu_id", _cap="gpu_memory_gb"), on="gpu_id", how="left")
        .with_columns(llm_memory_gb=pl.coalesce("_cap", "memory_gb"))
        .drop("_cap")
    )
