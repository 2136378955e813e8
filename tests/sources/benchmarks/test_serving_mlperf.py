"""MLPerf Inference summaries -> serving rows (sources/benchmarks/serving_mlperf.py)."""

import datetime as dt

import pytest

from sources.benchmarks.serving_mlperf import (
    engine_of,
    layout_of,
    mlperf_serving_rows,
    precision_of,
)

AS_OF = dt.date(2025, 9, 9)
KNOWN = frozenset({"h100-sxm5-80gb", "h200-sxm", "mi300x", "b200", "rtx-pro-6000-blackwell"})


def old_layout(**change) -> dict:
    """A summary_results row (v4.1/v5.1 names), our own made-up figures."""
    row = {
        "Submitter": "Acme",
        "Availability": "available",
        "Category": "closed",
        "Suite": "datacenter",
        "Platform": "box_8xH100",
        "Model": "llama2-70b-99",
        "Scenario": "Offline",
        "Performance_Result": "20000.0",
        "Performance_Units": "Tokens/s",
        "Accuracy": "ROUGE1: 44.4  TOKENS_PER_SAMPLE: 290.4",
        "Nodes": "1",
        "Accelerator": "NVIDIA H100-SXM-80GB",
        "a#": "8",
        "Location": "closed/Acme/results/box_8xH100/llama2-70b-99/Offline",
        "Software": "TensorRT 10.2.0, CUDA 12.4",
        "version": "v5.1",
        "weight_data_types": "fp8",
        "Power_Result": "",
        "Power_Units": "",
    }
    return {**row, **change}


def new_layout(**change) -> dict:
    """A summary.csv row (v6.x names), our own made-up figures."""
    row = {
        "Organization": "Acme",
        "Availability": "available",
        "Division": "closed",
        "SystemType": "datacenter",
        "Platform": "box_4xMI300X",
        "Model": "llama3.1-8b",
        "Scenario": "Server",
        "Result": "30000.5",
        "Accuracy": "ROUGE1: 38.7",
        "number_of_nodes": "1",
        "accelerator_model_name": "AMD Instinct MI300X 192GB HBM3",
        "accelerators_per_node": "4",
        "total_accelerators": "4",
        "Location": "./closed/Acme/results/box_4xMI300X/llama3.1-8b/Server/performance/run_1",
        "framework": "vLLM 0.22.0, PyTorch 2.10.0, ROCm 7.2.2",
        "version": "v6.1",
        "Units": "Tokens/s",
        "weight_data_types": "fp8",
    }
    return {**row, **change}


def rows_of(*rows):
    return mlperf_serving_rows(list(rows), commit="abcdef0123456789", as_of=AS_OF, known=KNOWN)


def test_the_two_layouts_are_told_apart_by_their_header():
    assert layout_of(old_layout()) == "summary_results"
    assert layout_of(new_layout()) == "summary_csv"
    with pytest.raises(ValueError, match="not an MLPerf Inference summary"):
        layout_of({"Model": "x", "Result": "1"})


def test_an_old_layout_offline_row_is_a_whole_system_figure_without_latency_limits():
    (row,), skipped = rows_of(old_layout())
    assert not skipped
    assert row["gpu_id"] == "h100-sxm5-80gb" and row["num_gpus"] == 8
    assert (row["model_id"], row["scenario"], row["precision"]) == ("llama-2-70b", "offline", "fp8")
    assert row["output_tokens_per_s"] == 20000.0 and row["output_tokens"] == 290
    assert row["ttft_ms"] is None and row["concurrency"] is None
    assert row["citation"] == (
        "mlcommons/inference_results_v5.1 closed/Acme/results/box_8xH100/llama2-70b-99/"
        "Offline@abcdef01"
    )


def test_the_v6_column_map_reads_count_engine_version_and_server_limits():
    (row,), _ = rows_of(new_layout())
    assert row["gpu_id"] == "mi300x" and row["num_gpus"] == 4
    assert (row["engine"], row["engine_version"]) == ("vllm", "0.22.0")
    assert (row["ttft_ms"], row["tpot_ms"]) == (2000.0, 100.0)  # llama3.1-8b Server limits
    assert row["citation"].startswith("mlcommons/inference_results_v6.1 closed/Acme/")


def test_nvidia_v41_hopper_fp16_declaration_is_read_as_fp8_with_its_evidence():
    declared = old_layout(version="v4.1", weight_data_types="fp16")
    (row,), _ = rows_of(declared)
    assert row["precision"] == "fp8" and "use_fp8 = True" in row["citation"]
    # The same declaration on vLLM, or a model without the harness evidence, stays fp16.
    (amd,), _ = rows_of(declared | {"Software": "vLLM 0.4.3", "Accelerator": "AMD MI300X"})
    assert amd["precision"] == "fp16"
    (moe,), _ = rows_of(declared | {"Model": "mixtral-8x7b"})
    assert moe["precision"] == "fp16"


def test_the_same_figure_for_both_accuracy_targets_is_one_measurement():
    strict = old_layout(
        Model="llama2-70b-99.9",
        Location="closed/Acme/results/box_8xH100/llama2-70b-99.9/Offline",
    )
    rows, skipped = rows_of(old_layout(), strict)
    assert len(rows) == 1 and "-99.9/" in rows[0]["citation"]
    assert skipped["same figure submitted for both accuracy targets"] == 1


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"Category": "open"}, "not the closed division"),
        ({"Suite": "edge"}, "not the datacenter suite"),
        ({"Availability": "preview"}, "availability preview"),
        ({"Model": "resnet"}, "is not an LLM kept"),
        ({"Scenario": "SingleStream"}, "not a serving scenario"),
        ({"Performance_Units": "Queries/s"}, "unit"),
        ({"Accelerator": "Google TPU v6e"}, "not a catalog GPU"),
        ({"Software": "PyTorch 2.7, ROCm 6.4"}, "names no engine"),
        ({"Software": "Mango LLMBoost, vllm-0.9.0"}, "names no engine"),
    ],
)
def test_what_is_not_a_serving_row_is_counted_with_its_reason(change, reason):
    rows, skipped = rows_of(old_layout(**change))
    assert rows == []
    assert sum(skipped.values()) == 1 and reason in next(iter(skipped))


def test_engine_precision_and_gpu_names():
    assert engine_of("TensorRT 10.14, CUDA 13.1, TensorRT-LLM 1.3.0rc0, vLLM CentML") == (
        "tensorrt-llm",
        "1.3.0rc0",
    )
    assert engine_of("SGLang 0.5.15.post1 (ROCm 7.2.0)") == ("sglang", "0.5.15.post1")
    assert precision_of("fp8, bf16") == "fp8"
    assert precision_of("MXFP4") == "mxfp4"
    assert precision_of("nvfp4 (E2M1 4-bit + FP8 block scales)") == "nvfp4"
    (row,), _ = rows_of(
        new_layout(accelerator_model_name="NVIDIA RTX PRO 6000 Blackwell Server Edition")
    )
    assert row["gpu_id"] == "rtx-pro-6000-blackwell"
