"""What a million tokens cost when a GPU system serves many users at a target speed each.

`llm_serving` (one row per GPU x model x precision x GPU count x concurrency) gives a
system's output tokens/s and each user's share of it. A provider promising every user at
least T tokens/s runs the highest-throughput concurrency that still gives each user T:

    operating point = argmax over concurrency of output_tokens_per_s,
                      among rows that fit with output_tokens_per_s_per_user >= T

for each target T in `TARGETS` (10, 20, 50 tokens/s per user). A configuration that
reaches T at no concurrency has no row for T.

The system costs dollars per second of use:

    buy:  TCO x (num_gpus / system_gpus) / (years x 365 x 86,400 s x utilization)
          TCO is the `perf_per_dollar` row's total cost of ownership (GPUs, host,
          electricity over `years`, net of resale) of the smallest system of at least
          num_gpus GPUs (a whole number of num_gpus replicas); a 1-GPU configuration of
          a module sold only in 8-GPU servers pays one eighth of the server.
    rent: usd_per_gpu_hour x num_gpus / 3,600, the cheapest fresh offer of the GPU and
          price type among instances with at least num_gpus GPUs (as `model.llm.llm_cost`).

A token costs the system-seconds spent making it:

    $ per 1M output tokens = $ per s / output_tokens_per_s (decode, at the operating point) x 1e6
    $ per 1M input tokens  = $ per s / prefill_tokens_per_s (prompt processing)            x 1e6

Prefill runs every prompt token of a request in one pass (compute bound, thousands of
tokens/s), decode one token per user per pass (bandwidth bound), so input tokens come out
several times cheaper than output tokens, as API price lists have them.

Interval (`low`, `high`, of the output-token cost): the throughput interval of the
operating row (`llm_serving.low/high`) crossed with the price interval. Buying: the TCO at
the GPU's 95 % price interval (`current_prices.price_low/price_high`; the resale value
moves with the price, so TCO(p) = TCO + n x (p - price) x (1 - resale / price)). Renting:
the cheapest fresh offer (low end) to the median of the fresh offers of that GPU, price
type and size (high end: what a buyer pays who does not shop for the cheapest provider).
"""

from collections.abc import Collection

import polars as pl

# Interactivity targets: tokens/s each user receives (10 is reading speed, 50 is fast).
TARGETS = (10, 20, 50)
_SECONDS_PER_YEAR = 365.0 * 24 * 3600
_KEYS = ["gpu_id", "model_id", "precision_bits", "num_gpus"]
SERVING_COLUMNS = (
    "run_date", "gpu_id", "model_id", "precision_bits", "num_gpus", "concurrency", "engine",
    "fits", "output_tokens_per_s", "output_tokens_per_s_per_user", "low", "high",
    "prefill_tokens_per_s",
)  # fmt: skip
COLUMNS = (
    "run_date", "gpu_id", "model_id", "precision_bits", "num_gpus", "basis",
    "min_tokens_per_s_per_user", "concurrency", "output_tokens_per_s_per_user",
    "usd_per_million_output_tokens", "usd_per_million_input_tokens", "low", "high",
    "utilization", "detail", "rank", "grounded",
)  # fmt: skip
_RENT_TYPES = {"on_demand": "rent_on_demand", "spot": "rent_spot"}


def operating_points(serving: pl.DataFrame, targets: tuple[int, ...] = TARGETS) -> pl.DataFrame:
    """Per GPU x model x precision x GPU count x target: the concurrency a provider runs.

    The row of highest system throughput (the lowest concurrency on a tie) among those
    that fit and give each user at least the target. Adds `min_tokens_per_s_per_user`.
    """
    missing = [c for c in SERVING_COLUMNS if c not in serving.columns]
    if missing:
        raise ValueError(f"llm_serving rows lack the columns {missing}")
    usable = serving.filter(
        pl.col("fits").fill_null(False)
        & pl.col("output_tokens_per_s").is_not_null()
        & (pl.col("output_tokens_per_s") > 0)
        & pl.col("output_tokens_per_s_per_user").is_not_null()
    )
    frames = [
        usable.filter(pl.col("output_tokens_per_s_per_user") >= target)
        .sort("output_tokens_per_s", "concurrency", descending=[True, False])
        .group_by(["run_date", *_KEYS], maintain_order=True)
        .first()
        .with_columns(min_tokens_per_s_per_user=pl.lit(target, dtype=pl.Int32))
        for target in targets
    ]
    return pl.concat(frames, how="vertical_relaxed")


def _tco_at(price: pl.Expr) -> pl.Expr:
    """A system's TCO had its GPUs cost `price` each (resale moves with the price)."""
    kept = 1 - pl.col("resale_usd").fill_null(0.0) / pl.col("price_usd")
    return pl.col("total_cost_usd") + pl.col("system_gpus") * (price - pl.col("price_usd")) * kept


def buy_rates(buy: pl.DataFrame, years: float, utilization: float) -> pl.DataFrame:
    """Dollars per second of a bought system in use, with its price interval.

    `buy` is one perf_per_dollar workload's rows (gpu_id, system_gpus, market,
    total_cost_usd, price_usd, price_method, price_day; optional resale_usd and
    price_low_usd / price_high_usd, the GPU's 95 % price interval). Markets other than
    new and used (`mean`) are left out: the table's bases are buy_new and buy_used.
    """
    rows = buy.filter(pl.col("market").is_in(["new", "used"]))
    if rows.select("gpu_id", "system_gpus", "market").is_duplicated().any():
        raise ValueError("buy rows repeat a gpu_id x system_gpus x market (pass one workload)")
    for column in ("resale_usd", "price_low_usd", "price_high_usd"):
        if column not in rows.columns:
            rows = rows.with_columns(pl.lit(None, dtype=pl.Float64).alias(column))
    seconds = years * _SECONDS_PER_YEAR * utilization
    return rows.select(
        "gpu_id",
        pl.col("system_gpus").cast(pl.Int32),
        "market",
        "total_cost_usd",
        "price_method",
        "price_day",
        usd_per_s=pl.col("total_cost_usd") / seconds,
        usd_per_s_low=_tco_at(pl.col("price_low_usd").fill_null(pl.col("price_usd"))) / seconds,
        usd_per_s_high=_tco_at(pl.col("price_high_usd").fill_null(pl.col("price_usd"))) / seconds,
    )


def _bought(points: pl.DataFrame, rates: pl.DataFrame, years: float, util: float):
    """Operating points x the smallest bought system holding whole replicas of them."""
    share = pl.col("num_gpus") / pl.col("system_gpus")
    return (
        points.join(rates, on="gpu_id")
        .filter(
            (pl.col("system_gpus") >= pl.col("num_gpus"))
            & (pl.col("system_gpus") % pl.col("num_gpus") == 0)
        )
        .sort("system_gpus")
        .group_by([*_KEYS, "min_tokens_per_s_per_user", "market"], maintain_order=True)
        .first()
        .with_columns(
            basis=pl.format("buy_{}", "market"),
            usd_per_s=pl.col("usd_per_s") * share,
            usd_per_s_low=pl.col("usd_per_s_low") * share,
            usd_per_s_high=pl.col("usd_per_s_high") * share,
            utilization=pl.lit(util, dtype=pl.Float64),
            price_detail=pl.format(
                "{} of a {}-GPU {} system ({} price of {}; cost of ownership ${} over {} "
                "years at {}% use)",
                "num_gpus",
                "system_gpus",
                "market",
                "price_method",
                "price_day",
                pl.col("total_cost_usd").round(0).cast(pl.Int64),
                pl.lit(f"{years:g}"),
                pl.lit(f"{util * 100:g}"),
            ),
        )  # fmt: skip
    )


def rent_rates(keys: pl.DataFrame, offers: pl.DataFrame) -> pl.DataFrame:
    """Per gpu_id x num_gpus x price type: the cheapest fresh $/GPU-hour and the median.

    `keys` holds gpu_id, num_gpus; `offers` the fresh cloud offers (gpu_id, gpu_count,
    price_type, usd_per_gpu_hour, provider, instance_type). An instance with more GPUs
    than the configuration needs counts (the rest serve other replicas), as in llm_cost.
    """
    candidates = (
        keys.select("gpu_id", "num_gpus")
        .unique()
        .join(offers.filter(pl.col("price_type").is_in(list(_RENT_TYPES))), on="gpu_id")
        .filter(pl.col("gpu_count") >= pl.col("num_gpus"))
        .sort("usd_per_gpu_hour", "provider", "instance_type")
    )
    return candidates.group_by("gpu_id", "num_gpus", "price_type", maintain_order=True).agg(
        pl.col("usd_per_gpu_hour").first(),
        pl.col("provider").first(),
        pl.col("instance_type").first(),
        median_usd_per_gpu_hour=pl.col("usd_per_gpu_hour").median(),
        n_offers=pl.len().cast(pl.Int32),
    )


def _rented(points: pl.DataFrame, rates: pl.DataFrame) -> pl.DataFrame:
    """Operating points x the rent rates of their GPU and size."""
    per_s = pl.col("num_gpus") / 3600.0
    return points.join(rates, on=["gpu_id", "num_gpus"]).with_columns(
        basis=pl.col("price_type").replace_strict(_RENT_TYPES),
        usd_per_s=pl.col("usd_per_gpu_hour") * per_s,
        usd_per_s_low=pl.col("usd_per_gpu_hour") * per_s,
        usd_per_s_high=pl.col("median_usd_per_gpu_hour") * per_s,
        utilization=pl.lit(None, dtype=pl.Float64),
        price_detail=pl.format(
            "{} {} at ${}/GPU-hour ({})",
            "provider", "instance_type", pl.col("usd_per_gpu_hour").round(3),
            pl.when(pl.col("n_offers") == 1).then(pl.lit("the only fresh offer")).otherwise(
                pl.format("cheapest of {} fresh offers; median ${}", "n_offers",
                          pl.col("median_usd_per_gpu_hour").round(3))
            ),
        ),
    )  # fmt: skip


def llm_serving_cost(
    serving: pl.DataFrame,
    buy: pl.DataFrame,
    offers: pl.DataFrame,
    years: float,
    utilization: float,
    targets: tuple[int, ...] = TARGETS,
    grounded_gpus: Collection[str] | None = None,
) -> pl.DataFrame:
    """$ per million output and input tokens per configuration, basis and target.

    `serving` is the `llm_serving` table of one run; `buy` and `offers` as in `buy_rates`
    and `rent_rates` (fresh offers only: the asset passes `fresh_only`'s). See the module
    docstring for the formulas. `grounded_gpus` are the GPUs whose architecture has a
    published serving measurement (None: every GPU); `grounded` says so per row, and an
    estimate never outranks a grounded configuration: `rank` 1 is the cheapest output
    token of its model x precision x basis x target among grounded rows (ties share a
    rank), the extrapolated ones ranked after them.
    """
    points = operating_points(serving, targets)
    priced = pl.concat(
        [
            _bought(points, buy_rates(buy, years, utilization), years, utilization),
            _rented(points, rent_rates(points, offers)),
        ],
        how="diagonal_relaxed",
    )
    tps = pl.col("output_tokens_per_s")
    return (
        priced.with_columns(
            usd_per_million_output_tokens=pl.col("usd_per_s") / tps * 1e6,
            usd_per_million_input_tokens=pl.col("usd_per_s") / pl.col("prefill_tokens_per_s") * 1e6,
            low=pl.col("usd_per_s_low") / pl.col("high").fill_null(tps) * 1e6,
            high=pl.col("usd_per_s_high") / pl.col("low").fill_null(tps) * 1e6,
            detail=pl.format(
                "{} at concurrency {}: {} output tokens/s, {} per user; prefill {} tokens/s; {}",
                pl.col("engine").fill_null("engine not stated"),
                "concurrency",
                tps.round(0).cast(pl.Int64),
                pl.col("output_tokens_per_s_per_user").round(1),
                pl.col("prefill_tokens_per_s")
                .round(0)
                .cast(pl.Int64)
                .cast(pl.Utf8)
                .fill_null("unknown"),
                "price_detail",
            ),
        )  # fmt: skip
        .with_columns(
            grounded=pl.lit(True)
            if grounded_gpus is None
            else pl.col("gpu_id").is_in(list(grounded_gpus))
        )
        .with_columns(
            # Extrapolated rows after every grounded one (no $/M token comes near 1e12).
            rank=(
                pl.col("usd_per_million_output_tokens")
                + pl.when(pl.col("grounded")).then(0.0).otherwise(1e12)
            )
            .rank("min")
            .over("run_date", "model_id", "precision_bits", "basis", "min_tokens_per_s_per_user")
            .cast(pl.Int32)
        )
        .select(COLUMNS)
        .sort(
            "model_id",
            "precision_bits",
            "basis",
            "min_tokens_per_s_per_user",
            "usd_per_million_output_tokens",
            "gpu_id",
            "num_gpus",
        )  # fmt: skip
    )


def input_not_cheaper(cost: pl.DataFrame) -> pl.DataFrame:
    """Rows whose input token costs as much as an output token or more (should be none).

    Prefill is compute bound and decode bandwidth bound, so a serving model whose prefill
    rate is not above its decode throughput has a fault; the asset fails on such rows.
    """
    return cost.filter(
        pl.col("usd_per_million_input_tokens") >= pl.col("usd_per_million_output_tokens")
    )
