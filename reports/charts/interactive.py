"""The files that make a version's charts interactive: the Vega bundle and the page script.

Progressive enhancement (issue 25): every page shows its charts as SVG images; the page
loads `charts/interactive.js` (a small script of this package, `<script src>`, never
inline: the Content-Security-Policy allows the site's own scripts only), which, where a
page has a chart, loads `charts/vega-bundle.js` and redraws each chart from its Vega-Lite
spec with tooltips, zoom and legend selection.

The bundle is vl-convert's (`vl_convert.javascript_bundle`: Vega, Vega-Lite and
Vega-Embed with their dependencies, no CDN), written into each version's `charts/`
folder: a version is self-contained and never changes once published, and a later
version with another vl-convert carries its own bundle. Building it takes seconds, so it
is kept in the chart cache (keyed by the vl-convert version and the snippet) like the SVGs.
Vega-Embed's `ast: true` makes Vega evaluate expressions with its interpreter instead of
`new Function`, so the policy needs no 'unsafe-eval'.
"""

from importlib import resources
from pathlib import Path

import vl_convert as vlc

from reports.charts.rendering import NO_CACHE, SvgCache

BUNDLE = "vega-bundle.js"
SCRIPT = "interactive.js"
# Only vegaEmbed is needed on the page (it compiles Vega-Lite and runs Vega itself).
SNIPPET = "window.vegaEmbed = vegaEmbed;"


def vega_bundle(cache: SvgCache = NO_CACHE) -> str:
    """vl-convert's self-contained JavaScript bundle of Vega-Embed (kept in `cache`)."""
    key = ["vega-bundle", vlc.__version__, SNIPPET]
    return cache.text(key, ".js", lambda: vlc.javascript_bundle(SNIPPET))


def page_script() -> str:
    """The page script (reports/charts/interactive.js)."""
    return resources.files("reports.charts").joinpath(SCRIPT).read_text(encoding="utf-8")


def write_interactive_files(out_dir: Path, cache: SvgCache = NO_CACHE) -> list[Path]:
    """`<out_dir>/vega-bundle.js` and `<out_dir>/interactive.js`; return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / BUNDLE, out_dir / SCRIPT]
    paths[0].write_text(vega_bundle(cache), encoding="utf-8")
    paths[1].write_text(page_script(), encoding="utf-8")
    return paths
