"""No published figure moved since the golden build (tests/fixtures/published_tables.json).

The golden digests were first taken from the bundled build of main d1f8b34, before the
issue-21 refactor, and regenerated once since, by issue 22 step 1 (benchmark provenance),
after checking that its build changed no existing column: every table but
`benchmark_results`, `llm_benchmarks` and `schema_version` had the old digest, those two
tables' old columns had their old digests (only `stack`, `host`, `batch_regime` were
added), and the only new rows were migrations 13 (verdicts) and 14 (benchmark_provenance)
and the `verdicts` table the refactor made. tests/pipeline/published_tables.py says how to
regenerate the digests after a change that is meant to move figures.

A build now must publish the same tables with the same columns and rows. A later change
that adds a table or a migration without moving a figure lists it below.
"""

import json

from tests.pipeline.published_tables import GOLDEN, digests
from warehouse.export import open_published

# Tables a build may publish beyond the golden's: the buyer's questions of issue 25
# (migration 029), new tables that move no existing figure.
ADDED_TABLES: set[str] = set()
# ... and migrations: schema_version rows a build may have beyond the golden's.
ADDED_MIGRATIONS: dict[int, str] = {}


def test_the_published_tables_are_those_of_the_golden_build(built):
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    con = open_published(built.published)
    try:
        added = ", ".join(str(v) for v in ADDED_MIGRATIONS)
        where = {"schema_version": f"version NOT IN ({added})"} if added else {}
        now = digests(con, where=where)
        migrations = dict(con.sql("SELECT version, name FROM schema_version").fetchall())
    finally:
        con.close()
    assert ADDED_MIGRATIONS.items() <= migrations.items()
    assert set(golden) - set(now) == set(), "tables no longer published"
    assert set(now) - set(golden) <= ADDED_TABLES, "tables added"
    changed = {
        table: {
            k: (golden[table][k], now[table][k])
            for k in golden[table]
            if golden[table][k] != now[table][k]
        }
        for table in golden
        if golden[table] != now[table]
    }
    assert changed == {}, f"published tables differ from the golden build: {changed}"
