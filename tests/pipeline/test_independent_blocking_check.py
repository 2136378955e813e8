"""The blocking independent-evidence check, materialized by Dagster on a small warehouse."""

import datetime as dt
from pathlib import Path

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.defs.model.independent import (
    PAIRS_FILE,
    independent_checks,
    independent_ratios_within_tolerance,
)
from pipeline.defs.resources import GpuvalueSettings
from sources.bundled import INDEPENDENT_RATIOS
from warehouse.db import connect
from warehouse.export import open_published

RUN = dt.date(2026, 9, 20)
HEADER = INDEPENDENT_RATIOS.read_text(encoding="utf-8").splitlines()[1]
# Ours on the small warehouse: H200 / H100 16-bit training 1.17, RX 7900 XTX / RTX 4090
# modelled 8B 4-bit decode 0.8.
RELATIVE = {("h200-sxm", 1.17), ("h100-sxm5-80gb", 1.0)}
DECODE = {("rx-7900-xtx", 80.0), ("rtx-4090", 100.0)}


def _row(theirs: float, enforced: str = "true", gpu_a: str = "h200-sxm") -> str:
    return (
        f"{gpu_a},h100-sxm5-80gb,training_16bit,{theirs},llama2_70b_lora mixed,"
        "mlperf-training-v4.1,mlcommons/training_results_v4.1 a ; b @b87b9e39,2024-11-13,"
        f"0.19,in_fit,{enforced},test pair"
    )


DECODE_ROW = (
    "rx-7900-xtx,rtx-4090,llm_decode,0.81,llama 8B Q4_K_M tg64,llama.cpp,"
    "ggml-org/llama.cpp pull request #26284,2026-07-29,0.30,one_side,true,test pair"
)


def _small_warehouse(path: Path) -> None:
    """The tables the asset and its check read, for two GPU pairs, on one run date."""
    params = GpuvalueSettings().parameters()
    with connect(path) as con:
        con.execute(
            "INSERT INTO model_runs VALUES (?, now(), ?, ?)",
            [RUN, params.reference_gpu, params.to_json()],
        )
        for gpu in sorted({g for g, _ in RELATIVE | DECODE}):
            con.execute(
                "INSERT INTO gpus (gpu_id, name, vendor, architecture, form_factor, memory_gb, "
                "memory_bandwidth_gbs, fp16_tensor_tflops, tdp_w, source, as_of) "
                "VALUES (?, ?, 'x', 'x', 'pcie', 24, 1000, 100, 300, 'test', ?)",
                [gpu, gpu, RUN],
            )
        for gpu, value in sorted(RELATIVE):
            con.execute(
                "INSERT INTO relative_performance (run_date, gpu_id, workload, value, method, "
                "n_results, reference_gpu, evidence) "
                "VALUES (?, ?, 'training_16bit', ?, 'measured', 3, ?, 'measured')",
                [RUN, gpu, value, params.reference_gpu],
            )
        for gpu, tokens in sorted(DECODE):
            con.execute(
                "INSERT INTO llm_throughput (run_date, gpu_id, model_params_b, bits, num_gpus, "
                "context_tokens, fits, decode_tokens_per_s, prefill_tokens_per_s, method, "
                "n_results) VALUES (?, ?, 8, 4, 1, 8192, true, ?, NULL, "
                "'modelled: llama.cpp decode efficiency (test)', 0)",
                [RUN, gpu, tokens],
            )


def _run(tmp_path: Path, *rows: str) -> dg.AssetCheckEvaluation:
    """Materialize the table and its check against the small warehouse and these pairs."""
    db = tmp_path / "small.duckdb"
    if not db.exists():
        _small_warehouse(db)
    data = tmp_path / "data"
    pairs = data.joinpath(*PAIRS_FILE)
    pairs.parent.mkdir(parents=True, exist_ok=True)
    pairs.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    result = dg.materialize(
        [independent_checks, independent_ratios_within_tolerance],
        instance=dg.DagsterInstance.ephemeral(),
        resources={
            "settings": GpuvalueSettings(as_of=RUN.isoformat(), data_dir=str(data)),
            "warehouse": DuckDBResource(database=str(db)),
        },
        raise_on_error=False,
    )
    (evaluation,) = result.get_asset_check_evaluations()
    return evaluation


def test_the_check_fails_on_a_deliberately_wrong_ratio_and_names_the_pair(tmp_path):
    evaluation = _run(tmp_path, _row(2.5), DECODE_ROW)
    assert not evaluation.passed
    assert evaluation.description == (
        "h200-sxm/h100-sxm5-80gb training_16bit (mlperf-training-v4.1, llama2_70b_lora mixed): "
        "ours 1.170 vs theirs 2.500, -53% against a tolerance of ±19%"
    )
    assert evaluation.metadata["problems"].value == 1
    assert evaluation.metadata["pairs"].value == 2


def test_the_check_passes_within_tolerance_and_on_a_pair_not_enforced(tmp_path):
    assert _run(tmp_path, _row(1.174), DECODE_ROW).passed
    relaxed = _run(tmp_path, _row(2.5, enforced="false"), DECODE_ROW)
    assert relaxed.passed
    assert relaxed.metadata["not_enforced"].value == "h200-sxm/h100-sxm5-80gb training_16bit"


def test_a_bad_row_stops_the_asset_naming_file_and_line(tmp_path):
    db = tmp_path / "small.duckdb"
    _small_warehouse(db)
    data = tmp_path / "data"
    pairs = data.joinpath(*PAIRS_FILE)
    pairs.parent.mkdir(parents=True)
    pairs.write_text("\n".join([HEADER, DECODE_ROW, _row(1.17, gpu_a="h999")]) + "\n")
    result = dg.materialize(
        [independent_checks],
        resources={
            "settings": GpuvalueSettings(as_of=RUN.isoformat(), data_dir=str(data)),
            "warehouse": DuckDBResource(database=str(db)),
        },
        raise_on_error=False,
    )
    assert not result.success
    failure = result.get_step_failure_events()[0].event_specific_data.error.cause.message
    assert f"{pairs}, line 3, field 'gpu_a'" in failure


@pytest.mark.usefixtures("built")
def test_the_bundled_build_publishes_the_table_and_its_check_passes(built):
    checks = {e.check_name: e for e in built.result.get_asset_check_evaluations()}
    evaluation = checks["independent_ratios_within_tolerance"]
    assert evaluation.passed, evaluation.description
    with open_published(built.published) as con:
        rows = con.sql("SELECT count(*), count(ours) FROM independent_checks").fetchall()[0]
    assert rows[0] == evaluation.metadata["pairs"].value >= 30
    assert rows[1] == rows[0]  # every bundled pair has both of our figures
