"""Machine access to a version (issue 25 item 7): `llms.txt`, and the entry point for all of it.

`write_machine_files` is the one call `reports.pages.write_version` makes, after every page
and download of the version is in the build folder. It writes, beside the pages:
- `feed.atom`: "what changed", one entry per published version (reports/feed.py);
- `datapackage.json`: every download with its bytes, sha256 and Table Schema
  (reports/datapackage.py);
- `data/gpu/<gpu_id>.json`: one small file per GPU (reports/gpu_json.py);
- `llms.txt` (llmstxt.org): an H1, a blockquote summary, then sections of links, one line
  per page and per download, all relative to the version folder.
"""

import html
import re
from pathlib import Path

from reports.datapackage import PACKAGE_FILE, write_data_package
from reports.dataset import Dataset
from reports.downloads import Download
from reports.feed import FEED_FILE, write_feed
from reports.gpu_json import write_gpu_files

LLMS_FILE = "llms.txt"
# Pages every version has, with what each answers; files added by render_version after the
# build (methodology, report.md) are listed here because they are not in the build folder.
MAIN_PAGES = {
    "index.html": "the answer first: what to buy or rent per workload and budget, what changed, "
    "the charts and how old each input is",
    "tables.html": "every detailed table of the report",
    "gpus.html": "every catalog GPU with its key figures, linking its page",
    "llm.html": "serving each open LLM to N users: the cheapest systems to buy or rent, "
    "$ per million tokens",
    "downloads.html": "every table as CSV and Parquet, what each holds, the data sources' "
    "licences and DuckDB one-liners",
}
LATER_FILES = {
    "methodology.html": "how every figure is computed: parameters, fitted constants, "
    "validation and spec conflicts",
    "report.md": "the report as Markdown",
    "methodology.md": "the methodology page as Markdown",
}
_TITLE = re.compile(r"<title>(.*?)</title>", re.DOTALL)


def _page_title(path: Path) -> str:
    match = _TITLE.search(path.read_text(encoding="utf-8"))
    return html.unescape(match[1]).strip() if match else path.stem


def _link(text: str, href: str, note: str = "") -> str:
    return f"- [{text}]({href})" + (f": {note}" if note else "")


def _other_pages(pages: Path) -> list[str]:
    """Pages beyond the main ones and the GPU pages (compare pages, ...), by their title."""
    lines = []
    for path in sorted(pages.rglob("*.html")):
        href = path.relative_to(pages).as_posix()
        if href in MAIN_PAGES or href.startswith("gpu/"):
            continue
        lines.append(_link(_page_title(path), href))
    return lines


def _gpu_lines(ds: Dataset, pages: Path) -> list[str]:
    lines = []
    for gpu in ds.data.gpus.sort("gpu_id").iter_rows(named=True):
        href = f"gpu/{gpu['gpu_id']}.html"
        if not (pages / href).is_file():
            continue
        facts = ", ".join(
            str(x)
            for x in (
                gpu.get("vendor"),
                gpu.get("architecture"),
                f"{gpu['memory_gb']:g} GB" if gpu.get("memory_gb") else None,
            )
            if x
        )
        lines.append(
            _link(gpu.get("name") or gpu["gpu_id"], href, facts)
            + f" (JSON: data/gpu/{gpu['gpu_id']}.json)"
        )
    return lines


def _download_lines(downloads: list[Download]) -> list[str]:
    lines = []
    for d in downloads:
        note = f"{d.rows:,} rows; {d.scope}" + (f"; empty: {d.reason}" if d.reason else "")
        lines.append(_link(d.csv, f"data/{d.csv}", note))
        lines.append(_link(d.parquet, f"data/{d.parquet}", f"the same rows as {d.csv}"))
    return lines


def render_llms_txt(ds: Dataset, pages: Path, downloads: list[Download]) -> str:
    """llms.txt for the version whose pages are in `pages`."""
    main = [_link(name, name, note) for name, note in MAIN_PAGES.items() if (pages / name).exists()]
    main += [_link(name, name, note) for name, note in LATER_FILES.items()]
    sections = {
        "Pages": main + _other_pages(pages),
        "Machine-readable": [
            _link(FEED_FILE, FEED_FILE, "Atom feed of what changed, one entry per version"),
            _link(
                PACKAGE_FILE,
                PACKAGE_FILE,
                "Frictionless Data Package: every download with bytes, sha256 and schema",
            ),
            _link(LLMS_FILE, LLMS_FILE, "this file"),
        ],
        "Downloads": _download_lines(downloads),
        "GPU pages": _gpu_lines(ds, pages),
    }
    out = [
        f"# gpuvalue {ds.version}",
        "",
        f"> Which GPU gives the most deep-learning performance per dollar, to buy or to rent, "
        f"as of {ds.run_date}: relative performance from debiased published benchmarks, prices "
        "with their age and evidence, total cost of ownership with 95 % intervals, and LLM "
        "serving costs. Every figure carries its source and date.",
        "",
        "All links are relative to this version's folder; a published version never changes. "
        "Tables are CSV (gzipped when over 4 MB) and Parquet; column meanings are in "
        "docs/schema.md of the repository; the code is MIT-licensed and each data source's "
        "licence is on downloads.html.",
    ]
    for title, lines in sections.items():
        out += ["", f"## {title}", "", *lines]
    return "\n".join(out) + "\n"


def write_machine_files(
    ds: Dataset, build: Path, downloads: list[Download], charted: set[str]
) -> dict[str, int]:
    """Write the feed, datapackage.json, per-GPU JSON and llms.txt of the build's version.

    `build/pages` becomes the version folder and `build/data` its `data/`; `charted` are
    the GPUs with a price-history chart. Returns counts for the asset's metadata.
    """
    pages, data = build / "pages", build / "data"
    gpus = write_gpu_files(ds, data / "gpu", charted)
    counts = {
        "feed_entries": write_feed(ds, pages),
        "package_resources": write_data_package(ds, downloads, pages, data),
        "gpu_json": len(gpus),
    }
    (pages / LLMS_FILE).write_text(render_llms_txt(ds, pages, downloads), encoding="utf-8")
    return counts
