"""API list prices of open LLMs (sources/llm_api_prices.py): the bundled rows and refusals."""

from pathlib import Path

import pytest

from sources.llm_api_prices import API_PRICES, read_llm_api_prices
from sources.llm_models import model_ids
from sources.tables import BadInputError

HEADER = (
    "model_id,provider,usd_per_million_input_tokens,usd_per_million_output_tokens,as_of,"
    "citation,url"
)
GOOD = "llama-3.3-70b,deepinfra,0.1,0.32,2026-08-22,a registry at a commit,https://example.org/x"


def _file(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "api_prices.csv"
    path.write_text("\n".join(["# a comment", HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_bundled_prices_cover_the_issue_models_with_a_date_and_a_link():
    prices = read_llm_api_prices()
    assert prices.height >= 25
    assert set(prices["model_id"]) <= model_ids()
    # The models the issue names, each from at least two providers but the 405B.
    per_model = dict(prices.group_by("model_id").len().iter_rows())
    for model in ("llama-3.1-8b", "llama-3.3-70b", "qwen3-30b-a3b", "gpt-oss-20b",
                  "gpt-oss-120b", "deepseek-r1"):  # fmt: skip
        assert per_model[model] >= 2, model
    assert per_model["llama-3.1-405b"] >= 1
    assert {"together", "deepinfra", "groq", "cerebras", "fireworks", "openrouter"} <= set(
        prices["provider"]
    )
    assert prices["url"].str.starts_with("https://").all()
    assert prices["as_of"].is_not_null().all()
    # The sanity band the issue quotes: a 70B model's output at $0.30-1.04 per million.
    llama = prices.filter(prices["model_id"] == "llama-3.3-70b")
    assert (
        0.3
        <= llama["usd_per_million_output_tokens"].min()
        <= llama["usd_per_million_output_tokens"].max()
        <= 1.1
    )


def test_a_good_row_loads(tmp_path):
    rows = read_llm_api_prices(_file(tmp_path, GOOD))
    assert rows.row(0, named=True)["usd_per_million_output_tokens"] == 0.32


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (GOOD.replace("llama-3.3-70b", "llama-4-70b"), "model_id", "not one of"),
        (GOOD.replace("deepinfra", "DeepInfra"), "provider", "provider slug"),
        (GOOD.replace(",0.1,", ",0,"), "usd_per_million_input_tokens", "outside"),
        (GOOD.replace(",0.32,", ",3.2e-07,"), "usd_per_million_output_tokens", "outside"),
        (GOOD.replace(",0.32,", ",320,"), "usd_per_million_output_tokens", "outside"),
        (GOOD.replace(",0.32,", ",,"), "usd_per_million_output_tokens", "missing value"),
        (GOOD.replace("2026-08-22", "2999-01-01"), "as_of", "in the future"),
        (GOOD.replace("2026-08-22", "22/08/2026"), "as_of", "not a valid date"),
        (GOOD.replace("https://", "http://"), "url", "not an https URL"),
        (GOOD.replace(",https", ",extra,https"), "(row)", "expected 7 fields"),
    ],
)
def test_malformed_rows_are_refused_naming_file_line_and_field(tmp_path, row, field, reason):
    path = _file(tmp_path, GOOD.replace("deepinfra", "groq"), row)
    with pytest.raises(BadInputError, match=reason) as err:
        read_llm_api_prices(path)
    assert err.value.line == 4 and err.value.column == field
    assert err.value.path == str(path)


def test_a_model_provider_given_twice_is_refused(tmp_path):
    with pytest.raises(BadInputError, match="duplicate of line 3"):
        read_llm_api_prices(_file(tmp_path, GOOD, GOOD.replace("0.32", "0.4")))


def test_bundled_file_is_the_default():
    assert API_PRICES.name == "api_prices.csv" and API_PRICES.exists()
