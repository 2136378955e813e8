"""LLM inference (model/llm.py): memory fit by hand, the decode model, costs."""

import datetime as dt

import polars as pl
import pytest

from model.llm import (
    LOCAL_USE,
    decode_roofline,
    leave_one_gpu_out,
    llm_cost,
    llm_throughput,
    memory_fit,
)

GPUS = pl.DataFrame(
    {
        "gpu_id": ["rtx-4090", "rtx-4060-ti-16gb", "h100-sxm5-80gb", "rtx-3090", "mi250"],
        "vendor": ["nvidia", "nvidia", "nvidia", "nvidia", "amd"],
        "memory_gb": [24.0, 16.0, 80.0, 24.0, 128.0],
        "memory_bandwidth_gbs": [1008.0, 288.0, 3350.0, 936.0, 3277.0],
        "fp16_tensor_tflops": [165.2, 44.0, 989.5, 71.0, 362.1],
        "devices": [1, 1, 1, 1, 2],
    }
)


def fit(**kw):
    args = dict(sizes_b=(8, 32, 70), bits=(4, 8, 16), gpu_counts=(1, 2), context=8192,
                overhead_gib=0.5) | kw  # fmt: skip
    out = memory_fit(GPUS, **args)
    return {
        (r["gpu_id"], r["model_params_b"], r["bits"], r["num_gpus"]): r
        for r in out.iter_rows(named=True)
    }


def test_memory_fit_by_hand():
    rows = fit()
    # 70B at 4 bits: 70.6e9 x 4.85/8 = 42.80 GB weights + 8192 x 327,680 B = 2.68 GB KV
    # + 0.5 GiB a GPU. One 24 GB (GiB) card holds 25.77 GB: no; two hold 51.54 GB: yes.
    one, two = rows["rtx-4090", 70, 4, 1], rows["rtx-4090", 70, 4, 2]
    assert one["needed_gb"] == pytest.approx(42.80 + 2.684 + 0.537, abs=0.01)
    assert not one["fits"] and two["fits"]
    assert two["available_gb"] == pytest.approx(2 * 24 * 2**30 / 1e9)
    # 8B at 16 bits (16.06 GB + 1.07 GB KV + 0.54) does not fit 16 GiB, fits 24 GiB.
    assert not rows["rtx-4060-ti-16gb", 8, 16, 1]["fits"]
    assert rows["rtx-4090", 8, 16, 1]["fits"]
    # 32B at 4 bits fits one 24 GB card (Qwen2.5 32B Q4_K_M on an RTX 3090/4090).
    assert rows["rtx-3090", 32, 4, 1]["fits"]
    # 70B at 8 bits fits one 80 GB H100 (75.0 + 2.7 + 0.5 GB of 85.9), not at 16 bits.
    assert rows["h100-sxm5-80gb", 70, 8, 1]["fits"]
    assert not rows["h100-sxm5-80gb", 70, 16, 1]["fits"]
    # A longer context needs more: at 64k the 70B 4-bit model no longer fits two cards.
    assert not fit(context=65536)["rtx-4090", 70, 4, 2]["fits"]


def bench(rows):
    return pl.DataFrame(
        rows,
        schema=[
            "gpu_id",
            "num_gpus",
            "engine",
            "model_params_b",
            "bits",
            "quant",
            "phase",
            "batch",
            "context_tokens",
            "tokens_per_s",
        ],  # fmt: skip
        orient="row",
    ).with_columns(source=pl.lit("test"))


# Measured tokens/s at 60 % of each card's roofline (8B Q4_K_M: 4.87 GB per token).
def roof(bw):
    return bw * 1e9 / (8.03e9 * 4.85 / 8)


BENCH = bench(
    [
        (g, 1, "llama.cpp", 8.03, 4, "Q4_K_M", "decode", 1, 128, 0.6 * roof(bw))
        for g, bw in [("rtx-4090", 1008), ("rtx-4060-ti-16gb", 288), ("h100-sxm5-80gb", 3350),
                      ("rtx-3090", 936)]  # fmt: skip
    ]
    + [("rtx-4090", 1, "llama.cpp", 8.03, 4, "Q4_K_M", "prefill", 1, 512, 8000.0)] * 1
    + [("rtx-3090", 1, "llama.cpp", 8.03, 4, "Q4_K_M", "prefill", 1, 512, 4000.0),
       ("h100-sxm5-80gb", 1, "llama.cpp", 8.03, 4, "Q4_K_M", "prefill", 1, 512, 20000.0)]
)  # fmt: skip


def test_decode_efficiency_is_fitted_and_validated_leaving_each_gpu_out():
    rooflines = decode_roofline(BENCH, GPUS)
    assert rooflines["ratio"].to_list() == pytest.approx([0.6] * 4)
    logo = leave_one_gpu_out(rooflines, "llama.cpp")
    assert logo.height == 4 and logo["ape"].max() == pytest.approx(0, abs=1e-9)


def test_throughput_modelled_where_it_fits_and_measured_rows_stay_measured():
    out = llm_throughput(memory_fit(GPUS, (8, 70), (4,), (1, 2), 8192, 0.5), GPUS, BENCH)
    modelled = out.filter(~pl.col("method").str.starts_with("measured"))
    row = modelled.filter((pl.col("gpu_id") == "rtx-4090") & (pl.col("model_params_b") == 8)
                          & (pl.col("num_gpus") == 1)).row(0, named=True)  # fmt: skip
    # 0.6 x 1008 GB/s over (4.87 GB weights + 8192 x 131,072 B KV cache).
    assert row["decode_tokens_per_s"] == pytest.approx(
        0.6 * 1008e9 / (8.03e9 * 4.85 / 8 + 8192 * 131072), rel=1e-6
    )
    # Two cards split the layers: decode at one card's bandwidth, same speed.
    two = modelled.filter((pl.col("gpu_id") == "rtx-4090") & (pl.col("model_params_b") == 8)
                          & (pl.col("num_gpus") == 2))  # fmt: skip
    assert two["decode_tokens_per_s"][0] == pytest.approx(row["decode_tokens_per_s"])
    # ... and say so: a llama.cpp layer split, not tensor-parallel serving.
    assert two["method"][0].endswith("; layer split (llama.cpp): 2 GPUs decode at one GPU's speed")
    assert "layer split" not in row["method"]
    # A multi-die board reads at one die's bandwidth.
    mi250 = modelled.filter((pl.col("gpu_id") == "mi250") & (pl.col("model_params_b") == 8)
                            & (pl.col("num_gpus") == 1))  # fmt: skip
    assert mi250["decode_tokens_per_s"][0] < 0.6 * 3277e9 / (8.03e9 * 4.85 / 8) / 1.9
    # What does not fit has no throughput.
    no = modelled.filter((pl.col("gpu_id") == "rtx-4090") & (pl.col("model_params_b") == 70)
                         & (pl.col("num_gpus") == 1))  # fmt: skip
    assert no["method"][0] == "does not fit" and no["decode_tokens_per_s"][0] is None
    measured = out.filter(pl.col("method").str.starts_with("measured"))
    assert measured.height == 4 and set(measured["context_tokens"]) == {128}
    assert measured.filter(pl.col("gpu_id") == "rtx-4090")["prefill_tokens_per_s"][0] == 8000.0


def test_cost_per_million_tokens_buy_and_rent():
    throughput = pl.DataFrame(
        {
            "gpu_id": ["rtx-4090"],
            "model_params_b": [8],
            "bits": [4],
            "num_gpus": [1],
            "fits": [True],
            "decode_tokens_per_s": [100.0],
            "decode_low": [80.0],
            "decode_high": [125.0],
        }  # fmt: skip
    )
    buy = pl.DataFrame(
        {
            "gpu_id": ["rtx-4090"],
            "system_gpus": [1],
            "market": ["used"],
            "total_cost_usd": [5000.0],
            "price_method": ["observed"],
            "price_day": [dt.date(2026, 7, 1)],
        }  # fmt: skip
    )
    offers = pl.DataFrame(
        {
            "gpu_id": ["rtx-4090"] * 3,
            "gpu_count": [1, 8, 1],
            "price_type": ["on_demand"] * 2 + ["spot"],
            "usd_per_gpu_hour": [0.70, 0.50, 0.30],
            "provider": ["a", "b", "c"],
            "instance_type": ["x1", "x8", "s1"],
        }  # fmt: skip
    )
    out = llm_cost(throughput, buy, offers, years=5.0, utilization=0.15)
    rows = {r["basis"]: r for r in out.iter_rows(named=True)}
    tokens = 100.0 * 5 * 365 * 24 * 3600 * 0.15  # 2.37 billion tokens over 5 years
    assert rows["buy_used"]["usd_per_million_tokens"] == pytest.approx(5000 * 1e6 / tokens)
    assert rows["buy_used"]["low"] < rows["buy_used"]["usd_per_million_tokens"]
    # Renting pays the cheapest GPU-hour of instances with enough GPUs: $0.50 / 360k tokens.
    assert rows["rent_on_demand"]["usd_per_million_tokens"] == pytest.approx(0.50 / 0.36)
    assert rows["rent_spot"]["usd_per_million_tokens"] == pytest.approx(0.30 / 0.36)


def test_batch1_cost_says_it_is_one_user_on_their_own_machine_and_labels_the_layer_split():
    throughput = pl.DataFrame(
        {"gpu_id": ["rtx-4090"] * 2, "model_params_b": [70] * 2, "bits": [4] * 2,
         "num_gpus": [1, 2], "fits": [True] * 2, "decode_tokens_per_s": [20.0] * 2,
         "decode_low": [16.0] * 2, "decode_high": [25.0] * 2}
    )  # fmt: skip
    buy = pl.DataFrame(
        {"gpu_id": ["rtx-4090"] * 2, "system_gpus": [1, 2], "market": ["used"] * 2,
         "total_cost_usd": [5000.0, 8000.0], "price_method": ["observed"] * 2,
         "price_day": [dt.date(2026, 7, 1)] * 2}
    )  # fmt: skip
    offers = pl.DataFrame(
        {"gpu_id": ["rtx-4090"], "gpu_count": [2], "price_type": ["on_demand"],
         "usd_per_gpu_hour": [0.5], "provider": ["a"], "instance_type": ["x2"]}
    )  # fmt: skip
    out = llm_cost(throughput, buy, offers, years=5.0, utilization=0.15)
    assert out.height == 4
    assert out["detail"].str.starts_with(LOCAL_USE).all()
    assert "not the cost of serving" in LOCAL_USE
    two = out.filter(pl.col("num_gpus") == 2)["detail"]
    assert two.str.contains("layer split (llama.cpp): 2 GPUs", literal=True).all()
    assert not out.filter(pl.col("num_gpus") == 1)["detail"].str.contains("layer split").any()
