"""The best GPU per workload and memory tier, to buy new, buy used or rent (methodology §9).

Buying compares 1-GPU systems by perf per dollar of total cost of ownership; renting
compares perf per rented dollar (relative performance / USD per GPU-hour) of each GPU's
cheapest offer across providers: `rent` on-demand, `rent_spot` spot/interruptible (never
mixed). A tier holds every GPU with at least that much memory. The winner carries its 95 %
interval, the share of bootstrap replicates in which it wins its tier (p_best) and the
runner-up.
"""

import datetime as dt

import polars as pl

from model.cloud_freshness import fresh_only
from model.ties import tie_groups

BUY_OPTIONS = {"new": "buy_new", "used": "buy_used"}
RENT_OPTIONS = {"on_demand": "rent", "spot": "rent_spot"}
UNITS = {
    "buy": "relative performance per USD of 1-GPU total cost of ownership",
    "rent": "reference-GPU-hours per USD rented",
}
_GROUP = ["option", "workload", "memory_tier_gb"]
_INFO = {
    "method": pl.Utf8,
    "market": pl.Utf8,
    "price_usd": pl.Float64,
    "provider": pl.Utf8,
    "price_type": pl.Utf8,
    "instance_type": pl.Utf8,
    "usd_per_gpu_hour": pl.Float64,
}


def _with_info(frame: pl.DataFrame) -> pl.DataFrame:
    missing = [pl.lit(None, dtype=kind).alias(c) for c, kind in _INFO.items() if c not in frame]
    return frame.with_columns(missing).select(
        "option", "workload", "gpu_id", "perf_per_dollar", *_INFO
    )


def buy_candidates(perf: pl.DataFrame, replicates: pl.DataFrame) -> tuple[pl.DataFrame, ...]:
    """1-GPU systems priced new or used: (candidates, replicates) with an `option`."""
    keep = (pl.col("system_gpus") == 1) & pl.col("market").is_in(list(BUY_OPTIONS))
    option = pl.col("market").replace_strict(BUY_OPTIONS).alias("option")
    points = _with_info(perf.filter(keep).with_columns(option))
    reps = replicates.filter(keep).select(
        option, "workload", "gpu_id", "replicate", "perf_per_dollar"
    )
    return points, reps


def rent_candidates(
    cloud: pl.DataFrame, performance_reps: pl.DataFrame
) -> tuple[pl.DataFrame, ...]:
    """Each GPU's best offer per rent option: (candidates, replicates) with an `option`.

    `cloud` is the cloud_perf_per_dollar table; the best offer is the cheapest GPU-hour
    across providers (ties: provider name), so it is the same for every workload. Only
    fresh offers compete (model/cloud_freshness.py): a GPU whose offers are all older than
    their window is not a candidate.
    """
    best = (
        fresh_only(cloud)
        .filter(pl.col("price_type").is_in(list(RENT_OPTIONS)))
        .with_columns(option=pl.col("price_type").replace_strict(RENT_OPTIONS))
        .sort("usd_per_gpu_hour", "provider", "instance_type", nulls_last=True)
        .group_by("option", "workload", "gpu_id", maintain_order=True)
        .first()
    )
    points = _with_info(best)
    reps = best.select("option", "workload", "gpu_id", "usd_per_gpu_hour").join(
        performance_reps, on=["workload", "gpu_id"]
    )
    reps = reps.select(
        "option",
        "workload",
        "gpu_id",
        "replicate",
        perf_per_dollar=pl.col("value") / pl.col("usd_per_gpu_hour"),
    )
    return points, reps


def recommendations(
    candidates: pl.DataFrame,
    replicates: pl.DataFrame,
    gpus: pl.DataFrame,
    tiers_gb: tuple[float, ...],
    run_date: dt.date,
) -> pl.DataFrame:
    """One row per workload x memory tier x option that has at least one candidate GPU.

    Winner and runner-up by the point perf per dollar; interval = 2.5 and 97.5 percentiles
    of the winner's replicates; p_best / runner_up_p_best = share of replicates in which
    that GPU has the highest perf per dollar of the tier (ties to the GPU id sorting first);
    tie_gpu_ids = the tied group when the winner's P(best) is under 50 % (model/ties.py).
    """
    memory = gpus.select("gpu_id", "memory_gb")
    tiers = pl.DataFrame({"memory_tier_gb": [float(t) for t in tiers_gb]})

    def in_tier(frame: pl.DataFrame) -> pl.DataFrame:
        return (
            frame.join(memory, on="gpu_id")
            .join(tiers, how="cross")
            .filter(pl.col("memory_gb") >= pl.col("memory_tier_gb"))
        )

    reps = in_tier(replicates)
    n_reps = reps.group_by(*_GROUP).agg(_n=pl.col("replicate").n_unique())
    p_best = (
        reps.sort("perf_per_dollar", "gpu_id", descending=[True, False])
        .group_by(*_GROUP, "replicate", maintain_order=True)
        .first()
        .group_by(*_GROUP, "gpu_id")
        .agg(_wins=pl.len())
        .join(n_reps, on=_GROUP)
        .select(*_GROUP, "gpu_id", p_best=pl.col("_wins") / pl.col("_n"))
    )
    intervals = reps.group_by(*_GROUP, "gpu_id").agg(
        perf_per_dollar_low=pl.col("perf_per_dollar").quantile(0.025, "linear"),
        perf_per_dollar_high=pl.col("perf_per_dollar").quantile(0.975, "linear"),
    )
    ranked = (
        in_tier(candidates)
        .join(p_best, on=[*_GROUP, "gpu_id"], how="left")
        .join(intervals, on=[*_GROUP, "gpu_id"], how="left")
        .with_columns(pl.col("p_best").fill_null(0.0))
        .sort("perf_per_dollar", "gpu_id", descending=[True, False])
        .with_columns(
            _pos=pl.int_range(1, pl.len() + 1).over(_GROUP),
            n_candidates=pl.len().over(_GROUP).cast(pl.Int32),
        )
    )
    ties = tie_groups(
        ranked.rename({"perf_per_dollar_low": "low", "perf_per_dollar_high": "high"}),
        _GROUP,
        ["gpu_id"],
    ).drop("tie_system_gpus")
    runner_up = ranked.filter(pl.col("_pos") == 2).select(
        *_GROUP,
        runner_up_gpu_id="gpu_id",
        runner_up_perf_per_dollar="perf_per_dollar",
        runner_up_p_best="p_best",
    )
    return (
        ranked.filter(pl.col("_pos") == 1)
        .join(runner_up, on=_GROUP, how="left")
        .join(ties, on=_GROUP, how="left")
        .with_columns(
            run_date=pl.lit(run_date),
            unit=pl.when(pl.col("option").str.starts_with("buy"))
            .then(pl.lit(UNITS["buy"]))
            .otherwise(pl.lit(UNITS["rent"])),
        )
        .select(
            "run_date",
            "workload",
            "memory_tier_gb",
            "option",
            "gpu_id",
            "memory_gb",
            "perf_per_dollar",
            "perf_per_dollar_low",
            "perf_per_dollar_high",
            "p_best",
            "runner_up_gpu_id",
            "runner_up_perf_per_dollar",
            "runner_up_p_best",
            "n_candidates",
            "unit",
            *_INFO,
            "tie_gpu_ids",
        )
        .sort("workload", "memory_tier_gb", "option")
    )
