"""Published API list prices of open LLMs (`sources/data/llm/api_prices.csv`).

One row per model x provider: USD per million input and output tokens, the day the price
was recorded, and where (sources/data/llm/MANIFEST.md, "api_prices.csv"). The table
`llm_api_prices` shows them beside `llm_serving_cost` as a sanity band: what serving a
model is sold for. They are never an input to the cost model.

Every cell is checked (`sources.tables.read_table`): a model id outside the shared list of
issue 24, a provider that is not a lowercase slug, a price outside `PRICE_BAND`, a date
in the future, a link that is not https or a model x provider given twice is refused
naming file, line and field.
"""

import re
from pathlib import Path

import polars as pl

from sources.llm_models import model_ids
from sources.tables import Column, https_url, read_table

API_PRICES = Path(__file__).parent / "data" / "llm" / "api_prices.csv"
# USD per million tokens. Open-model list prices run from $0.02 (8B) to $7 (DeepSeek-R1
# output); a figure under $0.001 is a per-token or per-thousand price typed as per-million,
# one over $100 a per-billion or a typo. A free tier (0) is not a list price.
PRICE_BAND = (0.001, 100.0)
_SLUG = re.compile(r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$")


def _price(value: object) -> str | None:
    low, high = PRICE_BAND
    if not low <= float(value) <= high:  # type: ignore[arg-type]
        return f"{value} USD per million tokens is outside {low:g}-{high:g}"
    return None


def _provider(value: object) -> str | None:
    return None if _SLUG.match(str(value)) else f"not a lowercase provider slug: {value!r}"


def read_llm_api_prices(
    path: str | Path = API_PRICES, known_models: frozenset[str] | None = None
) -> pl.DataFrame:
    """The API price rows: model_id, provider, the two prices, as_of, citation, url.

    `known_models` defaults to the model table's ids (sources/data/llm/models.csv): an API
    price of a model the serving tables do not know could not be compared with anything.
    """
    known = model_ids() if known_models is None else known_models
    columns = [
        Column("model_id", choices=known),
        Column("provider", check=_provider),
        Column("usd_per_million_input_tokens", "float", check=_price),
        Column("usd_per_million_output_tokens", "float", check=_price),
        Column("as_of", "date", not_future=True),
        Column("citation"),
        Column("url", check=https_url),
    ]
    return read_table(path, columns, unique=("model_id", "provider")).sort("model_id", "provider")
