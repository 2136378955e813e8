"""Our ratios beside independently published ones, each with its tolerance (issue 22 step 9).

The pairs are pinned in a bundled, cited file
(`sources/data/benchmarks/independent/independent_ratios.csv`, with its MANIFEST.md): a
published ratio gpu_a / gpu_b (MLPerf same round, Lambda PyTorch, llama.cpp tables) and a
relative tolerance set by a documented rule from the class of the evidence and the spread
of its figures. This module joins them with the run's own figures:

- `training_16bit`, `inference_16bit`, `inference_8bit`: `relative_performance` values;
- `llm_decode`, `llm_prefill`: the modelled batch-1 rows of `llm_throughput` for the
  8B-class model at 4 bits on one GPU (`LLM_ROW`), the rows that place a GPU without its
  own measurement and feed the cost table. A llama.cpp pair measured on Llama 2 7B or
  Llama 3 8B is compared with that row: a GPU/GPU ratio of a bandwidth-bound (decode) or
  compute-bound (prefill) pass barely depends on 7B vs 8B.

A pair passes when |ln(ours / theirs)| <= ln(1 + tolerance): the same factor either way.
`model/comparison.py` shows the raw-row ratios of chosen pairs without tolerances; this
table is the pinned, checked one the blocking asset check reads.
"""

import math

import polars as pl

# (model_params_b, bits, num_gpus) of the llm_throughput rows llama.cpp pairs are compared with.
LLM_ROW = (8, 4, 1)
LLM_COLUMNS = {"llm_decode": "decode_tokens_per_s", "llm_prefill": "prefill_tokens_per_s"}

SCHEMA = {
    "run_date": pl.Date,
    "gpu_a": pl.Utf8,
    "gpu_b": pl.Utf8,
    "workload": pl.Utf8,
    "benchmark": pl.Utf8,
    "source": pl.Utf8,
    "their_ratio": pl.Float64,
    "ours": pl.Float64,
    "ours_a": pl.Float64,
    "ours_b": pl.Float64,
    "log_error": pl.Float64,
    "tolerance": pl.Float64,
    "passed": pl.Boolean,
    "enforced": pl.Boolean,
    "independence": pl.Utf8,
    "ours_basis": pl.Utf8,
    "citation": pl.Utf8,
    "as_of": pl.Date,
    "note": pl.Utf8,
}


def our_values(relative: pl.DataFrame, llm: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, workload, value, basis: every figure a published pair may be compared with.

    `relative` is the run's relative_performance, `llm` its llm_throughput. Only the
    modelled LLM rows count (a measured row is the benchmark itself, not our estimate).
    """
    rel = relative.select(
        "gpu_id",
        "workload",
        "value",
        basis=pl.concat_str(pl.col("method"), pl.col("evidence").fill_null("?"), separator=": "),
    )
    size, bits, gpus = LLM_ROW
    modelled = llm.filter(
        pl.col("method").str.starts_with("modelled")
        & (pl.col("model_params_b") == size)
        & (pl.col("bits") == bits)
        & (pl.col("num_gpus") == gpus)
    )
    parts = [rel]
    for workload, column in LLM_COLUMNS.items():
        parts.append(
            modelled.filter(pl.col(column).is_not_null()).select(
                "gpu_id",
                workload=pl.lit(workload),
                value=pl.col(column),
                basis=pl.col("method"),
            )
        )
    return pl.concat(parts, how="vertical_relaxed").unique(["gpu_id", "workload"], keep="first")


def within(log_error: float | None, tolerance: float) -> bool:
    """A ratio within its relative tolerance, the same factor either way (False: no value)."""
    return log_error is not None and abs(log_error) <= math.log1p(tolerance) + 1e-12


def independent_checks(
    pairs: pl.DataFrame, relative: pl.DataFrame, llm: pl.DataFrame, run_date
) -> pl.DataFrame:
    """One row per published pair: ours beside theirs, the log error, tolerance and verdict.

    `pairs` is `sources.bundled.read_independent_ratios`' frame. A pair one of whose GPUs
    has no figure in this run keeps a NULL `ours` and does not pass.
    """
    ours = our_values(relative, llm)
    side = {
        s: ours.rename({"gpu_id": f"gpu_{s}", "value": f"ours_{s}", "basis": f"basis_{s}"})
        for s in ("a", "b")
    }
    joined = pairs.join(side["a"], on=["gpu_a", "workload"], how="left").join(
        side["b"], on=["gpu_b", "workload"], how="left"
    )
    out = joined.with_columns(ours=pl.col("ours_a") / pl.col("ours_b")).with_columns(
        log_error=(pl.col("ours") / pl.col("their_ratio")).log(),
        ours_basis=pl.concat_str(pl.col("basis_a"), pl.col("basis_b"), separator=" / "),
        run_date=pl.lit(run_date, dtype=pl.Date),
    )
    passed = [
        within(e, t) for e, t in zip(out["log_error"].to_list(), out["tolerance"], strict=True)
    ]
    return out.with_columns(passed=pl.Series(passed, dtype=pl.Boolean)).select(
        [pl.col(c).cast(t) for c, t in SCHEMA.items()]
    )


def describe(row: dict) -> str:
    """One pair in words: which, where from, ours beside theirs and how far apart."""
    name = f"{row['gpu_a']}/{row['gpu_b']} {row['workload']} ({row['source']}, {row['benchmark']})"
    if row["ours"] is None:
        return f"{name}: no value in this run (theirs {row['their_ratio']:.3f})"
    off = math.exp(row["log_error"]) - 1
    return (
        f"{name}: ours {row['ours']:.3f} vs theirs {row['their_ratio']:.3f}, "
        f"{off:+.0%} against a tolerance of ±{row['tolerance']:.0%}"
    )


def independent_problems(checks: pl.DataFrame) -> list[str]:
    """The enforced pairs outside their tolerance (or without a value), named."""
    failing = checks.filter(pl.col("enforced") & ~pl.col("passed"))
    return [describe(r) for r in failing.sort("workload", "gpu_a", "gpu_b").iter_rows(named=True)]
