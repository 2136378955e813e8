"""`datapackage.json`: a Frictionless Data Package listing every download of a version.

Data Package / Tabular Data Resource / Table Schema (specs.frictionlessdata.io): the
package's name, title, licences, sources and contributors; one resource per file (the CSV
and the Parquet of each table) with its path, format, mediatype, encoding, bytes, sha256
hash and a Table Schema whose field names are the file's columns and whose types map the
DuckDB column types (what `DESCRIBE` says of the written Parquet). An empty download says
why in its description and in `empty_reason`.
"""

import hashlib
import json
from pathlib import Path

import duckdb

from reports.content.licences import (
    CODE_LICENCE,
    CODE_LICENCE_URL,
    DATA_SOURCES,
    OWN_TABLES,
    sources_for,
)
from reports.dataset import Dataset
from reports.downloads import Download

PACKAGE_FILE = "datapackage.json"
PARQUET_MEDIATYPE = "application/vnd.apache.parquet"

# DuckDB type (its first word) -> Table Schema type. Nested types are written to CSV as text.
_TYPES = {
    "VARCHAR": "string",
    "BOOLEAN": "boolean",
    "TINYINT": "integer",
    "SMALLINT": "integer",
    "INTEGER": "integer",
    "BIGINT": "integer",
    "HUGEINT": "integer",
    "UTINYINT": "integer",
    "USMALLINT": "integer",
    "UINTEGER": "integer",
    "UBIGINT": "integer",
    "FLOAT": "number",
    "DOUBLE": "number",
    "DECIMAL": "number",
    "DATE": "date",
    "TIME": "time",
    "TIMESTAMP": "datetime",
    "TIMESTAMP_NS": "datetime",
    "TIMESTAMP_MS": "datetime",
    "TIMESTAMP_S": "datetime",
    "TIMESTAMP WITH TIME ZONE": "datetime",
    "JSON": "object",
}


def table_schema_type(duckdb_type: str, nested_as: str) -> str:
    """The Table Schema type of a DuckDB column type (`nested_as` for lists and structs)."""
    text = duckdb_type.upper()
    if text.endswith("[]") or text.startswith(("STRUCT", "MAP", "UNION")):
        return nested_as
    base = text.split("(")[0].strip()
    if base not in _TYPES:
        raise ValueError(f"no Table Schema type for the DuckDB type {duckdb_type!r}")
    return _TYPES[base]


def columns(con: duckdb.DuckDBPyConnection, parquet: Path) -> list[tuple[str, str]]:
    """(name, DuckDB type) of each column of a Parquet file, in order."""
    described = con.sql("DESCRIBE SELECT * FROM read_parquet(?)", params=[str(parquet)])
    return [(r[0], r[1]) for r in described.fetchall()]


def _file_facts(path: Path) -> dict[str, object]:
    data = path.read_bytes()
    return {"bytes": len(data), "hash": f"sha256:{hashlib.sha256(data).hexdigest()}"}


def _fields(cols: list[tuple[str, str]], nested_as: str) -> list[dict[str, str]]:
    return [
        {"name": name, "type": table_schema_type(kind, nested_as), "duckdb_type": kind}
        for name, kind in cols
    ]


def _description(d: Download) -> str:
    text = f"{d.rows:,} rows: {d.scope}."
    if d.reason:
        text += f" Empty: {d.reason}."
    origins = sources_for(d.name)
    if origins:
        text += " Input figures from: " + "; ".join(f"{s.name} ({s.licence})" for s in origins)
    return text


def resources(
    con: duckdb.DuckDBPyConnection, d: Download, data_dir: Path
) -> list[dict[str, object]]:
    """The CSV and Parquet resources of one download (`con`: any DuckDB connection)."""
    cols = columns(con, data_dir / d.parquet)
    common = {
        "profile": "tabular-data-resource",
        "description": _description(d),
        "rows": d.rows,
        "scope": d.scope,
    }
    if d.reason:
        common["empty_reason"] = d.reason
    csv = {
        "name": d.name,
        "path": f"data/{d.csv}",
        "format": "csv",
        "mediatype": "text/csv",
        "encoding": "utf-8",
        **({"compression": "gz"} if d.csv.endswith(".gz") else {}),
        **_file_facts(data_dir / d.csv),
        **common,
        "dialect": {"delimiter": ",", "header": True},
        "schema": {"fields": _fields(cols, "string")},
    }
    parquet = {
        "name": f"{d.name}-parquet",
        "path": f"data/{d.parquet}",
        "format": "parquet",
        "mediatype": PARQUET_MEDIATYPE,
        **_file_facts(data_dir / d.parquet),
        **common,
        "schema": {"fields": _fields(cols, "array")},
    }
    return [csv, parquet]


def data_package(ds: Dataset, downloads: list[Download], data_dir: Path) -> dict[str, object]:
    """The package descriptor of a version's downloads."""
    con = duckdb.connect()  # in memory: it only describes the written files
    try:
        listed = [r for d in downloads for r in resources(con, d, data_dir)]
    finally:
        con.close()
    return {
        "profile": "tabular-data-package",
        "name": f"gpuvalue-{ds.version}",
        "title": f"gpuvalue {ds.version}: GPU deep-learning performance per dollar",
        "description": (
            "Every table of this version of the gpuvalue site as CSV and Parquet: the model's "
            f"tables for the run of {ds.run_date} and the inputs it read. Column meanings: "
            "docs/schema.md in the repository; what each file holds: its description."
        ),
        "created": f"{ds.run_date.isoformat()}T00:00:00Z",
        "keywords": ["GPU", "deep learning", "performance per dollar", "prices", "benchmarks"],
        "contributors": [{"title": "gpuvalue contributors", "role": "author"}],
        "licenses": [{"name": CODE_LICENCE, "path": CODE_LICENCE_URL, "title": OWN_TABLES}],
        "sources": [
            {"title": s.name, "description": f"{s.origin}; licence: {s.licence}"}
            for s in DATA_SOURCES
        ],
        "resources": listed,
    }


def write_data_package(ds: Dataset, downloads: list[Download], out: Path, data_dir: Path) -> int:
    """Write `out/datapackage.json` (`data_dir`: the files, `data/` beside it once published).

    Returns the number of resources.
    """
    package = data_package(ds, downloads, data_dir)
    text = json.dumps(package, indent=1, ensure_ascii=False) + "\n"
    (out / PACKAGE_FILE).write_text(text, encoding="utf-8")
    return len(package["resources"])
