"""Charts that can be explored and never invent data (issue 25 item 6), on the built site.

The interactive view is a progressive enhancement: the page's own script (no inline
script: the CSP allows the site's own scripts only) loads the self-hosted Vega bundle and
replaces each SVG by the chart drawn from its Vega-Lite spec. Served over a local
http.server (a page opened from disk keeps its images); headless Debian Chromium.
"""

import json
import re
from pathlib import Path

import polars as pl
import pytest

from model.resale import DAYS_PER_YEAR
from reports.charts.interactive import BUNDLE, SCRIPT
from tests.reports.test_site_pages import DESKTOP, PHONE
from warehouse.export import open_published

CSP = re.compile(r'<meta http-equiv="Content-Security-Policy" content="([^"]+)">')
SCRIPT_TAG = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S)


def pages(version: Path) -> list[Path]:
    return sorted(version.rglob("*.html"))


def test_the_bundle_ships_in_the_version_and_pages_load_only_their_own_scripts(built):
    version = built.site / "latest"
    bundle, script = version / "charts" / BUNDLE, version / "charts" / SCRIPT
    assert bundle.stat().st_size > 500_000 and "vegaEmbed" in bundle.read_text(encoding="utf-8")
    assert "vegaEmbed" in script.read_text(encoding="utf-8")
    checked = 0
    for page in pages(version):
        html = page.read_text(encoding="utf-8")
        policy = CSP.search(html)
        assert policy, f"{page}: no Content-Security-Policy"
        parts = [part.split() for part in policy.group(1).split(";") if part.strip()]
        rules = {part[0]: part[1:] for part in parts}
        assert rules["default-src"] == ["'none'"], page
        assert rules["script-src"] == ["'self'", "'wasm-unsafe-eval'"], page  # no inline, no eval
        assert rules["connect-src"] == ["'self'"], page
        assert not re.search(r"https?:|\*", policy.group(1)), f"{page}: an external host"
        for attributes, body in SCRIPT_TAG.findall(html):
            assert not body.strip(), f"{page}: inline script"
            src = re.search(r'src="([^"]+)"', attributes).group(1)
            assert not re.match(r"(https?:)?//", src), f"{page}: script from elsewhere: {src}"
            # The version's own scripts only: the charts' and the search's (reports/search.py).
            own = {script, version / "pagefind" / "pagefind-ui.js", version / "search.js"}
            target = (page.parent / src).resolve()
            assert target in {o.resolve() for o in own}, f"{page}: {src}"
            checked += target == script.resolve()
        assert not re.search(r"\son[a-z]+=", html), f"{page}: an inline event handler"
    assert checked >= 10  # the front page, GPU pages, ...


@pytest.fixture(scope="module")
def served(server):
    """The site's latest version over http://127.0.0.1 (fetch() of a spec needs http)."""
    return f"{server}/latest/"


def open_served(browser, url: str, width: int, javascript: bool = True):
    """A page over http with its console errors and warnings and its failed requests."""
    page, seen = new_tab(browser, width, javascript)
    visit(page, seen, url)
    return page, seen


def new_tab(browser, width: int, javascript: bool = True):
    """A blank page in a context of its own, recording (`seen`) its console errors and
    warnings, its failed requests and every request."""
    context = browser.new_context(
        viewport={"width": width, "height": 900}, java_script_enabled=javascript
    )
    # The site has no favicon.ico at the server's root (only its versions are served).
    context.route("**/favicon.ico", lambda route: route.fulfill(status=204, body=""))
    page = context.new_page()
    seen = {"console": [], "failed": [], "requests": []}
    page.on(
        "console",
        lambda m: m.type in ("error", "warning") and seen["console"].append(f"{m.type}: {m.text}"),
    )
    page.on("pageerror", lambda e: seen["console"].append(f"pageerror: {e}"))
    page.on("response", lambda r: r.status >= 400 and seen["failed"].append(r.url))
    page.on("request", lambda r: seen["requests"].append(r.url))
    return page, seen


def visit(page, seen: dict, url: str) -> None:
    """Open `url` in a tab of `new_tab`, its record (`seen`) emptied first.

    A test that opens many pages opens them in one tab: each new context starts a renderer
    process, ~0.5 s of Chromium's CPU, three times what loading a page in the same tab
    again costs.
    """
    for found in seen.values():
        found.clear()
    page.goto(url)
    page.wait_for_load_state("load")


def hover_for_tooltip(page, figure) -> str:
    """Hover the figure's interactive marks until Vega's tooltip shows; its text."""
    marks = figure.locator(".chart-live svg .mark-symbol path, .chart-live svg .mark-rect path")
    for i in range(min(marks.count(), 60)):
        mark = marks.nth(i)
        if not mark.is_visible():
            continue
        mark.hover(force=True)
        tip = page.locator("#vg-tooltip-element.visible")
        try:
            tip.wait_for(timeout=1_000)
        except Exception:  # noqa: BLE001 - this mark has no tooltip: try the next one
            continue
        return tip.inner_text()
    return ""


@pytest.mark.parametrize(
    ("path", "width"),
    [
        ("index.html", DESKTOP),
        ("index.html", PHONE),
        ("gpu/rtx-4090.html", DESKTOP),
        ("llm.html", DESKTOP),
    ],
)
def test_with_javascript_the_charts_are_interactive_with_tooltips(browser, served, path, width):
    page, seen = open_served(browser, served + path, width)
    figures = page.locator("figure")
    count = figures.count()
    assert count >= 1
    for i in range(count):  # charts are drawn as they come near the screen
        figures.nth(i).scroll_into_view_if_needed()
    # A locator, not wait_for_function: that evaluates a string, which the page's CSP
    # (no 'unsafe-eval') refuses.
    page.locator("figure.live .chart-live svg").nth(count - 1).wait_for(
        state="attached", timeout=120_000
    )
    live = page.locator("figure.live").first
    # The SVG image is replaced (hidden), the interactive view drawn in its place.
    assert live.locator("picture, img").first.is_hidden()
    assert live.locator(".chart-live svg .mark-symbol, .chart-live svg .mark-rect").count() > 0
    if width == PHONE:  # a phone draws the narrow specs: no sideways scrolling
        assert page.evaluate("document.documentElement.scrollWidth - innerWidth") <= 0
    live.scroll_into_view_if_needed()
    text = hover_for_tooltip(page, live)
    assert re.search(r"\d", text), f"no tooltip on {path}: {text!r}"
    # Every chart of the page compiled and ran without an error or a Vega warning.
    assert not seen["console"], seen["console"]
    assert not seen["failed"], seen["failed"]
    assert all(u.startswith(served.split("/latest/")[0]) for u in seen["requests"])
    page.context.close()


def test_without_javascript_the_svg_is_shown(browser, served):
    page, seen = open_served(browser, served + "index.html", DESKTOP, javascript=False)
    images = page.evaluate(
        "[...document.querySelectorAll('figure img')].map(i => ({src: i.currentSrc,"
        " ok: i.complete && i.naturalWidth > 0, shown: i.offsetWidth > 0}))"
    )
    assert len(images) >= 6 and all(i["ok"] and i["shown"] for i in images), images
    assert all(i["src"].endswith(".svg") for i in images)
    assert page.locator(".chart-live").count() == 0
    assert not any(u.endswith(BUNDLE) for u in seen["requests"])  # not even downloaded
    page.context.close()


def test_a_page_without_charts_does_not_load_the_bundle(browser, served):
    page, seen = open_served(browser, served + "downloads.html", DESKTOP)
    page.wait_for_timeout(300)
    assert any(u.endswith(SCRIPT) for u in seen["requests"])
    assert not any(u.endswith(BUNDLE) for u in seen["requests"])
    assert not seen["console"], seen["console"]
    page.context.close()


# --- never invent data: no mean market -----------------------------------------------------

MEAN_CELL = re.compile(r">mean(<| \$)")


def spec_rows(spec: dict) -> list[dict]:
    """Every inline data row of a Vega-Lite spec."""
    rows = [r for values in spec.get("datasets", {}).values() for r in values]
    return rows + list(spec.get("data", {}).get("values", []))


def test_no_page_or_chart_shows_the_mean_market(built):
    version = built.site / "latest"
    for page in pages(version):
        html = page.read_text(encoding="utf-8")
        assert not MEAN_CELL.search(html), f"{page}: a 'mean' market price"
        assert "(new, used, mean)" not in html, page
    specs = sorted((version / "charts").rglob("*.vl.json"))
    assert len(specs) > 20
    for path in specs:
        for row in spec_rows(json.loads(path.read_text(encoding="utf-8"))):
            for key in ("market", "buy_market"):
                assert row.get(key) != "mean", f"{path.name}: {row}"
            assert "buy mean" not in str(row.get("panel", "")), path.name
    buy_vs_rent = json.loads((version / "charts" / "buy_vs_rent.vl.json").read_text("utf-8"))
    panels = {r["panel"] for r in spec_rows(buy_vs_rent)}
    assert panels and all(re.search(r": buy (new|used) \$", p) for p in panels), panels


def test_the_buy_or_rent_chart_reproduces_the_model_where_it_buys_new(built):
    """Re-pricing at the new price gives the model's own break-even on rows priced new."""

    from reports.charts.renting import at_market_price

    con = open_published(built.published)
    run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    rows = con.sql(
        "SELECT * FROM cloud_vs_buy WHERE run_date = ? AND buy_market = 'new'", params=[run_date]
    ).pl()
    prices = con.sql("SELECT * FROM current_prices WHERE run_date = ?", params=[run_date]).pl()
    parameters = con.sql(
        "SELECT parameters FROM model_runs WHERE run_date = ?", params=[run_date]
    ).fetchall()[0][0]
    con.close()
    assert rows.height > 10
    horizon = float(json.loads(parameters)["years"]) * DAYS_PER_YEAR
    out = at_market_price(rows.rename({"break_even_days": "model_days"}), prices, horizon)
    assert out.height == rows.height
    assert (out["buy_price_usd"] == out["market_price_usd"]).all()
    both = out.filter(pl.col("model_days").is_not_null() | pl.col("break_even_days").is_not_null())
    assert (both["model_days"] - both["break_even_days"]).abs().max() < 1e-6
