"""The LLM chart: decode tokens per second against system cost, per model size."""

import altair as alt
import polars as pl

from reports.charts.common import MARKET_COLORS, METHOD_OPACITY, meta, stack, wrap_title


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
    return meta(
        stack(panels, narrow).properties(
            title=wrap_title("LLM inference: tokens per second against system cost", narrow)
        ),
        "llm_value",
    )
