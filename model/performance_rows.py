"""The rows every relative-performance workload is built from, and its output frame.

A workload is assembled in logs relative to the reference GPU (`log_row`), then turned
into values with their 95 % interval (`workload_frame`).
"""

import polars as pl


def log_row(gpu, log_value, low, high, method, evidence, n, interval_method) -> dict:
    """One output row in logs: `low`/`high` are offsets from `log_value` (None: unknown)."""
    return {
        "gpu_id": gpu,
        "log_value": log_value,
        "log_low": log_value + low if low is not None else None,
        "log_high": log_value + high if high is not None else None,
        "method": method,
        "evidence": evidence,
        "n_results": int(n or 0),
        "interval_method": interval_method,
    }


ROW_SCHEMA = {
    "gpu_id": pl.Utf8,
    "log_value": pl.Float64,
    "log_low": pl.Float64,
    "log_high": pl.Float64,
    "method": pl.Utf8,
    "evidence": pl.Utf8,
    "n_results": pl.Int64,
    "interval_method": pl.Utf8,
}


def workload_frame(rows: list[dict], workload: str) -> pl.DataFrame:
    """`log_row` rows of one workload as values (exp of the logs) with their interval."""
    return pl.DataFrame(rows, schema=ROW_SCHEMA).select(
        "gpu_id",
        pl.lit(workload).alias("workload"),
        value=pl.col("log_value").exp(),
        method="method",
        evidence="evidence",
        n_results="n_results",
        value_low=pl.col("log_low").exp(),
        value_high=pl.col("log_high").exp(),
        interval_method="interval_method",
    )


REFERENCE_8BIT = "reference GPU: 1 by definition (8-bit values are relative to its 8-bit speed)"


def reference_text(workload: str) -> str:
    """Why the reference GPU's row is exactly 1 where it has no measurement."""
    if workload == "inference_8bit":
        return REFERENCE_8BIT
    return f"reference GPU: 1 by definition ({workload} values are relative to its speed)"
