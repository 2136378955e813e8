"""'I already have a PC': the best card to add by its own price alone (issue 25, item 2).

The verdicts (model/verdicts.py) cost a whole system: GPU + host + electricity over the
ownership period. A reader who owns a PC pays only for the card, so here a budget is the
card's price (`current_prices.price_usd`, today's price of that market) and nothing else:
no host, no electricity, no resale. Per workload x market (new, used) x budget
(UPGRADE_BUDGETS_USD) two picks among the cards whose price is at most the budget:

- `performance`: the card with the highest relative performance (what a budget buys);
- `value`: the card with the highest relative performance per card dollar.

Performance per card dollar alone always points at the cheapest good card whatever the
budget (a $3,000 budget would be told to buy a $250 card), so the pick a budget row leads
with is the fastest card that fits, and the best value that fits stands beside it.

Candidates are the cards a PC takes: PCIe boards (platform `workstation`) of the consumer
and workstation product lines (model/product_lines.py). Data-center PCIe boards (A100 PCIe,
L40S, T4, ...) are passively cooled and need a server's forced airflow, SXM/OAM modules need
a server baseboard, and machines sold whole (DGX Spark, Mac Studio) are not cards: none is
an upgrade for a desktop. Prices are `current_prices` rows, so the market consistency rules
(model/market_consistency.py: a retired card has no new price, used never above new) have
already been applied. Only GPU x workloads eligible for a pick compete (model/eligibility.py:
weak evidence never decides), and the same bootstrap draws as everywhere (performance
log-normal within its 95 % interval, price within its own interval) give each pick its
P(best): the share of replicates in which it is still the best of what fits (fit decided by
today's point price). Under 50 % with overlapping intervals the row names the tied group
(model/ties.py), as the verdicts do.

Each pick carries the card's board power (TDP) and the power supply it needs
(`psu_watts`): system PSU >= (card TDP + PSU_REST_OF_SYSTEM_W) x PSU_HEADROOM, rounded up
to the next standard PSU size (docs/methodology.md, "I already have a PC").
"""

import datetime as dt
import math
from collections.abc import Sequence

import polars as pl

from model.cost import WORKSTATION, catalog_platforms
from model.eligibility import keep_eligible
from model.parameters import WORKLOADS
from model.product_lines import product_lines
from model.ties import tie_groups

UPGRADE_BUDGETS_USD = (300, 500, 800, 1_200, 2_000, 3_000)
UPGRADE_MARKETS = ("new", "used")
CRITERIA = ("performance", "value")
# Product lines whose PCIe boards go into a desktop (actively cooled).
DESKTOP_LINES = ("consumer", "workstation")

# The PSU rule. The rest of a desktop that feeds one GPU (CPU under load ~125-150 W, board,
# RAM, drives and fans ~75-100 W) draws about 250 W; a PSU is best run at or below ~80 % of
# its rating (efficiency peaks at 40-60 % load, and GPUs draw transient spikes above their
# TDP), hence x 1.2; then the next size sold. The rule reproduces NVIDIA's own "required
# system power" for its cards within one size (methodology).
PSU_REST_OF_SYSTEM_W = 250.0
PSU_HEADROOM = 1.2
PSU_SIZES_W = (450, 550, 650, 750, 850, 1000, 1200, 1300, 1600)

_GROUP = ["workload", "market", "budget_usd", "criterion"]
SCHEMA = {
    "run_date": pl.Date,
    "workload": pl.Utf8,
    "market": pl.Utf8,
    "budget_usd": pl.Float64,
    "criterion": pl.Utf8,
    "gpu_id": pl.Utf8,
    "price_usd": pl.Float64,
    "price_low": pl.Float64,
    "price_high": pl.Float64,
    "price_method": pl.Utf8,
    "price_day": pl.Date,
    "age_days": pl.Int32,
    "n_observations": pl.Int32,
    "relative_performance": pl.Float64,
    "relative_performance_low": pl.Float64,
    "relative_performance_high": pl.Float64,
    "method": pl.Utf8,
    "perf_per_dollar": pl.Float64,
    "perf_per_dollar_low": pl.Float64,
    "perf_per_dollar_high": pl.Float64,
    "p_best": pl.Float64,
    "tie_gpu_ids": pl.Utf8,
    "runner_up_gpu_id": pl.Utf8,
    "n_candidates": pl.Int32,
    "memory_gb": pl.Float64,
    "tdp_w": pl.Float64,
    "psu_w": pl.Int32,
    "basis": pl.Utf8,
    "caveat": pl.Utf8,
    "cheapest_gpu_id": pl.Utf8,
    "cheapest_usd": pl.Float64,
}


def psu_watts(tdp_w: float | None) -> int | None:
    """The PSU a desktop with one card of `tdp_w` needs (the module's rule); None without TDP.

    Above the largest standard size: rounded up to the next 100 W (a 1,600 W desktop PSU is
    the most a US 15 A outlet feeds; methodology).
    """
    if tdp_w is None or math.isnan(tdp_w):
        return None
    need = (tdp_w + PSU_REST_OF_SYSTEM_W) * PSU_HEADROOM
    for size in PSU_SIZES_W:
        if size >= need - 1e-9:
            return size
    return int(math.ceil(need / 100.0) * 100)


def desktop_cards(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, memory_gb, tdp_w of the cards a desktop takes (see the module doc)."""
    platforms = catalog_platforms(gpus).filter(pl.col("platform") == WORKSTATION)
    lines = product_lines(gpus).filter(pl.col("line").is_in(DESKTOP_LINES))
    return (
        gpus.select("gpu_id", "memory_gb")
        .join(platforms.select("gpu_id", "tdp_w"), on="gpu_id")
        .join(lines.select("gpu_id"), on="gpu_id")
    )


def candidates(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    eligible: pl.DataFrame | None,
    markets: Sequence[str] = UPGRADE_MARKETS,
) -> pl.DataFrame:
    """Every eligible desktop card x workload x market with a price today.

    `relative` is relative_performance (value, value_low, value_high, method); `prices`
    current_prices; `eligible` the eligible evidence_basis rows (None: every row).
    """
    perf = relative.select(
        "gpu_id",
        "workload",
        "method",
        relative_performance="value",
        relative_performance_low="value_low",
        relative_performance_high="value_high",
    )
    priced = prices.filter(pl.col("market").is_in(list(markets))).select(
        "gpu_id",
        "market",
        "price_usd",
        "price_low",
        "price_high",
        "price_method",
        "price_day",
        "age_days",
        "n_observations",
    )
    return (
        keep_eligible(perf, eligible)
        .join(priced, on="gpu_id")
        .join(desktop_cards(gpus), on="gpu_id")
        .with_columns(perf_per_dollar=pl.col("relative_performance") / pl.col("price_usd"))
    )


def _scored(frame: pl.DataFrame) -> pl.DataFrame:
    """`score` per row: relative performance (criterion performance) or per card dollar."""
    return frame.with_columns(
        score=pl.when(pl.col("criterion") == "performance")
        .then(pl.col("relative_performance"))
        .otherwise(pl.col("perf_per_dollar"))
    )


def _fits(cards: pl.DataFrame, budgets: Sequence[float]) -> pl.DataFrame:
    """Every candidate x budget it fits (today's point price at most the budget) x criterion."""
    return (
        cards.join(pl.DataFrame({"budget_usd": [float(b) for b in budgets]}), how="cross")
        .filter(pl.col("price_usd") <= pl.col("budget_usd"))
        .join(pl.DataFrame({"criterion": list(CRITERIA)}), how="cross")
        .pipe(_scored)
    )


def _replicate_scores(fits: pl.DataFrame, replicates: pl.DataFrame) -> pl.DataFrame:
    """Each fitting candidate's score in every replicate (drawn performance and price).

    `replicates`: replicate, gpu_id, workload, market, value (drawn relative performance),
    price_usd (drawn price).
    """
    return (
        fits.select(*_GROUP, "gpu_id")
        .join(replicates, on=["gpu_id", "workload", "market"])
        .with_columns(
            score=pl.when(pl.col("criterion") == "performance")
            .then(pl.col("value"))
            .otherwise(pl.col("value") / pl.col("price_usd"))
        )
    )


def _best(fits: pl.DataFrame, draws: pl.DataFrame) -> pl.DataFrame:
    """Per group: the candidate of highest point score, its P(best), runner-up and tie group."""
    ranked = fits.sort(["score", "gpu_id"], descending=[True, False]).with_columns(
        _pos=pl.int_range(1, pl.len() + 1).over(_GROUP),
        n_candidates=pl.len().over(_GROUP).cast(pl.Int32),
    )
    wins = (
        draws.sort(["score", "gpu_id"], descending=[True, False])
        .group_by(*_GROUP, "replicate", maintain_order=True)
        .first()
        .group_by(*_GROUP, "gpu_id")
        .agg(_wins=pl.len())
    )
    n = draws.group_by(_GROUP).agg(_n=pl.col("replicate").n_unique())
    p_best = wins.join(n, on=_GROUP).select(
        *_GROUP, "gpu_id", p_best=pl.col("_wins") / pl.col("_n")
    )
    spread = draws.group_by(*_GROUP, "gpu_id").agg(
        low=pl.col("score").quantile(0.025, "linear"),
        high=pl.col("score").quantile(0.975, "linear"),
    )
    scored = (
        ranked.select(*_GROUP, "gpu_id", perf_per_dollar="score")
        .join(p_best, on=[*_GROUP, "gpu_id"], how="left")
        .join(spread, on=[*_GROUP, "gpu_id"], how="left")
        .with_columns(pl.col("p_best").fill_null(0.0))
    )
    ties = tie_groups(scored, _GROUP, ["gpu_id"]).select(*_GROUP, "tie_gpu_ids")
    runner = ranked.filter(pl.col("_pos") == 2).select(*_GROUP, runner_up_gpu_id="gpu_id")
    return (
        ranked.filter(pl.col("_pos") == 1)
        .drop("_pos")
        .join(runner, on=_GROUP, how="left")
        .join(scored.select(*_GROUP, "gpu_id", "p_best"), on=[*_GROUP, "gpu_id"], how="left")
        .join(ties, on=_GROUP, how="left")
    )


def _value_interval(draws: pl.DataFrame) -> pl.DataFrame:
    """Per candidate x workload x market: the 95 % interval of perf per card dollar."""
    return (
        draws.filter(pl.col("criterion") == "value")
        .group_by("gpu_id", "workload", "market")
        .agg(
            perf_per_dollar_low=pl.col("score").quantile(0.025, "linear"),
            perf_per_dollar_high=pl.col("score").quantile(0.975, "linear"),
        )
    )


def _empty_rows(
    found: pl.DataFrame,
    cards: pl.DataFrame,
    workloads: Sequence[str],
    markets: Sequence[str],
    budgets: Sequence[float],
) -> pl.DataFrame:
    """A row without a card for every group nothing fits, naming the cheapest candidate."""
    grid = (
        pl.DataFrame({"workload": list(workloads)})
        .join(pl.DataFrame({"market": list(markets)}), how="cross")
        .join(pl.DataFrame({"budget_usd": [float(b) for b in budgets]}), how="cross")
        .join(pl.DataFrame({"criterion": list(CRITERIA)}), how="cross")
    )
    cheapest = (
        cards.sort("price_usd", "gpu_id")
        .group_by("workload", "market", maintain_order=True)
        .first()
        .select("workload", "market", cheapest_gpu_id="gpu_id", cheapest_usd="price_usd")
    )
    return grid.join(found.select(_GROUP), on=_GROUP, how="anti").join(
        cheapest, on=["workload", "market"], how="left"
    )


def upgrade_picks(
    relative: pl.DataFrame,
    prices: pl.DataFrame,
    gpus: pl.DataFrame,
    replicates: pl.DataFrame,
    run_date: dt.date,
    basis: pl.DataFrame | None = None,
    workloads: Sequence[str] = WORKLOADS,
    budgets: Sequence[float] = UPGRADE_BUDGETS_USD,
    markets: Sequence[str] = UPGRADE_MARKETS,
) -> pl.DataFrame:
    """One row per workload x market x budget x criterion (SCHEMA); gpu_id NULL: nothing fits.

    `replicates` are the run's draws (upgrade_replicates); `basis` the run's evidence_basis
    (its eligible rows compete; each pick gets its basis and caveat).
    """
    eligible = None if basis is None else basis.filter(pl.col("eligible"))
    cards = candidates(relative, prices, gpus, eligible, markets).filter(
        pl.col("workload").is_in(list(workloads))
    )
    fits = _fits(cards, budgets)
    draws = _replicate_scores(fits, replicates)
    found = _best(fits, draws).join(
        _value_interval(draws), on=["gpu_id", "workload", "market"], how="left"
    )
    if basis is not None:
        found = found.join(
            basis.select("gpu_id", "workload", "basis", "caveat"),
            on=["gpu_id", "workload"],
            how="left",
        )
    found = found.with_columns(psu_w=pl.col("tdp_w").map_elements(psu_watts, return_dtype=pl.Int32))
    empty = _empty_rows(found, cards, workloads, markets, budgets)
    rows = pl.concat([found, empty], how="diagonal_relaxed").with_columns(run_date=pl.lit(run_date))
    rows = rows.with_columns(
        pl.lit(None, dtype=kind).alias(c) for c, kind in SCHEMA.items() if c not in rows.columns
    )
    order = {w: i for i, w in enumerate(workloads)}
    return (
        rows.select(pl.col(c).cast(kind) for c, kind in SCHEMA.items())
        .with_columns(_w=pl.col("workload").replace_strict(order, return_dtype=pl.Int32))
        .sort("_w", "market", "budget_usd", "criterion")
        .drop("_w")
    )


def upgrade_replicates(performance: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """The draws a pick's P(best) is counted over: performance x price per replicate.

    `performance` is uncertainty.performance_replicates (replicate, gpu_id, workload,
    value); `prices` uncertainty.price_replicates (replicate, gpu_id, market, price_usd).
    The two are independent draws of the same replicate index, as in perf_per_dollar.
    """
    return performance.join(
        prices.filter(pl.col("market").is_in(list(UPGRADE_MARKETS))),
        on=["replicate", "gpu_id"],
    )
