"""Site version names and how a publish carries them (issue 25 item 8), on small real files."""

import datetime as dt
import os
from pathlib import Path

import pytest

from reports.changes import previous_version
from reports.site import newest_version_of, render_index, render_version, version_for
from tests.warehouse.test_publish import load_day
from warehouse.db import connect
from warehouse.publish import publish
from warehouse.release import PublishError, SiteVersion
from warehouse.versions import (
    is_version,
    newest_first,
    next_version,
    parse_version,
    version_date,
)

DAY = dt.date(2026, 10, 7)


def test_names_are_a_date_and_an_optional_number_of_two_or_more():
    assert parse_version("2026-10-07") == (DAY, 1)
    assert parse_version("2026-10-07.2") == (DAY, 2)
    assert parse_version("2026-10-07.10") == (DAY, 10)
    assert version_date("2026-10-07.10") == "2026-10-07"
    for bad in (
        "2026-10-07.1",  # the first run is the bare date: one name per version
        "2026-10-07.02",
        "2026-10-07.",
        "2026-13-01",
        "2026-10-07/../x",
        "../2026-10-07",
        "2026-10-07.2/..",
        "latest",
        "2026-10-07.12345",
        "",
    ):
        assert not is_version(bad), bad
        with pytest.raises(ValueError, match="not a site version"):
            parse_version(bad)


def test_versions_sort_by_date_then_number_not_as_strings():
    names = ["2026-10-07.9", "2026-10-14", "2026-10-07", "2026-10-07.10", "2026-10-07.2"]
    assert newest_first(names) == [
        "2026-10-14",
        "2026-10-07.10",
        "2026-10-07.9",
        "2026-10-07.2",
        "2026-10-07",
    ]
    html = render_index(names)  # the index sorts too, whatever order it is given
    hrefs = [line.split('"')[1] for line in html.splitlines() if 'href="2026' in line]
    assert hrefs == [f"{n}/index.html" for n in newest_first(names)]
    with pytest.raises(ValueError, match="not a site version"):
        render_index(["2026-10-07", "../etc"])


def test_the_next_version_of_a_date():
    assert next_version([], DAY) == "2026-10-07"
    assert next_version(["2026-10-06", "latest", "index.html"], DAY) == "2026-10-07"
    assert next_version(["2026-10-07"], DAY) == "2026-10-07.2"
    assert next_version(["2026-10-07", "2026-10-07.9", "2026-10-08"], DAY) == "2026-10-07.10"


def version_folder(site: Path, name: str, data: bool = True) -> Path:
    folder = site / name
    (folder / "data" if data else folder).mkdir(parents=True)
    (folder / "index.html").write_text(f"version {name}", encoding="utf-8")
    return folder


def test_what_changed_compares_with_the_version_before_in_version_order(tmp_path):
    site = tmp_path / "site"
    for name in ("2026-10-06", "2026-10-07", "2026-10-07.9", "2026-10-07.10"):
        version_folder(site, name)
    version_folder(site, "2026-10-07.11", data=False)  # kept no tables: skipped
    (site / "latest").symlink_to("2026-10-07.10")
    assert previous_version(site, "2026-10-14").name == "2026-10-07.10"
    assert previous_version(site, "2026-10-07.10").name == "2026-10-07.9"
    assert previous_version(site, "2026-10-07.2").name == "2026-10-07"
    assert previous_version(site, "2026-10-07").name == "2026-10-06"
    assert previous_version(site, "2026-10-06") is None
    assert version_for(site, DAY) == "2026-10-07.12"
    assert newest_version_of(site, DAY) == "2026-10-07.11"
    assert newest_version_of(site, dt.date(2026, 10, 8)) is None


def test_render_version_refuses_a_name_that_is_not_a_version_of_the_run_date(tmp_path):
    for bad in ("../escape", "2026-10-08", "2026-10-07.1"):
        with pytest.raises(ValueError, match="not a"):
            render_version(tmp_path, DAY, "# r", [], "# m", version=bad)
    assert not any(tmp_path.iterdir())


def test_publish_carries_versions_newest_first_and_never_replaces_one(tmp_path):
    """Nine versions of one date in the layout before releases, then the tenth, a backfill
    of an older date and an attempt to publish a name again."""
    con = connect(tmp_path / "w.duckdb")
    load_day(con, "2026-10-07")
    out, site = tmp_path / "published", tmp_path / "site"
    for name in ["2026-10-07", *(f"2026-10-07.{n}" for n in range(2, 10))]:
        version_folder(site, name)
    rendered = tmp_path / "build"

    def publish_as(name: str):
        folder = version_folder(rendered, name)
        return publish(con, out, site=SiteVersion(name, folder, render_index), site_dir=site)

    publish_as("2026-10-07.10")
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.index('"2026-10-07.10/') < index.index('"2026-10-07.9/')
    assert index.index('"2026-10-07.2/') < index.index('"2026-10-07/')
    assert (site / "latest" / "index.html").read_text(encoding="utf-8") == "version 2026-10-07.10"

    # A backfilled earlier date is listed in its place; `latest` stays on the newest.
    result = publish_as("2026-09-20")
    assert (site / "latest" / "index.html").read_text(encoding="utf-8") == "version 2026-10-07.10"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.index('"2026-10-07/') < index.index('"2026-09-20/')
    assert result.release == "r-000002"

    def inodes() -> dict[str, int]:
        return {p.name: (p / "index.html").stat().st_ino for p in site.iterdir() if p.is_dir()}

    kept = inodes()
    with pytest.raises(PublishError, match="site version 2026-10-07.9 is already published"):
        publish(
            con,
            out,
            site=SiteVersion("2026-10-07.9", rendered / "2026-10-07.10", render_index),
            site_dir=site,
        )
    assert (site / "2026-10-07.9" / "index.html").read_text(encoding="utf-8") == (
        "version 2026-10-07.9"
    )
    assert inodes() == kept
    assert os.readlink(tmp_path / "releases" / "current") == "r-000002"
    with pytest.raises(PublishError, match="not a site version"):
        publish(
            con,
            out,
            site=SiteVersion("../x", rendered / "2026-10-07.10", render_index),
            site_dir=site,
        )
    con.close()
