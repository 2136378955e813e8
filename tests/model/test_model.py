import datetime as dt
import math

import polars as pl
import pytest

from model.bridging import eight_bit_speedup
from model.cloud import break_even_days, cloud_vs_buy
from model.cost import best_market, electricity_usd_per_year, perf_per_dollar
from model.debias import debias
from model.nowcast_backtest import prices_today
from model.parameters import ModelParameters, from_env
from model.performance import relative_performance
from model.performance_fit import fit_log_performance, place_on_anchor
from model.prices import daily_prices

DAY = dt.date(2026, 5, 20)
PARAMS = ModelParameters()


def gpus_frame(rows):
    base = {"architecture": "ampere", "fp8_tensor_tflops": None, "tdp_w": 300.0}
    return pl.DataFrame(
        [{**base, **r} for r in rows],
        schema={
            "gpu_id": pl.Utf8,
            "memory_bandwidth_gbs": pl.Float64,
            "fp16_tensor_tflops": pl.Float64,
            "architecture": pl.Utf8,
            "fp8_tensor_tflops": pl.Float64,
            "tdp_w": pl.Float64,
        },
    )


def bench(rows):
    base = {
        "source": "lambda",
        "software_era": "v1",
        "citation": "lambdal/deeplearning-benchmark pytorch-train-throughput-fp16.csv@aa5addb6",
        "task": "training",
        "precision": "fp16",
        "workload_class": "cnn",
        "num_gpus": 1,
        "unit": "images/s",
    }
    return pl.DataFrame([{**base, **r} for r in rows])


# --- the seeds' worked figures ---------------------------------------------------------


def test_electricity_450w_is_about_103_dollars_a_year():
    # B578: 450 W, 15 % utilisation, $0.175/kWh -> 591.3 kWh -> $103.48 ("~$100/year").
    assert electricity_usd_per_year(450, 0.15, 0.175) == pytest.approx(103.4775)
    assert electricity_usd_per_year(450, 0.15, 1.0) == pytest.approx(591.3)


def test_dettmers_break_even_example_is_about_300_days():
    # B785-817: $2,200 desktop, 350 W GPU + 100 W CPU at 15 % and $0.12/kWh ($71/year),
    # AWS V100 at $2.14/h -> about 300 days.
    yearly = electricity_usd_per_year(450, 0.15, 0.12)
    assert yearly == pytest.approx(70.956)
    days = break_even_days(2200, 2.14, 0.15, yearly)
    assert days == pytest.approx(2200 / (2.14 * 24 * 0.15 - 70.956 / 365))
    assert 280 < days < 310
    # At the break-even day the two costs are equal (his $2,311 vs $2,270 brackets it).
    assert 2.14 * 24 * 0.15 * days == pytest.approx(2200 + yearly / 365 * days)


def test_renting_cheaper_than_electricity_never_breaks_even():
    assert break_even_days(2000, 0.01, 0.15, electricity_usd_per_year(450, 0.15, 0.175)) is None


# --- debiasing -------------------------------------------------------------------------


def test_batch_size_correction_follows_dettmers_formula():
    rows = bench(
        [
            {
                "gpu_id": "small",
                "model": "resnet50",
                "batch_size_per_gpu": 256,
                "throughput": 800.0,
            },
            {
                "gpu_id": "big",
                "model": "resnet50",
                "batch_size_per_gpu": 1024,
                "throughput": 1600.0,
            },
        ]
    )
    out = debias(rows, PARAMS, DAY).sort("gpu_id")
    # Reference batch = median(256, 1024) = 640.
    big, small = out.row(0, named=True), out.row(1, named=True)
    assert big["batch_size_ref"] == 640
    assert small["batch_factor"] == pytest.approx(1.136 ** math.log2(640 / 256))
    assert big["batch_factor"] == pytest.approx(1.136 ** math.log2(640 / 1024))
    assert big["throughput_per_gpu"] == pytest.approx(1600 * 1.136 ** math.log2(640 / 1024))
    # The big-batch GPU's advantage shrinks by 1.136^2 (two doublings).
    ratio = big["throughput_per_gpu"] / small["throughput_per_gpu"]
    assert ratio == pytest.approx(2.0 / 1.136**2)


def test_multi_gpu_rows_are_used_only_without_a_single_gpu_row():
    rows = bench(
        [
            {"gpu_id": "a", "model": "m", "batch_size_per_gpu": 64, "throughput": 100.0},
            {
                "gpu_id": "a",
                "model": "m",
                "num_gpus": 8,
                "batch_size_per_gpu": 64,
                "throughput": 700.0,
            },
            {
                "gpu_id": "b",
                "model": "m",
                "num_gpus": 8,
                "batch_size_per_gpu": 64,
                "throughput": 1376.0,
            },
        ]
    )
    out = debias(rows, PARAMS, DAY).sort("gpu_id")
    assert out["num_gpus"].to_list() == [1, 8]
    # t_1 = t_n / (n * e_n) with e_8 = 0.86.
    assert out["throughput_per_gpu"].to_list() == pytest.approx([100.0, 1376 / (8 * 0.86)])


def test_tables_from_different_files_are_not_pooled():
    rows = bench(
        [
            {
                "gpu_id": "a",
                "task": "inference",
                "model": "rn50",
                "batch_size_per_gpu": 8,
                "throughput": 100.0,
                "citation": "pytorch/README.md",
            },
            {
                "gpu_id": "b",
                "task": "inference",
                "model": "rn50",
                "batch_size_per_gpu": 64,
                "throughput": 900.0,
                "citation": "tensorrt/README.md",
            },
        ]
    )
    # Each README keeps its own modal batch size: both rows survive.
    assert debias(rows, PARAMS, DAY).height == 2


def test_inference_sweeps_keep_the_modal_batch_and_are_not_batch_corrected():
    rows = bench(
        [
            {
                "gpu_id": g,
                "task": "inference",
                "model": "rn50",
                "batch_size_per_gpu": bs,
                "throughput": t,
            }
            for g, bs, t in [
                ("a", 1, 80.0),
                ("a", 64, 2000.0),
                ("b", 64, 1000.0),
                ("b", 128, 1100.0),
            ]
        ]
    )
    out = debias(rows, PARAMS, DAY)
    assert out["batch_size_per_gpu"].to_list() == [64, 64]
    assert out["batch_factor"].to_list() == [1.0, 1.0]
    assert set(out["workload"]) == {"inference_16bit"}


def test_fp32_rows_do_not_feed_16bit_workloads():
    rows = bench(
        [
            {
                "gpu_id": "a",
                "model": "m",
                "precision": "tf32",
                "batch_size_per_gpu": 8,
                "throughput": 10.0,
            }
        ]
    )
    assert debias(rows, PARAMS, DAY).is_empty()


# --- relative performance --------------------------------------------------------------


def test_two_way_fit_equals_geometric_mean_of_ratios_on_complete_data():
    # ref: 100, 200 ; x: 150, 500 -> ratios 1.5 and 2.5 -> geometric mean sqrt(3.75).
    rows = pl.DataFrame(
        {
            "gpu_id": ["ref", "ref", "x", "x"],
            "table": ["m1", "m2", "m1", "m2"],
            "throughput_per_gpu": [100.0, 200.0, 150.0, 500.0],
        }
    )
    fit = fit_log_performance(rows, "ref").sort("gpu_id")
    p = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    assert math.exp(p["x"] - p["ref"]) == pytest.approx(math.sqrt(1.5 * 2.5))
    assert fit["n_results"].to_list() == [2, 2]


def test_two_way_fit_bridges_tables_through_a_shared_gpu():
    # ref and mid share table m1; mid and far share m2: far = 2 * mid = 2 * 3 * ref.
    rows = pl.DataFrame(
        {
            "gpu_id": ["ref", "mid", "mid", "far", "island"],
            "table": ["m1", "m1", "m2", "m2", "m3"],
            "throughput_per_gpu": [10.0, 30.0, 5.0, 10.0, 1.0],
        }
    )
    fit = fit_log_performance(rows, "ref")
    p = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    assert math.exp(p["far"] - p["ref"]) == pytest.approx(6.0)
    # A GPU in a table no other GPU shares is its own set, not the reference's.
    main = dict(zip(fit["gpu_id"], fit["main"], strict=True))
    assert main == {"ref": True, "mid": True, "far": True, "island": False}


def test_disconnected_sets_keep_their_ratios_and_land_on_the_anchor_scale():
    rows = pl.DataFrame(
        {
            "gpu_id": ["ref", "a", "b", "c"],
            "table": ["t1", "t1", "t2", "t2"],
            "throughput_per_gpu": [10.0, 20.0, 7.0, 21.0],
        }
    )
    fit = fit_log_performance(rows, "ref")
    # Anchor says a = 2, b = 1, c = 4 (ref = 1); the b/c set is shifted by the median
    # of its offsets, keeping c/b = 3 exactly: b = sqrt(4/3), c = 3 * sqrt(4/3).
    anchor = pl.DataFrame(
        {
            "gpu_id": ["ref", "a", "b", "c", "none"],
            "anchor_log": [0.0, math.log(2), 0.0, math.log(4), math.log(5)],
        }
    )
    placed = place_on_anchor(fit, anchor)
    p = dict(zip(placed["gpu_id"], placed["log_perf"], strict=True))
    ref = p["ref"]
    assert math.exp(p["a"] - ref) == pytest.approx(2.0)
    assert math.exp(p["c"] - p["b"]) == pytest.approx(3.0)
    assert math.exp(p["b"] - ref) == pytest.approx(math.sqrt(4 / 3))
    assert math.exp(p["none"] - ref) == pytest.approx(5.0)


def test_spec_estimate_uses_fixed_elasticities_with_few_gpus():
    """The path the pipeline runs: fewer than 8 measured GPUs -> Dettmers' 0.5/0.5 rule."""
    gpus = gpus_frame(
        [
            {"gpu_id": "a", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0},
            {"gpu_id": "c", "memory_bandwidth_gbs": 4000.0, "fp16_tensor_tflops": 400.0},
            {"gpu_id": "b", "memory_bandwidth_gbs": 4000.0, "fp16_tensor_tflops": 100.0},
        ]
    )
    debiased = pl.DataFrame(
        {
            "workload": ["training_16bit"] * 2,
            "gpu_id": ["a", "c"],
            "source": ["s"] * 2,
            "software_era": ["e"] * 2,
            "citation": ["c"] * 2,
            "model": ["m"] * 2,
            "precision": ["fp16"] * 2,
            "throughput_per_gpu": [100.0, 400.0],
        }
    )
    out = relative_performance(debiased, gpus, ModelParameters(reference_gpu="a"), DAY)
    b = out.filter((pl.col("workload") == "training_16bit") & (pl.col("gpu_id") == "b"))
    # 4x the bandwidth at equal compute -> sqrt(4) = 2x.
    assert b["method"].item() == "estimated" and b["value"].item() == pytest.approx(2.0)


def test_relative_performance_normalises_to_reference_and_marks_estimates():
    gpus = gpus_frame(
        [
            {"gpu_id": "ref", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0,
             "architecture": "volta"},
            {"gpu_id": "x", "memory_bandwidth_gbs": 2000.0, "fp16_tensor_tflops": 200.0,
             "architecture": "volta"},
            {
                "gpu_id": "new",
                "memory_bandwidth_gbs": 4000.0,
                "fp16_tensor_tflops": 400.0,
                "architecture": "hopper",
                "fp8_tensor_tflops": 800.0,
            },
        ]
    )  # fmt: skip
    debiased = pl.DataFrame(
        {
            "workload": ["training_16bit"] * 2 + ["inference_16bit"] * 2,
            "gpu_id": ["ref", "x", "ref", "x"],
            "source": ["s"] * 4,
            "software_era": ["e"] * 4,
            "citation": ["c"] * 4,
            "model": ["m"] * 4,
            "precision": ["fp16"] * 4,
            "throughput_per_gpu": [100.0, 180.0, 50.0, 100.0],
        }
    )
    params = ModelParameters(reference_gpu="ref")
    out = relative_performance(debiased, gpus, params, DAY)
    value = {(r["workload"], r["gpu_id"]): r for r in out.iter_rows(named=True)}
    assert value[("training_16bit", "ref")]["value"] == pytest.approx(1.0)
    assert value[("training_16bit", "x")]["value"] == pytest.approx(1.8)
    assert value[("training_16bit", "x")]["method"] == "measured"
    assert value[("training_16bit", "new")]["method"] == "estimated"
    # Fixed elasticities 0.5/0.5, level fitted on ref and x: new = 4x ref's specs.
    level = (math.log(1.8) - 0.5 * math.log(2) - 0.5 * math.log(2)) / 2
    assert value[("training_16bit", "new")]["value"] == pytest.approx(math.exp(level + math.log(4)))
    # Fewer than three measured inference/training ratios (the reference's own is 1 by
    # definition and never counts): Dettmers' rule, inference ranks like training.
    new16 = value[("inference_16bit", "new")]
    assert (new16["method"], new16["evidence"]) == ("estimated", "dettmers_rule")
    assert new16["value"] == pytest.approx(value[("training_16bit", "new")]["value"])
    assert value[("inference_16bit", "x")]["evidence"] == "measured"
    # 8-bit: FP8 doubles Hopper's speed; Volta, without 8-bit tensor units, runs 8-bit at
    # its 16-bit speed; nothing was measured in 8 bits, so every 8-bit row is an estimate.
    assert value[("inference_8bit", "x")]["value"] == pytest.approx(2.0)
    assert value[("inference_8bit", "new")]["value"] == pytest.approx(2 * new16["value"])
    assert set(out["reference_gpu"]) == {"ref"}
    eight = out.filter(pl.col("workload") == "inference_8bit")
    assert set(eight.filter(pl.col("gpu_id") != "ref")["method"]) == {"estimated"}
    assert set(eight["n_results"]) == {0}
    ref8, ref16 = value[("inference_8bit", "ref")], value[("inference_16bit", "ref")]
    assert ref8["value"] == pytest.approx(1.0) and ref16["value"] == pytest.approx(1.0)


def test_eight_bit_speedup_only_for_architectures_with_8bit_units():
    gpus = gpus_frame(
        [
            {
                "gpu_id": "ada",
                "memory_bandwidth_gbs": 1.0,
                "fp16_tensor_tflops": 82.6,
                "architecture": "ada",
                "fp8_tensor_tflops": 165.2,
            },
            {"gpu_id": "volta", "memory_bandwidth_gbs": 1.0, "fp16_tensor_tflops": 125.0,
             "architecture": "volta"},
        ]
    )  # fmt: skip
    speed = dict(eight_bit_speedup(gpus).select("gpu_id", "speedup").iter_rows())
    assert speed == {"ada": pytest.approx(2.0), "volta": 1.0}


# --- prices and cost ---------------------------------------------------------------------


def observations(prices, market="used", gpu="rtx-3090", day="2026-05-01"):
    return pl.DataFrame(
        {
            "observed_at": [dt.datetime.fromisoformat(day)] * len(prices),
            "source": ["ebay"] * len(prices),
            "market": [market] * len(prices),
            "gpu_id": [gpu] * len(prices),
            "price_usd": prices,
        }
    )


def test_daily_price_drops_mad_outliers_and_counts_them():
    out = daily_prices(observations([700.0, 720.0, 710.0, 690.0, 5.99, 4000.0]))
    row = out.row(0, named=True)
    assert row["n_dropped"] == 2
    assert row["n_observations"] == 4
    assert row["price_usd"] == pytest.approx(705.0)
    assert (row["price_min_usd"], row["price_max_usd"]) == (690.0, 720.0)


def test_daily_price_keeps_everything_when_mad_is_zero():
    row = daily_prices(observations([999.0])).row(0, named=True)
    assert (row["price_usd"], row["n_observations"], row["n_dropped"]) == (999.0, 1, 0)


def test_prices_today_mean_market_only_where_both_are_fresh():
    daily = pl.DataFrame(
        {
            "day": [
                dt.date(2026, 1, 1),
                dt.date(2026, 3, 1),
                dt.date(2026, 2, 1),
                dt.date(2026, 9, 1),
                dt.date(2025, 1, 1),
                dt.date(2026, 5, 1),
            ],
            "gpu_id": ["g"] * 4 + ["h"] * 2,
            "market": ["new", "new", "used", "used", "used", "new"],
            "price_usd": [1000.0, 900.0, 600.0, 1.0, 400.0, 800.0],
        }
    )
    out = prices_today(daily, pl.DataFrame({"gpu_id": ["g", "h"]}), ModelParameters(),
                       dt.date(2026, 6, 1), "random_walk")  # fmt: skip
    rows = {(r["gpu_id"], r["market"]): r for r in out.iter_rows(named=True)}
    assert rows["g", "new"]["price_usd"] == 900.0
    assert rows["g", "used"]["price_usd"] == 600.0  # the September price is after as_of
    assert rows["g", "mean"]["price_usd"] == 750.0
    assert rows["g", "mean"]["price_day"] == dt.date(2026, 2, 1)
    # h's used price is 516 days old: nowcast, so no mean of prices of different vintages.
    assert rows["h", "used"]["price_method"] == "nowcast"
    assert rows["h", "used"]["price_day"] == dt.date(2025, 1, 1)
    assert ("h", "mean") not in rows


def test_perf_per_dollar_by_hand():
    relative = pl.DataFrame(
        {"gpu_id": ["g"], "workload": ["training_16bit"], "value": [2.0], "method": ["measured"]}
    )
    prices = pl.DataFrame(
        {
            "gpu_id": ["g"],
            "market": ["new"],
            "price_usd": [1600.0],
            "price_day": [dt.date(2026, 5, 1)],
        }
    )
    gpus = gpus_frame(
        [{"gpu_id": "g", "memory_bandwidth_gbs": 1.0, "fp16_tensor_tflops": 1.0, "tdp_w": 450.0}]
    )
    out = perf_per_dollar(relative, prices, gpus, PARAMS, DAY).sort("system_gpus")
    one, two = out.row(0, named=True), out.row(1, named=True)
    yearly_1 = electricity_usd_per_year(450, 0.15, 0.175)
    assert one["electricity_usd_per_year"] == pytest.approx(yearly_1)
    assert one["total_cost_usd"] == pytest.approx(1600 + 1500 + 5 * yearly_1)
    assert one["perf_per_dollar"] == pytest.approx(2.0 / (1600 + 1500 + 5 * yearly_1))
    total_2 = 2 * 1600 + 2200 + 5 * 2 * yearly_1
    assert two["total_cost_usd"] == pytest.approx(total_2)
    assert two["perf_per_dollar"] == pytest.approx(2 * 2.0 * 0.95 / total_2)


def test_best_market_prefers_mean_then_new_then_used():
    perf = pl.DataFrame(
        {
            "gpu_id": ["a", "a", "a", "b"],
            "workload": ["w"] * 4,
            "system_gpus": [1] * 4,
            "market": ["new", "mean", "used", "used"],
            "perf_per_dollar": [1.0, 2.0, 3.0, 0.5],
        }
    )
    out = best_market(perf)
    assert dict(zip(out["gpu_id"], out["market"], strict=True)) == {"a": "mean", "b": "used"}


def test_cloud_vs_buy_uses_cheapest_offer_per_price_type():
    offers = pl.DataFrame(
        {
            "gpu_id": ["g", "g", "g"],
            "provider": ["p", "p", "p"],
            "price_type": ["on_demand", "on_demand", "spot"],
            "usd_per_gpu_hour": [3.0, 2.14, 1.0],
            "instance_type": ["big", "small", "small"],
            "region": ["us-east-1"] * 3,
            "observed_at": [dt.datetime(2026, 5, 20)] * 3,
        }
    )
    prices = pl.DataFrame({"gpu_id": ["g"], "market": ["new"], "price_usd": [700.0]})
    gpus = gpus_frame(
        [{"gpu_id": "g", "memory_bandwidth_gbs": 1.0, "fp16_tensor_tflops": 1.0, "tdp_w": 350.0}]
    )
    params = ModelParameters(host_watts=100.0, electricity_usd_per_kwh=0.12)
    out = cloud_vs_buy(offers, prices, gpus, params, DAY)
    row = out.filter((pl.col("price_type") == "on_demand") & (pl.col("utilization") == 0.15)).row(
        0, named=True
    )
    assert row["usd_per_gpu_hour"] == 2.14 and row["instance_type"] == "small"
    assert row["buy_cost_usd"] == 700 + 1500
    assert row["break_even_days"] == pytest.approx(
        break_even_days(2200, 2.14, 0.15, electricity_usd_per_year(450, 0.15, 0.12))
    )
    assert out.height == 2 * len(params.cloud_utilizations)


def test_parameters_from_environment_and_json():
    params = from_env(env={"GPUVALUE_ELECTRICITY_USD_PER_KWH": "0.30", "GPUVALUE_YEARS": "3"})
    assert params.electricity_usd_per_kwh == 0.30 and params.years == 3.0
    assert '"electricity_usd_per_kwh": 0.3' in params.to_json()
    with pytest.raises(ValueError, match="GPUVALUE_UTILIZATION"):
        from_env(env={"GPUVALUE_UTILIZATION": "lots"})
