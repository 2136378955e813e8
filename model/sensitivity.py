"""How perf-per-dollar ranks move when one cost parameter varies (docs/methodology.md §8).

One parameter at a time over its stated range (`sensitivity_*` in ModelParameters), every
other parameter at the run's setting; ranks are within workload x system size x market.
"""

import dataclasses
import datetime as dt

import polars as pl

from model.cost import RANK_KEYS, perf_per_dollar
from model.parameters import ModelParameters

# Parameter name (as stored in the table) -> the ModelParameters field holding its range.
RANGES = {
    "electricity_usd_per_kwh": "sensitivity_usd_per_kwh",
    "utilization": "sensitivity_utilization",
    "years": "sensitivity_years",
    "host_cost_scale": "sensitivity_host_cost_scale",
}


def sensitivity(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    run_date: dt.date,
    efficiencies: pl.DataFrame | None = None,
    resale: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per parameter x value x GPU x workload x system size x market.

    `efficiencies` is the run's `fit.efficiency_table` and `resale` its
    resale.resale_basis, as for the point estimate (varying `years` moves the resale too).

    rank / perf_per_dollar: with the parameter at `value`; rank_at_default /
    perf_per_dollar_at_default: at the run's own settings; rank_change = rank -
    rank_at_default (negative = moves up).
    """
    keys = ["gpu_id", *RANK_KEYS]
    base = perf_per_dollar(relative, prices, gpus, params, run_date, efficiencies, resale).select(
        *keys,
        perf_per_dollar_at_default="perf_per_dollar",
        rank_at_default="rank",
    )
    frames = []
    for name, range_field in RANGES.items():
        for value in getattr(params, range_field):
            varied = dataclasses.replace(params, **{name: float(value)})
            frames.append(
                perf_per_dollar(
                    relative, prices, gpus, varied, run_date, efficiencies, resale
                ).select(
                    "run_date",
                    pl.lit(name).alias("parameter"),
                    pl.lit(float(value)).alias("value"),
                    pl.lit(float(getattr(params, name))).alias("default_value"),
                    *keys,
                    "perf_per_dollar",
                    "rank",
                )
            )
    if not frames:
        return pl.DataFrame()
    return (
        pl.concat(frames)
        .join(base, on=keys)
        .with_columns(rank_change=pl.col("rank") - pl.col("rank_at_default"))
        .sort("parameter", "value", *RANK_KEYS, "rank")
    )


def rank_ranges(table: pl.DataFrame) -> pl.DataFrame:
    """Per GPU x workload x system size x market and parameter: best and worst rank seen."""
    return table.group_by("parameter", "gpu_id", *RANK_KEYS).agg(
        rank_at_default=pl.col("rank_at_default").first(),
        best_rank=pl.col("rank").min(),
        worst_rank=pl.col("rank").max(),
    )
