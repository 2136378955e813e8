"""Price-history charts: the front page's small multiples and each GPU's own chart."""

import datetime as dt
import json
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert as vlc

from reports.charts.common import (
    MARKET_COLORS,
    configured,
    legend_pick,
    meta,
    picked,
    wrap_title,
    zoom,
)
from reports.charts.rendering import NO_CACHE, SvgCache

# Altair refuses inline data over 5,000 rows; a chart of many GPUs over years of history
# is drawn at a coarser step instead (weekly, then monthly, quarterly, yearly medians).
MAX_CHART_ROWS = 4_000
# A GPU page's own chart, 290 px wide, shows no more than this many bins (new and used):
# weekly up to ~3 years of daily prices in both markets, monthly up to ~13 years. More
# points than pixels draw nothing more, and every GPU's chart is drawn again each night
# (its as-of point moves), so its cost must not grow with the history. The bundled
# snapshot's longest weekly history (RTX 3090, 299 weeks) stays weekly.
GPU_CHART_ROWS = 320
_STEPS = ("1w", "1mo", "3mo", "1y")
STEP_WORDS = {"1w": "weekly", "1mo": "monthly", "3mo": "quarterly", "1y": "yearly"}


def weekly_prices(history: pl.DataFrame, every: str = "1w") -> pl.DataFrame:
    """Median price per GPU x market per `every` (a week by default) in column `week`."""
    return (
        history.with_columns(week=pl.col("day").dt.truncate(every))
        .group_by("gpu_id", "market", "week")
        .agg(price_usd=pl.col("price_usd").median(), n=pl.col("n_observations").sum())
        .sort("gpu_id", "market", "week")
    )


def binned_history(
    history: pl.DataFrame, max_rows: int = MAX_CHART_ROWS
) -> tuple[pl.DataFrame, str]:
    """Medians at the finest step that keeps the chart within `max_rows`, and that step.

    So a chart's size does not grow with the length of the history.
    """
    for step in _STEPS:
        binned = weekly_prices(history, step)
        if binned.height <= max_rows:
            break
    return binned, step


def with_runs(binned: pl.DataFrame, step: str) -> pl.DataFrame:
    """Number the runs of consecutive bins per GPU x market (column `segment`).

    A bin more than one `step` after the previous one starts a new run: the chart draws
    one line per run, so no line is drawn across weeks (or months) without a price; a
    run of one bin is a lone point.
    """
    expected = pl.col("week").shift(1).dt.offset_by(step).over("gpu_id", "market")
    new_run = expected.is_null() | (pl.col("week") > expected)
    return binned.sort("gpu_id", "market", "week").with_columns(
        segment=new_run.cast(pl.Int32).cum_sum().over("gpu_id", "market")
    )


def price_history_data(
    history: pl.DataFrame,
    current: pl.DataFrame,
    gpu_ids: list[str],
    run_date: dt.date,
    max_rows: int = MAX_CHART_ROWS,
) -> pl.DataFrame:
    """History lines and the prices at the as-of date (kind = history | as_of) for `gpu_ids`.

    History rows carry the bin's `step` (1w, 1mo, ...: the finest within `max_rows`), its
    run (`segment`, see with_runs) and `n`, the observations behind the median.
    """
    binned, step = binned_history(history.filter(pl.col("gpu_id").is_in(gpu_ids)), max_rows)
    lines = with_runs(binned, step).select(
        "gpu_id",
        "market",
        day=pl.col("week"),
        price_usd="price_usd",
        kind=pl.lit("history"),
        segment="segment",
        n="n",
        step=pl.lit(step),
    )
    latest = current.filter(
        pl.col("gpu_id").is_in(gpu_ids) & pl.col("market").is_in(["new", "used"])
    ).select(
        "gpu_id",
        "market",
        day=pl.lit(run_date),
        price_usd="price_usd",
        kind=pl.lit("as_of"),
        price_low="price_low",
        price_high="price_high",
        price_method="price_method",
        age_days="age_days",
    )
    return pl.concat([lines, latest], how="diagonal_relaxed")


def step_word(data: pl.DataFrame) -> str:
    """'weekly', 'monthly', ...: the bins the chart's history lines are medians of."""
    steps = data["step"].drop_nulls().unique().to_list() if "step" in data.columns else []
    return STEP_WORDS[steps[0]] if steps else STEP_WORDS[_STEPS[0]]


def _price_layers(data: pl.DataFrame, width: int, height: int) -> alt.LayerChart:
    """Lines through consecutive bins only (straight, never smoothed), a dot per lone bin."""
    base = alt.Chart(data)
    x = alt.X("day:T", title=None, axis=alt.Axis(format="%Y", tickCount="year"))
    y = alt.Y("price_usd:Q", title="USD", scale=alt.Scale(zero=False))
    color = alt.Color("market:N", scale=MARKET_COLORS, title="market")
    pick = legend_pick("market")
    # Each run's extent, the same on each of its rows (computed by Vega, not stored in the
    # spec's data): what a line's tooltip can say truthfully, as Vega shows one row's fields
    # for a whole line.
    history = (
        base.transform_filter(alt.datum.kind == "history")
        .transform_joinaggregate(
            run_from="min(day)",
            run_to="max(day)",
            run_low="min(price_usd)",
            run_high="max(price_usd)",
            bins="count()",
            groupby=["gpu_id", "market", "segment"],
        )
        .transform_calculate(
            # As text: Vega-Lite would parse the aggregated dates (numbers) again as dates.
            from_day="timeFormat(datum.run_from, '%Y-%m-%d')",
            to_day="timeFormat(datum.run_to, '%Y-%m-%d')",
        )
    )
    # aria=False: the static SVG is an <img> (its alt text speaks for it), and an ARIA
    # label on every line and dot would make it several times larger.
    line = history.mark_line(strokeWidth=1.5, aria=False).encode(
        x=x,
        y=y,
        color=color,
        detail="segment:N",
        opacity=picked(pick, 1),
        tooltip=[
            alt.Tooltip("market:N"),
            alt.Tooltip("from_day:N", title="from"),
            alt.Tooltip("to_day:N", title="to"),
            alt.Tooltip("bins:Q", title="bins with a price"),
            alt.Tooltip("run_low:Q", title="lowest median", format="$,.0f"),
            alt.Tooltip("run_high:Q", title="highest median", format="$,.0f"),
        ],
    )
    # A bin with no neighbour is a dot (a line of one point draws nothing). Only those:
    # a dot on every bin would make the SVGs several times larger.
    dots = (
        history.transform_filter(alt.datum.bins == 1)
        .mark_point(filled=True, size=12, aria=False)
        .encode(
            x=x,
            y=y,
            color=color,
            opacity=picked(pick, 1),
            tooltip=[
                alt.Tooltip("market:N"),
                alt.Tooltip("day:T", title="bin from", format="%Y-%m-%d"),
                alt.Tooltip("price_usd:Q", title="median", format="$,.0f"),
                alt.Tooltip("n:Q", title="observations"),
            ],
        )
    )
    latest = base.transform_filter(alt.datum.kind == "as_of")
    band = latest.mark_rule(strokeWidth=3, opacity=0.5).encode(
        x=x, y="price_low:Q", y2="price_high:Q", color=color
    )
    point = latest.mark_point(filled=True, size=60).encode(
        x=x,
        y=y,
        color=color,
        shape=alt.Shape(
            "price_method:N",
            scale=alt.Scale(domain=["observed", "nowcast"], range=["circle", "triangle-up"]),
            title="price at as-of date",
        ),
        tooltip=[
            alt.Tooltip("market:N"),
            alt.Tooltip("price_method:N"),
            alt.Tooltip("price_usd:Q", format="$,.0f"),
            alt.Tooltip("price_low:Q", format="$,.0f"),
            alt.Tooltip("price_high:Q", format="$,.0f"),
            alt.Tooltip("age_days:Q", title="days observed before the as-of date"),
        ],
    )
    # Zoom on time only: each panel's price axis fits its own GPU.
    layers = alt.layer(line.add_params(pick, zoom(encodings=("x",))), dots, band, point)
    return layers.properties(width=width, height=height)


def price_history_chart(
    history: pl.DataFrame,
    current: pl.DataFrame,
    gpu_ids: list[str],
    run_date: dt.date,
    narrow: bool = False,
) -> alt.TopLevelMixin:
    """Small multiples of price history (new, used) with the as-of date's price and its band."""
    data = price_history_data(history, current, gpu_ids, run_date)
    step = step_word(data)
    width, columns = (290, 1) if narrow else (270, 3)
    chart = (
        _price_layers(data.drop("step"), width, 150)
        .facet(facet=alt.Facet("gpu_id:N", title=None, sort=gpu_ids), columns=columns)
        .resolve_scale(y="independent")
    )
    return meta(
        chart.properties(
            title=wrap_title(f"Price history: {step} median and price at the as-of date", narrow)
        ),
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
    cache: SvgCache = NO_CACHE,
) -> list[Path]:
    """`<gpu_id>.vl.json` and `<gpu_id>.svg` of every GPU's price history.

    The chart is the same for every GPU but its data, so it is built and compiled to Vega
    once (Altair's spec building and Vega-Lite's compiler are most of a small chart's
    time) and each GPU's rows are put into copies of the compiled spec.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    # Binned per GPU: each chart gets the finest step within GPU_CHART_ROWS for its own
    # history (weekly for ~3 years of daily prices in both markets, monthly for ~13), as
    # its title says.
    data = pl.concat(
        [price_history_data(history, current, [g], run_date, GPU_CHART_ROWS) for g in gpu_ids],
        how="diagonal_relaxed",
    )
    template = configured(
        meta(_price_layers(alt.Data(name="prices"), 290, 170), "gpu_price_history"),
        narrow=True,
    ).to_dict()
    vega = vlc.vegalite_to_vega(template)
    source = next(i for i, d in enumerate(vega["data"]) if d.get("name") == "prices")
    paths = []
    for (gpu_id,), rows in data.partition_by("gpu_id", as_dict=True, maintain_order=True).items():
        title = f"{gpu_id}: price history ({step_word(rows)} median)"
        values = _rows(rows.drop("step", "gpu_id"))  # the same on every row: in the title
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
