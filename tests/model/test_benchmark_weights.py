"""Issue 22, steps 3 and 4: transformer weighting, single-table placement, vendor ratios.

- A table's weight in the relative-performance fit is its benchmark class's
  (model/benchmark_weights.py): a CNN table moves a GPU less than a transformer table.
- A GPU measured in one table only keeps its same-table ratio to its nearest anchor there,
  however the other GPUs of that table fare elsewhere (performance_fit.place_single_table).
- A bridge level resting on one GPU is not used, and a consumer card never inherits a
  data-center ratio (bridging.pooled_ratio).
"""

import datetime as dt
import math

import numpy as np
import polars as pl
import pytest

from model.benchmark_weights import (
    BENCHMARK_CLASSES,
    default_weights,
    uniform_weights,
    with_weight,
)
from model.bridging import inference_16bit, pooled_ratio, supporting_depth
from model.parameters import ModelParameters, check
from model.performance import relative_performance
from model.performance_fit import fit_log_performance, measured_workload, nearest_anchors

DAY = dt.date(2026, 9, 20)


def debiased(rows: list[tuple[str, str, str, str, float]], workload="training_16bit"):
    """Debiased-like rows from (table, model, workload_class, gpu_id, throughput)."""
    return pl.DataFrame(
        [
            {"workload": workload, "era_term": t, "model": m, "workload_class": c,
             "gpu_id": g, "throughput_per_gpu": v}
            for t, m, c, g, v in rows
        ]
    )  # fmt: skip


def ratio(fit: pl.DataFrame, a: str, b: str) -> float:
    p = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    return math.exp(p[a] - p[b])


# --- step 4: weights -----------------------------------------------------------------


def two_transformer_tables_and(third_class: str, third_model: str) -> pl.DataFrame:
    """x is 2x ref in two transformer tables and 1x ref in a third table of `third_class`."""
    return debiased(
        [
            ("bert", "bert_large", "transformer", "ref", 10.0),
            ("bert", "bert_large", "transformer", "x", 20.0),
            ("lora", "llama2_70b_lora", "transformer", "ref", 1.0),
            ("lora", "llama2_70b_lora", "transformer", "x", 2.0),
            ("third", third_model, third_class, "ref", 5.0),
            ("third", third_model, third_class, "x", 5.0),
        ]
    )


def test_a_cnn_table_moves_a_gpu_less_than_a_transformer_table():
    weights = default_weights()
    cnn = measured_workload(
        two_transformer_tables_and("cnn", "resnet50"), "training_16bit", "ref", weights
    )
    transformer = measured_workload(
        two_transformer_tables_and("transformer", "transformerxl_base"),
        "training_16bit",
        "ref",
        weights,
    )
    # Weighted geometric mean of the table ratios (2, 2, 1) with weights (1, 1, w).
    w_cnn = BENCHMARK_CLASSES["cnn"][0]
    assert ratio(cnn, "x", "ref") == pytest.approx(2 ** (2 / (2 + w_cnn)))
    assert ratio(transformer, "x", "ref") == pytest.approx(2 ** (2 / 3))
    assert abs(math.log(ratio(cnn, "x", "ref") / 2)) < abs(
        math.log(ratio(transformer, "x", "ref") / 2)
    )
    # Without weights (the all-benchmarks value) the CNN table counts like the others.
    unweighted = measured_workload(
        two_transformer_tables_and("cnn", "resnet50"), "training_16bit", "ref", None
    )
    assert ratio(unweighted, "x", "ref") == pytest.approx(2 ** (2 / 3))


def test_a_cnn_only_gpu_is_still_bridged_by_its_cnn_table():
    # y is measured only in a CNN table: the low weight does not drop it, and its ratio to
    # ref there is kept (it is a single-table GPU anchored on ref).
    rows = pl.concat(
        [
            two_transformer_tables_and("cnn", "resnet50"),
            debiased([("third", "resnet50", "cnn", "y", 15.0)]),
        ]
    )
    fit = measured_workload(rows, "training_16bit", "ref", default_weights())
    assert ratio(fit, "y", "ref") == pytest.approx(3.0)


def test_weighted_fit_equals_repeating_rows_and_its_errors_ignore_the_weight_scale():
    rng = np.random.default_rng(7)
    gpus, tables = ["ref", "a", "b", "c"], ["t1", "t2", "t3", "t4"]
    rows = pl.DataFrame(
        [
            {"gpu_id": g, "table": t, "throughput_per_gpu": float(np.exp(rng.normal(i, 0.2)))}
            for i, g in enumerate(gpus)
            for t in tables
        ]
    )
    weights = pl.Series([1.0, 2.0, 3.0, 1.0] * 4)
    weighted = fit_log_performance(rows.with_columns(weight=weights), "ref").sort("gpu_id")
    # A row of weight k has the point estimate of k copies of the row.
    repeated = pl.concat(
        [rows.filter(weights >= k) for k in (1, 2, 3)]  # weight k -> k copies
    )
    copies = fit_log_performance(repeated, "ref").sort("gpu_id")
    assert weighted["log_perf"].to_numpy() - weighted["log_perf"][0] == pytest.approx(
        copies["log_perf"].to_numpy() - copies["log_perf"][0]
    )
    # Multiplying every weight by one constant changes neither the values nor the errors.
    scaled = fit_log_performance(rows.with_columns(weight=weights * 10), "ref").sort("gpu_id")
    assert scaled["log_perf"].to_numpy() == pytest.approx(weighted["log_perf"].to_numpy())
    assert scaled["log_se"].to_numpy() == pytest.approx(weighted["log_se"].to_numpy())
    # resid_var is the variance of a row of weight 1: it scales with the weights.
    assert scaled["resid_var"][0] == pytest.approx(10 * weighted["resid_var"][0])
    assert (weighted.filter(pl.col("gpu_id") != "ref")["log_se"] > 0).all()


def test_every_benchmark_class_of_the_bundled_data_has_a_weight_and_unknown_ones_fail():
    rows = debiased([("t", "resnet50", "cnn", "a", 1.0), ("t", "gnmt", "rnn", "b", 1.0),
                     ("u", "stable_diffusion", "transformer", "a", 1.0),
                     ("v", "llama3.1_8b", "transformer", "a", 1.0),
                     ("w", "bert_large", "transformer", "a", 1.0)])  # fmt: skip
    weighted = with_weight(rows, default_weights())
    assert weighted["weight"].to_list() == [0.1, 0.1, 0.5, 1.0, 1.0]
    assert with_weight(rows, uniform_weights())["weight"].to_list() == [1.0] * 5
    odd = debiased([("t", "pointnet", "graph", "a", 1.0)])
    with pytest.raises(ValueError, match=r"class\(es\) \['graph'\]"):
        with_weight(odd, default_weights())
    with pytest.raises(ValueError, match="benchmark_weights"):
        check(ModelParameters(benchmark_weights={"llm": 1.0}))


# --- step 3: a GPU measured in one table only ------------------------------------------


def lora_round() -> pl.DataFrame:
    """near and far agree elsewhere (far = 2x near) but not in the LoRA table (4x).

    solo is measured in the LoRA table only, at 0.9x near (its nearest GPU there).
    """
    rows = []
    for t in ("bert", "ssd", "resnet"):
        cls = "transformer" if t == "bert" else "cnn"
        rows += [(t, t, cls, "ref", 10.0), (t, t, cls, "near", 20.0), (t, t, cls, "far", 40.0)]
    rows += [
        ("lora", "llama2_70b_lora", "transformer", "near", 10.0),
        ("lora", "llama2_70b_lora", "transformer", "far", 40.0),
        ("lora", "llama2_70b_lora", "transformer", "solo", 9.0),
    ]
    return debiased(rows)


def test_a_single_table_gpu_keeps_its_same_table_ratio_to_its_nearest_anchor():
    rows = lora_round()
    for weights in (default_weights(), None):
        fit = measured_workload(rows, "training_16bit", "ref", weights)
        assert ratio(fit, "solo", "near") == pytest.approx(0.9)
        placed = fit.filter(pl.col("gpu_id") == "solo")
        assert "placed by its ratio to near in lora (0.9" in placed["placed_by"][0]
        # The plain fit carries solo at its ratio to the table's constant, which far's
        # disagreement pulls: not 0.9x near.
        plain = fit_log_performance(
            rows.select("gpu_id", "throughput_per_gpu", table="era_term"), "ref"
        )
        assert abs(ratio(plain, "solo", "near") / 0.9 - 1) > 0.1
        # Its interval adds the fit's residual variance (of a weight-1 row: LoRA is an LLM
        # table) to its anchor's error.
        near_se = fit.filter(pl.col("gpu_id") == "near")["log_se"][0]
        assert placed["log_se"][0] == pytest.approx(math.sqrt(near_se**2 + placed["resid_var"][0]))
    # The other GPUs are untouched by the placement.
    anchors = nearest_anchors(rows.select("gpu_id", "throughput_per_gpu", table="era_term"), "ref")
    assert anchors["gpu_id"].to_list() == ["solo"]
    assert anchors["anchor"].to_list() == ["near"]


def test_the_reference_and_tables_without_an_anchor_are_left_to_the_fit():
    rows = debiased(
        [("t1", "bert", "transformer", "ref", 10.0), ("t1", "bert", "transformer", "a", 20.0),
         ("t2", "bert2", "transformer", "b", 5.0), ("t2", "bert2", "transformer", "c", 15.0)]
    )  # fmt: skip
    fit = measured_workload(rows, "training_16bit", "ref", default_weights())
    assert fit["placed_by"].null_count() == fit.height
    assert ratio(fit, "a", "ref") == pytest.approx(2.0)
    assert ratio(fit, "c", "b") == pytest.approx(3.0)


# --- step 3: vendor-level bridge ratios --------------------------------------------------


PRO = "professional"


def test_a_vendor_level_resting_on_one_gpu_is_skipped():
    mi300x = (math.log(2.0), (PRO, "amd", "cdna3"))
    nvidia = [(0.1, (PRO, "nvidia", "hopper")), (-0.1, (PRO, "nvidia", "ampere")),
              (0.0, (PRO, "nvidia", "ada"))]  # fmt: skip
    ratios = [mi300x, *nvidia]
    segment = (math.log(2.0) + 0.0) / (4 + 2)  # the professional level, pooled toward 0
    # Another CDNA3 part: AMD's level has one GPU, so the segment's ratio, not MI300X's.
    assert pooled_ratio(ratios, (PRO, "amd", "cdna3")) == pytest.approx(segment)
    assert supporting_depth(ratios, (PRO, "amd", "cdna3")) == (1, 4)
    # A consumer Radeon: no consumer GPU measured, so Dettmers' ratio 1 (log 0).
    assert pooled_ratio(ratios, ("consumer", "amd", "rdna3")) == 0.0
    assert supporting_depth(ratios, ("consumer", "amd", "rdna3")) == (0, 0)
    # With a second measured AMD data-center GPU the vendor level is used.
    two = [*ratios, (math.log(2.0), (PRO, "amd", "cdna3"))]
    segment2 = 2 * math.log(2.0) / (5 + 2)
    vendor = (2 * math.log(2.0) + 2 * segment2) / (2 + 2)
    architecture = (2 * math.log(2.0) + 2 * vendor) / (2 + 2)
    assert pooled_ratio(two, (PRO, "amd", "cdna3")) == pytest.approx(architecture)


def bridge_catalog() -> pl.DataFrame:
    names = {
        "ref": ("NVIDIA A100", "nvidia", "ampere"),
        "h": ("NVIDIA H100", "nvidia", "hopper"),
        "l": ("NVIDIA L40S", "nvidia", "ada"),
        "a10": ("NVIDIA A10", "nvidia", "ampere"),
        "mi300x": ("AMD Instinct MI300X", "amd", "cdna3"),
        "mi325x": ("AMD Instinct MI325X", "amd", "cdna3"),
        "xtx": ("AMD Radeon RX 7900 XTX", "amd", "rdna3"),
    }
    return pl.DataFrame(
        {
            "gpu_id": list(names),
            "name": [n for n, _, _ in names.values()],
            "vendor": [v for _, v, _ in names.values()],
            "architecture": [a for _, _, a in names.values()],
            "memory_bandwidth_gbs": [1000.0] * len(names),
            "fp16_tensor_tflops": [100.0] * len(names),
            "tdp_w": [300.0] * len(names),
        }
    )


def test_a_data_center_amd_ratio_is_not_applied_to_a_consumer_amd_card():
    # Every GPU trains at 1x ref; the MI300X infers at 2x, the NVIDIA parts at 1x.
    gpus = bridge_catalog()
    training = pl.DataFrame(
        {"gpu_id": gpus["gpu_id"], "value": [1.0] * gpus.height,
         "value_low": [0.9] * gpus.height, "value_high": [1.1] * gpus.height,
         "evidence": ["measured"] * gpus.height}
    )  # fmt: skip
    rows = debiased(
        [(t, "bert_large", "transformer", g, v)
         for t in ("t1", "t2")
         for g, v in (("ref", 10.0), ("h", 10.0), ("l", 10.0), ("a10", 10.0),
                      ("mi300x", 20.0))],
        workload="inference_16bit",
    )  # fmt: skip
    out = {
        r["gpu_id"]: r
        for r in inference_16bit(rows, training, gpus, "ref", default_weights()).iter_rows(
            named=True
        )
    }
    assert out["mi300x"]["value"] == pytest.approx(2.0)
    # AMD's vendor level rests on the MI300X alone, so it is skipped: the consumer Radeon
    # and the MI325X both take the ratio of all measured GPUs (log 2 among four ratios,
    # pooled toward 1 with two pseudo-GPUs), never the MI300X's 2x.
    everyone = math.exp(math.log(2.0) / (4 + 2))
    for gpu in ("xtx", "mi325x"):
        assert out[gpu]["value"] == pytest.approx(everyone)
        assert out[gpu]["evidence"] == "bridged"
    assert "1 of" not in out["xtx"]["interval_method"]
    assert out["mi325x"]["evidence"] == "bridged"


# --- both values in the output ---------------------------------------------------------


def test_relative_performance_keeps_the_all_benchmarks_value_for_every_row():
    gpus = bridge_catalog().with_columns(
        fp8_tensor_tflops=pl.lit(None, dtype=pl.Float64),
        int8_tensor_tops=pl.lit(None, dtype=pl.Float64),
        l2_cache_mb=pl.lit(None, dtype=pl.Float64),
    )
    # h is 2x ref on transformers and 1x on CNNs: weighted, it comes out near 2x.
    rows = debiased(
        [("bert", "bert_large", "transformer", "ref", 10.0),
         ("bert", "bert_large", "transformer", "h", 20.0),
         ("rn", "resnet50", "cnn", "ref", 10.0), ("rn", "resnet50", "cnn", "h", 10.0),
         ("rn", "resnet50", "cnn", "l", 5.0), ("bert", "bert_large", "transformer", "l", 10.0)]
    )  # fmt: skip
    params = ModelParameters(reference_gpu="ref")
    out = relative_performance(rows, gpus, params, DAY)
    assert out["value_all_benchmarks"].null_count() == 0
    h = out.filter((pl.col("gpu_id") == "h") & (pl.col("workload") == "training_16bit"))
    w = BENCHMARK_CLASSES["cnn"][0]
    assert h["value"][0] == pytest.approx(2 ** (1 / (1 + w)), rel=1e-6)
    assert h["value_all_benchmarks"][0] == pytest.approx(2**0.5, rel=1e-6)
    assert h["value_all_benchmarks_low"][0] <= h["value_all_benchmarks"][0]
    assert h["value_all_benchmarks"][0] <= h["value_all_benchmarks_high"][0]
