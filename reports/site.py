"""The static site: one folder per run date, `latest/`, and an index of versions.

Safety (GUIDE section 6): the report's Markdown is rendered with raw HTML disabled and the
page template autoescapes, so scraped text can never become markup; every path built from
data is checked to stay inside the site root. Each version is assembled in a temporary
folder and swapped in with `os.replace`, so a failed build leaves the previous site intact.
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


def _swap_in(staging: Path, target: Path) -> None:
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(staging, target)
    shutil.rmtree(old, ignore_errors=True)


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


def build_site(
    site_dir: Path,
    run_date: dt.date,
    report_markdown: str,
    chart_files: list[Path],
    methodology_markdown: str,
    extra: Callable[[Path], None] | None = None,
) -> Path:
    """Write `site/<run_date>/`, refresh `site/latest/` and `site/index.html`.

    Each version has the report (`index.html`, `report.md`) and the methodology page
    (`methodology.html`, `methodology.md`: the run's parameters, fitted constants,
    validation figures and spec conflicts). `extra`, when given, adds files to the version
    folder before it is swapped in (reports.pages.add_version_files: the front page, GPU
    pages, downloads). Returns the path of the version's index.html.
    """
    site_dir.mkdir(parents=True, exist_ok=True)
    version = run_date.isoformat()
    staging = inside(site_dir, f".{version}.staging")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "charts").mkdir(parents=True)
    for chart in chart_files:
        shutil.copy2(chart, staging / "charts" / chart.name)
    _write_page(staging, "index", f"gpuvalue {version}", report_markdown, version)
    # The report links to report.md; keep that name for the Markdown download.
    os.replace(staging / "index.md", staging / "report.md")
    _write_page(
        staging, "methodology", f"gpuvalue {version}: methodology", methodology_markdown, version
    )
    if extra is not None:
        extra(staging)

    latest_staging = inside(site_dir, ".latest.staging")
    shutil.rmtree(latest_staging, ignore_errors=True)
    shutil.copytree(staging, latest_staging)
    _swap_in(staging, inside(site_dir, version))
    _swap_in(latest_staging, inside(site_dir, "latest"))

    versions = sorted(
        (p.name for p in site_dir.iterdir() if p.is_dir() and _VERSION.match(p.name)),
        reverse=True,
    )
    index = _TEMPLATES.get_template("index.html.j2").render(versions=versions)
    tmp_index = inside(site_dir, ".index.html.tmp")
    tmp_index.write_text(index, encoding="utf-8")
    os.replace(tmp_index, site_dir / "index.html")
    return site_dir / version / "index.html"
