"""Debias published benchmark figures into comparable per-GPU throughput (Dettmers' method).

Two biases are removed (GUIDE section 4):
- batch size: bigger-memory GPUs are benchmarked at bigger batches, which raises throughput
  by about 13.6 % per doubling; every figure is moved to a reference batch size per model,
  t_ref = t * (1 + g) ** log2(b_ref / b);
- GPU count: an n-GPU result is turned into per-GPU throughput with t_1 = t_n / (n * e_n).

The constants g and e_n are Dettmers' or fitted from the data (pipeline/model/fit.py), per
`ModelParameters.constants`. Software eras are never corrected by a factor: every figure
keeps its table (source, era, file, model, precision) as a fixed effect in the relative-
performance fit, so eras are only bridged through GPUs measured in both (`era_term`).
"""

import datetime as dt

import polars as pl

from pipeline.model.fit import (
    efficiency_table,
    fit_constants,
    gain_lookup,
    is_lambda_bert,
    with_interconnect,
)
from pipeline.model.parameters import ModelParameters

# One published table: rows in it were measured the same way, so they compare directly.
# The citation (file/README) is part of it: one source can publish several tables of the
# same model (e.g. a PyTorch and a TensorRT inference table in NVIDIA's examples).
GROUP = ["source", "software_era", "citation", "model", "task", "precision"]


def workload_of() -> pl.Expr:
    """The workload a benchmark row informs, or null when no v0 workload uses it."""
    sixteen = pl.col("precision").is_in(["fp16", "bf16"])
    return (
        pl.when((pl.col("task") == "training") & sixteen)
        .then(pl.lit("training_16bit"))
        .when((pl.col("task") == "inference") & sixteen)
        .then(pl.lit("inference_16bit"))
        .otherwise(pl.lit(None, dtype=pl.Utf8))
    )


def select_comparable(results: pl.DataFrame) -> pl.DataFrame:
    """`comparable_candidates` without Lambda's multi-GPU BERT/SQuAD rows.

    Lambda's multi-GPU BERT figures are super-linear (sources/benchmarks/MANIFEST.md), so
    the scaling fit leaves them out (fit.candidate_pairs); turning one into per-GPU
    throughput with any e_n would be just as wrong, so a GPU that Lambda measured on BERT
    only on several GPUs gets no BERT figure. `lambda_bert_multi_gpu` counts them.
    """
    rows = comparable_candidates(results)
    return rows.filter(~(is_lambda_bert() & (pl.col("num_gpus") > 1)))


def lambda_bert_multi_gpu(results: pl.DataFrame) -> int:
    """How many comparable rows `select_comparable` leaves out as Lambda multi-GPU BERT."""
    return comparable_candidates(results).height - select_comparable(results).height


def comparable_candidates(results: pl.DataFrame) -> pl.DataFrame:
    """The rows the model would compare before the Lambda BERT exclusion.

    - Rows a v0 workload uses (16-bit training and inference).
    - Per GPU x model: the run with the fewest GPUs, so the multi-GPU correction is only
      applied where no single-GPU figure exists.
    - Inference tables are batch-size sweeps whose throughput grows far faster than 13.6 %
      per doubling at small batches, so the batch correction does not apply to them; we keep
      only the batch size most GPUs of that table were measured at.
    """
    # Flagged rows (missing, super-linear, outlier, ...; sources/benchmarks/flags.py) stay in
    # benchmark_results for inspection but never enter the model.
    if "flags" in results.columns:
        results = results.filter(pl.col("flags").fill_null("") == "")
    rows = results.with_columns(workload=workload_of()).filter(pl.col("workload").is_not_null())
    rows = rows.filter(pl.col("num_gpus") == pl.col("num_gpus").min().over(GROUP + ["gpu_id"]))
    modal = (
        rows.filter(pl.col("task") == "inference")
        .group_by(GROUP + ["batch_size_per_gpu"])
        .agg(n_gpus=pl.col("gpu_id").n_unique())
        .sort(["n_gpus", "batch_size_per_gpu"], descending=True)
        .group_by(GROUP, maintain_order=True)
        .first()
        .select(GROUP + [pl.col("batch_size_per_gpu").alias("_modal_bs")])
    )
    rows = rows.join(modal, on=GROUP, how="left", nulls_equal=True)
    return rows.filter(
        (pl.col("task") != "inference") | (pl.col("batch_size_per_gpu") == pl.col("_modal_bs"))
    ).drop("_modal_bs")


def era_term() -> pl.Expr:
    """The fixed effect a row's software era is absorbed into: its table (see GROUP)."""
    return pl.concat_str("source", "software_era", "citation", "model", "precision", separator="|")


def debias(
    results: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    constants: pl.DataFrame | None = None,
    gpus: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per comparable benchmark figure with each correction factor and the result.

    `constants` is `fit.fit_constants(...)` (both parameter sets with `used`); without it
    the constants are fitted here from `results`. Each row records the gain and efficiency
    it applied and where they came from (`dettmers:<key>` or `fitted:<key>`).
    """
    if constants is None:
        constants = fit_constants(results, gpus, params)
    gains = gain_lookup(constants)
    rows = with_interconnect(select_comparable(results), gpus)
    missing = set(rows["workload_class"].unique().to_list()) - set(gains)
    if missing:
        raise ValueError(f"no batch-size gain configured for workload classes {sorted(missing)}")
    table = efficiency_table(constants, params.constants).select(
        pl.col("num_gpus").cast(rows.schema["num_gpus"]),
        "interconnect",
        _eff="efficiency",
        _eff_src="source",
    )
    # A GPU count with neither a usable fit nor a configured constant (e.g. a 16-GPU-only
    # result) cannot be turned into per-GPU throughput: the row is left out, never guessed.
    # The asset reports how many (comparable rows minus debiased rows).
    rows = rows.join(table, on=["num_gpus", "interconnect"], how="left", nulls_equal=True).filter(
        pl.col("_eff").is_not_null()
    )
    gain_value = {cls: v for cls, (v, _) in gains.items()}
    gain_source = {cls: f"{kind}:{cls}" for cls, (_, kind) in gains.items()}
    rows = rows.with_columns(
        batch_size_ref=pl.col("batch_size_per_gpu").cast(pl.Float64).median().over(GROUP),
        _gain=pl.col("workload_class").replace_strict(gain_value, return_dtype=pl.Float64),
        _gain_src=pl.col("workload_class").replace_strict(gain_source, return_dtype=pl.Utf8),
        multi_gpu_efficiency=pl.col("_eff"),
    )
    training = pl.col("task") == "training"
    batch_factor = (
        pl.when(training)
        .then(
            (1 + pl.col("_gain")).pow(
                (pl.col("batch_size_ref") / pl.col("batch_size_per_gpu")).log(2)
            )
        )
        .otherwise(1.0)
    )
    return (
        rows.with_columns(
            batch_factor=batch_factor,
            batch_gain=pl.when(training).then(pl.col("_gain")),
            batch_gain_source=pl.when(training).then(pl.col("_gain_src")),
            efficiency_source=pl.col("_eff_src"),
        )
        .with_columns(
            throughput_per_gpu=pl.col("throughput")
            / (pl.col("num_gpus") * pl.col("multi_gpu_efficiency"))
            * pl.col("batch_factor"),
            run_date=pl.lit(run_date),
            parameter_set=pl.lit(params.constants),
            era_term=era_term(),
        )
        .select(
            "run_date",
            "source",
            "software_era",
            "citation",
            "gpu_id",
            "model",
            "workload_class",
            "task",
            "precision",
            "workload",
            "num_gpus",
            "batch_size_per_gpu",
            "throughput",
            "batch_size_ref",
            "batch_factor",
            "multi_gpu_efficiency",
            "throughput_per_gpu",
            "interconnect",
            "batch_gain",
            "batch_gain_source",
            "efficiency_source",
            "parameter_set",
            "era_term",
        )
        .sort("workload", "gpu_id", "source", "model")
    )
