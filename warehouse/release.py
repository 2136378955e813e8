"""Release folders: stage one, switch `current` to it atomically, keep the last few.

A release is a folder under `releases/` (next to the published folder unless configured)
holding everything one run shows the world:

    releases/
      current -> r-000042              the commit point: one symlink, replaced by rename
      r-000042/
        RELEASE.json                   run date, tables, partitions, what the publish wrote
        site/                          index.html, latest and one link per dated version
        published/                     the warehouse snapshot (warehouse/export.py)
      r-000041/  r-000040/             earlier releases, kept for readers still using them
      site-versions/<version>.r-000042/  one rendered site version, never modified once written
    site                -> releases/current/site        (links made by the first publish)
    warehouse/published -> releases/current/published

A release is staged completely, then `current` is replaced with one `rename`. Site and
warehouse therefore change together or not at all. Readers resolve `site/...` and
`warehouse/published/...` through `current` when they open a file, so they see one release
or the next, never a mix and never a half-written file; nothing of a committed release is
ever modified, so a reader never blocks the nightly job or is blocked by it.

A failed or killed publish leaves `current` where it was. Its staged folder, and the temp
files of the layout before releases (`.gpuvalue.<pid>.tmp.duckdb`, `.parquet.<pid>.tmp/`,
the site's `.<name>.staging/`), are removed before the next publish starts, under a lock
that only one publisher holds at a time.
"""

import datetime as dt
import fcntl
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from warehouse.versions import is_version, newest_first

CURRENT = "current"
MANIFEST = "RELEASE.json"
SITE_VERSIONS = "site-versions"
# A connection to the published DuckDB reads its own release's Parquet files (its views name
# them relative to the release folder it opened: warehouse/export.py), so a release must
# outlive its readers. Kept: `current` and the two before it, and every release superseded
# less than KEEP_DAYS ago, so a connection opened at any moment keeps its snapshot for at
# least a week, however many publishes (reruns included) happen meanwhile. The cost is the
# files only those releases hold: their rewritten Parquet months and DuckDB file (site
# versions are kept anyway). Why not tables stored in the DuckDB file: docs/data.md.
KEEP_RELEASES = 3
KEEP_DAYS = 7.0
_RELEASE = re.compile(r"^r-(\d{6,})$")
# Temp files of the layout before releases that a killed or disk-full publish left in the
# real published/ and site/ folders.
_LEGACY_TEMP_FILES = (
    ".gpuvalue.*.tmp.duckdb",
    ".parquet.*.tmp",
    ".parquet.*.old",
    ".*.staging",
    ".*.old",
    ".index.html.tmp",
)


@dataclass(frozen=True)
class Retention:
    """Which committed releases a publish keeps (see KEEP_RELEASES and KEEP_DAYS)."""

    releases: int = KEEP_RELEASES  # `current` and the ones just before it
    days: float = KEEP_DAYS  # and every release superseded less than this long ago


class PublishError(RuntimeError):
    """A publish failed; the message says what the site and published warehouse still show."""


@dataclass(frozen=True)
class SiteVersion:
    """One rendered version of the site to publish with the warehouse."""

    # The folder name under site/: the run date, or `<date>.N` for a rerun of a date already
    # published (warehouse/versions.py). A published version is never replaced.
    version: str
    folder: Path  # the rendered pages and charts; copied into the release
    render_index: Callable[[list[str]], str]  # site/index.html for these versions (newest first)


@dataclass(frozen=True)
class Release:
    """A committed release folder and its manifest."""

    name: str
    path: Path
    manifest: dict

    def describe(self) -> str:
        """`release r-000005 (run date 2026-04-14, site version 2026-04-14)`."""
        parts = [f"run date {self.manifest.get('run_date') or 'none'}"]
        if self.manifest.get("site_version"):
            parts.append(f"site version {self.manifest['site_version']}")
        return f"release {self.name} ({', '.join(parts)})"


def default_published_dir() -> Path:
    """Where the published snapshot is: GPUVALUE_PUBLISHED_DIR, else warehouse/published."""
    return Path(os.environ.get("GPUVALUE_PUBLISHED_DIR") or "warehouse/published")


def releases_dir_for(published_dir: str | Path) -> Path:
    """The releases folder by default: `releases/` beside the published folder."""
    return Path(published_dir).parent / "releases"


def current_release(releases_dir: str | Path) -> Release | None:
    """The committed release `current` points at, or None before the first publish."""
    link = Path(releases_dir) / CURRENT
    if not link.is_symlink():
        return None
    name = os.readlink(link)
    path = Path(releases_dir) / name
    if not _RELEASE.match(name) or not path.is_dir():
        return None
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    return Release(name, path, manifest)


def describe_published(published_dir: str | Path, releases_dir: str | Path | None = None) -> str:
    """One line saying what the site and the published warehouse show now."""
    release = current_release(releases_dir or releases_dir_for(published_dir))
    if release is None:
        return "there is no release yet: no site and no published warehouse"
    return f"the site and the published warehouse show {release.describe()}"


def still_showing(previous: Release | None) -> str:
    """What a failed publish left showing: the previous release, or nothing at all."""
    if previous:
        return f"the site and the published warehouse both still show {previous.describe()}"
    return "there was no release before, so there is still no site and no published warehouse"


# --- staging -------------------------------------------------------------------------------


class Tally:
    """Counts what a publish writes (new bytes) and links (no new bytes)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.written = 0
        self.linked = 0
        self.new_files: list[Path] = []

    def wrote(self, path: Path) -> None:
        """Count a new file of the release (`sync` flushes it before the commit)."""
        self.bytes += path.stat().st_size
        self.written += 1
        self.new_files.append(path)

    def write_text(self, path: Path, text: str) -> None:
        """Write a new text file and count it."""
        path.write_text(text, encoding="utf-8")
        self.wrote(path)

    def copy(self, src: str | Path, dst: str | Path) -> None:
        """Copy a file into the release and count it."""
        shutil.copy2(src, dst)
        self.wrote(Path(dst))

    def link(self, src: str | Path, dst: str | Path) -> None:
        """A hard link to an immutable file of an earlier release; a copy where links fail."""
        try:
            os.link(src, dst)
        except OSError:
            self.copy(src, dst)
        else:
            self.linked += 1


def new_release_name(releases: Path) -> str:
    """The next release's folder name, `r-NNNNNN`, one above every release folder there."""
    return f"r-{max(_numbers(releases), default=0) + 1:06d}"


def stage_site(
    releases: Path,
    staged: Path,
    previous: Release | None,
    site: SiteVersion | None,
    site_dir: Path | None,
    tally: Tally,
) -> str | None:
    """Write `staged/site/`: one relative link per version, `latest`, `index.html`.

    Versions are folders under `site-versions/` that are never modified once written, so a
    release costs one link per version plus the new version's files. A version already
    published is never replaced (its files stay byte for byte what readers saw): publishing
    it again raises, and a rerun of a date is published as `<date>.N` instead. `latest`
    shows the newest version (by date, then number; a backfilled older date does not move
    it). Returns the version `latest` shows.
    """
    store = releases / SITE_VERSIONS
    before = previous.path / "site" if previous else None
    versions: dict[str, str] = {}  # version -> its folder under site-versions/
    index = None
    if before is not None and before.is_dir():
        versions, index = _versions_of(before)
    elif site_dir is not None and site_dir.is_dir() and not site_dir.is_symlink():
        versions = _adopt_legacy_site(site_dir, store, staged.name, tally)
    if site is not None:
        _add_version(store, staged.name, site, versions, tally)
    if not versions:
        return None
    out = staged / "site"
    out.mkdir()
    ordered = newest_first(versions)
    for version in ordered:
        os.symlink(f"../../{SITE_VERSIONS}/{versions[version]}", out / version)
    os.symlink(f"../../{SITE_VERSIONS}/{versions[ordered[0]]}", out / "latest")
    if site is not None:
        tally.write_text(out / "index.html", site.render_index(ordered))
    elif index is not None:
        tally.link(index, out / "index.html")
    return ordered[0]


def _add_version(
    store: Path, release: str, site: SiteVersion, versions: dict[str, str], tally: Tally
) -> None:
    """Copy the new version into the store as `<version>.<release>` and list it."""
    if not is_version(site.version):
        raise ValueError(f"not a site version (YYYY-MM-DD or YYYY-MM-DD.N): {site.version!r}")
    if site.version in versions:
        raise ValueError(
            f"site version {site.version} is already published and a published version is "
            "never rewritten; render the run again (report and site) to publish it as the "
            "next version of its date"
        )
    target = f"{site.version}.{release}"
    shutil.rmtree(store / target, ignore_errors=True)
    _copy_tree(site.folder, store / target, tally.copy)
    versions[site.version] = target


def _versions_of(site: Path) -> tuple[dict[str, str], Path | None]:
    """A release's site: its versions (-> folder under site-versions/) and index.html."""
    versions: dict[str, str] = {}
    for entry in os.scandir(site):
        if entry.is_symlink() and is_version(entry.name):
            versions[entry.name] = Path(os.readlink(entry.path)).name
    index = site / "index.html" if (site / "index.html").is_file() else None
    return versions, index


def _adopt_legacy_site(site_dir: Path, store: Path, name: str, tally: Tally) -> dict[str, str]:
    """Move the versions of a real site/ folder into the store, as hard links.

    The layout before releases: site/ was a real folder. Its versions move into the store
    so the first release keeps the site's history.
    """
    versions: dict[str, str] = {}
    for entry in sorted(os.scandir(site_dir), key=lambda e: e.name):
        if is_version(entry.name) and entry.is_dir(follow_symlinks=False):
            target = f"{entry.name}.{name}"
            shutil.rmtree(store / target, ignore_errors=True)
            _copy_tree(Path(entry.path), store / target, tally.link)
            versions[entry.name] = target
    return versions


def _copy_tree(src: Path, dst: Path, copy: Callable[[Path, Path], None]) -> None:
    """Copy a folder file by file, stopping at the first error (a full disk, say)."""
    for root, _dirs, files in os.walk(src):
        folder = dst / Path(root).relative_to(src)
        folder.mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            copy(Path(root) / name, folder / name)


# --- committing ----------------------------------------------------------------------------


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def sync(staged: Path, tally: Tally) -> None:
    """Flush the new files and every new folder of the release before it is committed."""
    for path in tally.new_files:
        _fsync(path)
    store = staged.parent / SITE_VERSIONS
    folders = [staged, *store.glob(f"*.{staged.name}")]
    for folder in folders:
        for root, _dirs, _files in os.walk(folder):
            _fsync(Path(root))
    if store.is_dir():
        _fsync(store)
    _fsync(staged.parent)


def commit(releases: Path, name: str) -> None:
    """Point `current` at the staged release `name`: the one atomic step of a publish."""
    _point(releases / CURRENT, name)


def _point(link: Path, target: str) -> None:
    """Make `link` a symlink to `target`, atomically (a new link renamed over the old)."""
    tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)
    _fsync(link.parent)


def link_to_current(path: Path, releases: Path, part: str) -> None:
    """`path` -> `releases/current/part` as a relative symlink (it follows `current`).

    A real folder there (the layout before releases) is replaced by the link: not atomic,
    but it happens once.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    relative = os.path.relpath(releases.resolve() / CURRENT / part, path.parent.resolve())
    if path.is_symlink():
        if os.readlink(path) != relative:
            _point(path, relative)
        return
    if path.exists():
        aside = path.with_name(f".{path.name}.legacy-{os.getpid()}")
        os.replace(path, aside)
        _point(path, relative)
        shutil.rmtree(aside, ignore_errors=True)
        return
    _point(path, relative)


def discard(releases: Path, staged: Path, name: str) -> str:
    """Remove a failed release's staged files; says whether that worked."""
    leftovers = [staged, *(releases / SITE_VERSIONS).glob(f"*.{name}")]
    for path in leftovers:
        shutil.rmtree(path, ignore_errors=True)
    if any(p.exists() for p in leftovers):
        return f"the staged {name} could not be removed yet and is removed before the next publish"
    return f"the staged {name} was removed"


# --- housekeeping --------------------------------------------------------------------------


@contextmanager
def lock(releases: Path) -> Iterator[None]:
    """One publisher at a time; the lock dies with its process (kill -9 included)."""
    fd = os.open(releases / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise PublishError(
                f"another publish into {releases} is running; nothing was changed"
            ) from exc
        yield
    finally:
        os.close(fd)


def _numbers(releases: Path) -> dict[int, Path]:
    found = {}
    for entry in os.scandir(releases):
        match = _RELEASE.match(entry.name)
        if match and entry.is_dir(follow_symlinks=False):
            found[int(match.group(1))] = Path(entry.path)
    return found


def _remove(path: Path, removed: list[str]) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    removed.append(str(path))


def remove_leftovers(
    releases: Path, out_dir: Path, site_dir: Path | None, keep: Retention
) -> list[str]:
    """Remove what a killed or failed publish left behind; returns the paths removed.

    Under the lock, so no other publish is running: every release folder newer than
    `current` is an uncommitted one, every temp link or file is stale, and so is every site
    version no kept release links to.
    """
    removed: list[str] = []
    current = releases / CURRENT
    if current.exists() and not current.is_symlink():
        # A copy that followed the links (shutil.copytree's default) made `current` a real
        # folder: it cannot be swapped atomically, so it goes and the next release is full.
        _remove(current, removed)
    for path in releases.glob(".*.tmp"):
        _remove(path, removed)
    for link in (out_dir, site_dir):
        if link is not None:
            _remove_link_leftovers(link, removed)
    removed += collect_garbage(releases, keep)
    return removed


def _remove_link_leftovers(link: Path, removed: list[str]) -> None:
    """Stale temp links beside `link`, and the legacy temp files inside a real folder there."""
    for path in link.parent.glob(f".{link.name}.*.tmp"):
        _remove(path, removed)
    for path in link.parent.glob(f".{link.name}.legacy-*"):
        _remove(path, removed)
    if link.is_dir() and not link.is_symlink():
        for pattern in _LEGACY_TEMP_FILES:
            for path in link.glob(pattern):
                _remove(path, removed)


def collect_garbage(releases: Path, keep: Retention, now: dt.datetime | None = None) -> list[str]:
    """Keep the releases `keep` says (as of `now`) and the site versions they use.

    Before the first commit there is nothing to keep: every release folder and site version
    found is a leftover.
    """
    removed: list[str] = []
    current = current_release(releases)
    number = int(current.name[2:]) if current else 0
    found = _numbers(releases)
    kept = _kept(found, number, keep, now) if current is not None else []
    for n, path in found.items():
        if n not in kept:
            _remove(path, removed)
    used = set()
    for n in kept:
        site = found[n] / "site"
        if site.is_dir():
            with os.scandir(site) as entries:
                used |= {os.path.basename(os.readlink(e.path)) for e in entries if e.is_symlink()}
    store = releases / SITE_VERSIONS
    if store.is_dir():
        for entry in os.scandir(store):
            if entry.name not in used:
                _remove(Path(entry.path), removed)
    return removed


def _kept(
    found: dict[int, Path], current: int, keep: Retention, now: dt.datetime | None
) -> list[int]:
    """The committed releases to keep, newest first (`current` is number `current`).

    A release is superseded when the next one is committed; a reader can have opened it up
    to that moment, so its age is the age of its successor.
    """
    committed = sorted((n for n in found if n <= current), reverse=True)
    count = max(keep.releases, 1)
    now = now or dt.datetime.now(dt.UTC)
    limit = dt.timedelta(days=keep.days)
    young = [
        n
        for newer, n in zip(committed, committed[1:], strict=False)
        if now - committed_at(found[newer]) < limit
    ]
    return sorted(set(committed[:count]) | set(young), reverse=True)


def committed_at(release: Path) -> dt.datetime:
    """When a release was made: its manifest's `created_at`, else its folder's mtime."""
    try:
        stamp = json.loads((release / MANIFEST).read_text(encoding="utf-8"))["created_at"]
        when = dt.datetime.fromisoformat(stamp)
    except (OSError, ValueError, KeyError, TypeError):
        when = dt.datetime.fromtimestamp(release.stat().st_mtime, dt.UTC)
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)
