"""Renting charts: cloud prices by provider, and the cumulative cost of buying versus renting."""

import altair as alt
import polars as pl

from model.resale import DAYS_PER_YEAR, break_even_day, net_of_fees
from reports.charts.common import BUY_MARKETS, legend_pick, meta, picked, wrap_title, zoom


def cloud_prices_chart(
    cloud_perf: pl.DataFrame, gpu_ids: list[str], narrow: bool = False
) -> alt.TopLevelMixin:
    """Cheapest offer per provider and price type, USD per GPU-hour, for `gpu_ids`."""
    data = (
        cloud_perf.filter(
            pl.col("gpu_id").is_in(gpu_ids) & (pl.col("workload") == "training_16bit")
        )
        .select(
            "gpu_id", "provider", "price_type", "usd_per_gpu_hour", "instance_type", "offer_day"
        )
        .with_columns(pl.col("offer_day").cast(pl.Utf8))
    )
    order = (
        data.group_by("gpu_id")
        .agg(pl.col("usd_per_gpu_hour").min())
        .sort("usd_per_gpu_hour")["gpu_id"]
        .to_list()
    )
    pick = legend_pick("provider")
    chart = (
        alt.Chart(data, width=190 if narrow else 640, height=alt.Step(22))
        .mark_point(size=70, filled=True)
        .encode(
            y=alt.Y("gpu_id:N", sort=order, title=None),
            x=alt.X(
                "usd_per_gpu_hour:Q",
                scale=alt.Scale(type="log", nice=False),
                title="USD per GPU-hour (log)",
            ),
            color=alt.Color(
                "provider:N", title="provider", legend=alt.Legend(columns=1 if narrow else 4)
            ),
            shape=alt.Shape("price_type:N", title="price type"),
            opacity=picked(pick, 0.85),
            tooltip=[
                "gpu_id",
                "provider",
                "price_type",
                "instance_type",
                alt.Tooltip("usd_per_gpu_hour:Q", format="$.3f"),
                "offer_day",
            ],
        )
        .add_params(pick, zoom(encodings=("x",)))
        .properties(
            title=wrap_title("Cloud prices: cheapest offer per provider and price type", narrow)
        )
    )
    return meta(chart, "cloud_prices")


def market_prices(prices: pl.DataFrame) -> pl.DataFrame:
    """Per GPU the price a buyer pays at the as-of date: gpu_id, market, market_price_usd.

    New where the GPU is priced new, else used (BUY_MARKETS' order).
    """
    order = {m: i for i, m in enumerate(BUY_MARKETS)}
    return (
        prices.filter(pl.col("market").is_in(BUY_MARKETS))
        .sort(pl.col("market").replace_strict(order, return_dtype=pl.Int8))
        .group_by("gpu_id", maintain_order=True)
        .first()
        .select("gpu_id", "market", market_price_usd="price_usd")
    )


def at_market_price(rows: pl.DataFrame, prices: pl.DataFrame, horizon: float) -> pl.DataFrame:
    """cloud_vs_buy rows bought at the GPU's new (else used) price, break-even day recomputed.

    The model's rows buy at its ranking price (`buy_market`, 'mean' where new and used
    both exist); the host's share (buy_cost_usd - buy_price_usd), the electricity and
    the resale value (the GPU's used value, whichever market it was bought in) stay.
    """
    out = rows.join(market_prices(prices), on="gpu_id").with_columns(
        buy_cost_usd=pl.col("buy_cost_usd") - pl.col("buy_price_usd") + pl.col("market_price_usd"),
        buy_market=pl.col("market"),
        buy_price_usd=pl.col("market_price_usd"),
    )
    days = break_even_day(
        out["buy_cost_usd"].to_numpy(),
        out["used_value_usd"].fill_null(0.0).to_numpy(),
        out["resale_depreciation"].fill_null(0.0).to_numpy(),
        out["cloud_usd_per_day"].to_numpy(),
        out["own_usd_per_day"].to_numpy(),
        horizon,
    )
    return out.with_columns(break_even_days=pl.Series(days, dtype=pl.Float64).fill_nan(None))


def buy_vs_rent_data(
    cloud: pl.DataFrame,
    prices: pl.DataFrame,
    gpu_ids: list[str],
    utilizations: tuple[float, ...],
    horizon: float,
) -> pl.DataFrame:
    """Cumulative cost lines (0 to `horizon` days) of buying and renting, and break-evens.

    Per GPU the cheapest on-demand offer (cloud_vs_buy rows of the workstation platform),
    bought at its new (else used) price from `prices` (current_prices; at_market_price).
    Owning on day d is the purchase plus electricity less what the GPU sells for then.
    """
    rows = (
        cloud.filter(
            pl.col("gpu_id").is_in(gpu_ids)
            & (pl.col("price_type") == "on_demand")
            & pl.col("utilization").is_in(list(utilizations))
        )
        .sort("usd_per_gpu_hour", "provider")
        .group_by("gpu_id", "utilization", maintain_order=True)
        .first()
        .pipe(at_market_price, prices, horizon)
        .with_columns(
            use=pl.format("{} % use", (pl.col("utilization") * 100).round(0).cast(pl.Int64)),
            panel=pl.format(
                "{}: buy {} ${}, rent ${}/h ({})",
                "gpu_id",
                "buy_market",
                pl.col("buy_cost_usd").round(0).cast(pl.Int64),
                pl.col("usd_per_gpu_hour").round(2),
                "provider",
            ),
        )
    )
    # Owning's line bends: selling after d days returns the resale value at that age
    # (model.resale.break_even_day), so it is drawn through several days, not two.
    days = [horizon * k / 24 for k in range(25)]
    resale = net_of_fees(
        pl.col("used_value_usd").fill_null(0.0)
        * (pl.col("resale_depreciation").fill_null(0.0) * pl.col("day") / DAYS_PER_YEAR).exp()
    )
    lines = [
        rows.join(pl.DataFrame({"day": days}), how="cross").select(
            "gpu_id",
            "panel",
            "use",
            "day",
            usd=pl.col("buy_cost_usd") + pl.col("own_usd_per_day") * pl.col("day") - resale,
            way=pl.lit("buy"),
        )
    ]
    for day in (0.0, horizon):
        lines.append(
            rows.select(
                "gpu_id",
                "panel",
                "use",
                day=pl.lit(day),
                usd=pl.col("cloud_usd_per_day") * day,
                way=pl.lit("rent"),
            )
        )
    even = rows.filter(pl.col("break_even_days") <= horizon).select(
        "gpu_id",
        "panel",
        "use",
        day="break_even_days",
        usd=pl.col("cloud_usd_per_day") * pl.col("break_even_days"),
        way=pl.lit("break-even"),
    )
    return pl.concat([*lines, even], how="vertical_relaxed")


def buy_vs_rent_chart(
    cloud: pl.DataFrame,
    prices: pl.DataFrame,
    gpu_ids: list[str],
    horizon: float,
    utilizations: tuple[float, ...] = (0.15, 0.35, 0.60),
    narrow: bool = False,
) -> alt.TopLevelMixin:
    """Cumulative cost of buying vs renting over time, small multiples per GPU."""
    data = buy_vs_rent_data(cloud, prices, gpu_ids, utilizations, horizon)
    pick = legend_pick("use")
    width, columns = (280, 1) if narrow else (300, 2)
    # One chart per GPU (not a facet): a GPU with no break-even has no dots layer at all,
    # where a facet cell with an empty layer made Vega warn of an infinite extent.
    panels = []
    for (panel,), part in sorted(data.partition_by("panel", as_dict=True).items()):
        chart = _buy_vs_rent_panel(part, horizon, pick, len(panels))
        panels.append(
            chart.properties(
                width=width,
                height=170,
                title=alt.TitleParams(panel, fontSize=12, fontWeight="normal", anchor="middle"),
            )
        )
    chart = alt.concat(*panels, columns=columns, spacing=18)
    return meta(
        chart.properties(title=wrap_title("Buy or rent: cumulative cost over time", narrow)),
        "buy_vs_rent",
    )


def _buy_vs_rent_panel(
    part: pl.DataFrame, horizon: float, pick: alt.Parameter, index: int
) -> alt.LayerChart:
    """One GPU's lines (buy, rent per utilisation) and its break-even dots, if any."""
    base = alt.Chart(part)
    x = alt.X("day:Q", title="days", scale=alt.Scale(domain=[0, horizon]))
    y = alt.Y("usd:Q", title="cumulative USD")
    color = alt.Color("use:N", title="utilisation")
    lines = (
        base.transform_filter(alt.datum.way != "break-even")
        .mark_line()
        .encode(
            x=x,
            y=y,
            color=color,
            strokeDash=alt.StrokeDash(
                "way:N", scale=alt.Scale(domain=["buy", "rent"], range=[[1, 0], [5, 3]])
            ),
            detail="way:N",
            opacity=picked(pick, 1),
            tooltip=["gpu_id", "use", "way"],
        )
        .add_params(zoom(f"zoom{index}", encodings=("x",)))
    )
    if index == 0:  # one legend selection, shared by the panels
        lines = lines.add_params(pick)
    if part.filter(pl.col("way") == "break-even").is_empty():
        return alt.layer(lines)
    dots = (
        base.transform_filter(alt.datum.way == "break-even")
        .mark_point(filled=True, size=50)
        .encode(
            x=x,
            y=y,
            color=color,
            opacity=picked(pick, 1),
            tooltip=[
                "gpu_id",
                "use",
                alt.Tooltip("day:Q", format=".0f", title="break-even day"),
                alt.Tooltip("usd:Q", format="$,.0f", title="cost by then"),
            ],
        )
    )
    return alt.layer(lines, dots)
