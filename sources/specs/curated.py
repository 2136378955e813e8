"""The curated spec sheet as per-field candidates, with per-field citations.

Every figure of a `gpu_specs.csv` row is cited by that row's `source`/`source_url` unless
`gpu_spec_citations.csv` names another document for that field (`cited`), or records why
the field is deliberately empty (`not_published`; the merge then fills it from nowhere).
"""

import datetime as dt
from pathlib import Path

import polars as pl

from sources.specs.fields import CURATED, FIELD_NAMES, candidate, candidates_frame
from sources.tables import BadInputError, Column, https_url, read_table

CITED = "cited"
NOT_PUBLISHED = "not_published"


def read_spec_citations(path: str | Path, sheet: pl.DataFrame) -> pl.DataFrame:
    """Per-field citations, checked against the sheet.

    A `cited` row needs an https URL and a figure; a `not_published` row needs an empty
    field (a figure and a "not published" note would contradict each other).
    """
    columns = [
        Column("gpu_id", choices=frozenset(sheet["gpu_id"].to_list())),
        Column("field", choices=frozenset(FIELD_NAMES)),
        Column("status", choices=frozenset({CITED, NOT_PUBLISHED})),
        Column("citation"),
        Column("source_url", required=False, check=https_url),
    ]
    rows = read_table(path, columns, unique=("gpu_id", "field"), line_column="_line")
    values = {row["gpu_id"]: row for row in sheet.iter_rows(named=True)}
    for row in rows.iter_rows(named=True):
        value = values[row["gpu_id"]][row["field"]]
        if row["status"] == CITED and (row["source_url"] is None or value is None):
            raise BadInputError(
                path,
                row["_line"],
                "source_url",
                f"{row['gpu_id']} {row['field']}: a cited field needs a URL and a value",
            )
        if row["status"] == NOT_PUBLISHED and value is not None:
            raise BadInputError(
                path,
                row["_line"],
                "status",
                f"{row['gpu_id']} {row['field']} is marked not_published but the sheet has {value}",
            )
    return rows.drop("_line")


def curated_candidates(
    sheet: pl.DataFrame, citations: pl.DataFrame, as_of: dt.date
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(candidates, not_published): one candidate per non-empty field of every row.

    `not_published` has gpu_id, field and citation (the reason) of the fields the sheet
    leaves empty on purpose.
    """
    cited = {
        (r["gpu_id"], r["field"]): r
        for r in citations.filter(pl.col("status") == CITED).iter_rows(named=True)
    }
    rows = []
    for spec in sheet.iter_rows(named=True):
        for field in FIELD_NAMES:
            value = spec[field]
            if value is None:
                continue
            override = cited.get((spec["gpu_id"], field))
            rows.append(
                candidate(
                    spec["gpu_id"],
                    field,
                    value,
                    CURATED,
                    spec["name"],
                    override["citation"] if override else spec["source"],
                    override["source_url"] if override else spec["source_url"],
                    as_of,
                )
            )
    withheld = citations.filter(pl.col("status") == NOT_PUBLISHED).select(
        "gpu_id", "field", "citation"
    )
    return candidates_frame(rows), withheld
