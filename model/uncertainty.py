"""Bootstrap intervals on perf per dollar and rank stability (docs/methodology.md §7).

Three independent sources of spread are drawn `bootstrap_replicates` times:

- prices: per GPU x market, a log-normal draw with the price's own `log_sd`, the SD of its
  interval in current_prices (observed prices: from their evidence, n and the listing
  spread, model/price_uncertainty.py; nowcasts: the walk since the observation on top), so
  P(best) sees the interval the site publishes. A price without a `log_sd` (frames from
  older callers) falls back to resampling the observations behind it with replacement and
  taking their median, or, with too few, a log-normal draw with the spread pooled over
  better-observed groups;
- relative performance: a log-normal per GPU x workload matching its 95 % interval
  (`value_low`/`value_high` when relative_performance has them, otherwise no spread);
- the multi-GPU efficiency of each system size (and interconnect): where the run uses a
  fitted e_n, uniform over that fit's 95 % interval; where it uses Dettmers' e_n, uniform
  over `multi_gpu_efficiency_range` (widened to include the configured e_n if an override
  put it outside). One draw per constant and replicate, so interconnects that share
  Dettmers' e_n share its draw.

Each source has its own seeded generator, so a rerun on the same inputs draws the same
replicates and every asset that needs the performance draws gets the same ones.
"""

import math

import numpy as np
import polars as pl

from model.cost import RANK_KEYS, costed, rank_expr, systems_frame
from model.parameters import ModelParameters
from model.prices import flag_outliers

# 1.4826 * MAD estimates a standard deviation; the median of n normal draws has a standard
# error of about sqrt(pi / 2) * sd / sqrt(n).
_MAD_SCALE = 1.4826
_MEDIAN_SE = math.sqrt(math.pi / 2)
_Z95 = 1.959964
_PRICES, _PERFORMANCE, _EFFICIENCY = 1, 2, 3
TOP_K = 3
_PRICE_SCHEMA = {
    "replicate": pl.Int32,
    "gpu_id": pl.Utf8,
    "market": pl.Utf8,
    "price_usd": pl.Float64,
}


def _rng(params: ModelParameters, stream: int) -> np.random.Generator:
    return np.random.default_rng([params.bootstrap_seed, stream])


def _replicate_ids(params: ModelParameters, n_rows: int) -> np.ndarray:
    return np.tile(np.arange(params.bootstrap_replicates, dtype=np.int32), n_rows)


def price_samples(observations: pl.DataFrame, latest: pl.DataFrame, mad_k: float) -> pl.DataFrame:
    """The observations behind each latest new/used price: gpu_id, market, prices (list).

    Same filters as the daily price: usable rows (drop_reason NULL), priced and matched,
    not MAD outliers, on the day `latest_prices` took the price from.
    """
    usable = observations
    if "drop_reason" in observations.columns:
        usable = observations.filter(pl.col("drop_reason").is_null())
    kept = flag_outliers(usable, mad_k).filter(~pl.col("outlier"))
    days = latest.filter(pl.col("market") != "mean")
    if "price_method" in days.columns:  # a nowcast has no observations of today
        days = days.filter(pl.col("price_method") == "observed")
    days = days.select("gpu_id", "market", "price_usd", "price_day")
    return (
        days.join(
            kept.select("gpu_id", "market", "day", obs="price_usd"),
            left_on=["gpu_id", "market", "price_day"],
            right_on=["gpu_id", "market", "day"],
            how="left",
        )
        .group_by("gpu_id", "market", "price_usd")
        # Sorted: the bootstrap indexes into this list, so it must not depend on the order
        # the warehouse returned the observations in.
        .agg(prices=pl.col("obs").drop_nulls().sort())
        .sort("gpu_id", "market")
    )


def pooled_log_spread(samples: pl.DataFrame, min_observations: int) -> float:
    """Median robust SD of log prices over groups with at least `min_observations`.

    0.0 when no group is that well observed (then small groups get no spread: documented).
    """
    spreads = []
    for prices in samples["prices"].to_list():
        if len(prices) >= min_observations:
            logs = np.log(np.asarray(prices))
            spreads.append(_MAD_SCALE * float(np.median(np.abs(logs - np.median(logs)))))
    return float(np.median(spreads)) if spreads else 0.0


def price_replicates(
    observations: pl.DataFrame, latest: pl.DataFrame, params: ModelParameters
) -> pl.DataFrame:
    """Bootstrap draws of each GPU's price: replicate, gpu_id, market, price_usd.

    Markets new and used are drawn from their observations; `mean` is the mean of the new
    and used draws of the same replicate, as the point estimate is.
    """
    has_sd = pl.col("log_sd").is_not_null() & (pl.col("market") != "mean")
    if "log_sd" not in latest.columns:
        latest = latest.with_columns(log_sd=pl.lit(None, dtype=pl.Float64))
    samples = price_samples(observations, latest.filter(~has_sd), params.price_mad_k)
    spread = pooled_log_spread(samples, params.bootstrap_min_observations)
    rng = _rng(params, _PRICES)
    reps = params.bootstrap_replicates
    draws = []
    for prices, point in zip(samples["prices"].to_list(), samples["price_usd"], strict=True):
        n = len(prices)
        if n >= params.bootstrap_min_observations:
            values = np.asarray(prices)
            draws.append(np.median(values[rng.integers(0, n, size=(reps, n))], axis=1))
        else:
            sd = _MEDIAN_SE * spread / math.sqrt(max(n, 1))
            draws.append(point * np.exp(rng.normal(0.0, sd, size=reps)))
    ids, markets = samples["gpu_id"].to_list(), samples["market"].to_list()
    # A price with a log_sd (every current_prices row but `mean`) is drawn log-normally
    # with it; a nowcast without one (older frames) without spread.
    nowcast = pl.col("price_method") == "nowcast" if "price_method" in latest.columns else False
    drawn = latest.filter(has_sd | nowcast).sort("gpu_id", "market")
    for gpu_id, market, point, sd in drawn.select(
        "gpu_id", "market", "price_usd", "log_sd"
    ).iter_rows():
        draws.append(point * np.exp(rng.normal(0.0, sd or 0.0, size=reps)))
        ids.append(gpu_id)
        markets.append(market)
    single = pl.DataFrame(
        {
            "replicate": _replicate_ids(params, len(draws)),
            "gpu_id": np.repeat(np.asarray(ids, dtype=object), reps),
            "market": np.repeat(np.asarray(markets, dtype=object), reps),
            "price_usd": np.concatenate(draws) if draws else np.zeros(0),
        },
        schema=_PRICE_SCHEMA,
    )
    mean = (
        single.group_by("replicate", "gpu_id")
        .agg(n_markets=pl.len(), price_usd=pl.col("price_usd").mean())
        .filter(pl.col("n_markets") == 2)
        .select("replicate", "gpu_id", market=pl.lit("mean"), price_usd="price_usd")
    )
    wanted = latest.select("gpu_id", "market")
    return (
        pl.concat([single, mean])
        .join(wanted, on=["gpu_id", "market"])
        .sort("gpu_id", "market", "replicate")
    )


def log_sd_expr() -> pl.Expr:
    """SD of log relative performance implied by a 95 % interval (0 without one)."""
    width = (pl.col("value_high").log() - pl.col("value_low").log()) / (2 * _Z95)
    valid = (pl.col("value_low") > 0) & (pl.col("value_high") >= pl.col("value_low"))
    return pl.when(valid).then(width).otherwise(0.0).fill_null(0.0)


def performance_replicates(relative: pl.DataFrame, params: ModelParameters) -> pl.DataFrame:
    """Log-normal draws of relative performance: replicate, gpu_id, workload, value.

    Centred on the point value with the SD its 95 % interval implies, independently per
    GPU x workload (an approximation: estimates sharing a spec fit are correlated).
    """
    base = relative.sort("workload", "gpu_id")
    if {"value_low", "value_high"} <= set(base.columns):
        sd = base.select(log_sd_expr()).to_series().to_numpy()
    else:
        sd = np.zeros(base.height)
    reps = params.bootstrap_replicates
    z = _rng(params, _PERFORMANCE).normal(size=(base.height, reps))
    values = base["value"].to_numpy()[:, None] * np.exp(sd[:, None] * z)
    return pl.DataFrame(
        {
            "replicate": _replicate_ids(params, base.height),
            "gpu_id": np.repeat(base["gpu_id"].to_numpy(), reps),
            "workload": np.repeat(base["workload"].to_numpy(), reps),
            "value": values.ravel(),
        },
        schema={
            "replicate": pl.Int32,
            "gpu_id": pl.Utf8,
            "workload": pl.Utf8,
            "value": pl.Float64,
        },
    )


def efficiency_replicates(
    params: ModelParameters, efficiencies: pl.DataFrame | None = None
) -> pl.DataFrame:
    """Per replicate, system size and interconnect: host cost and a draw of the efficiency.

    `efficiencies` is the run's `fit.efficiency_table` (Dettmers' constants without it).
    A fitted e_n is drawn uniformly from its 95 % interval (`efficiency_low`-
    `efficiency_high`); a Dettmers e_n uniformly from `multi_gpu_efficiency_range[n]`,
    widened to include the configured e_n when an override put it outside that range (a
    size without a range is not drawn). One draw per constant (`efficiency_source`) and
    replicate, shared by the interconnects that use it.
    """
    rng = _rng(params, _EFFICIENCY)
    reps = params.bootstrap_replicates
    systems = systems_frame(params, efficiencies)
    draws = {}
    for row in systems.unique("efficiency_source", keep="first", maintain_order=True).iter_rows(
        named=True
    ):
        point = row["efficiency"]
        if row["efficiency_low"] is not None and row["efficiency_high"] is not None:
            low, high = row["efficiency_low"], row["efficiency_high"]
        else:
            low, high = params.multi_gpu_efficiency_range.get(row["system_gpus"], (point,) * 2)
            low, high = min(low, point), max(high, point)
        draws[row["efficiency_source"]] = rng.uniform(low, high, size=reps)
    frames = [
        pl.DataFrame(
            {
                "replicate": np.arange(reps, dtype=np.int32),
                "system_gpus": np.full(reps, row["system_gpus"], dtype=np.int32),
                "platform": [row["platform"]] * reps,
                "interconnect": [row["interconnect"]] * reps,
                "host_cost_usd": np.full(reps, row["host_cost_usd"]),
                "efficiency": draws[row["efficiency_source"]],
                "efficiency_source": [row["efficiency_source"]] * reps,
            },
            schema_overrides={"interconnect": pl.Utf8},
        )
        for row in systems.iter_rows(named=True)
    ]
    return pl.concat(frames)


def perf_per_dollar_replicates(
    relative: pl.DataFrame,
    latest: pl.DataFrame,
    observations: pl.DataFrame,
    gpus: pl.DataFrame,
    params: ModelParameters,
    efficiencies: pl.DataFrame | None = None,
    resale: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Bootstrap perf per dollar: replicate, gpu_id, workload, system_gpus, market, value.

    Same GPUs, markets, formulas, efficiencies (`efficiencies`, the run's
    `fit.efficiency_table`) and resale basis (`resale`, resale.resale_basis: the resale
    value moves with each drawn price) as the point estimate (`cost.costed`).
    """
    prices = price_replicates(observations, latest, params)
    if "sources" in latest.columns:  # whole-server price shares stay server shares
        prices = prices.join(
            latest.select("gpu_id", "market", "sources"), on=["gpu_id", "market"], how="left"
        )
    rows = costed(
        performance_replicates(relative, params),
        prices,
        gpus,
        params,
        systems=efficiency_replicates(params, efficiencies),
        by=("replicate",),
        resale=resale,
    )
    return rows.select("replicate", "gpu_id", *RANK_KEYS, "perf_per_dollar")


def summarise(replicates: pl.DataFrame) -> pl.DataFrame:
    """Per GPU x workload x system size x market: 95 % interval and top-3 probability.

    p_top3 is the share of replicates in which the GPU is among the 3 highest perf per
    dollar of its workload, system size and market (among the GPUs priced in that market).
    """
    return (
        replicates.with_columns(_rank=rank_expr(("replicate",)))
        .group_by("gpu_id", *RANK_KEYS)
        .agg(
            perf_per_dollar_low=pl.col("perf_per_dollar").quantile(0.025, "linear"),
            perf_per_dollar_high=pl.col("perf_per_dollar").quantile(0.975, "linear"),
            p_top3=(pl.col("_rank") <= TOP_K).mean(),
        )
    )


def with_intervals(point: pl.DataFrame, replicates: pl.DataFrame) -> pl.DataFrame:
    """The point-estimate rows with the bootstrap interval and p_top3 joined on."""
    return point.join(summarise(replicates), on=["gpu_id", *RANK_KEYS], how="left")


def cloud_with_intervals(cloud: pl.DataFrame, performance: pl.DataFrame) -> pl.DataFrame:
    """cloud_perf_per_dollar rows with the 95 % interval from the performance draws.

    Cloud list prices are taken as exact, so the interval is the performance spread alone.
    """
    keys = ["gpu_id", "workload", "provider", "price_type"]
    bounds = (
        cloud.select(*keys, "usd_per_gpu_hour")
        .join(performance, on=["gpu_id", "workload"])
        .with_columns(_ppd=pl.col("value") / pl.col("usd_per_gpu_hour"))
        .group_by(keys)
        .agg(
            perf_per_dollar_low=pl.col("_ppd").quantile(0.025, "linear"),
            perf_per_dollar_high=pl.col("_ppd").quantile(0.975, "linear"),
        )
    )
    return cloud.join(bounds, on=keys, how="left")
