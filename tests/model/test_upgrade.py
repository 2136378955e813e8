"""The 'I already have a PC' ranking (model/upgrade.py): card price alone, the PSU rule."""

import datetime as dt

import polars as pl
import pytest

from model.parameters import ModelParameters
from model.uncertainty import performance_replicates, price_replicates
from model.upgrade import (
    PSU_SIZES_W,
    desktop_cards,
    psu_watts,
    upgrade_picks,
    upgrade_replicates,
)

RUN = dt.date(2026, 10, 7)
PARAMS = ModelParameters(bootstrap_replicates=200)
GPUS = pl.DataFrame(
    {
        "gpu_id": ["fast", "mid", "cheap", "weak", "server", "module", "pro"],
        "name": [
            "GeForce RTX Fast",
            "GeForce RTX Mid",
            "GeForce RTX Cheap",
            "GeForce RTX Weak",
            "NVIDIA L40S",
            "NVIDIA H100 SXM5",
            "NVIDIA RTX A6000",
        ],
        "memory_gb": [24.0, 16.0, 12.0, 16.0, 48.0, 80.0, 48.0],
        "tdp_w": [450.0, 300.0, 170.0, 200.0, 350.0, 700.0, 300.0],
        "form_factor": ["pcie", "pcie", "pcie", "pcie", "pcie", "sxm", "pcie"],
    }
)


def relative(values: dict[str, float], method: str = "measured") -> pl.DataFrame:
    ids = list(values)
    return pl.DataFrame(
        {
            "gpu_id": ids,
            "workload": ["training_16bit"] * len(ids),
            "value": [values[g] for g in ids],
            "value_low": [values[g] * 0.97 for g in ids],
            "value_high": [values[g] * 1.03 for g in ids],
            "method": [method] * len(ids),
        }
    )


def prices(rows: list[tuple[str, str, float]]) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "gpu_id": [g for g, _, _ in rows],
            "market": [m for _, m, _ in rows],
            "price_usd": [p for _, _, p in rows],
            "price_low": [p * 0.95 for _, _, p in rows],
            "price_high": [p * 1.05 for _, _, p in rows],
            "log_sd": [0.02] * len(rows),
            "price_method": ["observed"] * len(rows),
            "price_day": [RUN] * len(rows),
            "age_days": [0] * len(rows),
            "n_observations": [5] * len(rows),
        }
    )


def basis(ids: list[str], ineligible: tuple[str, ...] = ()) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "gpu_id": ids,
            "workload": ["training_16bit"] * len(ids),
            "basis": ["not_validated" if g in ineligible else "measured" for g in ids],
            "caveat": [f"{g} caveat" for g in ids],
            "eligible": [g not in ineligible for g in ids],
        }
    )


def picks(rel: pl.DataFrame, price: pl.DataFrame, evidence: pl.DataFrame | None = None):
    draws = upgrade_replicates(
        performance_replicates(rel, PARAMS),
        price_replicates(NO_OBSERVATIONS, price, PARAMS),
    )
    return upgrade_picks(rel, price, GPUS, draws, RUN, evidence, workloads=("training_16bit",))


def pick(frame: pl.DataFrame, market: str, budget: float, criterion: str) -> dict:
    return frame.filter(
        (pl.col("market") == market)
        & (pl.col("budget_usd") == budget)
        & (pl.col("criterion") == criterion)
    ).row(0, named=True)


# No listing rows: every price here has its own log_sd, so it is drawn from that alone.
NO_OBSERVATIONS = pl.DataFrame(
    schema={
        "gpu_id": pl.Utf8,
        "market": pl.Utf8,
        "observed_at": pl.Datetime,
        "price_usd": pl.Float64,
    }
)
PERF = {
    "fast": 1.0,
    "mid": 0.6,
    "cheap": 0.42,
    "weak": 0.2,
    "server": 1.2,
    "module": 2.0,
    "pro": 0.9,
}


def test_a_card_just_over_budget_is_left_out():
    # fast costs $800.01: it is not a "<= $800" card, whatever its performance.
    found = picks(
        relative(PERF),
        prices([("fast", "new", 800.01), ("mid", "new", 520.0), ("cheap", "new", 300.0)]),
    )
    row = pick(found, "new", 800, "performance")
    assert row["gpu_id"] == "mid" and row["n_candidates"] == 2
    assert pick(found, "new", 1200, "performance")["gpu_id"] == "fast"
    # At exactly the budget a card fits.
    assert pick(found, "new", 300, "performance")["gpu_id"] == "cheap"
    # Value: performance per card dollar, the cheap card (0.42 / 300 > 1 / 800.01 > 0.6 / 520).
    value = pick(found, "new", 1200, "value")
    assert value["gpu_id"] == "cheap"
    assert value["perf_per_dollar"] == pytest.approx(0.42 / 300)
    assert value["perf_per_dollar_low"] < value["perf_per_dollar"] < value["perf_per_dollar_high"]


def test_nothing_fits_names_the_cheapest_card():
    found = picks(relative(PERF), prices([("mid", "new", 520.0)]))
    row = pick(found, "new", 300, "performance")
    assert row["gpu_id"] is None
    assert (row["cheapest_gpu_id"], row["cheapest_usd"]) == ("mid", 520.0)
    # A market with no price at all has rows too, without a card and without a cheapest.
    used = pick(found, "used", 3000, "performance")
    assert used["gpu_id"] is None and used["cheapest_gpu_id"] is None
    assert found.height == 6 * 2 * 2  # budgets x markets x criteria


def test_markets_are_ranked_apart_and_never_averaged():
    found = picks(
        relative(PERF),
        prices([("fast", "new", 2500.0), ("fast", "used", 1100.0), ("mid", "new", 700.0)]),
    )
    assert pick(found, "used", 1200, "performance")["gpu_id"] == "fast"
    assert pick(found, "new", 1200, "performance")["gpu_id"] == "mid"
    assert pick(found, "used", 1200, "performance")["price_usd"] == 1100.0
    assert "mean" not in found["market"].to_list()


def test_only_desktop_cards_compete():
    # A passively cooled data-center board, an SXM module: no desktop takes them.
    assert set(desktop_cards(GPUS)["gpu_id"]) == {"fast", "mid", "cheap", "weak", "pro"}
    found = picks(
        relative(PERF),
        prices([("server", "new", 900.0), ("module", "used", 900.0), ("pro", "used", 1000.0)]),
    )
    assert pick(found, "new", 1200, "performance")["gpu_id"] is None
    assert pick(found, "used", 1200, "performance")["gpu_id"] == "pro"


def test_weak_evidence_never_decides():
    # fast would win on its (not validated) estimate; it is not a candidate at all.
    rel = relative(PERF)
    price = prices([("fast", "new", 700.0), ("mid", "new", 650.0)])
    found = picks(rel, price, basis(list(PERF), ineligible=("fast",)))
    row = pick(found, "new", 800, "performance")
    assert row["gpu_id"] == "mid" and row["n_candidates"] == 1
    assert row["basis"] == "measured" and row["caveat"] == "mid caveat"
    assert "fast" not in (row["tie_gpu_ids"] or "")


def test_p_best_and_ties_from_the_draws():
    # Three cards 0.1 % apart with 3 % performance intervals: the data cannot separate them.
    rel = relative({"fast": 1.0, "mid": 0.999, "pro": 0.998})
    price = prices([("fast", "new", 1000.0), ("mid", "new", 990.0), ("pro", "new", 980.0)])
    row = pick(picks(rel, price), "new", 1200, "performance")
    assert row["gpu_id"] == "fast" and 0.2 < row["p_best"] < 0.5
    assert row["tie_gpu_ids"].split(", ")[0] == "fast"
    assert set(row["tie_gpu_ids"].split(", ")) == {"fast", "mid", "pro"}
    # Far apart: a clear winner, no tie.
    clear = picks(relative(PERF), prices([("fast", "new", 1000.0), ("weak", "new", 990.0)]))
    row = pick(clear, "new", 1200, "performance")
    assert row["p_best"] == 1.0 and row["tie_gpu_ids"] is None


@pytest.mark.parametrize(
    ("tdp", "psu"),
    [
        (450.0, 850),  # RTX 4090: NVIDIA's required system power 850 W
        (350.0, 750),  # RTX 3090: 750 W
        (320.0, 750),  # RTX 4080 / 3080: 750 W
        (575.0, 1000),  # RTX 5090: 1000 W
        (170.0, 550),  # RTX 3060: 550 W
        (115.0, 450),  # RTX 4060: (115 + 250) x 1.2 = 438 W -> 450 W
        (200.0, 550),  # (200 + 250) x 1.2 = 540 W -> 550 W
        (1200.0, 1800),  # beyond the largest size: the next 100 W
    ],
)
def test_psu_rule(tdp, psu):
    assert psu_watts(tdp) == psu


def test_psu_rule_at_a_size_boundary_and_without_power():
    # (375 + 250) x 1.2 = 750 exactly: a 750 W supply is enough.
    assert psu_watts(375.0) == 750
    assert psu_watts(375.5) == 850
    assert psu_watts(None) is None
    assert list(PSU_SIZES_W) == sorted(PSU_SIZES_W)


def test_every_pick_carries_its_power_and_psu():
    found = picks(relative(PERF), prices([("fast", "used", 700.0), ("cheap", "used", 200.0)]))
    named = found.filter(pl.col("gpu_id").is_not_null())
    assert named.height > 0
    for row in named.iter_rows(named=True):
        assert row["psu_w"] == psu_watts(row["tdp_w"])
        assert row["memory_gb"] > 0 and row["price_usd"] <= row["budget_usd"]
