"""The warehouse pool's size follows the warehouse setting (pipeline/defs/resources.py).

One slot for a DuckDB file (one writer process); more for a warehouse that settles
concurrent writers at commit (a DuckLake on PostgreSQL, MotherDuck). Applied to a real
instance the way `make prod` does it (deploy/prod.py, `set_pool_limit`).
"""

import dagster as dg
import pytest

from pipeline.defs.resources import (
    CONCURRENT_WRITERS,
    WAREHOUSE_POOL,
    apply_pool_limit,
    warehouse_path,
    warehouse_pool_limit,
)
from warehouse.location import WarehouseSettingError

LAKE = "ducklake:postgres:dbname=lake host=db user=gpuvalue (DATA_PATH 's3://lake/')"


@pytest.mark.parametrize(
    ("setting", "limit"),
    [
        (None, 1),
        ("warehouse/gpuvalue.duckdb", 1),
        ("ducklake:metadata.ducklake (DATA_PATH 'data/')", 1),
        ("ducklake:sqlite:meta.sqlite (DATA_PATH 'data/')", 1),
        (LAKE, CONCURRENT_WRITERS),
        ("md:gpuvalue", CONCURRENT_WRITERS),
    ],
)
def test_the_pool_has_one_slot_unless_the_warehouse_takes_concurrent_writers(setting, limit):
    env = {} if setting is None else {"GPUVALUE_WAREHOUSE": setting}
    assert warehouse_pool_limit(env=env) == limit
    assert CONCURRENT_WRITERS > 1


def test_the_writers_setting_raises_only_a_concurrent_warehouse():
    assert warehouse_pool_limit(LAKE, {"GPUVALUE_WAREHOUSE_WRITERS": "8"}) == 8
    assert warehouse_pool_limit("w.duckdb", {"GPUVALUE_WAREHOUSE_WRITERS": "8"}) == 1
    with pytest.raises(ValueError, match="GPUVALUE_WAREHOUSE_WRITERS='0'"):
        warehouse_pool_limit(LAKE, {"GPUVALUE_WAREHOUSE_WRITERS": "0"})


def test_the_limit_is_set_in_the_instance_both_ways():
    with dg.DagsterInstance.ephemeral() as instance:
        assert apply_pool_limit(instance, LAKE) == CONCURRENT_WRITERS
        info = instance.event_log_storage.get_concurrency_info(WAREHOUSE_POOL)
        assert info.slot_count == CONCURRENT_WRITERS
        # Back to a DuckDB file: back to one slot, not left at the lake's.
        assert apply_pool_limit(instance, "warehouse/gpuvalue.duckdb") == 1
        assert instance.event_log_storage.get_concurrency_info(WAREHOUSE_POOL).slot_count == 1


def test_a_bad_setting_fails_when_the_definitions_load(monkeypatch):
    monkeypatch.setenv("GPUVALUE_WAREHOUSE", "md:gpuvalue?motherduck_token=abc")
    with pytest.raises(WarehouseSettingError, match="MOTHERDUCK_TOKEN"):
        warehouse_path()
    monkeypatch.setenv("GPUVALUE_WAREHOUSE", LAKE)
    assert warehouse_path() == LAKE
