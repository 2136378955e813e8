"""Small comforts (issue 25 item 11): dark mode, the favicon, units on benchmark columns and
the report format named for what it is. On the shared build, in headless Chromium."""

import re

import pytest

from tests.reports.test_site_pages import browser  # noqa: F401

UNITS = {"images/s", "sequences/s", "tokens/s", "samples/s", "items/s", "trainings/h"}


@pytest.fixture(scope="module")
def version(built):
    return built.site / "latest"


def _luminance(rgb: tuple[int, ...]) -> float:
    def channel(c: int) -> float:
        c = c / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG contrast ratio of two CSS `rgb(...)` colours."""
    la, lb = (_luminance(tuple(int(x) for x in re.findall(r"\d+", c)[:3])) for c in (a, b))
    return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)


STYLES = """() => {
  const style = (sel) => {
    const e = document.querySelector(sel);
    return e && getComputedStyle(e);
  };
  return {
    body: style('body').backgroundColor, text: style('body').color,
    link: style('main a, table a, p a').color, th: style('th').backgroundColor,
    thText: style('th').color, note: style('.note') && style('.note').color,
    img: style('figure img') && style('figure img').backgroundColor,
  };
}"""


@pytest.mark.parametrize("page", ["index.html", "gpu/rtx-4090.html", "tables.html"])
def test_dark_mode_follows_the_system_and_stays_readable(version, browser, page):  # noqa: F811
    colours = {}
    for scheme in ("light", "dark"):
        tab = browser.new_page(color_scheme=scheme, viewport={"width": 1400, "height": 900})
        tab.goto((version / page).resolve().as_uri())
        colours[scheme] = tab.evaluate(STYLES)
        tab.close()
    light, dark = colours["light"], colours["dark"]
    assert light["body"] in ("rgba(0, 0, 0, 0)", "rgb(255, 255, 255)")
    assert dark["body"] == "rgb(22, 24, 28)"
    # Text on the page, links and table headers keep WCAG AA contrast (4.5) in the dark.
    assert contrast(dark["text"], dark["body"]) >= 7
    assert contrast(dark["link"], dark["body"]) >= 4.5
    assert contrast(dark["thText"], dark["th"]) >= 4.5
    if dark["note"]:
        assert contrast(dark["note"], dark["body"]) >= 4.5
    if dark["img"]:  # charts are drawn on white: they keep a white backdrop
        assert dark["img"] == "rgb(255, 255, 255)"


def test_every_page_links_the_favicon_within_the_csp(built, version):
    icon = version / "favicon.svg"
    assert icon.read_text(encoding="utf-8").startswith("<svg xmlns=")
    pages = sorted(version.rglob("*.html"))
    assert len(pages) > 100
    for page in pages:
        html = page.read_text(encoding="utf-8")
        href = re.search(r'<link rel="icon" type="image/svg\+xml" href="([^"]+)">', html)
        assert href, page
        assert (page.parent / href[1]).resolve() == icon.resolve(), page
        csp = re.search(r'Content-Security-Policy" content="([^"]+)"', html)[1]
        assert "img-src 'self'" in csp, page
    index = (built.site / "index.html").read_text(encoding="utf-8")
    assert '<link rel="icon" type="image/svg+xml" href="latest/favicon.svg">' in index
    assert "img-src 'self'" in index


def test_benchmark_columns_carry_their_units(version):
    page = (version / "gpu" / "rtx-4090.html").read_text(encoding="utf-8")
    table = page.split("Benchmark figures behind it")[1].split("</table>")[0]
    assert "<th>throughput (whole run, in the benchmark&#39;s unit)</th>" in table
    rows = re.findall(r"<tr>(.*?)</tr>", table.split("<tbody>")[1], re.S)
    assert len(rows) > 10
    for row in rows:
        cells = re.findall(r'data-label="([^"]+)">([^<]*)<', row)
        figures = [text for label, text in cells if label.startswith(("throughput", "per GPU"))]
        assert len(figures) == 2, row
        for text in figures:
            assert text.split(" ", 1)[1] in UNITS, text
    tables = (version / "tables.html").read_text(encoding="utf-8")
    assert "<th>16-bit training (× a100-sxm4-80gb)</th>" in tables
    llm = (version / "llm.html").read_text(encoding="utf-8")
    assert '<span class="note">(unit: USD per 1M output and input tokens' in llm
    gpu_serving = page.split("Serving: output tokens/s")[1].split("</thead>")[0]
    assert "<th>1 user (tokens/s)</th>" in gpu_serving


def test_the_report_format_is_named_for_what_it_is(version):
    name = version.resolve().name.rsplit(".", 1)[0]
    for page in (version / "index.html", version / "report.md", version / "gpu" / "rtx-4090.html"):
        text = page.read_text(encoding="utf-8")
        assert "Report version" not in text
        assert f"Site version {name}; report format 3" in text
