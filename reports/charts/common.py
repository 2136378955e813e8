"""What every chart shares: the spec version, labels, colours, the figure list and the theme."""

from dataclasses import dataclass

import altair as alt
import polars as pl

CHART_VERSION = "4"  # 4: interactivity parameters, runs (segment) on lines, no mean
WORKLOAD_TITLES = {
    "training_16bit": "16-bit training",
    "inference_16bit": "16-bit inference",
    "inference_8bit": "8-bit inference",
}
# The markets a buyer can pay, the only ones a chart or page shows. The model's 'mean' of
# the two (Dettmers' ranking price, current_prices and perf_per_dollar rows with market
# 'mean') is nobody's price: it stays in the downloadable tables only.
BUY_MARKETS = ("new", "used")
MARKET_COLORS = alt.Scale(domain=["new", "used"], range=["#1f77b4", "#e6731a"])
METHOD_OPACITY = alt.Scale(domain=["measured", "estimated"], range=[1.0, 0.4])
NARROW_WIDTH = 370
_FONT = {"labelFontSize": 11, "titleFontSize": 12}


@dataclass(frozen=True)
class Figure:
    """A chart of the site: `charts/<name>.svg`, `<name>.narrow.svg`, `<name>.vl.json`."""

    name: str
    title: str
    caption: str


FIGURES = [
    Figure(
        "perf_per_dollar",
        "Performance per dollar, 1-GPU system",
        "Relative performance per $1,000 of total cost of ownership (GPU + host + "
        "electricity), the best 20 GPU × market pairs per workload, each workload on its "
        "own axis. Colour: price basis (new, used); faded: performance estimated from specs; "
        "line: 95 % interval. Each label gives the price and how many days before the "
        "as-of date it was last observed; ~ marks a nowcast price. GPUs whose value is not "
        "validated (see the methodology's headline eligibility) are left out, as in every "
        "pick.",
    ),
    Figure(
        "relative_performance",
        "Relative performance",
        "Raw performance relative to the reference GPU (= 1), per workload with its own "
        "axis, for every GPU with a price or a cloud offer. Faded: estimated from specs; "
        "line: 95 % interval.",
    ),
    Figure(
        "memory_vs_value",
        "Memory versus performance per dollar",
        "Each priced GPU at its better market (1-GPU system): memory on the x axis (log), "
        "performance per $1,000 on the y axis, with 95 % intervals; dashed lines mark the "
        "memory tiers and the labelled points are the verdicts per tier (those whose label "
        "fits without covering another).",
    ),
    Figure(
        "price_history",
        "Price history of popular GPUs",
        "Weekly median price, new and used, from the cited price history (monthly or coarser "
        "when the history is too long for one chart: the title says which). A line joins "
        "consecutive bins only: a gap in the history is a gap in the line, a lone bin a dot. "
        "The point at the right edge is the price at the as-of date (triangle: nowcast from "
        "an older observation) with its interval.",
    ),
    Figure(
        "cloud_prices",
        "Cloud prices by provider",
        "The cheapest offer per provider and price type, in USD per GPU-hour (log axis), "
        "for the GPUs most providers rent.",
    ),
    Figure(
        "buy_vs_rent",
        "Buy or rent: cumulative cost",
        "Cumulative cost of buying a 1-GPU system (the new price, or the used one where the "
        "GPU is not sold new, + host, then electricity, less what the GPU would sell for used "
        "on that day) and of renting the cheapest on-demand "
        "offer, at three utilisations, over the ownership period; renting is cheaper until "
        "the lines cross (the dot: break-even day; no dot: never within the period).",
    ),
    Figure(
        "llm_value",
        "LLM inference: tokens per second against system cost",
        "Batch-1 generation speed (llama.cpp class, 8,192 tokens of context, 4-bit weights) "
        "of the smallest system of each GPU that holds the model, against the system's total "
        "cost of ownership (GPUs at the as-of date's price, host, electricity; log axis), at its "
        "cheaper market. Faded: speed modelled from bandwidth; solid: the GPU also has "
        "measured rows. Line: 95 % interval of the speed. Labels: the fastest systems for "
        "their cost, where a label fits without covering another (every point has a tooltip "
        "in the interactive view).",
    ),
    Figure(
        "sensitivity",
        "How the top picks move with the assumptions",
        "Rank of the 1-GPU systems that make a top 3 (16-bit training) as one assumption "
        "varies and the others stay at the run's settings: electricity price, utilisation "
        "and years of ownership. A line breaks where the GPU leaves the top 8.",
    ),
]


def meta(chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
    """Stamp the chart's name and `CHART_VERSION` into its spec."""
    return chart.properties(usermeta={"gpuvalue_chart": name, "version": CHART_VERSION})


def configured(chart: alt.TopLevelMixin, narrow: bool = False) -> alt.TopLevelMixin:
    """Fonts and legends.

    A narrow chart stacks each legend's entries vertically: a row of entries would make it
    wider than a phone. The config is set on a shallow copy in one step: each of Altair's
    `configure_*` methods copies the whole chart (~0.15 s a chart, 26 charts a night).
    """
    chart = chart.copy(deep=False)
    chart.config = alt.Config(
        axis=alt.AxisConfig(**_FONT),
        legend=alt.LegendConfig(
            labelFontSize=11,
            titleFontSize=11,
            orient="bottom",
            direction="vertical" if narrow else "horizontal",
        ),
        title=alt.TitleConfig(fontSize=14, anchor="start"),
        header=alt.HeaderConfig(labelFontSize=12, titleFontSize=12),
        view=alt.ViewConfig(stroke=None),
    )
    return chart


def wrap_title(text: str, narrow: bool, width: int = 40) -> str | list[str]:
    """A chart title; on a phone wrapped into lines (a long title widens the whole SVG)."""
    if not narrow or len(text) <= width:
        return text
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line]


def stack(panels: list[alt.TopLevelMixin], narrow: bool) -> alt.TopLevelMixin:
    """Panels side by side, or stacked on a phone (or when there is only one)."""
    if narrow or len(panels) == 1:
        return alt.vconcat(*panels, spacing=18)
    return alt.hconcat(*panels, spacing=12)


def bar_panel(
    data: pl.DataFrame,
    value: str,
    low: str,
    high: str,
    label: str,
    x_title: str,
    color: alt.Color | dict,
    title: str,
    width: int,
    tooltip: list,
    pick: alt.Parameter | None = None,
) -> alt.LayerChart:
    """Horizontal bars sorted by value with a 95 % interval rule; estimates faded.

    `pick`: a legend selection (defined on another panel or added here by the caller)
    that fades the bars not picked.
    """
    order = data.sort(value, descending=True)[label].to_list()
    base = alt.Chart(data, height=alt.Step(12), width=width, title=title)
    y = alt.Y(f"{label}:N", sort=order, title=None, axis=alt.Axis(labelLimit=230))
    opacity = alt.Opacity("method:O", scale=METHOD_OPACITY, title="performance")
    bars = base.mark_bar().encode(
        y=y,
        x=alt.X(f"{value}:Q", title=x_title),
        color=color,
        opacity=opacity if pick is None else picked(pick, opacity),
        tooltip=tooltip,
    )
    rules = base.mark_rule(color="#222", strokeWidth=1).encode(
        y=y, x=alt.X(f"{low}:Q"), x2=alt.X2(f"{high}:Q")
    )
    return alt.layer(bars, rules)


# Interactivity (issue 25): the parameters below do nothing in the static SVG (an empty
# legend selection selects everything, a scale binding starts at the data's domain), so
# the page without JavaScript shows the same chart; the interactive view (charts/
# interactive.js) then lets the reader zoom and pick legend entries. Names are fixed, not
# Altair's counters, so a spec is the same from one build to the next.
FADED = 0.12


def zoom(name: str = "zoom", encodings: tuple[str, ...] = ("x", "y")) -> alt.Parameter:
    """Scroll to zoom, drag to pan, double-click to reset, on `encodings` (one name per view)."""
    return alt.selection_interval(bind="scales", encodings=list(encodings), name=name)


def legend_pick(field: str, name: str = "pick") -> alt.Parameter:
    """Click a legend entry of `field` to highlight its marks (shift-click: several)."""
    return alt.selection_point(fields=[field], bind="legend", name=name)


def picked(param: alt.Parameter, selected, faded: float = FADED) -> alt.Opacity | alt.OpacityValue:
    """Opacity `selected` (a value or a field encoding) where picked, else faded.

    Written as "faded where not picked", so the unconditional part (what a legend draws
    its symbols with) is `selected`: the other way round, Vega-Lite would draw every
    legend symbol faded in the static SVG. Returned as the channel object, not the dict
    `alt.condition` gives: `encode` turns a dict into a channel through Altair's
    `from_dict`, which rebuilds its schema lookup on every call (~20 ms each, ~150 a night).
    """
    if isinstance(selected, alt.Opacity):
        return alt.condition(~param, alt.value(faded), selected)  # already a channel
    return alt.OpacityValue(**alt.condition(~param, alt.value(faded), alt.value(selected)))
