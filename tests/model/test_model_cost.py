"""Cost of ownership, renting, bootstrap intervals, sensitivity and recommendations."""

import dataclasses
import datetime as dt

import numpy as np
import polars as pl
import pytest

from model.cloud import cloud_perf_per_dollar, cloud_vs_buy
from model.cost import electricity_expr, perf_per_dollar
from model.fit import efficiency_table
from model.nowcast_backtest import prices_today
from model.parameters import ModelParameters, from_env, with_overrides
from model.recommendations import buy_candidates, recommendations, rent_candidates
from model.sensitivity import rank_ranges, sensitivity
from model.uncertainty import (
    cloud_with_intervals,
    efficiency_replicates,
    perf_per_dollar_replicates,
    performance_replicates,
    price_replicates,
    summarise,
    with_intervals,
)
from sources.bundled import DATA_DIR, read_gpu_specs

DAY = dt.date(2026, 5, 20)
PARAMS = ModelParameters()


def gpus(rows):
    """gpu_id, tdp_w, memory_gb."""
    return pl.DataFrame(
        rows, schema={"gpu_id": pl.Utf8, "tdp_w": pl.Float64, "memory_gb": pl.Float64}, orient="row"
    )


def relative(rows, workload="training_16bit"):
    """gpu_id, value (, value_low, value_high)."""
    frame = pl.DataFrame(rows, orient="row", schema=["gpu_id", "value"][: len(rows[0])])
    return frame.with_columns(workload=pl.lit(workload), method=pl.lit("measured"))


def prices(rows):
    """gpu_id, market, price_usd."""
    return pl.DataFrame(rows, orient="row", schema=["gpu_id", "market", "price_usd"]).with_columns(
        price_day=pl.lit(dt.date(2026, 5, 1))
    )


def observations(rows):
    """(gpu_id, market, price_usd) on 2026-05-01, all usable."""
    return pl.DataFrame(rows, orient="row", schema=["gpu_id", "market", "price_usd"]).with_columns(
        observed_at=pl.lit(dt.datetime(2026, 5, 1, 12)),
        source=pl.lit("ebay"),
        drop_reason=pl.lit(None, dtype=pl.Utf8),
    )


# --- the seeds' worked figures at the model's defaults ----------------------------------


def test_rtx_4090_electricity_at_defaults_is_about_100_dollars_a_year():
    # B578: 5 years, 15 %, $0.175/kWh -> an RTX 4090 (450 W in the bundled spec sheet) costs
    # ~$100 a year; 450 W x 15 % x 8760 h = 591.3 kWh.
    spec = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv").filter(
        pl.col("gpu_id") == "rtx-4090"
    )
    yearly = spec.select(electricity_expr(pl.col("tdp_w"), PARAMS)).item()
    assert yearly == pytest.approx(103.4775)
    assert yearly / PARAMS.electricity_usd_per_kwh == pytest.approx(591.3)
    assert (PARAMS.years, PARAMS.utilization, PARAMS.electricity_usd_per_kwh) == (5.0, 0.15, 0.175)


def test_default_system_sizes_and_utilisations():
    assert PARAMS.system_sizes == (1, 2, 4, 8)
    assert set(PARAMS.system_sizes) <= set(PARAMS.host_cost_usd)
    assert min(PARAMS.cloud_utilizations) == 0.05 and max(PARAMS.cloud_utilizations) == 1.0


# --- total cost for 1/2/4/8-GPU systems --------------------------------------------------


def test_perf_per_dollar_for_four_and_eight_gpus_by_hand():
    out = perf_per_dollar(
        relative([("g", 2.0)]),
        prices([("g", "new", 1600.0)]),
        gpus([("g", 450.0, 24.0)]),
        dataclasses.replace(PARAMS, host_cost_scale=2.0),
        DAY,
    )
    rows = {r["system_gpus"]: r for r in out.iter_rows(named=True)}
    assert sorted(rows) == [1, 2, 4, 8]
    yearly = 450 / 1000 * 0.15 * 8760 * 0.175
    for n, host, eff in [(4, 5000.0, 0.875), (8, 15000.0, 0.86)]:
        total = n * 1600 + 2 * host + 5 * n * yearly
        assert rows[n]["host_cost_usd"] == 2 * host
        assert rows[n]["total_cost_usd"] == pytest.approx(total)
        assert rows[n]["perf_per_dollar"] == pytest.approx(n * 2.0 * eff / total)
        assert rows[n]["multi_gpu_efficiency"] == eff
    assert {r["rank"] for r in rows.values()} == {1}


def test_rank_is_within_workload_size_and_market():
    out = perf_per_dollar(
        relative([("a", 1.0), ("b", 2.0)]),
        prices([("a", "new", 1000.0), ("b", "new", 1000.0), ("a", "used", 100.0)]),
        gpus([("a", 300.0, 24.0), ("b", 300.0, 24.0)]),
        PARAMS,
        DAY,
    ).filter(pl.col("system_gpus") == 1)
    ranks = {(r["gpu_id"], r["market"]): r["rank"] for r in out.iter_rows(named=True)}
    assert ranks == {("b", "new"): 1, ("a", "new"): 2, ("a", "used"): 1}


# --- renting -----------------------------------------------------------------------------


def offers(rows):
    """(gpu_id, provider, price_type, usd_per_gpu_hour, instance_type)."""
    return pl.DataFrame(
        rows,
        orient="row",
        schema=["gpu_id", "provider", "price_type", "usd_per_gpu_hour", "instance_type"],
    ).with_columns(region=pl.lit("r1"), observed_at=pl.lit(dt.datetime(2026, 5, 20)))


def test_cloud_perf_per_dollar_keeps_price_types_apart():
    out = cloud_perf_per_dollar(
        offers(
            [
                ("g", "p", "on_demand", 2.0, "x2"),
                ("g", "p", "on_demand", 1.0, "x1"),
                ("g", "p", "spot", 0.5, "x1"),
            ]
        ),
        relative([("g", 1.5)]),
        DAY,
    )
    rows = {r["price_type"]: r for r in out.iter_rows(named=True)}
    assert rows["on_demand"]["perf_per_dollar"] == pytest.approx(1.5 / 1.0)
    assert rows["on_demand"]["instance_type"] == "x1" and rows["on_demand"]["n_offers"] == 2
    assert rows["spot"]["perf_per_dollar"] == pytest.approx(1.5 / 0.5)


def test_equal_cloud_offers_share_a_rank_whatever_the_row_order():
    # T4 costs $0.526/h on two clouds: neither may be ranked above the other by row order.
    rows = [
        ("t4", "aws", "on_demand", 0.526, "g4dn"),
        ("t4", "azure", "on_demand", 0.526, "nc4"),
        ("g", "aws", "on_demand", 1.0, "x1"),
    ]
    ranks = [
        cloud_perf_per_dollar(offers(order), relative([("t4", 0.26), ("g", 1.0)]), DAY)
        .sort("provider", "gpu_id")
        .select("gpu_id", "provider", "rank")
        for order in (rows, rows[::-1])
    ]
    assert ranks[0].equals(ranks[1])
    assert ranks[0].filter(pl.col("gpu_id") == "t4")["rank"].to_list() == [2, 2]


def test_cloud_vs_buy_spans_five_to_hundred_percent_and_names_the_price_basis():
    out = cloud_vs_buy(
        offers([("g", "p", "on_demand", 2.14, "x")]),
        prices([("g", "new", 1000.0), ("g", "used", 400.0), ("g", "mean", 700.0)]),
        gpus([("g", 350.0, 16.0)]),
        dataclasses.replace(PARAMS, host_watts=100.0, electricity_usd_per_kwh=0.12),
        DAY,
    )
    assert out["utilization"].to_list() == list(PARAMS.cloud_utilizations)
    row = out.filter(pl.col("utilization") == 0.15).row(0, named=True)
    # Dettmers' example: $700 GPU + $1,500 host = $2,200 vs $2.14/h at 15 % -> ~293 days.
    assert (row["buy_market"], row["buy_price_usd"], row["buy_cost_usd"]) == ("mean", 700, 2200)
    assert 280 < row["break_even_days"] < 310
    days = out["break_even_days"].to_list()
    assert days == sorted(days, reverse=True)  # more use, sooner break-even


# --- bootstrap ---------------------------------------------------------------------------


def test_price_replicates_resample_the_days_observations():
    obs = observations(
        [("a", "used", p) for p in (700.0, 720.0, 710.0, 690.0, 5.99)]
        + [("a", "new", 1000.0), ("b", "new", 500.0), ("b", "new", 520.0)]
    )
    daily = (
        obs.with_columns(day=pl.col("observed_at").dt.date())
        .group_by("day", "gpu_id", "market")
        .agg(pl.col("price_usd").median())
    )
    # Prices without a log_sd (frames of older callers) resample their day's observations;
    # current_prices rows carry one and are drawn with it (test_price_uncertainty.py).
    latest = prices_today(
        daily, pl.DataFrame({"gpu_id": ["a", "b"]}), PARAMS, DAY, "random_walk"
    ).with_columns(log_sd=pl.lit(None, dtype=pl.Float64))
    reps = price_replicates(obs, latest, PARAMS)
    assert reps.group_by("gpu_id", "market").len()["len"].to_list() == [200] * 4
    used = reps.filter((pl.col("gpu_id") == "a") & (pl.col("market") == "used"))
    # The $5.99 outlier is not resampled: every median lies within the kept observations.
    assert used["price_usd"].min() >= 690 and used["price_usd"].max() <= 720
    assert used["price_usd"].n_unique() > 1
    # One observation: log-normal with the pooled spread, centred on the price.
    new = reps.filter((pl.col("gpu_id") == "a") & (pl.col("market") == "new"))
    assert new["price_usd"].std() > 0
    assert np.median(np.log(new["price_usd"].to_numpy() / 1000.0)) == pytest.approx(0, abs=0.05)
    # `mean` = mean of the same replicate's new and used draws.
    wide = reps.filter(pl.col("gpu_id") == "a").pivot(
        "market", index="replicate", values="price_usd"
    )
    assert wide["mean"].to_list() == pytest.approx(((wide["new"] + wide["used"]) / 2).to_list())
    # Seeded: the same inputs give the same draws, another seed different ones.
    assert reps.equals(price_replicates(obs, latest, PARAMS))
    other = price_replicates(obs, latest, dataclasses.replace(PARAMS, bootstrap_seed=1))
    assert not reps.equals(other)
    # The warehouse returns rows in no fixed order; the draws must not depend on it.
    shuffled = obs.sample(fraction=1.0, shuffle=True, seed=7)
    assert not shuffled["price_usd"].equals(obs["price_usd"])
    assert reps.sort("gpu_id", "market", "replicate").equals(
        price_replicates(shuffled, latest, PARAMS).sort("gpu_id", "market", "replicate")
    )


def test_performance_replicates_match_the_interval():
    rel = pl.DataFrame(
        {
            "gpu_id": ["a", "b", "c"],
            "workload": ["w"] * 3,
            "value": [2.0, 1.0, 1.0],
            "value_low": [1.0, None, 1.0],
            "value_high": [4.0, None, 1.0],
        }
    )
    params = dataclasses.replace(PARAMS, bootstrap_replicates=20000)
    reps = performance_replicates(rel, params)
    a = reps.filter(pl.col("gpu_id") == "a")["value"]
    assert a.quantile(0.025) == pytest.approx(1.0, rel=0.05)
    assert a.quantile(0.975) == pytest.approx(4.0, rel=0.05)
    # No interval, or a zero-width one: the value itself in every replicate.
    assert set(reps.filter(pl.col("gpu_id") != "a")["value"]) == {1.0}
    # Without interval columns at all, no spread either.
    plain = performance_replicates(rel.drop("value_low", "value_high"), PARAMS)
    assert set(plain.filter(pl.col("gpu_id") == "a")["value"]) == {2.0}


def test_efficiency_draws_stay_in_their_ranges():
    reps = efficiency_replicates(PARAMS)
    for n, (low, high) in PARAMS.multi_gpu_efficiency_range.items():
        eff = reps.filter(pl.col("system_gpus") == n)
        # One Dettmers constant per size: every interconnect and platform shares its draw.
        groups = eff.group_by("platform", "interconnect").len()
        assert groups["len"].to_list() == [PARAMS.bootstrap_replicates] * groups.height
        # Workstations at every size, servers at theirs, machines sold whole at 1 only.
        platforms = 1 + (n in PARAMS.server_system_sizes) + (n == 1)
        assert groups.height == 3 * platforms
        assert (
            eff.group_by("replicate").agg(pl.col("efficiency").n_unique())["efficiency"].max() == 1
        )
        assert low <= eff["efficiency"].min() <= eff["efficiency"].max() <= high


def fitted_constants(determined_nvlink8: bool, determined_pcie8: bool = True):
    """model_constants rows: Dettmers' set plus fitted e_2, e_4 and e_8 (nvlink, pcie)."""
    rows = [
        {
            "parameter_set": "dettmers",
            "name": "multi_gpu_efficiency",
            "key": str(n),
            "value": e,
            "ci_low": None,
            "ci_high": None,
            "determined": True,
        }
        for n, e in PARAMS.multi_gpu_efficiency.items()
    ]
    rows += [
        {"parameter_set": "fitted", "name": "multi_gpu_efficiency", "key": key, "value": v,
         "ci_low": lo, "ci_high": hi, "determined": det}
        for key, v, lo, hi, det in [
            ("2|nvlink", 0.98, 0.95, 0.99, True),
            ("2|pcie", 0.98, 0.97, 0.99, True),
            ("4|nvlink", 0.97, 0.91, 0.99, True),
            ("4|pcie", 0.96, 0.93, 0.99, True),
            ("8|nvlink", 0.94, 0.85, 0.99, determined_nvlink8),
            ("8|pcie", 0.97, 0.91, 0.98, determined_pcie8),
        ]
    ]  # fmt: skip
    return pl.DataFrame(rows)


def test_cost_model_uses_the_efficiency_the_debiasing_resolved():
    """Fitted e_n for every size when every fit is determined; one undetermined fit (8 GPUs,
    NVLink) makes every size Dettmers' (fit.efficiency_table, as benchmark_debiased
    applies it), so e_n never jumps from 0.97 at 4 GPUs to 0.86 at 8 from mixing sources."""
    catalog = gpus([("sx", 400.0, 80.0), ("pc", 300.0, 48.0)]).with_columns(
        form_factor=pl.Series(["sxm", "pcie"])
    )

    def efficiencies(table):
        out = perf_per_dollar(
            relative([("sx", 2.0), ("pc", 1.0)]),
            prices([("sx", "new", 10000.0), ("pc", "new", 5000.0)]),
            catalog,
            PARAMS,
            DAY,
            table,
        )
        got = {(r["gpu_id"], r["system_gpus"]): r["multi_gpu_efficiency"] for r in out.to_dicts()}
        return out, got

    out, got = efficiencies(efficiency_table(fitted_constants(True), "auto"))
    assert got == {
        ("sx", 4): 0.97, ("pc", 1): 1.0, ("pc", 2): 0.98, ("pc", 4): 0.96, ("pc", 8): 0.97,
        ("sx", 8): 0.94,
    }  # fmt: skip
    row = out.filter((pl.col("gpu_id") == "pc") & (pl.col("system_gpus") == 4)).row(0, named=True)
    assert row["perf_per_dollar"] == pytest.approx(4 * 1.0 * 0.96 / row["total_cost_usd"])
    _, got = efficiencies(efficiency_table(fitted_constants(False), "auto"))
    assert got == {
        ("sx", 4): 0.875, ("sx", 8): 0.86,
        ("pc", 1): 1.0, ("pc", 2): 0.95, ("pc", 4): 0.875, ("pc", 8): 0.86,
    }  # fmt: skip
    # Under 'dettmers' (or without a table) the cost model is Dettmers' throughout.
    plain = perf_per_dollar(relative([("pc", 1.0)]), prices([("pc", "new", 5000.0)]), catalog,
                            PARAMS, DAY)  # fmt: skip
    assert plain.sort("system_gpus")["multi_gpu_efficiency"].to_list() == [1.0, 0.95, 0.875, 0.86]


def test_bootstrap_draws_a_fitted_efficiency_from_its_interval():
    table = efficiency_table(fitted_constants(True), "auto")
    reps = efficiency_replicates(PARAMS, table)
    bounds = {
        (n, link): (lo, hi)
        for n, link, lo, hi in reps.group_by("system_gpus", "interconnect")
        .agg(lo=pl.col("efficiency").min(), hi=pl.col("efficiency").max())
        .rows()
    }
    # Fitted e_4: inside its 95 % interval (which holds the fitted value, unlike Dettmers'
    # 0.80-0.95 range).
    assert 0.91 <= bounds[4, "nvlink"][0] and bounds[4, "nvlink"][1] <= 0.99
    assert 0.93 <= bounds[4, "pcie"][0] and bounds[4, "pcie"][1] <= 0.99
    assert bounds[4, "pcie"][1] > PARAMS.multi_gpu_efficiency_range[4][1]
    assert 0.91 <= bounds[8, "pcie"][0] and bounds[8, "pcie"][1] <= 0.98
    # With an undetermined fit under auto, Dettmers' e_8 is drawn from the configured range.
    dettmers = efficiency_replicates(PARAMS, efficiency_table(fitted_constants(False), "auto"))
    eight = dettmers.filter(pl.col("system_gpus") == 8)["efficiency"]
    low, high = PARAMS.multi_gpu_efficiency_range[8]
    assert low <= eight.min() and eight.max() <= high
    # Under `fitted` (any existing fit), e_8 is drawn from the fitted intervals instead.
    both = efficiency_replicates(
        PARAMS, efficiency_table(fitted_constants(False, determined_pcie8=False), "fitted")
    ).filter(pl.col("system_gpus") == 8)
    pcie = both.filter(pl.col("interconnect") == "pcie")["efficiency"]
    assert 0.91 <= pcie.min() and pcie.max() <= 0.98


def test_top3_probabilities_sum_to_three_and_intervals_bracket():
    rel = pl.DataFrame(
        {
            "gpu_id": ["a", "b", "c", "d", "e"],
            "workload": ["w"] * 5,
            "value": [10.0, 1.0, 1.02, 0.98, 1.0],
            "value_low": [9.0, 0.7, 0.7, 0.7, 0.7],
            "value_high": [11.0, 1.4, 1.4, 1.4, 1.4],
            "method": ["measured"] * 5,
        }
    )
    price_rows = [(g, "new", 1000.0) for g in "abcde"]
    latest = prices(price_rows)
    catalog = gpus([(g, 300.0, 16.0) for g in "abcde"])
    reps = perf_per_dollar_replicates(rel, latest, observations(price_rows), catalog, PARAMS)
    point = perf_per_dollar(rel, latest, catalog, PARAMS, DAY)
    out = with_intervals(point, reps)
    totals = out.group_by("system_gpus").agg(pl.col("p_top3").sum())["p_top3"]
    assert totals.to_list() == pytest.approx([3.0] * 4)
    top = out.filter(pl.col("gpu_id") == "a")
    assert top["p_top3"].to_list() == [1.0] * 4
    close = out.filter((pl.col("gpu_id") != "a") & (pl.col("system_gpus") == 1))
    assert all(0 < p < 1 for p in close["p_top3"])
    assert (out["perf_per_dollar_low"] <= out["perf_per_dollar_high"]).all()
    one = out.filter(pl.col("system_gpus") == 1)
    inside = (one["perf_per_dollar_low"] <= one["perf_per_dollar"]) & (
        one["perf_per_dollar"] <= one["perf_per_dollar_high"]
    )
    assert inside.all()
    assert summarise(reps).height == out.height


# --- sensitivity -------------------------------------------------------------------------


def test_electricity_price_reorders_a_hungry_cheap_gpu_and_a_frugal_dear_one():
    rel = relative([("hungry", 1.0), ("frugal", 1.0)])
    catalog = gpus([("hungry", 600.0, 24.0), ("frugal", 150.0, 24.0)])
    # Extra total cost of hungry: 450 W x 0.15 x 8760 h x 5 y x $/kWh = 2956.5 * $/kWh.
    latest = prices([("hungry", "new", 1000.0), ("frugal", "new", 1000.0 + 2956.5 * 0.2)])
    table = sensitivity(rel, latest, catalog, PARAMS, DAY).filter(
        (pl.col("parameter") == "electricity_usd_per_kwh") & (pl.col("system_gpus") == 1)
    )
    hungry = {
        r["value"]: r for r in table.filter(pl.col("gpu_id") == "hungry").iter_rows(named=True)
    }
    assert hungry[0.10]["rank"] == 1 and hungry[0.30]["rank"] == 2 and hungry[0.40]["rank"] == 2
    assert hungry[0.30]["rank_at_default"] == 1 and hungry[0.30]["rank_change"] == 1
    assert hungry[0.175]["perf_per_dollar"] == pytest.approx(
        hungry[0.175]["perf_per_dollar_at_default"]
    )
    assert set(table["default_value"]) == {0.175}
    spans = rank_ranges(table).filter(pl.col("gpu_id") == "hungry")
    assert (spans["best_rank"].item(), spans["worst_rank"].item()) == (1, 2)
    parameters = set(sensitivity(rel, latest, catalog, PARAMS, DAY)["parameter"])
    assert parameters == {"electricity_usd_per_kwh", "utilization", "years", "host_cost_scale"}


# --- recommendations ---------------------------------------------------------------------


def test_recommendations_per_memory_tier_with_runner_up():
    rel = relative([("small", 1.4), ("mid", 1.5), ("big", 3.0)])
    catalog = gpus([("small", 200.0, 8.0), ("mid", 300.0, 24.0), ("big", 400.0, 80.0)])
    latest = prices(
        [("small", "new", 300.0), ("mid", "new", 900.0), ("big", "new", 15000.0)]
        + [("mid", "used", 500.0)]
    )
    obs = observations(
        [(g, m, p) for g, m, p in latest.select("gpu_id", "market", "price_usd").rows()]
    )
    point = with_intervals(
        perf_per_dollar(rel, latest, catalog, PARAMS, DAY),
        perf_per_dollar_replicates(rel, latest, obs, catalog, PARAMS),
    )
    perf_reps = performance_replicates(rel, PARAMS)
    cloud = cloud_with_intervals(
        cloud_perf_per_dollar(
            offers(
                [
                    ("mid", "p1", "on_demand", 0.50, "m1"),
                    ("mid", "p2", "on_demand", 0.40, "m2"),
                    ("big", "p1", "on_demand", 2.00, "b1"),
                    ("big", "p1", "spot", 0.70, "b1"),
                ]
            ),
            rel,
            DAY,
        ),
        perf_reps,
    )
    buy = buy_candidates(point, perf_per_dollar_replicates(rel, latest, obs, catalog, PARAMS))
    rent = rent_candidates(cloud, perf_reps)
    out = recommendations(
        pl.concat([buy[0], rent[0]]), pl.concat([buy[1], rent[1]]), catalog, (8, 24, 80), DAY
    )
    got = {(r["memory_tier_gb"], r["option"]): r for r in out.iter_rows(named=True)}
    # Buying new: small is cheapest per performance; >= 24 GB leaves mid, >= 80 GB big.
    assert got[(8.0, "buy_new")]["gpu_id"] == "small"
    assert got[(8.0, "buy_new")]["runner_up_gpu_id"] == "mid"
    assert got[(24.0, "buy_new")]["gpu_id"] == "mid"
    assert got[(24.0, "buy_new")]["runner_up_gpu_id"] == "big"
    assert got[(80.0, "buy_new")]["gpu_id"] == "big"
    assert got[(80.0, "buy_new")]["runner_up_gpu_id"] is None
    assert got[(80.0, "buy_new")]["p_best"] == 1.0
    # Only mid is sold used, so there is no used recommendation at 80 GB.
    assert got[(24.0, "buy_used")]["gpu_id"] == "mid"
    assert (80.0, "buy_used") not in got
    # Renting on demand: mid at p2's $0.40 (1.5 / 0.4 = 3.75 per $) beats big (3 / 2).
    rent_8 = got[(8.0, "rent")]
    assert (rent_8["gpu_id"], rent_8["provider"], rent_8["instance_type"]) == ("mid", "p2", "m2")
    assert rent_8["perf_per_dollar"] == pytest.approx(3.75)
    assert rent_8["runner_up_perf_per_dollar"] == pytest.approx(1.5)
    # Spot is its own option, never mixed with on-demand.
    assert got[(8.0, "rent_spot")]["gpu_id"] == "big"
    assert got[(8.0, "rent_spot")]["perf_per_dollar"] == pytest.approx(3.0 / 0.7)
    assert got[(8.0, "rent_spot")]["n_candidates"] == 1
    for row in out.iter_rows(named=True):
        assert row["memory_gb"] >= row["memory_tier_gb"]
        assert 0 <= row["p_best"] <= 1
        if row["runner_up_perf_per_dollar"] is not None:
            assert row["perf_per_dollar"] >= row["runner_up_perf_per_dollar"]
            assert row["p_best"] + row["runner_up_p_best"] <= 1 + 1e-12


# --- parameters --------------------------------------------------------------------------


def test_overrides_from_environment_and_run_config():
    params = from_env(
        env={
            "GPUVALUE_HOST_COST_USD": "1=1000,2=1800,4=4000,8=9000",
            "GPUVALUE_SYSTEM_SIZES": "1,8",
            "GPUVALUE_BOOTSTRAP_REPLICATES": "50",
            "GPUVALUE_HOST_COST_SCALE": "1.5",
        }
    )
    assert params.host_cost_usd == {1: 1000.0, 2: 1800.0, 4: 4000.0, 8: 9000.0}
    assert params.system_sizes == (1, 8)
    assert (params.bootstrap_replicates, params.host_cost_scale) == (50, 1.5)
    changed = with_overrides(params, {"electricity_usd_per_kwh": "0.30", "years": "3"})
    assert (changed.electricity_usd_per_kwh, changed.years) == (0.30, 3.0)
    assert '"electricity_usd_per_kwh": 0.3' in changed.to_json()
    with pytest.raises(ValueError, match="not an overridable parameter"):
        with_overrides(params, {"price_mad_k": "2"})
    with pytest.raises(ValueError, match="need host_cost_usd"):
        from_env(env={"GPUVALUE_SYSTEM_SIZES": "1,3"})
    with pytest.raises(ValueError, match="GPUVALUE_HOST_COST_USD"):
        from_env(env={"GPUVALUE_HOST_COST_USD": "1500"})


# --- systems people can buy, and how a cloud price is billed ------------------------------


def module_catalog():
    """A PCIe card, an SXM module and an OAM module, 300-700 W."""
    return gpus([("card", 300.0, 48.0), ("sxm", 700.0, 80.0), ("oam", 750.0, 192.0)]).with_columns(
        form_factor=pl.Series(["pcie", "sxm", "oam"])
    )


def test_modules_are_costed_only_in_4_and_8_gpu_servers_with_a_server_host():
    out = perf_per_dollar(
        relative([("card", 1.0), ("sxm", 2.0), ("oam", 2.0)]),
        prices([("card", "new", 5000.0), ("sxm", "new", 25000.0), ("oam", "new", 15000.0)]),
        module_catalog(),
        PARAMS,
        DAY,
    )
    sizes = {g: sorted(out.filter(pl.col("gpu_id") == g)["system_gpus"]) for g in ("card", "sxm")}
    assert sizes == {"card": [1, 2, 4, 8], "sxm": [4, 8]}
    assert out.filter(pl.col("gpu_id") == "oam")["system_gpus"].min() == 4
    assert set(out.filter(pl.col("gpu_id") != "card")["platform"]) == {"server"}
    eight = out.filter((pl.col("gpu_id") == "sxm") & (pl.col("system_gpus") == 8)).row(
        0, named=True
    )
    electricity = 8 * 700 / 1000 * 0.15 * 8760 * 0.175
    assert eight["host_cost_usd"] == PARAMS.server_host_cost_usd[8]
    assert eight["total_cost_usd"] == pytest.approx(
        8 * 25000 + PARAMS.server_host_cost_usd[8] + 5 * electricity
    )
    four_card = out.filter((pl.col("gpu_id") == "card") & (pl.col("system_gpus") == 4))
    assert four_card["host_cost_usd"].item() == PARAMS.host_cost_usd[4]


def test_a_whole_server_price_share_is_not_costed_with_a_second_host():
    """Lambda's per-GPU figure of an SXM server already holds the host; a card's does not."""
    priced = prices([("sxm", "new", 36718.75), ("card", "new", 4437.5)]).with_columns(
        sources=pl.lit("lambda-list-price")
    )
    out = perf_per_dollar(
        relative([("sxm", 2.0), ("card", 1.0)]), priced, module_catalog(), PARAMS, DAY
    )
    sxm = out.filter(pl.col("gpu_id") == "sxm").sort("system_gpus")
    assert sxm["price_scope"].to_list() == ["server_share"] * 2
    assert sxm["host_cost_usd"].to_list() == [0.0, 0.0]
    card = out.filter((pl.col("gpu_id") == "card") & (pl.col("system_gpus") == 1))
    assert card.select("price_scope", "host_cost_usd").row(0) == ("gpu", PARAMS.host_cost_usd[1])
    # A module price from a retailer (or mixed with one) is a module price: host added.
    mixed = priced.with_columns(sources=pl.lit("ebay,lambda-list-price"))
    out = perf_per_dollar(relative([("sxm", 2.0)]), mixed, module_catalog(), PARAMS, DAY)
    assert set(out["price_scope"]) == {"gpu"} and out["host_cost_usd"].min() > 0


def cloud_offer_rows(rows):
    """(gpu_id, provider, price_type, usd_per_gpu_hour) on DAY."""
    return pl.DataFrame(
        rows, orient="row", schema=["gpu_id", "provider", "price_type", "usd_per_gpu_hour"]
    ).with_columns(
        instance_type=pl.lit("x"),
        region=pl.lit("r"),
        observed_at=pl.lit(dt.datetime(2026, 5, 20, 6)),
    )


def test_reserved_break_even_does_not_depend_on_utilisation():
    offers = cloud_offer_rows(
        [
            ("card", "aws", "on_demand", 2.0),
            ("card", "aws", "reserved_1y", 1.2),
            ("card", "aws", "reserved_3y", 0.8),
        ]
    )
    out = cloud_vs_buy(offers, prices([("card", "new", 5000.0)]), module_catalog(), PARAMS, DAY)
    reserved = out.filter(pl.col("billing") == "whole_term")
    assert set(reserved["price_type"]) == {"reserved_1y", "reserved_3y"}
    for _, part in reserved.group_by("price_type"):
        assert part["break_even_days"].n_unique() == 1
        assert part.height == len(PARAMS.cloud_utilizations)
    one_year = reserved.filter(pl.col("price_type") == "reserved_1y").row(0, named=True)
    own_per_day = 300 / 1000 * 24 * PARAMS.electricity_usd_per_kwh
    assert one_year["break_even_days"] == pytest.approx(
        (5000 + PARAMS.host_cost_usd[1]) / (1.2 * 24 - own_per_day)
    )
    on_demand = out.filter(pl.col("price_type") == "on_demand").sort("utilization")
    assert set(on_demand["billing"]) == {"per_hour_used"}
    # More use, sooner break-even; at low use later than the ownership period: never
    # (NULL with a note), only at the low-utilisation end.
    found = on_demand["break_even_days"].drop_nulls().to_list()
    assert found == sorted(found, reverse=True)
    assert max(found) <= PARAMS.years * 365
    never = on_demand.filter(pl.col("break_even_days").is_null())
    has_day = on_demand.filter(pl.col("break_even_days").is_not_null())
    assert never.height and never["utilization"].max() < has_day["utilization"].min()
    assert set(never["break_even_note"]) == {"never within the 5-year ownership period"}


def test_buying_a_module_to_compare_with_renting_costs_its_server_share():
    offers = cloud_offer_rows([("sxm", "lambda", "on_demand", 3.0)])
    out = cloud_vs_buy(
        offers, prices([("sxm", "new", 25000.0)]), module_catalog(), PARAMS, DAY
    ).row(0, named=True)
    n = min(PARAMS.server_system_sizes)
    assert out["platform"] == "server"
    assert out["buy_cost_usd"] == pytest.approx(25000 + PARAMS.server_host_cost_usd[n] / n)


def test_a_gpu_without_a_tdp_is_not_costed_but_others_are():
    catalog = module_catalog().with_columns(
        tdp_w=pl.when(pl.col("gpu_id") == "oam").then(None).otherwise(pl.col("tdp_w"))
    )
    out = perf_per_dollar(
        relative([("card", 1.0), ("oam", 2.0)]),
        prices([("card", "new", 5000.0), ("oam", "new", 15000.0)]),
        catalog,
        PARAMS,
        DAY,
    )
    assert set(out["gpu_id"]) == {"card"}
    assert out["perf_per_dollar"].null_count() == 0
