"""The Atom feed of "what changed", version by version: `feed.atom` in each version folder.

One entry per published version, newest first; an entry's content is that version's "What
changed" summary (reports/changes.py compares it with the version before), its id a stable
URN (`urn:gpuvalue:version:<version>`), its `updated` the version's as-of date. A version's
feed is its own entry followed by the previous version's feed entries (a published version
never changes, so they are read from its `feed.atom`): building one costs O(1) versions.
A previous version published before feeds existed has its entry computed from the
snapshots it kept (`data/`), back to the first version with a feed.

Atom 1.0 (RFC 4287): feed and entries carry id, title and updated; the feed an author and
a self link. Links are relative (the site has no fixed address): resolved against the
feed's own URL they reach the version's pages.
"""

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from model.verdicts import OPTION_TITLES
from reports.changes import Changes, compare, previous_version, read_snapshot
from reports.charts import WORKLOAD_TITLES
from reports.content.verdicts import limit_label
from reports.dataset import Dataset

ATOM = "http://www.w3.org/2005/Atom"
FEED_FILE = "feed.atom"
FEED_ID = "urn:gpuvalue:feed:what-changed"
AUTHOR = "gpuvalue contributors"
_SHOWN = 8  # rows listed per kind of change; the rest are counted


@dataclass(frozen=True)
class Entry:
    """One version's entry."""

    version: str
    summary: str

    @property
    def id(self) -> str:
        """Stable for good: the version's name never changes."""
        return f"urn:gpuvalue:version:{self.version}"

    @property
    def updated(self) -> str:
        """The version's as-of date (its name's date; a rerun `<date>.2` keeps it)."""
        return f"{self.version[:10]}T00:00:00Z"


def _listed(title: str, lines: list[str]) -> list[str]:
    if not lines:
        return []
    more = [f"  ... and {len(lines) - _SHOWN} more"] if len(lines) > _SHOWN else []
    return [f"{title} ({len(lines)}):", *(f"  - {x}" for x in lines[:_SHOWN]), *more]


def change_summary(changes: Changes | None) -> str:
    """A version's "What changed" as plain text lines (the feed entry's content)."""
    if changes is None:
        return "First published version: there is nothing to compare with yet."
    head = f"What changed since {changes.previous_version}:"
    if changes.empty:
        return f"{head} nothing beyond the noise."
    verdicts = [
        f"{WORKLOAD_TITLES.get(r['workload'], r['workload'])}, "
        f"{OPTION_TITLES.get(r['option'], r['option'])} {limit_label(r['kind'], r['limit'])}: "
        f"{r['before']} -> {r['after']}"
        for r in changes.verdicts.iter_rows(named=True)
    ]
    ranks = [
        f"{r['gpu_id']} ({r['workload']}, {r['market']}): rank {r['rank_before'] or 'unpriced'}"
        f" -> {r['rank_after'] or 'unpriced'}"
        for r in changes.ranks.iter_rows(named=True)
    ]
    prices = [
        f"{r['gpu_id']} {r['market']}: ${r['before']:,.0f} -> ${r['after']:,.0f} "
        f"({r['change_pct']:+.1f} %)"
        for r in changes.prices.iter_rows(named=True)
    ]
    gpus = [f"{r['gpu_id']}: {r['change']}" for r in changes.gpus.iter_rows(named=True)]
    stale = [
        f"{r['input']} ({r['source']}): {r['status']}" for r in changes.stale.iter_rows(named=True)
    ]
    lines = [
        head,
        *_listed("Verdicts that changed", verdicts),
        *_listed("Rank moves", ranks),
        *_listed("Prices that moved beyond their noise", prices),
        *_listed("GPUs", gpus),
        *_listed("Inputs that went stale or failed", stale),
    ]
    return "\n".join(lines)


def read_entries(feed: Path) -> list[Entry]:
    """The entries of a version's published feed, in its order."""
    root = ET.parse(feed).getroot()
    out = []
    for node in root.findall(f"{{{ATOM}}}entry"):
        entry_id = node.findtext(f"{{{ATOM}}}id") or ""
        content = node.findtext(f"{{{ATOM}}}content") or ""
        out.append(Entry(entry_id.rsplit(":", 1)[-1], content))
    return out


def earlier_entries(site_dir: Path | None, previous: str | None) -> list[Entry]:
    """Entries of every version before this one, newest first (see the module docstring)."""
    out: list[Entry] = []
    folder = site_dir / previous if site_dir is not None and previous else None
    while folder is not None and folder.is_dir():
        if (folder / FEED_FILE).is_file():
            return out + read_entries(folder / FEED_FILE)
        before = previous_version(site_dir, folder.name)
        changes = None
        if before is not None:
            changes = compare(read_snapshot(before), read_snapshot(folder))
        out.append(Entry(folder.name, change_summary(changes)))
        folder = before
    return out


def _text(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    node = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attrs)
    node.text = text
    return node


def render_feed(entries: list[Entry]) -> str:
    """The Atom document (entries newest first, as given)."""
    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed")
    _text(feed, "id", FEED_ID)
    _text(feed, "title", "gpuvalue: what changed, version by version")
    _text(
        feed,
        "subtitle",
        "GPU deep-learning performance per dollar: each published version's changes in "
        "verdicts, ranks, prices, GPUs and inputs.",
    )
    _text(feed, "updated", max(e.updated for e in entries))
    author = ET.SubElement(feed, f"{{{ATOM}}}author")
    _text(author, "name", AUTHOR)
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="self", href=FEED_FILE, type="application/atom+xml")
    ET.SubElement(feed, f"{{{ATOM}}}link", rel="alternate", href="index.html", type="text/html")
    _text(feed, "generator", "gpuvalue")
    for e in entries:
        node = ET.SubElement(feed, f"{{{ATOM}}}entry")
        _text(node, "id", e.id)
        _text(node, "title", f"gpuvalue {e.version}")
        _text(node, "updated", e.updated)
        ET.SubElement(
            node,
            f"{{{ATOM}}}link",
            rel="alternate",
            href=f"../{e.version}/index.html",
            type="text/html",
        )
        _text(node, "content", e.summary, type="text")
    ET.indent(feed)
    return ET.tostring(feed, encoding="unicode", xml_declaration=True) + "\n"


def write_feed(ds: Dataset, out: Path) -> int:
    """Write the version's `feed.atom` into `out`; return its number of entries."""
    entries = [Entry(ds.version, change_summary(ds.changes))]
    entries += [e for e in earlier_entries(ds.site_dir, ds.previous) if e.version != ds.version]
    (out / FEED_FILE).write_text(render_feed(entries), encoding="utf-8")
    return len(entries)
