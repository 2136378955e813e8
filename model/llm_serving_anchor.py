"""What the serving model takes from elsewhere: decode bandwidth shares, and proxy compute.

**Bandwidth share (eff_bw), anchored on batch-1 decode evidence.** A decode step at small
batch reads the weights once; how much of its bandwidth a GPU reaches doing so is what the
project's batch-1 decode rows measure (table llm_benchmarks: hundreds of llama.cpp rows
over ~30 GPUs; model/llm.py fits seconds per token = a x read_s + c x layers). MLPerf and
TensorRT-LLM rows run mostly compute bound and say little about it, so the serving fit
does not fit it: eff_bw = 1 / a, where a is
- the GPU's own median (seconds - c x layers) / read_s over its measured one-GPU 16-bit
  decode rows, when it has some ("measured"), else
- the llama.cpp decode model of its vendor at 16 bits (model/llm.py `decode_model_for`,
  the vendor's reference stack), the same for every GPU of that vendor ("vendor fit").
16-bit rows, because their kernels stream plain weights; the quantized formats' shares
are those of llama.cpp's dequantizing kernels, not of a serving engine's FP8/FP4 GEMMs.
The per-step fixed cost is the serving engine's own (fitted on the serving rows), so the
batch-1 rate is 1 / (read_s / eff_bw + layers x overhead), within a few % of the
measured batch-1 rate when the engines' per-layer costs are alike.

**Proxy compute.** 44 catalog GPUs (Pascal, RDNA2/3/4, Arc, some Blackwell boards, B300,
L20 ...) have no fp16 tensor figure in the spec sheet. Their tensor rate is estimated from
the project's debiased relative 16-bit inference performance (table relative_performance,
workload inference_16bit, relative to the A100): fp16 tensor TFLOPS = relative x the
median of (fp16 tensor TFLOPS / relative) over the same vendor's GPUs that have both (all
GPUs' when the vendor has fewer than 3). The spread of log(fp16 tensor / relative) over
those GPUs is the proxy's own uncertainty, added to the serving interval. FP8 where the
architecture has it: 2 x that (the FP8/FP16 ratio of every Ada, Hopper and Blackwell part).
"""

import polars as pl

from model.llm import decode_model_for, decode_roofline
from model.llm_stacks import REFERENCE_STACKS

ANCHOR_BITS = 16
EFF_BW_RANGE = (0.30, 0.95)
MIN_PROXY_GPUS = 3
PROXY_WORKLOAD = "inference_16bit"


def _vendor_models(rows: pl.DataFrame, vendors: list[str]) -> dict[str, tuple]:
    """(a, c, level) of the llama.cpp 16-bit decode model per vendor (None: no model)."""
    out = {}
    for vendor in vendors:
        model = decode_model_for(
            rows, "llama.cpp", vendor, ANCHOR_BITS, REFERENCE_STACKS.get(vendor)
        )
        if model is None:
            model = decode_model_for(rows, "llama.cpp", vendor, ANCHOR_BITS)
        out[vendor] = model
    return out


def bandwidth_anchor(benchmarks: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, eff_bandwidth, anchor (how it was set) for every catalog GPU (docstring)."""
    roof = decode_roofline(benchmarks, gpus).filter(pl.col("engine_class") == "llama.cpp")
    vendors = sorted(set(gpus["vendor"].drop_nulls()))
    models = _vendor_models(roof, vendors)
    pooled = decode_model_for(roof, "llama.cpp", "", ANCHOR_BITS) or (1.25, 0.0, "default")
    rows = []
    for gpu_id, vendor in gpus.select("gpu_id", "vendor").iter_rows():
        a, c, level = models.get(vendor) or pooled
        own = roof.filter((pl.col("gpu_id") == gpu_id) & (pl.col("bits") == ANCHOR_BITS))
        if not own.is_empty():
            a_own = own.select(
                ((pl.col("seconds") - c * pl.col("layers")) / pl.col("read_s")).median()
            ).item()
            a, label = a_own, f"measured: {own.height} batch-1 16-bit decode rows"
        else:
            label = f"vendor fit: llama.cpp 16-bit decode ({level})"
        low, high = EFF_BW_RANGE
        rows.append((gpu_id, min(max(1 / a, low), high), label))
    return pl.DataFrame(
        rows, schema={"gpu_id": pl.Utf8, "eff_bandwidth": pl.Float64, "anchor": pl.Utf8},
        orient="row",
    )  # fmt: skip


def proxy_compute(gpus: pl.DataFrame, relative: pl.DataFrame) -> pl.DataFrame:
    """The catalog with fp16/fp8 tensor TFLOPS filled by proxy where missing.

    `relative` holds gpu_id, workload, value (table relative_performance). Adds
    compute_proxy (bool) and proxy_log_sd (0 where the spec sheet has the figure).
    """
    rel = relative.filter(pl.col("workload") == PROXY_WORKLOAD).select(
        "gpu_id", rel_perf=pl.col("value")
    )
    frame = gpus.join(rel.unique("gpu_id"), on="gpu_id", how="left")
    both = frame.filter(
        pl.col("fp16_tensor_tflops").is_not_null() & (pl.col("rel_perf") > 0)
    ).with_columns(log_ratio=(pl.col("fp16_tensor_tflops") / pl.col("rel_perf")).log())
    pooled = (float(both["log_ratio"].median()), float(both["log_ratio"].std()))
    per_vendor = {
        v: (float(g["log_ratio"].median()), float(g["log_ratio"].std()))
        for (v,), g in both.group_by("vendor")
        if g.height >= MIN_PROXY_GPUS
    }
    centre = pl.col("vendor").replace_strict(
        {v: m for v, (m, _) in per_vendor.items()}, default=pooled[0], return_dtype=pl.Float64
    )
    spread = pl.col("vendor").replace_strict(
        {v: s for v, (_, s) in per_vendor.items()}, default=pooled[1], return_dtype=pl.Float64
    )
    proxy = pl.col("fp16_tensor_tflops").is_null() & (pl.col("rel_perf") > 0)
    fp16 = pl.col("rel_perf") * centre.exp()
    fp8_arch = pl.col("architecture").is_in(["ada", "hopper", "blackwell"])
    return frame.with_columns(
        fp16_tensor_tflops=pl.when(proxy).then(fp16).otherwise(pl.col("fp16_tensor_tflops")),
        fp8_tensor_tflops=pl.when(proxy & fp8_arch & pl.col("fp8_tensor_tflops").is_null())
        .then(2 * fp16)
        .otherwise(pl.col("fp8_tensor_tflops")),
        compute_proxy=proxy,
        proxy_log_sd=pl.when(proxy).then(spread).otherwise(0.0),
    ).drop("rel_perf")
