"""A GPU page's price chart stays the same size however long the history (issue 26 item 8).

Pure tests on synthetic frames (no pipeline build, no rendering).
"""

import datetime as dt

import polars as pl

from reports.charts.prices import GPU_CHART_ROWS, price_history_data

CURRENT = pl.DataFrame(
    {
        "gpu_id": ["g", "g"],
        "market": ["new", "used"],
        "price_usd": [1000.0, 700.0],
        "price_low": [950.0, 650.0],
        "price_high": [1050.0, 750.0],
        "price_method": ["observed", "observed"],
        "age_days": [0, 0],
    }
)


def daily_history(years: float, end: dt.date = dt.date(2026, 9, 30)) -> pl.DataFrame:
    """A price every day in both markets for `years` before `end`."""
    days = pl.date_range(end - dt.timedelta(days=round(365.25 * years)), end, eager=True)
    frame = pl.DataFrame({"day": days}).join(
        pl.DataFrame({"market": ["new", "used"], "base": [1000.0, 700.0]}), how="cross"
    )
    return frame.select(
        gpu_id=pl.lit("g"),
        market="market",
        day="day",
        price_usd=pl.col("base") + (pl.col("day").dt.ordinal_day() % 30).cast(pl.Float64),
        n_observations=pl.lit(34),
    )


def history_rows(years: float) -> pl.DataFrame:
    data = price_history_data(
        daily_history(years), CURRENT, ["g"], dt.date(2026, 9, 30), GPU_CHART_ROWS
    )
    return data.filter(pl.col("kind") == "history")


def test_three_years_of_daily_prices_stay_weekly():
    rows = history_rows(3)
    assert set(rows["step"]) == {"1w"}
    assert rows.height <= GPU_CHART_ROWS


def test_ten_and_twenty_years_are_drawn_monthly_or_coarser_within_the_budget():
    ten, twenty = history_rows(10), history_rows(20)
    assert set(ten["step"]) == {"1mo"}
    assert ten.height <= GPU_CHART_ROWS
    assert set(twenty["step"]) == {"3mo"}
    assert twenty.height <= GPU_CHART_ROWS
    # The whole history is still drawn: the first bin is the first month of prices.
    assert ten["day"].min() == dt.date(2016, 9, 1)


def test_the_front_page_budget_is_unchanged_by_default():
    # Without a budget the finest step under MAX_CHART_ROWS: ten years stay weekly.
    data = price_history_data(daily_history(10), CURRENT, ["g"], dt.date(2026, 9, 30))
    assert set(data.filter(pl.col("kind") == "history")["step"]) == {"1w"}
