"""The independent-evidence table as the methodology page shows it (issue 22 step 9)."""

import polars as pl

INDEPENDENT_NOTE = (
    "Each row is a GPU pair with a published ratio (`sources/data/benchmarks/"
    "independent/independent_ratios.csv`, cited there): MLPerf same round and benchmark (median "
    "per-GPU figure of each GPU's systems), Lambda's PyTorch tables (1 GPU, fp16, "
    "transformer models) and llama.cpp tables. *Ours* is the ratio of this run's "
    "`relative_performance` values, or for `llm_decode` / `llm_prefill` of the modelled "
    "8B 4-bit one-GPU row of `llm_throughput`. A pair passes within a factor 1 + tolerance "
    "either way; the tolerance follows the rule in docs/methodology.md (Independent "
    "evidence): 15 % for one round, table or era, x 1.10 when one side is a single "
    "system, 30 % across sources, 35 % for a proxy, widened by twice the standard error "
    "of their figures. *in_fit*: both "
    "figures are rows the model is fitted on, so agreement is expected and is not "
    "independent confirmation; *one_side*: one of them; *independent*: neither. A failing "
    "enforced pair stops the run (blocking check `independent_ratios_within_tolerance`); "
    "*fails (not enforced)* marks a pair switched off until the model change that "
    "addresses it lands."
)


def independent_table(checks: pl.DataFrame) -> pl.DataFrame:
    """One line per pair: ours beside theirs, how far off, the tolerance and the verdict."""
    verdict = (
        pl.when(pl.col("ours").is_null())
        .then(pl.lit("no value"))
        .when(pl.col("passed"))
        .then(pl.lit("passes"))
        .when(pl.col("enforced"))
        .then(pl.lit("FAILS"))
        .otherwise(pl.lit("fails (not enforced)"))
    )
    return checks.sort("workload", "gpu_a", "gpu_b", "source", "benchmark").select(
        pair=pl.concat_str("gpu_a", "gpu_b", separator=" / "),
        workload="workload",
        ours="ours",
        their_ratio="their_ratio",
        off_pct=(pl.col("log_error").exp() - 1) * 100,
        tolerance_pct=pl.col("tolerance") * 100,
        verdict=verdict,
        independence="independence",
        source="source",
        benchmark="benchmark",
        as_of=pl.col("as_of").cast(pl.Utf8),
    )
