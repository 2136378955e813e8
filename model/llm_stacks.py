"""The llama.cpp stack of a measured row and each vendor's reference stack.

Shared by the decode model (model/llm.py) and the prefill model (model/llm_prefill.py);
kept apart so that neither imports the other's module for them.
"""

import polars as pl

# The llama.cpp backend each vendor's GPUs are modelled (and preferred measured) under:
# the one people run them with (CUDA; ROCm/HIP, the backend AMD ships llama.cpp builds for;
# SYCL, Intel's). A stack's own decode model is used once it has rows on 3 GPUs.
# Apple GPUs run llama.cpp only on Metal.
REFERENCE_STACKS = {
    "nvidia": "llama.cpp-cuda",
    "amd": "llama.cpp-rocm",
    "intel": "llama.cpp-sycl",
    "apple": "llama.cpp-metal",
}


def row_stack(rows: pl.DataFrame) -> pl.Expr:
    """A row's software stack: its `stack` cell, else its engine name (old extracts)."""
    engine = pl.col("engine").str.to_lowercase()
    return pl.coalesce(pl.col("stack"), engine) if "stack" in rows.columns else engine
