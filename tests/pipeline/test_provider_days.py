"""The rows of a provider's loaded days (PROVIDER_DAYS): a night with no offer left (every
one dropped, as when each instance type echoed a credential) deletes nothing and does not
fail the load."""

import datetime as dt

from pipeline.defs.ingest.integrity import PROVIDER_DAYS, provider_days
from warehouse.db import connect


def test_no_days_match_no_row_and_days_match_their_range(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    con.sql(
        "INSERT INTO cloud_quarantine BY NAME SELECT 'lambda' AS provider, "
        "TIMESTAMP '2026-10-07 03:00:00' AS observed_at, 'h100-sxm5-80gb' AS gpu_id, "
        "'on_demand' AS price_type, 1 AS gpu_count, 0.0001 AS usd_per_hour, "
        "0.0001 AS usd_per_gpu_hour, 'gpu_band' AS rule, 'test' AS reason"
    )
    assert provider_days("lambda", []) == ["lambda", [], None, None]

    def count(days) -> int:
        sql = f"SELECT count(*) FROM cloud_quarantine WHERE {PROVIDER_DAYS}"
        return con.sql(sql, params=provider_days("lambda", days)).fetchall()[0][0]

    assert count([]) == 0
    assert count([dt.date(2026, 10, 7)]) == 1
    assert count([dt.date(2026, 10, 6), dt.date(2026, 10, 8)]) == 0
    con.close()
