"""The verdict: what to buy new, buy used, rent on-demand or rent spot (issue 13).

Per workload, by budget and by memory tier: the `verdicts` table, computed once a night by
the model's decision step beside `recommendations` (pipeline/defs/model/decisions.py) and
only read by the site.

Memory tiers are the model's `recommendations` table as it stands (1-GPU systems; renting:
each GPU's cheapest offer across providers). Budgets are computed here, read-only from the
run's tables, by the same rules:

- buy: every system in `perf_per_dollar` (1, 2, 4 or 8 GPUs) priced new or used whose
  total cost of ownership (`total_cost_usd`: GPUs + host + electricity over the run's
  years) is at most the budget; the verdict is the one with the highest perf per dollar;
- rent: every `cloud_perf_per_dollar` row (a provider's cheapest offer per GPU and price
  type) whose whole instance, rented for the hours a bought system works (years x 8,760 h
  x utilisation), costs at most the budget; the verdict is the highest perf per rented
  dollar, each GPU counted once at its best offer that fits.

P(best) is the share of the run's bootstrap replicates (the model's own seeded draws, so
the same ones behind `perf_per_dollar`'s intervals) in which the verdict has the highest
perf per dollar of everything that fits; the point estimate decides the verdict.

Only GPUs eligible for the workload compete (model/eligibility.py: measured under a
mainstream stack, or estimated with a validated error class). When the pick's P(best) is
under 50 % and other candidates' intervals overlap its own, the row also names the tied
group (`tie_gpu_ids`, model/ties.py), and the site says "tie: A, B, C". `kind` `headline`
(limit 0: any memory) is the front page's one-line answer per workload and option: the
best 1-GPU system of all eligible GPUs. `basis` and `caveat` say what the pick's number
rests on (evidence_basis).

Renting competes on fresh offers only (model/cloud_freshness.py): an offer older than its
window (`cloud_freshness_days`) never wins a cell, and a cell left with no fresh offer says
so in `why`. A marketplace pick carries its `listings` and `locations`; `offer_caveat` says
when it rests on a single listing.
"""

import datetime as dt
from collections.abc import Sequence

import polars as pl

from model.cloud_freshness import (
    fresh_only,
    offer_caveat,
    stale_candidates,
    stale_only,
    window_text,
)
from model.eligibility import keep_eligible
from model.parameters import WORKLOADS
from model.ties import TIE_MAX_P_BEST, tie_groups

BUDGETS_USD = (500, 1_000, 1_500, 2_500, 5_000, 10_000)
OPTIONS = ("buy_new", "buy_used", "rent_on_demand", "rent_spot")
OPTION_TITLES = {
    "buy_new": "buy new",
    "buy_used": "buy used",
    "rent_on_demand": "rent on-demand",
    "rent_spot": "rent spot",
}
BUY_MARKETS = {"new": "buy_new", "used": "buy_used"}
RENT_TYPES = {"on_demand": "rent_on_demand", "spot": "rent_spot"}
# The recommendations table names its rent options `rent` and `rent_spot`.
RECOMMENDATION_OPTIONS = {
    "buy_new": "buy_new",
    "buy_used": "buy_used",
    "rent": "rent_on_demand",
    "rent_spot": "rent_spot",
}
UNITS = {
    "buy": "relative performance per $1,000 of total cost of ownership",
    "rent": "reference-GPU-hours per rented dollar",
}
# The unit each option's perf_per_dollar is shown in (buying per $1,000, renting per $).
SCALE = {"buy_new": 1000.0, "buy_used": 1000.0, "rent_on_demand": 1.0, "rent_spot": 1.0}

_GROUP = ["workload", "kind", "limit", "option"]
_SCHEMA = {
    "workload": pl.Utf8,
    "kind": pl.Utf8,
    "limit": pl.Float64,
    "option": pl.Utf8,
    "gpu_id": pl.Utf8,
    "system_gpus": pl.Int32,
    "perf_per_dollar": pl.Float64,
    "perf_per_dollar_low": pl.Float64,
    "perf_per_dollar_high": pl.Float64,
    "p_best": pl.Float64,
    "method": pl.Utf8,
    "relative_performance": pl.Float64,
    "market": pl.Utf8,
    "price_usd": pl.Float64,
    "total_cost_usd": pl.Float64,
    "price_method": pl.Utf8,
    "price_day": pl.Date,
    "provider": pl.Utf8,
    "price_type": pl.Utf8,
    "instance_type": pl.Utf8,
    "usd_per_gpu_hour": pl.Float64,
    "gpu_count": pl.Int32,
    "offer_day": pl.Date,
    "pricing": pl.Utf8,
    "listings": pl.Int32,
    "locations": pl.Utf8,
    "reliability": pl.Float64,
    "runner_up_gpu_id": pl.Utf8,
    "runner_up_system_gpus": pl.Int32,
    "n_candidates": pl.Int32,
    "fastest_gpu_id": pl.Utf8,
    "fastest_system_gpus": pl.Int32,
    "cheapest_gpu_id": pl.Utf8,
    "cheapest_cost_usd": pl.Float64,
    "tie_gpu_ids": pl.Utf8,
    "tie_system_gpus": pl.Utf8,
}
# The verdicts table's columns, in order (013_verdicts.sql, 016_evidence_basis.sql,
# 021_rent_freshness.sql).
_TIE = ["tie_gpu_ids", "tie_system_gpus"]
_OFFER = ["pricing", "listings", "locations", "reliability"]
COLUMNS = [
    "run_date",
    *(c for c in _SCHEMA if c not in _TIE + _OFFER),
    *("age_days", "unit", "why", "basis", "caveat", *_TIE, *_OFFER, "offer_caveat"),
]
# The front page's headline rows: the best 1-GPU system of any memory (recommendations
# computed for a memory tier of 0 GB).
HEADLINE_KIND, HEADLINE_LIMIT = "headline", 0.0


def rental_hours(parameters: dict) -> float:
    """Hours a bought system works over the run's years at its utilisation."""
    return float(parameters["years"]) * 8760.0 * float(parameters["utilization"])


def _conform(frame: pl.DataFrame) -> pl.DataFrame:
    """Every verdict column, in order and type (missing ones NULL)."""
    return frame.with_columns(
        pl.lit(None, dtype=kind).alias(c) for c, kind in _SCHEMA.items() if c not in frame
    ).select(pl.col(c).cast(kind) for c, kind in _SCHEMA.items())


def _best(candidates: pl.DataFrame, replicates: pl.DataFrame, key: list[str]) -> pl.DataFrame:
    """Per verdict group: the candidate with the highest point perf per dollar.

    Adds the runner-up (`runner_up_*`), the number of candidates and `p_best`: the share of
    replicates in which the winner's replicate value is the group's highest (ties: the
    key sorting first, as the model's recommendations do).
    """
    ranked = candidates.sort(
        ["perf_per_dollar", *key], descending=[True] + [False] * len(key)
    ).with_columns(
        _pos=pl.int_range(1, pl.len() + 1).over(_GROUP),
        n_candidates=pl.len().over(_GROUP).cast(pl.Int32),
    )
    runner = ranked.filter(pl.col("_pos") == 2).select(
        *_GROUP, *(pl.col(k).alias(f"runner_up_{k}") for k in key)
    )
    wins = (
        replicates.sort(["perf_per_dollar", *key], descending=[True] + [False] * len(key))
        .group_by(*_GROUP, "replicate", maintain_order=True)
        .first()
        .group_by(*_GROUP, *key)
        .agg(_wins=pl.len())
    )
    n_reps = replicates.group_by(*_GROUP).agg(_n=pl.col("replicate").n_unique())
    p_best = wins.join(n_reps, on=_GROUP).select(
        *_GROUP, *key, p_best=pl.col("_wins") / pl.col("_n")
    )
    spread = replicates.group_by(*_GROUP, *key).agg(
        low=pl.col("perf_per_dollar").quantile(0.025, "linear"),
        high=pl.col("perf_per_dollar").quantile(0.975, "linear"),
    )
    scored = (
        ranked.select(*_GROUP, *key, "perf_per_dollar", "_pos")
        .join(p_best, on=[*_GROUP, *key], how="left")
        .join(spread, on=[*_GROUP, *key], how="left")
        .with_columns(pl.col("p_best").fill_null(0.0))
    )
    ties = tie_groups(scored.drop("_pos"), _GROUP, key)
    return (
        ranked.filter(pl.col("_pos") == 1)
        .drop("_pos")
        .join(runner, on=_GROUP, how="left")
        .join(p_best, on=[*_GROUP, *key], how="left")
        .with_columns(pl.col("p_best").fill_null(0.0))
        .join(ties, on=_GROUP, how="left")
    )


def _budgets(budgets: tuple[float, ...]) -> pl.DataFrame:
    return pl.DataFrame({"limit": [float(b) for b in budgets]})


def budget_buy(
    perf: pl.DataFrame, replicates: pl.DataFrame, budgets: tuple[float, ...] = BUDGETS_USD
) -> pl.DataFrame:
    """Best system to buy new or used per workload and budget (total cost of ownership).

    `perf` is the run's perf_per_dollar; `replicates` its bootstrap replicates (replicate,
    gpu_id, workload, system_gpus, market, perf_per_dollar).
    """
    key = ["gpu_id", "system_gpus"]
    fits = (
        perf.filter(pl.col("market").is_in(list(BUY_MARKETS)))
        .with_columns(
            option=pl.col("market").replace_strict(BUY_MARKETS),
            kind=pl.lit("budget"),
        )
        .join(_budgets(budgets), how="cross")
        .filter(pl.col("total_cost_usd") <= pl.col("limit"))
    )
    if fits.is_empty():
        return _conform(fits)
    reps = replicates.join(
        fits.select(*_GROUP, *key, "market"), on=["workload", "market", *key]
    ).select(*_GROUP, *key, "replicate", "perf_per_dollar")
    fastest = (
        fits.with_columns(_perf=pl.col("perf_per_dollar") * pl.col("total_cost_usd"))
        .sort(["_perf", *key], descending=[True, False, False])
        .group_by(_GROUP, maintain_order=True)
        .first()
        .select(*_GROUP, fastest_gpu_id="gpu_id", fastest_system_gpus="system_gpus")
    )
    return _conform(_best(fits, reps, key).join(fastest, on=_GROUP, how="left"))


def budget_rent(
    cloud_perf: pl.DataFrame,
    offers: pl.DataFrame,
    performance_replicates: pl.DataFrame,
    hours: float,
    budgets: tuple[float, ...] = BUDGETS_USD,
) -> pl.DataFrame:
    """Best GPU to rent on-demand or spot per workload and budget.

    `cloud_perf` is the run's cloud_perf_per_dollar; `offers` the cloud offers with their
    `gpu_count` (provider, instance_type, region, price_type, gpu_id, gpu_count);
    `performance_replicates` the model's draws of relative performance (replicate, gpu_id,
    workload, value). An offer fits when its whole instance for `hours` costs at most the
    budget; each GPU competes with its best offer that fits.
    """
    fits = (
        _with_gpu_count(cloud_perf.filter(pl.col("price_type").is_in(list(RENT_TYPES))), offers)
        .with_columns(
            option=pl.col("price_type").replace_strict(RENT_TYPES),
            kind=pl.lit("budget"),
        )
        .join(_budgets(budgets), how="cross")
        .filter(pl.col("usd_per_gpu_hour") * pl.col("gpu_count") * hours <= pl.col("limit"))
        # each GPU once, at its cheapest fitting offer (ties: provider, instance)
        .sort("usd_per_gpu_hour", "provider", "instance_type")
        .group_by(*_GROUP, "gpu_id", maintain_order=True)
        .first()
    )
    if fits.is_empty():
        return _conform(fits)
    reps = fits.select(*_GROUP, "gpu_id", "usd_per_gpu_hour").join(
        performance_replicates, on=["workload", "gpu_id"]
    )
    reps = reps.select(
        *_GROUP,
        "gpu_id",
        "replicate",
        perf_per_dollar=pl.col("value") / pl.col("usd_per_gpu_hour"),
    )
    fastest = (
        fits.sort(["relative_performance", "gpu_id"], descending=[True, False])
        .group_by(_GROUP, maintain_order=True)
        .first()
        .select(*_GROUP, fastest_gpu_id="gpu_id")
    )
    best = _best(fits, reps, ["gpu_id"]).join(fastest, on=_GROUP, how="left")
    return _conform(best.with_columns(system_gpus=pl.lit(1, dtype=pl.Int32)))


def memory_verdicts(
    recommendations: pl.DataFrame,
    perf: pl.DataFrame,
    cloud_perf: pl.DataFrame,
    offers: pl.DataFrame,
) -> pl.DataFrame:
    """The model's recommendations per memory tier, with price method, price day and cost.

    A recommendation for a tier of 0 GB is a `headline` row (any memory).
    Buying: the 1-GPU `perf_per_dollar` row of the winner in its market; renting: the
    winner's `cloud_perf_per_dollar` offer (its day).
    """
    rec = recommendations.with_columns(
        option=pl.col("option").replace_strict(RECOMMENDATION_OPTIONS),
        kind=pl.when(pl.col("memory_tier_gb") == HEADLINE_LIMIT)
        .then(pl.lit(HEADLINE_KIND))
        .otherwise(pl.lit("memory")),
        limit=pl.col("memory_tier_gb").cast(pl.Float64),
        system_gpus=pl.lit(1, dtype=pl.Int32),
        runner_up_system_gpus=pl.when(pl.col("runner_up_gpu_id").is_not_null())
        .then(pl.lit(1, dtype=pl.Int32))
        .otherwise(None),
    )
    buy = perf.filter(pl.col("system_gpus") == 1).select(
        "gpu_id",
        "workload",
        "market",
        "total_cost_usd",
        "price_method",
        "price_day",
        "relative_performance",
    )
    rent = cloud_perf.select(
        "gpu_id",
        "workload",
        "provider",
        "price_type",
        "instance_type",
        "region",
        "offer_day",
        *(c for c in ("pricing", "listings", "locations", "reliability") if c in cloud_perf),
        cloud_relative="relative_performance",
    )
    out = rec.join(buy, on=["gpu_id", "workload", "market"], how="left").join(
        rent, on=["gpu_id", "workload", "provider", "price_type", "instance_type"], how="left"
    )
    keys = ["provider", "instance_type", "price_type", "gpu_id"]
    counts = offers.group_by(keys).agg(pl.col("gpu_count").max())
    out = out.join(counts, on=keys, how="left").with_columns(
        relative_performance=pl.coalesce("relative_performance", "cloud_relative")
    )
    return _conform(out)


def cheapest(
    perf: pl.DataFrame, cloud_perf: pl.DataFrame, offers: pl.DataFrame, hours: float
) -> pl.DataFrame:
    """Per workload and option, the cheapest system to buy or instance to rent for `hours`.

    What an empty budget verdict names: "nothing fits; the cheapest costs ...".
    """
    buy = (
        perf.filter(pl.col("market").is_in(list(BUY_MARKETS)))
        .with_columns(option=pl.col("market").replace_strict(BUY_MARKETS))
        .sort("total_cost_usd", "gpu_id")
        .group_by("workload", "option", maintain_order=True)
        .first()
        .select(
            "workload",
            "option",
            cheapest_gpu_id=pl.format("{}× {}", "system_gpus", "gpu_id"),
            cheapest_cost_usd="total_cost_usd",
        )
    )
    rent = (
        _with_gpu_count(cloud_perf.filter(pl.col("price_type").is_in(list(RENT_TYPES))), offers)
        .with_columns(
            option=pl.col("price_type").replace_strict(RENT_TYPES),
            _cost=pl.col("usd_per_gpu_hour") * pl.col("gpu_count") * hours,
        )
        .sort("_cost", "gpu_id")
        .group_by("workload", "option", maintain_order=True)
        .first()
        .select("workload", "option", cheapest_gpu_id="gpu_id", cheapest_cost_usd="_cost")
    )
    return pl.concat([buy, rent])


def _with_gpu_count(cloud_perf: pl.DataFrame, offers: pl.DataFrame) -> pl.DataFrame:
    """cloud_perf_per_dollar rows with the GPUs in their instance (`gpu_count`, default 1)."""
    keys = ["provider", "instance_type", "region", "price_type", "gpu_id"]
    counts = offers.group_by(keys).agg(pl.col("gpu_count").max())
    return cloud_perf.join(counts, on=keys, how="left").with_columns(
        pl.col("gpu_count").fill_null(1).cast(pl.Int32)
    )


def _missing_rows(
    found: pl.DataFrame,
    workloads: Sequence[str],
    kind: str,
    limits: tuple[float, ...],
    cheapest_rows: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """An empty verdict (gpu_id NULL) for every group without a candidate."""
    grid = (
        pl.DataFrame({"workload": list(workloads)})
        .join(pl.DataFrame({"limit": [float(x) for x in limits]}), how="cross")
        .join(pl.DataFrame({"option": list(OPTIONS)}), how="cross")
        .with_columns(kind=pl.lit(kind))
    )
    missing = grid.join(found.select(_GROUP), on=_GROUP, how="anti")
    if cheapest_rows is not None:
        missing = missing.join(cheapest_rows, on=["workload", "option"], how="left")
    return _conform(missing)


def _why(hours: float, host_usd: float, windows: dict) -> pl.Expr:
    """One line of why for each verdict (or why there is none)."""
    buy = pl.col("option").str.starts_with("buy")
    system = pl.format("{}× {}", pl.col("fastest_system_gpus"), pl.col("fastest_gpu_id"))
    runner = (
        pl.when(pl.col("runner_up_gpu_id").is_null())
        .then(pl.lit("the only candidate"))
        .when(buy & (pl.col("kind") == "budget"))
        .then(
            pl.format("next: {}× {}", pl.col("runner_up_system_gpus"), pl.col("runner_up_gpu_id"))
        )
        .otherwise(pl.format("next: {}", pl.col("runner_up_gpu_id")))
    )
    fastest_differs = pl.col("fastest_gpu_id").is_not_null() & (
        (pl.col("fastest_gpu_id") != pl.col("gpu_id"))
        | (pl.col("fastest_system_gpus").fill_null(1) != pl.col("system_gpus").fill_null(1))
    )
    fastest = (
        pl.when(fastest_differs & buy)
        .then(pl.format("; most performance that fits: {}", system))
        .when(fastest_differs)
        .then(pl.format("; fastest that fits: {}", pl.col("fastest_gpu_id")))
        .otherwise(pl.lit(""))
    )
    budget = pl.col("limit").map_elements(lambda v: f"${v:,.0f}", return_dtype=pl.Utf8)
    pool = (
        pl.when(pl.col("kind") == HEADLINE_KIND)
        .then(pl.format("best of {} GPUs", pl.col("n_candidates")))
        .when(pl.col("kind") == "memory")
        .then(pl.format("best of {} GPUs with ≥ {} GB", pl.col("n_candidates"), _gb()))
        .when(buy)
        .then(pl.format("best of {} systems costing ≤ {}", pl.col("n_candidates"), budget))
        .otherwise(
            pl.format(
                "best of {} GPUs rentable for {} h within {}",
                pl.col("n_candidates"),
                pl.lit(f"{hours:,.0f}"),
                budget,
            )
        )
    )
    none = (
        pl.when(pl.col("kind") == HEADLINE_KIND)
        .then(pl.lit("no eligible GPU has a price for this option"))
        .when(pl.col("kind") == "memory")
        .then(pl.format("no GPU with ≥ {} GB has a price for this option", _gb()))
        # No candidate at all (a first night whose cloud runs failed, or no price yet):
        # say so rather than leave the reason empty.
        .when(pl.col("cheapest_gpu_id").is_null() & buy)
        .then(pl.lit("no GPU has a price for this option yet"))
        .when(pl.col("cheapest_gpu_id").is_null())
        .then(pl.lit("no cloud offer is priced for this option yet"))
        .when(buy)
        .then(
            pl.format(
                "nothing fits: a 1-GPU host alone costs ${}; the cheapest system, {}, costs {}",
                pl.lit(f"{host_usd:,.0f}"),
                pl.col("cheapest_gpu_id"),
                _dollars("cheapest_cost_usd"),
            )
        )
        .otherwise(
            pl.format(
                "nothing fits: the cheapest instance, {}, costs {} for {} h",
                pl.col("cheapest_gpu_id"),
                _dollars("cheapest_cost_usd"),
                pl.lit(f"{hours:,.0f}"),
            )
        )
    )
    none = _stale_none(none, windows)
    tie = (
        pl.when(pl.col("tie_gpu_ids").is_not_null())
        .then(
            pl.format(
                "; P(best) under 50 % and overlapping intervals: tied with {}",
                pl.col("tie_gpu_ids").str.splitn(", ", 2).struct.field("field_1"),
            )
        )
        .otherwise(pl.lit(""))
    )
    return (
        pl.when(pl.col("gpu_id").is_null())
        .then(none)
        .otherwise(pl.format("{}; {}{}{}", pool, runner, fastest, tie))
    )


def _stale_none(none: pl.Expr, windows: dict) -> pl.Expr:
    """An empty rent cell whose only candidates are stale offers says so.

    No fresh offer at all: "no offer observed within its freshness window"; fresh offers
    that do not fit a budget keep "nothing fits" and add the stale ones left out.
    """
    rent = pl.col("option").str.starts_with("rent")
    stale = rent & (pl.col("stale_offers").fill_null(0) > 0)
    window = pl.col("option").replace_strict(
        {o: window_text(windows, o) for o in RENT_TYPES.values()}, default="", return_dtype=pl.Utf8
    )
    left_out = pl.format(
        "{} older offer(s) left out, the newest {} days old",
        pl.col("stale_offers"),
        pl.col("stale_newest_days"),
    )
    fresh_too_dear = (pl.col("kind") == "budget") & pl.col("cheapest_gpu_id").is_not_null()
    return (
        pl.when(stale & ~fresh_too_dear)
        .then(pl.format("no offer observed within its freshness window ({}): {}", window, left_out))
        .when(stale)
        .then(pl.format("{}; outside the freshness window ({}): {}", none, window, left_out))
        .otherwise(none)
    )


def _dollars(column: str) -> pl.Expr:
    return pl.col(column).map_elements(lambda v: f"${v:,.0f}", return_dtype=pl.Utf8)


def _gb() -> pl.Expr:
    return pl.col("limit").cast(pl.Int64).cast(pl.Utf8)


def verdicts(
    perf: pl.DataFrame,
    cloud_perf: pl.DataFrame,
    recommendations: pl.DataFrame,
    offers: pl.DataFrame,
    buy_replicates: pl.DataFrame,
    performance_replicates: pl.DataFrame,
    parameters: dict,
    run_date: dt.date,
    workloads: Sequence[str] = WORKLOADS,
    budgets: tuple[float, ...] = BUDGETS_USD,
    basis: pl.DataFrame | None = None,
    gpus: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per workload x (budget | headline | memory tier) x option, with why.

    `kind` is `budget` (`limit` in USD of total cost), `memory` (`limit` in GB, at least)
    or `headline` (limit 0: any memory; from recommendations of a 0 GB tier); `gpu_id` is
    NULL where nothing fits. `age_days` is the age on `run_date` of the price behind the
    verdict (the last observation for buying, the offer for renting). `basis` (the run's
    evidence_basis) limits the candidates to eligible GPU x workloads and gives each pick
    its basis and caveat; `recommendations` must already be limited the same way (and to
    fresh offers). Only fresh cloud offers compete; `gpus` (gpu_id, memory_gb) lets an
    empty memory cell say which stale offers were left out.
    """
    hours = rental_hours(parameters)
    tiers = tuple(float(t) for t in parameters.get("memory_tiers_gb", (8, 12, 16, 24, 48, 80)))
    eligible = None if basis is None else basis.filter(pl.col("eligible"))
    perf, cloud_perf = keep_eligible(perf, eligible), keep_eligible(cloud_perf, eligible)
    stale = stale_candidates(
        _with_gpu_count(
            stale_only(cloud_perf).filter(pl.col("price_type").is_in(list(RENT_TYPES))), offers
        ).with_columns(option=pl.col("price_type").replace_strict(RENT_TYPES)),
        gpus,
        hours,
        budgets,
        tiers,
    )
    cloud_perf = fresh_only(cloud_perf)
    found = pl.concat(
        [
            budget_buy(perf, buy_replicates, budgets),
            budget_rent(cloud_perf, offers, performance_replicates, hours, budgets),
            memory_verdicts(recommendations, perf, cloud_perf, offers),
        ]
    ).filter(pl.col("workload").is_in(list(workloads)))
    rows = pl.concat(
        [
            found,
            _missing_rows(
                found.filter(pl.col("kind") == "budget"),
                workloads,
                "budget",
                budgets,
                cheapest(perf, cloud_perf, offers, hours),
            ),
            _missing_rows(found.filter(pl.col("kind") == "memory"), workloads, "memory", tiers),
            _missing_rows(
                found.filter(pl.col("kind") == HEADLINE_KIND),
                workloads,
                HEADLINE_KIND,
                (HEADLINE_LIMIT,),
            ),
        ]
    )
    rows = _with_basis(rows, basis).join(
        stale, on=["workload", "kind", "limit", "option"], how="left"
    )
    host = float(parameters["host_cost_usd"].get("1", parameters["host_cost_usd"].get(1, 0)))
    host *= float(parameters.get("host_cost_scale", 1.0))
    windows = parameters.get("cloud_freshness_days") or {}
    return in_order(
        rows.with_columns(
            run_date=pl.lit(run_date),
            age_days=(pl.lit(run_date) - pl.coalesce("price_day", "offer_day")).dt.total_days(),
            unit=pl.when(pl.col("option").str.starts_with("buy"))
            .then(pl.lit(UNITS["buy"]))
            .otherwise(pl.lit(UNITS["rent"])),
            why=_why(hours, host, windows),
            offer_caveat=offer_caveat(),
        ).select(COLUMNS),
        workloads,
    )


_KIND_ORDER = {"budget": 0, HEADLINE_KIND: 1, "memory": 2}


def _with_basis(rows: pl.DataFrame, basis: pl.DataFrame | None) -> pl.DataFrame:
    """The pick's `basis` and `caveat` (NULL where nothing fits or no basis is known)."""
    if basis is None:
        return rows.with_columns(
            basis=pl.lit(None, dtype=pl.Utf8), caveat=pl.lit(None, dtype=pl.Utf8)
        )
    return rows.join(
        basis.select("gpu_id", "workload", "basis", "caveat"),
        on=["gpu_id", "workload"],
        how="left",
    )


def in_order(frame: pl.DataFrame, workloads: Sequence[str] = WORKLOADS) -> pl.DataFrame:
    """Verdict rows in the order the site shows them: workload, kind, limit, option.

    The order of `workloads` and OPTIONS, not the alphabet; the verdicts table returns
    its rows in no fixed order, so a reader sorts them with this.
    """
    order = {w: i for i, w in enumerate(workloads)}
    return (
        frame.with_columns(
            _w=pl.col("workload").replace_strict(order, return_dtype=pl.Int32),
            _k=pl.col("kind").replace_strict(_KIND_ORDER, default=9, return_dtype=pl.Int32),
            _o=pl.col("option").replace_strict(
                {o: i for i, o in enumerate(OPTIONS)}, return_dtype=pl.Int32
            ),
        )
        .sort("_w", "_k", "limit", "_o")
        .drop("_w", "_k", "_o")
    )


def verdict_problems(
    found: pl.DataFrame,
    workloads: Sequence[str],
    memory_tiers_gb: Sequence[float],
    budgets: Sequence[float] = BUDGETS_USD,
) -> list[str]:
    """What is wrong with a run's verdicts table (empty when nothing is).

    Every workload x (budget | headline | memory tier) x option has exactly one row; a row
    naming a GPU has a positive perf per dollar, an ordered 95 % interval around it and a
    P(best) in [0, 1], and a tie only under 50 % P(best), led by the pick. The site shows
    one cell per row, so a missing or doubled row is a hole or a contradiction on the
    front page.
    """
    expected = (
        pl.DataFrame({"workload": list(workloads)})
        .join(
            pl.concat(
                [
                    pl.DataFrame({"kind": "budget", "limit": [float(b) for b in budgets]}),
                    pl.DataFrame({"kind": "memory", "limit": [float(t) for t in memory_tiers_gb]}),
                    pl.DataFrame({"kind": HEADLINE_KIND, "limit": [HEADLINE_LIMIT]}),
                ]
            ),
            how="cross",
        )
        .join(pl.DataFrame({"option": list(OPTIONS)}), how="cross")
    )
    counts = found.group_by(_GROUP).agg(n=pl.len())
    merged = expected.join(counts, on=_GROUP, how="left")
    problems = [
        f"{w} {k} {lim:g} {o}: {'no row' if n is None else f'{n} rows'}"
        for w, k, lim, o, n in merged.filter(pl.col("n").is_null() | (pl.col("n") > 1)).rows()
    ]
    named = found.filter(pl.col("gpu_id").is_not_null())
    tolerance = 1e-9
    value, low, high = (
        pl.col("perf_per_dollar"),
        pl.col("perf_per_dollar_low"),
        pl.col("perf_per_dollar_high"),
    )
    rules = {
        "perf per dollar not positive": value.is_null() | (value <= 0),
        # an interval may be missing; one that is there must bracket the value
        "interval does not bracket the value": (
            (low > value * (1 + tolerance)) | (value > high * (1 + tolerance))
        ).fill_null(False),
        "P(best) outside [0, 1]": pl.col("p_best").is_null()
        | ~pl.col("p_best").is_between(0.0, 1.0),
        "a tie that is not led by the pick or at P(best) >= 50 %": pl.col(
            "tie_gpu_ids"
        ).is_not_null()
        & (
            (pl.col("p_best") >= TIE_MAX_P_BEST)
            | (
                pl.col("tie_gpu_ids").str.splitn(", ", 2).struct.field("field_0")
                != pl.col("gpu_id")
            )
        ),
    }
    for reason, bad in rules.items():
        problems += [
            f"{w} {k} {lim:g} {o} {g}: {reason}"
            for w, k, lim, o, g in named.filter(bad).select(*_GROUP, "gpu_id").rows()
        ]
    return problems
