"""Which GPUs each chart shows, and rendering every chart of a version (issue 13).

`render_site_charts` writes the front page's figures (wide and narrow variants and their
specs) and one serving-cost chart per LLM (`llm_serving_<model>`, shown on llm.html) into
`<out>/`, and one price-history chart per GPU with a price history into `<out>/gpu/`, and
the Vega bundle and page script that make them interactive (reports/charts/interactive.py).
"""

from functools import partial
from pathlib import Path

import polars as pl

from reports.charts import (
    FIGURES,
    ChartJob,
    SvgCache,
    buy_vs_rent_chart,
    cloud_prices_chart,
    llm_value_chart,
    memory_value_chart,
    perf_per_dollar_chart,
    price_history_chart,
    relative_performance_chart,
    render_gpu_price_charts,
    render_many,
    sensitivity_chart,
)
from reports.charts.interactive import write_interactive_files
from reports.charts.serving import charted_models, serving_cost_chart
from reports.content.serving import chart_name, serving_models
from reports.dataset import Dataset
from reports.report import headline
from reports.safety import slug

# Representative GPUs for buy-versus-rent (Dettmers' worked example used an RTX 3090 and a
# V100 instance); the first four with an on-demand offer are drawn.
BUY_VS_RENT_PREFERENCE = (
    "rtx-4090",
    "rtx-3090",
    "rtx-5090",
    "l40s",
    "rtx-a6000",
    "a100-pcie-80gb",
    "h100-pcie-80gb",
    "l4",
)


def verdict_gpus(ds: Dataset) -> list[str]:
    """GPUs named by a verdict or a headline top 3, most frequent first."""
    named = ds.verdicts.filter(pl.col("gpu_id").is_not_null())["gpu_id"].to_list()
    for ways in headline(ds.data).values():
        for top in ways.values():
            named += top["gpu_id"].to_list()
    counts = pl.DataFrame({"gpu_id": named}).group_by("gpu_id").len()
    return counts.sort(["len", "gpu_id"], descending=[True, False])["gpu_id"].to_list()


def relative_gpus(ds: Dataset, narrow: bool) -> list[str]:
    """Wide: every GPU with a price or a cloud offer; narrow: the verdicts' (at most 30)."""
    if narrow:
        return sorted({*verdict_gpus(ds)[:29], ds.data.reference_gpu})
    return sorted(set(ds.data.perf["gpu_id"]) | set(ds.data.cloud_perf["gpu_id"]))


def price_history_gpus(ds: Dataset, k: int) -> list[str]:
    """Up to k priced GPUs named by the verdicts that have the longest histories."""
    days = (
        ds.price_history.group_by("gpu_id", "market")
        .agg(pl.col("days").sum())
        .group_by("gpu_id")
        .agg(pl.col("days").max())
    )
    priced = set(ds.current_prices["gpu_id"])
    named = [g for g in verdict_gpus(ds) if g in priced]
    ranked = (
        days.filter(pl.col("gpu_id").is_in(named) & (pl.col("days") >= 30))
        .sort(["days", "gpu_id"], descending=[True, False])["gpu_id"]
        .to_list()
    )
    fill = days.filter(pl.col("gpu_id").is_in(list(priced))).sort(
        ["days", "gpu_id"], descending=[True, False]
    )["gpu_id"]
    out = ranked[:k]
    for gpu in fill:
        if len(out) >= k:
            break
        if gpu not in out:
            out.append(gpu)
    return out


def cloud_gpus(ds: Dataset, k: int) -> list[str]:
    """The k GPUs rented by the most providers (on-demand or spot)."""
    offers = ds.data.cloud_perf.filter(pl.col("workload") == "training_16bit")
    return (
        offers.group_by("gpu_id")
        .agg(n=pl.col("provider").n_unique())
        .sort(["n", "gpu_id"], descending=[True, False])
        .head(k)["gpu_id"]
        .to_list()
    )


def buy_vs_rent_gpus(ds: Dataset, k: int = 4) -> list[str]:
    """Up to k representative GPUs that can be both bought and rented on-demand."""
    cloud = ds.data.cloud.filter(
        (pl.col("price_type") == "on_demand") & (pl.col("platform") == "workstation")
    )
    available = set(cloud["gpu_id"])
    picks = [g for g in BUY_VS_RENT_PREFERENCE if g in available][:k]
    for gpu in sorted(available):
        if len(picks) >= k:
            break
        if gpu not in picks:
            picks.append(gpu)
    return picks


def front_chart_builders(ds: Dataset, narrow: bool) -> dict:
    """Chart name -> a function building its wide or narrow variant."""
    data = ds.data
    tiers = [float(t) for t in data.parameters.get("memory_tiers_gb", (8, 12, 16, 24, 48, 80))]
    picks = ds.verdicts.filter(
        (pl.col("kind") == "memory")
        & pl.col("option").str.starts_with("buy")
        & pl.col("gpu_id").is_not_null()
    )
    horizon = float(data.parameters["years"]) * 365.0
    # The lead chart ranks, so it shows only GPUs that may be picked (evidence_basis).
    eligible = data.basis.filter(pl.col("eligible")).select("gpu_id", "workload")
    ranked = data.perf.join(eligible, on=["gpu_id", "workload"], maintain_order="left")
    return {
        "perf_per_dollar": lambda: perf_per_dollar_chart(ranked, data.run_date, narrow),
        "relative_performance": lambda: relative_performance_chart(
            data.relative, relative_gpus(ds, narrow), data.reference_gpu, narrow
        ),
        "memory_vs_value": lambda: memory_value_chart(data.perf, data.gpus, picks, tiers, narrow),
        "price_history": lambda: price_history_chart(
            ds.price_history,
            ds.current_prices,
            price_history_gpus(ds, 6 if narrow else 9),
            data.run_date,
            narrow,
        ),
        "cloud_prices": lambda: cloud_prices_chart(
            data.cloud_perf, cloud_gpus(ds, 10 if narrow else 14), narrow
        ),
        "buy_vs_rent": lambda: buy_vs_rent_chart(
            data.cloud, ds.current_prices, buy_vs_rent_gpus(ds), horizon, narrow=narrow
        ),
        "sensitivity": lambda: sensitivity_chart(ds.sensitivity, narrow),
        "llm_value": lambda: llm_value_chart(ds.llm_throughput, data.perf, narrow),
    }


def priced_history_gpus(ds: Dataset) -> list[str]:
    """GPUs with a price history (each gets a price-history chart on its page)."""
    return sorted(set(ds.price_history["gpu_id"]))


def serving_chart_jobs(ds: Dataset, out_dir: Path) -> list[ChartJob]:
    """One serving-cost chart per model with a cost to buy new or rent (wide and narrow)."""
    cost, prices = ds.llm_serving_cost, ds.llm_api_prices
    return [
        ChartJob(
            partial(serving_cost_chart, cost, prices, model, narrow),
            out_dir,
            chart_name(model) + (".narrow" if narrow else ""),
        )
        for model in charted_models(cost, serving_models(ds))
        for narrow in (False, True)
    ]


def render_site_charts(ds: Dataset, out_dir: Path, cache_dir: Path | None = None) -> list[Path]:
    """Every chart of the version: the figures (wide + narrow) and one per GPU.

    `cache_dir` keeps the SVGs for the next build (SvgCache): only charts whose spec
    changed are rendered again.
    """
    cache = SvgCache(cache_dir)
    jobs = []
    for narrow in (False, True):
        builders = front_chart_builders(ds, narrow)
        for figure in FIGURES:
            name = f"{figure.name}.narrow" if narrow else figure.name
            jobs.append(ChartJob(builders[figure.name], out_dir, name))
    jobs += serving_chart_jobs(ds, out_dir)
    paths = render_many(jobs, cache=cache)
    gpus = [slug(g) for g in priced_history_gpus(ds)]
    paths += render_gpu_price_charts(
        ds.price_history, ds.current_prices, gpus, ds.run_date, out_dir / "gpu", cache
    )
    paths += write_interactive_files(out_dir, cache)  # the charts' interactive view
    cache.prune()
    return paths
