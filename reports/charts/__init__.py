"""Altair charts: the site's figures and each GPU's price history (issue 13).

Charts are rendered offline by vl-convert (SVG) next to their Vega-Lite spec, so the site
needs no CDN and no JavaScript. Each front-page figure has a wide variant (`<name>.svg`,
side-by-side panels) and a narrow one for phones (`<name>.narrow.svg`, panels stacked, at
most ~370 px wide so its text is never scaled down). `CHART_VERSION` is stamped into every
spec; bump it when an encoding changes so old site versions stay interpretable.

Scraped strings never reach a Vega expression: GPU ids, providers and labels are data
values (encoded as fields), never part of a filter or calculate expression.

One module per chart family: `common` (spec version, labels, the figure list, the theme),
`performance`, `prices`, `renting`, `sensitivity`, `llm`, and `rendering` (vl-convert, the
SVG cache). This package re-exports their public names.
"""

from reports.charts.common import (
    BUY_MARKETS,
    CHART_VERSION,
    FIGURES,
    MARKET_COLORS,
    METHOD_OPACITY,
    NARROW_WIDTH,
    WORKLOAD_TITLES,
    Figure,
)
from reports.charts.llm import llm_value_chart, llm_value_data
from reports.charts.performance import (
    memory_value_chart,
    memory_value_data,
    perf_per_dollar_chart,
    perf_per_dollar_data,
    relative_performance_chart,
)
from reports.charts.prices import (
    MAX_CHART_ROWS,
    price_history_chart,
    price_history_data,
    render_gpu_price_charts,
    weekly_prices,
)
from reports.charts.rendering import ChartJob, SvgCache, render_chart, render_many
from reports.charts.renting import buy_vs_rent_chart, buy_vs_rent_data, cloud_prices_chart
from reports.charts.sensitivity import SENSITIVITY_TITLES, sensitivity_chart, sensitivity_data

__all__ = [
    "BUY_MARKETS",
    "CHART_VERSION",
    "FIGURES",
    "MARKET_COLORS",
    "MAX_CHART_ROWS",
    "METHOD_OPACITY",
    "NARROW_WIDTH",
    "SENSITIVITY_TITLES",
    "WORKLOAD_TITLES",
    "ChartJob",
    "Figure",
    "SvgCache",
    "buy_vs_rent_chart",
    "buy_vs_rent_data",
    "cloud_prices_chart",
    "llm_value_chart",
    "llm_value_data",
    "memory_value_chart",
    "memory_value_data",
    "perf_per_dollar_chart",
    "perf_per_dollar_data",
    "price_history_chart",
    "price_history_data",
    "relative_performance_chart",
    "render_chart",
    "render_gpu_price_charts",
    "render_many",
    "sensitivity_chart",
    "sensitivity_data",
    "weekly_prices",
]
