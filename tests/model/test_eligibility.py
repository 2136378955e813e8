"""Headline eligibility and ties (model/eligibility.py, model/ties.py; issue 22 step 7).

A GPU whose value rests on tinygrad or eGPU rows only is estimated, flagged "not
validated under PyTorch" and never a pick; a pick under 50 % P(best) whose interval
overlaps others' is a tie naming the ordered group. Hand-made tables throughout.
"""

import polars as pl
import pytest

from model.debias import debias
from model.eligibility import (
    NOT_VALIDATED_UNDER_PYTORCH,
    evidence_basis,
    keep_eligible,
    placing_provenance,
    publisher,
)
from model.performance import relative_performance
from model.recommendations import buy_candidates, recommendations
from model.ties import tie_groups, tie_label
from model.verdicts import HEADLINE_KIND, HEADLINE_LIMIT, verdict_problems, verdicts
from tests.model.test_placement import DAY, PARAMS, catalog, results

GROUP = ["g"]


def basis_of_placement_fixture() -> pl.DataFrame:
    """evidence_basis of the placement tests' GPUs: a, c PyTorch; t tinygrad; e eGPU only."""
    rows = results()
    debiased = debias(rows, PARAMS, DAY)
    relative = relative_performance(debiased, catalog(), PARAMS, DAY)
    return evidence_basis(relative, placing_provenance(debiased, rows), catalog(), DAY)


def test_tinygrad_only_and_egpu_only_gpus_are_flagged_and_not_eligible():
    basis = basis_of_placement_fixture().filter(pl.col("workload") == "training_16bit")
    got = {r["gpu_id"]: r for r in basis.iter_rows(named=True)}
    for gpu in ("a", "c"):
        assert got[gpu]["basis"] == "measured" and got[gpu]["eligible"]
        assert got[gpu]["stacks"] == "pytorch-cuda" and got[gpu]["n_sources"] == 1
        assert got[gpu]["caveat"].startswith("measured: ")
    for gpu in ("t", "e"):
        # Their only rows (tinygrad, eGPU) never place: a spec estimate of an architecture
        # (rdna3) that no mainstream-stack result measures.
        assert got[gpu]["evidence"] == "spec_estimate"
        assert got[gpu]["basis"] == "not_validated" and not got[gpu]["eligible"]
        assert got[gpu]["caveat"].startswith(NOT_VALIDATED_UNDER_PYTORCH)
        assert got[gpu]["n_sources"] == 0 and got[gpu]["stacks"] == ""


def test_a_spec_estimate_of_a_measured_architecture_is_a_validated_estimate():
    gpus = pl.DataFrame(
        {
            "gpu_id": ["m", "s", "x"],
            "vendor": ["nvidia", "nvidia", "amd"],
            "architecture": ["ada", "ada", "rdna3"],
        }
    )
    relative = pl.DataFrame(
        {
            "gpu_id": ["m", "s", "x"] * 2,
            "workload": ["training_16bit"] * 3 + ["inference_16bit"] * 3,
            "evidence": ["measured", "spec_estimate", "spec_estimate"] + ["bridged"] * 3,
            "n_results": [4, 0, 0, 0, 0, 0],
        }
    )
    placing = pl.DataFrame(
        {"gpu_id": ["m"], "workload": ["training_16bit"], "stack": [None], "publisher": ["p"]},
        schema_overrides={"stack": pl.Utf8},
    )
    basis = evidence_basis(relative, placing, gpus, DAY)
    got = {(r["gpu_id"], r["workload"]): r for r in basis.iter_rows(named=True)}
    assert got[("s", "training_16bit")]["basis"] == "validated_estimate"
    assert got[("x", "training_16bit")]["basis"] == "not_validated"
    # Bridged inference: no vendor has 3 GPUs measured in inference, so none is validated,
    # and the measured GPU's own training evidence is what its bridge rests on.
    assert not basis.filter(pl.col("workload") == "inference_16bit")["eligible"].any()
    assert got[("m", "inference_16bit")]["stacks"] == "unstated"
    assert got[("m", "inference_16bit")]["n_sources"] == 1


def test_mlperf_submitters_are_independent_publishers():
    assert publisher("mlperf", "mlcommons/x closed/Dell/results/XE9680/llama@1") == "mlperf:Dell"
    assert publisher("mlperf", "mlcommons/training_results_v5.1 Krai/results/n1/l@2") == (
        "mlperf:Krai"
    )
    assert publisher("lambda", "lambdal/deeplearning-benchmark a.csv@1") == "lambda"


def candidates_where_the_unvalidated_gpu_is_best() -> tuple[pl.DataFrame, pl.DataFrame]:
    """perf_per_dollar and its replicates: t (tinygrad only) is best by far, then c, a."""
    point = {"t": 3.0, "c": 2.0, "a": 1.0, "e": 2.5}
    perf = pl.DataFrame(
        {
            "gpu_id": list(point),
            "workload": "training_16bit",
            "system_gpus": 1,
            "market": "new",
            "perf_per_dollar": list(point.values()),
            "total_cost_usd": 2000.0,
            "price_usd": 500.0,
            "price_method": "observed",
            "price_day": DAY,
            "relative_performance": 1.0,
            "method": "estimated",
        }
    )
    reps = pl.DataFrame(
        {
            "replicate": [i for i in range(20) for _ in point],
            "gpu_id": list(point) * 20,
            "workload": "training_16bit",
            "system_gpus": 1,
            "market": "new",
            "perf_per_dollar": [
                v * (1 + 0.01 * (i % 3)) for i in range(20) for v in point.values()
            ],
        }
    )
    return perf, reps


def test_an_unvalidated_gpu_is_never_the_headline_nor_a_verdict():
    basis = basis_of_placement_fixture()
    eligible = basis.filter(pl.col("eligible"))
    perf, reps = candidates_where_the_unvalidated_gpu_is_best()
    buy = buy_candidates(keep_eligible(perf, eligible), keep_eligible(reps, eligible))
    gpus = catalog()
    tiers = (8.0, 24.0)
    recs = pl.concat(
        [
            recommendations(*buy, gpus, tiers, DAY),
            recommendations(*buy, gpus, (HEADLINE_LIMIT,), DAY),
        ]
    )
    cloud = pl.DataFrame(
        schema={"gpu_id": pl.Utf8, "workload": pl.Utf8, "provider": pl.Utf8,
                "price_type": pl.Utf8, "instance_type": pl.Utf8, "region": pl.Utf8,
                "offer_day": pl.Date, "relative_performance": pl.Float64,
                "usd_per_gpu_hour": pl.Float64, "perf_per_dollar": pl.Float64}
    )  # fmt: skip
    offers = cloud.select(
        "provider", "instance_type", "region", "price_type", "gpu_id"
    ).with_columns(gpu_count=pl.lit(None, dtype=pl.Int32))
    params = {"years": 5, "utilization": 0.15, "host_cost_usd": {"1": 1500.0},
              "memory_tiers_gb": list(tiers)}  # fmt: skip
    found = verdicts(
        perf, cloud, recs, offers, reps,
        pl.DataFrame(schema={"replicate": pl.Int64, "gpu_id": pl.Utf8, "workload": pl.Utf8,
                             "value": pl.Float64}),
        params, DAY, ["training_16bit"], (2500.0,), basis=basis,
    )  # fmt: skip
    named = found.filter(pl.col("gpu_id").is_not_null() & pl.col("option").str.starts_with("buy"))
    assert named.height > 0
    # Without the rule t (then e) would win everything; with it, c does, and neither t nor e
    # is in any tie either.
    assert set(named["gpu_id"]) == {"c"}
    tied = ",".join(found["tie_gpu_ids"].drop_nulls())
    assert "t" not in tied.split(", ") and "e" not in tied.split(", ")
    head = found.filter((pl.col("kind") == HEADLINE_KIND) & (pl.col("option") == "buy_new"))
    assert head["gpu_id"].to_list() == ["c"]
    assert head["caveat"][0].startswith("measured: ")
    assert verdict_problems(found, ["training_16bit"], tiers, (2500.0,)) == []


def frame(rows: list[tuple]) -> pl.DataFrame:
    """Candidates (g, gpu_id, perf_per_dollar, low, high, p_best)."""
    return pl.DataFrame(
        rows, schema=["g", "gpu_id", "perf_per_dollar", "low", "high", "p_best"], orient="row"
    )


def test_under_50_percent_with_overlapping_intervals_is_a_tie_naming_the_ordered_group():
    got = tie_groups(
        frame(
            [
                ("x", "a", 1.00, 0.8, 1.2, 0.40),
                ("x", "b", 0.98, 0.7, 1.3, 0.35),
                ("x", "c", 0.90, 0.6, 1.1, 0.20),
                ("x", "d", 0.85, 0.5, 1.0, 0.05),  # overlaps, enough P(best), but 4th
                ("x", "e", 0.95, 0.9, 1.0, 0.00),  # overlaps but never wins
            ]
        ),
        GROUP,
        ["gpu_id"],
    )
    assert got.select("g", "tie_gpu_ids").rows() == [("x", "a, b, c")]
    assert tie_label(got["tie_gpu_ids"][0]) == "tie: a, b, c"


def test_the_group_is_ordered_by_point_estimate_not_by_p_best():
    got = tie_groups(
        frame(
            [
                ("x", "a", 1.0, 0.5, 1.5, 0.30),
                ("x", "b", 0.8, 0.4, 1.2, 0.10),
                ("x", "c", 0.9, 0.4, 1.2, 0.60),
            ]
        ),  # fmt: skip
        GROUP,
        ["gpu_id"],
    )
    assert got["tie_gpu_ids"].to_list() == ["a, c, b"]


@pytest.mark.parametrize(
    "rows",
    [
        # P(best) at 50 % or more: one winner, however the intervals overlap
        [("x", "a", 1.0, 0.5, 1.5, 0.50), ("x", "b", 0.9, 0.5, 1.5, 0.45)],
        # under 50 %, but the runner-up's interval lies wholly below the pick's
        [("x", "a", 1.0, 0.9, 1.1, 0.45), ("x", "b", 0.5, 0.4, 0.6, 0.30)],
        # under 50 %, overlapping, but the others almost never win
        [("x", "a", 1.0, 0.5, 1.5, 0.45), ("x", "b", 0.9, 0.5, 1.5, 0.01)],
    ],
)
def test_p_best_of_half_or_disjoint_intervals_name_one_winner(rows):
    assert tie_groups(frame(rows), GROUP, ["gpu_id"]).is_empty()


def test_a_low_pick_among_many_weak_candidates_is_still_a_tie():
    # Thirty candidates at 3 % each beside a pick at 6 %: half the pick's P(best) admits them.
    rows = [("x", "a", 1.0, 0.5, 1.5, 0.06)] + [
        ("x", f"b{i:02d}", 0.99 - i / 100, 0.5, 1.5, 0.03) for i in range(30)
    ]
    got = tie_groups(frame(rows), GROUP, ["gpu_id"])
    assert got["tie_gpu_ids"].to_list() == ["a, b00, b01"]


def test_budget_ties_keep_each_members_system_size():
    rows = frame([("x", "a", 1.0, 0.5, 1.5, 0.3), ("x", "b", 0.9, 0.5, 1.5, 0.3)]).with_columns(
        system_gpus=pl.Series([2, 1])
    )
    got = tie_groups(rows, GROUP, ["gpu_id", "system_gpus"])
    assert got.select("tie_gpu_ids", "tie_system_gpus").rows() == [("a, b", "2, 1")]
    assert tie_label("a, b", "2, 1") == "tie: 2× a, b"
