"""Publish the site and a read-only snapshot of the warehouse together, as one release.

`publish` stages a complete release folder (`warehouse.release`): the new site version,
the warehouse snapshot (`warehouse.export`: the Parquet partitions the run changed, the
others hard links to the previous release's files, and a new DuckDB file whose
month-partitioned tables are views over them) and its manifest. Then it replaces `current`
with one `rename`, so the site and the warehouse change together or not at all. A publish
that fails before the commit changes nothing that readers see, and says so.
"""

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from warehouse.export import (
    DATABASE,
    build_database,
    clear_changes,
    export_tables,
    logged_changes,
    row_counts_of,
    run_date,
)
from warehouse.release import (
    CURRENT,
    MANIFEST,
    PublishError,
    Retention,
    SiteVersion,
    Tally,
    collect_garbage,
    commit,
    current_release,
    describe_published,
    discard,
    link_to_current,
    lock,
    new_release_name,
    releases_dir_for,
    remove_leftovers,
    stage_site,
    still_showing,
    sync,
)


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
class _Staged:
    """What the staged release holds, for the result and the housekeeping after the commit."""

    tables: dict[str, dict]
    views: list[dict]
    written: dict[str, list[str]]
    run_date: dt.date | None
    last_seq: int | None  # the last publish_changes entry this release consumed


def publish(
    con: duckdb.DuckDBPyConnection,
    out_dir: str | Path,
    *,
    site: SiteVersion | None = None,
    site_dir: str | Path | None = None,
    releases_dir: str | Path | None = None,
    keep: Retention = Retention(),  # noqa: B008 (frozen: one shared default is safe)
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
    with lock(releases):
        removed = _remove_leftovers(releases, out_dir, site_dir, keep)
        name = new_release_name(releases)
        tally = Tally()
        staged = _stage_and_commit(con, releases, name, site, site_dir, full, tally)
        # Committed. What follows is housekeeping: a failure is reported, not raised.
        warnings = _after_commit(con, releases, out_dir, site_dir, staged.last_seq, keep)
    counts = {t: e["rows"] for t, e in sorted(staged.tables.items())}
    for view in staged.views:
        counts[view["name"]] = row_counts_of(con, view["name"])
    return Published(
        database=out_dir / DATABASE,
        parquet_dir=out_dir / "parquet",
        row_counts=counts,
        release=name,
        run_date=staged.run_date,
        bytes_written=tally.bytes,
        files_written=tally.written,
        files_linked=tally.linked,
        partitions_written=staged.written,
        removed=removed,
        warnings=warnings,
    )


def _remove_leftovers(
    releases: Path, out_dir: Path, site_dir: Path | None, keep: Retention
) -> list[str]:
    """Remove what earlier publishes left; a failure stops this publish before it starts."""
    try:
        return remove_leftovers(releases, out_dir, site_dir, keep)
    except OSError as exc:
        raise PublishError(
            f"could not remove what an earlier publish left in {releases}: {exc}. Nothing "
            f"was swapped: {describe_published(out_dir, releases)}"
        ) from exc


def _stage_and_commit(
    con: duckdb.DuckDBPyConnection,
    releases: Path,
    name: str,
    site: SiteVersion | None,
    site_dir: Path | None,
    full: bool,
    tally: Tally,
) -> _Staged:
    """Stage release `name` completely, flush it to disk and point `current` at it.

    On any failure the staged files are removed and PublishError says which step failed
    and what the site and the published warehouse still show.
    """
    previous = current_release(releases)
    staged = releases / name
    what = _what(con)
    step = ["preparing the release folder"]
    try:
        staged.mkdir()
        step[0] = "staging the site"
        site_version = stage_site(releases, staged, previous, site, site_dir, tally)
        changes, last_seq = logged_changes(con)
        tables, written = export_tables(con, staged, previous, changes, full, tally, step)
        step[0] = f"writing published/{DATABASE}"
        views = build_database(con, staged / "published", tables, tally)
        day = run_date(con, tables)
        manifest = _manifest(name, day, site_version, tables, views, tally)
        step[0] = f"writing {MANIFEST}"
        tally.write_text(staged / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True))
        step[0] = "syncing the release to disk"
        sync(staged, tally)
        step[0] = "committing"
        commit(releases, name)
    except Exception as exc:
        left = discard(releases, staged, name)
        raise PublishError(
            f"publishing {what} failed while {step[0]}: {exc}. Nothing was swapped: "
            f"{still_showing(previous)}; {left}"
        ) from exc
    return _Staged(tables, views, written, day, last_seq)


def _manifest(
    name: str,
    day: dt.date | None,
    site_version: str | None,
    tables: dict[str, dict],
    views: list[dict],
    tally: Tally,
) -> dict:
    """The release's RELEASE.json."""
    return {
        "release": name,
        "created_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "run_date": day.isoformat() if day else None,
        "site_version": site_version,
        "tables": tables,
        "views": views,
        "bytes_written": tally.bytes,
        "files_written": tally.written,
        "files_linked": tally.linked,
    }


def _after_commit(
    con: duckdb.DuckDBPyConnection,
    releases: Path,
    out_dir: Path,
    site_dir: Path | None,
    last_seq: int | None,
    keep: Retention,
) -> list[str]:
    """Links, the change log and old releases, once committed; returns what failed."""
    warnings = []
    links = [(out_dir, "published")] + ([(site_dir, "site")] if site_dir else [])
    for link, part in links:
        try:
            link_to_current(link, releases, part)
        except OSError as exc:
            warnings.append(f"could not link {link} to {releases / CURRENT / part}: {exc}")
    if last_seq is not None:
        try:
            clear_changes(con, last_seq)
        except duckdb.Error as exc:
            warnings.append(f"publish_changes not cleared (the next publish redoes it): {exc}")
    try:
        collect_garbage(releases, keep)
    except OSError as exc:
        warnings.append(f"old releases not removed: {exc}")
    return warnings


def _what(con: duckdb.DuckDBPyConnection) -> str:
    """What is being published, for messages: `run date 2026-04-15`."""
    try:
        day = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    except duckdb.Error:
        day = None
    return f"run date {day}" if day else "the warehouse"
