"""Serving cost per million tokens (model/llm_serving_cost.py), checked by hand."""

import datetime as dt

import polars as pl
import pytest

from model.llm_serving_cost import (
    COLUMNS,
    buy_rates,
    input_not_cheaper,
    llm_serving_cost,
    operating_points,
    rent_rates,
)

RUN = dt.date(2026, 10, 7)
H100 = "h100-sxm5-80gb"
YEAR_S = 365 * 24 * 3600


def serving_rows(gpu=H100, model="llama-3.3-70b", bits=8, n=1, curve=None, prefill=4000.0):
    """One configuration's throughput curve: (concurrency, system tokens/s, per user)."""
    curve = curve or [
        (1, 30.0, 30.0),
        (8, 200.0, 25.0),
        (32, 640.0, 20.0),
        (64, 960.0, 15.0),
        (128, 1280.0, 10.0),
        (256, 1536.0, 6.0),
    ]
    return pl.DataFrame(
        {
            "run_date": [RUN] * len(curve),
            "gpu_id": [gpu] * len(curve),
            "model_id": [model] * len(curve),
            "precision_bits": [bits] * len(curve),
            "num_gpus": [n] * len(curve),
            "concurrency": [c for c, _, _ in curve],
            "engine": ["tensorrt-llm"] * len(curve),
            "fits": [True] * len(curve),
            "output_tokens_per_s": [t for _, t, _ in curve],
            "output_tokens_per_s_per_user": [u for _, _, u in curve],
            "low": [0.9 * t for _, t, _ in curve],
            "high": [1.1 * t for _, t, _ in curve],
            "prefill_tokens_per_s": [prefill] * len(curve),
        }
    )


def buy_frame(rows):
    keys = ("gpu_id", "system_gpus", "market", "total_cost_usd", "price_usd", "resale_usd",
            "price_low_usd", "price_high_usd")  # fmt: skip
    out = pl.DataFrame([dict(zip(keys, r, strict=True)) for r in rows])
    return out.with_columns(price_method=pl.lit("observed"), price_day=pl.lit(dt.date(2026, 10, 1)))


# An 8-GPU H100 server: TCO $400,000 with GPUs at $30,000 (95 %: $27,000-33,000), each
# resold for $10,000 after the years.
BUY = buy_frame([(H100, 8, "new", 400_000.0, 30_000.0, 10_000.0, 27_000.0, 33_000.0)])
OFFERS = pl.DataFrame(
    {
        "gpu_id": [H100] * 4,
        "gpu_count": [1, 8, 1, 1],
        "price_type": ["on_demand", "on_demand", "on_demand", "spot"],
        "usd_per_gpu_hour": [2.00, 3.00, 2.50, 1.00],
        "provider": ["a", "b", "c", "d"],
        "instance_type": ["1x", "8x", "1x", "1x-spot"],
    }
)


def by_basis_target(cost):
    return {(r["basis"], r["min_tokens_per_s_per_user"]): r for r in cost.iter_rows(named=True)}


def test_operating_point_is_the_fastest_concurrency_meeting_the_target():
    points = operating_points(serving_rows())
    chosen = dict(zip(points["min_tokens_per_s_per_user"], points["concurrency"], strict=True))
    # 10 tokens/s per user: concurrency 128 (1,280 tokens/s) beats 64 (960); 256 gives 6.
    # 20: concurrency 32 (640 tokens/s, 20 per user exactly). 50: nothing reaches it.
    assert chosen == {10: 128, 20: 32}


def test_operating_point_ties_take_the_lower_concurrency_and_skip_what_does_not_fit():
    rows = serving_rows(curve=[(16, 500.0, 31.0), (32, 500.0, 16.0), (64, 900.0, 14.0)])
    rows = rows.with_columns(fits=pl.col("concurrency") != 64)
    points = operating_points(rows, targets=(10,))
    assert points["concurrency"].to_list() == [16]


def test_rent_cost_by_hand():
    cost = by_basis_target(llm_serving_cost(serving_rows(), BUY, OFFERS, 5.0, 0.5))
    row = cost["rent_on_demand", 20]
    # $2.00/GPU-hour (the cheapest 1-GPU-or-larger on-demand offer) = $0.000556 a second;
    # 640 output tokens/s: $0.868 per million; prefill 4,000 tokens/s: $0.139 per million.
    assert row["usd_per_million_output_tokens"] == pytest.approx(2.0 / 3600 / 640 * 1e6)
    assert row["usd_per_million_output_tokens"] == pytest.approx(0.8681, abs=1e-4)
    assert row["usd_per_million_input_tokens"] == pytest.approx(2.0 / 3600 / 4000 * 1e6)
    # low: cheapest offer at the fast end (704 tokens/s); high: the median of the three
    # on-demand offers ($2.50) at the slow end (576 tokens/s).
    assert row["low"] == pytest.approx(2.0 / 3600 / 704 * 1e6)
    assert row["high"] == pytest.approx(2.5 / 3600 / 576 * 1e6)
    assert row["utilization"] is None and row["concurrency"] == 32
    assert "a 1x at $2.0/GPU-hour (cheapest of 3 fresh offers; median $2.5)" in row["detail"]
    assert row["detail"].startswith("tensorrt-llm at concurrency 32: 640 output tokens/s, 20.0 per")
    spot = cost["rent_spot", 10]
    assert spot["detail"].endswith("d 1x-spot at $1.0/GPU-hour (the only fresh offer)")
    assert spot["usd_per_million_output_tokens"] == pytest.approx(1.0 / 3600 / 1280 * 1e6)
    assert ("rent_on_demand", 50) not in cost


def test_buy_cost_by_hand():
    cost = by_basis_target(llm_serving_cost(serving_rows(), BUY, OFFERS, 5.0, 0.5))
    row = cost["buy_new", 20]
    # One GPU's share of the 8-GPU server: $400,000 / 8 over 5 years at 50 % use
    # (78.84 million seconds) = $0.000634 a second; / 640 tokens/s = $0.991 per million.
    seconds = 5 * YEAR_S * 0.5
    assert row["usd_per_million_output_tokens"] == pytest.approx(400_000 / 8 / seconds / 640 * 1e6)
    assert row["usd_per_million_output_tokens"] == pytest.approx(0.9910, abs=1e-4)
    assert row["usd_per_million_input_tokens"] == pytest.approx(400_000 / 8 / seconds / 4000 * 1e6)
    # TCO at the price interval: resale is a third of the price and moves with it, so
    # 8 x (27,000 - 30,000) x 2/3 = -16,000: $384,000 to $416,000.
    assert row["low"] == pytest.approx(384_000 / 8 / seconds / 704 * 1e6)
    assert row["high"] == pytest.approx(416_000 / 8 / seconds / 576 * 1e6)
    assert row["utilization"] == 0.5
    assert "1 of a 8-GPU new system" in row["detail"]
    assert "cost of ownership $400000 over 5 years at 50% use" in row["detail"]


def test_input_tokens_are_cheaper_than_output_tokens():
    cost = llm_serving_cost(serving_rows(), BUY, OFFERS, 5.0, 0.5)
    assert cost.height == 6  # (buy_new, on-demand, spot) x targets 10 and 20
    assert (cost["usd_per_million_input_tokens"] < cost["usd_per_million_output_tokens"]).all()
    assert input_not_cheaper(cost).is_empty()
    # A prefill rate below the decode throughput is a fault the asset refuses.
    slow = llm_serving_cost(serving_rows(prefill=500.0), BUY, OFFERS, 5.0, 0.5)
    assert set(input_not_cheaper(slow)["min_tokens_per_s_per_user"]) == {10, 20}


def test_a_system_of_whole_replicas_is_bought_and_mean_is_left_out():
    buy = buy_frame(
        [
            ("rtx-4090", 1, "used", 5_000.0, 1_800.0, None, None, None),
            ("rtx-4090", 4, "used", 14_000.0, 1_800.0, None, None, None),
            ("rtx-4090", 4, "mean", 15_000.0, 2_000.0, None, None, None),
            ("rtx-4090", 8, "used", 26_000.0, 1_800.0, None, None, None),
        ]
    )
    serving = pl.concat(
        [serving_rows("rtx-4090", "llama-3.1-8b", 4, n) for n in (1, 2, 8)]
    )  # fmt: skip
    cost = llm_serving_cost(serving, buy, OFFERS.head(0), 5.0, 0.15)
    assert set(cost["basis"]) == {"buy_used"}
    systems = {
        n: d for n, d in cost.filter(pl.col("min_tokens_per_s_per_user") == 20)
        .select("num_gpus", "detail").iter_rows()
    }  # fmt: skip
    # 1 GPU: its own 1-GPU system; 2 GPUs: half of the 4-GPU system (no 2-GPU row);
    # 8 GPUs: the 8-GPU system. No price interval: low and high from throughput alone.
    assert "1 of a 1-GPU used system" in systems[1]
    assert "2 of a 4-GPU used system" in systems[2]
    assert "8 of a 8-GPU used system" in systems[8]
    two = cost.filter((pl.col("num_gpus") == 2) & (pl.col("min_tokens_per_s_per_user") == 20))
    seconds = 5 * YEAR_S * 0.15
    per_s = 14_000 / 2 / seconds  # half of the 4-GPU system
    assert two["usd_per_million_output_tokens"][0] == pytest.approx(per_s / 640 * 1e6)
    assert two["low"][0] == pytest.approx(14_000 / 2 / seconds / 704 * 1e6)


def test_rank_is_cheapest_per_model_precision_basis_target():
    fast = serving_rows(gpu="b200", curve=[(64, 3200.0, 50.0), (128, 5120.0, 40.0)])
    offers = pl.concat(
        [OFFERS, OFFERS.head(1).with_columns(gpu_id=pl.lit("b200"), usd_per_gpu_hour=pl.lit(4.0))]
    )
    cost = llm_serving_cost(pl.concat([serving_rows(), fast]), BUY, offers, 5.0, 0.5)
    on_demand = cost.filter(pl.col("basis") == "rent_on_demand")
    ranks = {(r["gpu_id"], r["min_tokens_per_s_per_user"]): r["rank"]
             for r in on_demand.iter_rows(named=True)}  # fmt: skip
    # 20 tokens/s: B200 $4/h over 5,120 tokens/s ($0.217/M) beats H100 $2/h over 640.
    assert ranks[("b200", 20)] == 1 and ranks[(H100, 20)] == 2
    # 50 tokens/s: only the B200 reaches it.
    assert ranks == {("b200", 10): 1, (H100, 10): 2, ("b200", 20): 1, (H100, 20): 2,
                     ("b200", 50): 1}  # fmt: skip
    assert tuple(cost.columns) == COLUMNS


def test_an_extrapolated_configuration_never_outranks_a_grounded_one():
    # The same two systems, but the B200's architecture has no serving measurement here:
    # it stays cheaper per token, yet ranks after the H100 and says it is not grounded.
    fast = serving_rows(gpu="b200", curve=[(64, 3200.0, 50.0), (128, 5120.0, 40.0)])
    offers = pl.concat(
        [OFFERS, OFFERS.head(1).with_columns(gpu_id=pl.lit("b200"), usd_per_gpu_hour=pl.lit(4.0))]
    )
    cost = llm_serving_cost(
        pl.concat([serving_rows(), fast]), BUY, offers, 5.0, 0.5, grounded_gpus={H100}
    )
    rows = cost.filter(
        (pl.col("basis") == "rent_on_demand") & (pl.col("min_tokens_per_s_per_user") == 20)
    )
    by_gpu = {r["gpu_id"]: r for r in rows.iter_rows(named=True)}
    assert (
        by_gpu["b200"]["usd_per_million_output_tokens"]
        < by_gpu[H100]["usd_per_million_output_tokens"]
    )
    assert (by_gpu[H100]["rank"], by_gpu["b200"]["rank"]) == (1, 2)
    assert (by_gpu[H100]["grounded"], by_gpu["b200"]["grounded"]) == (True, False)


def test_missing_serving_columns_fail_loudly():
    with pytest.raises(ValueError, match="prefill_tokens_per_s"):
        operating_points(serving_rows().drop("prefill_tokens_per_s"))


def test_buy_rows_of_several_workloads_are_refused():
    with pytest.raises(ValueError, match="one workload"):
        buy_rates(pl.concat([BUY, BUY]), 5.0, 0.15)


def test_rent_rates_count_larger_instances_and_fresh_offers_only_as_given():
    keys = pl.DataFrame({"gpu_id": [H100, H100], "num_gpus": [1, 8]})
    rows = rent_rates(keys, OFFERS).iter_rows(named=True)
    rates = {(r["num_gpus"], r["price_type"]): r for r in rows}
    # 8 GPUs: only the 8-GPU instance holds them ($3.00, one offer); no 8-GPU spot offer.
    assert rates[8, "on_demand"]["usd_per_gpu_hour"] == 3.0
    assert rates[8, "on_demand"]["n_offers"] == 1
    assert (8, "spot") not in rates
    assert rates[1, "on_demand"]["median_usd_per_gpu_hour"] == 2.5
