"""The sensitivity chart: how the top picks' ranks move as one assumption varies."""

import altair as alt
import polars as pl

from reports.charts.common import legend_pick, meta, picked, wrap_title

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
    # The grid of each parameter, so a GPU that leaves the top 8 between two values gets a
    # break in its line, not a line drawn through values where it has no rank shown.
    grid = rows.select("parameter", "value").unique().sort("parameter", "value")
    grid = grid.with_columns(step=pl.int_range(pl.len()).over("parameter"))
    shown = (
        rows.join(leaders, on=["market", "gpu_id"])
        .filter(pl.col("rank") <= 8)
        .join(grid, on=["parameter", "value"])
        .sort("parameter", "market", "gpu_id", "value")
    )
    gap = pl.col("step").diff().over("parameter", "market", "gpu_id").fill_null(1) != 1
    return shown.with_columns(
        segment=gap.cast(pl.Int32).cum_sum().over("parameter", "market", "gpu_id")
    ).select(
        "gpu_id",
        "market",
        "value",
        "rank",
        "segment",
        parameter=pl.col("parameter").replace_strict(SENSITIVITY_TITLES),
        panel=pl.format("{}, {}", pl.col("parameter").replace_strict(SENSITIVITY_TITLES), "market"),
    )


def sensitivity_chart(sensitivity: pl.DataFrame, narrow: bool = False) -> alt.TopLevelMixin:
    """Bump charts: rank (1 on top) of the leading GPUs as one assumption varies."""
    data = sensitivity_data(sensitivity)
    width, columns = (280, 1) if narrow else (200, 3)
    pick = legend_pick("gpu_id")
    chart = (
        alt.Chart(data)
        .mark_line(point=True)
        .encode(
            # About 4 short labels (0.1, 0.2, ...): the electricity values' 0.05 steps
            # would otherwise run together on a 200 px panel.
            x=alt.X(
                "value:Q",
                title=None,
                axis=alt.Axis(tickCount=4, format="~g", labelOverlap="greedy", labelFlush=True),
            ),
            y=alt.Y("rank:Q", scale=alt.Scale(reverse=True, domain=[1, 8]), title="rank"),
            color=alt.Color("gpu_id:N", title="GPU", legend=alt.Legend(columns=2 if narrow else 4)),
            detail="segment:N",
            opacity=picked(pick, 1),
            tooltip=["gpu_id", "market", "parameter", "value", "rank"],
        )
        .add_params(pick)
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
    return meta(
        chart.properties(
            title=wrap_title("Rank of the top picks (16-bit training) as assumptions vary", narrow)
        ),
        "sensitivity",
    )
