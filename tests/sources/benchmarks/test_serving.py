"""The serving file's reader (sources/benchmarks/serving.py) and the bundled serving.csv."""

import datetime as dt

import polars as pl
import pytest

from sources.benchmarks.serving import COLUMN_NAMES, read_serving_benchmarks
from sources.bundled import DATA_DIR, SPEC_SHEET, read_gpu_specs
from sources.tables import BadInputError

SERVING = DATA_DIR / "benchmarks" / "llm" / "serving.csv"
GPUS = frozenset({"h100-sxm5-80gb", "rtx-4090"})
# One valid row per line below the header; each test breaks one cell of one of them.
GOOD = {
    "source": "mlperf",
    "gpu_id": "h100-sxm5-80gb",
    "num_gpus": "8",
    "engine": "tensorrt-llm",
    "engine_version": "",
    "model_id": "llama-2-70b",
    "precision": "fp8",
    "precision_bits": "8",
    "scenario": "offline",
    "concurrency": "",
    "input_tokens": "",
    "output_tokens": "290",
    "output_tokens_per_s": "24000.5",
    "output_tokens_per_s_per_user": "",
    "ttft_ms": "",
    "tpot_ms": "",
    "power_w": "",
    "as_of": "2024-08-28",
    "citation": "mlcommons/inference_results_v4.1 closed/X/results/Y/llama2-70b/Offline@00000000",
}
SWEEP = {
    **GOOD,
    "source": "yobitelcomm-bench",
    "gpu_id": "rtx-4090",
    "num_gpus": "1",
    "engine": "vllm",
    "model_id": "llama-3.1-8b",
    "precision": "bf16",
    "precision_bits": "16",
    "scenario": "sweep",
    "concurrency": "16",
    "output_tokens_per_s": "900",
    "output_tokens_per_s_per_user": "56",
    "citation": "https://example.org/sweep",
}


def write(tmp_path, *rows: dict) -> object:
    path = tmp_path / "serving.csv"
    lines = ["# comment", ",".join(COLUMN_NAMES)]
    lines += [",".join(row[c] for c in COLUMN_NAMES) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_good_file_loads_with_the_table_columns_and_types(tmp_path):
    rows = read_serving_benchmarks(write(tmp_path, GOOD, SWEEP), GPUS)
    assert rows.columns == list(COLUMN_NAMES)
    assert rows.height == 2
    first = rows.row(0, named=True)
    assert first["as_of"] == dt.date(2024, 8, 28)
    assert first["output_tokens_per_s"] == 24000.5
    assert first["concurrency"] is None and first["engine_version"] is None
    assert rows["concurrency"].to_list() == [None, 16]


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        ({"gpu_id": "h100-unknown"}, "gpu_id", "is not one of"),
        ({"model_id": "llama-9-1t"}, "model_id", "is not one of"),
        ({"precision_bits": "12"}, "precision_bits", "not a bit class"),
        ({"precision": "fp8", "precision_bits": "16"}, "precision_bits", "fp8 is 8-bit"),
        ({"precision": "fp6"}, "precision", "is not one of"),
        ({"output_tokens_per_s": "nan"}, "output_tokens_per_s", "not a valid float"),
        ({"output_tokens_per_s": "inf"}, "output_tokens_per_s", "not a valid float"),
        ({"output_tokens_per_s": "-3"}, "output_tokens_per_s", "greater than 0"),
        ({"output_tokens_per_s": ""}, "output_tokens_per_s", "missing value"),
        ({"as_of": "2024-13-01"}, "as_of", "not a valid date"),
        ({"as_of": "2999-01-01"}, "as_of", "in the future"),
        ({"citation": ""}, "citation", "missing value"),
        ({"citation": "  "}, "citation", "missing value"),
        ({"engine": "TensorRT"}, "engine", "is not one of"),
        ({"scenario": "batch"}, "scenario", "is not one of"),
        ({"source": "someone"}, "source", "is not one of"),
        ({"concurrency": "8"}, "concurrency", "offline row has no concurrency"),
        ({"num_gpus": "0"}, "num_gpus", "below the minimum"),
    ],
)
def test_a_bad_cell_is_refused_naming_file_line_and_field(tmp_path, change, field, reason):
    path = write(tmp_path, SWEEP, {**GOOD, **change})
    with pytest.raises(BadInputError) as caught:
        read_serving_benchmarks(path, GPUS)
    # Line 1 is the comment, 2 the header, 3 the sweep row: the broken row is line 4.
    assert (caught.value.path, caught.value.line, caught.value.column) == (str(path), 4, field)
    assert reason in caught.value.reason


def test_per_user_above_the_system_rate_is_refused(tmp_path):
    path = write(tmp_path, {**SWEEP, "output_tokens_per_s_per_user": "901"})
    with pytest.raises(BadInputError, match="line 3.*per_user.*901 per user > 900"):
        read_serving_benchmarks(path, GPUS)


def test_a_sweep_point_without_its_concurrency_is_refused(tmp_path):
    path = write(tmp_path, {**SWEEP, "concurrency": ""})
    with pytest.raises(BadInputError, match="sweep point needs its concurrency"):
        read_serving_benchmarks(path, GPUS)


def test_the_same_measurement_twice_is_refused(tmp_path):
    path = write(tmp_path, GOOD, {**GOOD, "output_tokens_per_s": "25000"})
    with pytest.raises(BadInputError, match="line 4.*duplicate of line 3"):
        read_serving_benchmarks(path, GPUS)


def test_a_header_that_is_not_the_table_is_refused(tmp_path):
    path = tmp_path / "serving.csv"
    path.write_text("source,gpu_id\nmlperf,h100-sxm5-80gb\n", encoding="utf-8")
    with pytest.raises(BadInputError, match=r"line 1, field '\(header\)'"):
        read_serving_benchmarks(path, GPUS)


@pytest.fixture(scope="module")
def bundled() -> pl.DataFrame:
    ids = frozenset(read_gpu_specs(SPEC_SHEET)["gpu_id"])
    return read_serving_benchmarks(SERVING, ids)


def test_the_bundled_file_loads_against_the_catalog(bundled):
    assert bundled.height > 900
    assert set(bundled["source"]) == {"mlperf", "tensorrt-llm-perf-overview", "yobitelcomm-bench"}


def test_nvidia_hopper_llama2_70b_mlperf_rows_are_fp8_not_the_declared_fp16(bundled):
    hopper = bundled.filter(
        (pl.col("source") == "mlperf")
        & (pl.col("model_id") == "llama-2-70b")
        & pl.col("gpu_id").is_in(["h100-sxm5-80gb", "h200-sxm", "h100-nvl-94gb", "gh200-144gb"])
    )
    assert hopper.height > 50
    assert set(hopper["precision_bits"]) == {8}


def test_h100_sxm_llama2_70b_offline_per_gpu_matches_mlperf_v41(bundled):
    # NVIDIA DGX H100 8x, v4.1 closed Offline: 24,524.9 tokens/s for the system, ~3,066 a GPU.
    dgx = bundled.filter(
        pl.col("citation").str.contains("NVIDIA/results/DGX-H100_H100-SXM-80GBx8_TRT/llama2-70b")
        & (pl.col("scenario") == "offline")
    ).row(0, named=True)
    assert dgx["num_gpus"] == 8
    assert dgx["output_tokens_per_s"] / dgx["num_gpus"] == pytest.approx(3065.6125)


def test_server_rows_carry_the_mlperf_latency_limits(bundled):
    server = bundled.filter((pl.col("source") == "mlperf") & (pl.col("scenario") == "server"))
    limits = server.filter(pl.col("model_id") == "llama-2-70b").select("ttft_ms", "tpot_ms")
    assert limits.unique().rows() == [(2000.0, 200.0)]
    offline = bundled.filter(pl.col("scenario") == "offline")
    assert offline["tpot_ms"].null_count() == offline.height
