"""A rerun with an as-of date already published (issue 25 item 8): a new version beside it.

The cheapest real rerun: a copy of the shared build (`built`) on which only the steps after
the model run again (the report, the site and the publish: the same warehouse, rendered and
published a second time), as a rerun of the same date does after the model.
"""

import os

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.defs.report.assets import published_warehouse, report, site
from pipeline.defs.resources import GpuvalueSettings
from reports.site import render_index
from tests.conftest import copy_build, digest
from warehouse.db import connect
from warehouse.publish import publish
from warehouse.release import CURRENT, PublishError, SiteVersion


@pytest.fixture(scope="module")
def rerun(built, tmp_path_factory):
    """(the first version's name, its files' digest before the rerun, the rerun's build)."""
    out = copy_build(built, tmp_path_factory.mktemp("rerun") / "root")
    first = os.readlink(out.site / "latest").rsplit(".", 1)[0].rsplit("/", 1)[-1]
    before = digest(out.site / first)
    settings = GpuvalueSettings(
        build_dir=str(out.root / ".build"),
        site_dir=str(out.site),
        published_dir=str(out.published),
    )
    result = dg.materialize(
        [report, site, published_warehouse],
        resources={"settings": settings, "warehouse": DuckDBResource(database=str(out.warehouse))},
        raise_on_error=False,
    )
    assert result.success
    return first, before, out


def test_a_rerun_is_a_new_version_and_the_first_stays_byte_identical(rerun):
    first, before, out = rerun
    assert first == "2026-10-07"
    again = f"{first}.2"
    assert digest(out.site / first) == before  # every file, byte for byte
    assert (out.site / again / "index.html").is_file()
    # `latest` shows the rerun; the index lists both, newest first.
    assert os.path.samefile(out.site / "latest" / "index.html", out.site / again / "index.html")
    index = (out.site / "index.html").read_text(encoding="utf-8")
    assert index.index(f'href="{again}/index.html"') < index.index(f'href="{first}/index.html"')


def test_the_rerun_says_what_changed_since_the_first(rerun):
    first, _, out = rerun
    again = out.site / f"{first}.2"
    report_md = (again / "report.md").read_text(encoding="utf-8")
    assert report_md.startswith(f"# gpuvalue report, {first}.2")
    changed = report_md.split(f"## What changed since {first}\n")[1].split("\n## ")[0]
    assert f"run 2 of the as-of date {first}" in changed
    assert "Nothing changed beyond the noise." in changed  # the same warehouse, published again
    # The first version said it was the first; it still does.
    assert "This is the first published version" in (out.site / first / "report.md").read_text(
        encoding="utf-8"
    )
    # Dates stay dates: the model tables of the rerun are still the as-of date's rows.
    downloads = (again / "downloads.html").read_text(encoding="utf-8")
    assert f"<code>run_date = {first}</code>" in downloads
    assert f"gpuvalue {first}.2: downloads" in downloads


def test_a_published_version_is_never_published_again(rerun, tmp_path):
    """The publish itself refuses a name already published, whatever calls it."""
    first, before, out = rerun
    current = os.readlink(out.root / "releases" / CURRENT)
    con = connect(out.warehouse)
    try:
        folder = out.root / ".build" / first / "site" / f"{first}.2"
        with pytest.raises(PublishError, match=f"site version {first} is already published"):
            publish(
                con,
                out.published,
                site=SiteVersion(first, folder, render_index),
                site_dir=out.site,
            )
    finally:
        con.close()
    assert os.readlink(out.root / "releases" / CURRENT) == current
    assert digest(out.site / first) == before
