"""A rerun with an as-of date already published (issue 25 item 8): a new version beside it.

The rerun is the session's shared one (`rerun`, tests/conftest.py): a copy of the bundled
build on which the whole graph runs again on the same inputs (every bundled day ingested
again, then the model, the report, the site and the publish), as `make run` twice does.
"""

import os

import pytest

from reports.site import render_index
from tests.conftest import digest
from warehouse.db import connect
from warehouse.publish import publish
from warehouse.release import CURRENT, PublishError, SiteVersion


@pytest.fixture(scope="module")
def rerun_site(rerun):
    """(the first version's name, its files' digest before the rerun, the rerun's build)."""
    assert rerun.build.result.success
    return rerun.first, rerun.site_before, rerun.build


def test_a_rerun_is_a_new_version_and_the_first_stays_byte_identical(rerun_site):
    first, before, out = rerun_site
    assert first == "2026-10-07"
    again = f"{first}.2"
    assert digest(out.site / first) == before  # every file, byte for byte
    assert (out.site / again / "index.html").is_file()
    # `latest` shows the rerun; the index lists both, newest first.
    assert os.path.samefile(out.site / "latest" / "index.html", out.site / again / "index.html")
    index = (out.site / "index.html").read_text(encoding="utf-8")
    assert index.index(f'href="{again}/index.html"') < index.index(f'href="{first}/index.html"')


def test_the_rerun_says_what_changed_since_the_first(rerun_site):
    first, _, out = rerun_site
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


def test_a_published_version_is_never_published_again(rerun_site, tmp_path):
    """The publish itself refuses a name already published, whatever calls it."""
    first, before, out = rerun_site
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
