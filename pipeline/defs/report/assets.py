"""Report assets: charts, the Markdown report, the site's version and the release.

Charts, the report and the site's version are rendered under the build folder. Only
`published_warehouse` touches `site/` and `warehouse/published/`: it publishes the site and
the warehouse together, as one release swapped in atomically (warehouse/publish.py).
"""

import shutil
from functools import partial
from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from pipeline.defs.steps import run_step
from reports.dataset import prepare_dataset
from reports.figures import render_site_charts
from reports.methodology import load_methodology_data, render_methodology_markdown
from reports.pages import add_version_files, render_report_markdown, write_version
from reports.search import SearchIndexError, index_version
from reports.site import (
    read_version_name,
    render_index,
    render_version,
    write_version_name,
)
from warehouse.publish import publish
from warehouse.release import SiteVersion


def _build_dir(settings: GpuvalueSettings, run_date) -> Path:
    return Path(settings.build_dir) / run_date.isoformat()


def _site_dir(settings: GpuvalueSettings, run_date) -> Path:
    """Where `site` renders the run's version (`<build>/<date>/site/<version>/`)."""
    return _build_dir(settings, run_date) / "site"


@dg.asset(
    group_name="report",
    kinds={"altair", "svg"},
    pool=WAREHOUSE_POOL,
    deps=[
        "relative_performance",
        "perf_per_dollar",
        "current_prices",
        "cloud_perf_per_dollar",
        "cloud_vs_buy",
        "sensitivity",
        "recommendations",
        "verdicts",
        "upgrade_picks",
        "rent_or_buy",
        "rent_or_buy_gpus",
        # The LLM pages' tables (one user, serving, its cost, the API band).
        "llm_inference",
        "llm_serving",
        "llm_serving_cost",
        "llm_api_prices",
    ],
    description=(
        "The run's charts (Vega-Lite spec and SVG; PNG of the lead chart): the site's "
        "figures in a wide and a narrow (phone) variant, and one price-history chart per GPU."
    ),
)
def charts(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Render the site's figures and the per-GPU price-history charts."""
    with run_step(context, settings, warehouse) as step:
        run_date = step.run_date
        # The charts draw no input counts (a scan of every observation kept).
        dataset = prepare_dataset(step.con, run_date, input_counts=False)
    out = _build_dir(settings, run_date) / "charts"
    shutil.rmtree(out, ignore_errors=True)  # no chart of an earlier build of this date stays
    # SVGs whose spec did not change since the last build are reused, not rendered again.
    written = render_site_charts(dataset, out, Path(settings.build_dir) / "chart-cache")
    context.log.info(f"charts {run_date}: {len(written)} files written to {out}")
    return dg.MaterializeResult(
        metadata={"run_date": str(run_date), "folder": str(out), "files": len(written)}
    )


@dg.asset(
    group_name="report",
    kinds={"markdown"},
    pool=WAREHOUSE_POOL,
    deps=[
        charts,
        "cloud_vs_buy",
        "cloud_perf_per_dollar",
        "sensitivity",
        "recommendations",
        "verdicts",
        "upgrade_picks",
        "rent_or_buy",
        "rent_or_buy_gpus",
        "model_validation",
        "llm_inference",
        "llm_serving",
        "llm_serving_cost",
        "llm_api_prices",
    ],
    description=(
        "The run's Markdown report (verdicts by budget and memory, what changed, top GPUs "
        "per workload, input ages), its methodology page, the site's pages (front page, "
        "GPU pages, tables, downloads) and every table as CSV and Parquet, all from one "
        "prepared dataset."
    ),
)
def report(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Write report.md, methodology.md, the pages and the downloads for the run."""
    with run_step(context, settings, warehouse) as step:
        run_date = step.run_date
        dataset = prepare_dataset(step.con, run_date, Path(settings.site_dir))
        methodology = load_methodology_data(step.con, run_date)
        build = _build_dir(settings, run_date)
        build.mkdir(parents=True, exist_ok=True)
        # The pages name their version: the run date, or `<date>.N` when the date is
        # already published (a published version is never rewritten). The site and
        # publish steps read the name back from the build folder.
        write_version_name(build, dataset.version)
        counts = write_version(dataset, step.con, build)
    data = dataset.data
    path = build / "report.md"
    path.write_text(render_report_markdown(dataset), encoding="utf-8")
    path.with_name("methodology.md").write_text(
        render_methodology_markdown(methodology), encoding="utf-8"
    )
    oldest = data.freshness.sort("age_days", descending=True).row(0, named=True)
    context.log.info(f"report {run_date}: {path}")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "version": dataset.version,
            "path": str(path),
            "oldest_input": f"{oldest['input']}: {oldest['source']} ({oldest['age_days']} days)",
            "previous_version": dataset.previous or "",
            **counts,
            "preview": dg.MetadataValue.md(path.read_text(encoding="utf-8")[:3000]),
        }
    )


@dg.asset(
    group_name="report",
    kinds={"html"},
    pool=WAREHOUSE_POOL,
    deps=[report],
    description=(
        "The run's version of the static site (front page, report, methodology, GPU pages, "
        "charts, downloads, the Pagefind search index of its pages), rendered under the "
        "build folder; published_warehouse puts it on "
        "the site as site/<version>/ (the run date, or <date>.2, .3 ... for a rerun of a date "
        "already published) and site/latest/, together with the warehouse."
    ),
)
def site(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Render the run's version of the site (published with the warehouse, not here)."""
    with run_step(context, settings, warehouse) as step:
        run_date = step.run_date
    build = _build_dir(settings, run_date)
    version = read_version_name(build, run_date)
    chart_files = sorted(p for p in (build / "charts").iterdir() if p.is_file())
    # Only this build's version stays under the build's site/ (no folder of a render
    # before it is left to be mistaken for it).
    shutil.rmtree(_site_dir(settings, run_date), ignore_errors=True)
    folder = render_version(
        _site_dir(settings, run_date),
        run_date,
        (build / "report.md").read_text(encoding="utf-8"),
        chart_files,
        (build / "methodology.md").read_text(encoding="utf-8"),
        extra=partial(add_version_files, build),
        version=version,
    )
    context.log.info(f"site {version}: rendered in {folder}")
    # The search index, once every page of the version is written and before anything is
    # published; a failure raises here, so the version is not published without it.
    try:
        search = index_version(folder)
    except SearchIndexError as error:
        context.log.error(f"site {version}: not published, no search index: {error}")
        raise
    context.log.info(
        f"search index {version}: {search.pages} pages, {search.words} words, "
        f"{search.seconds:.1f} s"
    )
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "version": version,
            "folder": str(folder),
            "search_pages": search.pages,
            "search_words": search.words,
            "search_seconds": round(search.seconds, 2),
            "files": sum(1 for p in folder.rglob("*") if p.is_file()),
        }
    )


@dg.asset(
    group_name="report",
    kinds={"duckdb", "parquet"},
    pool=WAREHOUSE_POOL,
    deps=[site],
    description=(
        "One release: the site (site/<version>/, site/latest/, site/index.html) and a "
        "read-only snapshot of every warehouse table (warehouse/published/gpuvalue.duckdb, "
        "Parquet in warehouse/published/parquet/, dated tables one file per month), swapped "
        "in together by one atomic rename; only the months a night changed are written."
    ),
)
def published_warehouse(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Publish the run's site version and the warehouse as one release."""
    with run_step(context, settings, warehouse) as step:
        run_date = step.run_date
        version = read_version_name(_build_dir(settings, run_date), run_date)
        result = publish(
            step.con,
            settings.published_dir,
            site=SiteVersion(version, _site_dir(settings, run_date) / version, render_index),
            site_dir=settings.site_dir,
            releases_dir=settings.releases_path(),
        )
    for path in result.removed:
        context.log.info(f"removed a leftover of an earlier publish: {path}")
    for warning in result.warnings:
        context.log.warning(warning)
    written = {t: ", ".join(keys) for t, keys in result.partitions_written.items()}
    context.log.info(
        f"release {result.release} (run date {result.run_date}): {result.database} and "
        f"{Path(settings.site_dir) / version}; {result.files_written} files "
        f"({result.bytes_written / 1e6:.1f} MB) written, {result.files_linked} linked"
    )
    counts = pl.DataFrame(
        {"table": list(result.row_counts), "rows": list(result.row_counts.values())}
    )
    return dg.MaterializeResult(
        metadata={
            "release": result.release,
            "run_date": str(result.run_date),
            "site_version": version,
            "database": str(result.database),
            "parquet": str(result.parquet_dir),
            "bytes_written": result.bytes_written,
            "files_written": result.files_written,
            "files_linked": result.files_linked,
            "partitions_written": dg.MetadataValue.md(
                "\n".join(f"- {t}: {keys}" for t, keys in written.items())
            ),
            "row_counts": dg.MetadataValue.md(
                "\n".join(f"- {t}: {n}" for t, n in counts.iter_rows())
            ),
        }
    )
