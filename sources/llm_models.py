"""The strict reader of the bundled LLM architectures (sources/data/llm/models.csv).

One row per model: parameter counts (total: all experts, resident in memory; active: what
one token reads), the attention's shape (GQA / MHA / MLA / sliding-window GQA) and the
figures its KV cache formula needs. A malformed row is refused naming file and line: a
per-cell problem by `read_table`, a problem across cells (an MLA row without its latent
ranks, more active than total parameters) by `_check_rows`.
"""

from pathlib import Path

import polars as pl

from sources.tables import BadInputError, Column, read_table

MODELS_FILE = Path(__file__).parent / "data" / "llm" / "models.csv"
ATTENTION_TYPES = frozenset({"mha", "gqa", "mla", "sliding_gqa"})
# Which optional columns each attention type needs (and must leave empty).
_NEEDS: dict[str, tuple[str, ...]] = {
    "mha": ("head_dim",),
    "gqa": ("head_dim",),
    "sliding_gqa": ("head_dim", "sliding_window", "sliding_layers"),
    "mla": ("kv_lora_rank", "qk_rope_head_dim"),
}
_OPTIONAL = ("head_dim", "kv_lora_rank", "qk_rope_head_dim", "sliding_window", "sliding_layers")


def _model_id(value: object) -> str | None:
    text = str(value)
    ok = text == text.lower() and text.replace("-", "").replace(".", "").isalnum()
    return None if ok else f"not a lower-case model id: {text!r}"


def _columns() -> list[Column]:
    positive = {"exclusive_minimum": 0}
    return [
        Column("model_id", check=_model_id),
        Column("name"),
        Column("total_params_b", "float", **positive),
        Column("active_params_b", "float", **positive),
        Column("layers", "int", minimum=1),
        Column("hidden_size", "int", minimum=1),
        Column("attention", choices=ATTENTION_TYPES),
        Column("attention_heads", "int", minimum=1),
        Column("kv_heads", "int", minimum=1),
        Column("head_dim", "int", required=False, minimum=1),
        Column("kv_lora_rank", "int", required=False, minimum=1),
        Column("qk_rope_head_dim", "int", required=False, minimum=1),
        Column("sliding_window", "int", required=False, minimum=1),
        Column("sliding_layers", "int", required=False, minimum=1),
        Column("num_experts", "int", required=False, minimum=2),
        Column("experts_per_token", "int", required=False, minimum=1),
        Column("context_max", "int", minimum=1),
        Column("licence"),
        Column("source"),
        Column("as_of", "date", not_future=True),
    ]


def _row_problem(row: dict) -> tuple[str, str] | None:
    """The first inconsistency across a row's cells: (column, reason), or None."""
    if row["active_params_b"] > row["total_params_b"]:
        return "active_params_b", (
            f"{row['active_params_b']} active parameters exceed the {row['total_params_b']} total"
        )
    needs = _NEEDS[row["attention"]]
    for name in _OPTIONAL:
        if name in needs and row[name] is None:
            return name, f"{row['attention']} attention needs {name}"
        if name not in needs and row[name] is not None:
            return name, f"{row['attention']} attention has no {name} (leave it empty)"
    if row["kv_heads"] > row["attention_heads"]:
        return "kv_heads", "more KV heads than attention heads"
    if row["sliding_layers"] is not None and row["sliding_layers"] > row["layers"]:
        return "sliding_layers", f"more sliding layers than the {row['layers']} layers"
    moe = (row["num_experts"] is None, row["experts_per_token"] is None)
    if moe[0] != moe[1]:
        return "num_experts", "num_experts and experts_per_token go together"
    if row["num_experts"] is not None:
        if row["experts_per_token"] >= row["num_experts"]:
            return "experts_per_token", "a token cannot use every expert of a MoE layer"
        if row["active_params_b"] >= row["total_params_b"]:
            return "active_params_b", "a mixture of experts activates fewer than its total"
    elif row["active_params_b"] != row["total_params_b"]:
        return "active_params_b", "a dense model (no experts) activates all its parameters"
    return None


def read_llm_models(path: str | Path = MODELS_FILE) -> pl.DataFrame:
    """The model table, one row per model_id; BadInputError names file and line."""
    rows = read_table(path, _columns(), unique=("model_id",), line_column="line")
    for row in rows.iter_rows(named=True):
        problem = _row_problem(row)
        if problem is not None:
            raise BadInputError(path, row["line"], *problem)
    return rows.drop("line")


def model_ids(path: str | Path = MODELS_FILE) -> frozenset[str]:
    """The model ids the project knows (the one list: models.csv), for other readers."""
    return frozenset(read_llm_models(path)["model_id"])
