"""Machines sold whole are carried by their own segment, never by a GPU board index.

A Mac Studio's price is Apple's list price for a whole computer; the GPU board market can
rise 35 % a year while that list price stays put (model/market_index.py, "system").
"""

import datetime as dt

import numpy as np
import polars as pl
import pytest

from model.market_index import (
    fit_for,
    fit_indexes,
    index_change,
    index_key_expr,
    index_pairs,
    market_group_expr,
    resolve,
)
from model.nowcast import monthly_series
from model.nowcast_backtest import prices_today
from model.parameters import ModelParameters

PARAMS = ModelParameters()
START = dt.date(2024, 1, 1)
AS_OF = dt.date(2025, 12, 31)
BOARDS = [f"b{i}" for i in range(6)]
GPUS = pl.DataFrame(
    {
        "gpu_id": [*BOARDS, "mac96", "spark", "mac256"],
        "name": [f"GeForce RTX {i}" for i in range(6)]
        + [
            "Mac Studio M3 Ultra 96 GB (60-core GPU)",
            "DGX Spark (GB10, 128 GB)",
            "Mac Studio M3 Ultra 256 GB (60-core GPU)",
        ],
    }
)
MAC_DAY = dt.date(2024, 3, 5)


def daily(trend: float = 0.35) -> pl.DataFrame:
    """Six boards priced weekly on a rising market; systems at a few list prices."""
    rng = np.random.default_rng(3)
    rows = []
    for i, gpu in enumerate(BOARDS):
        for week in range((AS_OF - START).days // 7 + 1):
            day = START + dt.timedelta(weeks=week)
            years = (day - START).days / 365.25
            noise = 0.01 * rng.normal()
            rows.append((day, gpu, "new", float((500 + 100 * i) * np.exp(trend * years + noise))))
    rows += [
        (MAC_DAY, "mac96", "new", 3999.0),
        (dt.date(2024, 10, 15), "spark", "new", 3999.0),
        (dt.date(2025, 2, 23), "spark", "new", 4699.0),
        (dt.date(2024, 3, 5), "mac256", "new", 5599.0),
        (dt.date(2025, 3, 5), "mac256", "new", 5999.0),
    ]
    return pl.DataFrame(rows, schema=["day", "gpu_id", "market", "price_usd"], orient="row")


def row_of(frame: pl.DataFrame, gpu_id: str) -> dict:
    return frame.filter(pl.col("gpu_id") == gpu_id, pl.col("market") == "new").row(0, named=True)


def test_machines_sold_whole_are_their_own_market_group():
    groups = GPUS.select(group=market_group_expr())["group"].to_list()
    assert groups == ["consumer"] * 6 + ["system"] * 3
    keys = pl.DataFrame({"g": ["system", "system", "workstation"], "m": ["new", "used", "used"]})
    assert keys.select(k=index_key_expr(pl.col("g"), pl.col("m")))["k"].to_list() == [
        "system new",
        "system used",
        "professional used",
    ]


def test_a_system_price_is_carried_flat_not_by_the_board_index():
    prices = prices_today(daily(0.35), GPUS, PARAMS, AS_OF, "market_index")
    mac = row_of(prices, "mac96")
    assert mac["price_method"] == "nowcast"
    # The boards rose ~60 % since March 2024; the Mac's list price is carried flat.
    assert mac["price_usd"] == pytest.approx(3999.0, rel=1e-6)
    assert "system new (flat)" in mac["detail"]
    assert "consumer new index" not in mac["detail"] and "all new" not in mac["detail"]
    # Two systems' list changes (+17.5 % in 4 months, +7 % in 12) set a wide interval.
    assert mac["price_low"] < 3999.0 * 0.7 and mac["price_high"] > 3999.0 * 1.4


def test_the_flat_carry_widens_with_the_gap_and_is_no_calmer_than_the_board_market():
    fits = fit_indexes(monthly_series(daily(0.35)), GPUS)
    flat = resolve(fits, "system new")
    assert flat is not None and flat.flat and flat.key == "system new (flat)"
    board = fits["all new"]
    assert flat.tau**2 >= board.tau**2 - 1e-12
    own = np.mean([np.log(4699 / 3999) ** 2 / 4, np.log(5999 / 5599) ** 2 / 12])
    assert flat.tau**2 >= own - 1e-12
    m0 = np.array([(2024 - 1970) * 12 + 2, (2024 - 1970) * 12 + 2])
    change, var, _ = index_change(flat, m0, m0 + np.array([6, 24]))
    assert change.tolist() == [0.0, 0.0]
    assert var[1] == pytest.approx(4 * var[0])
    # A used system price (none observed) takes the systems' segment, never the boards'.
    assert resolve(fits, "system used") is flat
    # The pooled board index holds no system pairs (only the consumer boards trade here).
    assert fits["all new"].n_pairs == fits["consumer new"].n_pairs


def test_a_system_never_falls_back_to_the_board_pool():
    # With no repeat system prices at all there is no system index: the caller's random
    # walk carries it (resolve gives none), not the board index.
    one_price = daily().filter(~pl.col("gpu_id").is_in(["spark", "mac256"]))
    fits = fit_indexes(monthly_series(one_price), GPUS)
    assert resolve(fits, "system new") is None
    assert resolve(fits, "consumer new") is fits["consumer new"]
    pairs = index_pairs(monthly_series(one_price), GPUS)
    assert fit_for(pairs, "system new") is None


def test_enough_system_repeat_prices_give_the_systems_their_own_index():
    # Four systems re-listed every month on a falling market (-20 %/yr) while the boards
    # rise: the systems' index follows the systems.
    rows = []
    gpus = GPUS.vstack(pl.DataFrame({"gpu_id": ["ryzen"], "name": ["Ryzen AI Max+ 395 128 GB"]}))
    for k, gpu in enumerate(["mac96", "spark", "mac256", "ryzen"]):
        for month in range(24):
            day = dt.date(2024 + month // 12, month % 12 + 1, 10)
            rows.append((day, gpu, "new", float((2000 + 1000 * k) * np.exp(-0.2 * month / 12))))
    frame = pl.concat(
        [
            daily(0.35).filter(pl.col("gpu_id").is_in(BOARDS)),
            pl.DataFrame(rows, orient="row", schema=["day", "gpu_id", "market", "price_usd"]),
        ]  # fmt: skip
    )
    fits = fit_indexes(monthly_series(frame), gpus)
    system = resolve(fits, "system new")
    assert system is not None and not system.flat and system.key == "system new"
    year = np.array([(2024 - 1970) * 12]), np.array([(2024 - 1970) * 12 + 12])
    assert index_change(system, *year)[0][0] == pytest.approx(-0.2, abs=0.02)
    assert index_change(fits["consumer new"], *year)[0][0] > 0.3
