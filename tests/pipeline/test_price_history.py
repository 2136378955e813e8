"""The curated price history backfill: one load, idempotent, skipped when unchanged,
refreshing the daily prices of the days it touches, and losing nothing on bad input."""

import dagster as dg
import duckdb
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.definitions import defs as load_defs
from pipeline.defs.resources import GpuvalueSettings

SELECTION = dg.AssetSelection.assets("gpus", "price_history")


def load(root, data_dir) -> dg.ExecuteInProcessResult:
    defs = load_defs()
    return dg.materialize(
        [*defs.assets],
        selection=SELECTION,
        resources={
            "settings": GpuvalueSettings(data_dir=str(data_dir), build_dir=str(root / ".build")),
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        raise_on_error=False,
    )


def counts(root) -> tuple[int, int, float]:
    con = duckdb.connect(str(root / "gpuvalue.duckdb"), read_only=True)
    try:
        return con.sql(
            "SELECT (SELECT count(*) FROM price_observations),"
            " (SELECT count(*) FROM gpu_prices_daily),"
            " (SELECT price_usd FROM gpu_prices_daily WHERE gpu_id = 'rtx-4090'"
            "  AND market = 'new' AND day = DATE '2025-08-21')"
        ).fetchall()[0]
    finally:
        con.close()


def status(result: dg.ExecuteInProcessResult, node: str = "price_history") -> str:
    event = result.asset_materializations_for_node(node)[0]
    return event.metadata["status"].value


@pytest.mark.filterwarnings("ignore::dagster.BetaWarning")
def test_history_loads_once_then_skips_and_refreshes_the_days_it_changes(tmp_path, data_copy):
    first = load(tmp_path, data_copy)
    assert first.success and status(first) == "loaded"
    observations, daily, price = counts(tmp_path)
    assert observations >= 10_000 and daily > 1_000

    again = load(tmp_path, data_copy)
    assert again.success and status(again) == "unchanged"
    # The catalog too: a night's 9 cloud runs do not rebuild it 9 times.
    assert status(again, "gpus") == "unchanged"
    assert counts(tmp_path) == (observations, daily, price)

    # Drop the RTX 4090's Keepa points of 2025-08-21: its daily price that day is recomputed
    # from what is left (none: the day's row goes), nothing else changes.
    keepa = data_copy / "prices" / "history" / "keepa-amazon.csv"
    lines = keepa.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [ln for ln in lines if not (ln.startswith("2025-08-21") and ",rtx-4090," in ln)]
    assert len(kept) < len(lines)
    keepa.write_text("".join(kept), encoding="utf-8")
    changed = load(tmp_path, data_copy)
    assert changed.success and status(changed) == "loaded"
    after = counts(tmp_path)
    assert after[0] == observations - (len(lines) - len(kept))
    assert after[2] is None

    # A bad row fails the load with file, line and reason, and keeps the loaded history.
    keepa.write_text("".join(kept[:2]) + kept[2].replace(",USD,", ",usd,") + "".join(kept[3:]))
    broken = load(tmp_path, data_copy)
    assert not broken.success
    failure = next(e for e in broken.all_events if e.event_type_value == "STEP_FAILURE")
    assert f"{keepa}, line 3, field 'currency'" in failure.event_specific_data.error.to_string()
    assert counts(tmp_path) == after
