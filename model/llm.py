"""LLM inference: what fits, how many tokens per second, and what a million tokens costs.

Memory (`memory_fit`). A configuration (model size, weight bits, GPUs, context) fits when
weights + KV cache + a runtime overhead per GPU fit in the GPUs' memory:

    weights  = params * bits_per_weight / 8           (GGUF sizes: 4 -> Q4_K_M 4.85 bpw,
                                                       8 -> Q8_0 8.5 bpw, 16 -> F16)
    KV cache = context * 2 * layers * kv_heads * head_dim * 2 bytes   (fp16 cache)
    memory   = GPUs * memory_gb GiB (vendors' GB of GPU memory are binary: an 80 GB H100
               has 80 GiB), less `llm_overhead_gib` per GPU (CUDA context, buffers)

Decode (`decode_rate`). Generating one token at batch 1 reads every weight and the KV
cache once, so it is memory-bandwidth bound (Dettmers B: "memory bandwidth is the most
important feature for LLM inference"):

    tokens/s = efficiency * bandwidth / bytes read per token

`efficiency` is fitted per engine x vendor from measured batch-1 decode rows (median of
measured / roofline), falling back to the engine's and then to all rows'. Several GPUs
split the layers ("layer split (llama.cpp)": llama.cpp's default, and what every measured
multi-GPU row does): a token still passes each layer once, so decode runs at one GPU's
bandwidth, not the sum. That is how one user runs a model too big for one card on their
own machine; it is not how a data-center system serves (tensor parallel, batched: the
serving tables, model/llm_serving*.py), and the method text of every multi-GPU row says
so. A multi-die board (MI250, K80) reads at one die's bandwidth for the same reason.

Prefill is compute bound: 2 * params FLOPs per prompt token at the rate llama.cpp's kernels
use (int8 tensor), times an efficiency fitted per architecture (model/llm_prefill.py).

Cost (`llm_cost`): buying amortises the system's total cost of ownership (the same
`perf_per_dollar` row: GPUs, host, electricity over `years`) over the tokens it makes at
`utilization`; renting pays the cheapest offer per GPU-hour (instances with at least as
many GPUs) for the hours the tokens take. Both at batch 1: one user on their own machine
(`LOCAL_USE`, at the head of every cost row's detail), never the cost of serving: a
batched server makes many times more tokens per GPU-hour (`llm_serving_cost`).

Calibration hygiene (model/evidence.py): rows from a constrained host (eGPU enclosure,
single-board computer, narrow external link) stay in `llm_benchmarks` but neither calibrate
the decode and prefill efficiencies nor appear as measured `llm_throughput` rows: a
Raspberry Pi driving a Radeon over PCIe x1 measures the host, not the GPU.
"""

import math

import numpy as np
import polars as pl

from model.cost import one_machine_expr
from model.evidence import placing_rows
from model.fit import t975
from model.llm_constants import ARCHITECTURES, BITS_PER_WEIGHT
from model.llm_prefill import prefill_basis, prefill_rates, prefill_rows
from model.llm_stacks import REFERENCE_STACKS, row_stack

_GIB = 2**30
_GB = 1e9
_KV_BYTES = 2  # fp16 KV cache
QUANT_BITS = {
    "Q4_K_M": 4.85, "Q4_0": 4.55, "Q4_K_S": 4.58, "Q5_K_M": 5.69, "Q6_K": 6.56,
    "Q8_0": 8.5, "F16": 16.0, "BF16": 16.0, "FP16": 16.0, "fp16": 16.0, "bf16": 16.0,
    "fp8": 8.0, "FP8": 8.0, "int8": 8.0, "int4": 4.0, "awq": 4.25, "gptq": 4.25,
}  # fmt: skip
_MIN_ROWS = 3
_MIN_GPUS = 3
# What a batch-1 row is: one user on their own machine (llm_cost's detail begins with it).
LOCAL_USE = (
    "one user at batch 1 on a machine of their own (bought or rented), not the cost of serving"
)
LAYER_SPLIT = "layer split (llama.cpp): {} GPUs decode at one GPU's speed"


def layer_split_note(num_gpus: pl.Expr) -> pl.Expr:
    """'; layer split (llama.cpp): N GPUs ...' for a multi-GPU row, '' for one GPU."""
    return pl.when(num_gpus > 1).then(pl.format("; " + LAYER_SPLIT, num_gpus)).otherwise(pl.lit(""))


def kv_bytes_per_token(size_b: int) -> float:
    """Bytes of fp16 KV cache per token of context for a model size's architecture."""
    _, _, layers, kv_heads, head_dim = ARCHITECTURES[size_b]
    return 2 * layers * kv_heads * head_dim * _KV_BYTES


def memory_fit(
    gpus: pl.DataFrame,
    sizes_b: tuple[int, ...],
    bits: tuple[int, ...],
    gpu_counts: tuple[int, ...],
    context: int,
    overhead_gib: float,
) -> pl.DataFrame:
    """One row per GPU x model size x bits x GPU count: memory needed, available, fits.

    `gpus` needs gpu_id and memory_gb (per board); `llm_memory_gb`, where present, is the
    part of a unified-memory machine its GPU may hold; a `form_factor` of 'system' (a
    machine sold whole) gets one-machine rows only. Returns gpu_id, model_params_b,
    params_b (the reference architecture's exact count), bits, bits_per_weight, num_gpus,
    context_tokens, needed_gb, available_gb, fits (GB = 10^9 bytes in both columns).
    """
    configs = pl.DataFrame(
        [
            (size, ARCHITECTURES[size][1], b, BITS_PER_WEIGHT[b], n)
            for size in sizes_b
            for b in bits
            for n in gpu_counts
        ],
        schema={
            "model_params_b": pl.Int32,
            "params_b": pl.Float64,
            "bits": pl.Int32,
            "bits_per_weight": pl.Float64,
            "num_gpus": pl.Int32,
        },
        orient="row",
    )
    kv = pl.col("model_params_b").replace_strict(
        {s: kv_bytes_per_token(s) for s in sizes_b}, return_dtype=pl.Float64
    )
    # A whole machine's GPU holds only its share of unified memory (gpus.llm_memory_gb).
    memory = pl.col("llm_memory_gb") if "llm_memory_gb" in gpus.columns else pl.col("memory_gb")
    # A machine sold whole (DGX Spark, Mac Studio) is one machine: no multi-box rows.
    form = pl.col("form_factor") if "form_factor" in gpus.columns else pl.lit(None, pl.Utf8)
    return (
        gpus.select("gpu_id", memory_gb=pl.coalesce(memory, pl.col("memory_gb")), form_factor=form)
        .join(configs, how="cross")
        .filter(one_machine_expr(pl.col("form_factor"), pl.col("num_gpus")))
        .drop("form_factor")
        .with_columns(
            context_tokens=pl.lit(context, dtype=pl.Int32),
            needed_gb=(
                pl.col("params_b") * pl.col("bits_per_weight") / 8 * _GB
                + context * kv
                + pl.col("num_gpus") * overhead_gib * _GIB
            )
            / _GB,
            available_gb=pl.col("num_gpus") * pl.col("memory_gb") * _GIB / _GB,
        )
        .with_columns(fits=pl.col("needed_gb") <= pl.col("available_gb"))
        .drop("memory_gb")
        .sort("gpu_id", "model_params_b", "bits", "num_gpus")
    )


def _engine_class(engine: pl.Expr) -> pl.Expr:
    """llama.cpp-family engines (llama.cpp, ollama, LM Studio) vs the rest."""
    return (
        pl.when(engine.str.to_lowercase().str.contains("llama|ollama|lm studio|lmstudio"))
        .then(pl.lit("llama.cpp"))
        .otherwise(engine.str.to_lowercase())
    )


def layers_for(params_b: pl.Expr) -> pl.Expr:
    """Transformer layers of a measured model, from its size (for the per-layer overhead).

    Llama 3.2 3B 28, Llama 7-8B 32, Llama 2 13B 40, 30-34B 64, 65-72B 80.
    """
    return (
        pl.when(params_b < 5).then(28)
        .when(params_b < 10).then(32)
        .when(params_b < 20).then(40)
        .when(params_b < 40).then(64)
        .otherwise(80)
    )  # fmt: skip


def decode_roofline(rows: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Measured one-GPU batch-1 decode rows with the decode model's inputs.

    Needs the benchmark columns (gpu_id, engine, model_params_b, quant, bits,
    tokens_per_s, num_gpus, phase, batch); leaves out rows of a constrained host
    (model/evidence.py); adds vendor, engine_class, stack (the row's, else its engine's
    name), `read_s` (seconds to
    read the weights once at the GPU's bandwidth), `layers`, `seconds` (1 / tokens_per_s)
    and `ratio` (the share of the bandwidth roofline reached).
    """
    decode = (
        placing_rows(rows)
        .filter(
            (pl.col("phase") == "decode")
            & (pl.col("batch").fill_null(1) == 1)
            & (pl.col("num_gpus") == 1)
        )
        .join(gpus.select("gpu_id", "vendor", "memory_bandwidth_gbs", "devices"), on="gpu_id")
    )
    bpw = pl.col("quant").replace_strict(QUANT_BITS, default=None, return_dtype=pl.Float64)
    return (
        decode.with_columns(
            engine_class=_engine_class(pl.col("engine")),
            stack=row_stack(decode),
            bpw=bpw.fill_null(pl.col("bits").cast(pl.Float64)),
            layers=layers_for(pl.col("model_params_b")),
        )
        .with_columns(
            read_s=pl.col("model_params_b") * _GB * pl.col("bpw") / 8
            / (pl.col("memory_bandwidth_gbs") / pl.col("devices").fill_null(1) * _GB),
            seconds=1 / pl.col("tokens_per_s"),
        )
        .with_columns(ratio=pl.col("read_s") / pl.col("seconds"))
        .sort("gpu_id", "model_params_b", "quant", "context_tokens", "source", "tokens_per_s")
    )  # fmt: skip


def fit_decode(rows: pl.DataFrame) -> tuple[float, float]:
    """Seconds per token = a * read_s + c * layers, least squares on relative error.

    `a` is the inverse of the bandwidth share reached on large reads; `c` a fixed cost per
    layer and token (kernel launches, synchronisation), which is why a small model on an
    H100 reaches a quarter of its bandwidth and a 70B model on an RTX 3090 most of it.
    """
    design = np.column_stack([rows["read_s"].to_numpy(), rows["layers"].to_numpy()])
    target = rows["seconds"].to_numpy()
    weight = 1 / target
    coef, *_ = np.linalg.lstsq(design * weight[:, None], target * weight, rcond=None)
    return float(coef[0]), float(max(coef[1], 0.0))


def decode_model_for(
    rows: pl.DataFrame, engine_class: str, vendor: str, bits: int, stack: str | None = None
) -> tuple[float, float, str] | None:
    """The decode model of an engine on a vendor's GPUs at a weight bit class, and its level.

    Quantized kernels dequantize as they read and backends differ by vendor, so the most
    specific level with rows on at least 3 GPUs is fitted: stack x vendor x bits and stack
    x vendor (llama.cpp's ROCm and Vulkan backends reach different shares of a Radeon's
    bandwidth; docs/methodology.md, "LLM calibration"), then engine x vendor x bits,
    engine x vendor (the backend matters more than the format: llama.cpp on the measured
    Radeons reaches a third of what it reaches on GeForces), engine x bits, engine. A
    level whose fit reads faster than the full bandwidth (a < 1) is skipped. A vendor
    with rows on only 1-2 GPUs (Intel Arc, the Radeons under ROCm) keeps its own
    bandwidth factor `a` with the per-layer cost `c` of the first all-vendor level
    (`_vendor_scale`), rather than taking the all-vendor efficiency whole.
    """
    levels = [
        (("engine_class", "vendor", "bits"), (engine_class, vendor, bits)),
        (("engine_class", "vendor"), (engine_class, vendor)),
        (("engine_class", "bits"), (engine_class, bits)),
        (("engine_class",), (engine_class,)),
    ]
    if stack is not None:
        levels = [
            (("stack", "vendor", "bits"), (stack, vendor, bits)),
            (("stack", "vendor"), (stack, vendor)),
            *levels,
        ]
    few = None  # the most specific vendor level with rows on 1-2 GPUs
    for keys, match in levels:
        part = rows
        for key, value in zip(keys, match, strict=True):
            part = part.filter(pl.col(key) == value)
        label = " x ".join(f"{v} bits" if k == "bits" else str(v)
                           for k, v in zip(keys, match, strict=True))  # fmt: skip
        if part["gpu_id"].n_unique() < _MIN_GPUS:
            if few is None and "vendor" in keys and not part.is_empty():
                few = (part, label)
            continue
        a, c = fit_decode(part)
        # A fit reading faster than the full bandwidth (a < 1) is noise of a few rows
        # (the four Radeons, each on another backend), not a property: the next level.
        if a < 1.0:
            continue
        if few is not None and "vendor" not in keys:
            scaled = _vendor_scale(few[0], c)
            if scaled is not None:
                n = few[0]["gpu_id"].n_unique()
                return scaled, c, f"{few[1]} ({n} GPUs; per-layer cost of {label})"
        return a, c, label
    return None


def _vendor_scale(part: pl.DataFrame, c: float) -> float | None:
    """The bandwidth factor `a` of a vendor's 1-2 measured GPUs, the per-layer cost held.

    Too few GPUs to fit both terms, but enough to say how much of its bandwidth the
    vendor's backend reaches: each row's a = (seconds - c x layers) / read_s, the median
    over GPUs of each GPU's median (None when it would read faster than the bandwidth).
    """
    per_gpu = (
        part.with_columns(a=(pl.col("seconds") - c * pl.col("layers")) / pl.col("read_s"))
        .group_by("gpu_id")
        .agg(pl.col("a").median())
    )
    a = float(per_gpu["a"].median())
    return a if a >= 1.0 else None


def leave_one_gpu_out(roofline_rows: pl.DataFrame, engine_class: str) -> pl.DataFrame:
    """Each GPU's measured decode rows predicted by the model fitted without it.

    A GPU's rows of one stack are predicted by that stack's model (levels of
    `decode_model_for`). Returns gpu_id, vendor, stack, model_params_b, quant, num_gpus,
    measured, predicted, level, ape.
    """
    rows = roofline_rows.filter(pl.col("engine_class") == engine_class)
    out = []
    for gpu in sorted(set(rows["gpu_id"])):
        train = rows.filter(pl.col("gpu_id") != gpu)
        test = rows.filter(pl.col("gpu_id") == gpu)
        for (bits, stack), part in test.group_by("bits", "stack", maintain_order=True):
            model = decode_model_for(train, engine_class, part["vendor"][0], bits, stack)
            if model is None:
                continue
            a, c, level = model
            out.append(
                part.select(
                    "gpu_id",
                    "vendor",
                    "stack",
                    "model_params_b",
                    "quant",
                    "num_gpus",
                    measured="tokens_per_s",
                    predicted=1 / (a * pl.col("read_s") + c * pl.col("layers")),
                    level=pl.lit(level),
                )
            )
    schema = {"gpu_id": pl.Utf8, "vendor": pl.Utf8, "stack": pl.Utf8,
              "model_params_b": pl.Float64, "quant": pl.Utf8, "num_gpus": pl.Int64,
              "measured": pl.Float64, "predicted": pl.Float64, "level": pl.Utf8}  # fmt: skip
    if not out:
        return pl.DataFrame(schema=schema).with_columns(ape=pl.lit(None, dtype=pl.Float64))
    return pl.concat(out, how="vertical_relaxed").with_columns(
        ape=(pl.col("predicted") / pl.col("measured") - 1).abs()
    )


def log_error_sd(logo: pl.DataFrame) -> float | None:
    """SD of log(predicted / measured) over the leave-one-GPU-out predictions."""
    if logo.height < 2:
        return None
    return float((logo["predicted"] / logo["measured"]).log().std())


def _decode_models(
    rooflines: pl.DataFrame, vendors: pl.Series, bits: pl.Series, engine_class: str
) -> pl.DataFrame:
    """The decode model (a, c, level) per vendor x bits, under the vendor's reference stack."""
    return pl.DataFrame(
        [
            (vendor, b, *model)
            for vendor in sorted(set(vendors.drop_nulls()))
            for b in sorted(set(bits))
            if (
                model := decode_model_for(
                    rooflines, engine_class, vendor, b, REFERENCE_STACKS.get(vendor)
                )
            )
            is not None
        ],
        schema={
            "vendor": pl.Utf8,
            "bits": pl.Int32,
            "a": pl.Float64,
            "c": pl.Float64,
            "level": pl.Utf8,
        },  # fmt: skip
        orient="row",
    )


def llm_throughput(
    fit: pl.DataFrame,
    gpus: pl.DataFrame,
    benchmarks: pl.DataFrame,
    engine_class: str = "llama.cpp",
) -> pl.DataFrame:
    """Modelled decode and prefill tokens/s per configuration, plus the measured rows.

    `fit` is memory_fit's output; `benchmarks` the LLM benchmark rows. The modelled rows
    are for `engine_class` at the fit's context; a configuration that does not fit gets no
    throughput (fits = false, rates null). The 95 % interval of a modelled decode rate is
    the leave-one-GPU-out spread of the decode model (t over its GPUs).
    """
    benchmarks = placing_rows(benchmarks)  # no constrained host calibrates or is shown
    rooflines = decode_roofline(benchmarks, gpus)
    logo = leave_one_gpu_out(rooflines, engine_class)
    sd = log_error_sd(logo)
    n_gpus = logo["gpu_id"].n_unique()
    half = t975(n_gpus - 1) * sd if sd is not None and n_gpus >= 2 else None
    basis = prefill_basis(gpus)
    prefill = prefill_rates(basis, prefill_rows(benchmarks, basis), fit["bits"].unique().to_list())

    catalog = gpus.select(
        "gpu_id", "vendor", "memory_bandwidth_gbs", "fp16_tensor_tflops",
        devices=pl.col("devices").fill_null(1),
    )  # fmt: skip
    models = _decode_models(rooflines, catalog["vendor"], fit["bits"], engine_class)
    layers = pl.col("model_params_b").replace_strict(
        {s: ARCHITECTURES[s][2] for s in ARCHITECTURES}, default=None, return_dtype=pl.Float64
    )
    kv = pl.col("model_params_b").replace_strict(
        {s: kv_bytes_per_token(s) for s in ARCHITECTURES}, default=None, return_dtype=pl.Float64
    )
    bytes_per_token = (
        pl.col("params_b") * _GB * pl.col("bits_per_weight") / 8 + pl.col("context_tokens") * kv
    )
    modelled = (
        fit.join(catalog, on="gpu_id")
        .join(models, on=["vendor", "bits"], how="left")
        .join(prefill, on=["gpu_id", "bits"], how="left")
        .with_columns(
            decode=pl.when(pl.col("fits")).then(
                1
                / (
                    pl.col("a")
                    * bytes_per_token
                    / (pl.col("memory_bandwidth_gbs") / pl.col("devices") * _GB)
                    + pl.col("c") * layers
                )
            ),
            prefill=pl.when(pl.col("fits")).then(
                pl.col("prefill_tops") * 1e12 / (2 * pl.col("params_b") * _GB)
            ),
        )
        .select(
            "gpu_id",
            "model_params_b",
            "bits",
            "num_gpus",
            "context_tokens",
            "fits",
            "needed_gb",
            "available_gb",
            decode_tokens_per_s="decode",
            decode_low=pl.col("decode") * math.exp(-half) if half else pl.lit(None, pl.Float64),
            decode_high=pl.col("decode") * math.exp(half) if half else pl.lit(None, pl.Float64),
            prefill_tokens_per_s="prefill",
            method=pl.when(pl.col("fits"))
            .then(
                pl.format(
                    "modelled: {} decode efficiency ({}){}",
                    pl.lit(engine_class),
                    pl.col("level"),
                    layer_split_note(pl.col("num_gpus")),
                )
            )
            .otherwise(pl.lit("does not fit")),  # fmt: skip
            n_results=pl.lit(0, dtype=pl.Int32),
            rate_source=pl.when(pl.col("fits")).then(pl.lit("modelled")),
        )
    )
    return pl.concat([modelled, _measured_rows(benchmarks)], how="diagonal_relaxed").sort(
        "gpu_id", "model_params_b", "bits", "num_gpus", "context_tokens"
    )


def size_class(params_b: pl.Expr) -> pl.Expr:
    """A measured model's size class: the configured size within 10 %, else its rounded size.

    Llama 3 70B's 70.6 B and Llama 2 70B's 69.0 B parameters are both size 70.
    """
    out = params_b.round(0).cast(pl.Int32)
    for size in sorted(ARCHITECTURES):
        out = (
            pl.when((params_b / size - 1).abs() <= 0.10).then(pl.lit(size, pl.Int32)).otherwise(out)
        )
    return out


def _measured_rows(benchmarks: pl.DataFrame) -> pl.DataFrame:
    """Batch-1 decode measurements as llm_throughput rows (method measured).

    One row per GPU x size class x bits x GPUs x generated length (the median of its
    measurements; NULL length where the source does not state it).
    """
    decode = benchmarks.filter((pl.col("phase") == "decode") & (pl.col("batch").fill_null(1) == 1))
    prefill = benchmarks.filter(pl.col("phase") == "prefill")
    size = size_class(pl.col("model_params_b"))
    keys = ["gpu_id", "model_params_b", "bits", "num_gpus", "context_tokens"]
    by_decode = (
        decode.with_columns(model_params_b=size)
        .group_by(keys)
        .agg(
            decode_tokens_per_s=pl.col("tokens_per_s").median(),
            n_results=pl.len().cast(pl.Int32),
            engines=pl.col("engine").unique().sort().str.join(", "),
        )
    )
    # Prompt processing of the same GPU x model x bits x GPUs (any prompt length).
    by_prefill = (
        prefill.with_columns(model_params_b=size)
        .group_by(keys[:-1])
        .agg(prefill_tokens_per_s=pl.col("tokens_per_s").median())
    )
    return (
        by_decode.join(by_prefill, on=keys[:-1], how="left")
        .with_columns(pl.col("context_tokens").cast(pl.Int32))
        .with_columns(
            pl.col("bits").cast(pl.Int32),
            pl.col("num_gpus").cast(pl.Int32),
            fits=pl.lit(True),
            method=pl.format(
                "measured ({}){}", pl.col("engines"), layer_split_note(pl.col("num_gpus"))
            ),
            rate_source=pl.lit("measured"),
        )
        .drop("engines")
    )


def llm_cost(
    throughput: pl.DataFrame,
    buy: pl.DataFrame,
    offers: pl.DataFrame,
    years: float,
    utilization: float,
) -> pl.DataFrame:
    """$ per million tokens per configuration and basis (buy new/used, rent on-demand/spot).

    `throughput` is the rows to price (model/llm_calibration.py `rates_for_cost`: the
    measured rate where one matches, else the modelled; `rate_source` says which, and is
    carried to each cost row); `buy` one row per gpu_id x
    system_gpus x market with total_cost_usd (from perf_per_dollar); `offers` the latest
    cloud offers (gpu_id, gpu_count, price_type, usd_per_gpu_hour, provider). Intervals
    come from the decode interval (a faster GPU makes cheaper tokens).
    """
    rates = throughput.filter(pl.col("fits") & pl.col("decode_tokens_per_s").is_not_null())
    if "rate_source" not in rates.columns:
        rates = rates.with_columns(rate_source=pl.lit("modelled"))
    seconds = years * 365.0 * 24 * 3600 * utilization
    bought = rates.join(
        buy.select(
            "gpu_id", num_gpus=pl.col("system_gpus").cast(pl.Int32), market="market",
            total_cost_usd="total_cost_usd", price_method="price_method", price_day="price_day",
        ),
        on=["gpu_id", "num_gpus"],
    ).with_columns(
        basis=pl.format("buy_{}", pl.col("market")),
        usd_per_million_tokens=pl.col("total_cost_usd")
        * 1e6
        / (pl.col("decode_tokens_per_s") * seconds),
        low=pl.col("total_cost_usd") * 1e6 / (pl.col("decode_high") * seconds),
        high=pl.col("total_cost_usd") * 1e6 / (pl.col("decode_low") * seconds),
        utilization=pl.lit(utilization),
        detail=pl.format("{}{}; {} system, {} price of {}", pl.lit(LOCAL_USE),
                         layer_split_note(pl.col("num_gpus")), pl.col("market"),
                         pl.col("price_method"), pl.col("price_day")),
    )  # fmt: skip
    on_demand = offers.filter(pl.col("price_type").is_in(["on_demand", "spot"]))
    cheapest = (
        rates.select("gpu_id", "num_gpus")
        .unique()
        .join(on_demand, on="gpu_id")
        .filter(pl.col("gpu_count") >= pl.col("num_gpus"))
        .sort("usd_per_gpu_hour", "provider", "instance_type")
        .group_by("gpu_id", "num_gpus", "price_type", maintain_order=True)
        .first()
        .select("gpu_id", "num_gpus", "price_type", "usd_per_gpu_hour", "provider", "instance_type")
    )  # fmt: skip
    hourly = pl.col("usd_per_gpu_hour") * pl.col("num_gpus")
    rented = rates.join(cheapest, on=["gpu_id", "num_gpus"]).with_columns(
        basis=pl.format("rent_{}", pl.col("price_type")),
        usd_per_million_tokens=hourly * 1e6 / (pl.col("decode_tokens_per_s") * 3600),
        low=hourly * 1e6 / (pl.col("decode_high") * 3600),
        high=hourly * 1e6 / (pl.col("decode_low") * 3600),
        utilization=pl.lit(None, dtype=pl.Float64),
        detail=pl.format("{}{}; {} {} at ${}/GPU-hour", pl.lit(LOCAL_USE),
                         layer_split_note(pl.col("num_gpus")), pl.col("provider"),
                         pl.col("instance_type"), pl.col("usd_per_gpu_hour").round(3)),
    )  # fmt: skip
    columns = ["gpu_id", "model_params_b", "bits", "num_gpus", "basis",
               "usd_per_million_tokens", "low", "high", "utilization", "detail",
               "rate_source", "decode_tokens_per_s"]  # fmt: skip
    return (
        pl.concat([bought.select(columns), rented.select(columns)], how="vertical_relaxed")
        .with_columns(
            rank=pl.col("usd_per_million_tokens")
            .rank("min")
            .over("model_params_b", "bits", "basis")
            .cast(pl.Int32)
        )  # fmt: skip
        .sort("model_params_b", "bits", "basis", "usd_per_million_tokens")
    )


def decode_validation(benchmarks: pl.DataFrame, gpus: pl.DataFrame) -> dict:
    """Leave-one-GPU-out error of the llama.cpp decode model: median and p90 APE, n."""
    logo = leave_one_gpu_out(decode_roofline(benchmarks, gpus), "llama.cpp")
    if logo.is_empty():
        return {"median_ape": None, "p90_ape": None, "n": 0, "n_gpus": 0}
    return {
        "median_ape": float(logo["ape"].median()),
        "p90_ape": float(np.quantile(logo["ape"].to_numpy(), 0.9)),
        "n": logo.height,
        "n_gpus": logo["gpu_id"].n_unique(),
    }
