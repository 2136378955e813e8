"""FP8 runs in MLPerf Training tables, and tables that measure one GPU alone.

- An MLPerf Training transformer/LLM table is split by the architecture of each row's GPU
  into its FP8 runs and its 16-bit runs (model/training_precision.py), so a Hopper FP8
  figure never sets an Ampere GPU's 16-bit ratio: the 16-bit bridge comes from 16-bit
  tables.
- A table that measures one GPU alone does not make a GPU that shares one table with
  others look placed by several (performance_fit._cells).
"""

import datetime as dt
import math

import polars as pl
import pytest

from model.benchmark_weights import default_weights
from model.debias import debias
from model.parameters import ModelParameters
from model.performance_fit import measured_workload, nearest_anchors, workload_rows
from model.training_precision import (
    FP8_SUFFIX,
    FP8_TRAINING_ARCHITECTURES,
    SPLIT_CLASSES,
    table_precision,
)
from sources.bundled import SPEC_SHEET, read_gpu_specs

DAY = dt.date(2026, 9, 20)
PARAMS = ModelParameters(constants="dettmers", reference_gpu="a100")
ARCH = {"a100": "ampere", "a30": "ampere", "h100": "hopper", "l40s": "ada", "mi300x": "cdna3"}


def catalog() -> pl.DataFrame:
    """The five GPUs of the scenarios, with their architectures (specs play no part)."""
    return pl.DataFrame(
        {
            "gpu_id": list(ARCH),
            "architecture": list(ARCH.values()),
            "form_factor": ["sxm"] * len(ARCH),
            "release_date": [dt.date(2020, 1, 1)] * len(ARCH),
        }
    )


def rows(figures: list[tuple[str, str, str, str, str, float]]) -> pl.DataFrame:
    """Benchmark rows from (source, era, model, workload_class, gpu_id, throughput)."""
    base = {"task": "training", "num_gpus": 1, "batch_size_per_gpu": 32, "flags": "",
            "as_of": dt.date(2024, 1, 1)}  # fmt: skip
    out = []
    for source, era, model, cls, gpu, value in figures:
        mlperf = source == "mlperf"
        out.append(
            base
            | {
                "source": source,
                "software_era": era,
                "citation": f"{era}/{gpu}" if mlperf else "lambda.csv",
                "model": model,
                "workload_class": cls,
                "precision": "mixed" if mlperf else "fp16",
                "unit": "trainings/h" if mlperf else "samples/s",
                "gpu_id": gpu,
                "throughput": value,
            }
        )
    return pl.DataFrame(out)


def test_only_mlperf_training_transformer_rows_of_fp8_architectures_are_fp8_runs():
    frame = pl.DataFrame(
        {
            "gpu_id": ["h100", "a100", "h100", "l40s", "h100", "mi300x", "h100", "x"],
            "source": ["mlperf"] * 4 + ["lambda", "mlperf", "mlperf", "mlperf"],
            "task": ["training"] * 6 + ["inference", "training"],
            "precision": ["mixed"] * 4 + ["fp16", "mixed", "fp8", "mixed"],
            "model": ["bert_large", "bert_large", "resnet50", "bert_large", "bert_large_squad",
                      "llama2_70b_lora", "gptj_99", "bert_large"],
            "workload_class": ["transformer", "transformer", "cnn", "transformer",
                               "transformer", "transformer", "transformer", "transformer"],
        }
    )  # fmt: skip
    out = table_precision(frame, catalog())
    assert out["table_precision"].to_list() == [
        "mixed" + FP8_SUFFIX,  # Hopper BERT: Transformer Engine FP8
        "mixed",  # Ampere BERT: 16-bit
        "mixed",  # a CNN table is 16-bit on every GPU
        "mixed",  # Ada: the bundled MLPerf BERT runs take NVIDIA's 16-bit path
        "fp16",  # Lambda's PyTorch table says fp16 itself
        "mixed" + FP8_SUFFIX,  # CDNA3 LoRA: AMD's FP8 recipe
        "fp8",  # inference rows keep their published precision
        "mixed",  # a GPU without a known architecture is not assumed FP8
    ]
    # Without a catalog nothing is known to be FP8: the tables stay as published.
    assert table_precision(frame, None)["table_precision"].to_list() == frame["precision"].to_list()


def test_every_fp8_architecture_is_one_of_the_catalog_and_the_split_classes_are_weighted():
    catalog_archs = set(read_gpu_specs(SPEC_SHEET)["architecture"].str.to_lowercase())
    assert set(FP8_TRAINING_ARCHITECTURES) <= catalog_archs
    assert all(why.strip() for why in FP8_TRAINING_ARCHITECTURES.values())
    assert SPLIT_CLASSES <= set(default_weights())


def bridge_scenario() -> pl.DataFrame:
    """The chain that set the H100 at 3.4x an A100 before the split.

    MLPerf v2.0 BERT: A30 = 0.5 A100 (both 16-bit). MLPerf v3.1 BERT: H100 (FP8) = 6x A30,
    i.e. 3x A100. Lambda's 16-bit PyTorch tables: H100 = 1.7x A100.
    """
    return rows(
        [
            ("mlperf", "v2.0", "bert_large", "transformer", "a100", 2.0),
            ("mlperf", "v2.0", "bert_large", "transformer", "a30", 1.0),
            ("mlperf", "v3.1", "bert_large", "transformer", "a30", 1.0),
            ("mlperf", "v3.1", "bert_large", "transformer", "h100", 6.0),
            ("lambda", "v1", "bert_large_squad", "transformer", "a100", 100.0),
            ("lambda", "v1", "bert_large_squad", "transformer", "h100", 170.0),
        ]
    )


def h100_over_a100(debiased: pl.DataFrame) -> float:
    fit = measured_workload(debiased, "training_16bit", "a100", default_weights())
    perf = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    return math.exp(perf["h100"] - perf["a100"])


def test_an_fp8_run_does_not_bridge_the_16bit_scale_between_ampere_and_hopper():
    split = debias(bridge_scenario(), PARAMS, DAY, gpus=catalog())
    key = split.select(pl.concat_str("gpu_id", "software_era")).to_series()
    terms = dict(zip(key, split["era_term"], strict=True))
    assert terms["h100v3.1"].endswith("|mixed" + FP8_SUFFIX)
    assert terms["a30v3.1"].endswith("|mixed")
    # The v3.1 BERT table is now an FP8 table of one GPU and a 16-bit table of one GPU:
    # neither carries a ratio, and the H100 / A100 ratio is the 16-bit one.
    assert h100_over_a100(split) == pytest.approx(1.7)
    # Without the split the FP8 chain (3x) pulls the H100 well above its 16-bit ratio
    # (the fit's compromise between 1.7 and 3, about 2.05).
    published = debias(bridge_scenario(), PARAMS, DAY)
    assert h100_over_a100(published) > 1.7 * 1.15


def test_fp8_runs_still_compare_with_fp8_runs_of_another_vendor():
    figures = rows(
        [
            ("mlperf", "v5.1", "llama2_70b_lora", "transformer", "h100", 1.0),
            ("mlperf", "v5.1", "llama2_70b_lora", "transformer", "mi300x", 0.8),
            ("mlperf", "v5.1", "bert_large", "transformer", "h100", 3.0),
            ("mlperf", "v5.1", "bert_large", "transformer", "a100", 1.0),
            ("lambda", "v1", "bert_large_squad", "transformer", "a100", 100.0),
            ("lambda", "v1", "bert_large_squad", "transformer", "h100", 170.0),
        ]
    )
    out = debias(figures, PARAMS, DAY, gpus=catalog())
    fit = measured_workload(out, "training_16bit", "a100", default_weights())
    perf = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    assert math.exp(perf["mi300x"] - perf["h100"]) == pytest.approx(0.8)
    assert math.exp(perf["h100"] - perf["a100"]) == pytest.approx(1.7)


def debiased(figures: list[tuple[str, str, float]]) -> pl.DataFrame:
    """Debiased-like rows of 8-bit inference from (table, gpu_id, throughput)."""
    return pl.DataFrame(
        [
            {"workload": "inference_8bit", "era_term": t, "model": "retinanet",
             "workload_class": "cnn", "gpu_id": g, "throughput_per_gpu": v}
            for t, g, v in figures
        ]
    )  # fmt: skip


def test_a_table_measuring_one_gpu_alone_does_not_stop_single_table_placement():
    # near and far disagree between the two shared tables; solo shares "shared" only, and
    # two tables hold solo alone (as MLPerf Inference v5.1 ResNet-50 and 3D U-Net hold the
    # RTX 4090 alone).
    rows_ = debiased(
        [
            ("other", "ref", 10.0), ("other", "near", 10.0), ("other", "far", 10.0),
            ("shared", "ref", 10.0), ("shared", "near", 20.0), ("shared", "far", 80.0),
            ("shared", "solo", 22.0),
            ("alone1", "solo", 5.0), ("alone2", "solo", 7.0),
        ]
    )  # fmt: skip
    anchors = nearest_anchors(workload_rows(rows_, "inference_8bit"), "ref")
    assert anchors["gpu_id"].to_list() == ["solo"]
    assert anchors["anchor"].to_list() == ["near"]
    fit = measured_workload(rows_, "inference_8bit", "ref", default_weights())
    perf = dict(zip(fit["gpu_id"], fit["log_perf"], strict=True))
    assert math.exp(perf["solo"] - perf["near"]) == pytest.approx(1.1)
    placed = fit.filter(pl.col("gpu_id") == "solo")["placed_by"][0]
    assert placed.startswith("placed by its ratio to near in shared (1.1")
