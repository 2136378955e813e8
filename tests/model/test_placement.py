"""What may place a GPU (model/evidence.py): tinygrad and constrained-host rows never do.

Issue 22 step 2 and the first part of step 6: a GPU measured only under tinygrad or only in
an eGPU enclosure is estimated from its specs and marked so; the LLM decode and prefill
calibration ignores rows of a single-board computer or an eGPU.
"""

import datetime as dt

import polars as pl
import pytest

from model.debias import debias, rows_not_placing
from model.evidence import places_gpu
from model.llm import decode_roofline, llm_throughput, memory_fit
from model.parameters import ModelParameters
from model.performance import relative_performance
from tests.model.test_llm import BENCH, GPUS, bench, roof

DAY = dt.date(2026, 9, 20)
PARAMS = ModelParameters(constants="dettmers", reference_gpu="a")


def catalog() -> pl.DataFrame:
    """a (reference) and c are measured under PyTorch; t and e only under tinygrad / eGPU."""
    specs = {"a": (1000.0, 100.0), "c": (4000.0, 400.0), "t": (4000.0, 100.0),
             "e": (4000.0, 100.0)}  # fmt: skip
    return pl.DataFrame(
        {
            "gpu_id": list(specs),
            "vendor": ["nvidia", "nvidia", "amd", "amd"],
            "architecture": ["ampere", "ampere", "rdna3", "rdna3"],
            "form_factor": ["pcie"] * 4,
            "memory_gb": [24.0] * 4,
            "memory_bandwidth_gbs": [bw for bw, _ in specs.values()],
            "fp16_tensor_tflops": [tf for _, tf in specs.values()],
            "fp8_tensor_tflops": [None] * 4,
            "int8_tensor_tops": [None] * 4,
            "l2_cache_mb": [None] * 4,
            "tdp_w": [300.0] * 4,
            "release_date": [dt.date(2020, 1, 1)] * 4,
        },
        schema_overrides={
            "fp8_tensor_tflops": pl.Float64,
            "int8_tensor_tops": pl.Float64,
            "l2_cache_mb": pl.Float64,
        },  # fmt: skip
    )


def results() -> pl.DataFrame:
    """A PyTorch table (a, c, and e in an eGPU) and a tinygrad MLPerf table (a, t)."""
    base = {"task": "training", "workload_class": "cnn", "num_gpus": 1, "flags": "",
            "as_of": dt.date(2025, 1, 1), "batch_size_per_gpu": 64}  # fmt: skip
    lam = {"source": "lambda", "software_era": "v1", "citation": "c", "precision": "fp16",
           "unit": "images/s", "stack": "pytorch-cuda"}  # fmt: skip
    tiny = {"source": "mlperf", "software_era": "mlperf-training-v4.0-tinygrad",
            "precision": "mixed", "unit": "trainings/h", "stack": "tinygrad",
            "host": "server"}  # fmt: skip
    rows = [
        {**base, **lam, "gpu_id": g, "model": m, "throughput": k * v, "host": h}
        for m, k in (("m1", 10.0), ("m2", 3.0))
        # e's eGPU figure would put it far below a; t's tinygrad figure far above.
        for g, v, h in (("a", 1.0, "desktop"), ("c", 4.0, "desktop"), ("e", 0.1, "egpu"))
    ] + [
        {**base, **tiny, "gpu_id": g, "model": "resnet", "citation": f"tinybox/{g}@x",
         "throughput": v}
        for g, v in (("a", 1.0), ("t", 50.0))
    ]  # fmt: skip
    return pl.DataFrame(rows)


def training(rows: pl.DataFrame) -> dict[str, dict]:
    gpus = catalog()
    out = relative_performance(debias(rows, PARAMS, DAY), gpus, PARAMS, DAY)
    return {
        r["gpu_id"]: r
        for r in out.filter(pl.col("workload") == "training_16bit").iter_rows(named=True)
    }


def test_tinygrad_only_and_egpu_only_gpus_are_estimated_from_specs_and_flagged():
    rows = results()
    assert rows_not_placing(rows) == 4  # e's two eGPU rows and both tinybox rows
    got = training(rows)
    assert got["c"]["method"] == "measured" and got["c"]["value"] == pytest.approx(4.0)
    for gpu in ("t", "e"):
        # Neither 50x (tinygrad) nor 0.1x (eGPU): Dettmers' spec rule, 4x the bandwidth at
        # equal compute -> sqrt(4) = 2x, marked estimated with no result behind it.
        assert got[gpu]["method"] == "estimated"
        assert got[gpu]["evidence"] == "spec_estimate"
        assert got[gpu]["n_results"] == 0
        assert got[gpu]["value"] == pytest.approx(2.0)


def test_the_same_rows_without_provenance_would_place_them():
    """The rule, not some other filter, is what keeps t and e off the ranking."""
    got = training(results().drop("stack", "host"))
    assert got["e"]["method"] == "measured" and got["e"]["value"] == pytest.approx(0.1)
    assert got["t"]["evidence"] != "spec_estimate" and got["t"]["n_results"] > 0


def test_unknown_provenance_places():
    rows = pl.DataFrame({"stack": [None, "tinygrad", "vllm"], "host": ["sbc", None, None]})
    assert rows.select(places_gpu(rows.columns)).to_series().to_list() == [False, False, True]


def constrained(host: str) -> pl.DataFrame:
    """BENCH (60 % of the roofline, desktop) plus slow rows from a constrained host."""
    slow = bench(
        [("rtx-3090", 1, "llama.cpp", 8.03, 4, "Q4_K_M", "decode", 1, 128, 0.1 * roof(936)),
         ("mi250", 1, "llama.cpp", 8.03, 4, "Q4_K_M", "decode", 1, 128, 0.1 * roof(3277 / 2)),
         ("mi250", 1, "llama.cpp", 8.03, 4, "Q4_K_M", "prefill", 1, 512, 10.0)]
    )  # fmt: skip
    return pl.concat(
        [BENCH.with_columns(host=pl.lit("desktop")), slow.with_columns(host=pl.lit(host))]
    )


@pytest.mark.parametrize("host", ["sbc", "egpu", "external-link"])
def test_llm_fit_and_measured_rows_ignore_constrained_hosts(host):
    rows = constrained(host)
    assert decode_roofline(rows, GPUS)["ratio"].to_list() == pytest.approx([0.6] * 4)
    out = llm_throughput(memory_fit(GPUS, (8,), (4,), (1,), 8192, 0.5), GPUS, rows)
    measured = out.filter(pl.col("method").str.starts_with("measured"))
    # No measured row of mi250 (its only rows are the constrained host's), and the RTX
    # 3090's measured decode is its desktop figure alone.
    assert "mi250" not in measured["gpu_id"].to_list()
    r3090 = measured.filter(pl.col("gpu_id") == "rtx-3090").row(0, named=True)
    assert r3090["decode_tokens_per_s"] == pytest.approx(0.6 * roof(936))
    assert r3090["n_results"] == 1
    # The modelled rows equal those fitted on the desktop rows alone.
    clean = llm_throughput(memory_fit(GPUS, (8,), (4,), (1,), 8192, 0.5), GPUS, BENCH)
    modelled = ~pl.col("method").str.starts_with("measured")
    assert out.filter(modelled).equals(clean.filter(modelled))
