"""The held-out-GPU back-test per market group, as the methodology page shows it (issue 23).

Rows of model_validation check `price_nowcast_holdout` (model/nowcast_backtest.py): per
market group x horizon band, the market index's median error and interval coverage beside
the depreciation drift and the random walk.
"""

import polars as pl

from model.nowcast import AFTER_MINING_BAND, HORIZON_BANDS
from model.nowcast_backtest import ALL_SEGMENTS, HOLDOUT_CHECK

HOLDOUT_NOTE = (
    'A stale GPU in a market that kept trading (methodology, "Prices at the as-of date: the market '
    'index"): at as-of months every 6 months each GPU x market priced that month is held '
    "out; each of its prices in the 24 months before is carried to it, by the market index "
    "refitted on every *other* GPU's prices up to the as-of month, and by the drift "
    "candidates fitted on what was known at the origin. Median absolute error of the "
    "carried price; share of the held-out prices inside the index's 80 % and 95 % "
    "intervals. *chosen* is the candidate the run's nowcasts use (lowest error over all "
    "segments, as-of months from 2023)."
)

_BANDS = [*(band for *_, band in HORIZON_BANDS), "over 24 months", "all", AFTER_MINING_BAND]
_SEGMENTS = ["consumer new", "consumer used", "workstation new", "data center new",
             "professional used", ALL_SEGMENTS]  # fmt: skip


def holdout_table(validation: pl.DataFrame) -> pl.DataFrame:
    """One row per market group x horizon band: the index beside depreciation, random walk."""
    rows = validation.filter(pl.col("check_name") == HOLDOUT_CHECK)
    schema = {"segment": pl.Utf8, "band": pl.Utf8, "index_error": pl.Float64,
              "index_cov80": pl.Float64, "index_cov95": pl.Float64,
              "depreciation_error": pl.Float64, "random_walk_error": pl.Float64,
              "n": pl.Int32, "chosen": pl.Utf8}  # fmt: skip
    if rows.is_empty():
        return pl.DataFrame(schema=schema)
    parts = pl.col("subject").str.splitn(", ", 3).struct
    long = rows.with_columns(
        candidate=parts.field("field_0"),
        segment=parts.field("field_1"),
        band=parts.field("field_2"),
        chosen=pl.col("detail").str.ends_with("chosen"),
    )
    chosen = long.filter(pl.col("chosen"))["candidate"]
    wide = long.with_columns(
        column=pl.col("candidate") + ":" + pl.col("metric"),
    ).pivot(on="column", index=["segment", "band"], values="value", aggregate_function="first")
    n = long.filter(pl.col("candidate") == "market_index", pl.col("metric") == "median_ape_pct")
    wide = wide.join(n.select("segment", "band", "n"), on=["segment", "band"], how="left")
    order = {(s, b): i * len(_BANDS) + j for i, s in enumerate(_SEGMENTS)
             for j, b in enumerate(_BANDS)}  # fmt: skip

    def col(name: str) -> pl.Expr:
        return pl.col(name) if name in wide.columns else pl.lit(None, pl.Float64)

    return (
        wide.with_columns(
            _order=pl.struct("segment", "band").map_elements(
                lambda r: order.get((r["segment"], r["band"]), len(order)),
                return_dtype=pl.Int64,
            )
        )
        .sort("_order")
        .select(
            "segment",
            "band",
            index_error=col("market_index:median_ape_pct"),
            index_cov80=col("market_index:coverage80_pct"),
            index_cov95=col("market_index:coverage95_pct"),
            depreciation_error=col("depreciation:median_ape_pct"),
            random_walk_error=col("random_walk:median_ape_pct"),
            n=pl.col("n").cast(pl.Int32),
            chosen=pl.lit(chosen[0] if chosen.len() else None, pl.Utf8),
        )
    )


HOLDOUT_COLUMNS = {
    "segment": "market group",
    "band": "horizon",
    "index_error": "index: median error %",
    "index_cov80": "index: in 80 % interval, %",
    "index_cov95": "index: in 95 % interval, %",
    "depreciation_error": "depreciation: median error %",
    "random_walk_error": "random walk: median error %",
    "n": "predictions",
    "chosen": "chosen",
}
