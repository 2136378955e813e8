"""The LLM chart: decode tokens per second against system cost, per model size."""

import altair as alt
import polars as pl

from reports.charts.common import (
    MARKET_COLORS,
    METHOD_OPACITY,
    legend_pick,
    meta,
    picked,
    stack,
    wrap_title,
    zoom,
)
from reports.charts.labels import DX, DY, Plot, nice_top, place_labels

LABELS_PER_PANEL = 8


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


def _domains(part: pl.DataFrame) -> tuple[tuple[float, float], tuple[float, float]]:
    """Fixed scale domains (the label placement computes pixels from them).

    Cost: a little beyond the data on the log axis; speed: 0 to the highest interval end.
    """
    low, high = part["cost"].min(), part["cost"].max()
    top = max(part["tps_high"].max() or 0.0, part["tps"].max())
    return (low / 1.25, high * 1.25), (0.0, nice_top(top))


def labelled(part: pl.DataFrame, plot: Plot) -> pl.DataFrame:
    """The frontier's labels that fit without overlap (the fastest systems first).

    The frontier, thinned: a system at least 10 % faster than every cheaper one.
    """
    ranked = (
        part.sort("cost")
        .with_columns(
            frontier=pl.col("tps") > pl.col("tps").cum_max().shift(1).fill_null(0.0) * 1.1
        )
        .sort(["frontier", "tps"], descending=True)
    )
    return place_labels(ranked, "cost", "tps", "label", "frontier", plot, LABELS_PER_PANEL)


def _panel(part: pl.DataFrame, size: int, index: int, narrow: bool) -> alt.LayerChart:
    width, height = (265, 220) if narrow else (420, 280)
    x_domain, y_domain = _domains(part)
    part = labelled(part, Plot(width, height, x_domain, y_domain))
    x = alt.X(
        "cost:Q",
        scale=alt.Scale(type="log", domain=list(x_domain), nice=False),
        title="system cost of ownership ($, log)",
    )
    y = alt.Y(
        "tps:Q", title="tokens/s (batch 1)", scale=alt.Scale(domain=list(y_domain), nice=False)
    )
    base = alt.Chart(part)
    pick = legend_pick("market")
    points = base.mark_point(filled=True, size=45).encode(
        x=x,
        y=y,
        color=alt.Color("market:N", scale=MARKET_COLORS, title="price"),
        opacity=picked(pick, alt.Opacity("evidence:O", scale=METHOD_OPACITY, title="speed")),
        tooltip=["label", "market", "evidence",
                 alt.Tooltip("cost:Q", format="$,.0f", title="system cost"),
                 alt.Tooltip("tps:Q", format=".1f", title="tokens/s"),
                 alt.Tooltip("tps_low:Q", format=".1f", title="95 % low"),
                 alt.Tooltip("tps_high:Q", format=".1f", title="95 % high")],
    )  # fmt: skip
    points = points.add_params(zoom(f"zoom{index}"))
    if index == 0:  # one legend selection, shared by both panels
        points = points.add_params(pick)
    bars = base.mark_rule(color="#999", opacity=0.5).encode(x=x, y="tps_low:Q", y2="tps_high:Q")
    labels = [
        base.transform_filter(alt.datum.label_side == side)
        .mark_text(align=align, dx=dx, dy=DY, fontSize=10)
        .encode(x=x, y="tps:Q", text="label:N")
        for side, align, dx in (("right", "left", DX), ("left", "right", -DX))
    ]
    return alt.layer(bars, points, *labels).properties(
        width=width, height=height, title=f"{size}B model, 4-bit"
    )


def llm_value_chart(
    throughput: pl.DataFrame, perf: pl.DataFrame, narrow: bool = False
) -> alt.TopLevelMixin:
    """Scatter of decode tokens/s against system cost per model size, fastest labelled."""
    data = llm_value_data(throughput, perf)
    panels = []
    for size in (8, 70):
        part = data.filter(pl.col("model_params_b") == size)
        if not part.is_empty():
            panels.append(_panel(part, size, len(panels), narrow))
    return meta(
        stack(panels, narrow).properties(
            title=wrap_title("LLM inference: tokens per second against system cost", narrow)
        ),
        "llm_value",
    )
