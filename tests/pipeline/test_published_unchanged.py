"""The issue-21 refactor (floors, reads, verdicts table, split modules) moved no published figure.

The golden digests were taken from the bundled build of main d1f8b34, before the refactor
(tests/pipeline/published_tables.py says how, and how to regenerate them after a change
that is meant to move figures). A build now must publish the same tables with the same
columns and rows; the only table it may add is `verdicts`, which the refactor made a table.
"""

import json

import duckdb

from tests.pipeline.published_tables import GOLDEN, digests

ADDED_BY_THE_REFACTOR = {"verdicts"}
# ... and its migration, the one schema_version row the build may have beyond the golden's.
ADDED_MIGRATIONS = {13: "verdicts"}


def test_the_published_tables_are_those_of_the_build_before_the_refactor(built):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    con = duckdb.connect(str(built.published / "gpuvalue.duckdb"), read_only=True)
    try:
        added = ", ".join(str(v) for v in ADDED_MIGRATIONS)
        now = digests(con, where={"schema_version": f"version NOT IN ({added})"})
        migrations = dict(con.sql("SELECT version, name FROM schema_version").fetchall())
    finally:
        con.close()
    assert ADDED_MIGRATIONS.items() <= migrations.items()
    assert set(golden) - set(now) == set(), "tables no longer published"
    assert set(now) - set(golden) <= ADDED_BY_THE_REFACTOR, "tables added"
    changed = {
        table: {
            k: (golden[table][k], now[table][k])
            for k in golden[table]
            if golden[table][k] != now[table][k]
        }
        for table in golden
        if golden[table] != now[table]
    }
    assert changed == {}, f"published tables differ from the build before the refactor: {changed}"
