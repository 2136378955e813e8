"""The bundled model table: read whole, and every malformed row refused naming file and line."""

from pathlib import Path

import polars as pl
import pytest

from sources.llm_models import MODELS_FILE, read_llm_models
from sources.tables import BadInputError

# The shared model ids of issue 24 (docs/schema.md, "LLM serving").
MODEL_IDS = {
    "llama-2-7b", "llama-3.1-8b", "mistral-7b", "qwen2.5-32b", "llama-2-70b", "llama-3.1-70b",
    "llama-3.3-70b", "llama-3.1-405b", "mixtral-8x7b", "qwen3-30b-a3b", "gpt-oss-20b",
    "gpt-oss-120b", "deepseek-r1",
}  # fmt: skip


def test_bundled_table_has_every_shared_model_with_a_source():
    models = read_llm_models()
    assert set(models["model_id"]) == MODEL_IDS
    assert models["source"].str.contains("config.json").all()
    r1 = models.row(by_predicate=pl.col("model_id") == "deepseek-r1", named=True)
    assert (r1["total_params_b"], r1["active_params_b"], r1["attention"]) == (671, 37, "mla")
    assert (r1["kv_lora_rank"], r1["qk_rope_head_dim"]) == (512, 64)


def _write_with(tmp_path: Path, model_id: str, column: str, value: str) -> tuple[Path, int]:
    """The bundled file with one cell of one row replaced."""
    lines = MODELS_FILE.read_text(encoding="utf-8").splitlines()
    header_at = next(i for i, line in enumerate(lines) if line.startswith("model_id,"))
    header = lines[header_at].split(",")
    for i, line in enumerate(lines):
        if line.startswith(model_id + ","):
            cells = line.split(",")
            cells[header.index(column)] = value
            lines[i] = ",".join(cells)
            target = i + 1
    path = tmp_path / "models.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path, target


@pytest.mark.parametrize(
    ("model_id", "column", "value", "reason"),
    [
        ("deepseek-r1", "kv_lora_rank", "", "mla attention needs kv_lora_rank"),
        ("llama-3.1-8b", "active_params_b", "9.0", "exceed"),
        ("llama-3.1-8b", "attention", "gqa2", "is not one of"),
        ("gpt-oss-20b", "sliding_window", "", "needs sliding_window"),
        ("llama-3.1-8b", "sliding_window", "128", "has no sliding_window"),
        ("mixtral-8x7b", "experts_per_token", "", "go together"),
        ("qwen2.5-32b", "active_params_b", "3.0", "dense model"),
        ("llama-3.1-8b", "layers", "zero", "not a valid int"),
    ],
)
def test_malformed_row_is_refused_naming_file_and_line(tmp_path, model_id, column, value, reason):
    path, line = _write_with(tmp_path, model_id, column, value)
    with pytest.raises(BadInputError, match=reason) as error:
        read_llm_models(path)
    assert error.value.path == str(path)
    assert error.value.line == line
