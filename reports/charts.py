"""Altair charts: the site's figures and each GPU's price history (issue 13).

Charts are rendered offline by vl-convert (SVG) next to their Vega-Lite spec, so the site
needs no CDN and no JavaScript. Each front-page figure has a wide variant (`<name>.svg`,
side-by-side panels) and a narrow one for phones (`<name>.narrow.svg`, panels stacked, at
most ~370 px wide so its text is never scaled down). `CHART_VERSION` is stamped into every
spec; bump it when an encoding changes so old site versions stay interpretable.

Scraped strings never reach a Vega expression: GPU ids, providers and labels are data
values (encoded as fields), never part of a filter or calculate expression.
"""

import datetime as dt
import hashlib
import json
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert as vlc

CHART_VERSION = "3"
WORKLOAD_TITLES = {
    "training_16bit": "16-bit training",
    "inference_16bit": "16-bit inference",
    "inference_8bit": "8-bit inference",
}
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
        "line: 95 % interval. Each label gives the price and how many days old its last "
        "observation is; ~ marks a nowcast price.",
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
        "memory tiers and the labelled points are the verdicts per tier.",
    ),
    Figure(
        "price_history",
        "Price history of popular GPUs",
        "Weekly median price, new and used, from the cited price history; the point at the "
        "right edge is today's price (triangle: nowcast from an older observation) with its "
        "interval.",
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
        "Cumulative cost of buying a 1-GPU system (price + host, then electricity) and of "
        "renting the cheapest on-demand offer, at three utilisations; renting is cheaper "
        "until the lines cross (the dot: break-even day).",
    ),
    Figure(
        "llm_value",
        "LLM inference: tokens per second against system cost",
        "Batch-1 generation speed (llama.cpp class, 8,192 tokens of context, 4-bit weights) "
        "of the smallest system of each GPU that holds the model, against the system's total "
        "cost of ownership (GPUs at today's price, host, electricity; log axis), at its "
        "cheaper market. Faded: speed modelled from bandwidth; solid: the GPU also has "
        "measured rows. Line: 95 % interval of the speed.",
    ),
    Figure(
        "sensitivity",
        "How the top picks move with the assumptions",
        "Rank of the 1-GPU systems that make a top 3 (16-bit training) as one assumption "
        "varies and the others stay at the run's settings: electricity price, utilisation "
        "and years of ownership.",
    ),
]


def _meta(chart: alt.TopLevelMixin, name: str) -> alt.TopLevelMixin:
    return chart.properties(usermeta={"gpuvalue_chart": name, "version": CHART_VERSION})


def _configured(chart: alt.TopLevelMixin, narrow: bool = False) -> alt.TopLevelMixin:
    """Fonts and legends.

    A narrow chart stacks each legend's entries vertically: a row of entries would make it
    wider than a phone.
    """
    return (
        chart.configure_axis(**_FONT)
        .configure_legend(
            labelFontSize=11,
            titleFontSize=11,
            orient="bottom",
            direction="vertical" if narrow else "horizontal",
        )
        .configure_title(fontSize=14, anchor="start")
        .configure_header(labelFontSize=12, titleFontSize=12)
        .configure_view(stroke=None)
    )


def _title(text: str, narrow: bool, width: int = 40) -> str | list[str]:
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


def _stack(panels: list[alt.TopLevelMixin], narrow: bool) -> alt.TopLevelMixin:
    if narrow or len(panels) == 1:
        return alt.vconcat(*panels, spacing=18)
    return alt.hconcat(*panels, spacing=12)


def _bars(
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
) -> alt.LayerChart:
    """Horizontal bars sorted by value with a 95 % interval rule; estimates faded."""
    order = data.sort(value, descending=True)[label].to_list()
    base = alt.Chart(data, height=alt.Step(12), width=width, title=title)
    y = alt.Y(f"{label}:N", sort=order, title=None, axis=alt.Axis(labelLimit=230))
    bars = base.mark_bar().encode(
        y=y,
        x=alt.X(f"{value}:Q", title=x_title),
        color=color,
        opacity=alt.Opacity("method:N", scale=METHOD_OPACITY, title="performance"),
        tooltip=tooltip,
    )
    rules = base.mark_rule(color="#222", strokeWidth=1).encode(
        y=y, x=alt.X(f"{low}:Q"), x2=alt.X2(f"{high}:Q")
    )
    return alt.layer(bars, rules)


# --- 1. performance per dollar -------------------------------------------------------------


def perf_per_dollar_data(perf: pl.DataFrame, run_date: dt.date) -> pl.DataFrame:
    """1-GPU systems priced new or used, per $1,000, with a label carrying price and age."""
    rows = perf.filter((pl.col("system_gpus") == 1) & pl.col("market").is_in(["new", "used"]))
    age = (pl.lit(run_date) - pl.col("price_day")).dt.total_days()
    price = pl.col("price_usd").map_elements(lambda v: f"${v:,.0f}", return_dtype=pl.Utf8)
    nowcast = pl.when(pl.col("price_method") == "nowcast").then(pl.lit("~")).otherwise(pl.lit(""))
    return rows.select(
        "gpu_id",
        "workload",
        "market",
        "method",
        "price_method",
        "price_usd",
        "total_cost_usd",
        age_days=age,
        label=pl.format("{} · {}{} · {} d", "gpu_id", nowcast, price, age),
        ppk=pl.col("perf_per_dollar") * 1000,
        ppk_low=pl.col("perf_per_dollar_low") * 1000,
        ppk_high=pl.col("perf_per_dollar_high") * 1000,
    )


def perf_per_dollar_chart(
    perf: pl.DataFrame, run_date: dt.date, narrow: bool = False
) -> alt.TopLevelMixin:
    """Bars of perf per $1,000 (1-GPU system), one panel and axis per workload."""
    data = perf_per_dollar_data(perf, run_date)
    top = 12 if narrow else 20
    panels = []
    for workload, title in WORKLOAD_TITLES.items():
        part = (
            data.filter(pl.col("workload") == workload)
            .sort("ppk", descending=True)
            .head(top)
            .drop("workload")
        )
        if part.is_empty():
            continue
        panels.append(
            _bars(
                part,
                "ppk",
                "ppk_low",
                "ppk_high",
                "label",
                "perf per $1,000 of total cost",
                alt.Color("market:N", scale=MARKET_COLORS, title="price"),
                title,
                120 if narrow else 140,
                [
                    "gpu_id",
                    "market",
                    "price_method",
                    alt.Tooltip("price_usd:Q", format="$,.0f"),
                    alt.Tooltip("age_days:Q", title="price age (days)"),
                    alt.Tooltip("ppk:Q", format=".3f", title="perf per $1,000"),
                    alt.Tooltip("ppk_low:Q", format=".3f", title="95 % low"),
                    alt.Tooltip("ppk_high:Q", format=".3f", title="95 % high"),
                    alt.Tooltip("total_cost_usd:Q", format="$,.0f"),
                ],
            )
        )
    return _meta(
        _stack(panels, narrow).properties(
            title=_title("Performance per dollar, 1-GPU system", narrow)
        ),
        "perf_per_dollar",
    )


# --- 2. relative performance ---------------------------------------------------------------


def relative_performance_chart(
    relative: pl.DataFrame, gpu_ids: list[str], reference_gpu: str, narrow: bool = False
) -> alt.TopLevelMixin:
    """Bars of relative performance for `gpu_ids`, one panel and axis per workload."""
    data = relative.filter(pl.col("gpu_id").is_in(gpu_ids)).select(
        "gpu_id", "workload", "value", "value_low", "value_high", "method", "evidence"
    )
    panels = []
    for workload, title in WORKLOAD_TITLES.items():
        part = data.filter(pl.col("workload") == workload).drop("workload")
        if part.is_empty():
            continue
        panels.append(
            _bars(
                part,
                "value",
                "value_low",
                "value_high",
                "gpu_id",
                f"relative to {reference_gpu} = 1",
                alt.value("#2a6fb0"),
                title,
                170 if narrow else 200,
                [
                    "gpu_id",
                    alt.Tooltip("value:Q", format=".2f"),
                    alt.Tooltip("value_low:Q", format=".2f", title="95 % low"),
                    alt.Tooltip("value_high:Q", format=".2f", title="95 % high"),
                    "method",
                    "evidence",
                ],
            )
        )
    return _meta(
        _stack(panels, narrow).properties(
            title=_title("Relative performance (95 % interval)", narrow)
        ),
        "relative_performance",
    )


# --- 3. memory vs perf per dollar ----------------------------------------------------------


def llm_value_data(throughput: pl.DataFrame, perf: pl.DataFrame, sizes=(8, 70)) -> pl.DataFrame:
    """Per model size (4-bit): each GPU's smallest fitting system, its decode rate and cost."""
    measured = set(throughput.filter(pl.col("method").str.starts_with("measured"))["gpu_id"])
    rates = (
        throughput.filter(
            pl.col("method").str.starts_with("modelled")
            & (pl.col("bits") == 4)
            & pl.col("model_params_b").is_in(list(sizes))
        )
        .sort("num_gpus")
        .group_by("gpu_id", "model_params_b", maintain_order=True)
        .first()
    )
    costs = (
        perf.filter(
            (pl.col("workload") == "inference_16bit") & pl.col("market").is_in(["new", "used"])
        )
        .sort("total_cost_usd")
        .group_by("gpu_id", "system_gpus", maintain_order=True)
        .first()
        .select(
            "gpu_id",
            num_gpus=pl.col("system_gpus").cast(pl.Int32),
            cost="total_cost_usd",
            market="market",
        )  # fmt: skip
    )
    return rates.join(costs, on=["gpu_id", "num_gpus"]).select(
        "gpu_id",
        "model_params_b",
        "num_gpus",
        "cost",
        "market",
        tps="decode_tokens_per_s",
        tps_low="decode_low",
        tps_high="decode_high",
        evidence=pl.when(pl.col("gpu_id").is_in(list(measured)))
        .then(pl.lit("measured"))
        .otherwise(pl.lit("estimated")),
        label=pl.when(pl.col("num_gpus") > 1)
        .then(pl.format("{}x {}", pl.col("num_gpus"), pl.col("gpu_id")))
        .otherwise(pl.col("gpu_id")),
    )


def llm_value_chart(
    throughput: pl.DataFrame, perf: pl.DataFrame, narrow: bool = False
) -> alt.TopLevelMixin:
    """Scatter of decode tokens/s against system cost per model size, fastest labelled."""
    data = llm_value_data(throughput, perf)
    panels = []
    for size in (8, 70):
        part = data.filter(pl.col("model_params_b") == size)
        if part.is_empty():
            continue
        # Label the frontier, thinned: a system at least 10 % faster than every cheaper one.
        part = part.sort("cost").with_columns(
            frontier=pl.col("tps") > pl.col("tps").cum_max().shift(1).fill_null(0.0) * 1.1
        )
        width, height = (265, 220) if narrow else (420, 280)
        x = alt.X("cost:Q", scale=alt.Scale(type="log"), title="system cost of ownership ($, log)")
        base = alt.Chart(part)
        points = base.mark_point(filled=True, size=45).encode(
            x=x,
            y=alt.Y("tps:Q", title="tokens/s (batch 1)"),
            color=alt.Color("market:N", scale=MARKET_COLORS, title="price"),
            opacity=alt.Opacity("evidence:N", scale=METHOD_OPACITY, title="speed"),
            tooltip=["label", alt.Tooltip("cost:Q", format=",.0f"),
                     alt.Tooltip("tps:Q", format=".1f")],
        )  # fmt: skip
        bars = base.mark_rule(color="#999", opacity=0.5).encode(x=x, y="tps_low:Q", y2="tps_high:Q")
        labels = (
            base.transform_filter(alt.datum.frontier)
            .mark_text(align="left", dx=5, dy=-6, fontSize=10)
            .encode(x=x, y="tps:Q", text="label:N")
        )
        panels.append(
            alt.layer(bars, points, labels).properties(
                width=width, height=height, title=f"{size}B model, 4-bit"
            )
        )
    return _meta(
        _stack(panels, narrow).properties(
            title=_title("LLM inference: tokens per second against system cost", narrow)
        ),
        "llm_value",
    )


def memory_value_data(perf: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's better market (1-GPU system) per workload, with its memory."""
    return (
        perf.filter((pl.col("system_gpus") == 1) & pl.col("market").is_in(["new", "used"]))
        .sort("perf_per_dollar", descending=True)
        .group_by("gpu_id", "workload", maintain_order=True)
        .first()
        .join(gpus.select("gpu_id", "memory_gb"), on="gpu_id")
        .select(
            "gpu_id",
            "workload",
            "market",
            "method",
            "memory_gb",
            ppk=pl.col("perf_per_dollar") * 1000,
            ppk_low=pl.col("perf_per_dollar_low") * 1000,
            ppk_high=pl.col("perf_per_dollar_high") * 1000,
        )
    )


def memory_value_chart(
    perf: pl.DataFrame,
    gpus: pl.DataFrame,
    picks: pl.DataFrame,
    tiers: list[float],
    narrow: bool = False,
) -> alt.TopLevelMixin:
    """Scatter of memory vs perf per $1,000, tiers marked, verdict picks labelled.

    `picks`: gpu_id, workload of the memory verdicts (buy new, buy used) to label.
    """
    data = memory_value_data(perf, gpus).join(
        picks.select("gpu_id", "workload").unique().with_columns(pick=pl.lit(True)),
        on=["gpu_id", "workload"],
        how="left",
    )
    tier_frame = pl.DataFrame({"memory_gb": tiers, "tier": [f"{t:g} GB" for t in tiers]})
    x = alt.X(
        "memory_gb:Q",
        scale=alt.Scale(type="log", base=2, domain=[4, 128]),
        axis=alt.Axis(values=[4, 8, 12, 16, 24, 48, 80, 128], title="memory (GB, log)"),
    )
    panels = []
    for workload, title in WORKLOAD_TITLES.items():
        part = data.filter(pl.col("workload") == workload).drop("workload")
        if part.is_empty():
            continue
        base = alt.Chart(part)
        width, height = (265, 220) if narrow else (290, 260)
        points = base.mark_point(filled=True, size=45).encode(
            x=x,
            y=alt.Y("ppk:Q", title="perf per $1,000"),
            color=alt.Color("market:N", scale=MARKET_COLORS, title="price"),
            opacity=alt.Opacity("method:N", scale=METHOD_OPACITY, title="performance"),
            tooltip=["gpu_id", "memory_gb", "market", alt.Tooltip("ppk:Q", format=".3f")],
        )
        bars = base.mark_rule(color="#999", opacity=0.5).encode(x=x, y="ppk_low:Q", y2="ppk_high:Q")
        labels = (
            base.transform_filter(alt.datum.pick)
            .mark_text(align="left", dx=5, dy=-6, fontSize=10)
            .encode(x=x, y="ppk:Q", text="gpu_id:N")
        )
        rules = (
            alt.Chart(tier_frame)
            .mark_rule(strokeDash=[4, 3], color="#bbb")
            .encode(x=alt.X("memory_gb:Q", scale=alt.Scale(type="log", base=2, domain=[4, 128])))
        )
        panels.append(
            alt.layer(rules, bars, points, labels).properties(
                width=width, height=height, title=title
            )
        )
    return _meta(
        _stack(panels, narrow).properties(
            title=_title("Memory versus performance per dollar", narrow)
        ),
        "memory_vs_value",
    )


# --- the SVG cache -------------------------------------------------------------------------


class SvgCache:
    """SVGs by a hash of the spec they were rendered from, kept from one build to the next.

    Most charts of a night are the previous night's (a GPU whose prices did not move draws
    the same chart), and vl-convert's rendering is most of a chart's cost, so a chart is
    rendered only when its spec is new. `prune()` then removes what this build did not use,
    so the cache holds one build's charts, not every night's. `folder=None` renders always.
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.used: set[str] = set()
        self.hits = 0

    def svg(self, spec: dict, render: Callable[[dict], str]) -> str:
        """`render(spec)`, or the SVG an earlier build rendered from the same spec."""
        if self.folder is None:
            return render(spec)
        text = json.dumps([vlc.__version__, spec], sort_keys=True, separators=(",", ":"))
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()
        path = self.folder / f"{key}.svg"
        self.used.add(path.name)
        if path.exists():
            self.hits += 1
            return path.read_text(encoding="utf-8")
        svg = render(spec)
        self.folder.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f".{key}.{os.getpid()}.{threading.get_ident()}.tmp")
        staged.write_text(svg, encoding="utf-8")
        staged.replace(path)  # atomic: a killed build leaves no half-written entry
        return svg

    def prune(self) -> None:
        """Remove the entries (and leftovers) this build did not use."""
        if self.folder is None or not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            if path.name not in self.used:
                path.unlink(missing_ok=True)


_NO_CACHE = SvgCache(None)


# --- 4. price history ----------------------------------------------------------------------


# Altair refuses inline data over 5,000 rows; a chart of many GPUs over years of history
# is drawn at a coarser step instead (weekly, then monthly, quarterly, yearly medians).
MAX_CHART_ROWS = 4_000
_STEPS = ("1w", "1mo", "3mo", "1y")


def weekly_prices(history: pl.DataFrame, every: str = "1w") -> pl.DataFrame:
    """Median price per GPU x market per `every` (a week by default) in column `week`."""
    return (
        history.with_columns(week=pl.col("day").dt.truncate(every))
        .group_by("gpu_id", "market", "week")
        .agg(price_usd=pl.col("price_usd").median(), n=pl.col("n_observations").sum())
        .sort("gpu_id", "market", "week")
    )


def price_history_data(
    history: pl.DataFrame, current: pl.DataFrame, gpu_ids: list[str], run_date: dt.date
) -> pl.DataFrame:
    """History lines and today's prices (kind = history | today) for `gpu_ids`."""
    chosen = history.filter(pl.col("gpu_id").is_in(gpu_ids))
    # The finest step that keeps the chart under MAX_CHART_ROWS, so its size does not grow
    # with the length of the history.
    binned = next(
        (b for step in _STEPS if (b := weekly_prices(chosen, step)).height <= MAX_CHART_ROWS),
        weekly_prices(chosen, _STEPS[-1]),
    )
    lines = binned.select(
        "gpu_id",
        "market",
        day=pl.col("week"),
        price_usd="price_usd",
        kind=pl.lit("history"),
    )
    today = current.filter(
        pl.col("gpu_id").is_in(gpu_ids) & pl.col("market").is_in(["new", "used"])
    ).select(
        "gpu_id",
        "market",
        day=pl.lit(run_date),
        price_usd="price_usd",
        kind=pl.lit("today"),
        price_low="price_low",
        price_high="price_high",
        price_method="price_method",
        age_days="age_days",
    )
    return pl.concat([lines, today], how="diagonal_relaxed")


def _price_layers(data: pl.DataFrame, width: int, height: int) -> alt.LayerChart:
    base = alt.Chart(data)
    x = alt.X("day:T", title=None, axis=alt.Axis(format="%Y", tickCount="year"))
    y = alt.Y("price_usd:Q", title="USD", scale=alt.Scale(zero=False))
    color = alt.Color("market:N", scale=MARKET_COLORS, title="market")
    line = (
        base.transform_filter(alt.datum.kind == "history")
        .mark_line(strokeWidth=1.5, interpolate="monotone")
        .encode(x=x, y=y, color=color)
    )
    today = base.transform_filter(alt.datum.kind == "today")
    band = today.mark_rule(strokeWidth=3, opacity=0.5).encode(
        x=x, y="price_low:Q", y2="price_high:Q", color=color
    )
    point = today.mark_point(filled=True, size=60).encode(
        x=x,
        y=y,
        color=color,
        shape=alt.Shape(
            "price_method:N",
            scale=alt.Scale(domain=["observed", "nowcast"], range=["circle", "triangle-up"]),
            title="today's price",
        ),
        tooltip=[
            alt.Tooltip("market:N"),
            alt.Tooltip("price_method:N"),
            alt.Tooltip("price_usd:Q", format="$,.0f"),
            alt.Tooltip("price_low:Q", format="$,.0f"),
            alt.Tooltip("price_high:Q", format="$,.0f"),
            alt.Tooltip("age_days:Q", title="days since last observation"),
        ],
    )
    return alt.layer(line, band, point).properties(width=width, height=height)


def price_history_chart(
    history: pl.DataFrame,
    current: pl.DataFrame,
    gpu_ids: list[str],
    run_date: dt.date,
    narrow: bool = False,
) -> alt.TopLevelMixin:
    """Small multiples of price history (new, used) with today's price and its band."""
    data = price_history_data(history, current, gpu_ids, run_date)
    width, columns = (290, 1) if narrow else (270, 3)
    chart = (
        _price_layers(data, width, 150)
        .facet(facet=alt.Facet("gpu_id:N", title=None, sort=gpu_ids), columns=columns)
        .resolve_scale(y="independent")
    )
    return _meta(
        chart.properties(title=_title("Price history: weekly median and today", narrow)),
        "price_history",
    )


def _rows(frame: pl.DataFrame) -> list[dict]:
    """JSON-ready records (dates as ISO strings)."""
    return json.loads(frame.write_json())


def render_gpu_price_charts(
    history: pl.DataFrame,
    current: pl.DataFrame,
    gpu_ids: list[str],
    run_date: dt.date,
    out_dir: Path,
    cache: SvgCache = _NO_CACHE,
) -> list[Path]:
    """`<gpu_id>.vl.json` and `<gpu_id>.svg` of every GPU's price history.

    The chart is the same for every GPU but its data, so it is built and compiled to Vega
    once (Altair's spec building and Vega-Lite's compiler are most of a small chart's
    time) and each GPU's rows are put into copies of the compiled spec.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    data = price_history_data(history, current, gpu_ids, run_date)
    template = _configured(
        _meta(_price_layers(alt.Data(name="prices"), 290, 170), "gpu_price_history"),
        narrow=True,
    ).to_dict()
    vega = vlc.vegalite_to_vega(template)
    source = next(i for i, d in enumerate(vega["data"]) if d.get("name") == "prices")
    paths = []
    for (gpu_id,), rows in data.partition_by("gpu_id", as_dict=True, maintain_order=True).items():
        values = _rows(rows)
        title = f"{gpu_id}: price history"
        spec = {**template, "title": title, "datasets": {"prices": values}}
        compiled = {**vega, "title": {**vega.get("title", {}), "text": title}}
        compiled["data"] = [
            {**d, "values": values} if i == source else d for i, d in enumerate(vega["data"])
        ]
        name = out_dir / f"{gpu_id}"
        paths.append(name.with_suffix(".vl.json"))
        paths[-1].write_text(json.dumps(spec, indent=1, sort_keys=True), encoding="utf-8")
        paths.append(name.with_suffix(".svg"))
        paths[-1].write_text(cache.svg(compiled, vlc.vega_to_svg), encoding="utf-8")
    return paths


# --- 5. cloud prices -----------------------------------------------------------------------


def cloud_prices_chart(
    cloud_perf: pl.DataFrame, gpu_ids: list[str], narrow: bool = False
) -> alt.TopLevelMixin:
    """Cheapest offer per provider and price type, USD per GPU-hour, for `gpu_ids`."""
    data = (
        cloud_perf.filter(
            pl.col("gpu_id").is_in(gpu_ids) & (pl.col("workload") == "training_16bit")
        )
        .select(
            "gpu_id", "provider", "price_type", "usd_per_gpu_hour", "instance_type", "offer_day"
        )
        .with_columns(pl.col("offer_day").cast(pl.Utf8))
    )
    order = (
        data.group_by("gpu_id")
        .agg(pl.col("usd_per_gpu_hour").min())
        .sort("usd_per_gpu_hour")["gpu_id"]
        .to_list()
    )
    chart = (
        alt.Chart(data, width=190 if narrow else 640, height=alt.Step(22))
        .mark_point(size=70, filled=True, opacity=0.85)
        .encode(
            y=alt.Y("gpu_id:N", sort=order, title=None),
            x=alt.X(
                "usd_per_gpu_hour:Q",
                scale=alt.Scale(type="log", nice=False),
                title="USD per GPU-hour (log)",
            ),
            color=alt.Color(
                "provider:N", title="provider", legend=alt.Legend(columns=1 if narrow else 4)
            ),
            shape=alt.Shape("price_type:N", title="price type"),
            tooltip=[
                "gpu_id",
                "provider",
                "price_type",
                "instance_type",
                alt.Tooltip("usd_per_gpu_hour:Q", format="$.3f"),
                "offer_day",
            ],
        )
        .properties(
            title=_title("Cloud prices: cheapest offer per provider and price type", narrow)
        )
    )
    return _meta(chart, "cloud_prices")


# --- 6. buy vs rent ------------------------------------------------------------------------


def buy_vs_rent_data(
    cloud: pl.DataFrame, gpu_ids: list[str], utilizations: tuple[float, ...], horizon: float
) -> pl.DataFrame:
    """Cumulative cost lines (day 0 and `horizon`) of buying and renting, and break-evens.

    Per GPU the cheapest on-demand offer (cloud_vs_buy rows of the workstation platform).
    """
    rows = (
        cloud.filter(
            pl.col("gpu_id").is_in(gpu_ids)
            & (pl.col("price_type") == "on_demand")
            & pl.col("utilization").is_in(list(utilizations))
        )
        .sort("usd_per_gpu_hour", "provider")
        .group_by("gpu_id", "utilization", maintain_order=True)
        .first()
        .with_columns(
            use=pl.format("{} % use", (pl.col("utilization") * 100).round(0).cast(pl.Int64)),
            panel=pl.format(
                "{}: buy ${}, rent ${}/h ({})",
                "gpu_id",
                pl.col("buy_cost_usd").round(0).cast(pl.Int64),
                pl.col("usd_per_gpu_hour").round(2),
                "provider",
            ),
        )
    )
    lines = []
    for day in (0.0, horizon):
        lines.append(
            rows.select(
                "gpu_id",
                "panel",
                "use",
                day=pl.lit(day),
                usd=pl.col("buy_cost_usd") + pl.col("own_usd_per_day") * day,
                way=pl.lit("buy"),
            )
        )
        lines.append(
            rows.select(
                "gpu_id",
                "panel",
                "use",
                day=pl.lit(day),
                usd=pl.col("cloud_usd_per_day") * day,
                way=pl.lit("rent"),
            )
        )
    even = rows.filter(pl.col("break_even_days") <= horizon).select(
        "gpu_id",
        "panel",
        "use",
        day="break_even_days",
        usd=pl.col("cloud_usd_per_day") * pl.col("break_even_days"),
        way=pl.lit("break-even"),
    )
    return pl.concat([*lines, even], how="vertical_relaxed")


def buy_vs_rent_chart(
    cloud: pl.DataFrame,
    gpu_ids: list[str],
    horizon: float,
    utilizations: tuple[float, ...] = (0.15, 0.35, 0.60),
    narrow: bool = False,
) -> alt.TopLevelMixin:
    """Cumulative cost of buying vs renting over time, small multiples per GPU."""
    data = buy_vs_rent_data(cloud, gpu_ids, utilizations, horizon)
    base = alt.Chart(data)
    x = alt.X("day:Q", title="days", scale=alt.Scale(domain=[0, horizon]))
    y = alt.Y("usd:Q", title="cumulative USD")
    color = alt.Color("use:N", title="utilisation")
    lines = (
        base.transform_filter(alt.datum.way != "break-even")
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=color,
            strokeDash=alt.StrokeDash(
                "way:N", scale=alt.Scale(domain=["buy", "rent"], range=[[1, 0], [5, 3]])
            ),
            detail="way:N",
        )
    )
    dots = (
        base.transform_filter(alt.datum.way == "break-even")
        .mark_point(filled=True, size=50)
        .encode(
            x=x, y=y, color=color, tooltip=["gpu_id", "use", alt.Tooltip("day:Q", format=".0f")]
        )
    )
    width, columns = (280, 1) if narrow else (300, 2)
    chart = (
        alt.layer(lines, dots)
        .properties(width=width, height=170)
        .facet(facet=alt.Facet("panel:N", title=None), columns=columns)
        .resolve_scale(y="independent")
    )
    return _meta(
        chart.properties(title=_title("Buy or rent: cumulative cost over time", narrow)),
        "buy_vs_rent",
    )


# --- 7. sensitivity ------------------------------------------------------------------------

SENSITIVITY_TITLES = {
    "electricity_usd_per_kwh": "electricity ($/kWh)",
    "utilization": "utilisation",
    "years": "years of ownership",
}


def sensitivity_data(sensitivity: pl.DataFrame, workload: str = "training_16bit") -> pl.DataFrame:
    """Ranks of the 1-GPU systems that make a top 3 somewhere, per parameter and market."""
    rows = sensitivity.filter(
        (pl.col("workload") == workload)
        & (pl.col("system_gpus") == 1)
        & pl.col("market").is_in(["new", "used"])
        & pl.col("parameter").is_in(list(SENSITIVITY_TITLES))
    )
    leaders = rows.filter(pl.col("rank") <= 3).select("market", "gpu_id").unique()
    return (
        rows.join(leaders, on=["market", "gpu_id"])
        .filter(pl.col("rank") <= 8)
        .select(
            "gpu_id",
            "market",
            "value",
            "rank",
            parameter=pl.col("parameter").replace_strict(SENSITIVITY_TITLES),
            panel=pl.format(
                "{}, {}", pl.col("parameter").replace_strict(SENSITIVITY_TITLES), "market"
            ),
        )
        .sort("parameter", "market", "gpu_id", "value")
    )


def sensitivity_chart(sensitivity: pl.DataFrame, narrow: bool = False) -> alt.TopLevelMixin:
    """Bump charts: rank (1 on top) of the leading GPUs as one assumption varies."""
    data = sensitivity_data(sensitivity)
    width, columns = (280, 1) if narrow else (200, 3)
    chart = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            x=alt.X("value:Q", title=None),
            y=alt.Y("rank:Q", scale=alt.Scale(reverse=True, domain=[1, 8]), title="rank"),
            color=alt.Color("gpu_id:N", title="GPU", legend=alt.Legend(columns=2 if narrow else 4)),
            tooltip=["gpu_id", "market", "parameter", "value", "rank"],
        )
        .properties(width=width, height=130)
        .facet(
            facet=alt.Facet(
                "panel:N",
                title=None,
                sort=[f"{t}, {m}" for m in ("new", "used") for t in SENSITIVITY_TITLES.values()]
                if not narrow
                else [f"{t}, {m}" for t in SENSITIVITY_TITLES.values() for m in ("new", "used")],
            ),
            columns=columns,
        )
        .resolve_scale(x="independent")
    )
    return _meta(
        chart.properties(
            title=_title("Rank of the top picks (16-bit training) as assumptions vary", narrow)
        ),
        "sensitivity",
    )


# --- rendering -----------------------------------------------------------------------------


def _render(
    chart: alt.TopLevelMixin,
    out_dir: Path,
    name: str,
    validate: bool = True,
    cache: SvgCache = _NO_CACHE,
) -> list[Path]:
    """Write `<name>.vl.json` and `<name>.svg`; return their paths.

    `validate=False` skips Altair's JSON-schema check (a third of a small chart's time),
    for the many charts one validated builder makes.
    """
    spec = _configured(chart, narrow=name.endswith(".narrow")).to_dict(validate=validate)
    paths = [out_dir / f"{name}.vl.json", out_dir / f"{name}.svg"]
    paths[0].write_text(json.dumps(spec, indent=1, sort_keys=True), encoding="utf-8")
    paths[1].write_text(cache.svg(spec, vlc.vegalite_to_svg), encoding="utf-8")
    return paths


@dataclass(frozen=True)
class ChartJob:
    """One chart to render: how to build it and where."""

    build: Callable[[], alt.TopLevelMixin]
    out_dir: Path
    name: str
    validate: bool = True


def render_many(jobs: list[ChartJob], workers: int = 2, cache: SvgCache = _NO_CACHE) -> list[Path]:
    """Build and render charts in a small thread pool (vl-convert releases the GIL)."""

    def run(job: ChartJob) -> list[Path]:
        job.out_dir.mkdir(parents=True, exist_ok=True)
        return _render(job.build(), job.out_dir, job.name, job.validate, cache)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [p for paths in pool.map(run, jobs) for p in paths]
