"""The llm_serving_cost and llm_api_prices assets on a small warehouse (pipeline glue).

`llm_serving` is helper B's table (migration 023, not on this branch): the test creates it
with the contract's columns where the warehouse lacks it, so the asset is exercised end to
end; without it the asset must fail loudly.
"""

import datetime as dt
from pathlib import Path

import dagster as dg
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.defs.llm.serving_cost import (
    api_band,
    buy_rows,
    llm_api_prices,
    llm_serving_cost,
    read_serving,
)
from pipeline.defs.resources import GpuvalueSettings
from sources.llm_api_prices import API_PRICES
from warehouse.db import connect

RUN = dt.date(2026, 10, 7)
H100 = "h100-sxm5-80gb"
SERVING_DDL = (
    "CREATE TABLE IF NOT EXISTS llm_serving (run_date DATE, gpu_id VARCHAR, model_id VARCHAR, "
    "precision_bits INTEGER, num_gpus INTEGER, concurrency INTEGER, engine VARCHAR, "
    "fits BOOLEAN, kv_capacity_tokens DOUBLE, output_tokens_per_s DOUBLE, "
    "output_tokens_per_s_per_user DOUBLE, low DOUBLE, high DOUBLE, prefill_tokens_per_s DOUBLE, "
    "ttft_s DOUBLE, joules_per_output_token DOUBLE, energy_basis VARCHAR, interconnect VARCHAR, "
    "method VARCHAR, evidence VARCHAR)"
)
# 70B at 8 bits on one H100: (concurrency, system tokens/s, tokens/s per user).
CURVE = [(1, 30.0, 30.0), (16, 480.0, 30.0), (64, 1280.0, 20.0), (128, 1536.0, 12.0)]


def _small_warehouse(path: Path, serving: bool = True) -> None:
    params = GpuvalueSettings().parameters()
    with connect(path) as con:
        con.execute(
            "INSERT INTO model_runs VALUES (?, now(), ?, ?)",
            [RUN, params.reference_gpu, params.to_json()],
        )
        con.execute(
            "INSERT INTO perf_per_dollar (run_date, gpu_id, workload, system_gpus, market, "
            "price_usd, total_cost_usd, electricity_usd_per_year, perf_per_dollar, "
            "relative_performance, method, price_day, price_method) VALUES "
            "(?, ?, 'inference_16bit', 8, 'new', 25000, 300000, 5000, 1, 1, 'measured', ?, "
            "'observed'), (?, ?, 'training_16bit', 8, 'new', 25000, 300000, 5000, 1, 1, "
            "'measured', ?, 'observed')",
            [RUN, H100, RUN, RUN, H100, RUN],
        )
        con.execute(
            "INSERT INTO current_prices (run_date, gpu_id, market, price_usd, price_low, "
            "price_high, price_day, age_days, price_method, observed_price_usd, detail) "
            "VALUES (?, ?, 'new', 25000, 22000, 28000, ?, 0, 'observed', 25000, 'test')",
            [RUN, H100, RUN],
        )
        con.execute(
            "INSERT INTO cloud_offers (observed_at, provider, instance_type, region, price_type, "
            "gpu_id, gpu_count, usd_per_hour, usd_per_gpu_hour, citation, pricing) VALUES "
            "(?, 'lambda', 'gpu_1x_h100', 'us', 'on_demand', ?, 1, 2.49, 2.49, 't', 'list'), "
            "(?, 'aws', 'p5.48xlarge', 'us', 'on_demand', ?, 8, 55.04, 6.88, 't', 'list')",
            [RUN, H100, RUN, H100],
        )
        if serving:
            con.execute(SERVING_DDL)
            for c, tps, user in CURVE:
                con.execute(
                    "INSERT INTO llm_serving (run_date, gpu_id, model_id, precision_bits, "
                    "num_gpus, concurrency, engine, fits, output_tokens_per_s, "
                    "output_tokens_per_s_per_user, low, high, prefill_tokens_per_s, method, "
                    "evidence) VALUES (?, ?, 'llama-3.3-70b', 8, 1, ?, 'tensorrt-llm', true, "
                    "?, ?, ?, ?, 6000, 'modelled: test', 'modelled: test')",
                    [RUN, H100, c, tps, user, 0.9 * tps, 1.1 * tps],
                )


def _materialize(tmp_path: Path, serving: bool = True) -> dg.ExecuteInProcessResult:
    db = tmp_path / "small.duckdb"
    _small_warehouse(db, serving)
    data = tmp_path / "data" / "llm"
    data.mkdir(parents=True)
    (data / "api_prices.csv").write_text(API_PRICES.read_text(encoding="utf-8"))
    return dg.materialize(
        [llm_api_prices, llm_serving_cost],
        instance=dg.DagsterInstance.ephemeral(),
        resources={
            "settings": GpuvalueSettings(as_of=RUN.isoformat(), data_dir=str(tmp_path / "data")),
            "warehouse": DuckDBResource(database=str(db)),
        },
        raise_on_error=False,
    )


def test_the_asset_writes_the_cost_and_compares_it_with_the_api_band(tmp_path):
    result = _materialize(tmp_path)
    assert result.success
    with connect(tmp_path / "small.duckdb", read_only=True) as con:
        cost = con.sql("SELECT * FROM llm_serving_cost ORDER BY ALL").pl()
        api = con.sql("SELECT count(*) FROM llm_api_prices").fetchall()[0][0]
    assert api >= 25
    rent = cost.filter(
        (pl.col("basis") == "rent_on_demand") & (pl.col("min_tokens_per_s_per_user") == 20)
    ).row(0, named=True)
    # $2.49/GPU-hour over 1,280 tokens/s at concurrency 64 (20 tokens/s each): $0.54 per
    # million output tokens; prefill 6,000 tokens/s: $0.115 per million input tokens.
    assert rent["concurrency"] == 64
    assert rent["usd_per_million_output_tokens"] == pytest.approx(2.49 / 3600 / 1280 * 1e6)
    assert rent["usd_per_million_input_tokens"] == pytest.approx(2.49 / 3600 / 6000 * 1e6)
    # Median of the two fresh 1+-GPU offers ($2.49, $6.88) at the slow end.
    assert rent["high"] == pytest.approx((2.49 + 6.88) / 2 / 3600 / (0.9 * 1280) * 1e6)
    # Buying: one eighth of the inference_16bit server row only (not the training copy);
    # its price interval from current_prices ($22,000-28,000, no resale).
    buy = cost.filter(
        (pl.col("basis") == "buy_new") & (pl.col("min_tokens_per_s_per_user") == 20)
    )  # fmt: skip
    assert buy.height == 1
    params = GpuvalueSettings().parameters()
    seconds = params.years * 365 * 24 * 3600 * params.utilization
    row = buy.row(0, named=True)
    assert row["usd_per_million_output_tokens"] == pytest.approx(300_000 / 8 / seconds / 1280 * 1e6)
    assert row["low"] == pytest.approx((300_000 - 8 * 3000) / 8 / seconds / (1.1 * 1280) * 1e6)
    band = result.asset_materializations_for_node("llm_serving_cost")[0].metadata
    assert band["rent_on_demand_20_vs_api"].value == "llama-3.3-70b $0.54 (API $0.32-1.04)"


def test_the_asset_fails_loudly_without_llm_serving(tmp_path):
    result = _materialize(tmp_path, serving=False)
    assert not result.success
    failure = result.get_step_failure_events()[0]
    assert failure.step_key == "llm_serving_cost"
    assert "llm_serving has no rows for" in str(failure.event_specific_data.error.message)


def test_read_serving_refuses_an_empty_run(tmp_path):
    with connect(tmp_path / "w.duckdb") as con:
        con.execute(SERVING_DDL)
        with pytest.raises(dg.Failure, match="no rows for 2026-10-07"):
            read_serving(con, RUN)


def test_buy_rows_take_one_workload_and_the_price_interval():
    perf = pl.DataFrame(
        {"gpu_id": [H100, H100], "workload": ["inference_16bit", "training_16bit"],
         "market": ["new", "new"], "system_gpus": [8, 8]}
    )  # fmt: skip
    prices = pl.DataFrame(
        {"gpu_id": [H100], "market": ["new"], "price_low": [1.0], "price_high": [2.0]}
    )
    rows = buy_rows(perf, prices)
    assert rows.height == 1
    assert rows.row(0, named=True)["price_low_usd"] == 1.0


def test_api_band_names_each_model_with_its_cheapest_rent():
    cost = pl.DataFrame(
        {"model_id": ["m", "m", "m"], "basis": ["rent_on_demand", "rent_on_demand", "buy_new"],
         "min_tokens_per_s_per_user": [20, 20, 20],
         "usd_per_million_output_tokens": [0.5, 0.3, 0.1]}
    )  # fmt: skip
    api = pl.DataFrame({"model_id": ["m", "m"], "usd_per_million_output_tokens": [0.2, 0.9]})
    assert api_band(cost, api) == "m $0.30 (API $0.20-0.90)"
