"""KV cache and weight arithmetic per attention type, checked against hand-computed figures."""

import pytest

from model.llm_constants import ARCHITECTURES
from model.llm_models import (
    active_bytes_per_token,
    kv_bytes_per_token,
    kv_cache_bytes,
    params_read,
    weight_bytes,
)
from sources.llm_models import read_llm_models

MODELS = {row["model_id"]: row for row in read_llm_models().iter_rows(named=True)}


def test_gqa_kv_per_token():
    # Llama 3.1 8B: 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072 bytes.
    assert kv_bytes_per_token(MODELS["llama-3.1-8b"]) == 131_072
    # Llama 2 7B is MHA (32 KV heads): 4x the 8B's cache per token.
    assert kv_bytes_per_token(MODELS["llama-2-7b"]) == 524_288
    # 70B at an fp8 cache (1 byte): 2 x 80 x 8 x 128 = 163,840 bytes per token.
    assert kv_bytes_per_token(MODELS["llama-3.1-70b"], kv_bytes=1) == 163_840


def test_mla_kv_per_token():
    # DeepSeek-R1: 61 layers x (512 latent + 64 rope) x 2 bytes = 70,272 bytes per token,
    # whatever the 128 heads: the latent is shared.
    assert kv_bytes_per_token(MODELS["deepseek-r1"]) == 70_272
    assert kv_cache_bytes(MODELS["deepseek-r1"], 1000) == 70_272_000


def test_sliding_window_layers_are_capped_at_the_window():
    model = MODELS["gpt-oss-120b"]
    # Per layer and token: 2 x 8 KV heads x 64 dims x 2 bytes = 2,048 bytes; 18 full layers.
    assert kv_cache_bytes(model, 100) == 2_048 * 36 * 100  # under the window: all 36 layers
    assert kv_cache_bytes(model, 1000) == 2_048 * (18 * 1000 + 18 * 128)


def test_moe_memory_uses_total_decode_uses_active():
    r1 = MODELS["deepseek-r1"]
    assert weight_bytes(r1["total_params_b"], 8) == 671e9
    assert active_bytes_per_token(r1, 8) == 37e9
    assert params_read(r1, 1) == pytest.approx(37.0)
    # Mixtral (E = 8, k = 2): e = (46.7 - 12.9) / 6 = 5.6333, S = 12.9 - 2e = 1.6333.
    # Batch 2 touches 8 x (1 - 0.75^2) = 3.5 experts: 1.6333 + 3.5 x 5.6333 = 21.35.
    assert params_read(MODELS["mixtral-8x7b"], 2) == pytest.approx(21.35)
    # Large batches touch every expert: capped at the total.
    assert params_read(MODELS["mixtral-8x7b"], 256) == pytest.approx(46.7)
    assert params_read(MODELS["llama-3.1-8b"], 64) == pytest.approx(8.03)


def test_batch1_architectures_come_from_the_model_table():
    for size, (name, params, layers, kv_heads, head_dim) in ARCHITECTURES.items():
        row = next(r for r in MODELS.values() if r["name"] == name)
        assert (params, layers, kv_heads, head_dim) == (
            row["total_params_b"],
            row["layers"],
            row["kv_heads"],
            row["head_dim"],
        ), size
