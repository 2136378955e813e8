"""Benchmark adapters (Lambda CSV, NVIDIA DLE README, MLPerf), quality flags, the CLI and the
`benchmark_results` asset, on fixtures written in each public format (tests/fixtures/benchmarks).
"""

import datetime as dt
import json
import logging
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from model.debias import select_comparable
from pipeline.defs.ingest.assets import benchmark_results, gpus
from pipeline.defs.resources import GpuvalueSettings
from sources.__main__ import main
from sources.benchmarks.flags import flag_benchmarks, flag_counts
from sources.benchmarks.inbox import FORMATS, load_inbox, merge_with_bundled
from sources.benchmarks.lambda_csv import parse_lambda_csv
from sources.benchmarks.mlperf import parse_mlperf
from sources.benchmarks.names import gpu_count_in, gpu_id_for, system_gpu_id
from sources.benchmarks.nvidia_dle import parse_dle_readme
from sources.benchmarks.records import MalformedFile, records_frame
from sources.bundled import DATA_DIR, read_gpu_specs
from tests.paths import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "benchmarks"
LAMBDA = FIXTURES / "lambda-csv" / "lambda-test"
README = (
    FIXTURES / "nvidia-dle" / "PyTorch" / "Classification" / "ConvNets" / "resnet50v1.5"
) / "README.md"
DAY = dt.date(2025, 1, 15)


def catalog() -> frozenset[str]:
    return frozenset(read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")["gpu_id"].to_list())


def lambda_fixture(**kwargs):
    return parse_lambda_csv(
        (LAMBDA / "pytorch-train-throughput-fp16.csv").read_bytes(),
        (LAMBDA / "pytorch-train-bs-fp16.csv").read_bytes(),
        precision="fp16",
        software_era="lambda-test",
        as_of=DAY,
        citation="fixture",
        **kwargs,
    )


def one(records, **where):
    found = [r for r in records if all(getattr(r, k) == v for k, v in where.items())]
    assert len(found) == 1, (where, found)
    return found[0]


# --- names -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("LambdaCloud 8x H100 80GB SXM5", "h100-sxm5-80gb"),
        ("DellTexas 2x H100 80GB SXM5", "h100-sxm5-80gb"),
        ("H100 80GB PCIe Gen5", "h100-pcie-80gb"),
        ("Lambda Cloud — 8x V100 16GB", "v100-sxm2-16gb"),
        ("8x RTX Quadro 8000 NVLink", "quadro-rtx-8000"),
        ("RTX A40", "a40"),
        ("LambdaCloud 1x GH200 96GB", "gh200-96gb"),
        ("LambdaCloud 8x B200 192GB SXM5", "b200"),
        ("ASUS_8xH200_140GB_SXM_lambda-scalar_v2", "h200-sxm"),
        ("NVIDIA A100-SXM4-80GB (400W)", "a100-sxm4-80gb"),
        ("NVIDIA Blackwell GPU (B200-SXM-180GB)", "b200"),
        ("AMD Instinct MI300X-NPS1-SPX-192GB-750W", "mi300x"),
        ("NVIDIA L4-PCIe-24GB", "l4"),
        ("AMD Instinct MI355X", "mi355x"),
        # No spec row: reported as unknown, never mapped to a neighbour.
        ("NVIDIA Blackwell GPU (GB200)", "gb200"),
        ("NVIDIA GH200 Grace Hopper Superchip 144GB", "gh200-144gb"),
        ("NVIDIA H100-SXM5-96GB", None),
        ("Nvidia Tesla V100S-PCIe-32GB", "v100s-pcie-32gb"),
        ("Tesla V100-PCIE-32GB", "v100-pcie-32gb"),
        ("NVIDIA GH200 Grace Hopper Superchip 80GB", None),  # the preview part: no row
        ("RTX 2080 SUPER MAX-Q", None),
        ("GTX 1080Ti", "gtx-1080-ti"),
        ("TITAN V", "titan-v"),
        ("NVIDIA GeForce RTX 5050", "rtx-5050"),  # in the catalog since issue 24
        ("NVIDIA RTX 5050 Laptop GPU", None),
        ("TPU-v5p", None),
        ("AMD Instinct MI300X 192GB HBM3 (x32), AMD Instinct MI325X 256GB HBM3e (x16)", None),
    ],
)
def test_gpu_names_map_to_catalog_ids(name, gpu):
    assert gpu_id_for(name, catalog()) == gpu


def test_system_headings_and_gpu_counts():
    assert system_gpu_id("Training performance: NVIDIA DGX-1 16GB (8x V100 16GB)") == (
        "v100-sxm2-16gb"
    )
    assert system_gpu_id("NVIDIA DGX-2 (16x V100 32G)") == "v100-sxm2-32gb"
    assert system_gpu_id("Pre-training NVIDIA DGX-1 With 32G") == "v100-sxm2-32gb"
    assert system_gpu_id("Inference performance: NVIDIA T4") == "t4"
    assert gpu_count_in("LambdaOD_8x_Texas_2xH100_80GB_SXM5_192-222-52-149_v2") == 2
    assert gpu_count_in("Lambda Cloud — 4x RTX A6000") == 4


# --- Lambda ----------------------------------------------------------------------------


def test_lambda_divides_global_batch_and_keeps_zero_as_missing():
    parsed = lambda_fixture(known=catalog())
    h100_8x = one(parsed.records, gpu="h100-sxm5-80gb", model="resnet50", num_gpus=8)
    assert (h100_8x.throughput, h100_8x.batch_size_per_gpu) == (20700.0, 1280)  # 10240 / 8
    assert h100_8x.unit == "images/s" and h100_8x.precision == "fp16"
    missing = one(parsed.records, gpu="quadro-rtx-8000", model="bert_base_squad", num_gpus=1)
    assert missing.throughput is None and missing.flags == ("missing",)
    # "2x RTX Quadro 8000" (throughput) joins "2x Quadro RTX 8000" (batch sizes).
    assert (
        one(parsed.records, gpu="quadro-rtx-8000", model="resnet50", num_gpus=2).batch_size_per_gpu
        == 928
    )
    assert parsed.unknown_gpus == {}
    assert one(parsed.records, gpu="gtx-1080-ti", model="resnet50", num_gpus=1).throughput
    assert parsed.skipped == {"model 'ncf' has no workload class": 9}
    assert {r.software_era for r in parsed.records} == {"lambda-test"}


def test_lambda_fp32_is_tf32_from_ampere_and_missing_batch_table_is_flagged():
    content = (LAMBDA / "pytorch-train-throughput-fp16.csv").read_bytes()
    parsed = parse_lambda_csv(
        content, None, precision="fp32", software_era="x", as_of=DAY, citation="c"
    )
    assert one(parsed.records, gpu="a100-sxm4-80gb", model="ssd", num_gpus=1).precision == "tf32"
    assert one(parsed.records, gpu="quadro-rtx-8000", model="ssd", num_gpus=1).precision == "fp32"
    assert all("no_batch_size" in r.flags and r.batch_size_per_gpu is None for r in parsed.records)


def test_lambda_rejects_a_file_in_another_format():
    with pytest.raises(MalformedFile, match="name_gpu"):
        parse_lambda_csv(
            b"gpu,price\nA100,1\n",
            None,
            precision="fp16",
            software_era="x",
            as_of=DAY,
            citation="c",
        )


# --- NVIDIA DeepLearningExamples --------------------------------------------------------


def dle_fixture():
    return parse_dle_readme(
        README.read_bytes(),
        readme_path="PyTorch/Classification/ConvNets/resnet50v1.5/README.md",
        as_of=dt.date(2024, 4, 4),
        known=catalog(),
    )


def test_dle_reads_performance_tables_only():
    parsed = dle_fixture()
    # 8 training figures (2 systems x 2 GPU counts x 2 precisions) + 2 inference figures;
    # the setup table, the code block and the release-notes table are not read.
    assert len(parsed.records) == 10
    assert 99999.0 not in {r.throughput for r in parsed.records}
    assert parsed.skipped == {"multi-node scaling table": 1}
    a100 = one(parsed.records, gpu="a100-sxm4-80gb", precision="fp16", num_gpus=1)
    assert (a100.throughput, a100.batch_size_per_gpu, a100.unit) == (2470.0, 256, "images/s")
    assert a100.software_era == "dle-21.03"  # "... pytorch 21.03-py3 NGC container ..."
    assert a100.citation.endswith("§ Training performance: NVIDIA DGX A100 (8x A100 80GB)")
    assert (
        one(parsed.records, gpu="a100-sxm4-80gb", precision="tf32", num_gpus=8).throughput == 7250
    )
    # "112 (FP32) / 256 (AMP)": each precision gets its own batch size; V100 FP32 is fp32.
    v100 = [r for r in parsed.records if r.gpu == "v100-sxm2-16gb" and r.num_gpus == 8]
    assert {(r.precision, r.batch_size_per_gpu, r.throughput) for r in v100} == {
        ("fp32", 112, 2860.0),
        ("fp16", 256, 8320.0),
    }
    t4 = [r for r in parsed.records if r.gpu == "t4"]
    assert {(r.task, r.precision, r.batch_size_per_gpu, r.throughput) for r in t4} == {
        ("inference", "fp16", 1, 80.0),
        ("inference", "fp16", 64, 1100.0),
    }


def test_dle_without_performance_section_is_malformed():
    with pytest.raises(MalformedFile, match="Performance"):
        parse_dle_readme(
            b"# X\n\n| GPUs | Throughput |\n|---|---|\n| 1 | 5 |\n",
            readme_path="x/README.md",
            as_of=DAY,
        )


# --- MLPerf ----------------------------------------------------------------------------


def test_mlperf_training_time_to_train_becomes_trainings_per_hour():
    content = (FIXTURES / "mlperf" / "training_summary.csv").read_bytes()
    parsed = parse_mlperf(content, known=catalog())
    h200 = one(parsed.records, gpu="h200-sxm")
    assert h200.throughput == pytest.approx(60 / 12.0) and h200.unit == "trainings/h"
    assert h200.extra["minutes"] == 12.0
    assert (h200.num_gpus, h200.batch_size_per_gpu, h200.precision) == (8, 400, "mixed")
    assert h200.software_era == "mlperf-training-v4.0" and h200.as_of == dt.date(2024, 6, 12)
    assert one(parsed.records, gpu="h100-sxm5-80gb", num_gpus=64).batch_size_per_gpu == 100
    assert parsed.skipped == {
        "benchmark 'dlrm_dcnv2' has no workload class": 1,
        "no accelerator count (number_of_nodes not published)": 1,
        "open division": 1,
    }
    assert parsed.unknown_gpus == {"TPU-v5p": 1}


def test_mlperf_training_reads_memory_of_bare_names_and_skips_undated_rounds():
    header = (FIXTURES / "mlperf" / "training_summary.csv").read_text().splitlines()[0]
    row = (
        "{round},ExampleCo,closed,available,sys_v,Example 8x V100,{name},8,1,8,{memory},"
        "PyTorch,resnet,1664,5,5,70.0,70.1,69.8,70.3,ExampleCo/results/sys_v/resnet,"
        "fedcba9876543210fedcba9876543210fedcba98"
    )
    rows = [
        row.format(round="v0.7", name="Nvidia Tesla V100", memory="32GB"),
        row.format(round="v0.7", name="Nvidia Tesla V100", memory="16 GB"),
        row.format(round="v0.7", name="NVIDIA A100", memory="40G"),
        row.format(round="v9.9", name="NVIDIA A100", memory="80 GB"),
    ]
    parsed = parse_mlperf("\n".join([header, *rows]).encode(), known=catalog())
    # The memory column picks the variant a bare name leaves open.
    assert [r.gpu for r in parsed.records] == ["v100-sxm2-32gb", "v100-sxm2-16gb", "a100-sxm4-40gb"]
    # A round with no known publication date is skipped and counted, never given a fake date.
    assert parsed.skipped == {"round 'v9.9' has no known publication date": 1}


def test_mlperf_inference_keeps_closed_offline_throughput():
    content = (FIXTURES / "mlperf" / "summary_results.json").read_bytes()
    parsed = parse_mlperf(content, commit="fedcba98", known=catalog())
    h100 = one(parsed.records, gpu="h100-sxm5-80gb")
    assert (h100.num_gpus, h100.throughput, h100.unit, h100.precision) == (
        8,
        700000.0,
        "samples/s",
        "int8",
    )
    assert h100.flags == ("no_batch_size",) and h100.batch_size_per_gpu is None
    assert one(parsed.records, gpu="l40s").model == "llama2_70b_99"
    assert parsed.unknown_gpus == {}
    assert one(parsed.records, gpu="gb200").model
    assert parsed.skipped == {
        "no accelerator (CPU-only system)": 1,
        "scenario Server (only Offline is kept)": 1,
        "scenario SingleStream (only Offline is kept)": 1,
    }


def test_mlperf_rejects_other_tables():
    with pytest.raises(MalformedFile, match="not an MLPerf"):
        parse_mlperf(b"a,b\n1,2\n")


# --- quality flags ----------------------------------------------------------------------


def table(rows):
    base = {
        "source": "lambda",
        "software_era": "v1",
        "citation": "c",
        "task": "training",
        "precision": "fp16",
        "workload_class": "cnn",
        "unit": "images/s",
        "batch_size_per_gpu": 256,
    }
    return pl.DataFrame([{**base, **r} for r in rows])


def flags_of(out, **where):
    rows = out.filter(*[pl.col(k) == v for k, v in where.items()])
    assert rows.height == 1
    return rows["flags"][0], rows["flag_detail"][0]


def test_super_linear_scaling_is_flagged_with_its_ratio():
    out = flag_benchmarks(
        table(
            [
                {"gpu_id": "a", "model": "bert", "num_gpus": 1, "throughput": 100.0},
                {"gpu_id": "a", "model": "bert", "num_gpus": 2, "throughput": 195.0},
                {"gpu_id": "a", "model": "bert", "num_gpus": 8, "throughput": 1000.0},
            ]
        )
    )
    assert flags_of(out, num_gpus=1) == ("", "")
    assert flags_of(out, num_gpus=2)[0] == ""  # 0.975x per GPU: ordinary scaling
    flag, detail = flags_of(out, num_gpus=8)
    assert flag == "super_linear"
    assert "8 GPUs give 1.25x the per-GPU throughput of the 1-GPU run" in detail


def test_batch_size_change_between_1_and_n_gpus_is_flagged():
    out = flag_benchmarks(
        table(
            [
                {
                    "gpu_id": "a",
                    "model": "rn",
                    "num_gpus": 1,
                    "throughput": 100.0,
                    "batch_size_per_gpu": 768,
                },
                {
                    "gpu_id": "a",
                    "model": "rn",
                    "num_gpus": 8,
                    "throughput": 700.0,
                    "batch_size_per_gpu": 720,
                },
            ]
        )
    )
    flag, detail = flags_of(out, num_gpus=8)
    assert flag == "batch_changed" and "batch 720/GPU vs 768/GPU on 1 GPU(s)" in detail


def test_outlier_is_relative_to_the_gpus_other_models():
    rows = []
    speeds = {"slow": 1.0, "mid": 2.0, "fast": 4.0}
    for gpu, speed in speeds.items():
        for model, scale in {"m1": 100.0, "m2": 10.0, "m3": 1000.0}.items():
            value = speed * scale
            if (gpu, model) == ("mid", "m3"):
                value = value / 8  # the odd cell: 8x below mid's level on its other models
            rows.append({"gpu_id": gpu, "model": model, "num_gpus": 1, "throughput": value})
    out = flag_benchmarks(table(rows))
    flagged = out.filter(pl.col("flags") != "")
    assert flagged.select("gpu_id", "model", "flags").rows() == [("mid", "m3", "outlier")]
    # A GPU 4x faster than the slowest on every model is not an outlier anywhere.
    assert set(out.filter(pl.col("gpu_id") == "fast")["flags"]) == {""}


def test_parse_flags_are_kept_and_flagging_is_idempotent():
    rows = table(
        [
            {
                "gpu_id": "a",
                "model": "m",
                "num_gpus": 1,
                "throughput": None,
                "flags": "missing",
                "flag_detail": "published as 0.0 (not measured)",
            },
            {
                "gpu_id": "a",
                "model": "m",
                "num_gpus": 2,
                "throughput": 300.0,
                "flags": "",
                "flag_detail": "",
            },
            {
                "gpu_id": "a",
                "model": "m",
                "num_gpus": 4,
                "throughput": 800.0,
                "flags": "",
                "flag_detail": "",
            },
        ]
    )
    out = flag_benchmarks(rows)
    assert flags_of(out, num_gpus=1) == ("missing", "published as 0.0 (not measured)")
    # The 2-GPU run is the smallest measured run, so 4 GPUs are compared with it.
    assert flags_of(out, num_gpus=4)[0] == "super_linear"
    assert flag_benchmarks(out).equals(out)
    assert flag_counts(out) == {"missing": 1, "super_linear": 1}


def test_the_model_ignores_flagged_rows():
    out = flag_benchmarks(
        records_frame(lambda_fixture(known=catalog()).records).with_columns(
            pl.lit("lambda").alias("source")
        )
    )
    chosen = select_comparable(out)
    assert chosen.height > 0
    assert set(chosen["flags"]) == {""}
    # The 1-GPU A100 waveglow cell is the outlier, so the 8-GPU run stands in for it.
    waveglow = chosen.filter(
        (pl.col("gpu_id") == "a100-sxm4-80gb") & (pl.col("model") == "waveglow")
    )
    assert waveglow["num_gpus"].to_list() == [8]


# --- inbox and CLI ------------------------------------------------------------------------


def test_inbox_loads_every_format_and_supersedes_bundled_tables():
    rows, report = load_inbox(FIXTURES, catalog())
    assert set(rows["source"]) == {"lambda", "nvidia-dle", "mlperf"}
    assert len(report.files) == 4
    assert report.unknown_gpus == {"TPU-v5p": 1}
    lam = rows.filter(pl.col("source") == "lambda")
    assert set(lam["as_of"]) == {DAY} and set(lam["software_era"]) == {"lambda-test"}
    assert (
        lam["citation"][0]
        == "example/lambda-benchmark-fixture pytorch/@0123abcd pytorch-train-throughput-fp16.csv"
    )
    bundled = (
        records_frame(lambda_fixture().records)
        .head(3)
        .with_columns(software_era=pl.lit("lambda-test"))
    )
    merged, superseded = merge_with_bundled(bundled, rows)
    assert superseded == 3 and merged.height == rows.height


@pytest.mark.parametrize(
    ("argv", "first_gpu"),
    [
        (
            [
                "lambda-csv",
                str(LAMBDA / "pytorch-train-throughput-fp16.csv"),
                "--batch-sizes",
                str(LAMBDA / "pytorch-train-bs-fp16.csv"),
            ],
            "rtx-4090",
        ),
        (["nvidia-dle", str(README)], "a100-sxm4-80gb"),
        (["mlperf", str(FIXTURES / "mlperf" / "training_summary.csv")], "h100-sxm5-80gb"),
        (["mlperf", str(FIXTURES / "mlperf" / "summary_results.json")], "h100-sxm5-80gb"),
    ],
)
def test_cli_prints_one_json_object_per_figure(argv, first_gpu, capsys):
    assert main(["parse", *argv]) == 0
    out, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines[0]["gpu"] == first_gpu
    for line in lines:
        assert {
            "gpu",
            "model",
            "precision",
            "num_gpus",
            "batch_size_per_gpu",
            "throughput",
            "unit",
            "flags",
        } <= set(line)
    assert err.startswith(f"ok: {len(lines)} figures")


def test_cli_flags_across_the_file_and_reports_bad_files(capsys, tmp_path):
    main(["parse", "lambda-csv", str(LAMBDA / "pytorch-train-throughput-fp16.csv")])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    h100 = [x for x in lines if x["gpu"] == "h100-sxm5-80gb" and x["model"] == "bert_base_squad"]
    assert [x["flags"] for x in h100] == ["", "super_linear"]
    bad = tmp_path / "broken-throughput-fp16.csv"
    bad.write_text("gpu,price\nA100,1\n")
    assert main(["parse", "lambda-csv", str(bad)]) == 2
    assert "is not a valid lambda-csv file" in capsys.readouterr().err


# --- the asset ----------------------------------------------------------------------------


def connect(db: Path) -> duckdb.DuckDBPyConnection:
    # dagster-duckdb leaves a failed step's connection open (no try/finally around its
    # yield); a second connection in this process must use the same configuration.
    return duckdb.connect(str(db), config={"custom_user_agent": "dagster"})


def materialize(data: Path, db: Path) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [gpus, benchmark_results],
        resources={
            "settings": GpuvalueSettings(data_dir=str(data)),
            "warehouse": DuckDBResource(database=str(db)),
        },
        raise_on_error=False,
    )


def test_asset_loads_bundled_and_inbox_with_flags(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    result = materialize(data, tmp_path / "w.duckdb")
    assert result.success
    con = connect(tmp_path / "w.duckdb")
    q = lambda sql: con.sql(sql).fetchall()  # noqa: E731
    # Done criteria: >= 25 GPUs from >= 2 sources, with batch size and GPU count.
    assert (
        q(
            "SELECT count(DISTINCT gpu_id) FROM benchmark_results "
            "WHERE batch_size_per_gpu > 0 AND num_gpus >= 1"
        )[0][0]
        >= 25
    )
    assert q("SELECT count(DISTINCT source) FROM benchmark_results")[0][0] >= 2
    flags = dict(q("SELECT flags, count(*) FROM benchmark_results GROUP BY flags"))
    assert flags[""] > 1000 and any("super_linear" in f for f in flags)
    # Lambda v1 BERT 8x H100 SXM5 is super-linear (9176 vs 812 on 1 GPU).
    assert q(
        "SELECT flags FROM benchmark_results WHERE software_era = 'lambda-v1' AND "
        "gpu_id = 'h100-sxm5-80gb' AND model = 'bert_base_squad' AND precision = 'fp16' "
        "AND num_gpus = 8"
    ) == [("super_linear",)]
    before = q("SELECT count(*) FROM benchmark_results")[0][0]
    # The fixtures' MLPerf training round is v4.0: it supersedes the bundled v4.0 rows.
    superseded = q(
        "SELECT count(*) FROM benchmark_results WHERE source = 'mlperf' "
        "AND software_era IN ('mlperf-training-v4.0', 'mlperf-inference-v4.1')"
    )[0][0]
    assert superseded > 0
    con.close()

    # Drop the fixtures into the inbox: their tables are added, an inbox table replaces the
    # bundled rows of its source and era, and the rerun replaces, it does not append.
    # (The repository's inbox holds only its README and empty format folders.)
    shutil.copytree(FIXTURES, data / "benchmarks" / "inbox", dirs_exist_ok=True)
    assert materialize(data, tmp_path / "w.duckdb").success
    con = connect(tmp_path / "w.duckdb")
    after = con.sql("SELECT count(*) FROM benchmark_results").fetchall()[0][0]
    added = con.sql(
        "SELECT source_file, count(*) FROM benchmark_results WHERE source_file LIKE '%/%' "
        "GROUP BY ALL ORDER BY 1"
    ).fetchall()
    missing = con.sql(
        "SELECT throughput, flags FROM benchmark_results WHERE software_era = 'lambda-test' "
        "AND gpu_id = 'quadro-rtx-8000' AND model = 'bert_base_squad' AND num_gpus = 1"
    ).fetchall()
    con.close()
    assert missing == [(None, "missing")]
    assert after == before - superseded + sum(n for _, n in added)
    assert [f for f, _ in added] == [
        "lambda-csv/lambda-test/pytorch-train-throughput-fp16.csv",
        "mlperf/summary_results.json",
        "mlperf/training_summary.csv",
        "nvidia-dle/PyTorch/Classification/ConvNets/resnet50v1.5/README.md",
    ]


def test_a_malformed_inbox_file_fails_the_load_and_keeps_the_rows(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    assert materialize(data, tmp_path / "w.duckdb").success
    con = connect(tmp_path / "w.duckdb")
    before = con.sql("SELECT count(*) FROM benchmark_results").fetchall()[0][0]
    con.close()
    broken = data / "benchmarks" / "inbox" / "mlperf"
    broken.mkdir(parents=True, exist_ok=True)
    (broken / "results.csv").write_text("team,score\nx,1\n")
    result = materialize(data, tmp_path / "w.duckdb")
    assert not result.success
    failure = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failure] == ["benchmark_results"]
    assert "not an MLPerf training summary" in failure[0].event_specific_data.error.to_string()
    con = connect(tmp_path / "w.duckdb")
    assert con.sql("SELECT count(*) FROM benchmark_results").fetchall()[0][0] == before
    con.close()


def test_the_repository_has_an_empty_inbox_with_its_layout():
    inbox = DATA_DIR / "benchmarks" / "inbox"
    assert "lambda-csv/<era>/" in (inbox / "README.md").read_text(encoding="utf-8")
    assert {p.name for p in inbox.iterdir() if p.is_dir()} == set(FORMATS)
    rows, report = load_inbox(inbox, catalog())
    assert rows.is_empty() and report.files == [] and report.ignored == []


def test_files_where_no_adapter_reads_them_are_listed_with_why(tmp_path):
    inbox = tmp_path / "inbox"
    shutil.copytree(FIXTURES, inbox)
    (inbox / "results.csv").write_text("a,b\n")  # not in a format folder
    (inbox / "mlperf" / "notes.txt").write_text("x")  # wrong extension
    (inbox / "lambda-csv" / "lambda-test" / "throughput.xlsx").write_bytes(b"x")
    (inbox / "nvidia-dle" / "table.csv").write_text("x")
    (inbox / "mlperf" / ".gitkeep").touch()  # not data
    (inbox / "nvidia-dle" / "MANIFEST.md").touch()  # not data
    rows, report = load_inbox(inbox, catalog())
    assert len(report.files) == 4 and not rows.is_empty()  # the readable files still load
    assert report.ignored == [
        "lambda-csv/lambda-test/throughput.xlsx: not a Lambda throughput table "
        "(*throughput*.csv) or its batch-size pair",
        "mlperf/notes.txt: not a .csv or .json",
        "nvidia-dle/table.csv: not a DeepLearningExamples README (*.md)",
        "results.csv: not in a format folder (lambda-csv/, nvidia-dle/, mlperf/)",
    ]


def test_the_run_warns_about_an_ignored_inbox_file(tmp_path):
    data = tmp_path / "data"
    shutil.copytree(DATA_DIR, data)
    (data / "benchmarks" / "inbox" / "mlperf" / "v5.0-results.xlsx").write_bytes(b"PK")
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [gpus, benchmark_results],
        instance=instance,
        resources={
            "settings": GpuvalueSettings(data_dir=str(data)),
            "warehouse": DuckDBResource(database=str(tmp_path / "w.duckdb")),
        },
    )
    assert result.success  # an ignored file is reported, it does not fail the load
    warnings = [
        entry.user_message
        for entry in instance.all_logs(result.run_id)
        if entry.level == logging.WARNING
    ]
    assert any(
        "benchmark inbox: ignored" in m and "mlperf/v5.0-results.xlsx: not a .csv or .json" in m
        for m in warnings
    ), warnings
    metadata = result.asset_materializations_for_node("benchmark_results")[0].metadata
    assert metadata["inbox_ignored"].value == "mlperf/v5.0-results.xlsx: not a .csv or .json"


def test_batch_sweeps_compare_each_gpu_count_at_the_same_batch_size():
    # 1 and 4 GPUs, each at batch 64 and 128: 4x at 128 is compared with 1x at 128 (not the
    # median of both 1-GPU runs), so nothing is flagged; 4x at 256 has no 1-GPU peer.
    out = flag_benchmarks(
        table(
            [
                {
                    "gpu_id": "a",
                    "model": "ssd",
                    "num_gpus": n,
                    "batch_size_per_gpu": bs,
                    "throughput": value,
                }
                for n, bs, value in [
                    (1, 64, 660.0),
                    (1, 128, 720.0),
                    (4, 64, 2580.0),
                    (4, 128, 2880.0),
                    (4, 256, 3000.0),
                ]
            ]
        )
    )
    assert out.filter(pl.col("batch_size_per_gpu") < 256)["flags"].to_list() == [""] * 4
    flag, detail = flags_of(out, batch_size_per_gpu=256)
    assert flag == "batch_changed" and "batch 256/GPU vs 64 or 128/GPU on 1 GPU(s)" in detail


def test_mlperf_systems_of_one_round_form_one_table():
    # Each MLPerf result has its own citation; the round is the table, so the 64-GPU system
    # is compared with the 8-GPU one (different citations) and its scaling is flagged.
    rows = table(
        [
            {
                "source": "mlperf",
                "software_era": "mlperf-training-v4.0",
                "citation": f"r/{n}",
                "gpu_id": "h100",
                "model": "resnet50",
                "num_gpus": n,
                "batch_size_per_gpu": 400,
                "throughput": value,
                "precision": "mixed",
                "unit": "trainings/h",
            }
            for n, value in [(8, 4.0), (64, 40.0)]
        ]
    )
    flag, detail = flags_of(flag_benchmarks(rows), num_gpus=64)
    assert flag == "super_linear" and "64 GPUs give 1.25x" in detail
    # The same two rows from a source whose citation is its table are not compared.
    other = rows.with_columns(source=pl.lit("lambda"))
    assert set(flag_benchmarks(other)["flags"]) == {""}
