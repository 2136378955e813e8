"""What a price rests on, shown beside it: "$2,400 (1 sale, eBay UK, GBP→USD)".

Every price on the site (GPU pages, the front page's tables, the verdict cards) names how
many observations it rests on, where they were made and in which currency (converted to
USD with sources/data/prices/fx_rates.csv); the facts come from current_prices
(`n_observations`, `sources`, `source_currency`) and sources/price_origins.py. The
"GPUs without a price" section lists what market consistency dropped, and why.
"""

import polars as pl

from reports.content.blocks import Cell, Table, money
from sources.price_origins import origin, split_sources


def _plural(unit: str, n: int) -> str:
    if n == 1:
        return unit
    return unit[:-1] + "ies" if unit.endswith("y") and not unit.endswith("ey") else unit + "s"


def evidence_label(n: int | None, sources: str | None, currency: str | None = None) -> str:
    """'1 sale, eBay UK, GBP→USD': count and unit, where, and the currency conversion."""
    names = split_sources(sources)
    origins = [origin(s) for s in names]
    units = {o.unit for o in origins if o is not None}
    count = 1 if n is None else int(n)
    unit = units.pop() if len(units) == 1 else "observation"
    where = " + ".join(
        dict.fromkeys(o.label if o is not None else s for o, s in zip(origins, names, strict=True))
    )
    found = [c for c in (currency or "").split(",") if c] or sorted(
        {o.currency for o in origins if o is not None}
    )
    money_in = ", ".join(c if c == "USD" else f"{c}→USD" for c in found) or "currency unknown"
    return f"{count} {_plural(unit, count)}, {where or 'source unknown'}, {money_in}"


def with_price_evidence(frame: pl.DataFrame, prices: pl.DataFrame) -> pl.DataFrame:
    """`frame` (gpu_id, market) with `price_evidence` from the run's current_prices."""
    if frame.is_empty() or "market" not in frame.columns:
        return frame.with_columns(price_evidence=pl.lit(None, dtype=pl.Utf8))
    currency = (
        pl.col("source_currency")
        if "source_currency" in prices.columns
        else pl.lit(None, dtype=pl.Utf8)
    )
    labels = prices.select(
        "gpu_id",
        "market",
        price_evidence=pl.struct(
            pl.col("n_observations"), pl.col("sources"), currency.alias("c")
        ).map_elements(
            lambda r: evidence_label(r["n_observations"], r["sources"], r["c"]),
            return_dtype=pl.Utf8,
        ),
    )
    return frame.drop("price_evidence", strict=False).join(
        labels, on=["gpu_id", "market"], how="left"
    )


def priced_with_evidence(price: float | None, evidence: str | None) -> str:
    """'$2,400 (1 sale, eBay UK, GBP→USD)', or the amount alone without a label."""
    return money(price) + (f" ({evidence})" if evidence else "")


def consistency_table(drops: pl.DataFrame) -> Table:
    """The prices market consistency left out (price_consistency), with the reason."""
    rows = [
        (
            r["gpu_id"],
            r["market"],
            money(r["price_usd"]),
            f"{r['price_method']}, {r['price_day']} ({r['age_days']} d)",
            r["reason"],
        )
        for r in drops.sort("gpu_id", "market").iter_rows(named=True)
    ]
    return Table(
        ("GPU", "market", "price left out", "method, last seen", "why"),
        [tuple(Cell(str(x)) for x in row) for row in rows],
        title="Prices left out by market consistency",
        empty="No price was left out by market consistency.",
    )


def unpriced_reasons(
    gpu_ids: list[str],
    prices: pl.DataFrame,
    drops: pl.DataFrame,
    history: pl.DataFrame,
    max_age_days: int,
) -> Table:
    """One row per GPU without a buy price: why (dropped, too old, never seen, no perf)."""
    dropped = drops.group_by("gpu_id").agg(pl.col("reason").unique().sort().str.join("; "))
    why_dropped = dict(dropped.iter_rows())
    last_seen = dict(history.group_by("gpu_id").agg(pl.col("day").max()).iter_rows())
    priced = set(prices["gpu_id"])
    rows = []
    for gpu_id in gpu_ids:
        if gpu_id in why_dropped:
            why = f"left out by market consistency: {why_dropped[gpu_id]}"
        elif gpu_id in priced:
            why = "priced, but no performance figure for any workload"
        elif gpu_id in last_seen:
            why = f"last observed on sale {last_seen[gpu_id]}, over {max_age_days} days ago"
        else:
            why = "never observed on sale in the bundled or fetched sources"
        rows.append((Cell(gpu_id), Cell(why)))
    return Table(
        ("GPU", "why it has no price at the as-of date"), rows, title="GPUs without a price"
    )
