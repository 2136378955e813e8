"""The serving model: memory fit at total params, decode arithmetic, the fit, and evidence.

The catalog is the bundled spec sheet, the models the bundled model table, the evidence
the bundled serving.csv and batch-1 decode rows; the fit fixture is hand-written contract
rows (llm_serving_benchmarks columns) made from known efficiencies, so the fit must find
them again.
"""

import datetime as dt

import numpy as np
import polars as pl
import pytest

from model.llm_serving import (
    llm_serving,
    output_rate,
    systems,
    tokens_per_s_at,
    with_capacity,
)
from model.llm_serving_anchor import bandwidth_anchor, proxy_compute
from model.llm_serving_fit import (
    CONTRACT,
    MAX_HALF,
    MIN_HALF,
    band,
    cases,
    coverage,
    engine_fits,
    fit,
    predict_with,
    summaries,
)
from sources.benchmarks.serving import read_serving_benchmarks
from sources.bundled import DATA_DIR, SPEC_SHEET, read_gpu_specs, read_llm_benchmarks
from sources.llm_models import read_llm_models

LLM_DIR = DATA_DIR / "benchmarks" / "llm"
GPUS = read_gpu_specs(SPEC_SHEET).with_columns(
    compute_proxy=pl.lit(False), proxy_log_sd=pl.lit(0.0)
)
MODELS = read_llm_models()
MLPERF = read_serving_benchmarks(LLM_DIR / "serving.csv", None)
DECODE = pl.concat(
    [read_llm_benchmarks(LLM_DIR / f, None) for f in ("llm_inference.csv", "llamacpp_threads.csv")],
    how="vertical_relaxed",
)
ANCHOR = bandwidth_anchor(DECODE, GPUS)


@pytest.fixture(scope="module")
def validation() -> pl.DataFrame:
    return engine_fits(MLPERF, GPUS, MODELS, ANCHOR)


@pytest.fixture(scope="module")
def serving(validation) -> pl.DataFrame:
    gpus = GPUS.filter(pl.col("gpu_id").is_in(["h100-sxm5-80gb", "h200-sxm", "rtx-4090"]))
    return llm_serving(gpus, MODELS, summaries(validation), MLPERF, ANCHOR)


def test_output_rate_by_hand():
    # 1 GB read at 1 TB/s x 0.5 = 2 ms; 1 TFLOP at 1 PFLOP/s x 0.5 = 2 ms -> max 2 ms;
    # + 1 ms comm + 1 ms overhead = 4 ms; prefill 0.125 TFLOP per output token x batch 4
    # at 0.5 PFLOP/s = 1 ms; 4 tokens / 5 ms = 800 tokens/s.
    c = {"bytes_step": 1e9, "bandwidth": 1e12, "flops_step": 1e12, "compute": 1e15,
         "comm_s": 1e-3, "prefill_flops": 0.125e12}  # fmt: skip
    assert output_rate(c, 4, 0.5, 0.5, 1e-3) == pytest.approx(800.0)


def test_deepseek_r1_needs_total_params_in_memory(serving):
    def fits(gpu):
        rows = serving.filter(
            (pl.col("gpu_id") == gpu) & (pl.col("model_id") == "deepseek-r1")
            & (pl.col("precision_bits") == 8) & (pl.col("num_gpus") == 8)
        )  # fmt: skip
        return rows["fits"].any()

    # 8 x 80 GiB x 0.9 = 618 GB < 671 GB of weights; 8 x 141 GiB x 0.9 = 1,090 GB holds it.
    assert not fits("h100-sxm5-80gb")
    assert fits("h200-sxm")


def test_moe_decode_reads_active_not_total():
    frame = with_capacity(
        systems(GPUS.filter(pl.col("gpu_id") == "h200-sxm"), MODELS),
        pl.lit(1024), pl.lit(1024),
    ).filter((pl.col("precision_bits") == 8) & (pl.col("num_gpus") == 8))  # fmt: skip
    r1 = frame.filter(pl.col("model_id") == "deepseek-r1").row(0, named=True)
    dense = frame.filter(pl.col("model_id") == "llama-3.1-405b").row(0, named=True)
    assert r1["weights_bytes"] == pytest.approx(671e9)  # memory: all experts
    # Users that fit: (8 x 141 GiB x 0.9 - 671 GB) / (2048 tokens x 70,272 bytes / 2 (fp8)).
    free = 8 * 141 * 2**30 * 0.9 - 671e9
    assert r1["users_max"] == pytest.approx(np.floor(free / (2048 * 35_136)))
    assert dense["weights_bytes"] == pytest.approx(405.9e9)


def test_serving_curve_shape(serving):
    curve = serving.filter(
        (pl.col("gpu_id") == "rtx-4090") & (pl.col("model_id") == "llama-3.1-8b")
        & (pl.col("precision_bits") == 8) & (pl.col("num_gpus") == 1)
    ).sort("concurrency")  # fmt: skip
    tps = curve["output_tokens_per_s"].to_numpy()
    per_user = curve["output_tokens_per_s_per_user"].to_numpy()
    assert (np.diff(tps) > 0).all() and (np.diff(per_user) < 0).all()
    assert (curve["low"] < curve["output_tokens_per_s"]).all()
    assert (curve["high"] > curve["output_tokens_per_s"]).all()
    assert set(curve["energy_basis"]) == {"tdp"}
    # The grid stops where KV memory runs out: 24 GiB x 0.9 - 8.03 GB of fp8 weights
    # holds (23.19 - 8.03) GB / (2048 x 65,536 B) = 112 users -> 64 is the last step.
    assert curve["concurrency"].max() == 64


def test_consumer_8b_curve_agrees_with_public_measurements(serving):
    # One user: llama.cpp measures Llama 3 8B F16 on an RTX 4090 at ~54 tokens/s
    # (XiongjieDai, llm_inference.csv); 16.06 GB / 1,008 GB/s = 15.9 ms a token at the
    # full bandwidth, 63 tokens/s at most. The anchored serving model must agree (+-15 %).
    one = tokens_per_s_at(serving, "rtx-4090", "llama-3.1-8b", 16, 1, 1)
    assert 54 * 0.85 <= one <= 63
    # Public vLLM sweeps of Llama 3.1 8B on one RTX 4090 reach ~1,000-3,000 output tokens/s
    # at high concurrency (docs/methodology.md §13).
    high = tokens_per_s_at(serving, "rtx-4090", "llama-3.1-8b", 8, 1, 64)
    assert 1000 <= high <= 3000


# A public vLLM concurrency sweep on one RTX 4090 (M. Rahman, "Benchmarking Mistral-7B on RTX
# 4090: vLLM Concurrency, Latency, and Capacity Planning", mushfiqrahman.dev, undated; read in
# the stored pages): Mistral-7B-Instruct-v0.3 in bf16, 256 input -> 128 output tokens, 300
# prompts at each max concurrency; output tokens/s of the whole server. Not in the evidence
# the fit sees (no RTX 4090 serving row there): a held-out check of a consumer card's curve.
RTX4090_MISTRAL_SWEEP = ((4, 210.0), (8, 377.0), (16, 644.0), (32, 975.0), (48, 1190.0))


def test_consumer_curve_agrees_with_a_held_out_public_vllm_sweep(validation):
    import datetime as dt

    rows = [
        {"source": "public-sweep", "gpu_id": "rtx-4090", "num_gpus": 1, "engine": "vllm",
         "engine_version": None, "model_id": "mistral-7b", "precision": "bf16",
         "precision_bits": 16, "scenario": "sweep", "concurrency": users, "input_tokens": 256,
         "output_tokens": 128, "output_tokens_per_s": rate,
         "output_tokens_per_s_per_user": None, "ttft_ms": None, "tpot_ms": None,
         "power_w": None, "as_of": dt.date(2024, 5, 22), "citation": "mushfiqrahman.dev"}
        for users, rate in RTX4090_MISTRAL_SWEEP
    ]  # fmt: skip
    sweep = pl.DataFrame(rows).cast(CONTRACT)
    vllm = summaries(validation).filter(pl.col("engine") == "vllm").row(0, named=True)
    predicted = predict_with(cases(sweep, GPUS, MODELS, ANCHOR), vllm)
    ratio = predicted / sweep["output_tokens_per_s"].to_numpy()
    # Modelled 226 / 415 / 714 / 1,113 / 1,369 tokens/s: +8 % to +15 % (2026-11-26).
    assert np.all((ratio > 0.8) & (ratio < 1.25)), ratio
    # and the curve bends as the sweep does: 48 users make < 6x what 4 users make.
    assert predicted[-1] / predicted[0] < 6.5


def test_single_user_anchor_is_the_measured_decode():
    row = ANCHOR.filter(pl.col("gpu_id") == "rtx-4090").row(0, named=True)
    assert row["anchor"].startswith("measured")
    assert 0.3 <= row["eff_bandwidth"] <= 0.95


def test_h100_70b_in_line_with_mlperf_offline(validation):
    # MLPerf v4.1 Offline llama2-70b: 8x H100 SXM ~24,000 tokens/s, ~3,000 per GPU.
    rows = MLPERF.filter((pl.col("gpu_id") == "h100-sxm5-80gb") & (pl.col("num_gpus") == 8))
    trt = summaries(validation).filter(pl.col("engine") == "tensorrt-llm").row(0, named=True)
    rows = rows.filter(
        (pl.col("scenario") == "offline") & (pl.col("model_id") == "llama-2-70b")
        & (pl.col("precision") == "fp8")
    )  # fmt: skip
    c = cases(rows, GPUS, MODELS, ANCHOR)
    predicted = predict_with(c, trt) / 8
    measured = rows["output_tokens_per_s"].to_numpy() / 8
    assert 2700 <= np.median(measured) <= 3300
    assert np.median(predicted) == pytest.approx(np.median(measured), rel=0.25)


def _fixture_rows(theta: dict) -> pl.DataFrame:
    """Hand-written contract rows; their tokens/s made by the model at known efficiencies."""
    rows = [
        ("h100-sxm5-80gb", 1, "llama-3.1-8b", 8, 1), ("h100-sxm5-80gb", 1, "llama-3.1-8b", 8, 64),
        ("h100-sxm5-80gb", 2, "llama-3.1-70b", 8, 32), ("h200-sxm", 1, "llama-3.1-8b", 16, 8),
        ("h200-sxm", 8, "llama-2-70b", 8, None), ("rtx-4090", 1, "llama-3.1-8b", 8, 16),
        ("rtx-4090", 1, "llama-3.1-8b", 16, 1), ("l40s", 4, "llama-3.1-70b", 8, 128),
    ]  # fmt: skip
    frame = pl.DataFrame(
        [
            {"source": "fixture", "gpu_id": g, "num_gpus": n, "engine": "vllm",
             "engine_version": None, "model_id": m, "precision": "fp8" if b == 8 else "bf16",
             "precision_bits": b, "scenario": "sweep" if c else "offline", "concurrency": c,
             "input_tokens": 1000, "output_tokens": 500, "output_tokens_per_s": 1.0,
             "output_tokens_per_s_per_user": None, "ttft_ms": None, "tpot_ms": None,
             "power_w": None, "as_of": dt.date(2026, 1, 1), "citation": "hand-written"}
            for g, n, m, b, c in rows
        ],
        schema=CONTRACT,
    )  # fmt: skip
    made = predict_with(cases(frame, GPUS, MODELS, ANCHOR), theta)
    return frame.with_columns(output_tokens_per_s=pl.Series(made))


def test_fit_recovers_known_efficiencies():
    theta = {"eff_compute": 0.6, "layer_overhead_us": 30.0, "fp4_gain": 2.0}
    c = cases(_fixture_rows(theta), GPUS, MODELS, ANCHOR)
    found = fit(c, prior_weight=0.0)
    assert found["eff_compute"] == pytest.approx(0.6, abs=0.01)
    assert found["layer_overhead_us"] == pytest.approx(30.0)
    assert found["rmse"] < 1e-9
    # The weak prior moves the answer at most one grid step on eight clean rows.
    shrunk = fit(c)
    assert shrunk["eff_compute"] == pytest.approx(0.6, abs=0.051)


def test_server_rows_meet_their_tpot_limit(validation):
    # MLPerf Server llama-2-70b: TPOT limit 200 ms. The predicted throughput is that of
    # the best batch whose time per output token per user (batch / group rate) is <= 0.2 s.
    row = MLPERF.filter(
        (pl.col("gpu_id") == "h100-sxm5-80gb") & (pl.col("model_id") == "llama-2-70b")
        & (pl.col("scenario") == "server") & (pl.col("num_gpus") == 8)
    ).head(1)  # fmt: skip
    trt = summaries(validation).filter(pl.col("engine") == "tensorrt-llm").row(0, named=True)
    c = cases(row, GPUS, MODELS, ANCHOR)
    offline = cases(row.with_columns(scenario=pl.lit("offline")), GPUS, MODELS, ANCHOR)
    served, unlimited = predict_with(c, trt)[0], predict_with(offline, trt)[0]
    assert served <= unlimited
    # Recompute by hand over the cases: the best group rate among batches meeting 0.2 s.
    best = 0.0
    for case in c.iter_rows(named=True):
        one = predict_with(pl.DataFrame([case], schema=c.schema), trt)[0]
        group = one / case["replicas"]
        if one > 0 and (case["batch"] / group <= 0.2 or case["batch"] <= 1):
            best = max(best, one)
    assert served == pytest.approx(best)


def test_band_floor_cap_and_coverage_by_hand():
    assert band(np.array([0.01, -0.01, 0.02])) == pytest.approx((-MIN_HALF, MIN_HALF))
    assert band(np.array([-5.0, 5.0, -5.0, 5.0])) == pytest.approx((-MAX_HALF, MAX_HALF))
    # Two GPUs: each one's band comes from the other's residuals (floored to +-10 %).
    logo = pl.DataFrame({
        "gpu_id": ["a", "a", "b", "b"], "measured": [1.0, 1.0, 1.0, 1.0],
        "predicted": [1.0, 1.05, 1.0, 2.0],
    })  # fmt: skip
    # a's rows (log residuals 0, -0.049) in b's band [-0.1 .. clip(q95 of 0, -0.69)] ->
    # b's band: quantiles of (0, -0.693) = (-0.658, -0.035) -> (-0.658, 0.1); both inside.
    # b's rows (0, -0.693) in a's band (-0.1, 0.1): 0 inside, -0.693 out. 3 of 4.
    assert coverage(logo) == pytest.approx(0.75)


def test_proxy_compute_by_hand():
    # Three NVIDIA GPUs with both figures, tensor / relative = 100, 200, 400 -> median 200;
    # the fourth, without a tensor figure at relative 0.5, gets 100 TFLOPS.
    gpus = pl.DataFrame({
        "gpu_id": ["a", "b", "c", "d"], "vendor": ["nvidia"] * 4,
        "architecture": ["ampere", "ampere", "ampere", "blackwell"],
        "fp16_tensor_tflops": [100.0, 200.0, 400.0, None],
        "fp8_tensor_tflops": [None, None, None, None],
    }, schema_overrides={"fp8_tensor_tflops": pl.Float64})  # fmt: skip
    rel = pl.DataFrame({
        "gpu_id": ["a", "b", "c", "d"], "workload": ["inference_16bit"] * 4,
        "value": [1.0, 1.0, 1.0, 0.5],
    })  # fmt: skip
    out = proxy_compute(gpus, rel).sort("gpu_id")
    assert out["fp16_tensor_tflops"][3] == pytest.approx(100.0)
    assert out["fp8_tensor_tflops"][3] == pytest.approx(200.0)  # Blackwell has FP8
    assert out["compute_proxy"].to_list() == [False, False, False, True]
    assert out["proxy_log_sd"][3] == pytest.approx(float(np.log([100, 200, 400]).std(ddof=1)))


def test_validation_reports_every_engine(validation):
    engines = summaries(validation)
    assert set(engines["engine"]) == {"tensorrt-llm", "vllm", "sglang", "pooled"}
    # SGLang has rows on one GPU only: reported, but the grid takes the pooled fit.
    sglang = engines.filter(pl.col("engine") == "sglang").row(0, named=True)
    assert "pooled" in sglang["detail"]
    fitted = engines.filter(pl.col("n_gpus") >= 3)
    assert fitted["median_ape"].is_not_null().all()
    assert fitted["coverage"].is_not_null().all()
    assert (fitted["log_q05"] >= -MAX_HALF).all() and (fitted["log_q95"] <= MAX_HALF).all()
    per_gpu = validation.filter(pl.col("gpu_id").is_not_null())
    assert per_gpu.filter(pl.col("engine") == "tensorrt-llm")["gpu_id"].n_unique() >= 5


def test_a_machine_sold_whole_serves_as_one_machine():
    # No tensor parallelism across DGX Sparks or Mac Studios: one row per machine count 1.
    grid = systems(GPUS.filter(pl.col("gpu_id").is_in(["dgx-spark", "rtx-4090"])), MODELS)
    counts = dict(grid.group_by("gpu_id").agg(pl.col("num_gpus").max()).iter_rows())
    assert counts == {"dgx-spark": 1, "rtx-4090": 8}


def test_a_unified_memory_machine_serves_from_its_gpu_share():
    # macOS lets the GPU of a 96 GB M3 Ultra wire 72 GB (gpus.llm_memory_gb): the serving
    # grid's usable memory is that x 0.9, not the machine's 96 GB.
    from sources.specs.unified_memory import with_llm_memory

    caps = pl.DataFrame({"gpu_id": ["m3-ultra-96gb"], "gpu_memory_gb": [72.0]})
    gpus = with_llm_memory(GPUS.filter(pl.col("gpu_id") == "m3-ultra-96gb"), caps)
    grid = systems(gpus, MODELS)
    assert grid["memory_bytes"].unique().to_list() == [pytest.approx(72 * 2**30 * 0.9)]
