"""What changed since the previous version (issue 13): two runs on different data.

Night 2 is the shared second night (tests/conftest.py `second_night`): a copy of night 1
with other data, among it a used price up 2.2x, a GPU priced for the first time and a cloud
provider failing. Its build runs in a module fixture before this module's browser starts (a
running Playwright loop and Dagster's run do not mix)."""

import re

import pytest

from tests.conftest import NIGHT2, digest
from tests.reports.test_site_pages import PHONE, browser, horizontal_overflow, open_page  # noqa: F401


@pytest.fixture(scope="module")
def night2(second_night):
    """(run date of night 1, digest of its version before night 2, night 2's build)."""
    assert second_night.build.result.success
    return second_night.run_date, second_night.site_before, second_night.build


def test_a_published_version_is_immutable(night2):
    run_date, before, out = night2
    assert digest(out.site / run_date) == before
    versions = sorted(p.name for p in out.site.iterdir() if re.match(r"\d{4}-", p.name))
    assert versions == [run_date, NIGHT2]
    index = (out.site / "index.html").read_text(encoding="utf-8")
    assert f'href="{run_date}/index.html"' in index and f'href="{NIGHT2}/index.html"' in index


def test_what_changed_is_in_the_report(night2):
    run_date, _, out = night2
    report = (out.site / NIGHT2 / "report.md").read_text(encoding="utf-8")
    changed = report.split(f"## What changed since {run_date}")[1].split("\n## ")[0]
    assert "| rtx-3080-ti | used | $458 |" in changed  # its price moved beyond the noise
    # The first night's 8-bit inference pick to buy used for up to $2,500 (rank 1 of the used
    # 8-bit ranking): the price jump takes it off.
    assert "| 8-bit inference, buy used ≤ $2,500 | 1× rtx-3080-ti |" in changed
    assert "| rx-9060-xt-16gb | newly priced (used) |" in changed
    # Cloud inputs count per provider x pricing kind, each against its own window: Azure's
    # list prices were fresh and its spot prices stale before the failed night.
    assert "| cloud prices | azure (list) | ok | failed |" in changed
    assert "| cloud prices | azure (spot) | stale | failed |" in changed
    # With issue 22's relative performance (transformer weighting, FP8 runs split from
    # 16-bit ones, the 16-bit bridge by architecture) the
    # same price jump costs it 4 ranks.
    assert "| 8-bit inference | used | rtx-3080-ti | 1 | 5 | down 4 |" in changed


def test_what_changed_is_on_the_front_page(night2, browser):  # noqa: F811
    run_date, _, out = night2
    page, seen = open_page(browser, out.site / "latest" / "index.html", PHONE)
    section = page.locator("#changes")
    assert section.locator("h2").inner_text() == f"What changed since {run_date}"
    assert section.locator("table").count() == 5  # verdicts, ranks, prices, GPUs, inputs
    assert "rx-9060-xt-16gb" in section.inner_text()
    assert horizontal_overflow(page) <= 0 and not seen["errors"]
    page.close()
