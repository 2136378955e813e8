"""The LLM serving model's leave-one-GPU-out error per engine, as the methodology page shows it.

Rows of `llm_serving_validation` (model/llm_serving_fit.py): one summary row per engine
(gpu_id NULL) with its fitted efficiencies, held-out error, interval band and coverage; one
row per held-out GPU with its measured and predicted median tokens/s.
"""

import polars as pl

SERVING_NOTE = (
    "Batched serving (methodology §13): each engine's compute efficiency, per-layer step cost "
    "and FP4 gain are fitted on the published serving measurements (MLPerf® Inference "
    "Offline/Server/Interactive, TensorRT-LLM's performance overview, public vLLM sweeps; "
    "table llm_serving_benchmarks), the bandwidth share anchored on batch-1 decode. Each "
    "GPU's rows are predicted by the fit on the OTHER GPUs: median and 90th-percentile "
    "absolute error, the interval band (5-95 % of the held-out log residuals) and the share "
    "of held-out rows inside the band built without them (nominal 90 %). An engine measured "
    "on fewer than 3 GPUs is served by the pooled fit. Derived figures, not MLPerf results."
)

ENGINE_COLUMNS = {
    "engine": "engine",
    "n_rows": "rows",
    "n_gpus": "GPUs",
    "eff_compute": "compute efficiency",
    "layer_overhead_us": "µs per layer",
    "fp4_gain": "FP4 gain",
    "median_ape": "held-out median error %",
    "p90_ape": "p90 error %",
    "band": "interval band",
    "coverage": "held-out coverage %",
}
GPU_COLUMNS = {
    "engine": "engine",
    "gpu_id": "GPU held out",
    "n_rows": "rows",
    "measured": "measured (median tokens/s)",
    "predicted": "predicted without it",
    "median_ape": "median error %",
}


def serving_engine_table(validation: pl.DataFrame) -> pl.DataFrame:
    """One row per engine: its fit, held-out error (percent), band and coverage."""
    rows = validation.filter(pl.col("gpu_id").is_null()).sort("engine")
    band = pl.format(
        "×{} .. ×{}",
        pl.col("log_q05").exp().round(2).cast(pl.Utf8),
        pl.col("log_q95").exp().round(2).cast(pl.Utf8),
    )
    return rows.select(
        "engine",
        "n_rows",
        "n_gpus",
        "eff_compute",
        "layer_overhead_us",
        "fp4_gain",
        (pl.col("median_ape") * 100).round(0).alias("median_ape"),
        (pl.col("p90_ape") * 100).round(0).alias("p90_ape"),
        band.alias("band"),
        (pl.col("coverage") * 100).round(0).alias("coverage"),
    )


def serving_gpu_table(validation: pl.DataFrame) -> pl.DataFrame:
    """One row per engine x held-out GPU: measured beside predicted-without-it.

    The pooled fit's held-out rows repeat the engines' GPUs; the engine's own are shown.
    """
    return (
        validation.filter(pl.col("gpu_id").is_not_null() & (pl.col("engine") != "pooled"))
        .sort("engine", "gpu_id")
        .select(
            "engine",
            "gpu_id",
            "n_rows",
            pl.col("measured").round(0).cast(pl.Int64),
            pl.col("predicted").round(0).cast(pl.Int64),
            (pl.col("median_ape") * 100).round(0).alias("median_ape"),
        )
    )
