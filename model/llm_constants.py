"""The LLM configurations the model can size: reference architectures and weight formats.

Kept apart from model/llm.py, and importing nothing from the model, so that
`parameters.check` can validate `llm_model_sizes_b` and `llm_bits` against them.
"""

from sources.llm_models import read_llm_models

# The batch-1 size classes and the model each stands for. The architecture itself (name,
# parameters, layers, KV heads, head dimension) is read from the bundled model table
# (sources/data/llm/models.csv, the `llm_models` table): one place for each fact.
SIZE_CLASS_MODELS: dict[int, str] = {8: "llama-3.1-8b", 32: "qwen2.5-32b", 70: "llama-3.1-70b"}


def _architectures() -> dict[int, tuple[str, float, int, int, int]]:
    models = {row["model_id"]: row for row in read_llm_models().iter_rows(named=True)}
    return {
        size: (
            models[model_id]["name"],
            models[model_id]["total_params_b"],
            models[model_id]["layers"],
            models[model_id]["kv_heads"],
            models[model_id]["head_dim"],
        )
        for size, model_id in SIZE_CLASS_MODELS.items()
    }


# Reference architectures per model size: name, params (billions), layers, KV heads, head dim.
ARCHITECTURES: dict[int, tuple[str, float, int, int, int]] = _architectures()
# Bits per weight of the GGUF formats each bit class stands for (llama.cpp's quantize
# table: Q4_K_M 4.85 bpw on Llama 3 8B, Q8_0 8.5 bpw); measured rows use their own format.
BITS_PER_WEIGHT = {4: 4.85, 8: 8.5, 16: 16.0}
