"""One prepared dataset for the report, the site and the run summary (issue 13).

`prepare_dataset` reads everything a version shows from the warehouse (read-only SQL),
computes the verdicts by budget and memory (verdict.py) and, when a previous version of the
site exists, what changed since it (changes.py). The Markdown report, the HTML pages, the
charts and `make run`'s summary are all rendered from this one object.
"""

import dataclasses
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import duckdb
import polars as pl

from model.parameters import ModelParameters
from model.uncertainty import performance_replicates
from pipeline.defs.model.decisions import bootstrap, read_latest_offers
from reports.changes import Changes, Snapshot, compare, previous_version, read_snapshot
from reports.charts import WORKLOAD_TITLES
from reports.report import ReportData, load_report_data
from reports.verdict import verdicts


@dataclass(frozen=True)
class Dataset:
    """Everything one version of the site shows, for one run date."""

    data: ReportData
    verdicts: pl.DataFrame
    current_prices: pl.DataFrame
    price_history: pl.DataFrame  # weekly (read_weekly_history)
    offers: pl.DataFrame
    spec_sources: pl.DataFrame
    benchmarks: pl.DataFrame
    sensitivity: pl.DataFrame
    llm_throughput: pl.DataFrame
    llm_cost: pl.DataFrame
    changes: Changes | None
    previous: str | None

    @property
    def run_date(self) -> dt.date:
        """The run's as-of date (the version's name)."""
        return self.data.run_date

    @property
    def version(self) -> str:
        """The version folder's name."""
        return self.data.run_date.isoformat()

    def snapshot(self) -> Snapshot:
        """The tables the next version compares against (kept under `data/`)."""
        return Snapshot(
            self.version,
            {
                "perf_per_dollar": self.data.perf,
                "current_prices": self.current_prices,
                "gpus": self.data.gpus,
                "input_freshness": self.data.freshness,
                "verdicts": self.verdicts,
            },
        )


def read_weekly_history(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """Each catalog GPU's price per market and week (`day` = the week's Monday).

    `price_usd` is the median of the week's robust daily prices, `n_observations` their
    listings, `days` the days with a price. The charts draw weeks or coarser steps, so the
    week is aggregated where the data is: the site reads O(GPUs x weeks), not every daily
    row of the history. GPUs no longer in the catalog have no page, so no chart either.
    """
    return con.sql(
        "SELECT gpu_id, market, CAST(date_trunc('week', day) AS DATE) AS day, "
        "median(price_usd) AS price_usd, CAST(sum(n_observations) AS BIGINT) AS "
        "n_observations, count(*) AS days FROM gpu_prices_daily "
        "WHERE day <= ? AND gpu_id IN (SELECT gpu_id FROM gpus) "
        "GROUP BY ALL ORDER BY gpu_id, market, day",
        params=[run_date],
    ).pl()


def parameters_from_stored(stored: dict) -> ModelParameters:
    """The ModelParameters of a `model_runs.parameters` JSON (keys and tuples restored)."""
    base = ModelParameters()
    values = {}
    for f in dataclasses.fields(ModelParameters):
        if f.name not in stored:
            continue
        value, default = stored[f.name], getattr(base, f.name)
        if isinstance(default, dict) and default:
            key_type = type(next(iter(default)))
            value = {key_type(k): tuple(v) if isinstance(v, list) else v for k, v in value.items()}
        elif isinstance(default, tuple):
            value = tuple(value)
        values[f.name] = value
    return ModelParameters(**values)


def prepare_dataset(
    con: duckdb.DuckDBPyConnection,
    run_date: dt.date,
    site_dir: Path | None = None,
    today: dt.date | None = None,
) -> Dataset:
    """Read and prepare one version's dataset (see the module docstring).

    `site_dir`, when given, is searched for the previous published version to compare
    with; it is only read.
    """
    data = load_report_data(con, run_date, today)
    params = parameters_from_stored(data.parameters)
    offers = read_latest_offers(con, run_date)
    found = verdicts(
        data.perf,
        data.cloud_perf,
        data.recommendations,
        offers,
        bootstrap(con, run_date, params),
        performance_replicates(data.relative, params),
        data.parameters,
        run_date,
        list(WORKLOAD_TITLES),
    )

    def for_run(table: str, order: str) -> pl.DataFrame:
        return con.sql(
            f"SELECT * FROM {table} WHERE run_date = ? ORDER BY {order}", params=[run_date]
        ).pl()

    dataset = Dataset(
        data=data,
        verdicts=found,
        current_prices=for_run("current_prices", "gpu_id, market"),
        price_history=read_weekly_history(con, run_date),
        offers=offers.sort("gpu_id", "usd_per_gpu_hour", "provider"),
        spec_sources=con.sql(
            "SELECT * FROM gpu_spec_sources ORDER BY gpu_id, field, chosen DESC, source"
        ).pl(),
        benchmarks=for_run(
            "benchmark_debiased", "gpu_id, workload, source, model, precision, num_gpus"
        ),
        sensitivity=for_run("sensitivity", "parameter, value, workload, gpu_id"),
        llm_throughput=for_run(
            "llm_throughput", "gpu_id, model_params_b, bits, num_gpus, context_tokens"
        ),
        llm_cost=for_run("llm_cost", "model_params_b, bits, basis, usd_per_million_tokens"),
        changes=None,
        previous=None,
    )
    before = previous_version(site_dir, dataset.version)
    if before is None:
        return dataset
    return dataclasses.replace(
        dataset,
        changes=compare(read_snapshot(before), dataset.snapshot()),
        previous=before.name,
    )
