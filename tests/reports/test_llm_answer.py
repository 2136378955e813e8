"""LLM inference on the real build (issue 16's "done when")."""

import polars as pl
import pytest

from warehouse.export import open_published


@pytest.fixture(scope="module")
def con(built):
    connection = open_published(built.published)
    yield connection
    connection.close()


def test_every_gpu_that_can_run_8b_at_4_bits_has_throughput_and_cost(con):
    rows = con.sql(
        "SELECT * FROM llm_throughput WHERE run_date = (SELECT max(run_date) FROM model_runs)"
        " AND method NOT LIKE 'measured%'"
    ).pl()
    can_run = rows.filter(pl.col("fits") & (pl.col("model_params_b") == 8) & (pl.col("bits") == 4))
    gpus = con.sql("SELECT gpu_id FROM gpus").pl()["gpu_id"]
    # Every catalog GPU has a row per configuration; those that fit have a decode rate.
    assert set(rows["gpu_id"]) == set(gpus)
    assert can_run.filter(pl.col("decode_tokens_per_s").is_null()).is_empty()
    assert set(can_run["gpu_id"]) == set(gpus)  # every catalog GPU fits 8B 4-bit on some count
    one = can_run.filter(pl.col("num_gpus") == 1)
    assert one.height >= 130
    # What does not fit has no throughput; nothing is both.
    assert rows.filter(~pl.col("fits") & pl.col("decode_tokens_per_s").is_not_null()).is_empty()
    # Intervals bracket the modelled rate.
    fit = rows.filter(pl.col("fits"))
    assert fit.filter(
        (pl.col("decode_low") > pl.col("decode_tokens_per_s"))
        | (pl.col("decode_high") < pl.col("decode_tokens_per_s"))
    ).is_empty()
    # Costs: each GPU that fits 8B 4-bit on one GPU and has a price or an offer has a row.
    cost = con.sql(
        "SELECT * FROM llm_cost WHERE run_date = (SELECT max(run_date) FROM model_runs)"
        " AND model_params_b = 8 AND bits = 4 AND num_gpus = 1"
    ).pl()
    assert {"buy_new", "buy_used", "rent_on_demand", "rent_spot"} <= set(cost["basis"])
    priced = con.sql(
        "SELECT DISTINCT gpu_id FROM perf_per_dollar WHERE system_gpus = 1"
        " AND run_date = (SELECT max(run_date) FROM model_runs)"
    ).pl()["gpu_id"]
    assert set(priced) & set(one["gpu_id"]) <= set(cost["gpu_id"])
    # A 6 GB card cannot hold 8B at 4 bits with an 8k context (6.48 GB > 6.44 GB).
    assert "rtx-2060" not in set(one["gpu_id"]) and "rtx-2060" not in set(cost["gpu_id"])


def test_70b_at_4_bits_needs_two_24_gb_cards(con):
    fits = dict(
        con.sql(
            "SELECT num_gpus, fits FROM llm_throughput WHERE gpu_id = 'rtx-4090'"
            " AND model_params_b = 70 AND bits = 4 AND method NOT LIKE 'measured%'"
            " AND run_date = (SELECT max(run_date) FROM model_runs)"
        ).fetchall()
    )
    assert fits == {1: False, 2: True, 4: True, 8: True}


def test_decode_model_error_is_validated_and_under_20_percent(con):
    median = con.sql(
        "SELECT value FROM model_validation WHERE check_name = 'llm_decode_logo'"
        " AND metric = 'median_ape' AND run_date = (SELECT max(run_date) FROM model_runs)"
    ).fetchall()[0][0]
    assert median <= 0.20
