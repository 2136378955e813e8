"""Batched LLM serving: throughput per GPU x model x precision x GPU count x concurrency.

A server decodes B users' sequences together: each step reads the weights once for all of
them (plus each user's KV cache) and does B tokens' FLOPs, so throughput grows with B until
compute or KV memory runs out. Per configuration (docs/methodology.md, "LLM serving"):

- **Workload.** Each user sends `INPUT_TOKENS` (1,024) and receives `OUTPUT_TOKENS`
  (1,024): a user reserves KV for 2,048 tokens, and a decode step reads on average
  1,024 + 512 = 1,536 tokens of each user's cache.
- **Memory.** N GPUs x memory (GiB) x `MEMORY_UTILISATION` (0.9: vLLM's default
  `gpu_memory_utilization`; the rest is activations, CUDA graphs, communication buffers)
  holds the weights at TOTAL parameters (all experts resident; model/llm_models.py) and
  the KV cache. Users that fit = (that memory - weights) / one user's KV cache; fits = at
  least one. The concurrency grid (1, 2, 4, ..., 256) stops there.
- **Precision.** Weights at 4, 8 or 16 bits (4.5, 8, 16 bits per weight: 4-bit formats
  carry scales). Compute runs at the weights' precision only where the hardware has it:
  FP8 tensor cores on Ada, Hopper, Blackwell and CDNA3/4; FP4 (2x the FP8 rate) on
  Blackwell and CDNA4. Elsewhere a quantized model is weight-only (dequantized to 16-bit
  compute). The KV cache is FP8 (1 byte) where the hardware has FP8 and the weights are
  8-bit or less, else 16-bit.
- **Decode step** at batch B on N tensor-parallel GPUs (model/llm_parallel.py):
      bytes = params read(B) x bits / 8 + B x KV of a mean context
      flops = B x 2 x active parameters
      step  = max(bytes / (eff_bw x N x bandwidth), flops / (eff_c x N x compute))
              + 2 all-reduces per layer (N > 1) + layers x a per-layer step overhead
  params read(B) is the active parameters at B = 1 and, for a mixture of experts, grows
  with the distinct experts the batch touches (model/llm_models.py).
- **Prefill** is compute bound at 2 x active parameters FLOPs per prompt token, at
  eff_c x N x compute. A steady server also prefills each new user's prompt, so per
  decode step it spends B x (input / output) prompt tokens' compute as well:
      output tokens/s = B / (step + B x input / output x prefill seconds per token)
  and TTFT is one prompt's prefill on an idle server (under load, prompts queue).
- **Efficiencies.** eff_bw per GPU is anchored on the batch-1 decode evidence
  (model/llm_serving_anchor.py), so one user's rate agrees with llama.cpp/vLLM
  measurements; eff_c and a per-layer step overhead are fitted per engine on published
  serving measurements (model/llm_serving_fit.py), the overhead being
  layers x overhead_us per step. The interval is the fit's held-out band (5-95 %
  quantiles of the leave-one-GPU-out log residuals, within +-10 % .. x/÷ 3), widened
  for a GPU whose tensor rate is a proxy (no spec-sheet figure).
- **Energy per output token** = power x N / output tokens/s, with the GPU's measured
  serving power where the evidence has it (MLPerf power runs: the whole system's, per
  GPU), else board TDP x N plus the project's host share (`host_watts`).
"""

import math
from collections.abc import Callable, Mapping

import numpy as np
import polars as pl

from model.cost import one_machine_expr
from model.llm_models import kv_cache_bytes_expr, params_read_expr
from model.llm_parallel import allreduce_step_expr, interconnects

_GB = 1e9
_GIB = 2**30
INPUT_TOKENS = 1024
OUTPUT_TOKENS = 1024
MEMORY_UTILISATION = 0.9
CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256)
GPU_COUNTS = (1, 2, 4, 8)
PRECISIONS = (4, 8, 16)
SERVING_BITS_PER_WEIGHT = {4: 4.5, 8: 8.0, 16: 16.0}
FP8_ARCHITECTURES = frozenset({"ada", "hopper", "blackwell", "cdna3", "cdna4"})
FP4_ARCHITECTURES = frozenset({"blackwell", "cdna4"})
# Whose efficiencies a vendor's rows use: the engine with that vendor's published serving
# evidence (TensorRT-LLM: NVIDIA's MLPerf submissions; vLLM: AMD's and Intel's).
REFERENCE_ENGINES = {"nvidia": "tensorrt-llm", "amd": "vllm", "intel": "vllm"}
# An engine measured on fewer GPUs takes the pooled fit (labelled in `method`).
MIN_ENGINE_GPUS = 3


def hardware_columns() -> dict[str, pl.Expr]:
    """Per GPU x precision_bits: compute (TFLOPS), bits per weight, KV bytes, precision note.

    Needs architecture, fp16_tensor_tflops, fp8_tensor_tflops, precision_bits.
    """
    arch = pl.col("architecture")
    fp8 = arch.is_in(list(FP8_ARCHITECTURES)) & pl.col("fp8_tensor_tflops").is_not_null()
    fp4 = arch.is_in(list(FP4_ARCHITECTURES)) & fp8
    bits = pl.col("precision_bits")
    native = pl.when(bits == 16).then(True).when(bits == 8).then(fp8).otherwise(fp4)
    compute = (
        pl.when((bits == 4) & fp4).then(2 * pl.col("fp8_tensor_tflops"))
        .when((bits == 8) & fp8).then(pl.col("fp8_tensor_tflops"))
        .otherwise(pl.col("fp16_tensor_tflops"))
    )  # fmt: skip
    return {
        "compute_tflops": compute.cast(pl.Float64),
        "bits_per_weight": bits.replace_strict(SERVING_BITS_PER_WEIGHT, return_dtype=pl.Float64),
        "kv_bytes": pl.when(fp8 & (bits <= 8)).then(1.0).otherwise(2.0),
        "native_precision": native,
    }


def systems(gpus: pl.DataFrame, models: pl.DataFrame) -> pl.DataFrame:
    """Every catalog GPU x model x precision x GPU count, with what the formulas need.

    `gpus` needs gpu_id, vendor, architecture, form_factor, memory_gb,
    memory_bandwidth_gbs, fp16_tensor_tflops, fp8_tensor_tflops, tdp_w; `models` the
    llm_models rows. Adds compute_tflops, bits_per_weight, kv_bytes, native_precision,
    interconnect, link_gbs, weights_bytes (total params) and memory_bytes (usable).
    """
    configs = pl.DataFrame(
        [(b, n) for b in PRECISIONS for n in GPU_COUNTS],
        schema={"precision_bits": pl.Int32, "num_gpus": pl.Int32},
        orient="row",
    )
    # A unified-memory machine's GPU holds only its share (gpus.llm_memory_gb; macOS 75 %).
    usable = (
        pl.coalesce("llm_memory_gb", "memory_gb") if "llm_memory_gb" in gpus.columns
        else pl.col("memory_gb")
    )  # fmt: skip
    catalog = gpus.select(
        "gpu_id", "vendor", "architecture", "form_factor", usable.alias("memory_gb"),
        "memory_bandwidth_gbs", "fp16_tensor_tflops", "fp8_tensor_tflops", "tdp_w",
    ).join(interconnects(gpus), on="gpu_id")  # fmt: skip
    return (
        catalog.join(models, how="cross")
        .join(configs, how="cross")
        # A machine sold whole (DGX Spark, Mac Studio, Ryzen AI Max PC) serves as one
        # machine: no tensor parallelism across boxes over a network link.
        .filter(one_machine_expr(pl.col("form_factor"), pl.col("num_gpus")))
        .drop("form_factor")
        .with_columns(**hardware_columns())
        .with_columns(
            weights_bytes=pl.col("total_params_b") * _GB * pl.col("bits_per_weight") / 8,
            memory_bytes=pl.col("num_gpus") * pl.col("memory_gb") * _GIB * MEMORY_UTILISATION,
        )
    )


def with_capacity(
    frame: pl.DataFrame, input_tokens: pl.Expr, output_tokens: pl.Expr
) -> pl.DataFrame:
    """Add kv_user_bytes (one user's reserved KV), kv_mean_bytes (read per step), users_max.

    `users_max` is how many users' KV caches the memory left after the weights holds
    (0: the model does not fit), kv_capacity_tokens the same in tokens of cache.
    """
    reserved = (input_tokens + output_tokens).cast(pl.Float64)
    mean = (input_tokens + output_tokens / 2).cast(pl.Float64)
    free = pl.col("memory_bytes") - pl.col("weights_bytes")
    return frame.with_columns(
        kv_user_bytes=kv_cache_bytes_expr(reserved, pl.col("kv_bytes")),
        kv_mean_bytes=kv_cache_bytes_expr(mean, pl.col("kv_bytes")),
        reserved_tokens=reserved,
    ).with_columns(
        users_max=pl.when(free > 0).then((free / pl.col("kv_user_bytes")).floor()).otherwise(0.0),
        kv_capacity_tokens=pl.when(free > 0)
        .then(free / pl.col("kv_user_bytes") * pl.col("reserved_tokens"))
        .otherwise(0.0),
    )


def step_components(batch: pl.Expr, input_tokens: pl.Expr, output_tokens: pl.Expr) -> dict:
    """The per-step quantities of the decode model at `batch` (whole system).

    bytes_step, flops_step, comm_s (all-reduces), prefill_flops (prompt FLOPs per output
    token), bandwidth (bytes/s of N GPUs), compute (FLOP/s of N GPUs).
    """
    active = pl.col("active_params_b") * _GB
    n = pl.col("num_gpus").cast(pl.Float64)
    return {
        "bytes_step": params_read_expr(batch) * _GB * pl.col("bits_per_weight") / 8
        + batch * pl.col("kv_mean_bytes"),
        "flops_step": batch * 2 * active,
        "comm_s": allreduce_step_expr(pl.col("num_gpus"), batch),
        "prefill_flops": input_tokens.cast(pl.Float64) / output_tokens * 2 * active,
        "bandwidth": n * pl.col("memory_bandwidth_gbs") * _GB,
        "compute": n * pl.col("compute_tflops") * 1e12,
    }


def output_rate(
    c: Mapping, batch, eff_bw, eff_c, overhead_s, maximum: Callable = np.maximum
):  # fmt: skip
    """Output tokens/s of the whole system at `batch` (module docstring).

    `c` holds step_components' values (NumPy arrays or Polars expressions alike);
    `maximum` is np.maximum or a Polars max_horizontal.
    """
    read_s = c["bytes_step"] / (eff_bw * c["bandwidth"])
    compute_s = c["flops_step"] / (eff_c * c["compute"])
    step = maximum(read_s, compute_s) + c["comm_s"] + overhead_s
    return batch / (step + batch * c["prefill_flops"] / (eff_c * c["compute"]))


def _pl_max(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return pl.max_horizontal(a, b)


def measured_power(evidence: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, watts_per_gpu: the median measured serving power per GPU (system / GPUs)."""
    return (
        evidence.filter(pl.col("power_w").is_not_null())
        .group_by("gpu_id")
        .agg(watts_per_gpu=(pl.col("power_w") / pl.col("num_gpus")).median())
    )


def _grid(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per concurrency that fits; a configuration that fits none keeps B = 1."""
    grid = pl.DataFrame({"concurrency": list(CONCURRENCY)}, schema={"concurrency": pl.Int32})
    rows = frame.join(grid, how="cross").filter(
        (pl.col("concurrency") <= pl.col("users_max")) | (pl.col("concurrency") == 1)
    )
    return rows.with_columns(fits=pl.col("users_max") >= 1)


def _evidence_labels(evidence: pl.DataFrame) -> pl.DataFrame:
    """Per gpu x model x bits x GPUs with measured serving rows: their citations."""
    # The example cited is the newest row's; ties (same as_of): the first citation in
    # alphabetical order, so two builds cite the same row (docs/methodology.md, Ties).
    return (
        evidence.sort("as_of", "citation", descending=[True, False], nulls_last=True)
        .group_by("gpu_id", "model_id", "precision_bits", "num_gpus")
        .agg(
            cited=pl.format(
                "measured beside it: {} row(s), e.g. {}",
                pl.len(),
                pl.col("citation").first(),
            )
        )
        .with_columns(pl.col("precision_bits").cast(pl.Int32), pl.col("num_gpus").cast(pl.Int32))
    )


def llm_serving(
    gpus: pl.DataFrame,
    models: pl.DataFrame,
    fits: pl.DataFrame,
    evidence: pl.DataFrame,
    anchor: pl.DataFrame,
    host_watts: float = 0.0,
) -> pl.DataFrame:
    """The llm_serving rows (without run_date); see the module docstring.

    `gpus` the catalog after llm_serving_anchor.proxy_compute (compute_proxy,
    proxy_log_sd); `fits` llm_serving_fit.engine_fits' summary rows (engine,
    eff_compute, layer_overhead_us, log_q05, log_q95, n_rows, n_gpus; engine 'pooled'
    for all engines); `anchor` llm_serving_anchor.bandwidth_anchor (gpu_id,
    eff_bandwidth, anchor); `evidence` the serving measurements (contract columns) for
    power and citations.
    """
    frame = (
        with_capacity(systems(gpus, models), pl.lit(INPUT_TOKENS), pl.lit(OUTPUT_TOKENS))
        .with_columns(engine=pl.col("vendor").replace_strict(REFERENCE_ENGINES, default="vllm"))
        .join(gpus.select("gpu_id", "compute_proxy", "proxy_log_sd"), on="gpu_id", how="left")
        .join(anchor, on="gpu_id", how="left")
    )
    params = _engine_parameters(fits, frame["engine"].unique().to_list())
    rows = _grid(frame).join(params, on="engine", how="left")
    batch = pl.col("concurrency").cast(pl.Float64)
    comp = step_components(batch, pl.lit(INPUT_TOKENS), pl.lit(OUTPUT_TOKENS))
    # Native 4-bit computes at the fitted fp4_gain x the FP8 rate, not the datasheet's 2x.
    fp4 = (pl.col("precision_bits") == 4) & pl.col("native_precision")
    comp["compute"] = comp["compute"] * pl.when(fp4).then(pl.col("fp4_gain") / 2).otherwise(1.0)
    rate = output_rate(
        comp, batch, pl.col("eff_bandwidth"), pl.col("eff_compute"),
        pl.col("layer_overhead_us") * 1e-6 * pl.col("layers"), maximum=_pl_max,
    )  # fmt: skip
    prefill = pl.col("eff_compute") * comp["compute"] / (2 * pl.col("active_params_b") * _GB)
    modelled = pl.col("fits") & pl.col("compute_tflops").is_not_null()
    rows = rows.with_columns(
        output_tokens_per_s=pl.when(modelled).then(rate),
        prefill_tokens_per_s=pl.when(modelled).then(prefill),
    )
    return _finish(rows, evidence, host_watts)


def _engine_parameters(fits: pl.DataFrame, engines: list[str]) -> pl.DataFrame:
    """Per engine the grid uses: its own fit (measured on enough GPUs), else the pooled one."""
    pooled = fits.filter(pl.col("engine") == "pooled")
    out = []
    for engine in sorted(engines):
        own = fits.filter((pl.col("engine") == engine) & (pl.col("n_gpus") >= MIN_ENGINE_GPUS))
        use, level = (own, engine) if not own.is_empty() else (pooled, "all engines pooled")
        if use.is_empty():
            raise ValueError("no serving fit: neither the engine's nor the pooled one")
        row = use.row(0, named=True)
        out.append({
            "engine": engine, "eff_compute": row["eff_compute"],
            "layer_overhead_us": row["layer_overhead_us"], "fp4_gain": row["fp4_gain"],
            "log_q05": row["log_q05"], "log_q95": row["log_q95"],
            "fit_label": f"{level} fit on {row['n_rows']} rows, {row['n_gpus']} GPUs",
        })  # fmt: skip
    return pl.DataFrame(out)


def interval_offsets() -> tuple[pl.Expr, pl.Expr]:
    """(low, high) log offsets: the engine's held-out band, widened by a proxy's spread.

    A GPU whose tensor rate is a proxy adds 1.645 x the proxy's log SD in quadrature on
    each side (a 90 % band of a normal error, like the 5-95 % residual quantiles).
    """
    extra = (1.645 * pl.col("proxy_log_sd").fill_null(0.0)).pow(2)
    low = -(pl.col("log_q05").pow(2) + extra).sqrt()
    high = (pl.col("log_q95").pow(2) + extra).sqrt()
    return low, high


def _finish(rows: pl.DataFrame, evidence: pl.DataFrame, host_watts: float) -> pl.DataFrame:
    """Intervals, TTFT, energy, labels; the llm_serving columns in order."""
    power = measured_power(evidence)
    rows = (
        rows.join(power, on="gpu_id", how="left")
        .join(_evidence_labels(evidence), on=["gpu_id", "model_id", "precision_bits", "num_gpus"],
              how="left")
        .with_columns(
            watts=pl.coalesce(
                pl.col("watts_per_gpu") * pl.col("num_gpus"),
                pl.col("tdp_w") * pl.col("num_gpus") + host_watts,
            ),
        )
    )  # fmt: skip
    tps = pl.col("output_tokens_per_s")
    precision = (
        pl.when(pl.col("native_precision"))
        .then(pl.lit("native"))
        .otherwise(pl.lit("weight-only, 16-bit compute"))
    )
    method = (
        pl.when(~pl.col("fits")).then(pl.lit("does not fit"))
        .when(pl.col("compute_tflops").is_null())
        .then(pl.lit("not modelled: no tensor compute figure nor relative performance"))
        .otherwise(pl.format(
            "modelled: tensor parallel x{}, {}-bit {}, {}; bandwidth share {} ({}){}",
            pl.col("num_gpus"), pl.col("precision_bits"), precision, pl.col("fit_label"),
            pl.col("eff_bandwidth").round(2), pl.col("anchor"),
            pl.when(pl.col("compute_proxy").fill_null(False))
            .then(pl.lit("; tensor rate a proxy (relative inference performance x vendor "
                         "ratio), interval widened"))
            .otherwise(pl.lit("")),
        ))
    )  # fmt: skip
    return rows.select(
        "gpu_id", "model_id", "precision_bits", "num_gpus", "concurrency", "engine", "fits",
        "kv_capacity_tokens", "output_tokens_per_s",
        output_tokens_per_s_per_user=tps / pl.col("concurrency"),
        low=tps * interval_offsets()[0].exp(),
        high=tps * interval_offsets()[1].exp(),
        prefill_tokens_per_s="prefill_tokens_per_s",
        ttft_s=INPUT_TOKENS / pl.col("prefill_tokens_per_s"),
        joules_per_output_token=pl.when(tps > 0).then(pl.col("watts") / tps),
        energy_basis=pl.when(tps > 0).then(
            pl.when(pl.col("watts_per_gpu").is_not_null()).then(pl.lit("measured"))
            .otherwise(pl.lit("tdp"))
        ),
        interconnect=pl.when(pl.col("num_gpus") > 1).then(pl.col("interconnect")),
        method=method,
        evidence=pl.coalesce(
            "cited",
            pl.format("modelled: {} efficiencies, input {} / output {} tokens per user",
                      pl.col("engine"), pl.lit(INPUT_TOKENS), pl.lit(OUTPUT_TOKENS)),
        ),
    ).sort("gpu_id", "model_id", "precision_bits", "num_gpus", "concurrency")  # fmt: skip


def tokens_per_s_at(
    serving: pl.DataFrame, gpu_id: str, model_id: str, bits: int, num_gpus: int, concurrency: int
) -> float | None:
    """One cell of the llm_serving table (None when absent or not modelled)."""
    hit = serving.filter(
        (pl.col("gpu_id") == gpu_id) & (pl.col("model_id") == model_id)
        & (pl.col("precision_bits") == bits) & (pl.col("num_gpus") == num_gpus)
        & (pl.col("concurrency") == concurrency)
    )  # fmt: skip
    if hit.is_empty():
        return None
    value = hit["output_tokens_per_s"][0]
    return None if value is None or math.isnan(value) else float(value)
