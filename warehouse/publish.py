"""Publish the site and a read-only snapshot of the warehouse together, as one release.

A release is a folder under `releases/` (next to the published folder unless configured)
holding everything one run shows the world:

    releases/
      current -> r-000042              the commit point: one symlink, replaced by rename
      r-000042/
        RELEASE.json                   run date, tables, partitions, what the publish wrote
        site/                          index.html, latest and one link per dated version
        published/
          gpuvalue.duckdb              small tables + one view per month-partitioned table
          parquet/<table>.parquet                small tables, rewritten by every release
          parquet/<table>/<YYYY-MM>.parquet      dated tables, one file per month
      r-000041/  r-000040/             earlier releases, kept for readers still using them
      site-versions/<date>.r-000042/   one rendered site version, never modified once written
    site                -> releases/current/site        (links made by the first publish)
    warehouse/published -> releases/current/published

A publish stages a complete `r-N`: the new site version, the Parquet partitions the run
changed (the others are hard links to the previous release's files, so a night writes
O(new data)), a new DuckDB file whose month-partitioned tables are views over those files.
Then it replaces `current` with one `rename`. Site and warehouse therefore change together
or not at all. Readers resolve `site/...` and `warehouse/published/...` through `current`
when they open a file, so they see one release or the next, never a mix and never a
half-written file; nothing of a committed release is ever modified, so a reader never
blocks the nightly job or is blocked by it.

A failed or killed publish leaves `current` where it was. Its staged folder, and the temp
files of the layout before releases (`.gpuvalue.<pid>.tmp.duckdb`, `.parquet.<pid>.tmp/`,
the site's `.<name>.staging/`), are removed before the next publish starts, under a lock
that only one publisher holds at a time.

Which months changed comes from `publish_changes`, which `warehouse.db.replace_rows` writes
in each load's own transaction; a month whose row count differs from the previous release
is rewritten too, so a write that bypassed the log still reaches the snapshot.
"""

import datetime as dt
import fcntl
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from warehouse.db import INTERNAL_TABLES, month_sql, partition_column

DATABASE = "gpuvalue.duckdb"
CURRENT = "current"
MANIFEST = "RELEASE.json"
SITE_VERSIONS = "site-versions"
# current + the two before it: a reader that opened the snapshot up to two nights ago can
# still run queries (the views name their release's Parquet files).
KEEP_RELEASES = 3
_RELEASE = re.compile(r"^r-(\d{6,})$")
_VERSION = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_PARQUET = "(FORMAT parquet, COMPRESSION zstd)"


class PublishError(RuntimeError):
    """A publish failed; the message says what the site and published warehouse still show."""


@dataclass(frozen=True)
class SiteVersion:
    """One rendered version of the site to publish with the warehouse."""

    version: str  # the run date, YYYY-MM-DD: the folder name under site/
    folder: Path  # the rendered pages and charts; copied into the release
    render_index: Callable[[list[str]], str]  # site/index.html for these versions (newest first)


@dataclass(frozen=True)
class Published:
    """What a publish produced."""

    database: Path
    parquet_dir: Path
    row_counts: dict[str, int]
    release: str = ""
    run_date: dt.date | None = None
    bytes_written: int = 0
    files_written: int = 0
    files_linked: int = 0
    partitions_written: dict[str, list[str]] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)  # leftovers removed before publishing
    warnings: list[str] = field(default_factory=list)  # housekeeping after the commit


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


def publish(
    con: duckdb.DuckDBPyConnection,
    out_dir: str | Path,
    *,
    site: SiteVersion | None = None,
    site_dir: str | Path | None = None,
    releases_dir: str | Path | None = None,
    keep: int = KEEP_RELEASES,
    full: bool = False,
) -> Published:
    """Publish the open writable warehouse `con` (and `site`) as one new release.

    `out_dir` becomes a link to the release's `published/` folder and `site_dir` (when
    given) to its `site/` folder. Without `site` the release keeps the previous release's
    site. `full` rewrites every Parquet partition instead of the changed ones. Raises
    PublishError, saying what still shows, when anything before the commit fails.
    """
    out_dir = Path(out_dir)
    site_dir = Path(site_dir) if site_dir is not None else None
    releases = Path(releases_dir) if releases_dir is not None else releases_dir_for(out_dir)
    for link in (out_dir, site_dir):
        if link is not None and releases.resolve().is_relative_to(link.resolve()):
            raise ValueError(f"the releases folder {releases} must not be inside {link}")
    releases.mkdir(parents=True, exist_ok=True)
    with _lock(releases):
        try:
            removed = _remove_leftovers(releases, out_dir, site_dir, keep)
        except OSError as exc:
            raise PublishError(
                f"could not remove what an earlier publish left in {releases}: {exc}. Nothing "
                f"was swapped: {describe_published(out_dir, releases)}"
            ) from exc
        previous = current_release(releases)
        name = f"r-{_next_number(releases):06d}"
        staged = releases / name
        what = _what(con)
        tally = _Tally()
        step = ["preparing the release folder"]
        try:
            staged.mkdir()
            step[0] = "staging the site"
            site_version = _stage_site(releases, staged, previous, site, site_dir, tally)
            changes, last_seq = _changes(con)
            tables, written = _export(con, staged, previous, changes, full, tally, step)
            step[0] = f"writing published/{DATABASE}"
            views = _build_database(con, staged / "published", tables, tally)
            run_date = _run_date(con, tables)
            manifest = {
                "release": name,
                "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                "run_date": run_date.isoformat() if run_date else None,
                "site_version": site_version,
                "tables": tables,
                "views": views,
                "bytes_written": tally.bytes,
                "files_written": tally.written,
                "files_linked": tally.linked,
            }
            step[0] = f"writing {MANIFEST}"
            tally.write_text(staged / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
            step[0] = "syncing the release to disk"
            _sync(staged, tally)
            step[0] = "committing"
            _point(releases / CURRENT, name)
        except Exception as exc:
            left = _discard(releases, staged, name)
            state = (
                f"the site and the published warehouse both still show {previous.describe()}"
                if previous
                else "there was no release before, so there is still no site and no "
                "published warehouse"
            )
            raise PublishError(
                f"publishing {what} failed while {step[0]}: {exc}. Nothing was swapped: "
                f"{state}; {left}"
            ) from exc

        # Committed. What follows is housekeeping: a failure is reported, not raised.
        warnings = []
        links = [(out_dir, "published")] + ([(site_dir, "site")] if site_dir else [])
        for link, part in links:
            try:
                _ensure_link(link, releases, part)
            except OSError as exc:
                warnings.append(f"could not link {link} to {releases / CURRENT / part}: {exc}")
        if last_seq is not None:
            try:
                con.sql("DELETE FROM publish_changes WHERE seq <= ?", params=[last_seq])
            except duckdb.Error as exc:
                warnings.append(f"publish_changes not cleared (the next publish redoes it): {exc}")
        try:
            _collect_garbage(releases, keep)
        except OSError as exc:
            warnings.append(f"old releases not removed: {exc}")
    counts = {t: e["rows"] for t, e in sorted(tables.items())}
    for view in views:
        counts[view["name"]] = row_counts_of(con, view["name"])
    return Published(
        database=out_dir / DATABASE,
        parquet_dir=out_dir / "parquet",
        row_counts=counts,
        release=name,
        run_date=run_date,
        bytes_written=tally.bytes,
        files_written=tally.written,
        files_linked=tally.linked,
        partitions_written=written,
        removed=removed,
        warnings=warnings,
    )


def row_counts_of(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Rows of one table or view."""
    return con.sql(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]


def parquet_files(out_dir: str | Path, table: str) -> list[Path]:
    """The published Parquet files of one table: `<table>.parquet`, or its month files."""
    parquet = Path(out_dir) / "parquet"
    whole = parquet / f"{table}.parquet"
    return [whole] if whole.is_file() else sorted((parquet / table).glob("*.parquet"))


def open_published(out_dir: str | Path) -> duckdb.DuckDBPyConnection:
    """Open the published snapshot read-only."""
    path = Path(out_dir) / DATABASE
    if not path.exists():
        raise FileNotFoundError(f"no published warehouse at {path}: run `make run` first")
    return duckdb.connect(str(path), read_only=True)


# --- staging -------------------------------------------------------------------------------


class _Tally:
    """Counts what a publish writes (new bytes) and links (no new bytes)."""

    def __init__(self) -> None:
        self.bytes = 0
        self.written = 0
        self.linked = 0
        self.new_files: list[Path] = []

    def wrote(self, path: Path) -> None:
        self.bytes += path.stat().st_size
        self.written += 1
        self.new_files.append(path)

    def write_text(self, path: Path, text: str) -> None:
        path.write_text(text, encoding="utf-8")
        self.wrote(path)

    def copy(self, src: str | Path, dst: str | Path) -> None:
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


def _stage_site(
    releases: Path,
    staged: Path,
    previous: Release | None,
    site: SiteVersion | None,
    site_dir: Path | None,
    tally: _Tally,
) -> str | None:
    """Write `staged/site/`: one relative link per version, `latest`, `index.html`.

    Versions are folders under `site-versions/` that are never modified once written, so a
    release costs one link per version plus the new version's files. Returns the version
    `latest` shows.
    """
    store = releases / SITE_VERSIONS
    versions: dict[str, str] = {}  # version -> its folder under site-versions/
    latest = index = None
    before = previous.path / "site" if previous else None
    if before is not None and before.is_dir():
        for entry in os.scandir(before):
            if entry.is_symlink() and (_VERSION.match(entry.name) or entry.name == "latest"):
                target = Path(os.readlink(entry.path)).name
                if entry.name == "latest":
                    latest = target
                else:
                    versions[entry.name] = target
        if (before / "index.html").is_file():
            index = before / "index.html"
    elif site_dir is not None and site_dir.is_dir() and not site_dir.is_symlink():
        # The layout before releases: site/ was a real folder. Its versions move into the
        # store (hard links) so the first release keeps the site's history.
        for entry in sorted(os.scandir(site_dir), key=lambda e: e.name):
            if _VERSION.match(entry.name) and entry.is_dir(follow_symlinks=False):
                target = f"{entry.name}.{staged.name}"
                shutil.rmtree(store / target, ignore_errors=True)
                _copy_tree(Path(entry.path), store / target, tally.link)
                versions[entry.name] = target
    if site is not None:
        if not _VERSION.match(site.version):
            raise ValueError(f"a site version is a date (YYYY-MM-DD), not {site.version!r}")
        target = f"{site.version}.{staged.name}"
        shutil.rmtree(store / target, ignore_errors=True)
        _copy_tree(site.folder, store / target, tally.copy)
        versions[site.version] = target
        latest = target
    if not versions:
        return None
    out = staged / "site"
    out.mkdir()
    for version, target in sorted(versions.items()):
        os.symlink(f"../../{SITE_VERSIONS}/{target}", out / version)
    latest = latest or versions[max(versions)]
    os.symlink(f"../../{SITE_VERSIONS}/{latest}", out / "latest")
    if site is not None:
        tally.write_text(out / "index.html", site.render_index(sorted(versions, reverse=True)))
    elif index is not None:
        tally.link(index, out / "index.html")
    return latest.split(".", 1)[0]


def _copy_tree(src: Path, dst: Path, copy: Callable[[Path, Path], None]) -> None:
    """Copy a folder file by file, stopping at the first error (a full disk, say)."""
    for root, _dirs, files in os.walk(src):
        folder = dst / Path(root).relative_to(src)
        folder.mkdir(parents=True, exist_ok=True)
        for name in sorted(files):
            copy(Path(root) / name, folder / name)


def _changes(con: duckdb.DuckDBPyConnection) -> tuple[dict[str, set], int | None]:
    """Months each table's loads touched since the last publish, and the last log entry."""
    exists = con.sql(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_name = 'publish_changes'"
    ).fetchall()[0][0]
    if not exists:
        return {}, None
    rows = con.sql("SELECT seq, table_name, month FROM publish_changes").fetchall()
    changes: dict[str, set] = {}
    for _, table, month in rows:
        changes.setdefault(table, set()).add(month)
    return changes, max((seq for seq, _, _ in rows), default=0)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[list[str]]:
    return [
        list(r)
        for r in con.sql(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
            params=[table],
        ).fetchall()
    ]


def _quote_path(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _export(
    con: duckdb.DuckDBPyConnection,
    staged: Path,
    previous: Release | None,
    changes: dict[str, set],
    full: bool,
    tally: _Tally,
    step: list[str],
) -> tuple[dict[str, dict], dict[str, list[str]]]:
    """Write (or link) every table's Parquet; returns the manifest's tables and what was written.

    A whole table is one file, rewritten. A dated table is one file per month, sorted by
    gpu_id and date (so a reader's filter on either skips most row groups); a month is
    rewritten when a load touched it, its row count changed or the table's columns changed,
    and otherwise linked from the previous release.
    """
    parquet = staged / "published" / "parquet"
    parquet.mkdir(parents=True)
    tables = [
        name
        for (name,) in con.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' "
            "AND table_type = 'BASE TABLE' ORDER BY table_name"
        ).fetchall()
        if name not in INTERNAL_TABLES
    ]
    before = previous.manifest.get("tables", {}) if previous else {}
    manifest: dict[str, dict] = {}
    written: dict[str, list[str]] = {}
    for table in tables:
        columns = _columns(con, table)
        names = [c for c, _ in columns]
        column = partition_column(table, names)
        order = ", ".join(
            f'"{c}"'
            for c in dict.fromkeys(
                (["gpu_id"] if "gpu_id" in names else []) + ([column] if column else []) + names
            )
        )
        if column is None:
            path = parquet / f"{table}.parquet"
            step[0] = f"writing published/parquet/{path.name}"
            con.sql(
                f'COPY (SELECT * FROM "{table}" ORDER BY {order}) TO {_quote_path(path)} {_PARQUET}'
            )
            tally.wrote(path)
            manifest[table] = {
                "layout": "whole",
                "columns": columns,
                "rows": row_counts_of(con, table),
                "file": f"published/parquet/{path.name}",
            }
            written[table] = ["whole"]
            continue
        old = before.get(table, {})
        reusable = (
            not full
            and previous is not None
            and old.get("layout") == "monthly"
            and old.get("column") == column
            and old.get("columns") == columns
        )
        touched = changes.get(table, set())
        folder = parquet / table
        folder.mkdir()
        months = _month_counts(con, table, column, old if reusable else None, touched)
        partitions = {}
        for month, rows in months:
            key = month.strftime("%Y-%m") if month else "undated"
            path = folder / f"{key}.parquet"
            kept = old.get("partitions", {}).get(key) if reusable else None
            if (
                kept
                and kept["rows"] == rows
                and month not in touched
                and (previous.path / kept["file"]).is_file()
            ):
                tally.link(previous.path / kept["file"], path)
            else:
                step[0] = f"writing published/parquet/{table}/{path.name}"
                where = (
                    f'"{column}" IS NULL'
                    if month is None
                    else f"\"{column}\" >= DATE '{month}' "
                    f"AND \"{column}\" < DATE '{month}' + INTERVAL 1 MONTH"
                )
                con.sql(
                    f'COPY (SELECT * FROM "{table}" WHERE {where} ORDER BY {order}) '
                    f"TO {_quote_path(path)} {_PARQUET}"
                )
                tally.wrote(path)
                written.setdefault(table, []).append(key)
            partitions[key] = {"rows": rows, "file": f"published/parquet/{table}/{path.name}"}
        manifest[table] = {
            "layout": "monthly",
            "column": column,
            "columns": columns,
            "rows": sum(p["rows"] for p in partitions.values()),
            "partitions": partitions,
        }
    return manifest, written


def _month_counts(
    con: duckdb.DuckDBPyConnection,
    table: str,
    column: str,
    old: dict | None,
    touched: set,
) -> list[tuple[dt.date | None, int]]:
    """Rows per month of `table`, reading only the months the loads touched when it can.

    The previous release's counts stand for the untouched months as long as the table's
    total agrees with them; when it does not (a write that bypassed the log), every month
    is counted again. So a night reads O(what it changed), plus one count(*).
    """
    if old is not None:
        before = {
            (dt.date.fromisoformat(f"{key}-01") if key != "undated" else None): p["rows"]
            for key, p in old.get("partitions", {}).items()
        }
        dated = sorted(m for m in touched if m is not None)
        ranges = [
            f"(\"{column}\" >= DATE '{m}' AND \"{column}\" < DATE '{m}' + INTERVAL 1 MONTH)"
            for m in dated
        ] + ([f'"{column}" IS NULL'] if None in touched else [])
        counted = dict(
            con.sql(
                f'SELECT {month_sql(column)}, count(*) FROM "{table}" '
                f"WHERE {' OR '.join(ranges)} GROUP BY ALL"
            ).fetchall()
            if ranges
            else []
        )
        merged = {m: n for m, n in before.items() if m not in touched} | counted
        total = con.sql(f'SELECT count(*) FROM "{table}"').fetchall()[0][0]
        if total == sum(merged.values()):
            return sorted(merged.items(), key=lambda kv: (kv[0] is None, kv[0] or dt.date.min))
    return con.sql(
        f'SELECT {month_sql(column)} AS month, count(*) FROM "{table}" GROUP BY ALL ORDER BY 1'
    ).fetchall()


def _build_database(
    con: duckdb.DuckDBPyConnection, published: Path, tables: dict[str, dict], tally: _Tally
) -> list[dict]:
    """The published DuckDB file: whole tables stored, dated tables as views over Parquet.

    Views name their release's folder by absolute path: DuckDB resolves a relative path
    against the reader's working directory, not the database file. The pipeline's own views
    (e.g. gpu_price_history) are recreated on top. Returns the views, as in the manifest.
    """
    views = [
        {"name": name, "sql": sql}
        for name, sql in con.sql(
            "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal AND NOT temporary "
            "AND schema_name = 'main' AND database_name = current_database() ORDER BY view_oid"
        ).fetchall()
    ]
    path = published / DATABASE
    out = duckdb.connect(str(path))
    try:
        for table, entry in tables.items():
            if entry["layout"] == "whole":
                source = _quote_path((published.parent / entry["file"]).resolve())
                out.sql(f'CREATE TABLE "{table}" AS SELECT * FROM read_parquet({source})')
            elif entry["partitions"]:
                files = _quote_path((published / "parquet" / table).resolve() / "*.parquet")
                out.sql(f'CREATE VIEW "{table}" AS SELECT * FROM read_parquet({files})')
            else:
                columns = ", ".join(f'"{c}" {t}' for c, t in entry["columns"])
                out.sql(f'CREATE TABLE "{table}" ({columns})')
        for view in views:
            out.sql(view["sql"])
        out.sql("CHECKPOINT")
    finally:
        out.close()
    tally.wrote(path)
    return views


def _run_date(con: duckdb.DuckDBPyConnection, tables: dict[str, dict]) -> dt.date | None:
    if "model_runs" not in tables:
        return None
    return con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]


def _what(con: duckdb.DuckDBPyConnection) -> str:
    """What is being published, for messages: `run date 2026-04-15`."""
    try:
        day = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    except duckdb.Error:
        day = None
    return f"run date {day}" if day else "the warehouse"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync(staged: Path, tally: _Tally) -> None:
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


def _point(link: Path, target: str) -> None:
    """Make `link` a symlink to `target`, atomically (a new link renamed over the old)."""
    tmp = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    os.symlink(target, tmp)
    os.replace(tmp, link)
    _fsync(link.parent)


def _ensure_link(path: Path, releases: Path, part: str) -> None:
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


def _discard(releases: Path, staged: Path, name: str) -> str:
    """Remove a failed release's staged files; says whether that worked."""
    leftovers = [staged, *(releases / SITE_VERSIONS).glob(f"*.{name}")]
    for path in leftovers:
        shutil.rmtree(path, ignore_errors=True)
    if any(p.exists() for p in leftovers):
        return f"the staged {name} could not be removed yet and is removed before the next publish"
    return f"the staged {name} was removed"


# --- housekeeping --------------------------------------------------------------------------


@contextmanager
def _lock(releases: Path) -> Iterator[None]:
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


def _next_number(releases: Path) -> int:
    return max(_numbers(releases), default=0) + 1


def _remove(path: Path, removed: list[str]) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    removed.append(str(path))


def _remove_leftovers(releases: Path, out_dir: Path, site_dir: Path | None, keep: int) -> list[str]:
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
        if link is None:
            continue
        for path in link.parent.glob(f".{link.name}.*.tmp"):
            _remove(path, removed)
        for path in link.parent.glob(f".{link.name}.legacy-*"):
            _remove(path, removed)
        if link.is_dir() and not link.is_symlink():
            # Temp files of the layout before releases: a killed or disk-full publish left
            # them in the real published/ and site/ folders.
            for pattern in (
                ".gpuvalue.*.tmp.duckdb",
                ".parquet.*.tmp",
                ".parquet.*.old",
                ".*.staging",
                ".*.old",
                ".index.html.tmp",
            ):
                for path in link.glob(pattern):
                    _remove(path, removed)
    removed += _collect_garbage(releases, keep)
    return removed


def _collect_garbage(releases: Path, keep: int) -> list[str]:
    """Keep `current` and the `keep - 1` releases before it, and the site versions they use.

    Before the first commit there is nothing to keep: every release folder and site version
    found is a leftover.
    """
    removed: list[str] = []
    current = current_release(releases)
    number = int(current.name[2:]) if current else 0
    found = _numbers(releases)
    kept = sorted((n for n in found if n <= number), reverse=True)[: max(keep, 1)]
    if current is None:
        kept = []
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
