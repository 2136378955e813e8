"""Fitted debiasing constants, intervals on relative performance, and validation figures."""

import dataclasses
import datetime as dt
import math
import os
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from model.bridging import ESTIMATED_SPEEDUP_HALF
from model.debias import debias, lambda_bert_multi_gpu
from model.fit import (
    candidate_pairs,
    constant_tags,
    dettmers_constants,
    efficiency_table,
    fit_batch_gain,
    fit_constants,
    fit_scaling_efficiency,
    mark_used,
    median_interval,
    scaling_pairs,
    t975,
    with_interpolated_counts,
)
from model.parameters import ModelParameters, from_env
from model.performance import relative_performance
from model.performance_rows import REFERENCE_8BIT
from model.spec_estimator import choose_spec_model, leave_one_gpu_out
from model.validation import (
    a100_v100_checks,
    inference_bridge_checks,
    model_validation,
    multi_gpu_checks,
    multi_gpu_predictions,
)
from sources.benchmarks.flags import SUPER_LINEAR_TOLERANCE
from sources.bundled import DATA_DIR, read_benchmark_figures
from warehouse.export import open_published

DAY = dt.date(2026, 5, 20)
PARAMS = ModelParameters()


def bench(rows):
    base = {
        "source": "dle",
        "software_era": "e1",
        "citation": "readme-1",
        "task": "training",
        "precision": "fp16",
        "workload_class": "cnn",
        "model": "ssd",
        "num_gpus": 1,
        "unit": "images/s",
        "flags": "",
    }
    return pl.DataFrame([{**base, **r} for r in rows])


def catalog(rows):
    base = {"architecture": "ampere", "form_factor": "sxm", "fp8_tensor_tflops": None}
    base |= {"l2_cache_mb": 40.0, "tdp_w": 300.0}
    return pl.DataFrame(
        [{**base, **r} for r in rows],
        schema={
            "gpu_id": pl.Utf8,
            "memory_bandwidth_gbs": pl.Float64,
            "fp16_tensor_tflops": pl.Float64,
            "architecture": pl.Utf8,
            "form_factor": pl.Utf8,
            "fp8_tensor_tflops": pl.Float64,
            "l2_cache_mb": pl.Float64,
            "tdp_w": pl.Float64,
        },
    )


def sweep(gpu, level, gain, batches, **extra):
    """A GPU measured at several batch sizes with throughput level * (1 + gain)^log2(b)."""
    return [
        {"gpu_id": gpu, "batch_size_per_gpu": b, "throughput": level * (1 + gain) ** math.log2(b)}
        | extra
        for b in batches
    ]


# --- t quantiles ---------------------------------------------------------------------------


def test_t_quantiles_match_tables():
    assert t975(1) == pytest.approx(12.706)
    assert t975(10) == pytest.approx(2.228)
    # Beyond the table the expansion is within 0.1 % of the exact values.
    assert t975(40) == pytest.approx(2.021, rel=1e-3)
    assert t975(120) == pytest.approx(1.980, rel=1e-3)
    with pytest.raises(ValueError):
        t975(0)


# --- batch-size gain -------------------------------------------------------------------


def test_batch_gain_is_recovered_from_within_gpu_sweeps():
    # Three GPUs of different speed, each swept at its own batch sizes; gain 20 %.
    rows = bench(
        sweep("a", 100.0, 0.20, [32, 64, 128])
        + sweep("b", 400.0, 0.20, [64, 128])
        + sweep("c", 50.0, 0.20, [8, 16, 32], model="maskrcnn")
    )
    fit = fit_batch_gain(rows).row(0, named=True)
    assert fit["key"] == "cnn"
    assert fit["value"] == pytest.approx(0.20)
    # Noise-free data: the interval collapses onto the value.
    assert fit["ci_low"] == pytest.approx(0.20) and fit["ci_high"] == pytest.approx(0.20)
    assert (fit["n"], fit["n_groups"], fit["n_gpus"]) == (8, 3, 3)
    assert "batch sizes 8-128" in fit["data_used"]


def test_batch_gain_ignores_differences_between_gpus():
    # Big-memory GPUs at big batches are faster, but each GPU has one batch size: there is
    # no within-GPU variation, so nothing is fitted (GPU speed is not confused with batch).
    rows = bench(
        [
            {"gpu_id": "small", "batch_size_per_gpu": 64, "throughput": 100.0},
            {"gpu_id": "big", "batch_size_per_gpu": 1024, "throughput": 900.0},
        ]
    )
    assert fit_batch_gain(rows).is_empty()


def test_batch_gain_uses_16bit_unflagged_rows_and_keys_inference_apart():
    rows = bench(
        sweep("a", 100.0, 0.10, [8, 16])
        + sweep("a", 100.0, 0.90, [8, 16], precision="tf32")
        + sweep("b", 100.0, 0.90, [8, 16], flags="outlier")
        + sweep("b", 100.0, 0.30, [1, 2], task="inference")
    )
    fits = {r["key"]: r for r in fit_batch_gain(rows).iter_rows(named=True)}
    assert set(fits) == {"cnn", "inference:cnn"}
    assert fits["cnn"]["value"] == pytest.approx(0.10)
    assert fits["inference:cnn"]["value"] == pytest.approx(0.30)
    # One cluster: no interval.
    assert fits["cnn"]["ci_low"] is None


def test_batch_gain_interval_is_cluster_robust():
    # Two clusters with gains 10 % and 30 %: the estimate lies between and the t(1)
    # interval is wide, so the fit is not well determined.
    rows = bench(sweep("a", 100.0, 0.10, [8, 16]) + sweep("b", 100.0, 0.30, [8, 16]))
    fit = fit_batch_gain(rows).row(0, named=True)
    assert 0.10 < fit["value"] < 0.30
    assert fit["ci_low"] < 0.10 and fit["ci_high"] > 0.30
    constants = fit_constants(rows, None, PARAMS)
    gain = constants.filter(
        (pl.col("parameter_set") == "fitted") & (pl.col("name") == "batch_gain_per_doubling")
    ).row(0, named=True)
    assert gain["determined"] is False


# --- scaling efficiency --------------------------------------------------------------------


def scaling_rows():
    gpus = catalog(
        [
            {"gpu_id": "x", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0},
            {"gpu_id": "y", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0},
            {
                "gpu_id": "p",
                "memory_bandwidth_gbs": 900.0,
                "fp16_tensor_tflops": 80.0,
                "form_factor": "pcie",
            },
        ]
    )
    rows = bench(
        [
            # x: e_8 = 0.9 and 0.8 on two models; y: e_8 = 0.85.
            {"gpu_id": "x", "batch_size_per_gpu": 64, "throughput": 100.0},
            {"gpu_id": "x", "num_gpus": 8, "batch_size_per_gpu": 64, "throughput": 720.0},
            {"gpu_id": "x", "model": "m2", "batch_size_per_gpu": 64, "throughput": 50.0},
            {
                "gpu_id": "x",
                "model": "m2",
                "num_gpus": 8,
                "batch_size_per_gpu": 64,
                "throughput": 320.0,
            },  # fmt: skip
            {"gpu_id": "y", "batch_size_per_gpu": 32, "throughput": 100.0},
            {"gpu_id": "y", "num_gpus": 8, "batch_size_per_gpu": 32, "throughput": 680.0},
            # Batch size changed between 1 and 8 GPUs: not a pair.
            {"gpu_id": "y", "num_gpus": 8, "batch_size_per_gpu": 16, "throughput": 600.0},
            # Super-linear: excluded.
            {"gpu_id": "p", "batch_size_per_gpu": 8, "throughput": 10.0},
            {"gpu_id": "p", "num_gpus": 4, "batch_size_per_gpu": 8, "throughput": 44.0},
            # PCIe, e_4 = 0.75.
            {"gpu_id": "p", "model": "m2", "batch_size_per_gpu": 8, "throughput": 10.0},
            {
                "gpu_id": "p",
                "model": "m2",
                "num_gpus": 4,
                "batch_size_per_gpu": 8,
                "throughput": 30.0,
            },  # fmt: skip
            # Lambda BERT multi-GPU rows are never used for scaling.
            {
                "gpu_id": "p",
                "source": "lambda",
                "model": "bert_base_squad",
                "batch_size_per_gpu": 8,
                "throughput": 10.0,
            },  # fmt: skip
            {
                "gpu_id": "p",
                "source": "lambda",
                "model": "bert_base_squad",
                "num_gpus": 4,
                "batch_size_per_gpu": 8,
                "throughput": 20.0,
            },  # fmt: skip
        ]
    )
    return rows, gpus


def test_scaling_pairs_match_equal_batch_and_drop_super_linear_and_lambda_bert():
    rows, gpus = scaling_rows()
    pairs = scaling_pairs(rows, gpus).sort("gpu_id", "model")
    assert pairs.select("gpu_id", "model", "n", "interconnect").rows() == [
        ("p", "m2", 4, "pcie"),
        ("x", "m2", 8, "nvlink"),
        ("x", "ssd", 8, "nvlink"),
        ("y", "ssd", 8, "nvlink"),
    ]
    assert pairs["efficiency"].to_list() == pytest.approx([0.75, 0.8, 0.9, 0.85])


def test_scaling_pairs_keep_noise_up_to_the_flag_tolerance_and_count_what_they_drop():
    """Pairs with 1 < e <= SUPER_LINEAR_TOLERANCE are noise around linear scaling: kept."""
    rows, gpus = scaling_rows()
    assert SUPER_LINEAR_TOLERANCE == pytest.approx(1.05)
    extra = bench(
        [
            {"gpu_id": "p", "model": "m3", "batch_size_per_gpu": 8, "throughput": 10.0},
            # e = 1.03: inside the tolerance, kept.
            {"gpu_id": "p", "model": "m3", "num_gpus": 4, "batch_size_per_gpu": 8,
             "throughput": 41.2},
            # A flagged n-GPU row: counted as excluded with its flag.
            {"gpu_id": "p", "model": "m4", "batch_size_per_gpu": 8, "throughput": 10.0},
            {"gpu_id": "p", "model": "m4", "num_gpus": 4, "batch_size_per_gpu": 8,
             "throughput": 60.0, "flags": "super_linear"},
        ]
    )  # fmt: skip
    rows = pl.concat([rows, extra])
    pairs = scaling_pairs(rows, gpus).filter(pl.col("gpu_id") == "p").sort("model")
    assert pairs["model"].to_list() == ["m2", "m3"]
    assert pairs["efficiency"].to_list() == pytest.approx([0.75, 1.03])
    reasons = candidate_pairs(rows, gpus).filter(pl.col("excluded").is_not_null())
    assert sorted(reasons["excluded"].to_list()) == [
        "flagged:super_linear",
        "lambda_bert",
        "super_linear",
    ]
    fit = fit_scaling_efficiency(candidate_pairs(rows, gpus)).filter(pl.col("key") == "4|pcie")
    assert fit["value"][0] == pytest.approx((0.75 + 1.03) / 2)  # one GPU: median of its pairs
    assert fit["data_used"][0].endswith(
        "excluded 1 flagged super_linear, 1 Lambda BERT/SQuAD (known super-linear), "
        "1 super-linear (e > 1.05) pairs"
    )


def test_scaling_efficiency_is_the_median_over_gpus_of_each_gpus_median():
    rows, gpus = scaling_rows()
    fits = {r["key"]: r for r in fit_scaling_efficiency(scaling_pairs(rows, gpus)).to_dicts()}
    # x: median(0.9, 0.8) = 0.85; y: 0.85. Two GPUs are too few for a 95 % interval.
    assert fits["8|nvlink"]["value"] == pytest.approx(0.85)
    assert fits["8|nvlink"]["ci_low"] is None
    assert (fits["8|nvlink"]["n"], fits["8|nvlink"]["n_gpus"]) == (3, 2)
    assert fits["4|pcie"]["value"] == pytest.approx(0.75) and fits["4|pcie"]["ci_low"] is None


def test_median_interval_uses_binomial_order_statistics():
    assert median_interval([0.9, 0.8, 0.7, 0.95, 0.85]) is None
    # Six values: (min, max) covers 1 - 2/64 = 96.9 %; nine: the 2nd and 8th values.
    assert median_interval([6, 1, 5, 2, 4, 3]) == (1, 6)
    assert median_interval(list(range(9))) == (1, 7)


# --- which constants drive the debiasing -------------------------------------------------------


def determined_fixture(pcie_gpus=8, counts=(2, 4, 8)):
    """Eight NVLink GPUs with e_n = 0.80 exactly, `pcie_gpus` PCIe GPUs with e_n = 0.90,
    measured on 1 and each of `counts` GPUs, plus a CNN sweep with gain 25 %."""
    gpus = catalog(
        [
            {"gpu_id": f"g{i}", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0}
            for i in range(8)
        ]
        + [
            {"gpu_id": f"p{i}", "memory_bandwidth_gbs": 900.0, "fp16_tensor_tflops": 80.0,
             "form_factor": "pcie"}
            for i in range(pcie_gpus)
        ]
        + [{"gpu_id": "solo", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0}]
        + [{"gpu_id": "solo-pcie", "memory_bandwidth_gbs": 900.0, "fp16_tensor_tflops": 80.0,
            "form_factor": "pcie"}]
    )  # fmt: skip
    rows = []
    for i in range(8):
        rows.append({"gpu_id": f"g{i}", "batch_size_per_gpu": 64, "throughput": 100.0 + i})
        rows += [
            {"gpu_id": f"g{i}", "num_gpus": n, "batch_size_per_gpu": 64,
             "throughput": n * 0.8 * (100.0 + i)}
            for n in counts
        ]  # fmt: skip
        rows += sweep(f"g{i}", 10.0 + i, 0.25, [16, 32], model="sweep")
    for i in range(pcie_gpus):
        rows.append({"gpu_id": f"p{i}", "batch_size_per_gpu": 64, "throughput": 50.0 + i})
        rows += [
            {"gpu_id": f"p{i}", "num_gpus": n, "batch_size_per_gpu": 64,
             "throughput": n * 0.9 * (50.0 + i)}
            for n in counts
        ]  # fmt: skip
    # GPUs measured on 8 GPUs only: their per-GPU figure needs e_8.
    rows.append({"gpu_id": "solo", "num_gpus": 8, "batch_size_per_gpu": 64, "throughput": 640.0})
    rows.append(
        {"gpu_id": "solo-pcie", "num_gpus": 8, "batch_size_per_gpu": 64, "throughput": 360.0}
    )
    return bench(rows), gpus


@pytest.mark.parametrize(
    ("mode", "efficiency", "source"),
    [("auto", 0.80, "fitted:8|nvlink"), ("dettmers", 0.86, "dettmers:8")],
)
def test_constants_mode_selects_the_set_and_every_row_records_it(mode, efficiency, source):
    rows, gpus = determined_fixture()
    params = dataclasses.replace(PARAMS, constants=mode)
    constants = fit_constants(rows, gpus, params)
    out = debias(rows, params, DAY, constants, gpus)
    solo = out.filter(pl.col("gpu_id") == "solo").row(0, named=True)
    assert solo["multi_gpu_efficiency"] == pytest.approx(efficiency)
    assert solo["efficiency_source"] == source
    assert solo["throughput_per_gpu"] == pytest.approx(640.0 / (8 * efficiency))
    assert solo["interconnect"] == "nvlink" and solo["parameter_set"] == mode
    assert solo["era_term"] == "dle|e1|readme-1|ssd|fp16"
    gain = "fitted:cnn" if mode == "auto" else "dettmers:cnn"
    assert set(out["batch_gain_source"]) == {gain}
    assert out.filter(pl.col("model") == "sweep")["batch_gain"].to_list()[0] == pytest.approx(
        0.25 if mode == "auto" else 0.136
    )
    # With the fitted gain the sweep's rows agree after correction to the reference batch.
    if mode == "auto":
        g0 = out.filter((pl.col("model") == "sweep") & (pl.col("gpu_id") == "g0"))
        assert g0["throughput_per_gpu"].to_list() == pytest.approx(
            [g0["throughput_per_gpu"][0]] * 2
        )
    used = mark_used(constants, out).filter(pl.col("used"))
    tags = set(used["parameter_set"] + ":" + used["key"])
    assert source in tags and gain in tags
    # The cost model's system sizes count as well: its 4-GPU systems apply the same source's
    # e_4 (fitted for every size under auto, Dettmers' for every size otherwise).
    costed = mark_used(constants, out.filter(pl.col("num_gpus") != 4), mode, (1, 4))
    tags = set(costed.filter(pl.col("used"))["parameter_set"] + ":" + costed.filter(
        pl.col("used"))["key"])  # fmt: skip
    four = {"fitted:4|nvlink", "fitted:4|pcie"} if mode == "auto" else {"dettmers:4"}
    assert {"dettmers:1", source} | four <= tags and "dettmers:2" not in tags
    # Where the fitted e_8 drives 8-GPU systems, Dettmers' e_8 is not "used" by them (the
    # fallback row for GPUs outside the catalog is not a system the cost model prices).
    if mode == "auto":
        eight = mark_used(constants, out.filter(pl.col("num_gpus") != 8), mode, (8,))
        tags = set(
            eight.filter(pl.col("used"))["parameter_set"]
            + ":"
            + eight.filter(pl.col("used"))["key"]
        )
        assert "dettmers:8" not in tags and source in tags


@pytest.mark.parametrize("mode", ["auto", "fitted"])
def test_efficiency_comes_from_one_source_for_every_gpu_count(mode):
    """Fitted e_n for every size and interconnect, or Dettmers' for all: never mixed."""
    params = dataclasses.replace(PARAMS, constants=mode)
    # Fits at 2, 4 and 8 GPUs for both interconnects: each gets its own fitted e_n.
    rows, gpus = determined_fixture(pcie_gpus=8)
    out = debias(rows, params, DAY, gpus=gpus).filter(pl.col("gpu_id").str.starts_with("solo"))
    assert sorted(out.select("gpu_id", "efficiency_source", "multi_gpu_efficiency").rows()) == [
        ("solo", "fitted:8|nvlink", pytest.approx(0.80)),
        ("solo-pcie", "fitted:8|pcie", pytest.approx(0.90)),
    ]
    # Two PCIe GPUs: no interval for the PCIe fits, so under auto the NVLink fits are not
    # used either; under 'fitted' any existing fit counts. Without PCIe pairs at all, or
    # with determined 8-GPU fits but none at 2 and 4 GPUs, no mode uses a fitted e_n.
    cases = ((2, (2, 4, 8), mode == "fitted"), (0, (2, 4, 8), False), (8, (8,), False))
    for pcie_gpus, counts, fitted_ok in cases:
        rows, gpus = determined_fixture(pcie_gpus=pcie_gpus, counts=counts)
        constants = fit_constants(rows, gpus, params)
        out = debias(rows, params, DAY, constants, gpus)
        solo = out.filter(pl.col("gpu_id").str.starts_with("solo"))
        expected = {"fitted:8|nvlink", "fitted:8|pcie"} if fitted_ok else {"dettmers:8"}
        assert set(solo["efficiency_source"]) == expected
        table = efficiency_table(constants, mode).filter(pl.col("num_gpus") > 1)
        kinds = {source.split(":")[0] for source in table["source"].drop_nulls()}
        assert kinds == ({"fitted", "dettmers"} if fitted_ok else {"dettmers"})
        if fitted_ok:  # Dettmers' only where the interconnect is unknown
            assert set(table.filter(pl.col("interconnect").is_null())["source"]) == {
                "dettmers:2", "dettmers:4", "dettmers:8"}  # fmt: skip
        eligible = constants.filter(
            pl.col("used") & (pl.col("name") == "multi_gpu_efficiency")
            & (pl.col("parameter_set") == "fitted")
        )  # fmt: skip
        assert bool(eligible.height) == fitted_ok


def test_efficiency_is_interpolated_between_counts_never_extrapolated():
    table = efficiency_table(dettmers_constants(PARAMS), "dettmers")
    out = with_interpolated_counts(table, [6, 16]).filter(pl.col("interconnect") == "pcie")
    six = out.filter(pl.col("num_gpus") == 6).row(0, named=True)
    # log2(6) lies 58.5 % of the way from 4 to 8 GPUs: 0.875 + 0.585 * (0.86 - 0.875).
    assert six["efficiency"] == pytest.approx(0.875 + (math.log2(6) - 2) * (0.86 - 0.875))
    assert six["source"] == "interpolated:4-8|dettmers:4|dettmers:8"
    assert constant_tags([six["source"], "inference:replicas"]) == {"dettmers:4", "dettmers:8"}
    assert out.filter(pl.col("num_gpus") == 16).is_empty()


def test_lambda_multi_gpu_bert_rows_are_left_out_of_the_debiased_rows_and_counted():
    rows = bench(
        [
            {"gpu_id": "a", "source": "lambda", "model": "bert_base_squad", "num_gpus": 8,
             "batch_size_per_gpu": 32, "throughput": 900.0, "workload_class": "transformer"},
            {"gpu_id": "b", "source": "lambda", "model": "bert_base_squad", "num_gpus": 1,
             "batch_size_per_gpu": 32, "throughput": 100.0, "workload_class": "transformer"},
            {"gpu_id": "a", "source": "lambda", "model": "ssd", "num_gpus": 8,
             "batch_size_per_gpu": 32, "throughput": 600.0},
        ]
    )  # fmt: skip
    out = debias(rows, PARAMS, DAY)
    assert sorted(out.select("gpu_id", "model").rows()) == [
        ("a", "ssd"),
        ("b", "bert_base_squad"),
    ]
    assert lambda_bert_multi_gpu(rows) == 1


def test_fitted_mode_uses_an_undetermined_fit_and_auto_does_not():
    rows = bench(sweep("a", 100.0, 0.40, [8, 16]) + sweep("b", 100.0, 0.30, [8, 16]))
    auto = debias(rows, PARAMS, DAY)
    fitted = debias(rows, dataclasses.replace(PARAMS, constants="fitted"), DAY)
    assert set(auto["batch_gain_source"]) == {"dettmers:cnn"}
    assert set(fitted["batch_gain_source"]) == {"fitted:cnn"}
    with pytest.raises(ValueError, match="constants must be"):
        fit_constants(rows, None, dataclasses.replace(PARAMS, constants="mine"))


def test_gpu_count_without_any_constant_is_left_out_not_guessed():
    rows = bench([{"gpu_id": "a", "num_gpus": 16, "batch_size_per_gpu": 8, "throughput": 1.0}])
    assert debias(rows, PARAMS, DAY).is_empty()


def test_constants_parameter_from_environment_and_json():
    params = from_env(env={"GPUVALUE_CONSTANTS": "dettmers", "GPUVALUE_FIT_MAX_CI_WIDTH": "0.2"})
    assert params.constants == "dettmers" and params.fit_max_ci_width == 0.2
    assert '"constants": "dettmers"' in params.to_json()


# --- relative performance intervals and the spec estimator ----------------------------------


def spec_catalog(n=10):
    """GPUs whose true performance is exactly sqrt(bandwidth x tensor TFLOPS) / 100."""
    rows = [
        {
            "gpu_id": f"g{i}",
            "memory_bandwidth_gbs": 500.0 * (1 + i),
            "fp16_tensor_tflops": 50.0 * (1 + (i * 7) % 5),
        }
        for i in range(n)
    ]
    return catalog(rows + [{"gpu_id": "new", "memory_bandwidth_gbs": 3000.0,
                            "fp16_tensor_tflops": 400.0}])  # fmt: skip


def true_perf(gpus, gpu):
    r = gpus.filter(pl.col("gpu_id") == gpu).row(0, named=True)
    return math.sqrt(r["memory_bandwidth_gbs"] * r["fp16_tensor_tflops"]) / 100


def test_leave_one_gpu_out_is_exact_when_specs_explain_performance():
    gpus = spec_catalog()
    measured = pl.DataFrame(
        {
            "gpu_id": [f"g{i}" for i in range(10)],
            "log_perf": [math.log(true_perf(gpus, f"g{i}")) for i in range(10)],
        }
    )
    logo = leave_one_gpu_out(measured, gpus)
    dettmers = logo.filter(pl.col("model") == "dettmers_half_half")
    assert dettmers.height == 10
    assert dettmers["ape"].max() == pytest.approx(0.0, abs=1e-9)
    assert choose_spec_model(logo) == "dettmers_half_half"  # ties go to the simpler


def debiased_frame(rows):
    base = {"source": "s", "software_era": "e", "citation": "c", "precision": "fp16"}
    return pl.DataFrame([{**base, **r} for r in rows])


def test_relative_performance_intervals():
    gpus = spec_catalog()
    noise = [1.0, 1.05, 0.95, 1.02, 0.98, 1.03, 0.97, 1.01, 0.99, 1.04]
    rows = [
        {"workload": w, "gpu_id": f"g{i}", "model": m,
         "throughput_per_gpu": k * true_perf(gpus, f"g{i}") * (noise[i] if m == "m1" else 1)}
        for i in range(10)
        for m, k in (("m1", 100.0), ("m2", 30.0))
        for w in ("training_16bit", "inference_16bit")
    ]  # fmt: skip
    params = ModelParameters(reference_gpu="g0")
    out = relative_performance(debiased_frame(rows), gpus, params, DAY)
    by = {(r["workload"], r["gpu_id"]): r for r in out.iter_rows(named=True)}
    ref = by[("training_16bit", "g0")]
    assert (ref["value"], ref["value_low"], ref["value_high"]) == pytest.approx((1, 1, 1))
    for i in range(1, 10):
        r = by[("training_16bit", f"g{i}")]
        assert r["value_low"] < r["value"] < r["value_high"]
        assert r["interval_method"].startswith("least-squares standard error, t(")
    new = by[("training_16bit", "new")]
    assert new["method"] == "estimated"
    assert new["value_low"] <= new["value"] <= new["value_high"]
    assert "leave-one-GPU-out" in new["interval_method"]
    # 8-bit: the 16-bit value and interval, the interval widened because these ampere
    # GPUs have no INT8 field, so their 2x speedup is the architecture's (estimated).
    e16, e8 = by[("inference_16bit", "g3")], by[("inference_8bit", "g3")]
    assert e8["value"] == pytest.approx(e16["value"])
    half16 = math.log(e16["value_high"] / e16["value_low"]) / 2
    half8 = math.log(e8["value_high"] / e8["value_low"]) / 2
    assert half8 == pytest.approx(math.hypot(half16, ESTIMATED_SPEEDUP_HALF))


def test_estimated_inference_interval_uses_t_on_the_ratios_degrees_of_freedom():
    """Three measured inference/training ratios besides the reference's (1 by definition,
    never counted): 2 degrees of freedom, t = 4.303, not 1.96."""
    gpus = spec_catalog()
    ratio = {"g0": 1.0, "g1": 1.1, "g2": 0.9, "g3": 1.0}
    rows = [
        {"workload": "training_16bit", "gpu_id": f"g{i}", "model": m,
         "throughput_per_gpu": k * true_perf(gpus, f"g{i}")}
        for i in range(10)
        for m, k in (("m1", 100.0), ("m2", 30.0))
    ] + [
        {"workload": "inference_16bit", "gpu_id": g, "model": m,
         "throughput_per_gpu": k * true_perf(gpus, g) * r}
        for g, r in ratio.items()
        for m, k in (("m1", 50.0), ("m2", 20.0))
    ]  # fmt: skip
    out = relative_performance(debiased_frame(rows), gpus, ModelParameters(reference_gpu="g0"), DAY)
    g5 = out.filter((pl.col("workload") == "inference_16bit") & (pl.col("gpu_id") == "g5"))
    g5 = g5.row(0, named=True)
    assert g5["method"] == "estimated"
    # Noise-free training: its interval has zero width, so the half-width is t(2) x sd,
    # widened for a new GPU of an architecture with 3 measured ratios (plus the 2
    # pseudo-GPUs it is pooled with): x sqrt(1 + 1/5).
    sd = float(np.std(np.log([ratio[g] for g in ("g1", "g2", "g3")]), ddof=1))
    half = t975(2) * sd * math.sqrt(1 + 1 / 5)
    assert math.log(g5["value_high"] / g5["value"]) == pytest.approx(half)
    assert math.log(g5["value"] / g5["value_low"]) == pytest.approx(half)
    assert "t(2) x the sd" in g5["interval_method"] and g5["evidence"] == "bridged"


def test_noise_free_measurements_have_zero_width_intervals():
    gpus = spec_catalog(3)
    rows = [
        {"workload": "training_16bit", "gpu_id": f"g{i}", "model": m,
         "throughput_per_gpu": k * true_perf(gpus, f"g{i}")}
        for i in range(3)
        for m, k in (("m1", 100.0), ("m2", 30.0))
    ]  # fmt: skip
    out = relative_performance(
        debiased_frame(rows), gpus, ModelParameters(reference_gpu="g0"), DAY
    ).filter(pl.col("workload") == "training_16bit")
    g2 = out.filter(pl.col("gpu_id") == "g2").row(0, named=True)
    assert g2["value"] == pytest.approx(true_perf(gpus, "g2") / true_perf(gpus, "g0"))
    assert g2["value_low"] == pytest.approx(g2["value"]) == pytest.approx(g2["value_high"])


def test_reference_eight_bit_row_is_one_by_definition_and_says_so():
    gpus = spec_catalog()
    rows = [
        {"workload": w, "gpu_id": f"g{i}", "model": m,
         "throughput_per_gpu": k * true_perf(gpus, f"g{i}") * (1 + 0.01 * (i % 3))}
        for i in range(10)
        for m, k in (("m1", 100.0), ("m2", 30.0))
        for w in ("training_16bit", "inference_16bit")
    ]  # fmt: skip
    out = relative_performance(debiased_frame(rows), gpus, ModelParameters(reference_gpu="g0"), DAY)
    ref8 = out.filter((pl.col("workload") == "inference_8bit") & (pl.col("gpu_id") == "g0"))
    ref8 = ref8.row(0, named=True)
    assert (ref8["value"], ref8["value_low"], ref8["value_high"]) == pytest.approx((1, 1, 1))
    assert (ref8["method"], ref8["n_results"]) == ("estimated", 0)
    # No 8-bit result at all: Dettmers' rule, said on the row.
    assert ref8["interval_method"] == REFERENCE_8BIT and ref8["evidence"] == "dettmers_rule"


# --- validation ----------------------------------------------------------------------------


def test_multi_gpu_prediction_with_fitted_efficiency_beats_dividing_by_n():
    rows, gpus = determined_fixture(pcie_gpus=0, counts=(8,))
    predictions = multi_gpu_predictions(rows, gpus, PARAMS)
    assert predictions.height == 8
    # Every GPU scales at exactly 0.8: the leave-one-GPU-out fit predicts it exactly,
    # dividing by n is 20 % off (0.8 t_1) and Dettmers' 0.86 is 1 - 0.8/0.86 off.
    assert predictions["ape_fitted"].to_list() == pytest.approx([0.0] * 8, abs=1e-12)
    assert predictions["ape_naive"].to_list() == pytest.approx([0.2] * 8)
    assert predictions["ape_dettmers"].to_list() == pytest.approx([1 - 0.8 / 0.86] * 8)
    checks = {(r["subject"], r["metric"]): r for r in multi_gpu_checks(predictions)}
    row = checks[("all pairs", "median_ape_fitted_vs_divide_by_n")]
    assert row["value"] == pytest.approx(0.0, abs=1e-12)
    assert row["reference_value"] == pytest.approx(0.2)
    assert row["n"] == 8 and "8 pairs on 8 GPUs" in row["detail"]


def test_a100_v100_speedup_is_debiased_per_class():
    # Two tables measuring both GPUs at their own batch sizes; with the batch correction the
    # A100/V100 ratio is its true 1.5x, without it larger.
    gpus = catalog(
        [
            {"gpu_id": "a100-sxm4-40gb", "memory_bandwidth_gbs": 1555.0,
             "fp16_tensor_tflops": 312.0},
            {"gpu_id": "v100-sxm2-16gb", "memory_bandwidth_gbs": 900.0,
             "fp16_tensor_tflops": 125.0},
        ]
    )  # fmt: skip
    rows = bench(
        [
            {"gpu_id": "a100-sxm4-40gb", "batch_size_per_gpu": 256,
             "throughput": 150.0 * 1.136**2},
            {"gpu_id": "v100-sxm2-16gb", "batch_size_per_gpu": 64, "throughput": 100.0},
            {"gpu_id": "a100-sxm4-40gb", "model": "m2", "batch_size_per_gpu": 256,
             "throughput": 15.0 * 1.136**2},
            {"gpu_id": "v100-sxm2-16gb", "model": "m2", "batch_size_per_gpu": 64,
             "throughput": 10.0},
        ]
    )  # fmt: skip
    checks = {r["metric"]: r for r in a100_v100_checks(rows, gpus, PARAMS, DAY)
              if r["subject"].startswith("cnn")}  # fmt: skip
    assert checks["speedup_dettmers_constants"]["value"] == pytest.approx(1.5)
    assert checks["speedup_no_batch_correction"]["value"] == pytest.approx(1.5 * 1.136**2)
    assert checks["speedup"]["reference_value"] == 1.45
    assert "Tables measuring both" in checks["speedup"]["detail"]


def test_model_validation_has_every_check_with_a_detail():
    rows, gpus = determined_fixture()
    constants = fit_constants(rows, gpus, PARAMS)
    debiased = debias(rows, PARAMS, DAY, constants, gpus)
    out = model_validation(rows, gpus, debiased, mark_used(constants, debiased), PARAMS, DAY)
    assert {"batch_gain", "multi_gpu_prediction", "spec_estimator_logo"} <= set(out["check_name"])
    assert out["detail"].null_count() == 0 and (out["detail"].str.len_chars() > 20).all()
    assert set(out["run_date"]) == {DAY}


# --- the bundled snapshot, end to end ------------------------------------------------------


def test_pipeline_stores_constants_and_validation_figures(built):
    con = open_published(built.published)
    try:
        constants = con.sql("SELECT * FROM model_constants").pl()
        validation = con.sql("SELECT * FROM model_validation").pl()
        debiased = con.sql("SELECT * FROM benchmark_debiased").pl()
        relative = con.sql("SELECT * FROM relative_performance").pl()
    finally:
        con.close()
    # Dettmers' constants beside fitted ones, each fit with the data it used.
    dettmers = constants.filter(pl.col("parameter_set") == "dettmers")
    assert dict(zip(dettmers["key"], dettmers["value"], strict=False))["cnn"] == 0.136
    fitted = constants.filter(pl.col("parameter_set") == "fitted")
    assert {"cnn", "transformer"} <= set(fitted["key"])
    assert (fitted["n"] > 0).all() and (fitted["data_used"].str.len_chars() > 0).all()
    assert set(validation["check_name"]) >= {
        "batch_gain",
        "multi_gpu_prediction",
        "spec_estimator_logo",
        "a100_vs_v100",
    }
    speedups = validation.filter(pl.col("check_name") == "a100_vs_v100")
    assert set(speedups["reference_value"]) == {1.45, 1.70}
    # Every debiased row says which constants it applied; every used constant is applied,
    # by a debiased row or by the cost model to a system size (the e_n it resolves).
    assert debiased["efficiency_source"].null_count() == 0
    used = constants.filter(pl.col("used"))
    params = ModelParameters()
    # Systems are built from catalog GPUs, which always have an interconnect.
    costed = efficiency_table(constants, params.constants).filter(
        pl.col("num_gpus").is_in(list(params.system_sizes)) & pl.col("interconnect").is_not_null()
    )
    applied = constant_tags(debiased["efficiency_source"]) | set(
        debiased["batch_gain_source"].drop_nulls()
    )
    assert set(used["parameter_set"] + ":" + used["key"]) == applied | set(costed["source"])
    # Intervals bracket every relative-performance value.
    bounded = relative.filter(pl.col("value_low").is_not_null())
    assert bounded.height == relative.height
    assert (bounded["value_low"] <= bounded["value"] * (1 + 1e-9)).all()
    assert (bounded["value"] <= bounded["value_high"] * (1 + 1e-9)).all()


# --- traceability of the transcribed batch sweeps --------------------------------------------

REALDATA = os.environ.get("GPUVALUE_REALDATA")


@pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")
def test_every_batch_sweep_figure_is_in_the_cited_dle_readme_table():
    tidy_path = Path(REALDATA) / "benchmarks" / "nvidia_dle" / "dle_perf_tidy.csv"
    if not tidy_path.exists():
        pytest.skip(f"{tidy_path} is not in this copy of realdata")
    ours = read_benchmark_figures(DATA_DIR / "benchmarks" / "batch_sweeps.csv", None)
    tidy = pl.read_csv(tidy_path, infer_schema_length=0).filter(
        (pl.col("kind") == "training") & (pl.col("precision") == "mixed")
    )
    system = {
        "v100-sxm2-16gb": "(8x V100 16GB)",
        "a100-sxm4-80gb": "(8x A100 80GB)",
        "a100-sxm4-40gb": "(8x A100 40GB)",
    }
    for row in ours.iter_rows(named=True):
        readme = row["citation"].split(" ")[1].split("@")[0]
        match = tidy.filter(
            (pl.col("readme_path") == readme)
            & pl.col("system_heading").str.contains(system[row["gpu_id"]], literal=True)
            & (pl.col("gpus") == str(row["num_gpus"]))
            & (pl.col("batch_size_per_gpu") == str(row["batch_size_per_gpu"]))
        )
        values = [float(v) for v in match["throughput"]]
        assert any(v == pytest.approx(row["throughput"]) for v in values), row
    assert ours.height == 57


def test_inference_bridge_is_exact_when_inference_tracks_training():
    gpus = spec_catalog(5)
    params = ModelParameters(reference_gpu="g0")
    ratio = {f"g{i}": 1.0 for i in range(5)}

    def rows():
        return [
            {"workload": w, "gpu_id": g, "model": m,
             "throughput_per_gpu": k * true_perf(gpus, g) * (r if w.startswith("inf") else 1)}
            for g, r in ratio.items()
            for w in ("training_16bit", "inference_16bit")
            for m, k in (("m1", 10.0), ("m2", 4.0))
        ]  # fmt: skip

    checks = {r["metric"]: r for r in inference_bridge_checks(debiased_frame(rows()), gpus, params)}
    assert checks["median_ape"]["value"] == pytest.approx(0.0, abs=1e-9)
    assert checks["median_ape"]["n"] == 4  # the reference's ratio is never a test case
    # g4 infers twice as fast relative to training: predicted from g1-g3 (ratio 1) it is
    # 50 % off; g1 is predicted from g2, g3 (0) and g4 (log 2): overall mean shrunk by two
    # pseudo-GPUs (log 2 / 5), then the vendor's and the architecture's, each toward the
    # level above: 7/25 and 39/125 of log 2.
    ratio["g4"] = 2.0
    checks = {r["metric"]: r for r in inference_bridge_checks(debiased_frame(rows()), gpus, params)}
    errors = np.array([2 ** (39 / 125) - 1] * 3 + [0.5])
    assert checks["median_ape"]["value"] == pytest.approx(float(np.median(errors)), rel=1e-6)
    assert checks["p90_ape"]["value"] == pytest.approx(float(np.quantile(errors, 0.9)), rel=1e-6)
