"""Performance charts: performance per dollar, relative performance, memory versus value."""

import datetime as dt
import math

import altair as alt
import polars as pl

from reports.charts.common import (
    MARKET_COLORS,
    METHOD_OPACITY,
    WORKLOAD_TITLES,
    bar_panel,
    legend_pick,
    meta,
    picked,
    stack,
    wrap_title,
    zoom,
)
from reports.charts.labels import DX, DY, Plot, nice_top, place_labels


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
    pick = legend_pick("market")
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
            bar_panel(
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
                pick,
            )
        )
        if len(panels) == 1:  # one legend selection, defined once, shared by every panel
            panels[0] = panels[0].add_params(pick)
    return meta(
        stack(panels, narrow).properties(
            title=wrap_title("Performance per dollar, 1-GPU system", narrow)
        ),
        "perf_per_dollar",
    )


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
            bar_panel(
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
    return meta(
        stack(panels, narrow).properties(
            title=wrap_title("Relative performance (95 % interval)", narrow)
        ),
        "relative_performance",
    )


def memory_value_data(perf: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's better market (1-GPU system) per workload, with its memory."""
    return (
        perf.filter((pl.col("system_gpus") == 1) & pl.col("market").is_in(["new", "used"]))
        # Ties (new and used at the same value): new.
        .sort("perf_per_dollar", "market", descending=[True, False])
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


def _memory_top(data: pl.DataFrame) -> float:
    """The memory axis' upper end: 128 GB, or the next power of two above the data."""
    largest = data["memory_gb"].max() if data.height else None
    return float(max(128, 2 ** math.ceil(math.log2(largest)))) if largest else 128.0


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
    # The axis reaches the largest memory plotted (a 256 GB Mac Studio): a point beyond the
    # domain would be drawn outside the plot and widen the chart past a phone's screen.
    top = _memory_top(data)
    ticks = [4, 8, 12, 16, 24, 48, 80, 128] + [2**k for k in range(8, 12) if 2**k <= top]
    x = alt.X(
        "memory_gb:Q",
        scale=alt.Scale(type="log", base=2, domain=[4, top]),
        axis=alt.Axis(values=ticks, title="memory (GB, log)"),
    )
    panels = []
    pick = legend_pick("market")
    for workload, title in WORKLOAD_TITLES.items():
        part = data.filter(pl.col("workload") == workload).drop("workload")
        if part.is_empty():
            continue
        width, height = (265, 220) if narrow else (290, 260)
        # Fixed scales, so each pick's label is placed where it covers no other label or
        # point (labels.place_labels); a pick whose label fits nowhere keeps its tooltip.
        y_top = nice_top(max(part["ppk_high"].max() or 0.0, part["ppk"].max()))
        part = place_labels(
            part.with_columns(pl.col("pick").fill_null(False)).sort(
                ["pick", "ppk"], descending=True
            ),
            "memory_gb",
            "ppk",
            "gpu_id",
            "pick",
            Plot(width, height, (4.0, top), (0.0, y_top)),
            limit=12,
        )
        base = alt.Chart(part)
        points = base.mark_point(filled=True, size=45).encode(
            x=x,
            y=alt.Y(
                "ppk:Q", title="perf per $1,000", scale=alt.Scale(domain=[0, y_top], nice=False)
            ),
            color=alt.Color("market:N", scale=MARKET_COLORS, title="price"),
            opacity=picked(
                pick, alt.Opacity("method:O", scale=METHOD_OPACITY, title="performance")
            ),
            tooltip=["gpu_id", "memory_gb", "market", "method",
                     alt.Tooltip("ppk:Q", format=".3f", title="perf per $1,000"),
                     alt.Tooltip("ppk_low:Q", format=".3f", title="95 % low"),
                     alt.Tooltip("ppk_high:Q", format=".3f", title="95 % high")],
        )  # fmt: skip
        points = points.add_params(zoom(f"zoom{len(panels)}"))
        if not panels:  # one legend selection, shared by the panels
            points = points.add_params(pick)
        bars = base.mark_rule(color="#999", opacity=0.5).encode(x=x, y="ppk_low:Q", y2="ppk_high:Q")
        labels = alt.layer(
            *(
                base.transform_filter(alt.datum.label_side == side)
                .mark_text(align=align, dx=dx, dy=DY, fontSize=10)
                .encode(x=x, y="ppk:Q", text="gpu_id:N")
                for side, align, dx in (("right", "left", DX), ("left", "right", -DX))
            )
        )
        rules = (
            alt.Chart(tier_frame)
            .mark_rule(strokeDash=[4, 3], color="#bbb")
            .encode(x=alt.X("memory_gb:Q", scale=alt.Scale(type="log", base=2, domain=[4, top])))
        )
        panels.append(
            alt.layer(rules, bars, points, labels).properties(
                width=width, height=height, title=title
            )
        )
    return meta(
        stack(panels, narrow).properties(
            title=wrap_title("Memory versus performance per dollar", narrow)
        ),
        "memory_vs_value",
    )
