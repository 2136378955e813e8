"""LLM serving (issue 24, item 8): serve model M to N users at T tokens/s each.

Which GPUs, how many, and what a million output and input tokens cost to buy (new, used) or
rent (on-demand, spot), per model and interactivity target, from `llm_serving_cost`; the
published API list prices for the same model beside them (`llm_api_prices`, a sanity band,
never an input). The front page gets one summary table (20 tokens/s per user); the page
`llm.html` gets one section per model with its table, its chart and what N users need.
"""

import math

import polars as pl

from reports.content.blocks import Cell, Figure, Section, Table, gpu_href
from reports.content.mlcommons import NOTICE, mlperf_results, result_lines, uses_mlperf
from reports.dataset import Dataset
from reports.safety import slug

BASES = {
    "buy_new": "buy new",
    "buy_used": "buy used",
    "rent_on_demand": "rent on-demand",
    "rent_spot": "rent spot",
}
TARGETS = (10, 20, 50)  # tokens/s per user (issue 24 item 4: at least these)
FRONT_TARGET = 20
USERS = (100, 1000)  # the "N users" the model page sizes a deployment for
# Display order (the model ids; models the table adds later follow by name).
MODEL_ORDER = (
    "llama-3.1-8b",
    "llama-3.1-70b",
    "llama-3.3-70b",
    "gpt-oss-120b",
    "gpt-oss-20b",
    "qwen3-30b-a3b",
    "deepseek-r1",
    "qwen2.5-32b",
    "mixtral-8x7b",
    "llama-3.1-405b",
    "llama-2-7b",
    "llama-2-70b",
)
API_TITLE = "published API prices, for comparison (not an input)"
PAGE = "llm.html"


def usd(value: float | None) -> str:
    """'$0.045', '$0.45', '$4.50', '$1,234': enough digits for a price per 1M tokens."""
    if value is None or not math.isfinite(value):
        return ""
    if value >= 100:
        return f"${value:,.0f}"
    if value >= 0.1:
        return f"${value:.2f}"
    return f"${value:.2g}" if value > 0 else "$0"


def system_label(gpu_id: str, num_gpus: int) -> str:
    """'h100-sxm5-80gb' or '8x h100-sxm5-80gb'."""
    return gpu_id if num_gpus == 1 else f"{num_gpus}x {gpu_id}"


def serving_models(ds: Dataset) -> list[str]:
    """Models with a serving cost, in display order; ids that are not safe slugs are left out."""
    present = set(ds.llm_serving_cost["model_id"].drop_nulls())
    ordered = [m for m in MODEL_ORDER if m in present] + sorted(present - set(MODEL_ORDER))
    out = []
    for model in ordered:
        try:
            out.append(slug(model))
        except ValueError:
            continue
    return out


def model_anchor(model_id: str) -> str:
    """The model's section id on llm.html."""
    return f"model-{model_id}"


def cheapest(cost: pl.DataFrame, model: str, target: float, basis: str) -> dict | None:
    """The cheapest system per 1M output tokens for the model, target and basis (any precision).

    A configuration on an architecture the serving evidence reaches (`grounded`) comes
    before any extrapolated one, as `rank` orders them (model/llm_serving_cost.py).
    """
    hit = cost.filter(
        (pl.col("model_id") == model)
        & (pl.col("min_tokens_per_s_per_user") == target)
        & (pl.col("basis") == basis)
        & pl.col("usd_per_million_output_tokens").is_not_null()
    )
    if hit.is_empty():
        return None
    hit = hit.with_columns(_estimate=pl.col("grounded").fill_null(True).not_())
    return (
        # Ties: fewer GPUs, then fewer bits (docs/methodology.md, Ties).
        hit.sort(
            "_estimate", "usd_per_million_output_tokens", "gpu_id", "num_gpus", "precision_bits"
        )
        .drop("_estimate")
        .row(0, named=True)
    )


def deployment(users: int, row: dict) -> str:
    """'1,000 users: 16 systems, 128 GPUs' for a system that serves row['concurrency']."""
    per_system = row["concurrency"] or 0
    if per_system <= 0:
        return ""
    systems = math.ceil(users / per_system)
    gpus = systems * row["num_gpus"]
    plural = {"systems": "s" if systems > 1 else "", "gpus": "s" if gpus > 1 else ""}
    return f"{users:,} users: {systems:,} system{plural['systems']}, {gpus:,} GPU{plural['gpus']}"


def cost_cell(row: dict | None, users: tuple[int, ...] = ()) -> Cell:
    """A system, its cost per 1M output (interval) and input tokens, and what it serves."""
    if row is None:
        return Cell("–")
    lines = [
        f"{usd(row['usd_per_million_output_tokens'])} per 1M output tokens "
        f"({usd(row['low'])}–{usd(row['high'])})",
        f"{usd(row['usd_per_million_input_tokens'])} per 1M input tokens",
        f"{row['concurrency']} users at {row['output_tokens_per_s_per_user']:.0f} tokens/s "
        f"each; {row['precision_bits']}-bit",
    ]
    sizing = "; ".join(d for d in (deployment(n, row) for n in users) if d)
    if sizing:
        lines.append(sizing)
    if row.get("grounded") is False:
        lines.append("estimated: no serving measurement on this GPU's architecture")
    return Cell(
        system_label(row["gpu_id"], row["num_gpus"]),
        href=gpu_href(row["gpu_id"]),
        lines=tuple(lines),
    )


def api_band(prices: pl.DataFrame, model: str) -> Cell:
    """The published API list prices of the model: output and input range, providers, date."""
    rows = prices.filter(pl.col("model_id") == model)
    if rows.is_empty():
        return Cell("no published API price")
    out, inp = rows["usd_per_million_output_tokens"], rows["usd_per_million_input_tokens"]

    def band(series: pl.Series) -> str:
        low, high = series.min(), series.max()
        return usd(low) if low == high else f"{usd(low)}–{usd(high)}"

    providers = rows["provider"].n_unique()
    return Cell(
        f"{band(out)} per 1M output",
        lines=(
            f"{band(inp)} per 1M input",
            f"{providers} provider{'s' if providers > 1 else ''}, as of {rows['as_of'].max()}",
        ),
    )


def serving_summary_table(ds: Dataset, target: float = FRONT_TARGET) -> Table:
    """Front page: per model, the cheapest system per basis at `target` tokens/s per user."""
    rows = []
    for model in serving_models(ds):
        rows.append(
            (
                Cell(model, href=f"{PAGE}#{model_anchor(model)}"),
                *(cost_cell(cheapest(ds.llm_serving_cost, model, target, b)) for b in BASES),
                api_band(ds.llm_api_prices, model),
            )
        )
    return Table(
        ("model", *BASES.values(), API_TITLE),
        rows,
        title=f"Serving many users: the cheapest system at {target:g} tokens/s per user",
        unit="USD per 1M tokens (95 % interval of the output price)",
        css="cards",  # the verdicts' card layout on phones, not a verdict
        empty="No serving cost in this version.",
    )


def model_table(ds: Dataset, model: str) -> Table:
    """llm.html: per target tokens/s per user and basis, the cheapest system and what N need."""
    rows = [
        (
            Cell(f"≥ {target:g} tokens/s per user"),
            *(
                cost_cell(cheapest(ds.llm_serving_cost, model, target, basis), USERS)
                for basis in BASES
            ),
        )
        for target in TARGETS
    ]
    return Table(
        ("each user gets", *BASES.values()),
        rows,
        title=f"{model}: the cheapest system per million output tokens",
        unit="USD per 1M output and input tokens (95 % interval of the output price)",
        css="cards",  # the verdicts' card layout on phones, not a verdict
    )


def chart_name(model: str) -> str:
    """The model's chart files: charts/<name>.svg, .narrow.svg, .vl.json."""
    return f"llm_serving_{slug(model)}"


def model_figure(model: str) -> Figure:
    """The model's cost-against-interactivity chart."""
    return Figure(
        chart_name(model),
        f"{model}: cost per million output tokens against tokens/s per user",
        "Each line is one of the cheapest systems (GPUs x count, precision) at 10, 20 and 50 "
        "tokens/s per user: more users at once lower the cost and the speed each gets. Both "
        "axes log; bars: 95 % interval. Grey band: " + API_TITLE + ".",
    )


def api_sources(prices: pl.DataFrame, model: str) -> list[str]:
    """Each published API price behind the band, with its date and citation (plain text)."""
    return [
        f"API list price, {r['provider']}: {usd(r['usd_per_million_output_tokens'])} output, "
        f"{usd(r['usd_per_million_input_tokens'])} input per 1M tokens, as of {r['as_of']}; "
        + "; ".join(x for x in (r["citation"], r["url"]) if x)
        for r in prices.filter(pl.col("model_id") == model).iter_rows(named=True)
    ]


def model_section(ds: Dataset, model: str, charted: set[str]) -> Section:
    """One model on llm.html: its API band, its table, its chart, the API prices' sources."""
    band = api_band(ds.llm_api_prices, model)
    return Section(
        model_anchor(model),
        model,
        [f"{API_TITLE[0].upper()}{API_TITLE[1:]}: {'; '.join((band.text, *band.lines))}."],
        tables=[model_table(ds, model)],
        figures=[model_figure(model)] if chart_name(model) in charted else [],
        after=api_sources(ds.llm_api_prices, model),
    )


def _intro(ds: Dataset, models: list[str]) -> Section:
    params = ds.data.parameters
    links = ", ".join(f"[{m}](#{model_anchor(m)})" for m in models)
    return Section(
        "serving",
        "Serve a model to N users at T tokens/s each",
        [
            "For each model: which GPUs and how many serve it at a given speed per user "
            f"({', '.join(f'{t:g}' for t in TARGETS)} tokens/s), how many users one system "
            "serves at once, and what a million output and input tokens cost. Buying spreads "
            f"the system's total cost of ownership over {params.get('years', 5):g} years; "
            "renting pays the cheapest fresh GPU-hour offer. The cost per token does not "
            "depend on N: N users need N / (users per system) systems, rounded up.",
            "Published API list prices for the same open model stand beside each table, for "
            "comparison only: they are not an input of any figure here.",
            f"Models: {links}." if links else "No serving cost in this version.",
        ],
    )


def serving_page_sections(ds: Dataset, charted: set[str]) -> list[Section]:
    """llm.html: the intro, one section per model, and the MLPerf® attribution."""
    models = serving_models(ds)
    sections = [_intro(ds, models), *(model_section(ds, m, charted) for m in models)]
    results = mlperf_results(ds.llm_serving_benchmarks)
    if uses_mlperf(results, (ds.llm_serving_cost, "detail"), (ds.llm_serving, "evidence")):
        sections.append(
            Section(
                "mlperf",
                "MLPerf® results behind the serving model",
                [NOTICE],
                after=result_lines(results),
            )
        )
    return sections
