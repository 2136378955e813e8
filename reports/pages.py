"""The site's pages and downloads for one version, rendered from one prepared Dataset.

`write_version` puts everything a version adds beyond the report and methodology pages
into a build folder: `pages/` (the front page `index.html`, `tables.html`, `gpus.html`,
`downloads.html`, `llm.html` (LLM serving per model) and one `gpu/<gpu_id>.html` per
catalog GPU) and `data/` (every published table as CSV and Parquet, plus the verdicts and
input freshness); `report.md` is rendered from the same dataset (`render_report_markdown`).
`add_version_files` copies them into the version folder `build_site` assembles, before it
is swapped in.

Safety (GUIDE section 6): every page template autoescapes; Markdown fragments are rendered
inline with raw HTML disabled; links built from data go through `safety.safe_url`; file
names built from data are slugs checked to stay inside the output folder.
"""

import datetime as dt
import shutil
from dataclasses import dataclass
from pathlib import Path

import duckdb
import jinja2
import polars as pl
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from model.verdicts import OPTION_TITLES
from reports import content
from reports.charts import BUY_MARKETS, FIGURES, WORKLOAD_TITLES
from reports.content import Cell, Section, Table, frame_table, interval, money, number, percent
from reports.content.compare import gpu_compare_section, pairs_by_gpu, write_compare_pages
from reports.content.evidence import evidence_section
from reports.content.gpu_index import write_gpu_index
from reports.content.licences import DATA_SOURCES
from reports.content.mlcommons import benchmark_attribution
from reports.content.prices import evidence_label, priced_with_evidence, with_price_evidence
from reports.content.renting import best_rent_offers, rank_text, with_offer_text
from reports.content.serving import PAGE as LLM_PAGE
from reports.content.serving import serving_page_sections
from reports.content.serving_gpu import ServingPages
from reports.content.units import with_unit
from reports.dataset import Dataset
from reports.downloads import DOWNLOAD_DAYS, export_tables
from reports.machine import write_machine_files
from reports.report import REPORT_FORMAT
from reports.safety import citation_url, safe_url, slug
from reports.site import inside
from warehouse.versions import version_date

_INLINE = MarkdownIt("commonmark", {"html": False})


def _md_inline(text: str) -> Markup:
    """Inline Markdown (emphasis, code, links) to HTML; raw HTML in `text` is escaped."""
    return Markup(_INLINE.renderInline(text))


def cell_html(c: Cell, root: str = "", tag: str = "td", label: str = "") -> Markup:
    """One table cell as HTML; every piece of text and every attribute is escaped.

    A Python filter rather than a macro: the GPU pages hold tens of thousands of cells.
    A link is either an https URL that `safety.safe_url` let through or a path inside the
    version (prefixed with `root`).
    """
    if tag not in ("td", "th"):
        raise ValueError(f"not a table cell tag: {tag!r}")
    body = str(escape(c.text))
    if c.strong:
        body = f"<strong>{body}</strong>"
    if c.href:
        href = c.href if c.href.startswith("https://") else root + c.href
        body = f'<a href="{escape(href)}">{body}</a>'
    lines = "".join(f'<span class="sub">{escape(x)}</span>' for x in c.lines)
    attr = f' data-label="{escape(label)}"' if label else ""
    return Markup(f"<{tag}{attr}>{body}{lines}</{tag}>")


def _md_cell(value: object) -> str:
    # Markdown table cells: keep pipes and newlines from breaking the table.
    return str(value).replace("|", "\\|").replace("\n", " ")


def md_table(table: Table) -> str:
    """A Table as a Markdown table."""
    lines = [
        "| " + " | ".join(table.headers) + " |",
        "|" + "|".join("---" for _ in table.headers) + "|",
    ]
    for row in table.rows:
        lines.append("| " + " | ".join(_md_cell(c) for c in row) + " |")
    return "\n".join(lines)


HTML = jinja2.Environment(
    loader=jinja2.PackageLoader("reports", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
HTML.filters["md"] = _md_inline
HTML.filters["cell"] = cell_html
HTML.filters["as_of_date"] = version_date  # `2026-10-07.2` -> `2026-10-07`
HTML.globals["report_format"] = REPORT_FORMAT
MARKDOWN = jinja2.Environment(
    loader=jinja2.PackageLoader("reports", "templates"),
    autoescape=False,  # Markdown, not HTML: the site renders its own HTML from the dataset
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
MARKDOWN.filters["md_table"] = md_table
MARKDOWN.globals["report_format"] = REPORT_FORMAT


def render_report_markdown(ds: Dataset) -> str:
    """The Markdown report (report.md) from the prepared dataset."""
    return MARKDOWN.get_template("report.md.j2").render(
        version=ds.version,
        intro=content.intro(ds),
        sections=content.report_sections(ds),
        **content.dates(ds),
    )


def _built_at() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def _page(template: str, **context) -> str:
    return HTML.get_template(template).render(built_at=_built_at(), **context)


# --- the front page -----------------------------------------------------------------------


def render_front_page(ds: Dataset) -> str:
    """index.html: the answer, what changed, the charts, the top 3s and input ages."""
    lead = next(f for f in FIGURES if f.name == "perf_per_dollar")
    return _page(
        "front.html.j2",
        version=ds.version,
        root="",
        intro=content.intro(ds),
        short=content.short_answer(ds),
        **content.dates(ds),
        lead=lead,
        **content.front_page(ds),
        previous=ds.previous,
    )


def render_tables_page(ds: Dataset) -> str:
    """tables.html: the report's detailed tables."""
    return _page(
        "sections.html.j2",
        version=ds.version,
        root="",
        title=f"gpuvalue {ds.version}: all tables",
        sections=content.detail_sections(ds),
    )


def render_llm_page(ds: Dataset, charted: set[str]) -> str:
    """llm.html: serving each model to N users (`charted`: the serving charts rendered)."""
    return _page(
        "sections.html.j2",
        version=ds.version,
        root="",
        title=f"gpuvalue {ds.version}: LLM serving",
        sections=serving_page_sections(ds, charted),
    )


# --- GPU pages ----------------------------------------------------------------------------

SPEC_FIELDS = {
    "memory_gb": ("memory", "GB"),
    "memory_bandwidth_gbs": ("memory bandwidth", "GB/s"),
    "fp16_tensor_tflops": ("FP16 tensor (dense)", "TFLOPS"),
    "fp8_tensor_tflops": ("FP8 tensor (dense)", "TFLOPS"),
    "int8_tensor_tops": ("INT8 tensor (dense)", "TOPS"),
    "tdp_w": ("board power", "W"),
    "l2_cache_mb": ("L2 cache", "MB"),
    "release_date": ("released", ""),
    "launch_price_usd": ("launch price", "USD"),
}


@dataclass(frozen=True)
class GpuPage:
    """What one GPU's page shows."""

    gpu_id: str
    name: str
    facts: str
    has_chart: bool
    sections: list[Section]


def _by_gpu(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    if frame.is_empty() or "gpu_id" not in frame.columns:
        return {}
    return {k[0]: v for k, v in frame.partition_by("gpu_id", as_dict=True).items()}


def _records(frame: pl.DataFrame, *order: str) -> list[dict]:
    """Rows as dicts (sorted by `order`), none for an empty frame."""
    if frame.is_empty():
        return []
    return list((frame.sort(*order) if order else frame).iter_rows(named=True))


def _link(text: str, url: str | None) -> Cell:
    return Cell(text, safe_url(url))


def _spec_table(gpu: dict, sources: list[dict]) -> Table:
    """Each key spec with its value, the source it was taken from and what others say."""
    by_field: dict[str, list[dict]] = {}
    for r in sources:
        by_field.setdefault(r["field"], []).append(r)
    rows = []
    for column, (label, unit) in SPEC_FIELDS.items():
        value = gpu.get(column)
        if isinstance(value, dt.date):
            shown = value.isoformat()
        else:
            shown = "not published" if value is None else f"{value:g} {unit}".strip()
        entries = by_field.get(column, [])
        chosen = [r for r in entries if r["chosen"]]
        if chosen:
            r = chosen[0]
            cite = _link(
                f"{r['source']}: {r['citation'] or r['source_name'] or ''}", r["source_url"]
            )
        else:
            cite = Cell(gpu.get(f"{column}_source") or "")
        other = "; ".join(f"{r['source']}: {r['value']}" for r in entries if not r["chosen"])
        rows.append((Cell(label), Cell(shown), cite, Cell(other)))
    rows.append(
        (
            Cell("spec sheet"),
            Cell(gpu.get("source") or ""),
            _link(gpu.get("source_url") or "", gpu.get("source_url")),
            Cell(""),
        )
    )
    return Table(("spec", "value", "source", "other sources"), rows, title="Specs")


@dataclass(frozen=True)
class Ranking:
    """Lookups for every GPU's 'where it ranks' tables, computed once per version."""

    buy: dict[str, list[dict]]
    rent: dict[str, list[dict]]

    @classmethod
    def of(cls, ds: Dataset) -> "Ranking":
        """Buy rows (smallest system per GPU, new and used) and best rent offers, ranked."""
        perf = ds.data.perf.filter(pl.col("market").is_in(BUY_MARKETS))
        smallest = perf.group_by("gpu_id").agg(_min=pl.col("system_gpus").min())
        counts = perf.group_by("workload", "system_gpus", "market").agg(n=pl.len())
        buy = (
            perf.join(smallest, on="gpu_id")
            .filter(pl.col("system_gpus") == pl.col("_min"))
            .join(counts, on=["workload", "system_gpus", "market"])
            .sort("workload", "market")
            .pipe(with_price_evidence, ds.current_prices)
        )
        best = with_offer_text(best_rent_offers(ds.data.cloud_perf))
        return cls(
            {k: _records(v) for k, v in _by_gpu(buy).items()},
            {k: _records(v) for k, v in _by_gpu(best).items()},
        )


def _rank_tables(gpu_id: str, ranking: Ranking) -> list[Table]:
    """Where the GPU ranks: buying (per $1,000 of total cost) and renting (per $)."""
    order = {w: i for i, w in enumerate(WORKLOAD_TITLES)}
    buy = sorted(ranking.buy.get(gpu_id, []), key=lambda r: (order[r["workload"]], r["market"]))
    rent = sorted(
        ranking.rent.get(gpu_id, []), key=lambda r: (order[r["workload"]], r["price_type"])
    )
    return [
        Table(
            ("workload", "price", "system", "perf per $1,000 (95 % interval)", "rank", "P(top 3)"),
            [
                (
                    Cell(WORKLOAD_TITLES[r["workload"]]),
                    Cell(
                        f"{r['market']} {priced_with_evidence(r['price_usd'], r['price_evidence'])}"
                        f" ({r['price_method']}, last seen {r['price_day']})"
                    ),
                    Cell(f"{r['system_gpus']}-GPU {r['platform']}"),
                    Cell(
                        interval(
                            r["perf_per_dollar"],
                            r["perf_per_dollar_low"],
                            r["perf_per_dollar_high"],
                            1000.0,
                        )
                    ),
                    Cell(f"{r['rank']} of {r['n']}"),
                    Cell(percent(r["p_top3"])),
                )
                for r in buy
            ],
            title="Buying: relative performance per $1,000 of total cost of ownership",
            empty="No price at the as-of date: not ranked for buying.",
        ),
        Table(
            ("workload", "price type", "best offer", "ref-GPU-hours per $ (95 % interval)", "rank"),
            [
                (
                    Cell(WORKLOAD_TITLES[r["workload"]]),
                    Cell(r["price_type"].replace("_", "-")),
                    Cell(
                        f"${r['usd_per_gpu_hour']:.3f}/GPU-h, {r['provider']}, "
                        f"{r['offer_age']}; {r['market']}"
                    ),
                    Cell(
                        interval(
                            r["perf_per_dollar"],
                            r["perf_per_dollar_low"],
                            r["perf_per_dollar_high"],
                        )
                    ),
                    Cell(rank_text(r)),
                )
                for r in rent
            ],
            title="Renting: reference-GPU-hours per rented dollar",
            empty="No on-demand or spot offer: not ranked for renting.",
        ),
    ]


def _price_table(rows: pl.DataFrame, as_of: dt.date) -> Table:
    return Table(
        (
            "market",
            "price",
            "95 % range",
            "method",
            "last observed",
            "age (days)",
            "evidence (n, where, currency)",
            "sources",
            "how",
        ),
        [
            (
                Cell(r["market"]),
                Cell(money(r["price_usd"])),
                Cell(f"{money(r['price_low'])}–{money(r['price_high'])}"),
                Cell(r["price_method"] or ""),
                Cell(str(r["price_day"])),
                Cell(str(r["age_days"])),
                Cell(evidence_label(r["n_observations"], r["sources"], r["source_currency"])),
                Cell(r["sources"] or ""),
                Cell(r["detail"] or ""),
            )
            for r in _records(rows)
        ],
        title=f"Prices as of {as_of}",
        empty=f"No price as of {as_of} (never observed, or last observed over two years before).",
    )


def _offer_table(rows: pl.DataFrame) -> Table:
    return Table(
        (
            "provider",
            "instance",
            "region",
            "price type",
            "GPUs",
            "$/GPU-hour",
            "$/hour",
            "observed",
            "source",
        ),
        [
            (
                Cell(r["provider"] or ""),
                Cell(r["instance_type"] or ""),
                Cell(r["region"] or ""),
                Cell((r["price_type"] or "").replace("_", "-")),
                Cell(str(r["gpu_count"])),
                Cell(f"{r['usd_per_gpu_hour']:.3f}"),
                Cell(f"{r['usd_per_hour']:.3f}"),
                Cell(str(r["observed_at"])[:10]),
                Cell(r["citation"] or "", citation_url(r["citation"])),
            )
            for r in _records(rows, "usd_per_gpu_hour", "provider")
        ],
        title="Cloud offers (each provider's newest snapshot)",
        empty="No cloud offer for this GPU.",
    )


def _benchmark_table(rows: pl.DataFrame) -> Table:
    return Table(
        (
            "workload",
            "source",
            "model",
            "precision",
            "GPUs",
            "batch/GPU",
            "throughput (whole run, in the benchmark's unit)",
            "per GPU, debiased (same unit)",
            "software",
            "citation",
        ),
        [
            (
                Cell(WORKLOAD_TITLES.get(r["workload"], r["workload"] or "")),
                Cell(r["source"] or ""),
                Cell(r["model"] or ""),
                Cell(r["precision"] or ""),
                Cell(str(r["num_gpus"])),
                Cell("" if r["batch_size_per_gpu"] is None else str(r["batch_size_per_gpu"])),
                Cell(with_unit(number(r["throughput"], 1), r.get("unit"))),
                Cell(with_unit(number(r["throughput_per_gpu"], 1), r.get("unit"))),
                Cell(r["software_era"] or ""),
                Cell(r["citation"] or "", citation_url(r["citation"])),
            )
            for r in _records(rows)
        ],
        title="Benchmark figures behind it (after debiasing)",
        empty="No benchmark figure measured this GPU: its performance is estimated.",
    )


def _verdict_mentions(gpu_id: str, ds: Dataset) -> list[str]:
    tied = pl.col("tie_gpu_ids").str.split(", ").list.contains(gpu_id).fill_null(False)
    picks = ds.verdicts.filter((pl.col("gpu_id") == gpu_id) | tied)
    out = []
    for r in picks.iter_rows(named=True):
        limit = f"up to ${r['limit']:,.0f}" if r["kind"] == "budget" else f"≥ {r['limit']:.0f} GB"
        limit = "any memory" if r["kind"] == "headline" else limit
        system = f"{r['system_gpus']}× " if (r["system_gpus"] or 1) > 1 else ""
        best = "tied for best" if r["tie_gpu_ids"] else "best"
        if r["gpu_id"] != gpu_id:
            system = ""
        out.append(
            f"{system}{best} to {OPTION_TITLES[r['option']]} for "
            f"{WORKLOAD_TITLES[r['workload']]}, {limit} (P(best) {percent(r['p_best'])})"
        )
    return out


def gpu_pages(ds: Dataset, charted: set[str]) -> list[GpuPage]:
    """One page per catalog GPU (`charted`: GPUs whose price-history chart exists)."""
    specs = {k: _records(v) for k, v in _by_gpu(ds.spec_sources).items()}
    ranking = Ranking.of(ds)
    relative = _by_gpu(ds.data.relative)
    prices = _by_gpu(ds.current_prices.filter(pl.col("market").is_in(BUY_MARKETS)))
    offers = _by_gpu(ds.offers)
    benchmarks = _by_gpu(ds.benchmarks)
    llm, serving = _by_gpu(ds.llm_throughput), ServingPages.of(ds)
    basis, support = _by_gpu(ds.data.basis), _by_gpu(ds.software_support)
    context = int(ds.data.parameters.get("llm_context_tokens", 8192))
    compared = pairs_by_gpu(ds)
    empty = pl.DataFrame()
    no_llm = pl.DataFrame(schema=ds.llm_throughput.schema)
    pages = []
    for gpu in ds.data.gpus.iter_rows(named=True):
        gpu_id = slug(gpu["gpu_id"])
        facts = ", ".join(
            x
            for x in (
                gpu.get("vendor"),
                gpu.get("architecture"),
                gpu.get("form_factor"),
                f"{gpu['memory_gb']:g} GB" if gpu.get("memory_gb") else None,
            )
            if x
        )
        mentions = _verdict_mentions(gpu_id, ds)
        sections = [
            Section(
                "rank",
                "Where it ranks",
                [f"Verdicts naming it: {'; '.join(mentions)}."] if mentions else [],
                _rank_tables(gpu_id, ranking),
            ),
            gpu_compare_section(gpu_id, compared),
            evidence_section(basis.get(gpu_id, empty), support.get(gpu_id, empty)),
            content.performance_section(relative.get(gpu_id, empty)),
            Section(
                "prices",
                "Prices",
                tables=[
                    _price_table(prices.get(gpu_id, empty), ds.run_date),
                    _offer_table(offers.get(gpu_id, empty)),
                ],
            ),
            serving.section(gpu_id),
            Section(
                "llm",
                "LLM: one user, on your own machine",
                tables=[content.llm_gpu_table(llm.get(gpu_id, no_llm), context)],
            ),
            Section(
                "specs",
                "Specs and their sources",
                tables=[_spec_table(gpu, specs.get(gpu_id, []))],
            ),
            Section(
                "benchmarks",
                "Benchmarks",
                tables=[_benchmark_table(benchmarks.get(gpu_id, empty))],
                after=benchmark_attribution(benchmarks.get(gpu_id, empty)),
            ),
        ]
        pages.append(GpuPage(gpu_id, gpu.get("name") or gpu_id, facts, gpu_id in charted, sections))
    return pages


def render_gpu_page(version: str, page: GpuPage) -> str:
    """gpu/<gpu_id>.html."""
    return _page("gpu.html.j2", version=version, root="../", page=page)


# --- writing a version --------------------------------------------------------------------


def write_version(ds: Dataset, con: duckdb.DuckDBPyConnection, build: Path) -> dict[str, int]:
    """Render the version's pages into `build/pages/` and its downloads into `build/data/`.

    Needs the charts already rendered into `build/charts/` (each GPU page shows its chart
    only where `charts/gpu/<gpu_id>.svg` exists). Returns counts for the asset's metadata.
    """
    pages = build / "pages"
    shutil.rmtree(pages, ignore_errors=True)
    (pages / "gpu").mkdir(parents=True)
    data = build / "data"
    shutil.rmtree(data, ignore_errors=True)
    downloads = export_tables(
        con,
        ds.run_date,
        data,
        {"input_freshness": ds.data.freshness},
    )
    chart_dir = build / "charts"
    charted = {p.stem for p in (chart_dir / "gpu").glob("*.svg")}
    (pages / "index.html").write_text(render_front_page(ds), encoding="utf-8")
    (pages / "tables.html").write_text(render_tables_page(ds), encoding="utf-8")
    served = {p.name.removesuffix(".svg") for p in chart_dir.glob("llm_serving_*.svg")}
    (pages / LLM_PAGE).write_text(render_llm_page(ds, served), encoding="utf-8")
    gpu_list = gpu_pages(ds, charted)
    for page in gpu_list:
        inside(pages, "gpu", f"{page.gpu_id}.html").write_text(
            render_gpu_page(ds.version, page), encoding="utf-8"
        )
    write_compare_pages(ds, pages, _page)
    write_gpu_index(ds, pages, _page)  # gpus.html and its sorted copies
    specs = sorted(p.name for p in chart_dir.glob("*.vl.json"))
    (pages / "downloads.html").write_text(
        _page(
            "downloads.html.j2",
            version=ds.version,
            root="",
            downloads=downloads,
            download_days=DOWNLOAD_DAYS,
            specs=specs,
            gpu_specs=len(charted),
            sources=DATA_SOURCES,
        ),
        encoding="utf-8",
    )
    write_machine_files(ds, build, downloads, charted)
    return {"gpu_pages": len(gpu_list), "tables": len(downloads), "gpu_charts": len(charted)}


def add_version_files(build: Path, version_dir: Path) -> None:
    """Copy a version's pages, downloads and per-GPU charts from `build` into `version_dir`.

    The front page replaces the `index.html` rendered from report.md; everything else is
    new. Called by `build_site` on the version folder before it is swapped in.
    """
    shutil.copytree(build / "pages", version_dir, dirs_exist_ok=True)
    shutil.copytree(build / "data", version_dir / "data", dirs_exist_ok=True)
    gpu_charts = build / "charts" / "gpu"
    if gpu_charts.is_dir():
        shutil.copytree(gpu_charts, version_dir / "charts" / "gpu", dirs_exist_ok=True)


__all__ = ["add_version_files", "frame_table", "render_report_markdown", "write_version"]
