"""The bundled independent-evidence pairs: their reader, coverage and traceability."""

import math
import statistics
from pathlib import Path

import polars as pl
import pytest

from sources.bundled import (
    DATA_DIR,
    INDEPENDENT_RATIOS,
    SPEC_SHEET,
    read_benchmark_figures,
    read_gpu_specs,
    read_independent_ratios,
)
from sources.tables import BadInputError

IDS = frozenset(read_gpu_specs(SPEC_SHEET)["gpu_id"])
HEADER = INDEPENDENT_RATIOS.read_text(encoding="utf-8").splitlines()[1]
GOOD = (
    "h200-sxm,h100-sxm5-80gb,training_16bit,1.174,llama2_70b_lora mixed,mlperf-training-v4.1,"
    "mlcommons/training_results_v4.1 a ; b @b87b9e39,2024-11-13,0.19,in_fit,true,a note"
)


def _file(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "independent_ratios.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    return path


def test_bundled_pairs_cover_every_class_of_gpu_the_issue_names():
    pairs = read_independent_ratios(INDEPENDENT_RATIOS, IDS)
    assert pairs.height >= 30
    sheet = read_gpu_specs(SPEC_SHEET).select("gpu_id", "vendor")
    gpus = set(pairs["gpu_a"]) | set(pairs["gpu_b"])
    vendors = {v.lower() for g, v in sheet.iter_rows() if g in gpus}
    assert {"nvidia", "amd", "intel"} <= vendors
    # NVIDIA consumer and data center; AMD Instinct and Radeon; Intel Arc.
    assert {"rtx-4090", "rtx-3090", "h100-sxm5-80gb", "b300", "mi300x", "mi325x"} <= gpus
    assert {"rx-7900-xtx", "arc-a770-16gb"} <= gpus
    assert set(pairs["independence"]) == {"in_fit", "one_side", "independent"}
    assert pairs["enforced"].dtype == pl.Boolean and pairs["enforced"].any()
    assert (pairs["tolerance"] > 0).all() and (pairs["their_ratio"] > 0).all()


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (GOOD.replace("h200-sxm,", "h999-sxm,", 1), "gpu_a", "not one of"),
        (GOOD.replace(",h100-sxm5-80gb,", ",nope,", 1), "gpu_b", "not one of"),
        (GOOD.replace(",1.174,", ",nan,"), "their_ratio", "not a valid float"),
        (GOOD.replace(",1.174,", ",inf,"), "their_ratio", "not a valid float"),
        (GOOD.replace(",1.174,", ",0,"), "their_ratio", "greater than 0"),
        (GOOD.replace(",training_16bit,", ",training_32bit,"), "workload", "not one of"),
        (GOOD.replace(",0.19,", ",0,"), "tolerance", "greater than 0"),
        (GOOD.replace(",0.19,", ",-0.1,"), "tolerance", "greater than 0"),
        (GOOD.replace(",in_fit,", ",maybe,"), "independence", "not one of"),
        (GOOD.replace(",true,", ",yes,"), "enforced", "not one of"),
        (GOOD.replace(",h100-sxm5-80gb,", ",h200-sxm,", 1), "gpu_b", "compared with itself"),
    ],
)
def test_a_bad_row_is_refused_naming_file_line_and_field(tmp_path, row, field, reason):
    path = _file(tmp_path, GOOD.replace("h200-sxm,", "b200,", 1), row)
    with pytest.raises(BadInputError) as err:
        read_independent_ratios(path, IDS)
    assert (err.value.path, err.value.line, err.value.column) == (str(path), 3, field)
    assert reason in err.value.reason


def test_a_repeated_pair_is_refused(tmp_path):
    path = _file(tmp_path, GOOD, GOOD.replace("a note", "another note"))
    with pytest.raises(BadInputError, match="line 3"):
        read_independent_ratios(path, IDS)


def _mlperf_median(figures: pl.DataFrame, gpu: str, era: str, model: str, task: str):
    rows = figures.filter(
        (pl.col("gpu_id") == gpu) & (pl.col("software_era") == era) & (pl.col("model") == model)
    )
    if task == "training":
        rows = rows.filter(pl.col("num_gpus") == 8)
    return statistics.median((rows["throughput"] / rows["num_gpus"]).to_list())


def test_mlperf_and_lambda_ratios_are_what_the_bundled_figures_say():
    """Every MLPerf and Lambda ratio is recomputed from the cited, bundled benchmark rows."""
    bench = DATA_DIR / "benchmarks"
    figures = pl.concat(
        [
            read_benchmark_figures(bench / f, IDS)
            for f in ("mlperf_training.csv", "mlperf_inference.csv", "lambda_pytorch.csv")
        ],
        how="diagonal_relaxed",
    ).filter(pl.col("throughput").is_not_null())
    pairs = read_independent_ratios(INDEPENDENT_RATIOS, IDS)
    checked = 0
    for p in pairs.filter(pl.col("source").str.starts_with("mlperf")).iter_rows(named=True):
        model, precision = p["benchmark"].split(" ")
        task = "training" if "training" in p["source"] else "inference"
        eight = p["workload"] == "inference_8bit"
        era = figures.filter(
            (pl.col("source") == "mlperf")
            & (pl.col("task") == task)
            & (pl.col("precision").is_in(["int8", "fp8"]) == eight)
            & (pl.col("num_gpus") <= 8)  # single-node systems, as the file's rule says
        )
        ratio = _mlperf_median(era, p["gpu_a"], p["source"], model, task) / _mlperf_median(
            era, p["gpu_b"], p["source"], model, task
        )
        assert ratio == pytest.approx(p["their_ratio"], abs=6e-5), p
        checked += 1
    transformer = ["bert_base_squad", "bert_large_squad"]
    transformer += ["transformerxl_base", "transformerxl_large"]
    lam = figures.filter(
        (pl.col("source") == "lambda")
        & (pl.col("precision") == "fp16")
        & (pl.col("num_gpus") == 1)
        & pl.col("model").is_in(transformer)
    )
    for p in pairs.filter(pl.col("source").str.starts_with("lambda")).iter_rows(named=True):
        era = lam.filter(pl.col("software_era") == p["source"].replace("lambda-pytorch", "lambda"))
        both = era.filter(pl.col("gpu_id") == p["gpu_a"]).join(
            era.filter(pl.col("gpu_id") == p["gpu_b"]), on="model"
        )
        logs = [math.log(a / b) for a, b in both.select("throughput", "throughput_right").rows()]
        assert math.exp(sum(logs) / len(logs)) == pytest.approx(p["their_ratio"], abs=6e-5), p
        checked += 1
    assert checked == pairs.filter(~pl.col("source").str.starts_with("llama")).height >= 28
