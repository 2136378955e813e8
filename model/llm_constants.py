"""The LLM configurations the model can size: reference architectures and weight formats.

Kept apart from model/llm.py, and importing nothing from the model, so that
`parameters.check` can validate `llm_model_sizes_b` and `llm_bits` against them.
"""

# Reference architectures per model size (model cards: Llama 3.1 8B and 70B, Qwen2.5 32B):
# params (billions), layers, KV heads, head dimension.
ARCHITECTURES: dict[int, tuple[str, float, int, int, int]] = {
    8: ("Llama 3.1 8B", 8.03, 32, 8, 128),
    32: ("Qwen2.5 32B", 32.5, 64, 8, 128),
    70: ("Llama 3.1 70B", 70.6, 80, 8, 128),
}
# Bits per weight of the GGUF formats each bit class stands for (llama.cpp's quantize
# table: Q4_K_M 4.85 bpw on Llama 3 8B, Q8_0 8.5 bpw); measured rows use their own format.
BITS_PER_WEIGHT = {4: 4.85, 8: 8.5, 16: 16.0}
