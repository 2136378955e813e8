"""Source status bookkeeping: each source's last attempt and when it last succeeded.

Ingest records every fetch or load attempt here (`source_status`, one row per source x
kind); the report reads it to mark an input failed or stale.
"""

import duckdb

from warehouse.db import write_transaction


def record_status(
    con: duckdb.DuckDBPyConnection,
    source: str,
    status: str,
    rows: int | None,
    detail: str,
    kind: str = "cloud",
) -> None:
    """Replace the source's status row: this attempt, and when it last succeeded.

    In one write transaction (warehouse.db), so on a DuckLake two providers' runs recording
    at once are serialized, and the one that commits second is retried, not failed.
    """

    def record() -> None:
        previous = con.sql(
            "SELECT last_ok_at FROM source_status WHERE source = ? AND kind = ?",
            params=[source, kind],
        ).fetchall()
        con.sql("DELETE FROM source_status WHERE source = ? AND kind = ?", params=[source, kind])
        con.sql(
            "INSERT INTO source_status VALUES (?, ?, current_timestamp::TIMESTAMP, ?, ?, ?, "
            "CASE WHEN ? = 'ok' THEN current_timestamp::TIMESTAMP ELSE ? END)",
            params=[
                source,
                kind,
                status,
                rows,
                detail,
                status,
                previous[0][0] if previous else None,
            ],
        )

    write_transaction(con, record)
