"""Debias published benchmark figures into comparable per-GPU throughput (Dettmers' method).

Two biases are removed (GUIDE section 4):
- batch size: bigger-memory GPUs are benchmarked at bigger batches, which raises throughput
  by about 13.6 % per doubling; every figure is moved to a reference batch size per model,
  t_ref = t * (1 + g) ** log2(b_ref / b);
- GPU count: an n-GPU result is turned into per-GPU throughput with t_1 = t_n / (n * e_n).

The constants g and e_n are Dettmers' or fitted from the data (model/fit.py), per
`ModelParameters.constants`. Software eras are never corrected by a factor: every figure
keeps its table (source, era, file, model, precision) as a fixed effect in the relative-
performance fit, so eras are only bridged through GPUs measured in both (`era_term`). An
MLPerf Training transformer/LLM table is split into its FP8 and its 16-bit runs by the
GPU's architecture (model/training_precision.py).
"""

import datetime as dt

import polars as pl

from model.evidence import not_placing, placing_rows
from model.fit import (
    efficiency_table,
    fit_constants,
    gain_lookup,
    is_lambda_bert,
    untolerated_flags,
    with_interconnect,
    with_interpolated_counts,
)
from model.parameters import ModelParameters
from model.training_precision import table_precision
from sources.benchmarks.flags import ROUND_IS_TABLE

# One published table: rows in it were measured the same way, so they compare directly.
# The citation (file/README) is part of it: one source can publish several tables of the
# same model (e.g. a PyTorch and a TensorRT inference table in NVIDIA's examples). MLPerf
# cites one system's result per row; its table is the round x benchmark x precision
# (`table_citation` is empty for it, as in sources/benchmarks/flags.py).
GROUP = ["source", "software_era", "table_citation", "model", "task", "precision"]
# Flags that do not disqualify an MLPerf figure: MLPerf publishes no inference batch size,
# and time to train legitimately changes with the node count and global batch (more
# epochs at a bigger batch), which the throughput-table flags read as scaling faults.
MLPERF_TOLERATED_FLAGS = frozenset({"no_batch_size", "batch_changed", "super_linear"})
MLPERF_TRAINING_UNIT = "trainings/h"


def workload_of() -> pl.Expr:
    """The workload a benchmark row informs, or null when no workload uses it.

    16-bit: fp16/bf16, and MLPerf Training's unpublished mixed precision (AMP fp16/bf16,
    FP8 for some LLM benchmarks on Hopper/Blackwell/CDNA3; docs/methodology.md §3).
    8-bit inference: int8 and fp8 (the precision class MLPerf Inference submitters and
    NVIDIA's INT8 tables use).
    """
    sixteen = pl.col("precision").is_in(["fp16", "bf16"])
    mlperf_mixed = (pl.col("source") == "mlperf") & (pl.col("precision") == "mixed")
    eight = pl.col("precision").is_in(["int8", "fp8"])
    training, inference = pl.col("task") == "training", pl.col("task") == "inference"
    return (
        pl.when(training & (sixteen | mlperf_mixed))
        .then(pl.lit("training_16bit"))
        .when(inference & sixteen)
        .then(pl.lit("inference_16bit"))
        .when(inference & eight)
        .then(pl.lit("inference_8bit"))
        .otherwise(pl.lit(None, dtype=pl.Utf8))
    )


def table_citation() -> pl.Expr:
    """The citation part of a row's table: empty for sources whose rows are systems."""
    return (
        pl.when(pl.col("source").is_in(ROUND_IS_TABLE))
        .then(pl.lit(""))
        .otherwise(pl.col("citation"))
    )


def usable_flags() -> pl.Expr:
    """True when a row's flags do not bar it from the model (MLPERF_TOLERATED_FLAGS)."""
    mlperf_ok = untolerated_flags(MLPERF_TOLERATED_FLAGS).list.len() == 0
    return (untolerated_flags().list.len() == 0) | ((pl.col("source") == "mlperf") & mlperf_ok)


def era_date() -> pl.Expr:
    """When a row's software was current; null when unknown.

    The MLPerf round's publication date, or the container month of an era like
    `dle-20.06` or `dle-2024-04`.
    """
    short = pl.col("software_era").str.extract(r"(\d{2})\.(\d{2})$", 0)
    long = pl.col("software_era").str.extract(r"(\d{4}-\d{2})$", 1)
    from_short = pl.concat_str(
        pl.lit("20"), short.str.replace(".", "-", literal=True), pl.lit("-01")
    )
    return (
        pl.when(pl.col("source") == "mlperf")
        .then(pl.col("as_of").cast(pl.Date))
        .when(short.is_not_null())
        .then(from_short.str.to_date("%Y-%m-%d", strict=False))
        .when(long.is_not_null())
        .then(pl.concat_str(long, pl.lit("-01")).str.to_date("%Y-%m-%d", strict=False))
    )


def launch_window(days: int) -> pl.Expr:
    """True for a figure measured with software from the GPU's first `days` days.

    Needs the row's `release_date`. Launch-time software underrates a new GPU relative to
    the older GPUs it is compared with in the same table: NVIDIA's June 2020 TensorFlow
    containers ran ResNet-50 and BERT inference on the A100 at 1.2x the V100, against about
    2x one year on (MLPerf Inference v0.7 -> v1.0); such a figure would pin the GPU's ratio
    to launch-day kernels.
    """
    released = pl.col("release_date").cast(pl.Date)
    return ((era_date() - released).dt.total_days() < days).fill_null(False)


def without_launch_window(rows: pl.DataFrame, gpus: pl.DataFrame | None, days: int) -> pl.DataFrame:
    """`rows` less the figures measured in their GPU's launch window (`launch_window`)."""
    if gpus is None or "release_date" not in gpus.columns or days <= 0:
        return rows
    dated = rows.join(gpus.select("gpu_id", "release_date"), on="gpu_id", how="left")
    return dated.filter(~launch_window(days)).drop("release_date")


def select_comparable(results: pl.DataFrame, mlperf_max_gpus: int = 8) -> pl.DataFrame:
    """`comparable_candidates` without Lambda's multi-GPU BERT/SQuAD rows.

    Lambda's multi-GPU BERT figures are super-linear (sources/benchmarks/MANIFEST.md), so
    the scaling fit leaves them out (fit.candidate_pairs); turning one into per-GPU
    throughput with any e_n would be just as wrong, so a GPU that Lambda measured on BERT
    only on several GPUs gets no BERT figure. `lambda_bert_multi_gpu` counts them.
    """
    rows = comparable_candidates(results, mlperf_max_gpus)
    return rows.filter(~(is_lambda_bert() & (pl.col("num_gpus") > 1)))


def lambda_bert_multi_gpu(results: pl.DataFrame) -> int:
    """How many comparable rows `select_comparable` leaves out as Lambda multi-GPU BERT."""
    return comparable_candidates(results).height - select_comparable(results).height


def mlperf_multi_node(results: pl.DataFrame, mlperf_max_gpus: int = 8) -> int:
    """How many otherwise usable MLPerf rows are left out for using more than one node."""
    rows = results.with_columns(workload=workload_of()).filter(
        pl.col("workload").is_not_null()
        & (pl.col("source") == "mlperf")
        & (pl.col("num_gpus") > mlperf_max_gpus)
    )
    return rows.filter(usable_flags()).height if "flags" in rows.columns else rows.height


def rows_not_placing(results: pl.DataFrame) -> int:
    """How many rows a workload would use that may not place a GPU (model/evidence.py)."""
    return not_placing(
        results.with_columns(workload=workload_of()).filter(pl.col("workload").is_not_null())
    )


def comparable_candidates(results: pl.DataFrame, mlperf_max_gpus: int = 8) -> pl.DataFrame:
    """The rows the model would compare before the Lambda BERT exclusion.

    - Rows that may place a GPU (model/evidence.py): no tinygrad, no constrained host.
    - Rows a workload uses (16-bit training, 16- and 8-bit inference).
    - MLPerf: single-node systems only (at most `mlperf_max_gpus`): beyond one node the
      interconnect, the global batch and so the epochs to converge change, which no
      per-GPU efficiency of a workstation or server describes.
    - Per GPU x model: the run with the fewest GPUs, so the multi-GPU correction is only
      applied where no single-GPU figure exists. MLPerf Inference keeps every single-node
      system (`is_mlperf_inference`).
    - Inference tables are batch-size sweeps whose throughput grows far faster than 13.6 %
      per doubling at small batches, so the batch correction does not apply to them; we keep
      only the batch size most GPUs of that table were measured at (MLPerf: none given).
    """
    # Flagged rows (missing, super-linear, outlier, ...; sources/benchmarks/flags.py) stay in
    # benchmark_results for inspection but never enter the model (MLPerf: see
    # MLPERF_TOLERATED_FLAGS).
    if "flags" in results.columns:
        results = results.filter(usable_flags())
    # Evidence from a non-mainstream stack or a constrained host stays in benchmark_results
    # (with its stack and host) but never places a GPU; the asset reports how many.
    results = placing_rows(results)
    rows = results.with_columns(workload=workload_of(), table_citation=table_citation()).filter(
        pl.col("workload").is_not_null()
        & ((pl.col("source") != "mlperf") | (pl.col("num_gpus") <= mlperf_max_gpus))
    )
    fewest = pl.col("num_gpus") == pl.col("num_gpus").min().over(GROUP + ["gpu_id"])
    rows = rows.filter(is_mlperf_inference() | fewest)
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
        (pl.col("task") != "inference")
        | pl.col("batch_size_per_gpu").eq_missing(pl.col("_modal_bs"))
    ).drop("_modal_bs")


def is_mlperf_inference() -> pl.Expr:
    """True for an MLPerf Inference row: a whole system's Offline throughput.

    Offline throughput is served by independent replicas over a sample queue with no
    gradient exchange, so system throughput / GPU count is the per-GPU figure at any node
    size (`_with_efficiency` gives inference rows efficiency 1, never a training e_n).
    `comparable_candidates` therefore keeps every single-node system of such a table, not
    only the fewest-GPU one: in v4.1 Llama-2-70B fp16 the H200's only 1-GPU submission
    runs 14 % above the median of its eight 8-GPU systems and the H100's 4-GPU systems
    12 % below its ten 8-GPU ones, so the fewest-GPU rows alone gave H200/H100 1.69 where
    the 8-GPU systems give 1.31. The fit takes the mean log figure of a GPU's systems in a
    table, so one unusual configuration counts as one system among nine, and no GPU is
    dropped from a table for being submitted at another node size than the others.
    """
    return (pl.col("source") == "mlperf") & (pl.col("task") == "inference")


def era_term(precision: pl.Expr | None = None) -> pl.Expr:
    """The fixed effect a row's software era is absorbed into: its table (see GROUP).

    `precision` is the table's precision part: by default the row's `precision`; `debias`
    passes `table_precision`, which splits MLPerf Training transformer/LLM tables into FP8
    and 16-bit runs (model/training_precision.py).
    """
    part = pl.col("precision") if precision is None else precision
    return pl.concat_str("source", "software_era", table_citation(), "model", part, separator="|")


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
    rows = without_launch_window(
        with_interconnect(select_comparable(results, params.mlperf_max_gpus), gpus),
        gpus,
        params.launch_window_days,
    )
    missing = set(rows["workload_class"].unique().to_list()) - set(gains)
    if missing:
        raise ValueError(f"no batch-size gain configured for workload classes {sorted(missing)}")
    rows = _with_efficiency(rows, efficiency_table(constants, params.constants))
    # FP8 runs in MLPerf Training "mixed" tables form their own table (training_precision).
    rows = table_precision(rows, gpus)
    return _corrected(_with_gain(rows, gains), params, run_date)


def _with_efficiency(rows: pl.DataFrame, efficiencies: pl.DataFrame) -> pl.DataFrame:
    """Rows with the multi-GPU efficiency they are divided by (`_eff`) and its source.

    `efficiencies` is the run's `fit.efficiency_table`, extended to the GPU counts that lie
    between two it lists.
    """
    counts = sorted(set(rows["num_gpus"].to_list()))
    table = with_interpolated_counts(efficiencies, counts)
    table = table.select(
        pl.col("num_gpus").cast(rows.schema["num_gpus"]),
        "interconnect",
        _eff="efficiency",
        _eff_src="source",
    )
    # A GPU count with neither a usable fit nor a configured constant (e.g. a 16-GPU-only
    # result) cannot be turned into per-GPU throughput: the row is left out, never guessed.
    # The asset reports how many (comparable rows minus debiased rows). Inference figures
    # (offline throughput of independent replicas, no gradient exchange) are divided by
    # the GPU count alone: efficiency 1.
    inference = pl.col("task") == "inference"
    return (
        rows.join(table, on=["num_gpus", "interconnect"], how="left", nulls_equal=True)
        .with_columns(
            _eff=pl.when(inference).then(1.0).otherwise("_eff"),
            _eff_src=pl.when(inference).then(pl.lit("inference:replicas")).otherwise("_eff_src"),
        )
        .filter(pl.col("_eff").is_not_null())
    )


def _with_gain(rows: pl.DataFrame, gains: dict[str, tuple[float, str]]) -> pl.DataFrame:
    """Rows with their table's reference batch size and their class's batch-size gain."""
    gain_value = {cls: v for cls, (v, _) in gains.items()}
    gain_source = {cls: f"{kind}:{cls}" for cls, (_, kind) in gains.items()}
    return rows.with_columns(
        batch_size_ref=pl.col("batch_size_per_gpu").cast(pl.Float64).median().over(GROUP),
        _gain=pl.col("workload_class").replace_strict(gain_value, return_dtype=pl.Float64),
        _gain_src=pl.col("workload_class").replace_strict(gain_source, return_dtype=pl.Utf8),
        multi_gpu_efficiency=pl.col("_eff"),
    )


def _corrected(rows: pl.DataFrame, params: ModelParameters, run_date: dt.date) -> pl.DataFrame:
    """Per-GPU throughput at the reference batch size, with every factor applied."""
    # Time to train (MLPerf) is not a throughput at a batch size: more epochs at a bigger
    # batch, so the throughput correction does not apply.
    training = (pl.col("task") == "training") & (pl.col("unit") != MLPERF_TRAINING_UNIT)
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
            era_term=era_term(pl.col("table_precision")),
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
