"""Price-history charts: the front page's small multiples and each GPU's own chart."""

import datetime as dt
import json
from pathlib import Path

import altair as alt
import polars as pl
import vl_convert as vlc

from reports.charts.common import MARKET_COLORS, configured, meta, wrap_title
from reports.charts.rendering import NO_CACHE, SvgCache

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
    """History lines and the prices at the as-of date (kind = history | as_of) for `gpu_ids`."""
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
    return alt.layer(line, band, point).properties(width=width, height=height)


def price_history_chart(
    history: pl.DataFrame,
    current: pl.DataFrame,
    gpu_ids: list[str],
    run_date: dt.date,
    narrow: bool = False,
) -> alt.TopLevelMixin:
    """Small multiples of price history (new, used) with the as-of date's price and its band."""
    data = price_history_data(history, current, gpu_ids, run_date)
    width, columns = (290, 1) if narrow else (270, 3)
    chart = (
        _price_layers(data, width, 150)
        .facet(facet=alt.Facet("gpu_id:N", title=None, sort=gpu_ids), columns=columns)
        .resolve_scale(y="independent")
    )
    return meta(
        chart.properties(
            title=wrap_title("Price history: weekly median and price at the as-of date", narrow)
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
    data = price_history_data(history, current, gpu_ids, run_date)
    template = configured(
        meta(_price_layers(alt.Data(name="prices"), 290, 170), "gpu_price_history"),
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
