"""Rendering charts to SVG with vl-convert: the SVG cache, one chart, many charts at once."""

import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import altair as alt
import vl_convert as vlc

from reports.charts.common import configured


class SvgCache:
    """SVGs by a hash of the spec they were rendered from, kept from one build to the next.

    Most charts of a night are the previous night's (a GPU whose prices did not move draws
    the same chart), and vl-convert's rendering is most of a chart's cost, so a chart is
    rendered only when its spec is new. `prune()` then removes what this build did not use,
    so the cache holds one build's charts, not every night's. `folder=None` renders always.
    """

    def __init__(self, folder: Path | None) -> None:
        self.folder = folder
        self.used: set[str] = set()
        self.hits = 0

    def svg(self, spec: dict, render: Callable[[dict], str]) -> str:
        """`render(spec)`, or the SVG an earlier build rendered from the same spec."""
        return self.text([vlc.__version__, spec], ".svg", lambda: render(spec))

    def text(self, key: object, suffix: str, make: Callable[[], str]) -> str:
        """`make()`, or what an earlier build made for the same `key` (JSON-able)."""
        if self.folder is None:
            return make()
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        path = self.folder / f"{digest}{suffix}"
        self.used.add(path.name)
        if path.exists():
            self.hits += 1
            return path.read_text(encoding="utf-8")
        made = make()
        self.folder.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f".{digest}.{os.getpid()}.{threading.get_ident()}.tmp")
        staged.write_text(made, encoding="utf-8")
        staged.replace(path)  # atomic: a killed build leaves no half-written entry
        return made

    def prune(self) -> None:
        """Remove the entries (and leftovers) this build did not use."""
        if self.folder is None or not self.folder.is_dir():
            return
        for path in self.folder.iterdir():
            if path.name not in self.used:
                path.unlink(missing_ok=True)


NO_CACHE = SvgCache(None)

# vl-convert numbers clip paths with a counter shared by every chart the process renders
# (`clip338`), so the same chart gets other ids depending on what was rendered before it and
# in which thread. The ids only link a clip path to its marks inside one SVG file (the site
# embeds charts as <img>, never inline), so they are renumbered from 1 in order of first use.
_CLIP_ID = re.compile(r"\bclip(\d+)\b")


def canonical_ids(svg: str) -> str:
    """`svg` with its clip-path ids renumbered clip1, clip2, ... in order of appearance."""
    numbers: dict[str, int] = {}

    def renumber(match: re.Match) -> str:
        return f"clip{numbers.setdefault(match.group(1), len(numbers) + 1)}"

    return _CLIP_ID.sub(renumber, svg)


def render_chart(
    chart: alt.TopLevelMixin,
    out_dir: Path,
    name: str,
    validate: bool = True,
    cache: SvgCache = NO_CACHE,
) -> list[Path]:
    """Write `<name>.vl.json` and `<name>.svg`; return their paths.

    `validate=False` skips Altair's JSON-schema check (a third of a small chart's time),
    for the many charts one validated builder makes.
    """
    chart = configured(chart, narrow=name.endswith(".narrow"))
    # Validated only when the spec is new: a cached SVG was rendered from this same spec,
    # validated then (Altair's check is half a chart's cost when its SVG is cached).
    spec = chart.to_dict(validate=False)

    def render(_spec: dict) -> str:
        return vlc.vegalite_to_svg(chart.to_dict(validate=True) if validate else _spec)

    paths = [out_dir / f"{name}.vl.json", out_dir / f"{name}.svg"]
    paths[0].write_text(json.dumps(spec, indent=1, sort_keys=True), encoding="utf-8")
    paths[1].write_text(canonical_ids(cache.svg(spec, render)), encoding="utf-8")
    return paths


@dataclass(frozen=True)
class ChartJob:
    """One chart to render: how to build it and where."""

    build: Callable[[], alt.TopLevelMixin]
    out_dir: Path
    name: str
    validate: bool = True


def render_many(jobs: list[ChartJob], workers: int = 2, cache: SvgCache = NO_CACHE) -> list[Path]:
    """Build and render charts in a small thread pool (vl-convert releases the GIL)."""

    def run(job: ChartJob) -> list[Path]:
        job.out_dir.mkdir(parents=True, exist_ok=True)
        return render_chart(job.build(), job.out_dir, job.name, job.validate, cache)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [p for paths in pool.map(run, jobs) for p in paths]
