"""LLM calibration hygiene (model/llm_calibration.py; issue 22 step 6).

The cost tables price a measured batch-1 decode rate where one matches the configuration
(preferring the vendor's reference stack), the model otherwise, and say which; the decode
model's leave-one-GPU-out error is reported per vendor x stack; constrained hosts stay out.
The bundled llama.cpp thread file reads with its context depth and provenance cells, and
a bad cell is refused naming file and line.
"""

from pathlib import Path

import polars as pl
import pytest

from model.llm import decode_model_for, decode_roofline, leave_one_gpu_out, memory_fit
from model.llm import llm_throughput as throughput_of
from model.llm_calibration import (
    decode_validation_by_stack,
    logo_by_vendor_stack,
    measured_decode_rates,
    rates_for_cost,
    validation_rows,
)
from sources.bundled import DATA_DIR, read_llm_benchmarks
from sources.tables import BadInputError
from tests.model.test_llm import BENCH, GPUS, bench, roof

THREADS = DATA_DIR / "benchmarks" / "llm" / "llamacpp_threads.csv"

# The MI250 (AMD) gets llama.cpp rows on two stacks: ROCm (the reference) and Vulkan.
AMD = bench(
    [
        ("mi250", 1, "llama.cpp-rocm", 8.03, 4, "Q4_K_M", "decode", 1, 64, 100.0),
        ("mi250", 1, "llama.cpp-rocm", 8.03, 4, "Q4_K_M", "decode", 1, 64, 90.0),
        ("mi250", 1, "llama.cpp-vulkan", 8.03, 4, "Q4_K_M", "decode", 1, 128, 40.0),
    ]
).with_columns(stack=pl.col("engine"), host=pl.lit("desktop"))


def benchmarks() -> pl.DataFrame:
    return pl.concat(
        [BENCH.with_columns(stack=pl.lit("llama.cpp-cuda"), host=pl.lit("server")), AMD],
        how="diagonal_relaxed",
    )


def priced(rows: pl.DataFrame) -> pl.DataFrame:
    grid = memory_fit(GPUS, (8, 70), (4,), (1, 2), 8192, 0.5)
    modelled = throughput_of(grid, GPUS, rows).filter(pl.col("method").str.starts_with("modelled"))
    return rates_for_cost(modelled, measured_decode_rates(rows, GPUS))


def row(frame: pl.DataFrame, gpu: str, size: int, n: int) -> dict:
    hit = frame.filter(
        (pl.col("gpu_id") == gpu) & (pl.col("model_params_b") == size) & (pl.col("num_gpus") == n)
    )
    assert hit.height == 1
    return hit.row(0, named=True)


def test_a_measured_rate_prices_its_configuration_and_the_model_the_rest():
    out = priced(benchmarks())
    measured = row(out, "rtx-4090", 8, 1)
    assert measured["rate_source"] == "measured"
    assert measured["decode_tokens_per_s"] == pytest.approx(0.6 * roof(1008))
    assert measured["method"].startswith("measured: median of 1 batch-1 decode rows")
    # Two GPUs of the same card: nothing measured, so the model.
    assert row(out, "rtx-4090", 8, 2)["rate_source"] == "modelled"
    # No 70B row was measured anywhere: every 70B configuration is modelled.
    assert set(out.filter(pl.col("model_params_b") == 70)["rate_source"].drop_nulls()) == {
        "modelled"
    }


def test_the_vendors_reference_stack_is_preferred_over_another_backend():
    # ROCm rows 100 and 90 (median 95, range 90-100); the Vulkan 40 is not mixed in.
    amd = row(priced(benchmarks()), "mi250", 8, 1)
    assert amd["rate_source"] == "measured"
    assert amd["decode_tokens_per_s"] == pytest.approx(95.0)
    assert (amd["decode_low"], amd["decode_high"]) == (90.0, 100.0)
    assert "llama.cpp-rocm" in amd["method"] and "vulkan" not in amd["method"]
    # With only the Vulkan row, that row prices it.
    vulkan_only = benchmarks().filter(pl.col("engine") != "llama.cpp-rocm")
    assert row(priced(vulkan_only), "mi250", 8, 1)["decode_tokens_per_s"] == 40.0


@pytest.mark.parametrize("host", ["egpu", "sbc", "external-link"])
def test_a_constrained_host_never_prices_a_configuration(host):
    rows = benchmarks().with_columns(
        host=pl.when(pl.col("gpu_id") == "mi250").then(pl.lit(host)).otherwise("host")
    )
    assert "mi250" not in measured_decode_rates(rows, GPUS)["gpu_id"].to_list()
    assert row(priced(rows), "mi250", 8, 1)["rate_source"] == "modelled"


def test_the_llm_cost_rows_say_which_rate_they_price():
    from model.llm import llm_cost

    rates = priced(benchmarks())
    buy = pl.DataFrame(
        {
            "gpu_id": ["rtx-4090", "rtx-4090"],
            "system_gpus": [1, 2],
            "market": ["new", "new"],
            "total_cost_usd": [4000.0, 7000.0],
            "price_method": ["observed", "observed"],
            "price_day": ["2026-09-01", "2026-09-01"],
        }
    )
    offers = pl.DataFrame(
        schema={
            "gpu_id": pl.Utf8,
            "gpu_count": pl.Int32,
            "price_type": pl.Utf8,
            "usd_per_gpu_hour": pl.Float64,
            "provider": pl.Utf8,
            "instance_type": pl.Utf8,
        }  # fmt: skip
    )
    cost = llm_cost(rates, buy, offers, years=5.0, utilization=0.15).filter(
        pl.col("model_params_b") == 8
    )
    by_n = {r["num_gpus"]: r for r in cost.iter_rows(named=True)}
    assert by_n[1]["rate_source"] == "measured" and by_n[2]["rate_source"] == "modelled"
    assert by_n[1]["decode_tokens_per_s"] == pytest.approx(0.6 * roof(1008))


def three_stack_rows() -> pl.DataFrame:
    """Four NVIDIA GPUs on CUDA at 60 % of the roofline, three also on Vulkan at 30 %."""
    cards = [("rtx-4090", 1008), ("rtx-4060-ti-16gb", 288), ("h100-sxm5-80gb", 3350),
             ("rtx-3090", 936)]  # fmt: skip
    cuda = [(g, 1, "llama.cpp-cuda", 8.03, 4, "Q4_K_M", "decode", 1, 128, 0.6 * roof(bw))
            for g, bw in cards]  # fmt: skip
    vulkan = [(g, 1, "llama.cpp-vulkan", 8.03, 4, "Q4_K_M", "decode", 1, 128, 0.3 * roof(bw))
              for g, bw in cards]  # fmt: skip
    return bench(cuda + vulkan).with_columns(stack=pl.col("engine"))


def test_each_stack_is_fitted_on_its_own_rows_once_it_has_three_gpus():
    rooflines = decode_roofline(three_stack_rows(), GPUS)
    a_cuda, _, cuda_level = decode_model_for(rooflines, "llama.cpp", "nvidia", 4, "llama.cpp-cuda")
    a_vk, _, vk_level = decode_model_for(rooflines, "llama.cpp", "nvidia", 4, "llama.cpp-vulkan")
    assert cuda_level == "llama.cpp-cuda x nvidia x 4 bits"
    assert vk_level == "llama.cpp-vulkan x nvidia x 4 bits"
    # a is the inverse share of the bandwidth reached: 1/0.6 and 1/0.3.
    assert (a_cuda, a_vk) == pytest.approx((1 / 0.6, 1 / 0.3), rel=1e-6)
    # One engine-wide fit would miss both by a third or more; per stack, none.
    logo = leave_one_gpu_out(rooflines, "llama.cpp")
    assert logo["ape"].max() == pytest.approx(0, abs=1e-9)


def test_a_fit_reading_faster_than_the_bandwidth_falls_to_the_next_level():
    # Three GPUs "measured" above their roofline on ROCm (a < 1): noise, not a property.
    cards = [("rtx-4090", 1008), ("rtx-3090", 936), ("rtx-4060-ti-16gb", 288)]
    fast = bench(
        [(g, 1, "llama.cpp-rocm", 8.03, 4, "Q4_K_M", "decode", 1, 128, 1.05 * roof(bw))
         for g, bw in cards]
    ).with_columns(stack=pl.col("engine"))  # fmt: skip
    cuda = three_stack_rows().filter(pl.col("engine") == "llama.cpp-cuda")
    rooflines = decode_roofline(pl.concat([cuda, fast], how="diagonal_relaxed"), GPUS)
    a, _, level = decode_model_for(rooflines, "llama.cpp", "nvidia", 4, "llama.cpp-rocm")
    assert level == "llama.cpp x nvidia x 4 bits" and a >= 1.0


def test_the_logo_table_has_a_row_per_vendor_and_stack():
    rows = pl.concat([three_stack_rows(), AMD], how="diagonal_relaxed")
    table = decode_validation_by_stack(rows, GPUS)
    assert set(zip(table["vendor"], table["stack"], strict=True)) == {
        ("nvidia", "llama.cpp-cuda"),
        ("nvidia", "llama.cpp-vulkan"),
        ("amd", "llama.cpp-rocm"),
        ("amd", "llama.cpp-vulkan"),
    }
    nvidia = table.filter(pl.col("vendor") == "nvidia")
    assert nvidia["n_gpus"].to_list() == [4, 4]
    assert nvidia["max_ape"].max() == pytest.approx(0, abs=1e-9)
    # The AMD rows are predicted by NVIDIA-fitted levels: the signed error says how far.
    amd = table.filter(pl.col("vendor") == "amd").row(0, named=True)
    assert amd["median_error"] == pytest.approx(amd["median_ape"]) or amd["median_error"] < 0
    out = validation_rows(table, "2026-09-20")
    assert out.height == 3 * table.height
    assert set(out["metric"]) == {"median_ape", "max_ape", "median_error"}
    assert "nvidia x llama.cpp-vulkan" in out["subject"].to_list()


def test_logo_by_vendor_stack_by_hand():
    logo = pl.DataFrame(
        {
            "gpu_id": ["a", "a", "b"],
            "vendor": ["amd"] * 3,
            "stack": ["llama.cpp-rocm"] * 3,
            "measured": [100.0, 100.0, 50.0],
            "predicted": [110.0, 80.0, 60.0],
            "level": ["x"] * 3,
        }
    ).with_columns(ape=(pl.col("predicted") / pl.col("measured") - 1).abs())
    got = logo_by_vendor_stack(logo).row(0, named=True)
    assert got["n_gpus"] == 2 and got["n"] == 3
    assert got["median_ape"] == pytest.approx(0.2)  # |+10 %|, |-20 %|, |+20 %|
    assert got["max_ape"] == pytest.approx(0.2)
    assert got["median_error"] == pytest.approx(0.1)


# --- the bundled file ---------------------------------------------------------------


def test_the_thread_file_reads_with_depth_and_provenance():
    rows = read_llm_benchmarks(THREADS, None)
    xtx = rows.filter((pl.col("gpu_id") == "rx-7900-xtx") & (pl.col("phase") == "decode"))
    assert set(xtx["stack"]) == {"llama.cpp-rocm"}
    assert sorted(xtx["context_depth"].to_list()) == [0, 0, 4096]
    # Its published 8B 4-bit decode: 91.8-105.75 tokens/s on ROCm.
    assert (xtx["tokens_per_s"].min(), xtx["tokens_per_s"].max()) == (91.8, 105.75)
    assert rows["citation"].str.len_chars().min() > 20
    assert rows["batch_regime"].unique().to_list() == ["batch-1"]


def _with(path: Path, tmp_path: Path, column: str, value: str) -> Path:
    lines = path.read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    cells = lines[2].split(",")
    cells[header.index(column)] = value
    lines[2] = ",".join(cells)
    out = tmp_path / path.name
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@pytest.mark.parametrize(
    ("column", "value", "reason"),
    [
        ("stack", "rocm", "is not one of"),
        ("host", "cloud", "is not one of"),
        ("context_depth", "-1", None),
        ("context_depth", "4k", None),
    ],
)
def test_a_bad_stack_host_or_depth_is_refused_naming_file_and_line(tmp_path, column, value, reason):
    path = _with(THREADS, tmp_path, column, value)
    with pytest.raises(BadInputError, match=reason) as error:
        read_llm_benchmarks(path, None)
    assert (error.value.path, error.value.line, error.value.column) == (str(path), 3, column)


def test_the_same_test_at_two_depths_is_two_rows_but_a_repeat_is_refused(tmp_path):
    lines = THREADS.read_text(encoding="utf-8").splitlines()
    path = tmp_path / "repeat.csv"
    path.write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="duplicate of line 2"):
        read_llm_benchmarks(path, None)
