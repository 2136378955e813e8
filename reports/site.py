"""The static site: one folder per run date, `latest/`, and an index of versions.

Safety (GUIDE section 6): the report's Markdown is rendered with raw HTML disabled and the
page template autoescapes, so scraped text can never become markup; every path built from
data is checked to stay inside its root. A version is rendered into the build folder here;
`warehouse.publish` puts it on the site together with the warehouse, as one release (the
site's `<date>/`, `latest/` and `index.html` then change in one atomic swap with the
published warehouse).
"""

import datetime as dt
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import jinja2
from markdown_it import MarkdownIt

_TEMPLATES = jinja2.Environment(
    loader=jinja2.PackageLoader("reports", "templates"),
    autoescape=jinja2.select_autoescape(default=True, default_for_string=True),
    undefined=jinja2.StrictUndefined,
)
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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
) -> Path:
    """Render the run's version of the site into `out_dir/<run_date>/` (replaced if there).

    The version has the report (`index.html`, `report.md`), the methodology page
    (`methodology.html`, `methodology.md`: the run's parameters, fitted constants,
    validation figures and spec conflicts) and `charts/`; `extra`, when given, adds files to
    the folder (reports.pages.add_version_files: the front page, GPU pages, downloads).
    Returns the version's folder.
    """
    version = run_date.isoformat()
    out_dir.mkdir(parents=True, exist_ok=True)
    folder = inside(out_dir, version)
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "charts").mkdir(parents=True)
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
    """`site/index.html`: the list of versions (newest first)."""
    for version in versions:
        if not _VERSION.match(version):
            raise ValueError(f"not a site version: {version!r}")
    return _TEMPLATES.get_template("index.html.j2").render(versions=versions)
