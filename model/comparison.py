"""Our ratios beside the public evidence: MLPerf, Lambda and Dettmers' statements.

For chosen GPU pairs, the model's ratio (relative_performance) next to what each public
source shows directly, computed from the raw `benchmark_results` rows without any of the
model's corrections: per table (MLPerf: round x benchmark x precision class; Lambda:
era x model, fp16, 1 GPU), the ratio of the two GPUs' median per-GPU throughput where both
appear, then the geometric mean over tables. MLPerf rows are single-node systems (at most
8 GPUs) divided by their GPU count alone. Dettmers' statements are quoted from the seed
posts with their line numbers. These are inputs too, so agreement is expected where a
pair is measured; the table shows how far the fit moves a pair (other tables, the
bridge) and where there is no public evidence at all.
"""

import numpy as np
import polars as pl

# (GPU, compared with, workload): the pairs people ask about.
PAIRS = (
    ("h100-sxm5-80gb", "a100-sxm4-80gb", "training_16bit"),
    ("b200", "h100-sxm5-80gb", "training_16bit"),
    ("h200-sxm", "h100-sxm5-80gb", "training_16bit"),
    ("mi300x", "h100-sxm5-80gb", "training_16bit"),
    ("mi325x", "h200-sxm", "training_16bit"),
    ("mi355x", "b200", "training_16bit"),
    ("a100-sxm4-40gb", "v100-sxm2-16gb", "training_16bit"),
    ("a100-sxm4-40gb", "a100-sxm4-80gb", "training_16bit"),
    ("a30", "a100-sxm4-80gb", "training_16bit"),
    ("l40s", "a100-sxm4-80gb", "training_16bit"),
    ("h100-pcie-80gb", "h100-sxm5-80gb", "training_16bit"),
    ("rtx-4090", "a100-sxm4-80gb", "training_16bit"),
    ("rtx-6000-ada", "rtx-a6000", "training_16bit"),
    ("rx-7900-xtx", "rtx-4090", "training_16bit"),
    ("rtx-5090", "rtx-4090", "training_16bit"),
    ("h200-sxm", "h100-sxm5-80gb", "inference_16bit"),
    ("mi300x", "h100-sxm5-80gb", "inference_16bit"),
    ("l40s", "h100-sxm5-80gb", "inference_16bit"),
    ("a100-sxm4-40gb", "a100-sxm4-80gb", "inference_16bit"),
    ("rtx-4090", "h100-sxm5-80gb", "inference_8bit"),
    ("mi325x", "h200-sxm", "inference_8bit"),
    ("l4", "l40s", "inference_8bit"),
)
# Dettmers' statements about a pair (seeds/parameters.md line references).
DETTMERS = {
    ("a100-sxm4-40gb", "v100-sxm2-16gb", "training_16bit"): "1.45 vision to 1.70 NLP (B304-312)",
    ("rtx-4090", "h100-sxm5-80gb", "inference_8bit"): "about 0.33 (B536)",
}
_MLPERF_CLASS = {
    "training_16bit": ("training", ("mixed", "fp16", "bf16")),
    "inference_16bit": ("inference", ("fp16", "bf16")),
    "inference_8bit": ("inference", ("int8", "fp8")),
}
_BAD_FLAGS = ("missing", "outlier")


def _per_table(rows: pl.DataFrame) -> pl.DataFrame:
    """table, gpu_id, median per-GPU throughput."""
    return rows.group_by("table", "gpu_id").agg(
        per_gpu=(pl.col("throughput") / pl.col("num_gpus")).median()
    )


def _ratio(tables: pl.DataFrame, a: str, b: str) -> tuple[float | None, int]:
    both = tables.filter(pl.col("gpu_id") == a).join(
        tables.filter(pl.col("gpu_id") == b), on="table", suffix="_b"
    )
    if both.is_empty():
        return None, 0
    logs = np.log(both["per_gpu"].to_numpy() / both["per_gpu_b"].to_numpy())
    return float(np.exp(logs.mean())), both.height


def _clean(results: pl.DataFrame) -> pl.DataFrame:
    rows = results.filter(pl.col("throughput").is_not_null() & (pl.col("throughput") > 0))
    bad = pl.col("flags").fill_null("").str.contains("|".join(_BAD_FLAGS))
    return rows.filter(~bad) if "flags" in rows.columns else rows


def comparison_table(relative: pl.DataFrame, results: pl.DataFrame) -> pl.DataFrame:
    """One row per pair: ours (with method and interval), MLPerf, Lambda, Dettmers."""
    value = {(r["gpu_id"], r["workload"]): r for r in relative.iter_rows(named=True)}
    clean = _clean(results)
    out = []
    for a, b, workload in PAIRS:
        ra, rb = value.get((a, workload)), value.get((b, workload))
        if ra is None or rb is None:
            continue
        task, precisions = _MLPERF_CLASS[workload]
        mlperf = _per_table(
            clean.filter(
                (pl.col("source") == "mlperf")
                & (pl.col("task") == task)
                & pl.col("precision").is_in(precisions)
                & (pl.col("num_gpus") <= 8)
            ).with_columns(table=pl.concat_str("software_era", "model", "precision"))
        )
        lambda_rows = _per_table(
            clean.filter(
                (pl.col("source") == "lambda")
                & (pl.col("task") == task)
                & (pl.col("precision") == "fp16")
                & (pl.col("num_gpus") == 1)
            ).with_columns(table=pl.concat_str("software_era", "model"))
        )
        m, m_n = _ratio(mlperf, a, b)
        lam, l_n = (None, 0) if workload != "training_16bit" else _ratio(lambda_rows, a, b)
        ours = ra["value"] / rb["value"]
        out.append(
            {
                "workload": workload,
                "gpu": a,
                "compared_with": b,
                "ours": ours,
                "ours_basis": f"{ra['evidence']} / {rb['evidence']}",
                "mlperf": m,
                "mlperf_tables": m_n,
                "lambda": lam,
                "lambda_tables": l_n,
                "dettmers": DETTMERS.get((a, b, workload)),
            }
        )
    schema = {
        "workload": pl.Utf8,
        "gpu": pl.Utf8,
        "compared_with": pl.Utf8,
        "ours": pl.Float64,
        "ours_basis": pl.Utf8,
        "mlperf": pl.Float64,
        "mlperf_tables": pl.Int64,
        "lambda": pl.Float64,
        "lambda_tables": pl.Int64,
        "dettmers": pl.Utf8,
    }
    return pl.DataFrame(out, schema=schema)
