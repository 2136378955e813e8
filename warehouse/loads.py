"""What an input asset last loaded, so a night can skip a load whose files did not change.

Loads from bundled or curated files (the price history, the spec catalog) are idempotent
but not free; repeating them every night, or once per cloud run, makes a night's cost
grow with the history. Each records a fingerprint of its inputs in `input_loads`.
"""

import datetime as dt
import hashlib
import importlib.metadata
from pathlib import Path

import duckdb
import polars as pl

from warehouse.db import replace_rows

ROOT = Path(__file__).resolve().parent.parent


def code_files(*parts: str) -> list[Path]:
    """The project's Python files under each part (a folder or a file), for fingerprints.

    A load is redone when the code that makes its rows changes.
    """
    out: list[Path] = []
    for part in parts:
        path = ROOT / part
        out += sorted(path.glob("*.py")) if path.is_dir() else [path]
    return out


def package_version(name: str) -> str:
    """An installed package's version ('absent' when it is not installed)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "absent"


def fingerprint(paths, *extra: str) -> str:
    """sha256 over the files' names and bytes and `extra` strings (e.g. package versions).

    A changed, added or removed file changes it.
    """
    digest = hashlib.sha256()
    for path in sorted((p for p in paths if p.is_file()), key=lambda p: (p.name, str(p))):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    for text in extra:
        digest.update(text.encode() + b"\0")
    return digest.hexdigest()


def loaded_unchanged(con: duckdb.DuckDBPyConnection, asset: str, stamp: str) -> bool:
    """Whether `asset`'s last load (in this warehouse) was of exactly these inputs."""
    last = con.sql(
        "SELECT fingerprint FROM input_loads WHERE asset = ? ORDER BY loaded_at DESC LIMIT 1",
        params=[asset],
    ).fetchall()
    return bool(last) and last[0][0] == stamp


def record_load(
    con: duckdb.DuckDBPyConnection, asset: str, stamp: str, rows: int, detail: str
) -> None:
    """Replace the asset's input_loads row with this load."""
    replace_rows(
        con,
        "input_loads",
        pl.DataFrame(
            {
                "asset": [asset],
                "loaded_at": [dt.datetime.now(dt.UTC).replace(tzinfo=None)],
                "fingerprint": [stamp],
                "rows": [rows],
                "detail": [detail],
            }
        ),
        "asset = ?",
        [asset],
    )
