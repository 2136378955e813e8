"""Report assets: charts, the Markdown report, the site's version and the release.

Charts, the report and the site's version are rendered under the build folder. Only
`published_warehouse` touches `site/` and `warehouse/published/`: it publishes the site and
the warehouse together, as one release swapped in atomically (warehouse/publish.py).
"""

from pathlib import Path

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.resources import (
    WAREHOUSE_POOL,
    GpuvalueSettings,
    open_warehouse,
    run_date_for,
)
from reports.charts import perf_per_dollar_chart, relative_performance_chart, save_chart
from reports.methodology import load_methodology_data, render_methodology_markdown
from reports.report import load_report_data, render_markdown
from reports.site import render_index, render_version
from warehouse.publish import SiteVersion, publish

CHART_NAMES = ("relative_performance", "perf_per_dollar")


def _build_dir(settings: GpuvalueSettings, run_date) -> Path:
    return Path(settings.build_dir) / run_date.isoformat()


def _site_version_dir(settings: GpuvalueSettings, run_date) -> Path:
    """Where `site` renders the run's version (`<build>/<date>/site/<date>/`)."""
    return _build_dir(settings, run_date) / "site" / run_date.isoformat()


@dg.asset(
    group_name="report",
    kinds={"altair", "svg"},
    deps=["relative_performance", "perf_per_dollar"],
    description="The run's charts (Vega-Lite spec, SVG and PNG), one file set per chart.",
)
def charts(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Render the relative performance and perf-per-dollar charts."""
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        data = load_report_data(con, run_date)
    out = _build_dir(settings, run_date) / "charts"
    written = [
        save_chart(
            relative_performance_chart(data.relative, data.reference_gpu),
            out,
            "relative_performance",
        ),
        save_chart(perf_per_dollar_chart(data.best), out, "perf_per_dollar"),
    ]
    context.log.info(f"charts {run_date}: written to {out}")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "folder": str(out),
            "files": sum(len(w) for w in written),
        }
    )


@dg.asset(
    group_name="report",
    kinds={"markdown"},
    deps=[
        charts,
        "cloud_vs_buy",
        "cloud_perf_per_dollar",
        "sensitivity",
        "recommendations",
        "model_validation",
    ],
    description=(
        "The run's Markdown report (top GPUs per workload, recommendations, input ages) and "
        "its methodology page (fitted constants, validation, spec conflicts, sensitivity)."
    ),
)
def report(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Write report.md for the run."""
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        data = load_report_data(con, run_date)
        methodology = load_methodology_data(con, run_date)
    path = _build_dir(settings, run_date) / "report.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_markdown(data), encoding="utf-8")
    path.with_name("methodology.md").write_text(
        render_methodology_markdown(methodology), encoding="utf-8"
    )
    oldest = data.freshness.sort("age_days", descending=True).row(0, named=True)
    context.log.info(f"report {run_date}: {path}")
    return dg.MaterializeResult(
        metadata={
            "run_date": str(run_date),
            "path": str(path),
            "oldest_input": f"{oldest['input']}: {oldest['source']} ({oldest['age_days']} days)",
            "preview": dg.MetadataValue.md(path.read_text(encoding="utf-8")[:3000]),
        }
    )


@dg.asset(
    group_name="report",
    kinds={"html"},
    deps=[report],
    description=(
        "The run's version of the static site (report, methodology page, charts), rendered "
        "under the build folder; published_warehouse puts it on the site as site/<run date>/ "
        "and site/latest/, together with the warehouse."
    ),
)
def site(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Render the run's version of the site (published with the warehouse, not here)."""
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
    build = _build_dir(settings, run_date)
    chart_files = sorted(p for p in (build / "charts").iterdir() if p.is_file())
    folder = render_version(
        _site_version_dir(settings, run_date).parent,
        run_date,
        (build / "report.md").read_text(encoding="utf-8"),
        chart_files,
        (build / "methodology.md").read_text(encoding="utf-8"),
    )
    context.log.info(f"site {run_date}: rendered in {folder}")
    return dg.MaterializeResult(
        metadata={"run_date": str(run_date), "folder": str(folder), "files": len(chart_files) + 4}
    )


@dg.asset(
    group_name="report",
    kinds={"duckdb", "parquet"},
    pool=WAREHOUSE_POOL,
    deps=[site],
    description=(
        "One release: the site (site/<run date>/, site/latest/, site/index.html) and a "
        "read-only snapshot of every warehouse table (warehouse/published/gpuvalue.duckdb, "
        "Parquet in warehouse/published/parquet/, dated tables one file per month), swapped "
        "in together by one atomic rename; only the months a night changed are written."
    ),
)
def published_warehouse(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Publish the run's site version and the warehouse as one release."""
    with open_warehouse(warehouse) as con:
        run_date = run_date_for(con, settings)
        result = publish(
            con,
            settings.published_dir,
            site=SiteVersion(
                run_date.isoformat(), _site_version_dir(settings, run_date), render_index
            ),
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
        f"{Path(settings.site_dir) / run_date.isoformat()}; {result.files_written} files "
        f"({result.bytes_written / 1e6:.1f} MB) written, {result.files_linked} linked"
    )
    counts = pl.DataFrame(
        {"table": list(result.row_counts), "rows": list(result.row_counts.values())}
    )
    return dg.MaterializeResult(
        metadata={
            "release": result.release,
            "run_date": str(result.run_date),
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
