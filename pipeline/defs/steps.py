"""The run date a step works on, resolved once per Dagster run: `run_step`, `check_step`.

A run's model, report and check steps must all describe one as-of date. The first of them
resolves it (`settings.as_of`, else the newest observation day in the warehouse) and
records it on the run itself, as the run tag `gpuvalue/run_date`; every later step of the
run reads it back from the run's record instead of asking the warehouse again. Steps
invoked outside a recorded run (no run in the instance) resolve it themselves.

    with run_step(context, settings, warehouse) as step:
        dataset = prepare_dataset(step.con, step.run_date)

`model_step` (model/common.py) adds the parameter check and writes on top of the same
date.
"""

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import dagster as dg
import duckdb
from dagster_duckdb import DuckDBResource

from pipeline.defs.resources import GpuvalueSettings, open_warehouse, run_date_for

RUN_DATE_TAG = "gpuvalue/run_date"


def run_date_of(
    context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext,
    settings: GpuvalueSettings,
    con: duckdb.DuckDBPyConnection,
) -> dt.date:
    """The run's as-of date: the one its record holds, else resolved now and recorded."""
    run_id = context.run.run_id
    record = context.instance.get_run_by_id(run_id)
    recorded = record.tags.get(RUN_DATE_TAG) if record is not None else None
    if recorded:
        return dt.date.fromisoformat(recorded)
    run_date = run_date_for(con, settings)
    if record is not None:
        context.instance.add_run_tags(run_id, {RUN_DATE_TAG: run_date.isoformat()})
    return run_date


@dataclass(frozen=True)
class RunStep:
    """One step's open warehouse and the run's date."""

    con: duckdb.DuckDBPyConnection
    run_date: dt.date


@contextmanager
def run_step(
    context: dg.AssetExecutionContext | dg.AssetCheckExecutionContext,
    settings: GpuvalueSettings,
    warehouse: DuckDBResource,
) -> Iterator[RunStep]:
    """The warehouse open for one report asset or check, with the run's date."""
    with open_warehouse(warehouse) as con:
        yield RunStep(con, run_date_of(context, settings, con))


# An asset check of a run-dated table opens its step the same way; the name says which
# kind of step it is where it is used.
check_step = run_step
