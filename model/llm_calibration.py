"""LLM calibration hygiene: measured rates before modelled ones, and the model's error by stack.

Two rules (docs/methodology.md, "LLM calibration"):

1. **Measured over modelled.** The cost tables price a configuration (GPU x model size x
   weight bits x GPU count) from a published batch-1 decode rate of the same configuration
   and engine class where one exists, and from the decode model only otherwise. Among the
   matching rows, those of the vendor's reference stack (`model.llm.REFERENCE_STACKS`:
   llama.cpp CUDA on NVIDIA, ROCm/HIP on AMD, SYCL on Intel) are used when there are any,
   so that a Radeon is priced by the backend AMD supports rather than by a median of
   ROCm and an old Vulkan build. The rate is the median of those rows, its interval their
   range; the row says which (`rate_source`, `method`).
2. **The model agrees with what it is calibrated on.** The decode model's leave-one-GPU-out
   error is reported per vendor x stack (median and worst absolute error, and the median
   signed error, which shows a bias the absolute error hides).

Constrained hosts (eGPU, single-board computer, narrow link) are left out of both, as of
every LLM calibration (model/evidence.py).
"""

import polars as pl

from model.evidence import placing_rows
from model.llm import (
    REFERENCE_STACKS,
    _engine_class,
    decode_roofline,
    leave_one_gpu_out,
    row_stack,
    size_class,
)
from model.llm_prefill import prefill_basis, prefill_leave_one_gpu_out, prefill_rows

_KEY = ["gpu_id", "model_params_b", "bits", "num_gpus"]


def measured_decode_rates(
    benchmarks: pl.DataFrame, gpus: pl.DataFrame, engine_class: str = "llama.cpp"
) -> pl.DataFrame:
    """One measured batch-1 decode rate per GPU x size class x bits x GPU count.

    Returns gpu_id, model_params_b (size class), bits, num_gpus, decode_tokens_per_s (the
    median of the chosen rows), decode_low / decode_high (their range), n_results and
    stacks (the stacks the chosen rows ran on, comma-joined).
    """
    reference = pl.col("vendor").replace_strict(REFERENCE_STACKS, default=None)
    rows = (
        placing_rows(benchmarks)
        .filter((pl.col("phase") == "decode") & (pl.col("batch").fill_null(1) == 1))
        .join(gpus.select("gpu_id", "vendor"), on="gpu_id")
        .with_columns(
            engine_class=_engine_class(pl.col("engine")),
            stack=row_stack(benchmarks),
            model_params_b=size_class(pl.col("model_params_b")),
            bits=pl.col("bits").cast(pl.Int32),
            num_gpus=pl.col("num_gpus").cast(pl.Int32),
        )
        .filter(pl.col("engine_class") == engine_class)
        .with_columns(preferred=(pl.col("stack") == reference).fill_null(False))
    )
    # The reference stack's rows when a configuration has any, else all of its rows.
    chosen = rows.filter(pl.col("preferred") | ~pl.col("preferred").any().over(_KEY))
    return (
        chosen.group_by(_KEY)
        .agg(
            decode_tokens_per_s=pl.col("tokens_per_s").median(),
            decode_low=pl.col("tokens_per_s").min(),
            decode_high=pl.col("tokens_per_s").max(),
            n_results=pl.len().cast(pl.Int32),
            stacks=pl.col("stack").unique().sort().str.join(", "),
        )
        .sort(_KEY)
    )


def rates_for_cost(modelled: pl.DataFrame, measured: pl.DataFrame) -> pl.DataFrame:
    """The rows the cost tables price: a measured rate where one matches, else the model's.

    `modelled` is llm_throughput's modelled rows (any that do not fit stay as they are);
    `measured` is `measured_decode_rates`. Returns `modelled`'s columns with decode rate,
    interval, n_results, method and rate_source ('measured' / 'modelled') replaced where a
    measurement matches the configuration.
    """
    joined = modelled.join(
        measured.rename(
            {
                "decode_tokens_per_s": "m_decode",
                "decode_low": "m_low",
                "decode_high": "m_high",
                "n_results": "m_n",
            }
        ),
        on=_KEY,
        how="left",
    )
    use = pl.col("fits") & pl.col("m_decode").is_not_null()
    return joined.with_columns(
        decode_tokens_per_s=pl.when(use).then("m_decode").otherwise("decode_tokens_per_s"),
        decode_low=pl.when(use).then("m_low").otherwise("decode_low"),
        decode_high=pl.when(use).then("m_high").otherwise("decode_high"),
        n_results=pl.when(use).then("m_n").otherwise("n_results").cast(pl.Int32),
        method=pl.when(use)
        .then(pl.format("measured: median of {} batch-1 decode rows ({})", "m_n", "stacks"))
        .otherwise("method"),
        rate_source=pl.when(use).then(pl.lit("measured")).otherwise("rate_source"),
    ).select(modelled.columns)


def logo_by_vendor_stack(logo: pl.DataFrame) -> pl.DataFrame:
    """The decode model's leave-one-GPU-out error per vendor x stack.

    `logo` is `model.llm.leave_one_gpu_out`'s output. Returns vendor, stack, n_gpus, n
    (rows), median_ape and max_ape (absolute, fractions), median_error (signed: predicted
    over measured less one; positive = the model is too fast), and levels (the fitted
    levels that predicted them).
    """
    return (
        logo.with_columns(error=pl.col("predicted") / pl.col("measured") - 1)
        .group_by("vendor", "stack")
        .agg(
            n_gpus=pl.col("gpu_id").n_unique().cast(pl.Int32),
            n=pl.len().cast(pl.Int32),
            median_ape=pl.col("ape").median(),
            max_ape=pl.col("ape").max(),
            median_error=pl.col("error").median(),
            levels=pl.col("level").unique().sort().str.join("; "),
        )
        .sort("vendor", "stack")
    )


def decode_validation_by_stack(benchmarks: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """`logo_by_vendor_stack` of the llama.cpp decode model on the benchmark rows."""
    return logo_by_vendor_stack(leave_one_gpu_out(decode_roofline(benchmarks, gpus), "llama.cpp"))


def prefill_validation_by_stack(benchmarks: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """`logo_by_vendor_stack` of the llama.cpp prefill model (model/llm_prefill.py)."""
    rows = prefill_rows(benchmarks, prefill_basis(gpus))
    return logo_by_vendor_stack(prefill_leave_one_gpu_out(rows))


DECODE_DETAIL = "llama.cpp batch-1 decode, each GPU predicted by the model fitted without it"
PREFILL_DETAIL = (
    "llama.cpp batch-1 prefill from an empty cache, each GPU predicted by the per-architecture "
    "efficiency fitted without it"
)


def validation_rows(
    by_stack: pl.DataFrame,
    run_date,
    check_name: str = "llm_decode_logo_stack",
    what: str = DECODE_DETAIL,
) -> pl.DataFrame:
    """A leave-one-GPU-out summary per vendor x stack as model_validation rows.

    `by_stack` is `decode_validation_by_stack` (check llm_decode_logo_stack) or
    `prefill_validation_by_stack` (check llm_prefill_logo_stack, `what` PREFILL_DETAIL).
    One row per vendor x stack x metric (median_ape, max_ape, median_error); `n` is the
    number of measured rows, the detail names the GPUs' count and the fitted levels.
    """
    metrics = ("median_ape", "max_ape", "median_error")
    return (
        by_stack.unpivot(
            index=["vendor", "stack", "n_gpus", "n", "levels"],
            on=list(metrics),
            variable_name="metric",
            value_name="value",
        )
        .with_columns(
            run_date=pl.lit(run_date),
            check_name=pl.lit(check_name),
            subject=pl.format("{} x {}", "vendor", "stack"),
            reference_value=pl.lit(None, dtype=pl.Float64),
            value_low=pl.lit(None, dtype=pl.Float64),
            value_high=pl.lit(None, dtype=pl.Float64),
            n=pl.col("n").cast(pl.Int32),
            detail=pl.format(f"{what}; {{}} GPUs; fitted levels: {{}}", "n_gpus", "levels"),
        )
        .select(
            "run_date",
            "check_name",
            "subject",
            "metric",
            "value",
            "reference_value",
            "value_low",
            "value_high",
            "n",
            "detail",
        )  # fmt: skip
        .sort("subject", "metric")
    )
