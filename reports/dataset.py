"""One prepared dataset for the report, the site and the run summary (issue 13).

`prepare_dataset` reads everything a version shows from the warehouse (read-only SQL; the
verdicts by budget and memory are the model's `verdicts` table) and, when a previous version
of the site exists, computes what changed since it (changes.py). The Markdown report, the
HTML pages, the charts and `make run`'s summary are all rendered from this one object.
"""

import dataclasses
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from model.verdicts import in_order
from reports.changes import Changes, Snapshot, compare, previous_version, read_snapshot
from reports.report import ReportData, load_report_data
from reports.serving_schema import read_serving_table
from reports.site import version_for
from warehouse.reads import read_for_run, read_latest_offers, read_weekly_history
from warehouse.versions import parse_version


@dataclass(frozen=True)
class Dataset:
    """Everything one version of the site shows, for one run date."""

    data: ReportData
    verdicts: pl.DataFrame
    current_prices: pl.DataFrame
    price_consistency: pl.DataFrame  # prices market consistency left out, with the reason
    price_history: pl.DataFrame  # weekly (read_weekly_history)
    offers: pl.DataFrame
    spec_sources: pl.DataFrame
    benchmarks: pl.DataFrame
    sensitivity: pl.DataFrame
    llm_throughput: pl.DataFrame
    llm_cost: pl.DataFrame
    # LLM serving (issue 24): throughput curves, cost per token, API list prices (comparison
    # only) and the published serving measurements (for attribution); serving_schema.py.
    llm_serving: pl.DataFrame
    llm_serving_cost: pl.DataFrame
    llm_api_prices: pl.DataFrame
    llm_serving_benchmarks: pl.DataFrame
    software_support: pl.DataFrame
    changes: Changes | None
    previous: str | None
    # The buyer's questions (issue 25, migration 029): a card for a PC one owns, and rent
    # or buy per utilisation (model/upgrade.py, model/rent_or_buy.py).
    upgrade: pl.DataFrame = field(default_factory=pl.DataFrame)
    rent_or_buy: pl.DataFrame = field(default_factory=pl.DataFrame)
    rent_or_buy_gpus: pl.DataFrame = field(default_factory=pl.DataFrame)
    # Cloud offers integrity kept out (issue 26, migration 030): each provider's newest
    # loaded night on or before the run date (read_quarantine).
    quarantine: pl.DataFrame = field(default_factory=pl.DataFrame)
    site_dir: Path | None = None  # the published site compared with (feeds read its versions)
    # The version's name when it is not the bare run date: `<date>.N` for a rerun of a date
    # already published (reports/site.py version_for).
    name: str | None = None

    @property
    def run_date(self) -> dt.date:
        """The run's as-of date (the version is named after it)."""
        return self.data.run_date

    @property
    def version(self) -> str:
        """The version folder's name: the run date, or `<date>.N` for a rerun of it."""
        return self.name or self.data.run_date.isoformat()

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


def with_benchmark_units(con: duckdb.DuckDBPyConnection, rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` (benchmark_debiased) with each figure's unit, as its source published it.

    A benchmark's unit is one per source, task and model (`images/s`, `tokens/s`,
    `trainings/h`, ...: benchmark_results.unit); the debiased table keeps the figure in it.
    """
    units = con.sql(
        "SELECT source, task, model, string_agg(DISTINCT unit, ' or ' ORDER BY unit) AS unit "
        "FROM benchmark_results GROUP BY ALL"
    ).pl()
    if rows.is_empty() or units.is_empty():
        return rows.with_columns(unit=pl.lit(None, dtype=pl.Utf8))
    return rows.join(units, on=["source", "task", "model"], how="left")


def read_quarantine(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> pl.DataFrame:
    """`cloud_quarantine` rows of each provider's newest loaded night on or before the run date.

    A provider's night is its newest day in `cloud_offers` or `cloud_quarantine` (a night
    whose every offer was quarantined is still its newest).
    """
    return con.sql(
        "WITH nights AS (SELECT provider, max(CAST(observed_at AS DATE)) AS day FROM"
        " (SELECT provider, observed_at FROM cloud_offers UNION ALL"
        " SELECT provider, observed_at FROM cloud_quarantine)"
        # The raw timestamp bounded, not a cast of it: every offer ever kept is read.
        " WHERE observed_at < CAST(? AS DATE) + INTERVAL 1 DAY GROUP BY provider)"
        " SELECT q.* FROM cloud_quarantine q JOIN nights n ON q.provider = n.provider"
        " AND CAST(q.observed_at AS DATE) = n.day"
        " ORDER BY q.provider, q.gpu_id, q.price_type, q.usd_per_gpu_hour, q.instance_type",
        params=[run_date],
    ).pl()


def prepare_dataset(
    con: duckdb.DuckDBPyConnection,
    run_date: dt.date,
    site_dir: Path | None = None,
    version: str | None = None,
    input_counts: bool = True,
) -> Dataset:
    """Read and prepare one version's dataset (see the module docstring).

    `site_dir`, when given, is searched for the previous published version to compare
    with; it is only read. `version` names the version (default: the next free version of
    the run date on that site, reports/site.py version_for; the run date without a site).
    `input_counts=False` skips the inputs' counts (see report.load_report_data).
    """
    if version is not None and parse_version(version)[0] != run_date:
        raise ValueError(f"version {version!r} is not a version of the run date {run_date}")
    data = load_report_data(con, run_date, input_counts)
    offers = read_latest_offers(con, run_date)

    def for_run(table: str, order: str) -> pl.DataFrame:
        return con.sql(
            f"SELECT * FROM {table} WHERE run_date = ? ORDER BY {order}", params=[run_date]
        ).pl()

    dataset = Dataset(
        data=data,
        verdicts=in_order(read_for_run(con, "verdicts", run_date)),
        current_prices=for_run("current_prices", "gpu_id, market"),
        price_consistency=for_run("price_consistency", "gpu_id, market"),
        price_history=read_weekly_history(con, run_date),
        offers=offers.sort("gpu_id", "usd_per_gpu_hour", "provider"),
        spec_sources=con.sql(
            "SELECT * FROM gpu_spec_sources ORDER BY gpu_id, field, chosen DESC, source"
        ).pl(),
        benchmarks=with_benchmark_units(
            con,
            for_run("benchmark_debiased", "gpu_id, workload, source, model, precision, num_gpus"),
        ),
        sensitivity=for_run("sensitivity", "parameter, value, workload, gpu_id"),
        llm_throughput=for_run(
            "llm_throughput", "gpu_id, model_params_b, bits, num_gpus, context_tokens"
        ),
        llm_cost=for_run("llm_cost", "model_params_b, bits, basis, usd_per_million_tokens"),
        llm_serving=read_serving_table(con, "llm_serving", run_date),
        llm_serving_cost=read_serving_table(con, "llm_serving_cost", run_date),
        llm_api_prices=read_serving_table(con, "llm_api_prices", run_date),
        llm_serving_benchmarks=read_serving_table(con, "llm_serving_benchmarks", run_date),
        software_support=for_run("gpu_software_support", "gpu_id, stack"),
        changes=None,
        previous=None,
        upgrade=read_for_run(con, "upgrade_picks", run_date),
        rent_or_buy=read_for_run(con, "rent_or_buy", run_date),
        rent_or_buy_gpus=read_for_run(con, "rent_or_buy_gpus", run_date),
        quarantine=read_quarantine(con, run_date),
        site_dir=None if site_dir is None else Path(site_dir),
        name=version or version_for(site_dir, run_date),
    )
    before = previous_version(site_dir, dataset.version)
    if before is None:
        return dataset
    return dataclasses.replace(
        dataset,
        changes=compare(read_snapshot(before), dataset.snapshot()),
        previous=before.name,
    )
