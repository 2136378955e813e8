"""What a model costs in memory and in bytes read: weights, KV cache, experts touched.

Pure functions over the `llm_models` rows (sources/data/llm/models.csv). Each formula is
written once, as a Polars expression over a model's columns, so the serving grid
(model/llm_serving.py) evaluates it vectorised; the scalar helpers run the same expression
on one row (for tests and for single answers).

- **Weights in memory** = total parameters x bits / 8. A mixture of experts keeps every
  expert resident (any token may be routed to any of them), so memory uses the TOTAL.
- **KV cache** for a sequence of `c` tokens, at `kv_bytes` per element:
  * GQA / MHA: 2 (K and V) x layers x kv_heads x head_dim x kv_bytes x c
  * sliding-window GQA (gpt-oss): the `sliding_layers` layers keep only the last `window`
    tokens: 2 x kv_heads x head_dim x kv_bytes x ((layers - sliding) x c + sliding x min(c, window))
  * MLA (DeepSeek): one compressed latent plus one rotary key per token and layer, shared
    by every head: layers x (kv_lora_rank + qk_rope_head_dim) x kv_bytes x c
- **Parameters read per decode step** at batch B: a dense model reads all its weights once
  per step. A MoE reads its always-active part S (attention, shared experts, router,
  embeddings) and every expert that at least one of the B tokens is routed to. With E
  experts per layer of which each token uses k, uniform routing touches on average
  E x (1 - (1 - k/E)^B) experts per layer. Writing total = S + E x e and
  active = S + k x e (e: one expert's parameters summed over the MoE layers),
  e = (total - active) / (E - k), S = active - k x e, and
      params read(B) = S + e x E x (1 - (1 - k/E)^B)
  which is `active` at B = 1 and tends to `total` as B grows (capped at it by construction).
  Routing is not uniform in practice (popular experts), so this is an upper bound on the
  distinct experts touched; at B >= 64 it is within a few % of every expert anyway.
"""

from collections.abc import Mapping

import polars as pl

_GB = 1e9


def weight_bytes(total_params_b: float, bits_per_weight: float) -> float:
    """Bytes of weights in memory: every parameter (all experts) at `bits_per_weight`."""
    return total_params_b * _GB * bits_per_weight / 8


def kv_cache_bytes_expr(context: pl.Expr, kv_bytes: pl.Expr | float) -> pl.Expr:
    """KV cache bytes of one sequence of `context` tokens, per the row's attention type.

    Needs the llm_models columns attention, layers, kv_heads, head_dim, kv_lora_rank,
    qk_rope_head_dim, sliding_window, sliding_layers.
    """
    kv_bytes = pl.lit(kv_bytes) if not isinstance(kv_bytes, pl.Expr) else kv_bytes
    per_layer_token = 2 * pl.col("kv_heads") * pl.col("head_dim") * kv_bytes
    sliding = pl.col("sliding_layers").fill_null(0)
    window = pl.min_horizontal(context, pl.col("sliding_window").fill_null(0))
    gqa = per_layer_token * ((pl.col("layers") - sliding) * context + sliding * window)
    mla = pl.col("layers") * (pl.col("kv_lora_rank") + pl.col("qk_rope_head_dim")) * kv_bytes
    return pl.when(pl.col("attention") == "mla").then(mla * context).otherwise(gqa).cast(pl.Float64)


def params_read_expr(batch: pl.Expr) -> pl.Expr:
    """Parameters (billions) read per decode step at `batch` sequences (module docstring).

    Needs total_params_b, active_params_b, num_experts, experts_per_token.
    """
    experts = pl.col("num_experts").cast(pl.Float64)
    k = pl.col("experts_per_token").cast(pl.Float64)
    per_expert = (pl.col("total_params_b") - pl.col("active_params_b")) / (experts - k)
    always = pl.col("active_params_b") - k * per_expert
    touched = experts * (1 - (1 - k / experts).pow(batch.cast(pl.Float64)))
    return (
        pl.when(pl.col("num_experts").is_null())
        .then(pl.col("total_params_b"))
        .otherwise(pl.min_horizontal(always + per_expert * touched, pl.col("total_params_b")))
        .cast(pl.Float64)
    )


def _one(model: Mapping, expr: pl.Expr) -> float:
    """Evaluate an expression on one model row (a mapping of llm_models columns)."""
    columns = (
        "attention", "layers", "kv_heads", "head_dim", "kv_lora_rank", "qk_rope_head_dim",
        "sliding_window", "sliding_layers", "total_params_b", "active_params_b",
        "num_experts", "experts_per_token",
    )  # fmt: skip
    schema = {c: (pl.Utf8 if c == "attention" else pl.Float64) for c in columns}
    row = pl.DataFrame([{c: model.get(c) for c in columns}], schema=schema)
    return float(row.select(expr).item())


def kv_cache_bytes(model: Mapping, context: int, kv_bytes: float = 2.0) -> float:
    """KV cache bytes of one sequence of `context` tokens (scalar kv_cache_bytes_expr)."""
    return _one(model, kv_cache_bytes_expr(pl.lit(context, pl.Float64), kv_bytes))


def kv_bytes_per_token(model: Mapping, kv_bytes: float = 2.0) -> float:
    """KV bytes per token of context below any sliding window (1 token's full cache)."""
    return kv_cache_bytes(model, 1, kv_bytes)


def params_read(model: Mapping, batch: int) -> float:
    """Parameters (billions) read per decode step at `batch` (scalar params_read_expr)."""
    return _one(model, params_read_expr(pl.lit(batch)))


def active_bytes_per_token(model: Mapping, bits_per_weight: float) -> float:
    """Weight bytes one decoded token reads alone (batch 1): the ACTIVE parameters."""
    return model["active_params_b"] * _GB * bits_per_weight / 8
