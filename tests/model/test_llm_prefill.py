"""The prefill model (model/llm_prefill.py) and the decode model's few-GPU vendor level.

Prefill: an efficiency on the int8 tensor rate per stack x architecture (x segment) where
rows exist, pooled otherwise; leave-one-GPU-out error per vendor x stack. Decode: a vendor
measured on 1-2 GPUs keeps its own bandwidth factor with the pooled per-layer cost. The
bundled Arc rows read with their stack and host.
"""

import polars as pl
import pytest

from model.llm import decode_model_for, decode_roofline, fit_decode
from model.llm_calibration import logo_by_vendor_stack, validation_rows
from model.llm_prefill import (
    prefill_basis,
    prefill_leave_one_gpu_out,
    prefill_model_for,
    prefill_rates,
    prefill_rows,
)
from sources.bundled import DATA_DIR, read_llm_benchmarks

THREADS = DATA_DIR / "benchmarks" / "llm" / "llamacpp_threads.csv"

RATIOS = pl.DataFrame(
    {
        "architecture": ["ampere", "ampere", "hopper", "rdna3"],
        "segment": ["consumer", "professional", "professional", "any"],
        "ratio": [4.0, 2.0, 2.0, 1.0],
    }
)
GPUS = pl.DataFrame(
    {
        "gpu_id": ["rtx-3090", "rtx-3080", "rtx-3070", "a100", "a40", "h100", "rx-7900-xtx",
                   "rtx-3060", "arc-a770"],
        "name": ["GeForce RTX 3090", "GeForce RTX 3080", "GeForce RTX 3070", "A100", "A40",
                 "H100", "Radeon RX 7900 XTX", "GeForce RTX 3060", "Arc A770"],
        "vendor": ["nvidia"] * 6 + ["amd", "nvidia", "intel"],
        "architecture": ["ampere"] * 5 + ["hopper", "rdna3", "ampere", "xe-hpg"],
        "fp16_tensor_tflops": [71.0, 59.5, 40.6, 312.0, 149.7, 756.0, 122.8, 51.2, None],
        "int8_tensor_tops": [284.0, 238.0, 162.5, 624.0, None, 1513.0, None, None, None],
    }
)  # fmt: skip


def prefill(gpu: str, tps: float, bits: int = 4, stack: str = "llama.cpp-cuda", **kw) -> dict:
    return {
        "source": "test", "gpu_id": gpu, "num_gpus": 1, "engine": stack, "model": "llama-3-8b",
        "model_params_b": 8.0, "bits": bits, "quant": "Q4_K_M" if bits == 4 else "F16",
        "phase": "prefill", "batch": 1, "context_tokens": 512, "tokens_per_s": tps,
        "stack": stack, "host": kw.get("host", "desktop"), "context_depth": kw.get("depth", 0),
    }  # fmt: skip


def tops(tps: float) -> float:
    """TFLOP/s reached by an 8B prefill at `tps` tokens/s."""
    return tps * 2 * 8.0e9 / 1e12


ROWS = pl.DataFrame(
    [
        prefill("rtx-3090", 3500.0),
        prefill("rtx-3080", 3200.0),
        prefill("rtx-3070", 2000.0),
        prefill("a100", 5400.0),
        prefill("a100", 6800.0, bits=16),
        prefill("a40", 2900.0),
        prefill("h100", 7100.0),
        prefill("rx-7900-xtx", 3000.0, stack="llama.cpp-rocm"),
        # Neither a constrained host's row nor one after 4096 cached tokens calibrates.
        prefill("rtx-3090", 100.0, host="egpu"),
        prefill("rtx-3090", 100.0, depth=4096),
    ]
)


def fitted() -> tuple[pl.DataFrame, pl.DataFrame]:
    basis = prefill_basis(GPUS, RATIOS)
    return basis, prefill_rows(ROWS, basis)


def test_the_basis_is_int8_else_fp16_times_the_architectures_ratio_else_nothing():
    basis = {r["gpu_id"]: r for r in prefill_basis(GPUS, RATIOS).iter_rows(named=True)}
    assert basis["rtx-3090"]["basis_tops"] == 284.0
    assert basis["rtx-3090"]["basis"] == "int8 tensor"
    # No int8 figure: the A40's fp16 x the Ampere professional 2x; a GeForce x 4.
    assert basis["a40"]["basis_tops"] == pytest.approx(299.4)
    assert basis["rtx-3060"]["basis_tops"] == pytest.approx(204.8)
    assert basis["rx-7900-xtx"]["basis_tops"] == pytest.approx(122.8)
    assert basis["rx-7900-xtx"]["segment"] == "consumer"
    assert basis["arc-a770"]["basis_tops"] is None


def test_only_empty_cache_rows_of_a_placing_host_calibrate():
    _, rows = fitted()
    assert rows.filter(pl.col("gpu_id") == "rtx-3090")["tokens_per_s"].to_list() == [3500.0]
    assert rows.filter(pl.col("gpu_id") == "rtx-3090")["efficiency"][0] == pytest.approx(
        tops(3500.0) / 284.0
    )


def test_an_architecture_with_rows_gets_its_own_efficiency_even_on_one_gpu():
    basis, rows = fitted()
    rates = prefill_rates(basis, rows, [4, 16])
    out = {(r["gpu_id"], r["bits"]): r for r in rates.iter_rows(named=True)}
    # Hopper: the H100 alone; its modelled rate is its measured one.
    h100 = out[("h100", 4)]
    assert h100["prefill_level"] == "llama.cpp-cuda x hopper x professional"
    assert h100["prefill_tops"] == pytest.approx(tops(7100.0))
    # Ampere professional: A100 and A40 (per-GPU medians, then the median over GPUs).
    a100_eff = tops(5400.0) / 624.0
    a40_eff = tops(2900.0) / 299.4
    assert out[("a100", 4)]["prefill_tops"] == pytest.approx(624.0 * (a100_eff + a40_eff) / 2)
    # The 16-bit prefill uses the level's 16-bit rows (the A100's F16 row) when it has some.
    assert out[("a40", 16)]["prefill_tops"] == pytest.approx(299.4 * tops(6800.0) / 624.0)
    # A GeForce without rows takes the Ampere consumer level (3090, 3080, 3070).
    effs = sorted(tops(t) / b for t, b in ((3500.0, 284.0), (3200.0, 238.0), (2000.0, 162.5)))
    assert out[("rtx-3060", 4)]["prefill_level"] == "llama.cpp-cuda x ampere x consumer"
    assert out[("rtx-3060", 4)]["prefill_tops"] == pytest.approx(204.8 * effs[1])
    # No compute spec, no prefill.
    assert ("arc-a770", 4) not in out


def test_a_gpu_alone_in_its_architecture_falls_back_to_a_pooled_level():
    _, rows = fitted()
    without_h100 = rows.filter(pl.col("gpu_id") != "h100")
    h100 = {"stack": "llama.cpp-cuda", "vendor": "nvidia", "architecture": "hopper",
            "segment": "professional"}  # fmt: skip
    eff, level = prefill_model_for(without_h100, h100, 4)
    # NVIDIA professional has only the A100 and A40 (2 GPUs < 3): NVIDIA x CUDA, 5 GPUs.
    assert level == "llama.cpp-cuda x nvidia"
    assert 0 < eff < 1


def test_leave_one_gpu_out_reports_each_gpu_and_the_summary_per_vendor_x_stack():
    _, rows = fitted()
    logo = prefill_leave_one_gpu_out(rows)
    assert set(logo["gpu_id"]) == set(rows["gpu_id"])
    rx = logo.filter(pl.col("gpu_id") == "rx-7900-xtx").row(0, named=True)
    assert rx["level"] == "consumer"  # no other ROCm GPU: the consumer GPUs of any vendor
    assert rx["ape"] == pytest.approx(abs(rx["predicted"] / rx["measured"] - 1))
    summary = logo_by_vendor_stack(logo)
    assert set(summary["stack"]) == {"llama.cpp-cuda", "llama.cpp-rocm"}
    out = validation_rows(summary, "2026-11-26", "llm_prefill_logo_stack", "prefill")
    assert set(out["check_name"]) == {"llm_prefill_logo_stack"}
    assert out["detail"][0].startswith("prefill; ")


def decode_row(gpu: str, stack: str, tps: float, params: float = 8.03) -> dict:
    return {
        "source": "test", "gpu_id": gpu, "num_gpus": 1, "engine": stack, "model": "m",
        "model_params_b": params, "bits": 4, "quant": "Q4_K_M", "phase": "decode", "batch": 1,
        "context_tokens": 128, "tokens_per_s": tps, "stack": stack, "host": "desktop",
    }  # fmt: skip


def test_a_vendor_on_two_gpus_keeps_its_own_bandwidth_factor_with_the_pooled_layer_cost():
    gpus = pl.DataFrame(
        {
            "gpu_id": ["g1", "g2", "g3", "i1", "i2"],
            "vendor": ["nvidia"] * 3 + ["intel"] * 2,
            "memory_bandwidth_gbs": [1000.0, 900.0, 500.0, 560.0, 456.0],
            "devices": [1] * 5,
        }
    )

    # NVIDIA rows from a = 1.3, c = 50 us per layer (32 layers at 8B, 80 at 70B).
    def tps(params: float, bw: float, layers: int) -> float:
        return 1 / (1.3 * params * 4.85 / 8 / bw + 5e-5 * layers)

    rows = pl.DataFrame(
        [decode_row(g, "llama.cpp-cuda", tps(p, bw, n), p)
         for g, bw in (("g1", 1000.0), ("g2", 900.0), ("g3", 500.0))
         for p, n in ((8.03, 32), (70.6, 80))]
        + [decode_row("i1", "llama.cpp-sycl", 40.0), decode_row("i2", "llama.cpp-sycl", 55.0)]
    )  # fmt: skip
    roof = decode_roofline(rows, gpus)
    nvidia_a, c, _ = decode_model_for(roof, "llama.cpp", "nvidia", 4, "llama.cpp-cuda")
    a, c_intel, level = decode_model_for(roof, "llama.cpp", "intel", 4, "llama.cpp-sycl")
    assert (nvidia_a, c) == (pytest.approx(1.3), pytest.approx(5e-5))
    # c is the first all-vendor level's (llama.cpp x 4 bits: every row, Intel's included).
    _, parent_c = fit_decode(roof)
    assert c_intel == pytest.approx(parent_c)
    assert level == "llama.cpp-sycl x intel x 4 bits (2 GPUs; per-layer cost of llama.cpp x 4 bits)"
    intel = roof.filter(pl.col("vendor") == "intel")
    own = ((intel["seconds"] - parent_c * intel["layers"]) / intel["read_s"]).median()
    assert a == pytest.approx(own)
    assert a != pytest.approx(nvidia_a)


def test_the_bundled_arc_rows_read_with_their_stack_and_host():
    rows = read_llm_benchmarks(THREADS, None).filter(pl.col("gpu_id").str.starts_with("arc-"))
    by = {(r["gpu_id"], r["stack"], r["phase"]): r for r in rows.iter_rows(named=True)}
    a770 = by[("arc-a770-16gb", "llama.cpp-sycl", "decode")]
    assert a770["tokens_per_s"] == 55.0
    assert "docs/backend/SYCL.md" in a770["citation"]
    assert by[("arc-a770-16gb", "llama.cpp-vulkan", "decode")]["host"] == "desktop"
    b580 = by[("arc-b580", "llama.cpp-sycl", "prefill")]
    assert (b580["tokens_per_s"], b580["context_tokens"]) == (2335.96, 512)
    assert str(b580["as_of"]) == "2025-03-22"
