"""The serving chart (issue 24): $ per 1M output tokens against tokens/s per user, per model.

One chart per model, a panel per basis (buy new, rent on-demand): each of the model's
cheapest systems is a line through its points at the interactivity targets (more users at
once: cheaper tokens, slower for each user), with the cost's 95 % interval; a grey band is
the published API list price range for the same model, for comparison only.
"""

import altair as alt
import polars as pl

from reports.charts.common import legend_pick, meta, picked, stack, wrap_title, zoom

CHART_BASES = {"buy_new": "buy new", "rent_on_demand": "rent on-demand"}
BAND_LABEL = "published API prices (comparison, not an input)"
MAIN_SYSTEMS = 5  # per panel: more lines than this cannot be told apart


def serving_chart_data(cost: pl.DataFrame, model: str, basis: str) -> pl.DataFrame:
    """The model's cheapest systems for one basis, one row per system and target.

    A system is GPU x count x precision; the cheapest are ranked by their lowest cost over
    the targets, so a system that only meets the lower targets still counts.
    """
    rows = cost.filter(
        (pl.col("model_id") == model)
        & (pl.col("basis") == basis)
        & pl.col("usd_per_million_output_tokens").is_not_null()
        & pl.col("output_tokens_per_s_per_user").is_not_null()
    ).with_columns(
        system=pl.when(pl.col("num_gpus") > 1)
        .then(pl.format("{}x {}, {}-bit", "num_gpus", "gpu_id", "precision_bits"))
        .otherwise(pl.format("{}, {}-bit", "gpu_id", "precision_bits"))
    )
    if rows.is_empty():
        return rows
    main = (
        rows.group_by("system")
        .agg(best=pl.col("usd_per_million_output_tokens").min())
        .sort("best", "system")
        .head(MAIN_SYSTEMS)["system"]
    )
    return rows.filter(pl.col("system").is_in(main.to_list())).sort(
        "system", "min_tokens_per_s_per_user"
    )


def _panel(
    data: pl.DataFrame, band: pl.DataFrame, title: str, narrow: bool, index: int = 0
) -> alt.LayerChart:
    width, height = (265, 220) if narrow else (400, 280)
    pick = legend_pick("system")
    x = alt.X(
        "output_tokens_per_s_per_user:Q",
        scale=alt.Scale(type="log"),
        title="tokens/s per user (log)",
    )
    y = alt.Y(
        "usd_per_million_output_tokens:Q",
        scale=alt.Scale(type="log"),
        title="$ per 1M output tokens (log)",
    )
    color = alt.Color("system:N", title="system", legend=alt.Legend(labelLimit=260))
    base = alt.Chart(data)
    lines = base.mark_line(point=True).encode(
        x=x,
        y=y,
        color=color,
        opacity=picked(pick, 1),
        tooltip=[
            "system",
            alt.Tooltip("concurrency:Q", title="users"),
            alt.Tooltip("output_tokens_per_s_per_user:Q", format=".1f"),
            alt.Tooltip("usd_per_million_output_tokens:Q", format=".3f"),
        ],
    )
    lines = lines.add_params(zoom(f"zoom{index}"))
    if index == 0:  # one legend selection, shared by the panels
        lines = lines.add_params(pick)
    bars = base.mark_rule().encode(
        x=x, y="low:Q", y2="high:Q", color=color, opacity=picked(pick, 0.6)
    )
    layers = [lines, bars]
    if not band.is_empty():
        # No x encoding: the band spans the panel, as a range on the cost axis; its label is
        # a data value (the band's own row), never part of an expression.
        shade = alt.Chart(band).mark_rect(color="#999", opacity=0.18).encode(y="low:Q", y2="high:Q")
        label = (
            alt.Chart(band)
            .mark_text(align="left", baseline="bottom", dx=4, dy=-2, fontSize=10, color="#555")
            .encode(x=alt.value(0), y="high:Q", text="label:N")
        )
        layers[:0] = [shade, label]
    return alt.layer(*layers).properties(width=width, height=height, title=title)


def api_band_data(prices: pl.DataFrame, model: str) -> pl.DataFrame:
    """The published API output price range of the model (no rows when none is published)."""
    rows = prices.filter(pl.col("model_id") == model)
    if rows.is_empty():
        return pl.DataFrame(schema={"low": pl.Float64, "high": pl.Float64, "label": pl.Utf8})
    out = rows["usd_per_million_output_tokens"]
    return pl.DataFrame({"low": [out.min()], "high": [out.max()], "label": [BAND_LABEL]})


def serving_cost_chart(
    cost: pl.DataFrame, prices: pl.DataFrame, model: str, narrow: bool = False
) -> alt.TopLevelMixin:
    """The model's chart: a panel per basis that has rows (see the module docstring)."""
    band = api_band_data(prices, model)
    panels = []
    for basis, title in CHART_BASES.items():
        data = serving_chart_data(cost, model, basis)
        if not data.is_empty():
            panels.append(_panel(data, band, title, narrow, len(panels)))
    if not panels:
        raise ValueError(f"no serving cost to chart for {model}")
    # One colour per system across both panels (a shared scale), so lines can be compared.
    chart = stack(panels, narrow)
    heading = f"{model}: $ per 1M output tokens against tokens/s per user"
    return meta(chart.properties(title=wrap_title(heading, narrow)), f"llm_serving_{model}")


# The models people pick among in 2026 get a chart; the others (older or duplicate
# architectures: Llama 2, Llama 3.1 70B = 3.3 70B's shape, ...) keep their table. Each chart
# costs ~1.2 s of vl-convert per variant, 15 s a build for all 13 models.
CHARTED_MODELS = ("llama-3.1-8b", "llama-3.3-70b", "gpt-oss-120b", "qwen3-30b-a3b", "deepseek-r1")


def charted_models(cost: pl.DataFrame, models: list[str]) -> list[str]:
    """The models that get a chart: CHARTED_MODELS with a row for a charted basis."""
    bases = set(cost.filter(pl.col("basis").is_in(list(CHART_BASES)))["model_id"])
    return [m for m in models if m in bases and m in CHARTED_MODELS]
