"""The Dagster entry point: everything under pipeline/defs/ (`dg check defs`, `dg dev`)."""

from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    """All assets, checks, resources and schedules of gpuvalue."""
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
