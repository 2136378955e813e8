"""Rent or buy at a utilisation (model/rent_or_buy.py): the grid per class, the break-even."""

import datetime as dt

import polars as pl
import pytest

from model.rent_or_buy import (
    GPU_CLASSES,
    break_even_rows,
    gpu_class_expr,
    grid_rows,
)

RUN = dt.date(2026, 10, 7)
PARAMS = {"years": 5.0, "utilization": 0.15}
HOURS = 5 * 8760.0
GPUS = pl.DataFrame(
    {
        "gpu_id": ["a", "b", "c", "m"],
        "memory_gb": [24.0, 24.0, 12.0, 80.0],
    }
)


def perf_row(
    gpu, fixed, usd_per_hour_used, perf=1.0, market="used", n=1, workload="training_16bit"
):
    """A perf_per_dollar row whose cost is `fixed` (card + host - resale, per GPU) and power."""
    electricity_year = usd_per_hour_used * n * 8760 * PARAMS["utilization"]
    return {
        "gpu_id": gpu,
        "workload": workload,
        "market": market,
        "system_gpus": n,
        "price_usd": fixed / 2,
        "relative_performance": perf,
        "total_cost_usd": fixed * n + PARAMS["years"] * electricity_year,
        "electricity_usd_per_year": electricity_year,
    }


def offer(gpu, usd, perf=1.0, fresh=True, price_type="on_demand", provider="p"):
    return {
        "gpu_id": gpu,
        "workload": "training_16bit",
        "provider": provider,
        "price_type": price_type,
        "usd_per_gpu_hour": usd,
        "relative_performance": perf,
        "fresh": fresh,
        "offer_day": RUN,
    }


def grid(perf_rows, offers, basis=None) -> pl.DataFrame:
    return grid_rows(pl.DataFrame(perf_rows), pl.DataFrame(offers), GPUS, PARAMS, RUN, basis)


def cheaper(frame: pl.DataFrame, gpu_class="gb24", price_type="on_demand") -> dict:
    rows = frame.filter((pl.col("gpu_class") == gpu_class) & (pl.col("price_type") == price_type))
    return dict(zip(rows["utilization"], rows["cheaper"], strict=True))


def test_the_answer_flips_at_the_break_even_utilisation():
    # Owning: $2,000 fixed (card + host - resale) + $0.05 an hour of use; renting $0.25 an
    # hour. Equal at u = 2000 / (43,800 h x (0.25 - 0.05)) = 22.8 %.
    rows = grid([perf_row("a", 2000.0, 0.05)], [offer("a", 0.25)])
    assert cheaper(rows) == {
        0.05: "rent",
        0.10: "rent",
        0.20: "rent",
        0.35: "own",
        0.50: "own",
        1.0: "own",
    }
    at_20 = rows.filter((pl.col("gpu_class") == "gb24") & (pl.col("utilization") == 0.2))
    own = at_20.filter(pl.col("price_type") == "on_demand")["own_usd_per_work_hour"][0]
    assert own == pytest.approx((2000 + 0.05 * 0.2 * HOURS) / (0.2 * HOURS))
    per_gpu = break_even_rows(
        pl.DataFrame([perf_row("a", 2000.0, 0.05)]),
        pl.DataFrame([offer("a", 0.25)]),
        GPUS,
        PARAMS,
        RUN,
    )
    row = per_gpu.row(0, named=True)
    assert row["break_even_utilization"] == pytest.approx(2000 / (HOURS * 0.20))
    assert row["own_fixed_usd"] == pytest.approx(2000.0)
    assert row["electricity_usd_per_hour"] == pytest.approx(0.05)
    assert row["gpu_class"] == "gb24" and row["note"] is None


def test_work_not_hours_is_compared():
    # b rents for twice a's price but does three times the work: renting b is cheaper per
    # hour of the reference GPU's work, so it is the class's rent side.
    rows = grid(
        [perf_row("a", 2000.0, 0.05)],
        [offer("a", 0.25), offer("b", 0.50, perf=3.0)],
    )
    first = rows.filter((pl.col("gpu_class") == "gb24") & (pl.col("price_type") == "on_demand"))
    assert set(first["rent_gpu_id"]) == {"b"}
    assert first["rent_usd_per_work_hour"][0] == pytest.approx(0.5 / 3.0)


def test_stale_offers_never_decide():
    # A cheaper stale offer would make renting win everywhere; it is left out.
    rows = grid([perf_row("a", 2000.0, 0.05)], [offer("a", 0.25), offer("b", 0.01, fresh=False)])
    assert cheaper(rows)[0.35] == "own"
    only_stale = grid([perf_row("a", 2000.0, 0.05)], [offer("a", 0.01, fresh=False)])
    assert set(cheaper(only_stale).values()) == {None}
    assert only_stale["rent_gpu_id"].null_count() == only_stale.height


def test_weak_evidence_never_decides():
    basis = pl.DataFrame(
        {
            "gpu_id": ["a", "b"],
            "workload": ["training_16bit"] * 2,
            "eligible": [True, False],
        }
    )
    rows = grid(
        [perf_row("a", 2000.0, 0.05), perf_row("b", 100.0, 0.01)],
        [offer("a", 0.25), offer("b", 0.01)],
        basis,
    )
    assert set(rows["own_gpu_id"]) == {"a"}
    # No spot offer: the spot rows have no rent side at all, so no answer.
    on_demand = rows.filter(pl.col("price_type") == "on_demand")
    assert set(on_demand["rent_gpu_id"]) == {"a"}
    assert rows.filter(pl.col("price_type") == "spot")["cheaper"].null_count() == 6


def test_markets_stay_apart_and_a_module_counts_per_gpu():
    # New and used are two ways to own, never averaged: the cheaper per work-hour wins.
    rows = grid(
        [perf_row("a", 2000.0, 0.05, market="new"), perf_row("a", 1500.0, 0.05)],
        [offer("a", 0.25)],
    )
    assert set(rows.filter(pl.col("gpu_class") == "gb24")["own_market"]) == {"used"}
    # A module bought as a 4-GPU server (its smallest): the cost per GPU is a quarter.
    per_gpu = break_even_rows(
        pl.DataFrame([perf_row("m", 10000.0, 0.1, market="new", n=4)]),
        pl.DataFrame([offer("m", 2.0)]),
        GPUS,
        PARAMS,
        RUN,
    ).row(0, named=True)
    assert per_gpu["own_fixed_usd"] == pytest.approx(10000.0)
    assert per_gpu["electricity_usd_per_hour"] == pytest.approx(0.1)
    assert per_gpu["break_even_utilization"] == pytest.approx(10000 / (HOURS * 1.9))


def test_renting_cheaper_than_power_has_no_break_even():
    per_gpu = break_even_rows(
        pl.DataFrame([perf_row("a", 2000.0, 0.30), perf_row("c", 9000.0, 0.01)]),
        pl.DataFrame([offer("a", 0.25), offer("c", 0.20)]),
        GPUS,
        PARAMS,
        RUN,
    )
    notes = dict(zip(per_gpu["gpu_id"], per_gpu["note"], strict=True))
    assert per_gpu["break_even_utilization"].null_count() == 2
    assert notes["a"].startswith("renting is cheaper per hour than the electricity")
    # c: 9000 / (43,800 x 0.19) = 108 % use: never worth owning within the period.
    assert notes["c"] == "renting is cheaper even at 100 % use"


@pytest.mark.parametrize(
    ("memory", "gpu_class"),
    [(8.0, "upto16"), (16.0, "upto16"), (20.0, "gb24"), (24.0, "gb24"), (32.0, "gb48"),
     (48.0, "gb48"), (80.0, "gb80"), (192.0, "gb80")],
)  # fmt: skip
def test_gpu_classes_by_memory(memory, gpu_class):
    found = pl.DataFrame({"memory_gb": [memory]}).select(gpu_class_expr())[0, 0]
    assert found == gpu_class
    assert gpu_class in {c[0] for c in GPU_CLASSES}
