"""Conformance of the benchmark adapters on the real files in $GPUVALUE_REALDATA/benchmarks.

Skipped when GPUVALUE_REALDATA is unset. Every file in a supported format must load, and the
check numbers of realdata/benchmarks/MANIFEST.md must come out right. The NVIDIA
DeepLearningExamples READMEs are only available as derived CSVs (one row per table cell),
so each README's performance tables are rebuilt as Markdown in tmp_path and read back.
"""

import csv
import datetime as dt
import os
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from sources.benchmarks.flags import flag_benchmarks
from sources.benchmarks.lambda_csv import batch_size_file_for, parse_lambda_csv, precision_of
from sources.benchmarks.mlperf import parse_mlperf
from sources.benchmarks.nvidia_dle import parse_dle_readme
from sources.benchmarks.records import records_frame
from sources.bundled import DATA_DIR, read_benchmark_figures, read_gpu_specs

REALDATA = os.environ.get("GPUVALUE_REALDATA")
pytestmark = pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")
ROOT = Path(REALDATA or "/nonexistent") / "benchmarks"
V1 = ROOT / "lambda_pytorch" / "master_aa5addb6"
KNOWN = frozenset(read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")["gpu_id"].to_list())


def lambda_table(path: Path, era: str = "lambda"):
    pair = batch_size_file_for(path)
    return parse_lambda_csv(
        path.read_bytes(),
        pair.read_bytes() if pair.exists() else None,
        precision=precision_of(path),
        software_era=era,
        as_of=dt.date(2025, 12, 17),
        citation=path.name,
        known=KNOWN,
    )


def figure(records, system: str, model: str = "resnet50"):
    found = [r for r in records if r.system == system and r.model == model]
    assert len(found) == 1, (system, model, found)
    return found[0].throughput, found[0].batch_size_per_gpu


def lambda_files():
    return sorted(ROOT.glob("lambda_*/**/*-throughput-*.csv"))


@pytest.mark.parametrize("path", lambda_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_lambda_file_loads(path):
    parsed = lambda_table(path)
    assert len(parsed.records) > 100
    known = [r for r in parsed.records if r.gpu is not None]
    assert len(known) / len(parsed.records) > 0.8
    # 0 cells are kept as missing, never as a 0 throughput.
    assert all(r.throughput is None or r.throughput > 0 for r in parsed.records)
    if batch_size_file_for(path).exists():
        with_bs = [r for r in parsed.records if r.batch_size_per_gpu is not None]
        assert len(with_bs) / len(parsed.records) > 0.95


@pytest.mark.parametrize(
    ("folder", "system", "expected"),
    [
        # realdata MANIFEST "Check numbers": ResNet-50 FP16, images/s (batch size per GPU).
        ("master_aa5addb6", "H100 80GB SXM5", (2616.0, 1280)),
        ("master_aa5addb6", "8x H100 80GB SXM5", (20728.0, 1280)),
        ("master_aa5addb6", "LambdaCloud V100 16GB", (833.0, 256)),
        ("master_aa5addb6", "LambdaCloud 8xV100 16GB", (6174.0, 256)),
        ("master_aa5addb6", "A100 80GB SXM4", (1582.0, 1280)),
        ("master_aa5addb6", "8x A100 80GB SXM4", (11439.0, 1280)),
        ("master_aa5addb6/csv_v1_v2", "LambdaCloud 1x H100 80GB SXM5", (2791.0, 1280)),
        ("master_aa5addb6/csv_v1_v2", "LambdaCloud 8x H100 80GB SXM5", (22059.0, 1280)),
        ("master_aa5addb6/csv_v1_v2", "LambdaCloud 1x B200 192GB SXM5", (3076.0, 3328)),
        ("master_aa5addb6/csv_v1_v2", "LambdaCloud 8x B200 192GB SXM5", (24461.0, 3328)),
        ("v0_67a9bb51_2022-07", "V100 32GB", (828.0, 596)),
        ("v0_67a9bb51_2022-07", "8x V100 32GB", (6569.0, 596)),
        ("v0_67a9bb51_2022-07", "A100 40GB SXM4", (1211.0, 768)),
        ("v0_67a9bb51_2022-07", "8x A100 40GB SXM4", (8938.0, 720)),
        ("v0_67a9bb51_2022-07", "A100 80GB SXM4", (1386.0, 1536)),
        ("v0_67a9bb51_2022-07", "8x A100 80GB SXM4", (10776.0, 1440)),
    ],
)
def test_lambda_check_numbers(folder, system, expected):
    parsed = lambda_table(ROOT / "lambda_pytorch" / folder / "pytorch-train-throughput-fp16.csv")
    assert figure(parsed.records, system) == expected


def test_lambda_known_problems_are_flagged():
    v1 = lambda_table(V1 / "pytorch-train-throughput-fp16.csv", "lambda-v1")
    v2 = lambda_table(V1 / "csv_v1_v2" / "pytorch-train-throughput-fp16.csv", "lambda-v2")
    v0 = lambda_table(
        ROOT / "lambda_pytorch" / "v0_67a9bb51_2022-07" / "pytorch-train-throughput-fp16.csv",
        "lambda-v0",
    )
    rows = flag_benchmarks(
        pl.concat([records_frame(t.records) for t in (v1, v2, v0)]).with_columns(
            citation=pl.col("software_era")
        )
    )

    def flags(era, system, model):
        found = rows.filter(
            (pl.col("software_era") == era)
            & (pl.col("system") == system)
            & (pl.col("model") == model)
        )
        assert found.height == 1
        return set(found["flags"][0].split(",")) - {""}

    # BERT multi-GPU is super-linear in v1/v2 (H100 1x 858 -> 8x 9320; B200 1x 1405 -> 8x 30221).
    assert "super_linear" in flags("lambda-v1", "8x H100 80GB SXM5", "bert_base_squad")
    assert "super_linear" in flags("lambda-v2", "LambdaCloud 8x B200 192GB SXM5", "bert_base_squad")
    assert "super_linear" in flags("lambda-v1", "8x A100 80GB SXM4", "bert_base_squad")
    # ResNet-50 scales normally: no flag.
    assert flags("lambda-v1", "8x H100 80GB SXM5", "resnet50") == set()
    # v0 changes the per-GPU batch size between 1x and 8x (A100 40GB SXM4 768 -> 720).
    assert "batch_changed" in flags("lambda-v0", "8x A100 40GB SXM4", "resnet50")
    # transformerxl cells of the server variants are 0 = missing.
    assert flags("lambda-v1", "Dell H100 80GB SXM5", "transformerxl_base") == {"missing"}


def test_bundled_lambda_figures_match_the_adapter():
    """Our transcription (sources/data/benchmarks/lambda_pytorch.csv) agrees with the files."""
    bundled = read_benchmark_figures(DATA_DIR / "benchmarks" / "lambda_pytorch.csv", None)
    files = {
        "lambda-v1": [V1 / f"pytorch-train-throughput-{p}.csv" for p in ("fp16", "fp32")],
        "lambda-v2": [
            V1 / "csv_v1_v2" / f"pytorch-train-throughput-{p}.csv" for p in ("fp16", "fp32")
        ],
        "lambda-v0": [
            ROOT / "lambda_pytorch" / "v0_67a9bb51_2022-07" / f"pytorch-train-throughput-{p}.csv"
            for p in ("fp16", "fp32")
        ],
    }
    parsed = defaultdict(set)
    for era, paths in files.items():
        for path in paths:
            for r in lambda_table(path, era).records:
                parsed[era].add(
                    (r.gpu, r.model, r.precision, r.num_gpus, r.batch_size_per_gpu, r.throughput)
                )
    unmatched = [
        row
        for row in bundled.iter_rows(named=True)
        if (
            row["gpu_id"],
            row["model"],
            row["precision"],
            row["num_gpus"],
            row["batch_size_per_gpu"],
            row["throughput"],
        )
        not in parsed[row["software_era"]]
    ]
    assert unmatched == []


def dle_readmes(tmp_path: Path) -> dict[str, Path]:
    """Rebuild each README's performance tables as Markdown from the derived cell CSVs."""
    folder = ROOT / "nvidia_dle"
    with (folder / "dle_perf_tables_rows.csv").open(newline="", encoding="utf-8") as handle:
        cells = defaultdict(list)
        for row in csv.DictReader(handle):
            cells[row["table_id"]].append(row)
    texts: dict[str, list[str]] = defaultdict(list)
    open_chain: dict[str, list[str]] = defaultdict(list)
    with (folder / "dle_perf_tables_index.csv").open(newline="", encoding="utf-8") as handle:
        for table in csv.DictReader(handle):
            path = table["readme_path"]
            lines = texts[path]
            # The heading chain starts at the README's title (its H1).
            chain = table["heading_chain"].split(" > ")
            for level, heading in enumerate(chain, start=1):
                if open_chain[path][level - 1 : level] != [heading]:
                    lines += ["#" * min(level, 6) + " " + heading, ""]
                    open_chain[path] = open_chain[path][: level - 1] + [heading]
            if table["context_note"]:
                lines += [table["context_note"], ""]
            header = table["header"].split(" | ")
            lines.append("| " + " | ".join(header) + " |")
            lines.append("|" + "---|" * len(header))
            for row in sorted(cells[table["table_id"]], key=lambda r: int(r["row_idx"])):
                values = [row.get(f"c{i}") or "" for i in range(1, len(header) + 1)]
                lines.append("| " + " | ".join(values) + " |")
            lines.append("")
    out = {}
    for readme_path, lines in texts.items():
        target = tmp_path / readme_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("\n".join(lines), encoding="utf-8")
        out[readme_path] = target
    return out


def test_every_dle_readme_loads_and_check_numbers(tmp_path):
    readmes = dle_readmes(tmp_path)
    assert len(readmes) > 50
    parsed = {
        path: parse_dle_readme(target.read_bytes(), readme_path=path, as_of=dt.date(2024, 4, 4))
        for path, target in readmes.items()
    }
    total = sum(len(p.records) for p in parsed.values())
    assert total > 500

    def rn50(path, gpu, precision, n):
        found = {
            (r.throughput, r.batch_size_per_gpu)
            for r in parsed[path].records
            if (r.gpu, r.precision, r.num_gpus, r.task, r.model)
            == (gpu, precision, n, "training", "resnet50")
        }
        assert len(found) == 1, found
        return found.pop()

    pt = "PyTorch/Classification/ConvNets/resnet50v1.5/README.md"
    tf = "TensorFlow/Classification/ConvNets/resnet50v1.5/README.md"
    # The PyTorch ConvNets READMEs give no batch size (the check table's come from configs.yml).
    assert rn50(pt, "v100-sxm2-16gb", "fp16", 1) == (1200.0, None)
    assert rn50(pt, "v100-sxm2-16gb", "fp16", 8) == (8322.0, None)
    assert rn50(pt, "v100-sxm2-16gb", "fp32", 1) == (367.0, None)
    assert rn50(pt, "v100-sxm2-16gb", "fp32", 8) == (2855.0, None)
    assert rn50(pt, "a100-sxm4-80gb", "fp16", 1) == (2470.0, None)
    assert rn50(pt, "a100-sxm4-80gb", "fp16", 8) == (16621.0, None)
    assert rn50(pt, "a100-sxm4-80gb", "tf32", 1) == (938.0, None)
    assert rn50(pt, "a100-sxm4-80gb", "tf32", 8) == (7248.0, None)
    assert rn50(tf, "v100-sxm2-16gb", "fp16", 1) == (1270.0, 256)
    assert rn50(tf, "v100-sxm2-16gb", "fp16", 8) == (9510.0, 256)
    assert rn50(tf, "a100-sxm4-40gb", "fp16", 1) == (2375.0, 256)
    assert rn50(tf, "a100-sxm4-40gb", "fp16", 8) == (17400.0, 256)
    eras = {r.software_era for r in parsed[tf].records}
    assert "dle-20.06" in eras


def test_mlperf_training_check_numbers():
    parsed = parse_mlperf(
        (ROOT / "mlperf" / "mlperf_training_summary_derived.csv").read_bytes(), known=KNOWN
    )
    assert len(parsed.records) > 900

    def nvidia_rn50(round_, gpu):
        found = [
            r
            for r in parsed.records
            if r.extra["mlperf_round"] == round_
            and r.gpu == gpu
            and r.model == "resnet50"
            and r.num_gpus == 8
            and r.system.startswith("NVIDIA ")
        ]
        assert found, (round_, gpu)
        return {(round(r.extra["minutes"], 1), r.batch_size_per_gpu * 8) for r in found}

    assert (71.2, 1664) in nvidia_rn50("v0.7", "v100-sxm2-16gb")
    assert (39.8, 3264) in nvidia_rn50("v0.7", "a100-sxm4-40gb")
    assert (28.7, 3264) in nvidia_rn50("v2.0", "a100-sxm4-80gb")
    assert (13.5, 3200) in nvidia_rn50("v3.1", "h100-sxm5-80gb")
    assert (13.3, 3200) in nvidia_rn50("v4.0", "h100-sxm5-80gb")
    assert (12.0, 3200) in nvidia_rn50("v4.0", "h200-sxm")
    h200 = next(r for r in parsed.records if r.gpu == "h200-sxm" and r.model == "resnet50")
    assert h200.throughput == pytest.approx(60 / h200.extra["minutes"])
    assert any(r.gpu == "gb200" for r in parsed.records)  # in the catalog since issue 11
    assert "NVIDIA Blackwell Ultra GPU (GB300)" in parsed.unknown_gpus


@pytest.mark.parametrize(
    "name",
    ["mlperf_inference_v4.1_summary_results.csv", "mlperf_inference_v5.1_summary_results.csv"],
)
def test_mlperf_inference_files_load(name):
    parsed = parse_mlperf((ROOT / "mlperf" / name).read_bytes(), known=KNOWN)
    assert len(parsed.records) > 100
    gpus = {r.gpu for r in parsed.records}
    assert "h200-sxm" in gpus
    if "v4.1" in name:
        # v4.1's B200 was a preview system (FP4 Llama 2 70B declared as fp16 weights):
        # skipped and counted, never loaded.
        assert "b200" not in gpus
        assert parsed.skipped["availability preview (only available systems are kept)"] > 0
    else:
        assert "b200" in gpus
    assert all(r.batch_size_per_gpu is None and "no_batch_size" in r.flags for r in parsed.records)
    assert all(r.unit in ("samples/s", "tokens/s", "queries/s") for r in parsed.records)
    assert sum(parsed.skipped.values()) > 0  # Server/latency scenarios and open division
