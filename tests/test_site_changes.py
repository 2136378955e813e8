"""What changed since the previous version (issue 13): two runs on different data.

Night 2 runs on a copy of night 1 with other data: a used price up 2.2x, a GPU priced for
the first time and a cloud provider failing. Its build runs in a module fixture before this
module's browser starts (a running Playwright loop and Dagster's run do not mix)."""

import hashlib
import re
import shutil
from pathlib import Path

import pytest

from tests.conftest import build
from tests.test_site_pages import PHONE, browser, horizontal_overflow, open_page  # noqa: F401

NIGHT2 = "2026-10-01"


def _digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def night2(built, tmp_path_factory):
    """(run date of night 1, digest of its version before night 2, night 2's build)."""
    import duckdb

    con = duckdb.connect(str(built.published / "gpuvalue.duckdb"), read_only=True)
    run_date = str(con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0])
    con.close()
    tmp = tmp_path_factory.mktemp("night2")
    root = tmp / "root"
    shutil.copytree(built.root, root)
    before = _digest(root / "site" / run_date)
    data = tmp / "data"
    from sources.bundled import DATA_DIR

    shutil.copytree(DATA_DIR, data)
    uk = data / "prices" / "history" / "ebay-sold-uk.csv"
    lines = uk.read_text(encoding="utf-8").splitlines(keepends=True)
    out = [lines[0]]
    for line in lines[1:]:
        fields = line.split(",")
        if fields[3] == "rtx-3080-ti":
            fields[5] = f"{float(fields[5]) * 2.2:.2f}"
        out.append(",".join(fields))
    out.append(
        "2026-07-07,ebay-sold-uk,used,rx-9060-xt-16gb,Sapphire PULSE Radeon RX 9060 XT 16GB,"
        "245.00,GBP,https://www.ebay.co.uk/itm/100000000001,100000000001,"
        "test fixture (a second night's data)\n"
    )
    uk.write_text("".join(out), encoding="utf-8")
    azure = data / "cloud" / "azure.csv"
    rows = azure.read_text(encoding="utf-8").splitlines(keepends=True)
    rows[3] = rows[3].replace(",on_demand,", ",on_demnd,")
    azure.write_text("".join(rows), encoding="utf-8")
    result = build(root, data, as_of=NIGHT2)
    assert result.result.success
    return run_date, before, result


def test_a_published_version_is_immutable(night2):
    run_date, before, out = night2
    assert _digest(out.site / run_date) == before
    versions = sorted(p.name for p in out.site.iterdir() if re.match(r"\d{4}-", p.name))
    assert versions == [run_date, NIGHT2]
    index = (out.site / "index.html").read_text(encoding="utf-8")
    assert f'href="{run_date}/index.html"' in index and f'href="{NIGHT2}/index.html"' in index


def test_what_changed_is_in_the_report(night2):
    run_date, _, out = night2
    report = (out.site / NIGHT2 / "report.md").read_text(encoding="utf-8")
    changed = report.split(f"## What changed since {run_date}")[1].split("\n## ")[0]
    assert "| rtx-3080-ti | used | $458 |" in changed  # its price moved beyond the noise
    assert "| 16-bit training, buy used ≤ $2,500 | 1× rtx-3080-ti |" in changed
    assert "| rx-9060-xt-16gb | newly priced (used) |" in changed
    assert "| cloud prices | azure | stale | failed |" in changed
    assert "| rtx-3080-ti | 1 | 11 | down 10 |" in changed  # 16-bit training, used


def test_what_changed_is_on_the_front_page(night2, browser):  # noqa: F811
    run_date, _, out = night2
    page, seen = open_page(browser, out.site / "latest" / "index.html", PHONE)
    section = page.locator("#changes")
    assert section.locator("h2").inner_text() == f"What changed since {run_date}"
    assert section.locator("table").count() == 5  # verdicts, ranks, prices, GPUs, inputs
    assert "rx-9060-xt-16gb" in section.inner_text()
    assert horizontal_overflow(page) <= 0 and not seen["errors"]
    page.close()
