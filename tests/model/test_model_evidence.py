"""Relative performance from evidence (issue 10): MLPerf as tables, the bridge, the spec
estimator's power and family terms, 8-bit rates, launch-window figures, plausibility and
the headline. Every table here is hand-made; each test asserts a behaviour."""

import datetime as dt
import math

import numpy as np
import polars as pl
import pytest

from model.bridging import eight_bit_speedup
from model.debias import debias, mlperf_multi_node, select_comparable
from model.parameters import ModelParameters
from model.performance import _pooled_interval, relative_performance
from model.plausibility import (
    form_factor_pairs,
    plausibility_problems,
    same_die_pairs,
)
from model.spec_estimator import (
    SPEC_MODELS,
    _fit_family,
    _fit_spec,
    leave_one_gpu_out,
    line_pooling,
    spec_estimator,
    spec_features,
)
from model.validation import eight_bit_checks

DAY = dt.date(2026, 9, 20)


def catalog(rows):
    base = {
        "vendor": "nvidia",
        "architecture": "ampere",
        "form_factor": "sxm",
        "memory_gb": 40.0,
        "fp8_tensor_tflops": None,
        "int8_tensor_tops": None,
        "l2_cache_mb": None,
        "tdp_w": 300.0,
        "release_date": dt.date(2020, 1, 1),
    }
    schema = {
        "gpu_id": pl.Utf8,
        "vendor": pl.Utf8,
        "architecture": pl.Utf8,
        "form_factor": pl.Utf8,
        "memory_gb": pl.Float64,
        "memory_bandwidth_gbs": pl.Float64,
        "fp16_tensor_tflops": pl.Float64,
        "fp8_tensor_tflops": pl.Float64,
        "int8_tensor_tops": pl.Float64,
        "l2_cache_mb": pl.Float64,
        "tdp_w": pl.Float64,
        "release_date": pl.Date,
    }
    return pl.DataFrame([{**base, **r} for r in rows], schema=schema)


def debiased(rows):
    """workload, gpu_id, model, throughput_per_gpu (+ table parts)."""
    base = {"source": "s", "software_era": "e", "citation": "c", "precision": "fp16"}
    return pl.DataFrame([{**base, **r} for r in rows])


def results(rows):
    """benchmark_results rows (1 GPU, training, fp16, lambda) with overrides."""
    base = {
        "source": "lambda",
        "software_era": "v1",
        "citation": "c",
        "task": "training",
        "precision": "fp16",
        "workload_class": "cnn",
        "num_gpus": 1,
        "batch_size_per_gpu": 64,
        "unit": "images/s",
        "flags": "",
        "as_of": dt.date(2025, 1, 1),
    }
    return pl.DataFrame([{**base, **r} for r in rows])


# --- MLPerf as its own tables --------------------------------------------------------------


def test_mlperf_training_is_a_16bit_table_per_round_and_benchmark_divided_by_n_e_n():
    rows = results(
        [
            {"source": "mlperf", "software_era": "mlperf-training-v4.1", "precision": "mixed",
             "gpu_id": g, "model": "llama", "num_gpus": 8, "batch_size_per_gpu": b,
             "throughput": t, "unit": "trainings/h", "citation": f"sub/{g}@x",
             "flags": "batch_changed" if g == "b" else ""}
            for g, b, t in (("a", 4, 2.0), ("b", 2, 4.0))
        ]
        # A 64-GPU system of the same round: another node count, never compared.
        + [{"source": "mlperf", "software_era": "mlperf-training-v4.1", "precision": "mixed",
            "gpu_id": "c", "model": "llama", "num_gpus": 64, "batch_size_per_gpu": 1,
            "throughput": 20.0, "unit": "trainings/h", "citation": "sub/c@x"}]
    )  # fmt: skip
    params = ModelParameters(constants="dettmers")
    out = debias(rows, params, DAY)
    assert sorted(out["gpu_id"]) == ["a", "b"] and set(out["workload"]) == {"training_16bit"}
    # One table although each system has its own citation; no batch correction on a time
    # to train; per GPU = trainings/h / (8 x Dettmers' e_8).
    assert out["era_term"].n_unique() == 1
    assert out["batch_factor"].to_list() == [1.0, 1.0]
    a = out.filter(pl.col("gpu_id") == "a").row(0, named=True)
    assert a["throughput_per_gpu"] == pytest.approx(2.0 / (8 * 0.86))
    assert mlperf_multi_node(rows) == 1


def test_mlperf_inference_precision_classes_and_per_gpu_without_scaling_loss():
    rows = results(
        [
            {"source": "mlperf", "software_era": "mlperf-inference-v5.1", "task": "inference",
             "gpu_id": g, "model": m, "precision": p, "num_gpus": n, "batch_size_per_gpu": None,
             "throughput": t, "unit": "tokens/s", "citation": f"sys/{g}@x",
             "flags": "no_batch_size"}
            for g, m, p, n, t in (
                ("a", "whisper", "fp16", 8, 800.0),
                ("b", "whisper", "fp16", 4, 800.0),
                ("a", "llama", "fp8", 8, 1600.0),
                ("a", "sd", "fp4", 8, 9999.0),
            )
        ]
    )  # fmt: skip
    out = debias(rows, ModelParameters(), DAY)
    got = {(r["gpu_id"], r["workload"]): r for r in out.iter_rows(named=True)}
    assert set(got) == {("a", "inference_16bit"), ("b", "inference_16bit"), ("a", "inference_8bit")}
    assert got[("a", "inference_16bit")]["throughput_per_gpu"] == pytest.approx(100.0)
    assert got[("b", "inference_16bit")]["throughput_per_gpu"] == pytest.approx(200.0)
    assert got[("a", "inference_8bit")]["multi_gpu_efficiency"] == 1.0


def test_flags_bar_other_sources_but_not_mlperf_time_to_train_scaling_flags():
    rows = results(
        [
            {"gpu_id": "lam", "model": "m", "flags": "batch_changed", "throughput": 1.0},
            {"gpu_id": "ok", "model": "m", "throughput": 1.0},
            {"source": "mlperf", "software_era": "mlperf-training-v4.0", "precision": "mixed",
             "gpu_id": "mlp", "model": "m", "throughput": 1.0, "unit": "trainings/h",
             "flags": "super_linear"},
            {"source": "mlperf", "software_era": "mlperf-training-v4.0", "precision": "mixed",
             "gpu_id": "bad", "model": "m", "throughput": 1.0, "unit": "trainings/h",
             "flags": "outlier"},
        ]
    )  # fmt: skip
    assert sorted(select_comparable(rows)["gpu_id"]) == ["mlp", "ok"]


def test_figures_from_a_gpus_launch_window_are_left_out():
    gpus = catalog(
        [
            {"gpu_id": "new", "memory_bandwidth_gbs": 1.0, "fp16_tensor_tflops": 1.0,
             "release_date": dt.date(2020, 5, 14)},
            {"gpu_id": "old", "memory_bandwidth_gbs": 1.0, "fp16_tensor_tflops": 1.0},
        ]
    )  # fmt: skip
    rows = results(
        [
            {"source": "nvidia-dle", "software_era": era, "gpu_id": g, "model": "m",
             "throughput": 1.0, "citation": era}
            for era in ("dle-20.06", "dle-21.02")
            for g in ("new", "old")
        ]
    )  # fmt: skip
    kept = debias(rows, ModelParameters(constants="dettmers"), DAY, gpus=gpus)
    assert sorted(kept.select("gpu_id", "software_era").rows()) == [
        ("new", "dle-21.02"), ("old", "dle-20.06"), ("old", "dle-21.02")
    ]  # fmt: skip
    every = debias(
        rows, ModelParameters(constants="dettmers", launch_window_days=0), DAY, gpus=gpus
    )
    assert every.height == 4


# --- the inference bridge ------------------------------------------------------------------


def bridge_fixture(ratios: dict[str, float], archs: dict[str, str]):
    """Training measured for every GPU (value = its index + 1), inference for `ratios`."""
    gpus = catalog(
        [{"gpu_id": g, "memory_bandwidth_gbs": 1000.0 * (i + 1), "fp16_tensor_tflops": 100.0,
          "architecture": archs[g]} for i, g in enumerate(archs)]
    )  # fmt: skip
    rows = [
        {"workload": "training_16bit", "gpu_id": g, "model": m, "throughput_per_gpu": k * (i + 1)}
        for i, g in enumerate(archs)
        for m, k in (("m1", 10.0), ("m2", 3.0))
    ] + [
        {"workload": "inference_16bit", "gpu_id": g, "model": m,
         "throughput_per_gpu": k * (list(archs).index(g) + 1) * r}
        for g, r in ratios.items()
        for m, k in (("i1", 5.0), ("i2", 2.0))
    ]  # fmt: skip
    return gpus, debiased(rows)


def test_unmeasured_inference_is_bridged_per_architecture_never_one_global_factor():
    archs = {"ref": "ampere", "a1": "ampere", "a2": "ampere", "h1": "hopper", "h2": "hopper",
             "a3": "ampere", "h3": "hopper", "t1": "turing"}  # fmt: skip
    # The reference's own ratio is 1 by definition; a huge one would drag a global median.
    ratios = {"ref": 1.0, "a1": 0.8, "a2": 0.8, "h1": 1.5, "h2": 1.5}
    gpus, rows = bridge_fixture(ratios, archs)
    out = relative_performance(rows, gpus, ModelParameters(reference_gpu="ref"), DAY)
    value = {(r["gpu_id"], r["workload"]): r for r in out.iter_rows(named=True)}
    factor = {
        g: value[(g, "inference_16bit")]["value"] / value[(g, "training_16bit")]["value"]
        for g in ("a3", "h3", "t1")
    }
    # The four ratios' mean shrunk toward 0 (two pseudo-GPUs), the vendor's toward it, and
    # Ampere and Hopper toward the vendor's; Turing (none measured) gets the vendor's:
    # three factors, and the reference's ratio did not count.
    a, h = math.log(0.8), math.log(1.5)
    overall = (2 * a + 2 * h) / 6
    vendor = (2 * a + 2 * h + 2 * overall) / 6
    assert factor["t1"] == pytest.approx(math.exp(vendor))
    assert factor["a3"] == pytest.approx(math.exp((2 * a + 2 * vendor) / 4))
    assert factor["h3"] == pytest.approx(math.exp((2 * h + 2 * vendor) / 4))
    assert len({round(f, 6) for f in factor.values()}) == 3
    assert {value[(g, "inference_16bit")]["evidence"] for g in factor} == {"bridged"}
    assert value[("h1", "inference_16bit")]["evidence"] == "measured"


def test_thin_inference_evidence_falls_back_to_dettmers_rule_and_says_so():
    archs = {"ref": "ampere", "a1": "ampere", "h1": "hopper", "x": "hopper"}
    gpus, rows = bridge_fixture({"ref": 1.0, "a1": 0.5, "h1": 2.0}, archs)
    out = relative_performance(rows, gpus, ModelParameters(reference_gpu="ref"), DAY)
    x = out.filter((pl.col("gpu_id") == "x") & (pl.col("workload") == "inference_16bit"))
    x = x.row(0, named=True)
    train = out.filter((pl.col("gpu_id") == "x") & (pl.col("workload") == "training_16bit"))
    assert x["evidence"] == "dettmers_rule" and x["value"] == pytest.approx(train["value"][0])
    assert "Dettmers' rule" in x["interval_method"]


def test_a_set_of_tables_without_a_measured_anchor_is_not_placed():
    """Inference tables sharing no GPU with the reference's: placed through GPUs whose
    training is measured; a set with none stays unplaced and its GPUs are bridged."""
    gpus = catalog(
        [{"gpu_id": g, "memory_bandwidth_gbs": 1000.0 * (i + 1), "fp16_tensor_tflops": 100.0}
         for i, g in enumerate(["ref", "m1", "m2", "m3", "far", "e1", "e2"])]
    )  # fmt: skip
    train = [
        {"workload": "training_16bit", "gpu_id": g, "model": m, "throughput_per_gpu": k * v}
        for g, v in (("ref", 1.0), ("m1", 2.0), ("m2", 3.0), ("m3", 4.0), ("far", 2.0))
        for m, k in (("t1", 10.0), ("t2", 4.0))
    ]
    infer = (
        [
            {
                "workload": "inference_16bit",
                "gpu_id": g,
                "model": "i1",
                "citation": "c1",
                "throughput_per_gpu": v,
            }
            for g, v in (("ref", 10.0), ("m1", 20.0), ("m2", 30.0), ("m3", 40.0))
        ]
        + [
            # A set placed through `far` (training measured): far's ratio is set to the
            # reference set's pooled ratio (1 here), e1 keeps its measured 3x far.
            {
                "workload": "inference_16bit",
                "gpu_id": g,
                "model": "i2",
                "citation": "c2",
                "throughput_per_gpu": v,
            }
            for g, v in (("far", 7.0), ("e1", 21.0))
        ]
        + [
            # A set of GPUs whose training is only a spec estimate: not placed.
            {
                "workload": "inference_16bit",
                "gpu_id": "e2",
                "model": "i3",
                "citation": "c3",
                "throughput_per_gpu": 999.0,
            }
        ]
    )
    out = relative_performance(
        debiased(train + infer), gpus, ModelParameters(reference_gpu="ref"), DAY
    ).filter(pl.col("workload") == "inference_16bit")
    row = {r["gpu_id"]: r for r in out.iter_rows(named=True)}
    assert row["far"]["value"] == pytest.approx(2.0)
    assert row["e1"]["value"] == pytest.approx(6.0) and row["e1"]["evidence"] == "measured"
    assert row["e2"]["evidence"] in ("bridged", "dettmers_rule")
    assert row["e2"]["method"] == "estimated"


# --- spec estimator ----------------------------------------------------------------------------


def family_catalog():
    """12 measured GPUs of two vendors whose performance falls with a power cap, plus an
    unmeasured power-limited part and a GPU of an unseen architecture."""
    rows = []
    for i in range(12):
        vendor, arch = ("nvidia", f"arch{i % 3}") if i < 8 else ("amd", "cdna")
        rows.append({"gpu_id": f"g{i}", "vendor": vendor, "architecture": arch,
                     "memory_bandwidth_gbs": 500.0 * (1 + i % 5),
                     "fp16_tensor_tflops": 100.0 * (1 + (i * 7) % 4),
                     "tdp_w": 150.0 + 50.0 * ((i * 3) % 5)})  # fmt: skip
    rows.append({"gpu_id": "capped", "architecture": "arch0", "memory_bandwidth_gbs": 1500.0,
                 "fp16_tensor_tflops": 300.0, "tdp_w": 70.0})  # fmt: skip
    rows.append({"gpu_id": "alien", "vendor": "intel", "architecture": "xe",
                 "memory_bandwidth_gbs": 1500.0, "fp16_tensor_tflops": 300.0})  # fmt: skip
    # No tensor units (Pascal) and no TDP either: estimated by the fallbacks.
    rows.append({"gpu_id": "pascal", "architecture": "pascal", "memory_bandwidth_gbs": 480.0,
                 "fp16_tensor_tflops": None, "tdp_w": 250.0})  # fmt: skip
    rows.append({"gpu_id": "bare", "architecture": "pascal", "memory_bandwidth_gbs": 480.0,
                 "fp16_tensor_tflops": None, "tdp_w": None})  # fmt: skip
    return catalog(rows)


def family_truth(r):
    """log perf = 0.4 log bw + 0.3 log tf + 0.4 log tdp (+ 0.2 for amd)."""
    return (
        0.4 * math.log(r["memory_bandwidth_gbs"])
        + 0.3 * math.log(r["fp16_tensor_tflops"])
        + 0.4 * math.log(r["tdp_w"])
        + (0.2 if r["vendor"] == "amd" else 0.0)
    )


def test_power_and_family_terms_win_when_power_explains_performance():
    gpus = family_catalog()
    measured = pl.DataFrame(
        [{"gpu_id": r["gpu_id"], "log_perf": family_truth(r)}
         for r in gpus.iter_rows(named=True) if r["gpu_id"].startswith("g")]
    )  # fmt: skip
    estimates, logo, chosen, unseen = spec_estimator(measured, gpus)
    assert chosen.startswith("tensor_bandwidth_power_family")
    est = dict(estimates.iter_rows())
    capped = gpus.filter(pl.col("gpu_id") == "capped").row(0, named=True)
    # The power-limited part is estimated well below a bandwidth/tensor-only guess.
    assert est["capped"] == pytest.approx(family_truth(capped), abs=0.1)
    # Per-vendor errors exist for reporting, and an unseen vendor's held-out errors too.
    assert set(logo["vendor"]) == {"nvidia", "amd"}
    assert len(unseen["vendor"]) == 12
    # GPUs without a tensor rate (or a TDP) still get a finite estimate.
    assert np.isfinite(est["pascal"]) and np.isfinite(est["bare"])


def test_an_unseen_architecture_gets_a_wider_interval_than_a_seen_one():
    gpus = family_catalog()
    rows = []
    rng = np.random.default_rng(1)
    for r in gpus.iter_rows(named=True):
        if not r["gpu_id"].startswith("g"):
            continue
        noise = float(rng.normal(0, 0.1))
        for m, k in (("m1", 1.0), ("m2", 2.0)):
            rows.append({"workload": "training_16bit", "gpu_id": r["gpu_id"], "model": m,
                         "throughput_per_gpu": k * math.exp(family_truth(r) + noise)})  # fmt: skip
    out = relative_performance(debiased(rows), gpus, ModelParameters(reference_gpu="g0"), DAY)
    train = {
        r["gpu_id"]: r
        for r in out.filter(pl.col("workload") == "training_16bit").iter_rows(named=True)
    }

    def width(g):
        return math.log(train[g]["value_high"] / train[g]["value_low"])

    assert train["alien"]["evidence"] == "spec_estimate"
    assert "leave-one-vendor-out" in train["alien"]["interval_method"]
    assert "leave-one-GPU-out" in train["capped"]["interval_method"]
    assert width("alien") > width("capped")


def test_leave_one_gpu_out_reports_each_gpus_vendor():
    gpus = family_catalog()
    measured = pl.DataFrame(
        [{"gpu_id": r["gpu_id"], "log_perf": family_truth(r)}
         for r in gpus.iter_rows(named=True) if r["gpu_id"].startswith("g")]
    )  # fmt: skip
    logo = leave_one_gpu_out(measured, gpus)
    per_vendor = logo.group_by("model", "vendor").agg(pl.col("ape").median())
    assert per_vendor.height == 2 * len(SPEC_MODELS)


# --- 8-bit ---------------------------------------------------------------------------------


def test_eight_bit_uses_int8_on_turing_and_ampere_and_fp8_from_ada_on():
    gpus = catalog(
        [
            {"gpu_id": "a100", "fp16_tensor_tflops": 312.0, "int8_tensor_tops": 624.0},
            {"gpu_id": "t4", "architecture": "turing", "fp16_tensor_tflops": 65.0,
             "int8_tensor_tops": 130.0},
            {"gpu_id": "h100", "architecture": "hopper", "fp16_tensor_tflops": 989.0,
             "fp8_tensor_tflops": 1979.0, "int8_tensor_tops": 1979.0},
            {"gpu_id": "v100", "architecture": "volta", "fp16_tensor_tflops": 125.0},
        ]
    )  # fmt: skip
    speed = {r["gpu_id"]: r for r in eight_bit_speedup(gpus).iter_rows(named=True)}
    assert speed["a100"]["speedup"] == pytest.approx(2.0)
    assert speed["a100"]["speedup_basis"] == "int8/fp16 tensor"
    assert speed["t4"]["speedup"] == pytest.approx(2.0)
    assert speed["h100"]["speedup_basis"] == "fp8/fp16 tensor"
    assert speed["v100"]["speedup"] == 1.0


def test_measured_8bit_results_are_used_where_they_exist():
    archs = {"ref": "ampere", "x": "ampere", "y": "ampere"}
    gpus = catalog(
        [{"gpu_id": g, "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0,
          "int8_tensor_tops": 200.0, "architecture": a} for g, a in archs.items()]
    )  # fmt: skip
    rows = [
        {"workload": w, "gpu_id": g, "model": m, "throughput_per_gpu": k}
        for w in ("training_16bit", "inference_16bit")
        for g in archs
        for m, k in (("m1", 10.0), ("m2", 5.0))
    ] + [
        {
            "workload": "inference_8bit",
            "gpu_id": g,
            "model": "q",
            "precision": "int8",
            "throughput_per_gpu": v,
        }
        for g, v in (("ref", 100.0), ("x", 130.0))
    ]
    out = relative_performance(debiased(rows), gpus, ModelParameters(reference_gpu="ref"), DAY)
    eight = {
        r["gpu_id"]: r
        for r in out.filter(pl.col("workload") == "inference_8bit").iter_rows(named=True)
    }
    assert eight["x"]["value"] == pytest.approx(1.3) and eight["x"]["method"] == "measured"
    assert eight["x"]["n_results"] == 1
    assert eight["y"]["method"] == "estimated"


# --- plausibility ------------------------------------------------------------------------


def plausibility_catalog():
    return catalog(
        [
            {"gpu_id": "a40g", "memory_gb": 40.0, "fp16_tensor_tflops": 312.0,
             "memory_bandwidth_gbs": 1555.0},
            {"gpu_id": "a80g", "memory_gb": 80.0, "fp16_tensor_tflops": 312.0,
             "memory_bandwidth_gbs": 2039.0},
            # Same die, new memory generation (1.43x the bandwidth): not a variant.
            {"gpu_id": "h-hbm3e", "architecture": "hopper", "memory_gb": 141.0,
             "fp16_tensor_tflops": 989.0, "tdp_w": 700.0, "memory_bandwidth_gbs": 4800.0},
            {"gpu_id": "h-pcie", "architecture": "hopper", "form_factor": "pcie",
             "memory_gb": 80.0, "fp16_tensor_tflops": 756.0, "tdp_w": 350.0},
            {"gpu_id": "h-sxm", "architecture": "hopper", "memory_gb": 80.0,
             "fp16_tensor_tflops": 989.0, "tdp_w": 700.0, "memory_bandwidth_gbs": 3350.0},
        ]
    )  # fmt: skip


def rel(values):
    return pl.DataFrame(
        [
            {"gpu_id": g, "workload": w, "value": v, "method": "measured", "evidence": "measured"}
            for (g, w), v in values.items()
        ]
    )


def test_plausibility_finds_same_die_and_form_factor_pairs_from_specs():
    gpus = plausibility_catalog()
    assert same_die_pairs(gpus) == [("a40g", "a80g")]
    assert form_factor_pairs(gpus) == [("h-pcie", "h-sxm")]


def test_plausibility_flags_each_broken_rule_and_passes_a_sane_answer():
    gpus = plausibility_catalog()
    sane = {("a40g", "training_16bit"): 0.98, ("a80g", "training_16bit"): 1.0,
            ("a40g", "inference_16bit"): 0.95, ("a80g", "inference_16bit"): 1.0,
            ("h-pcie", "training_16bit"): 1.4, ("h-sxm", "training_16bit"): 2.3}  # fmt: skip
    assert plausibility_problems(rel(sane), gpus) == []
    broken = sane | {("a40g", "inference_16bit"): 0.57, ("h-pcie", "training_16bit"): 2.6}
    problems = plausibility_problems(rel(broken), gpus)
    assert any("same die" in p and "inference_16bit" in p for p in problems)
    assert any("PCIe h-pcie" in p for p in problems)
    wild = sane | {("h-sxm", "inference_16bit"): 9.0}
    assert any("outside 1/3-3x" in p for p in plausibility_problems(rel(wild), gpus))
    unmarked = rel(sane).with_columns(evidence=pl.lit(None, dtype=pl.Utf8))
    assert any("do not say what they rest on" in p for p in plausibility_problems(unmarked, gpus))


def test_an_unmeasured_card_inherits_its_measured_siblings_residual():
    """The neighbours variant: a GPU close in specs to a measured card of its vendor and
    segment that beats its specs is estimated above the plain family model."""
    gpus = family_catalog().with_columns(name=pl.lit("Instinct"))
    extra = catalog(
        [
            {"gpu_id": "c1", "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 165.0,
             "tdp_w": 450.0},
            {"gpu_id": "c2", "memory_bandwidth_gbs": 1100.0, "fp16_tensor_tflops": 180.0,
             "tdp_w": 450.0},
            {"gpu_id": "p2", "memory_bandwidth_gbs": 1100.0, "fp16_tensor_tflops": 180.0,
             "tdp_w": 450.0},
        ]
    ).with_columns(name=pl.Series(["GeForce C1", "GeForce C2", "Pro P2"]))  # fmt: skip
    gpus = pl.concat([gpus, extra])
    truth = {
        r["gpu_id"]: family_truth(r)
        for r in gpus.iter_rows(named=True)
        if r["fp16_tensor_tflops"] and r["tdp_w"]
    }
    truth["c1"] += 0.3  # beats its specs
    measured = [g for g in truth if g.startswith("g")] + ["c1"]
    train = pl.DataFrame({"gpu_id": measured, "log_perf": [truth[g] for g in measured]}).join(
        spec_features(gpus), on="gpu_id"
    )
    features = spec_features(gpus)
    ids = features["gpu_id"].to_list()
    plain = dict(zip(ids, _fit_spec("tensor_bandwidth_power_family", train)(features), strict=True))
    neighbours = _fit_spec("tensor_bandwidth_power_family_neighbours", train)(features)
    near = dict(zip(ids, neighbours, strict=True))
    assert near["c2"] - plain["c2"] > 0.01  # consumer sibling of c1
    assert plain["c2"] > plain["p2"]  # the consumer segment offset, learnt from c1
    # Same specs, other segment: corrected only by its own segment's (accurate) residuals.
    assert near["c2"] - plain["c2"] > near["p2"] - plain["p2"]


def line_catalog():
    """family_catalog's data-center parts plus a GeForce line over four generations.

    Measured: c20 (arch 'c20', 2020) and c22 (arch 'c22', 2022), both beating the
    data-center parts' specs-to-performance (+0.3); d25, the data-center part of arch
    'n25', sitting below it (-0.2). Unmeasured: c25 (GeForce of arch 'n25', 2025) and c29
    (GeForce of arch 'n29', 2029: further from the last measured GeForce generation).
    """
    base = family_catalog().filter(pl.col("gpu_id").str.starts_with("g"))
    spec = {"memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 165.0, "tdp_w": 450.0}
    line = catalog(
        [
            {"gpu_id": "c20", "architecture": "c20", "release_date": dt.date(2020, 9, 1), **spec},
            {"gpu_id": "c22", "architecture": "c22", "release_date": dt.date(2022, 10, 1),
             **spec},
            {"gpu_id": "d25", "architecture": "n25", "release_date": dt.date(2024, 3, 1),
             "memory_bandwidth_gbs": 4000.0, "fp16_tensor_tflops": 900.0, "tdp_w": 700.0},
            {"gpu_id": "c25", "architecture": "n25", "release_date": dt.date(2025, 1, 30),
             **spec},
            {"gpu_id": "c29", "architecture": "n29", "release_date": dt.date(2029, 1, 30),
             **spec},
        ]
    )  # fmt: skip
    names = {"c20": "GeForce C20", "c22": "GeForce C22", "d25": "D25", "c25": "GeForce C25",
             "c29": "GeForce C29"}  # fmt: skip
    return pl.concat(
        [
            base.with_columns(name=pl.lit("Instinct")),
            line.with_columns(name=pl.col("gpu_id").replace_strict(names)),
        ]
    )


def test_an_unmeasured_generation_of_a_line_is_pooled_with_the_lines_last_measured_one():
    """Partial pooling along a product line: the GeForce card of an architecture measured
    only in the data center is moved toward what the measured GeForce cards do beyond their
    specs, and the further its generation is from theirs, the wider its interval."""
    gpus = line_catalog()
    truth = {r["gpu_id"]: family_truth(r) for r in gpus.iter_rows(named=True)}
    truth["c20"] += 0.25
    truth["c22"] += 0.35
    truth["d25"] -= 0.2
    measured = [g for g in truth if g not in ("c25", "c29")]
    train = pl.DataFrame({"gpu_id": measured, "log_perf": [truth[g] for g in measured]}).join(
        spec_features(gpus), on="gpu_id"
    )
    features = spec_features(gpus)
    ids = features["gpu_id"].to_list()
    plain = dict(zip(ids, _fit_spec("tensor_bandwidth_power_family", train)(features), strict=True))
    line = _fit_spec("tensor_bandwidth_power_family_line", train)(features)
    pooled_est = dict(zip(ids, line, strict=True))
    # Right direction: toward the GeForce line (above its specs), away from d25's offset;
    # measured cells are not touched.
    assert pooled_est["c25"] - plain["c25"] > 0.05
    assert abs(truth["c25"] + 0.3 - pooled_est["c25"]) < abs(truth["c25"] + 0.3 - plain["c25"])
    assert pooled_est["c22"] == pytest.approx(plain["c22"])
    assert pooled_est["d25"] == pytest.approx(plain["d25"])
    pooled = {
        r["gpu_id"]: r
        for r in line_pooling(
            _fit_family(train), train.drop_nulls(["log_bw", "log_tf", "log_tdp"]), features
        ).iter_rows(named=True)
    }
    assert set(pooled) == {"c25", "c29"}
    assert pooled["c25"]["pooled_from"] == "c22" and pooled["c25"]["pooled_n"] == 1
    assert pooled["c25"]["pooled_weight"] == pytest.approx(0.5)  # one GPU keeps half
    # The interval widens with the years between the generations (2.3 vs 6.3 years).
    assert pooled["c29"]["pooled_years"] > pooled["c25"]["pooled_years"] > 2
    assert pooled["c29"]["pooled_sd"] > pooled["c25"]["pooled_sd"] > 0
    near = _pooled_interval(-0.1, 0.1, "range", pooled["c25"])
    far = _pooled_interval(-0.1, 0.1, "range", pooled["c29"])
    assert far[0] < near[0] < -0.1 and far[1] > near[1] > 0.1
    assert "pooling with the measured c22 GPUs" in near[2]


def test_spec_estimator_reports_the_gpus_it_pooled():
    gpus = line_catalog()
    truth = {r["gpu_id"]: family_truth(r) for r in gpus.iter_rows(named=True)}
    truth["c20"] += 0.25
    truth["c22"] += 0.35
    truth["d25"] -= 0.2
    measured = pl.DataFrame(
        [{"gpu_id": g, "log_perf": v} for g, v in truth.items() if g not in ("c25", "c29")]
    )
    _, _, chosen, unseen = spec_estimator(measured, gpus)
    pooled = unseen["pooled"]
    if chosen == "tensor_bandwidth_power_family_line":
        assert set(pooled["gpu_id"]) == {"c25", "c29"}
    else:
        assert pooled.is_empty()


def test_eight_bit_rule_is_validated_against_measured_8bit_results():
    archs = {"ref": "ampere", "x": "ampere", "y": "ampere", "z": "ampere"}
    gpus = catalog(
        [{"gpu_id": g, "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0,
          "int8_tensor_tops": 200.0} for g in archs]
    )  # fmt: skip
    rows = [
        {"workload": w, "gpu_id": g, "model": m, "throughput_per_gpu": k * v}
        for w in ("training_16bit", "inference_16bit")
        for g, v in (("ref", 1.0), ("x", 2.0), ("y", 3.0), ("z", 4.0))
        for m, k in (("m1", 10.0), ("m2", 5.0))
    ] + [
        # x and y follow the rule (same speedup as the reference); z gains 50 % more.
        {"workload": "inference_8bit", "gpu_id": g, "model": "q", "precision": "int8",
         "throughput_per_gpu": v}
        for g, v in (("ref", 100.0), ("x", 200.0), ("y", 300.0), ("z", 600.0))
    ]  # fmt: skip
    (row,) = eight_bit_checks(debiased(rows), gpus, ModelParameters(reference_gpu="ref"))
    assert row["n"] == 3
    # Errors 0, 0 and |4/6 - 1| = 1/3: the median is 0.
    assert row["value"] == pytest.approx(0.0, abs=1e-9)


def test_a_consumer_cards_8bit_result_moves_other_consumer_cards_not_data_center_parts():
    """8-bit bridge pooled by segment first; a GPU measured in 8 bits whose 16-bit
    inference is only bridged from its measured training still counts as evidence."""
    names = {"ref": "A100", "d1": "L40S", "d2": "L4", "d3": "H100", "dx": "X",
             "c1": "GeForce RTX 4090", "cx": "GeForce RTX 5090"}  # fmt: skip
    gpus = catalog(
        [{"gpu_id": g, "memory_bandwidth_gbs": 1000.0, "fp16_tensor_tflops": 100.0,
          "int8_tensor_tops": 200.0} for g in names]
    ).with_columns(name=pl.col("gpu_id").replace_strict(names))  # fmt: skip
    rows = [
        {"workload": "training_16bit", "gpu_id": g, "model": m, "throughput_per_gpu": k}
        for g in names
        for m, k in (("m1", 10.0), ("m2", 5.0))
    ] + [
        {"workload": "inference_16bit", "gpu_id": g, "model": m, "throughput_per_gpu": k}
        for g in ("ref", "d1", "d2", "d3")
        for m, k in (("i1", 10.0), ("i2", 5.0))
    ] + [
        # Data-center parts follow the rule; the consumer card reaches half of it.
        {"workload": "inference_8bit", "gpu_id": g, "model": "q", "precision": "int8",
         "throughput_per_gpu": v}
        for g, v in (("ref", 100.0), ("d1", 100.0), ("d2", 100.0), ("d3", 100.0), ("c1", 50.0))
    ]  # fmt: skip
    out = relative_performance(debiased(rows), gpus, ModelParameters(reference_gpu="ref"), DAY)
    eight = {
        r["gpu_id"]: r
        for r in out.filter(pl.col("workload") == "inference_8bit").iter_rows(named=True)
    }
    assert eight["c1"]["evidence"] == "measured" and eight["c1"]["value"] == pytest.approx(0.5)
    # cx (consumer) is pulled toward c1's half; dx (data center) stays near 1.
    assert eight["cx"]["value"] < 0.9 < eight["dx"]["value"]
