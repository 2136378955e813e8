"""`python -m pipeline.run`: materialize the whole graph in-process, then print a summary.

Used by `make run`. The bundled snapshot's observation days are loaded as one partition
range in a single Dagster run (the daily assets have a single-run backfill policy), then the
model, report, site and published warehouse follow in the same run.
"""

import argparse
import datetime as dt
import os
import sys
from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.ties import tie_label
from model.verdicts import OPTIONS
from pipeline.definitions import defs as load_defs
from pipeline.defs.partitions import CLOUD_PROVIDERS
from pipeline.defs.resources import GpuvalueSettings
from pipeline.defs.schedules import CLOUD, CLOUD_RUN
from reports.dataset import prepare_dataset
from reports.report import HEADLINE_WAYS, headline
from reports.site import newest_version_of
from sources.bundled import read_retail_observations
from sources.bundled_check import bundled_problem
from warehouse.export import open_published

RANGE_START = "dagster/asset_partition_range_start"
RANGE_END = "dagster/asset_partition_range_end"


def snapshot_days(settings: GpuvalueSettings) -> tuple[str, str]:
    """First and last observation day in the bundled retail snapshot."""
    rows = read_retail_observations(settings.data_path("prices", "retail_observations.csv"), None)
    days = rows["observed_at"].dt.date()
    return days.min().isoformat(), days.max().isoformat()


def first_failure(result: dg.ExecuteInProcessResult) -> str:
    """The first failed step and the last line of its error, for a one-line message."""
    for event in result.all_events:
        if event.event_type_value == "STEP_FAILURE":
            error = event.event_specific_data.error
            cause = error.cause or error
            while cause.cause is not None:
                cause = cause.cause
            return f"{event.step_key}: {cause.message.strip().splitlines()[-1][:200]}"
    return "no step failed"


def cloud_failure(provider: str, failure: str) -> str:
    """The line `make run` prints for a provider's failed cloud run.

    A night refused by integrity (pipeline/defs/ingest/integrity.py) says that the run will
    not publish; any other failure keeps the provider's last good offers and goes on.
    """
    if "integrity:" in failure:
        return (
            f"gpuvalue: cloud offers for {provider} refused by integrity ({failure}); "
            "none of its offers of the night are loaded and this run will not publish "
            "(the previous release stays)"
        )
    return (
        f"gpuvalue: cloud offers for {provider} failed ({failure}); "
        "the warehouse keeps whatever offers it had for it"
    )


def check_failures(result: dg.ExecuteInProcessResult) -> str:
    """What the failed blocking checks of a run said ('' when none failed)."""
    said = []
    for event in result.all_events:
        if event.event_type_value == "ASSET_CHECK_EVALUATION":
            evaluation = event.event_specific_data
            if not evaluation.passed and evaluation.description:
                said.append(f"{evaluation.check_name}: {evaluation.description}")
    return "; ".join(said)


def run_pipeline(
    instance: dg.DagsterInstance,
    first_day: str,
    last_day: str,
    resources: dict[str, object] | None = None,
    log_level: str = "INFO",
) -> dg.ExecuteInProcessResult:
    """Materialize everything in-process: cloud offers per provider, then the rest.

    Each cloud provider is its own run, as in the nightly schedule, so a provider that
    fails is reported and skipped while the others and the rest of the graph go on (the
    model then uses that provider's last good offers). Only the first cloud run brings
    the catalog (`gpus`, which a first night on an empty warehouse needs before any
    offer can be matched); the others would each repeat its step and blocking check for
    nothing (~0.35 s a run), and the main run checks it again before the model.
    `resources` replaces the project's default resources (tests point them at temp dirs).
    Returns the main run's result.
    """
    defs = load_defs()
    merged = {**defs.resources, **(resources or {})}
    everything = [*defs.assets, *defs.asset_checks]
    run_config = {"loggers": {"console": {"config": {"log_level": log_level}}}}
    for i, provider in enumerate(CLOUD_PROVIDERS):
        cloud = dg.materialize(
            everything,
            instance=instance,
            resources=merged,
            selection=CLOUD_RUN if i == 0 else CLOUD,
            partition_key=provider,
            run_config=run_config,
            raise_on_error=False,
        )
        if not cloud.success:
            print(cloud_failure(provider, first_failure(cloud)), file=sys.stderr)
    return dg.materialize(
        everything,
        instance=instance,
        resources=merged,
        selection=dg.AssetSelection.all() - CLOUD,
        tags={RANGE_START: first_day, RANGE_END: last_day},
        run_config=run_config,
        raise_on_error=False,
    )


def build_into(
    root: Path,
    data_dir: Path | None = None,
    log_level: str = "WARNING",
    days: tuple[str, str] | None = None,
    **settings_fields,
) -> tuple[GpuvalueSettings, dg.ExecuteInProcessResult]:
    """Run the whole graph with every output (warehouse, site, published) under `root`.

    For tests and benchmarks: an ephemeral instance, the bundled snapshot (or `data_dir`),
    and any other GpuvalueSettings fields given; `days` (first, last) overrides the
    snapshot's partition range.
    """
    settings = GpuvalueSettings(
        **({"data_dir": str(data_dir)} if data_dir else {}),
        build_dir=str(root / ".build"),
        site_dir=str(root / "site"),
        published_dir=str(root / "published"),
        **settings_fields,
    )
    first, last = days or snapshot_days(settings)
    result = run_pipeline(
        dg.DagsterInstance.ephemeral(),
        first,
        last,
        resources={
            "settings": settings,
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        log_level=log_level,
    )
    return settings, result


def summary(settings: GpuvalueSettings) -> str:
    """Where the outputs are, how old the inputs are, and the answer in short.

    The top 3 GPUs per workload and the 16-bit training verdicts by budget and for 24 GB,
    read from the site's prepared dataset.
    """
    con = open_published(settings.published_dir)
    try:
        run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
        # The version this run published (what "What changed" on the site says).
        site = Path(settings.site_dir)
        dataset = prepare_dataset(con, run_date, site, newest_version_of(site, run_date))
    finally:
        con.close()
    data = dataset.data
    site = Path(settings.site_dir)
    lines = [
        "",
        f"gpuvalue run for {run_date}, site version {dataset.version}",
        f"  site:       {site / 'latest' / 'index.html'}  (versions: {site / 'index.html'})",
        f"  method:     {site / 'latest' / 'methodology.html'}  (constants, validation, conflicts)",
        f"  warehouse:  {Path(settings.published_dir) / 'gpuvalue.duckdb'} (read-only copy), "
        f"Parquet in {Path(settings.published_dir) / 'parquet'}",
        "",
        f"Inputs (as of, age in days before the run date {run_date}):",
    ]
    for row in data.freshness.iter_rows(named=True):
        lines.append(
            f"  {row['input']:<14} {row['source']:<32} {row['rows']:>5} rows  "
            f"{row['as_of']}  ({row['age_days']} d)  {row['status']}"
            + (f": {row['detail']}" if row["detail"] else "")
        )
    lines += [
        "",
        "Headline (best 1-GPU system of any memory, eligible GPUs only; a tie under 50 %):",
    ]
    heads = dataset.verdicts.filter(pl.col("kind") == "headline")
    for workload in dict.fromkeys(heads["workload"]):
        lines.append(f"  {workload}")
        for r in heads.filter(pl.col("workload") == workload).iter_rows(named=True):
            lines.append(f"    {r['option']:<15} {_verdict(r)}")
    lines += [
        "",
        "Top 3 eligible by performance per dollar (perf_per_dollar, cloud_perf_per_dollar):",
    ]
    for workload, ways in headline(data).items():
        lines.append(f"  {workload}")
        for way, top in ways.items():
            unit = "/k$" if HEADLINE_WAYS[way][0] == "perf" else " ref-h/$"
            scale = 1000 if HEADLINE_WAYS[way][0] == "perf" else 1
            ranked = ", ".join(
                f"{r['gpu_id']} ({r['perf_per_dollar'] * scale:.3f}{unit})"
                for r in top.iter_rows(named=True)
            )
            lines.append(f"    {way:<15} {ranked or 'none'}")
    training = dataset.verdicts.filter(pl.col("workload") == "training_16bit")
    lines += [
        "",
        "Best value by budget, 16-bit training (buy: total cost of ownership; rent: the same "
        "hours of use;",
        "P = share of bootstrap replicates it wins):",
        ("  " + "budget".ljust(9) + "".join(o.ljust(27) for o in OPTIONS)).rstrip(),
    ]
    for limit in sorted(set(training.filter(pl.col("kind") == "budget")["limit"])):
        rows = training.filter((pl.col("kind") == "budget") & (pl.col("limit") == limit))
        cells = {r["option"]: _verdict(r) for r in rows.iter_rows(named=True)}
        row = f"  ${limit:<8,.0f}" + "".join(cells.get(o, "-").ljust(27) for o in OPTIONS)
        lines.append(row.rstrip())
    lines += ["", "Best GPU with 24 GB or more, 16-bit training:"]
    tier = training.filter((pl.col("kind") == "memory") & (pl.col("limit") == 24))
    for r in tier.iter_rows(named=True):
        lines.append(f"  {r['option']:<15} {_verdict(r)}")
    lines += quarantine_lines(dataset.quarantine)
    if dataset.changes is not None:
        changed = dataset.changes
        lines += [
            "",
            f"Since {changed.previous_version}: {changed.verdicts.height} verdicts, "
            f"{changed.ranks.height} ranks and {changed.prices.height} prices changed; "
            f"{changed.gpus.height} GPU changes; {changed.stale.height} inputs went stale.",
        ]
    return "\n".join(lines)


def quarantine_lines(rows: pl.DataFrame) -> list[str]:
    """The summary's cloud quarantine: each offer integrity kept out, with its rule."""
    if rows.is_empty():
        return ["", "Cloud offers quarantined by integrity: none."]
    lines = ["", f"Cloud offers quarantined by integrity (kept out of the model): {rows.height}"]
    for r in rows.iter_rows(named=True):
        lines.append(
            f"  {r['provider']:<10} {r['gpu_id']:<16} {r['price_type']:<11} "
            f"${r['usd_per_gpu_hour']:g}/GPU-h  {r['rule']}: {r['reason'][:160]}"
        )
    return lines


def _verdict(row: dict) -> str:
    """'2x rtx-3090 P=40%', 'tie: a, b P=30%' (or '-' when nothing fits)."""
    if row["gpu_id"] is None:
        return "-"
    if row.get("tie_gpu_ids"):
        sizes = row["tie_system_gpus"] if row["kind"] == "budget" else None
        return f"{tie_label(row['tie_gpu_ids'], sizes).replace('×', 'x')} P={row['p_best']:.0%}"
    size = f"{row['system_gpus']}x " if (row["system_gpus"] or 1) > 1 else ""
    return f"{size}{row['gpu_id']} P={row['p_best']:.0%}"


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--first-day", help="first partition day (default: snapshot's first)")
    parser.add_argument("--last-day", help="last partition day (default: snapshot's last)")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument(
        "--live",
        action="store_true",
        help="fetch today's Amazon and eBay pages through the polite client (network!) into "
        "warehouse/archive/ and run today's partition; default: replay the bundled snapshot",
    )
    parser.add_argument(
        "--archive-dir",
        default="",
        help="parse retail pages from this raw archive (e.g. warehouse/archive to re-parse "
        "live nights after a parser fix); default: the bundled archive, or the live one",
    )
    parser.add_argument(
        "--persist",
        action="store_true",
        help="record the run in $DAGSTER_HOME (visible in `make dev`); slower: Dagster "
        "then stores one materialization per partition day on disk",
    )
    args = parser.parse_args(argv)

    settings = GpuvalueSettings(live=args.live, archive_dir=args.archive_dir)
    if not args.live and (problem := bundled_problem(settings.data_path())):
        # A bad bundled file (a cloud file included) stops the run before anything runs.
        print(f"gpuvalue: {problem}; nothing was run, the previous site and published "
              "warehouse are unchanged.", file=sys.stderr)  # fmt: skip
        return 1
    if args.live:
        today = dt.datetime.now(dt.UTC).date().isoformat()
        first, last = today, today
    else:
        first, last = snapshot_days(settings)
    first, last = args.first_day or first, args.last_day or last
    for day in (first, last):
        dt.date.fromisoformat(day)  # fail early on a malformed --first-day/--last-day
    home = os.environ.get("DAGSTER_HOME")
    if args.persist and home:
        Path(home).mkdir(parents=True, exist_ok=True)
        instance = dg.DagsterInstance.get()
    else:
        instance = dg.DagsterInstance.ephemeral()
    print(f"gpuvalue: materializing every asset for partition days {first}..{last}", flush=True)
    result = run_pipeline(
        instance, first, last, resources={"settings": settings}, log_level=args.log_level
    )
    if not result.success:
        failed = [
            event.step_key
            for event in result.all_events
            if event.event_type_value == "STEP_FAILURE"
        ]
        print(
            f"\ngpuvalue: the run failed at {', '.join(failed) or 'a check'}; "
            "the previous site and published warehouse are unchanged.",
            file=sys.stderr,
        )
        refused = check_failures(result)
        if refused:
            print(f"gpuvalue: blocking checks failed: {refused}", file=sys.stderr)
        return 1
    with pl.Config(tbl_rows=50):
        print(summary(settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
