"""`python -m warehouse.query "SELECT ..."`: run SQL read-only against the published warehouse.

Never opens the pipeline's own file, so it cannot block (or be blocked by) a nightly run.
"""

import argparse
import sys

import duckdb
import polars as pl

from warehouse.export import open_published
from warehouse.release import default_published_dir


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("sql", help='the query, e.g. "SELECT * FROM gpus LIMIT 5"')
    parser.add_argument(
        "--published",
        default=str(default_published_dir()),
        help="folder of the published snapshot (default: %(default)s)",
    )
    parser.add_argument("--rows", type=int, default=200, help="rows to print at most")
    args = parser.parse_args(argv)
    try:
        con = open_published(args.published)
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        frame = con.sql(args.sql).pl()
    except duckdb.Error as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    finally:
        con.close()
    with pl.Config(tbl_rows=args.rows, tbl_cols=-1, fmt_str_lengths=60, tbl_width_chars=200):
        print(frame)
    return 0


if __name__ == "__main__":
    sys.exit(main())
