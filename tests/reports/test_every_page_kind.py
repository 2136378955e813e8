"""Every kind of page of a version, with and without JavaScript (issue 25, "Done when").

One page of each kind (front, tables, LLM, methodology, the GPU list and a sorted copy,
downloads, a GPU page, the compare index and a compare page, the site's list of versions),
served over a local http.server and opened in headless Debian Chromium at phone width: no
console error, no failed request, no sideways scroll, with JavaScript on and off. The
screenshots of the front page, a compare page and a GPU page at both widths (their first
three screens) are kept in `.build/screenshots/` of the checkout (git-ignored) as the run's
artefacts.
"""

from pathlib import Path

import pytest

from tests.reports.test_interactive_charts import new_tab, served, visit  # noqa: F401
from tests.reports.test_site_pages import DESKTOP, PHONE, screenshot_top

KINDS = (
    "index.html",
    "tables.html",
    "llm.html",
    "methodology.html",
    "gpus.html",
    "gpus-by-perf-per-dollar.html",
    "downloads.html",
    "gpu/rtx-4090.html",
    "compare/index.html",
    "compare/rtx-3090-vs-rtx-4090.html",
    "../index.html",  # the list of versions, outside any version
)
SHOTS = {
    "front": "index.html",
    "compare": "compare/rtx-3090-vs-rtx-4090.html",
    "gpu": "gpu/rtx-4090.html",
}
ARTEFACTS = Path(__file__).resolve().parents[2] / ".build" / "screenshots"


@pytest.mark.parametrize("javascript", [True, False], ids=["js", "no-js"])
def test_every_kind_of_page_loads_cleanly_on_a_phone(browser, served, javascript):  # noqa: F811
    page, seen = new_tab(browser, PHONE, javascript)
    for kind in KINDS:
        visit(page, seen, served + kind)
        if javascript:
            page.wait_for_timeout(300)  # the search box and the charts mount after load
        assert page.title(), kind
        assert not seen["console"], (kind, seen["console"])
        assert not seen["failed"], (kind, seen["failed"])
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE, (kind, width)
    page.context.close()


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_screenshots_of_the_front_a_compare_and_a_gpu_page_are_kept(
    browser,
    served,  # noqa: F811
    width,
):
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page, seen = new_tab(browser, width)
    for name, kind in SHOTS.items():
        visit(page, seen, served + kind)
        path = ARTEFACTS / f"{name}-{width}.png"
        screenshot_top(page, path)
        assert path.stat().st_size > 30_000, path
        assert not seen["console"], (kind, seen["console"])
    page.context.close()
