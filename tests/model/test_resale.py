"""Resale value at the end of the ownership period and the break-even net of it (issue 23)."""

import dataclasses
import datetime as dt

import numpy as np
import polars as pl
import pytest

from model.cloud import cloud_vs_buy
from model.cost import perf_per_dollar
from model.parameters import ModelParameters
from model.resale import (
    EBAY_FEE_PER_ORDER_USD,
    break_even_day,
    break_even_utilization,
    fit_retention,
    net_of_fees,
    resale_basis,
    resale_exprs,
    retention_points,
    segment_trends,
    used_new_step,
)

DAY = dt.date(2026, 5, 20)
PARAMS = ModelParameters()
TRUE_B = -0.25  # log retention per year of age in the synthetic market


def catalog(n_gpus=12, name="GeForce RTX {i}", form_factor="pcie"):
    """Consumer cards released every 4 months from 2016, launch prices $400-$1,500."""
    return pl.DataFrame(
        {
            "gpu_id": [f"g{i}" for i in range(n_gpus)],
            "name": [name.format(i=i) for i in range(n_gpus)],
            "form_factor": [form_factor] * n_gpus,
            "release_date": [
                dt.date(2016, 1, 1) + dt.timedelta(days=122 * i) for i in range(n_gpus)
            ],
            "launch_price_usd": [400.0 + 100.0 * i for i in range(n_gpus)],
            "tdp_w": [300.0] * n_gpus,
        }
    )


def used_history(gpus, b=TRUE_B, noise=0.0, seed=0, boom=True, start=2020, months=36):
    """Monthly used prices: launch price x exp(b * age + month effect + GPU effect + noise).

    The month effect is a market rising 30 % a year (2025-26 AI demand), shared by all
    GPUs: a fit without a month effect would take it for slower depreciation.
    """
    rng = np.random.default_rng(seed)
    gpu_effect = rng.normal(0.0, noise, gpus.height)
    rows = []
    for m in range(months):
        month = dt.date(start + m // 12, m % 12 + 1, 1)
        t = (month - dt.date(1970, 1, 1)).days / 365.25
        market = 0.3 * m / 12 if boom else 0.0
        for i, gpu in enumerate(gpus.iter_rows(named=True)):
            age = t - (gpu["release_date"] - dt.date(1970, 1, 1)).days / 365.25
            if age < 0:
                continue
            log_ratio = b * age + market + gpu_effect[i] + rng.normal(0.0, noise / 2)
            price = gpu["launch_price_usd"] * np.exp(log_ratio)
            rows.append((gpu["gpu_id"], "used", month, price, t))
    return pl.DataFrame(
        rows,
        schema={
            "gpu_id": pl.Utf8,
            "market": pl.Utf8,
            "month": pl.Date,
            "price_usd": pl.Float64,
            "t": pl.Float64,
        },  # fmt: skip
        orient="row",
    )


def test_retention_fit_recovers_the_known_curve_through_a_boom():
    gpus = catalog()
    fits = fit_retention(retention_points(used_history(gpus), gpus))
    consumer = fits.filter(pl.col("segment") == "consumer").row(0, named=True)
    assert consumer["level"] == "segment"
    assert consumer["depreciation"] == pytest.approx(TRUE_B, abs=1e-9)
    assert consumer["residual_sd"] == pytest.approx(0.0, abs=1e-9)
    # The boom is in every price, so a fit without the month effect is biased: this is
    # what the month effect is for.
    points = retention_points(used_history(gpus), gpus)
    naive = np.polyfit(points["age"].to_numpy(), points["y"].to_numpy(), 1)[0]
    assert abs(naive - TRUE_B) > 0.01


def test_retention_fit_with_noise_is_close_and_its_interval_holds_the_truth():
    gpus = catalog(n_gpus=16)
    history = used_history(gpus, noise=0.15, seed=3)
    consumer = (
        fit_retention(retention_points(history, gpus))
        .filter(pl.col("segment") == "consumer")
        .row(0, named=True)
    )
    assert abs(consumer["depreciation"] - TRUE_B) < 3 * consumer["depreciation_se"] + 0.01
    assert 0.08 < consumer["residual_sd"] < 0.25  # GPU effect 0.15 and month noise 0.075
    # A GPU on the curve today sells for exp(b * years) of its value: inside the interval.
    years = 5.0
    prices = pl.DataFrame({"gpu_id": ["g3"], "market": ["used"], "price_usd": [1000.0]})
    fits = fit_retention(retention_points(history, gpus))
    row = (
        resale_basis(prices, gpus, fits, None)
        .join(prices, on=["gpu_id", "market"])
        .select(**resale_exprs(pl.col("price_usd"), years))
        .row(0, named=True)
    )
    truth = net_of_fees(1000.0 * np.exp(TRUE_B * years))
    assert row["resale_low_usd"] < truth < row["resale_high_usd"]
    assert row["resale_low_usd"] < row["resale_usd"] < row["resale_high_usd"]
    # The interval comes from the residual spread and the market's moves: a noiseless,
    # flat market gives a point; a moving market (30 %/year) widens it.
    exact = fit_retention(retention_points(used_history(gpus, boom=False), gpus))
    tight = (
        resale_basis(prices, gpus, exact, None)
        .join(prices, on=["gpu_id", "market"])
        .select(**resale_exprs(pl.col("price_usd"), years))
        .row(0, named=True)
    )
    assert tight["resale_high_usd"] - tight["resale_low_usd"] < 1e-6
    assert tight["resale_usd"] == pytest.approx(truth)
    moving = fit_retention(retention_points(used_history(gpus), gpus))
    assert moving["market_vol"][0] == pytest.approx(0.3 / 12 / np.sqrt(1 / 12), rel=0.05)


def test_a_thin_segment_takes_the_pooled_fit_shifted_by_its_price_trend():
    consumer = catalog()
    racks = pl.DataFrame(
        {
            "gpu_id": ["d0", "d1", "d2"],
            "name": ["Tesla X", "H900", "Instinct Z"],
            "form_factor": ["pcie", "sxm", "oam"],
            "release_date": [dt.date(2019, 1, 1)] * 3,
            "launch_price_usd": [None, None, None],
            "tdp_w": [300.0] * 3,
        },
        schema_overrides={"launch_price_usd": pl.Float64},
    )
    gpus = pl.concat([consumer, racks])
    points = retention_points(used_history(consumer), gpus)
    assert fit_retention(points).filter(pl.col("segment") == "data_center")["level"].to_list() == [
        "all segments"
    ]
    # New-market series: consumer cards fall 10 %/year, data-center parts 40 %/year.
    months = [dt.date(2021 + m // 12, m % 12 + 1, 1) for m in range(24)]
    rows = [
        (g, "new", month, 1000.0 * np.exp(rate * m / 12), 51.0 + m / 12)
        for g, rate in [(f"g{i}", -0.10) for i in range(5)] + [(d, -0.40) for d in racks["gpu_id"]]
        for m, month in enumerate(months)
    ]
    monthly = pl.DataFrame(
        rows, schema=["gpu_id", "market", "month", "price_usd", "t"], orient="row"
    )
    trends = segment_trends(monthly, gpus)
    assert dict(trends.select("segment", "trend").rows()) == pytest.approx(
        {"consumer": -0.10, "data_center": -0.40}
    )
    fits = fit_retention(points, trends)
    center = fits.filter(pl.col("segment") == "data_center").row(0, named=True)
    assert center["level"] == "all segments + trend offset"
    assert center["depreciation"] == pytest.approx(TRUE_B - 0.30)
    workstation = fits.filter(pl.col("segment") == "workstation").row(0, named=True)
    assert workstation["level"] == "all segments"  # no workstation series at all


def test_resale_starts_from_the_used_value_today_and_never_above_the_price_paid():
    gpus = catalog(n_gpus=4)
    fits = fit_retention(retention_points(used_history(catalog()), catalog()))
    prices = pl.DataFrame(
        {
            "gpu_id": ["g0", "g0", "g0", "g1", "g2", "g2"],
            "market": ["new", "used", "mean", "new", "new", "used"],
            "price_usd": [1000.0, 600.0, 800.0, 1000.0, 500.0, 700.0],
        }
    )
    step = np.log(0.8)
    basis = resale_basis(prices, gpus, fits, step)
    ratio = {
        (g, m): r for g, m, r in basis.select("gpu_id", "market", "resale_anchor_ratio").rows()
    }
    assert ratio[("g0", "new")] == pytest.approx(0.6)  # sold used: from $600, not $1,000
    assert ratio[("g0", "used")] == pytest.approx(1.0)
    assert ratio[("g0", "mean")] == pytest.approx(0.75)
    assert ratio[("g1", "new")] == pytest.approx(0.8)  # no used price: the used/new step
    assert ratio[("g2", "new")] == pytest.approx(1.0)  # used above new: never above paid


def test_used_new_step_is_the_median_of_each_gpus_median():
    rows = [("a", "new", dt.date(2021, m, 1), 100.0, 0.0) for m in (1, 2)]
    rows += [("a", "used", dt.date(2021, m, 1), 80.0, 0.0) for m in (1, 2)]
    rows += [
        ("b", "new", dt.date(2021, 1, 1), 100.0, 0.0),
        ("b", "used", dt.date(2021, 1, 1), 50.0, 0.0),
    ]
    rows += [
        ("c", "new", dt.date(2021, 1, 1), 100.0, 0.0),
        ("c", "used", dt.date(2021, 1, 1), 90.0, 0.0),
    ]
    monthly = pl.DataFrame(
        rows, schema=["gpu_id", "market", "month", "price_usd", "t"], orient="row"
    )
    assert used_new_step(monthly) == pytest.approx(np.log(0.8))
    assert used_new_step(monthly.filter(pl.col("market") == "new")) is None


def test_ebay_fee_is_13_25_percent_to_7500_then_2_35_percent_plus_the_order_fee():
    assert net_of_fees(1000.0) == pytest.approx(1000 - 132.5 - EBAY_FEE_PER_ORDER_USD)
    assert net_of_fees(10000.0) == pytest.approx(10000 - 993.75 - 58.75 - EBAY_FEE_PER_ORDER_USD)
    assert net_of_fees(0.2) == 0.0
    expr = pl.select(v=net_of_fees(pl.lit(1000.0))).item()
    assert expr == pytest.approx(net_of_fees(1000.0))


def test_break_even_day_is_never_beyond_the_horizon_and_solves_the_cost_equation():
    # No resale: the closed form buy / (cloud - own) (Dettmers' ~293 days).
    days = break_even_day([2200.0], [0.0], [0.0], [2.14 * 24 * 0.15], [0.0], 1825.0)
    assert days[0] == pytest.approx(2200 / (2.14 * 24 * 0.15), rel=1e-9)
    # With resale owning breaks even sooner, at the day the costs are equal.
    value, b, cloud, own = 1000.0, -0.2, 2.0 * 24 * 0.15, 0.3
    day = break_even_day([2200.0], [value], [b], [cloud], [own], 1825.0)[0]
    assert day < 2200 / (cloud - own)
    own_total = 2200 - net_of_fees(value * np.exp(b * day / 365)) + own * day
    assert own_total == pytest.approx(cloud * day, abs=1e-6)
    # Later than the horizon, or renting cheaper than electricity: never (NaN).
    never = break_even_day([2200.0, 2200.0], [0.0, 0.0], [0.0, 0.0], [1.0, 0.2], [0.1, 0.3], 1825.0)
    assert np.isnan(never).all()


def offers(rows):
    return pl.DataFrame(
        rows, schema=["gpu_id", "provider", "price_type", "usd_per_gpu_hour"], orient="row"
    ).with_columns(
        instance_type=pl.lit("x"),
        region=pl.lit("r"),
        observed_at=pl.lit(dt.datetime(2026, 5, 20, 6)),
    )


def test_cloud_vs_buy_says_never_within_the_ownership_period_instead_of_a_huge_number():
    gpus = pl.DataFrame({"gpu_id": ["g"], "tdp_w": [350.0], "memory_gb": [16.0]})
    prices = pl.DataFrame({"gpu_id": ["g"], "market": ["new"], "price_usd": [700.0]})
    params = dataclasses.replace(PARAMS, host_watts=100.0, electricity_usd_per_kwh=0.12)
    out = cloud_vs_buy(
        offers([("g", "p", "on_demand", 2.14), ("g", "q", "spot", 0.06), ("g", "z", "spot", 0.03)]),
        prices,
        gpus,
        params,
        DAY,
    )
    horizon = params.years * 365
    assert out["break_even_days"].drop_nulls().max() <= horizon
    cheap = out.filter(pl.col("provider") == "q")
    # $0.06/h at 5 %: 2.9 years of renting would need ~$2,200 / ($0.072 - $0.0032)/day.
    assert cheap.filter(pl.col("utilization") == 0.05)["break_even_days"].to_list() == [None]
    assert cheap.filter(pl.col("utilization") == 0.05)["break_even_note"].to_list() == [
        "never within the 5-year ownership period"
    ]
    cheaper = out.filter(pl.col("provider") == "z")
    # Electricity of the GPU + host: 0.45 kW x $0.12 = $0.054/h; renting at $0.03/h is less.
    assert set(cheaper["break_even_note"]) == {
        "renting is cheaper per hour than the electricity to run the GPU"
    }
    assert cheaper["break_even_utilization"].null_count() == cheaper.height
    found = out.filter(pl.col("break_even_days").is_not_null())
    assert found.height and found["break_even_note"].null_count() == found.height


def test_break_even_utilization_on_a_hand_example():
    # $2,200 bought (700 + 1,500 host), $500 back at the end; $2.00/h vs $0.10/h electricity
    # over 5 x 365 days: u = 1,700 / (24 x 1,825 x 1.90) = 2.04 %.
    u = pl.select(
        u=break_even_utilization(pl.lit(2200.0), pl.lit(500.0), pl.lit(2.0), pl.lit(0.1), 1825.0)
    ).item()
    assert u == pytest.approx(1700 / (24 * 1825 * 1.9))
    over = pl.select(
        u=break_even_utilization(pl.lit(2200.0), pl.lit(0.0), pl.lit(0.11), pl.lit(0.1), 1825.0)
    ).item()
    assert over is None  # 503 %: renting is cheaper even at full use
    # The same through cloud_vs_buy (no resale basis: nothing back at the end).
    gpus = pl.DataFrame({"gpu_id": ["g"], "tdp_w": [350.0], "memory_gb": [16.0]})
    prices = pl.DataFrame({"gpu_id": ["g"], "market": ["new"], "price_usd": [700.0]})
    params = dataclasses.replace(PARAMS, host_watts=100.0, electricity_usd_per_kwh=0.12)
    out = cloud_vs_buy(offers([("g", "p", "on_demand", 2.14)]), prices, gpus, params, DAY)
    per_hour = 0.45 * 0.12
    assert out["break_even_utilization"].to_list() == pytest.approx(
        [2200 / (24 * 1825 * (2.14 - per_hour))] * out.height
    )
    # At that utilisation renting and owning over the period cost the same.
    row = out.row(0, named=True)
    u = row["break_even_utilization"]
    assert 2200 + per_hour * 24 * u * 1825 == pytest.approx(2.14 * 24 * u * 1825)


def test_total_cost_subtracts_the_resale_of_every_gpu_in_the_system():
    gpus = catalog(n_gpus=4)
    fits = fit_retention(retention_points(used_history(catalog()), catalog()))
    prices = pl.DataFrame(
        {"gpu_id": ["g1"], "market": ["used"], "price_usd": [1000.0], "price_day": [DAY]}
    )
    relative = pl.DataFrame(
        {"gpu_id": ["g1"], "workload": ["training_16bit"], "value": [1.0], "method": ["measured"]}
    )
    basis = resale_basis(prices, gpus, fits, None)
    with_resale = perf_per_dollar(relative, prices, gpus, PARAMS, DAY, resale=basis)
    without = perf_per_dollar(relative, prices, gpus, PARAMS, DAY)
    expected = net_of_fees(1000.0 * np.exp(TRUE_B * PARAMS.years))
    joined = with_resale.join(without, on="system_gpus", suffix="_none")
    for row in joined.iter_rows(named=True):
        assert row["resale_usd"] == pytest.approx(expected)
        assert row["total_cost_usd_none"] - row["total_cost_usd"] == pytest.approx(
            row["system_gpus"] * expected
        )
        assert row["perf_per_dollar"] > row["perf_per_dollar_none"]
    assert without["resale_usd"].null_count() == without.height
