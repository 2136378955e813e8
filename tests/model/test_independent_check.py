"""Our ratios beside published ones: the comparison and its verdicts."""

import datetime as dt
import math

import polars as pl
import pytest

from model.independent_check import (
    independent_checks,
    independent_problems,
    our_values,
    within,
)

RUN = dt.date(2026, 9, 20)


def _relative(values: dict[tuple[str, str], float]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"gpu_id": g, "workload": w, "value": v, "method": "measured", "evidence": "measured"}
            for (g, w), v in values.items()
        ]
    )


def _llm(rows: list[dict]) -> pl.DataFrame:
    base = {"model_params_b": 8, "bits": 4, "num_gpus": 1, "method": "modelled: llama.cpp"}
    return pl.DataFrame([{**base, **r} for r in rows])


def _pairs(rows: list[tuple]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "gpu_a": a,
                "gpu_b": b,
                "workload": w,
                "their_ratio": theirs,
                "benchmark": "bench",
                "source": "src",
                "citation": "cite",
                "as_of": dt.date(2025, 1, 1),
                "tolerance": tol,
                "independence": "in_fit",
                "enforced": enforced,
                "note": None,
            }
            for a, b, w, theirs, tol, enforced in rows
        ]
    )


RELATIVE = _relative(
    {
        ("h200", "training_16bit"): 1.2,
        ("h100", "training_16bit"): 1.0,
        ("h100", "inference_16bit"): 1.0,
    }
)
LLM = _llm(
    [
        {"gpu_id": "xtx", "decode_tokens_per_s": 80.0, "prefill_tokens_per_s": 2000.0},
        {"gpu_id": "4090", "decode_tokens_per_s": 100.0, "prefill_tokens_per_s": 4000.0},
        # Not the row pairs are compared with: another size, and a measured row.
        {"gpu_id": "xtx", "model_params_b": 32, "decode_tokens_per_s": 1.0},
        {"gpu_id": "4090", "method": "measured (llama.cpp)", "decode_tokens_per_s": 999.0},
    ]
)


def test_our_values_take_relative_performance_and_the_modelled_8b_4bit_row():
    ours = our_values(RELATIVE, LLM)
    got = {(g, w): v for g, w, v in ours.select("gpu_id", "workload", "value").iter_rows()}
    assert got[("h200", "training_16bit")] == 1.2
    assert got[("4090", "llm_decode")] == 100.0  # the modelled row, not the measured 999
    assert got[("xtx", "llm_prefill")] == 2000.0
    assert ours.filter(pl.col("workload") == "llm_decode").height == 2


def test_within_is_the_same_factor_either_way():
    assert within(math.log(1.2), 0.2) and within(-math.log(1.2), 0.2)
    assert not within(math.log(1.21), 0.2) and not within(-math.log(1.21), 0.2)
    assert not within(None, 0.5)


def test_a_pair_inside_passes_and_a_deliberately_wrong_ratio_fails_naming_it():
    pairs = _pairs(
        [
            ("h200", "h100", "training_16bit", 1.25, 0.15, True),  # ours 1.2: -4 %
            ("h200", "h100", "training_16bit", 2.0, 0.15, True),  # deliberately wrong
            ("xtx", "4090", "llm_prefill", 0.5, 0.30, True),  # ours 0.5
            ("xtx", "4090", "llm_decode", 0.5, 0.30, False),  # ours 0.8: fails, not enforced
            ("h200", "h100", "inference_16bit", 1.3, 0.2, True),  # h200 has no inference value
        ]
    )
    checks = independent_checks(pairs, RELATIVE, LLM, RUN)
    assert checks["ours"].to_list()[:4] == pytest.approx([1.2, 1.2, 0.5, 0.8])
    assert checks["ours"][4] is None
    assert checks["passed"].to_list() == [True, False, True, False, False]
    assert checks["log_error"][1] == pytest.approx(math.log(0.6))
    assert (checks["run_date"] == RUN).all()
    assert checks["ours_basis"][0] == "measured: measured / measured: measured"
    problems = independent_problems(checks)
    assert problems == [
        "h200/h100 inference_16bit (src, bench): no value in this run (theirs 1.300)",
        "h200/h100 training_16bit (src, bench): ours 1.200 vs theirs 2.000, -40% against a "
        "tolerance of ±15%",
    ]
