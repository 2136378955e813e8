"""How much each benchmark table counts toward the headline workloads (issue 22, step 4).

The three headline workloads (16-bit training, 16- and 8-bit inference) describe
transformer work, as Dettmers' 2023 post does: his ranking is of transformer and LLM
throughput. The relative-performance fit (model/performance_fit.py) is a weighted least
squares over benchmark tables, and a table's weight is its class's weight here:
transformer and LLM tables count fully, diffusion models half, CNN- and RNN-only tables a
tenth. CNN and RNN tables still bridge GPUs (a GPU measured only there keeps its measured
ratios to the GPUs it shares a table with); they just no longer pull the GPUs that also have
transformer results toward a compromise. The unweighted value (every table weight 1) is
kept beside it as `relative_performance.value_all_benchmarks`.

A table's class comes from its model name (`LLM_MODELS`, `DIFFUSION_MODELS`) and otherwise
its `workload_class` (transformer, cnn, rnn; sources/benchmarks/records.py).
"""

import polars as pl

# Decoder LLMs (MLPerf Llama 2 70B LoRA, Llama 3.1 8B/405B, GPT-3, GPT-J, Mixtral).
LLM_MODELS = r"(?i)llama|gpt|mixtral|mistral|qwen|deepseek"
# Diffusion image models (MLPerf Stable Diffusion v2 training, SDXL inference, Flux).
DIFFUSION_MODELS = r"(?i)stable_diffusion|sdxl|flux"

# class -> (weight, why). A table's rows enter the least squares with this weight, so a
# table of weight w counts like w tables of weight 1.
BENCHMARK_CLASSES: dict[str, tuple[float, str]] = {
    "llm": (
        1.0,
        "decoder LLM training and inference (Llama 2 70B LoRA, Llama 3.1, GPT-J, Mixtral): "
        "what the headline workloads describe",
    ),
    "transformer": (
        1.0,
        "encoder and encoder-decoder transformers (BERT, Transformer-XL, the NMT "
        "Transformer, Whisper): the attention and GEMM mix of Dettmers' transformer "
        "figures; the issue names BERT among the headline benchmarks",
    ),
    "diffusion": (
        0.5,
        "Stable Diffusion / SDXL / Flux: attention blocks inside a convolutional U-Net "
        "(or a DiT); secondary evidence for transformer speed",
    ),
    "cnn": (
        0.1,
        "convolution-bound vision models (ResNet, SSD, RetinaNet, Mask R-CNN, U-Net3D, "
        "WaveGlow): a GPU pair's CNN ratio departs from its LLM ratio by up to 1.5x on "
        "data-center GPUs (MLPerf Training v4.1, B200/H100: SSD 1.59 vs Llama 2 70B LoRA "
        "2.33), so a CNN table only bridges GPUs",
    ),
    "rnn": (
        0.1,
        "LSTM models (GNMT, RNN-T, Tacotron 2): latency- and bandwidth-bound recurrences "
        "that use the tensor cores as little as CNNs; bridge only, like CNN tables",
    ),
}


def default_weights() -> dict[str, float]:
    """The class weights of BENCHMARK_CLASSES (ModelParameters.benchmark_weights)."""
    return {name: weight for name, (weight, _) in BENCHMARK_CLASSES.items()}


def uniform_weights() -> dict[str, float]:
    """Every class weight 1: the all-benchmarks value (no transformer weighting)."""
    return dict.fromkeys(BENCHMARK_CLASSES, 1.0)


def benchmark_class() -> pl.Expr:
    """A row's benchmark class from its `model` and `workload_class` (module docstring)."""
    model = pl.col("model").cast(pl.Utf8).fill_null("")
    return (
        pl.when(model.str.contains(LLM_MODELS))
        .then(pl.lit("llm"))
        .when(model.str.contains(DIFFUSION_MODELS))
        .then(pl.lit("diffusion"))
        .otherwise(pl.col("workload_class").cast(pl.Utf8))
    )


def with_weight(rows: pl.DataFrame, weights: dict[str, float] | None) -> pl.DataFrame:
    """`rows` (with `model` and `workload_class`) plus `weight`; 1 everywhere without weights.

    A class without a weight is refused (never silently weighted 1 or 0), naming it.
    """
    if weights is None or "model" not in rows.columns or "workload_class" not in rows.columns:
        return rows.with_columns(weight=pl.lit(1.0))
    classes = rows.select(cls=benchmark_class())["cls"]
    missing = sorted(set(classes.drop_nulls().to_list()) - set(weights))
    if missing or classes.null_count():
        raise ValueError(
            f"no benchmark weight for class(es) {missing or ['<null workload_class>']}; "
            f"configured: {sorted(weights)} (model/benchmark_weights.py)"
        )
    if any(w <= 0 for w in weights.values()):
        raise ValueError(f"benchmark weights must be positive, got {weights}")
    mapping = {k: float(v) for k, v in weights.items()}
    return rows.with_columns(weight=classes.replace_strict(mapping, return_dtype=pl.Float64))
