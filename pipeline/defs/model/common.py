"""What every model asset does around its computation: `model_step`.

A model asset opens the warehouse, takes the run's date (`steps.run_date_of`: resolved once
a run), checks that its parameters are the ones model_runs stores for that date, reads its
inputs, replaces its rows for the run date and reports what it wrote. `model_step` does all
of that except the reading and the computing, so an asset holds only what is its own:

    with model_step(context, settings, warehouse) as step:
        rows = compute(step.read("relative_performance"), step.read_all("gpus"), step.params)
        step.write("my_table", rows)
    return step.result(extra_metadata=...)
"""

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import dagster as dg
import duckdb
import polars as pl
from dagster_duckdb import DuckDBResource

from model.parameters import ModelParameters
from pipeline.defs.metadata import ROW_COUNT, table_rows
from pipeline.defs.resources import GpuvalueSettings, open_warehouse
from pipeline.defs.steps import run_date_of
from warehouse.db import replace_rows
from warehouse.reads import read_all, read_for_run


def require_run_parameters(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, params: ModelParameters
) -> None:
    """Fail unless `params` are the parameters model_runs stores for the run date.

    benchmark_debiased writes model_runs; every other model asset reads tables computed
    with those parameters. Rerunning one of them alone with other parameters (run config or
    GPUVALUE_*) would store results model_runs does not describe, mixed with tables made
    under the stored ones, so it fails instead: rerun from benchmark_debiased (e.g. the
    whole model group) to change parameters.
    """
    stored = con.sql(
        "SELECT parameters FROM model_runs WHERE run_date = ?", params=[run_date]
    ).fetchall()
    if not stored:
        raise dg.Failure(
            f"model_runs has no row for {run_date}: materialize benchmark_debiased first "
            "(it stores the run's parameters)"
        )
    stored_params = json.loads(stored[0][0])
    current = json.loads(params.to_json())
    if stored_params != current:
        changed = sorted(
            k for k in stored_params.keys() | current.keys()
            if stored_params.get(k) != current.get(k)
        )  # fmt: skip
        raise dg.Failure(
            f"this run's model parameters differ from model_runs for {run_date} in "
            f"{', '.join(changed)}: the tables this asset reads were computed with the stored "
            "parameters. Rerun from benchmark_debiased (the whole model group) with the new "
            "parameters, or run with the stored ones.",
            metadata={"changed": ", ".join(changed)},
        )


@dataclass
class ModelStep:
    """One model asset's materialization: its connection, run date, parameters and writes."""

    context: dg.AssetExecutionContext
    con: duckdb.DuckDBPyConnection
    run_date: dt.date
    params: ModelParameters
    # table -> (rows this step wrote, rows in the table after the write)
    written: dict[str, tuple[int, int]] = field(default_factory=dict)

    def read(self, table: str) -> pl.DataFrame:
        """A model table's rows for this run date."""
        return read_for_run(self.con, table, self.run_date)

    def read_all(self, table: str) -> pl.DataFrame:
        """A whole input table, sorted."""
        return read_all(self.con, table)

    def write(
        self,
        table: str,
        rows: pl.DataFrame,
        where: str = "run_date = ?",
        params: list | None = None,
    ) -> None:
        """Replace the table's rows for the run date (or those matching `where`) by `rows`."""
        replace_rows(self.con, table, rows, where, [self.run_date] if params is None else params)
        # Counted while the connection is open; result() is built after it closes.
        self.written[table] = (rows.height, table_rows(self.con, table))

    def result(
        self,
        log: str | None = None,
        table: str | None = None,
        asset: str | None = None,
        **metadata,
    ) -> dg.MaterializeResult:
        """Log one line and return the materialization with its metadata.

        `rows` and `dagster/row_count` describe `table`: by default the table named like
        the asset, else the first one written. `log` replaces the line's default
        "<rows> rows". `asset` names which asset of a multi-asset this result is for.
        """
        name = asset or self.context.asset_key.to_user_string()
        table = table or (name if name in self.written else next(iter(self.written)))
        rows, total = self.written[table]
        self.context.log.info(f"{name} {self.run_date}: {log or f'{rows} rows'}")
        return dg.MaterializeResult(
            asset_key=asset,
            metadata={"run_date": str(self.run_date), "rows": rows, ROW_COUNT: total, **metadata},
        )


@contextmanager
def model_step(
    context: dg.AssetExecutionContext,
    settings: GpuvalueSettings,
    warehouse: DuckDBResource,
    check_parameters: bool = True,
) -> Iterator[ModelStep]:
    """The warehouse open for one model asset, its run date resolved and parameters checked.

    `check_parameters=False` is for benchmark_debiased only: it is the asset that stores
    the run's parameters in model_runs.
    """
    params = settings.parameters()
    with open_warehouse(warehouse) as con:
        run_date = run_date_of(context, settings, con)
        if check_parameters:
            require_run_parameters(con, run_date, params)
        yield ModelStep(context, con, run_date, params)
