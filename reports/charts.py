"""Altair charts of relative performance and performance per dollar.

Charts are rendered offline by vl-convert (SVG and PNG) next to their Vega-Lite spec, so the
site needs no CDN and no JavaScript. `CHART_VERSION` is stamped into every spec; bump it
when a chart's encoding changes so old site versions stay interpretable.
"""

from pathlib import Path

import altair as alt
import polars as pl

CHART_VERSION = "2"
WORKLOAD_TITLES = {
    "training_16bit": "16-bit training",
    "inference_16bit": "16-bit inference",
    "inference_8bit": "8-bit inference",
}
_BAR_HEIGHT = 11


def _labelled(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(
        workload_title=pl.col("workload").replace_strict(
            WORKLOAD_TITLES, default=pl.col("workload")
        )
    )


def _facetted_bars(
    data: pl.DataFrame,
    order: list[str],
    x: alt.X,
    color: alt.Color,
    tooltip: list,
    title: str,
    name: str,
    interval: tuple[str, str] | None = None,
) -> alt.FacetChart:
    """Horizontal bars per GPU (in `order`), one panel per workload.

    `interval` names the (low, high) columns of a 95 % interval, drawn as a black rule
    across each bar (Dettmers' charts had none; readers should see how sure a bar is).
    """
    base = alt.Chart(height=_BAR_HEIGHT * max(len(order), 1), width=200)
    y = alt.Y("gpu_id:N", sort=order, title=None)
    layers = [base.mark_bar().encode(y=y, x=x, color=color, tooltip=tooltip)]
    if interval is not None:
        low, high = interval
        layers.append(
            base.mark_rule(color="#222", strokeWidth=1).encode(
                y=y, x=alt.X(f"{low}:Q"), x2=alt.X2(f"{high}:Q")
            )
        )
    return (
        alt.layer(*layers, data=_labelled(data))
        .facet(
            column=alt.Column("workload_title:N", title=None, sort=list(WORKLOAD_TITLES.values()))
        )
        .properties(title=title, usermeta={"gpuvalue_chart": name, "version": CHART_VERSION})
    )


def _training_order(frame: pl.DataFrame, by: str) -> list[str]:
    return (
        frame.filter(pl.col("workload") == "training_16bit")
        .sort(by, descending=True)["gpu_id"]
        .to_list()
    )


def relative_performance_chart(relative: pl.DataFrame, reference_gpu: str) -> alt.FacetChart:
    """Bars of relative performance per GPU, one panel per workload; estimates marked."""
    return _facetted_bars(
        relative.select("gpu_id", "workload", "value", "method", "value_low", "value_high"),
        _training_order(relative, "value"),
        alt.X("value:Q", title=f"relative to {reference_gpu} = 1"),
        alt.Color(
            "method:N",
            scale=alt.Scale(domain=["measured", "estimated"], range=["#1f77b4", "#c7c7c7"]),
            title="method",
        ),
        [
            "gpu_id",
            "workload",
            alt.Tooltip("value:Q", format=".2f"),
            alt.Tooltip("value_low:Q", format=".2f", title="95 % low"),
            alt.Tooltip("value_high:Q", format=".2f", title="95 % high"),
            "method",
        ],
        "Raw relative performance (debiased benchmarks; grey = estimated from specs; "
        "line = 95 % interval)",
        "relative_performance",
        interval=("value_low", "value_high"),
    )


def perf_per_dollar_chart(best: pl.DataFrame) -> alt.FacetChart:
    """Bars of perf per $1,000 of a 1-GPU system, one panel per workload."""
    data = best.select(
        "gpu_id",
        "workload",
        "market",
        "total_cost_usd",
        *(
            (pl.col(c) * 1000).alias(c.replace("perf_per_dollar", "perf_per_1000_usd"))
            for c in ("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high")
        ),
    )
    return _facetted_bars(
        data,
        _training_order(best, "perf_per_dollar"),
        alt.X("perf_per_1000_usd:Q", title="relative performance per $1,000"),
        alt.Color(
            "market:N",
            scale=alt.Scale(
                domain=["mean", "new", "used"], range=["#2ca02c", "#1f77b4", "#ff7f0e"]
            ),
            title="price",
        ),
        [
            "gpu_id",
            "market",
            alt.Tooltip("perf_per_1000_usd:Q", format=".3f"),
            alt.Tooltip("perf_per_1000_usd_low:Q", format=".3f", title="95 % low"),
            alt.Tooltip("perf_per_1000_usd_high:Q", format=".3f", title="95 % high"),
            alt.Tooltip("total_cost_usd:Q", format="$,.0f"),
        ],
        "Performance per dollar, 1-GPU system (GPU + host + electricity; line = 95 % interval)",
        "perf_per_dollar",
        interval=("perf_per_1000_usd_low", "perf_per_1000_usd_high"),
    )


def save_chart(chart: alt.TopLevelMixin, out_dir: Path, name: str) -> dict[str, Path]:
    """Write `<name>.vl.json`, `<name>.svg` and `<name>.png`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "spec": out_dir / f"{name}.vl.json",
        "svg": out_dir / f"{name}.svg",
        "png": out_dir / f"{name}.png",
    }
    chart.save(str(paths["spec"]))
    chart.save(str(paths["svg"]))
    chart.save(str(paths["png"]), scale_factor=2)
    return paths
