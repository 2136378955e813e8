"""Digests of the published tables, to show a refactor changed no published figure.

`digests(con)` gives, per published table or view, its row count, its columns and a
sha256 of its rows (sorted, floats to 10 significant digits, wall-clock stamps left out).
`tests/fixtures/published_tables.json` holds the digests of the bundled build made before
the issue-21 refactor (main d1f8b34); test_published_unchanged.py compares a build with it.

A change that is meant to move published figures (new data, a model change) regenerates it,
after checking the change, with:

    uv run python -m tests.pipeline.published_tables --update [PUBLISHED.duckdb]
"""

import argparse
import hashlib
import json
from pathlib import Path

import duckdb
import polars as pl

from tests.paths import FIXTURES_ROOT

GOLDEN = FIXTURES_ROOT / "published_tables.json"
# Stamps of when a row was written, not what it says: they differ between any two builds.
# `input_loads.fingerprint` is a cache key over the input files *and the code*, so any code
# change moves it without moving a figure.
VOLATILE = frozenset(
    {"created_at", "loaded_at", "attempted_at", "last_ok_at", "applied_at", "fingerprint"}
)
SIGNIFICANT_DIGITS = 10  # last-bit differences of a float sum are not a changed figure


def table_digest(frame: pl.DataFrame) -> str:
    """sha256 of a frame's rows in sorted order, floats rounded, as CSV."""
    frame = frame.with_columns(
        pl.col(name).round_sig_figs(SIGNIFICANT_DIGITS)
        for name, dtype in frame.schema.items()
        if dtype.is_float()
    )
    nested = [name for name, dtype in frame.schema.items() if dtype.is_nested()]
    frame = frame.with_columns(pl.col(name).cast(pl.String) for name in nested)
    text = frame.sort(frame.columns, nulls_last=True).write_csv()
    return hashlib.sha256(text.encode()).hexdigest()


def digests(con: duckdb.DuckDBPyConnection, where: dict[str, str] | None = None) -> dict[str, dict]:
    """{table: {rows, columns, sha256}} for every table and view of a published snapshot.

    `where` narrows a table to the rows to compare (e.g. schema_version without a migration
    added since the golden build).
    """
    out = {}
    names = con.sql("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall()
    for (table,) in names:
        condition = (where or {}).get(table, "true")
        frame = con.sql(f'SELECT * FROM "{table}" WHERE {condition}').pl()
        frame = frame.select(c for c in frame.columns if c not in VOLATILE)
        out[table] = {
            "rows": frame.height,
            "columns": frame.columns,
            "sha256": table_digest(frame),
        }
    return out


def main() -> None:
    """Write the golden digests from a published snapshot (default: make run's)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("published", nargs="?", default="warehouse/published/gpuvalue.duckdb")
    parser.add_argument("--update", action="store_true", help=f"write {GOLDEN}")
    args = parser.parse_args()
    con = duckdb.connect(str(Path(args.published)), read_only=True)
    try:
        found = digests(con)
    finally:
        con.close()
    text = json.dumps(found, indent=1, sort_keys=True) + "\n"
    if args.update:
        GOLDEN.write_text(text, encoding="utf-8")
    print(text if not args.update else f"wrote {GOLDEN} ({len(found)} tables)")


if __name__ == "__main__":
    main()
