"""Search on every page (issue 25, item 5): the Pagefind index each version carries, the
search box on every page, and searching in a real browser over a local HTTP server (a page
opened from file:// cannot fetch the index). No external network: the server listens on
127.0.0.1 and every request must go there."""

import json
import re
import shutil
import stat
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from reports.search import BUNDLE, SCRIPT, SearchIndexError, html_files, index_version
from tests.reports.test_site_pages import horizontal_overflow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PHONE, DESKTOP = 390, 1400

PAGE = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>
</head><body><nav data-pagefind-ignore>navigation words zebra</nav>
<main><h1>{title}</h1><p>{text}</p></main>
<footer data-pagefind-ignore>footer words</footer></body></html>"""


def small_site(folder: Path) -> Path:
    (folder / "gpu").mkdir(parents=True)
    (folder / "index.html").write_text(PAGE.format(title="Front", text="the best GPU"))
    (folder / "gpu" / "rtx-4090.html").write_text(
        PAGE.format(title="GeForce RTX 4090", text="rtx-4090, 24 GB")
    )
    return folder


# --- the indexing step --------------------------------------------------------------------


def test_index_version_writes_the_bundle_and_the_script(tmp_path):
    folder = small_site(tmp_path / "2026-10-07")
    result = index_version(folder)
    assert (result.html_files, result.pages) == (2, 2) and result.words > 0
    assert result.seconds > 0
    entry = json.loads((folder / BUNDLE / "pagefind-entry.json").read_text())
    assert list(entry["languages"]) == ["en"] and entry["languages"]["en"]["page_count"] == 2
    for name in ("pagefind.js", "pagefind-ui.js", "pagefind-ui.css", "pagefind-worker.js"):
        assert (folder / BUNDLE / name).stat().st_size > 0
    assert "PagefindUI" in (folder / SCRIPT).read_text()
    # Pagefind's own files are not pages: indexing again finds the same two.
    assert sorted(p.name for p in html_files(folder)) == ["index.html", "rtx-4090.html"]
    assert index_version(folder).pages == 2


def fake_pagefind(tmp_path: Path, body: str) -> Path:
    exe = tmp_path / "fake-pagefind"
    exe.write_text(f"#!/bin/sh\n{body}\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    return exe


def test_a_failed_index_is_an_error_naming_the_folder_and_the_output(tmp_path):
    folder = small_site(tmp_path / "site")
    exe = fake_pagefind(tmp_path, "echo 'Error: could not read site' >&2; exit 3")
    with pytest.raises(SearchIndexError, match=r"exit 3") as error:
        index_version(folder, executable=exe)
    assert str(folder) in str(error.value) and "could not read site" in str(error.value)


def test_a_hung_index_times_out(tmp_path):
    folder = small_site(tmp_path / "site")
    with pytest.raises(SearchIndexError, match=r"took over 0.5 s"):
        index_version(folder, timeout=0.5, executable=fake_pagefind(tmp_path, "sleep 5"))


def test_a_page_left_out_or_no_bundle_is_an_error(tmp_path):
    folder = small_site(tmp_path / "site")
    one = fake_pagefind(tmp_path, "echo 'Indexed 1 page'; echo 'Indexed 3 words'")
    with pytest.raises(SearchIndexError, match=r"indexed 1 of the 2 pages"):
        index_version(folder, executable=one)
    both = fake_pagefind(tmp_path, "echo 'Indexed 2 pages'")
    with pytest.raises(SearchIndexError, match=r"no pagefind/pagefind-entry.json"):
        index_version(folder, executable=both)
    with pytest.raises(SearchIndexError, match=r"could not start"):
        index_version(folder, executable=tmp_path / "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SearchIndexError, match=r"no HTML page"):
        index_version(empty)


# --- the built site -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def version(built) -> Path:
    dated = [p for p in built.site.iterdir() if p.is_dir() and p.name != "latest"]
    assert len(dated) == 1
    return dated[0]


def test_every_page_of_the_version_has_the_search_box(built, version):
    pages = html_files(version)
    assert len(pages) > 150 and (version / "gpu" / "rtx-4090.html") in pages
    entry = json.loads((version / BUNDLE / "pagefind-entry.json").read_text())
    assert entry["languages"]["en"]["page_count"] == len(pages)
    event = built.result.asset_materializations_for_node("site")[0]
    assert event.metadata["search_pages"].value == len(pages)
    assert event.metadata["search_seconds"].value > 0
    for page in pages:
        html = page.read_text(encoding="utf-8")
        box = re.search(
            r'<div id="search"[^>]*data-pagefind-ignore[^>]*><a [^>]*href="([^"]+)"', html
        )
        assert box, page
        assert (page.parent / box.group(1)).resolve() == (version / "gpus.html").resolve(), page
        assert "<nav data-pagefind-ignore>" in html and "<footer data-pagefind-ignore>" in html
        # Scripts and the stylesheet are the version's own files, found where the page says.
        assets = re.findall(r'<script src="([^"]+)"', html) + re.findall(
            r'<link rel="stylesheet" href="([^"]+)"', html
        )
        # (plus the charts' own script, reports/charts/interactive.py, on pages with charts)
        names = sorted(Path(a).name for a in assets if Path(a).name != "interactive.js")
        assert names == ["pagefind-ui.css", "pagefind-ui.js", "search.js"], page
        for asset in assets:
            assert "//" not in asset and (page.parent / asset).is_file(), (page, asset)
        csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
        assert "script-src 'self' 'wasm-unsafe-eval'" in csp and "connect-src 'self'" in csp
        assert "unsafe-eval'" not in csp.replace("'wasm-unsafe-eval'", "") and "http" not in csp
    # latest/ is the same version: its own copy of the index.
    assert (built.site / "latest" / BUNDLE / "pagefind-entry.json").is_file()


# --- searching in a browser ---------------------------------------------------------------


def watched(browser, width: int, javascript: bool = True):
    """A page in its own context, with its requests and console errors recorded."""
    context = browser.new_context(
        viewport={"width": width, "height": 900}, java_script_enabled=javascript
    )
    page = context.new_page()
    seen = {"requests": [], "errors": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    # The browser's own /favicon.ico request is not the page's (the favicon is item 11).
    page.on(
        "console",
        lambda m: (
            m.type == "error"
            and not m.location.get("url", "").endswith("/favicon.ico")
            and seen["errors"].append(m.text)
        ),
    )
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    return page, seen


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_typing_4090_on_the_front_page_finds_its_pages(built, version, server, browser, width):
    page, seen = watched(browser, width)
    page.goto(f"{server}/{version.name}/index.html")
    page.wait_for_load_state("load")
    box = page.locator("#search input")
    assert box.count() == 1 and page.locator("#search .search-fallback").count() == 0
    box.fill("4090")
    # A selector, not wait_for_function: the CSP forbids evaluating strings ('unsafe-eval').
    page.wait_for_selector(
        '#search a.pagefind-ui__result-link[href$="/gpu/rtx-4090.html"]', timeout=60_000
    )
    links = page.eval_on_selector_all(
        "#search .pagefind-ui__result-link", "els => els.map(a => a.href)"
    )
    assert f"{server}/{version.name}/gpu/rtx-4090.html" in links
    for link in links:
        path = urllib.parse.urlparse(link).path
        assert path.startswith(f"/{version.name}/"), link
        assert (built.site / path.lstrip("/")).is_file(), link
        with urllib.request.urlopen(link, timeout=10) as response:  # noqa: S310 - 127.0.0.1
            assert response.status == 200
    assert horizontal_overflow(page) <= 0
    assert not seen["errors"], seen["errors"]
    assert all(u.startswith(server) for u in seen["requests"]), seen["requests"]
    if width == PHONE:
        shots = built.root / ".build" / "screenshots"
        shots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(shots / f"search-{width}.png"))
    page.context.close()


def test_a_gpu_page_searches_the_same_version(version, server, browser):
    page, seen = watched(browser, DESKTOP)
    page.goto(f"{server}/latest/gpu/rtx-3090.html")
    page.locator("#search input").fill("4090")
    page.wait_for_selector(
        '#search a.pagefind-ui__result-link[href$="/gpu/rtx-4090.html"]', timeout=60_000
    )
    links = page.eval_on_selector_all(
        "#search .pagefind-ui__result-link", "els => els.map(a => a.href)"
    )
    # Results stay in the folder the reader is in (latest/ here), never another version's.
    assert f"{server}/latest/gpu/rtx-4090.html" in links
    assert all(u.startswith(f"{server}/latest/") for u in links), links
    assert not seen["errors"], seen["errors"]
    page.context.close()


def test_a_page_opened_from_a_file_keeps_the_link(version, browser):
    page, seen = watched(browser, DESKTOP)
    page.goto((version / "gpu" / "rtx-4090.html").as_uri())
    page.wait_for_load_state("load")
    assert page.locator("#search a.search-fallback").is_visible()
    assert page.locator("#search input").count() == 0
    assert not seen["errors"], seen["errors"]
    page.context.close()


def test_without_javascript_the_box_is_a_link_to_the_gpu_list(version, server, browser):
    page, seen = watched(browser, PHONE, javascript=False)
    for name in ("index.html", "gpu/rtx-4090.html", "methodology.html"):
        page.goto(f"{server}/{version.name}/{name}")
        fallback = page.locator("#search a.search-fallback")
        assert fallback.is_visible() and page.locator("#search input").count() == 0, name
        fallback.click()
        page.wait_for_load_state("load")
        assert page.url == f"{server}/{version.name}/gpus.html", name
        assert page.locator("table tbody tr").count() > 150
    assert not seen["errors"], seen["errors"]
    page.context.close()
