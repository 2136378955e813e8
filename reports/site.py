"""The static site: one folder per version, `latest/`, and an index of versions.

A version is named by its run's as-of date; a rerun of a date already published is the next
version of that date, `<date>.2`, `<date>.3`, ... (warehouse/versions.py), so a published
version is never rewritten.

Safety (GUIDE section 6): the report's Markdown is rendered with raw HTML disabled and the
page template autoescapes, so scraped text can never become markup; every path built from
data is checked to stay inside its root. A version is rendered into the build folder here;
`warehouse.publish` puts it on the site together with the warehouse, as one release (the
site's `<date>/`, `latest/` and `index.html` then change in one atomic swap with the
published warehouse).
"""

import datetime as dt
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt

from reports.report import REPORT_FORMAT
from warehouse.versions import is_version, newest_first, next_version, parse_version

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("reports", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
)
_TEMPLATES.globals["report_format"] = REPORT_FORMAT
FAVICON = Path(__file__).parent / "static" / "favicon.svg"
# The file of a build folder naming the version its pages were rendered as (the report
# step decides it; the site and publish steps read it).
VERSION_FILE = "version.txt"


def render_report_html(markdown: str) -> str:
    """Markdown to HTML with raw HTML disabled (commonmark + tables)."""
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown)


def inside(root: Path, *parts: str) -> Path:
    """`root/parts...`, refusing any path that escapes `root`."""
    path = root.joinpath(*parts).resolve()
    if not path.is_relative_to(root.resolve()):
        raise ValueError(f"refusing to write outside {root}: {path}")
    return path


def _write_page(folder: Path, name: str, title: str, markdown: str, version: str) -> None:
    """`<name>.md` and `<name>.html` (the Markdown rendered into the page template)."""
    (folder / f"{name}.md").write_text(markdown, encoding="utf-8")
    page = _TEMPLATES.get_template("version.html.j2").render(
        version=version,
        title=title,
        report_html=jinja2.utils.markupsafe.Markup(render_report_html(markdown)),
        built_at=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )
    (folder / f"{name}.html").write_text(page, encoding="utf-8")


def render_version(
    out_dir: Path,
    run_date: dt.date,
    report_markdown: str,
    chart_files: list[Path],
    methodology_markdown: str,
    extra: Callable[[Path], None] | None = None,
    version: str | None = None,
) -> Path:
    """Render the run's version of the site into `out_dir/<version>/` (replaced if there).

    `version` is the name the pages were written under (default: the run date); it must be
    a version of `run_date`. `out_dir` is a build folder, never the published site.

    The version has the report (`index.html`, `report.md`), the methodology page
    (`methodology.html`, `methodology.md`: the run's parameters, fitted constants,
    validation figures and spec conflicts) and `charts/`; `extra`, when given, adds files to
    the folder (reports.pages.add_version_files: the front page, GPU pages, downloads).
    Returns the version's folder.
    """
    version = version or run_date.isoformat()
    if parse_version(version)[0] != run_date:
        raise ValueError(f"version {version!r} is not a version of the run date {run_date}")
    out_dir.mkdir(parents=True, exist_ok=True)
    folder = inside(out_dir, version)
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "charts").mkdir(parents=True)
    # The site's own icon, in every version (the pages link it; CSP img-src 'self').
    shutil.copy2(FAVICON, folder / FAVICON.name)
    for chart in chart_files:
        shutil.copy2(chart, inside(folder, "charts", chart.name))
    _write_page(folder, "index", f"gpuvalue {version}", report_markdown, version)
    # The report links to report.md; keep that name for the Markdown download.
    os.replace(folder / "index.md", folder / "report.md")
    _write_page(
        folder, "methodology", f"gpuvalue {version}: methodology", methodology_markdown, version
    )
    if extra is not None:
        extra(folder)
    return folder


def render_index(versions: list[str]) -> str:
    """`site/index.html`: the list of versions, newest first (by date, then number)."""
    for version in versions:
        if not is_version(version):
            raise ValueError(f"not a site version: {version!r}")
    return _TEMPLATES.get_template("index.html.j2").render(versions=newest_first(versions))


def published_versions(site_dir: Path | None) -> list[str]:
    """The versions the published site lists (its version folders or links), newest first."""
    if site_dir is None or not Path(site_dir).is_dir():
        return []
    return newest_first(p.name for p in Path(site_dir).iterdir() if is_version(p.name))


def version_for(site_dir: Path | None, run_date: dt.date) -> str:
    """The version a run dated `run_date` is published as: the next free name of its date."""
    return next_version(published_versions(site_dir), run_date)


def newest_version_of(site_dir: Path | None, run_date: dt.date) -> str | None:
    """The newest published version of `run_date`, or None when the date is not published."""
    return next((v for v in published_versions(site_dir) if parse_version(v)[0] == run_date), None)


def write_version_name(build: Path, version: str) -> None:
    """Record in the build folder the version its pages are rendered as."""
    if not is_version(version):
        raise ValueError(f"not a site version: {version!r}")
    (build / VERSION_FILE).write_text(version + "\n", encoding="utf-8")


def read_version_name(build: Path, run_date: dt.date) -> str:
    """The version the build's pages were rendered as (checked: a version of `run_date`)."""
    path = build / VERSION_FILE
    version = path.read_text(encoding="utf-8").strip() if path.is_file() else run_date.isoformat()
    if parse_version(version)[0] != run_date:
        raise ValueError(f"{path}: {version!r} is not a version of the run date {run_date}")
    return version
