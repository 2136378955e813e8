"""Publishing a release: incremental Parquet, one atomic swap, and crash and disk-full safety.

Real files and a real DuckDB throughout. The kill tests SIGKILL a real publishing process.
The disk-full tests publish onto a real, small tmpfs, mounted when the tests run as root
(CI's container does). Without the right to mount, the disk-full-mid-publish test makes the
publish's write step raise ENOSPC instead (the one point where a full disk surfaces in our
code), and the leftovers-fill-the-disk test is skipped: it needs a filesystem whose size it
can set.
"""

import datetime as dt
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.defs.report.assets import published_warehouse
from pipeline.defs.resources import GpuvalueSettings
from reports.site import render_index
from tests.conftest import copy_build
from warehouse import release as release_module
from warehouse.db import connect, replace_rows, row_counts
from warehouse.export import open_published, parquet_files
from warehouse.publish import publish
from warehouse.release import CURRENT, PublishError, SiteVersion, current_release

REPO = Path(__file__).resolve().parents[2]


def observations(days: list[str], n: int = 3) -> pl.DataFrame:
    rows = [
        {
            "observed_at": dt.datetime.fromisoformat(day) + dt.timedelta(hours=i),
            "source": "ebay",
            "market": "used",
            "gpu_id": gpu,
            "title": f"{gpu} card {i}",
            "price": 500.0 + i,
            "currency": "USD",
            "price_usd": 500.0 + i,
        }
        for day in days
        for gpu in ("rtx-3090", "rtx-4090")
        for i in range(n)
    ]
    return pl.DataFrame(rows)


def load_day(con, day: str, n: int = 3) -> None:
    replace_rows(
        con,
        "price_observations",
        observations([day], n),
        "CAST(observed_at AS DATE) = ?",
        [day],
    )


def inode(path: Path) -> int:
    return path.stat().st_ino


def test_a_night_rewrites_only_the_months_it_touched(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    for day in ("2026-01-10", "2026-01-11", "2026-02-01"):
        load_day(con, day)
    out = tmp_path / "published"
    first = publish(con, out)
    assert first.partitions_written["price_observations"] == ["2026-01", "2026-02"]
    assert con.sql("SELECT count(*) FROM publish_changes").fetchall() == [(0,)]  # consumed
    january = out / "parquet" / "price_observations" / "2026-01.parquet"
    january_inode = inode(january)

    load_day(con, "2026-02-02")  # tonight's partition
    second = publish(con, out)
    assert second.partitions_written["price_observations"] == ["2026-02"]
    assert inode(january) == january_inode  # linked from the previous release, not rewritten
    assert second.files_linked >= 1
    reader = open_published(out)
    try:
        assert reader.sql("SELECT count(*) FROM price_observations").fetchall() == [(24,)]
        # The view is sorted by gpu_id within a month, as the docs promise.
        got = reader.sql("SELECT gpu_id FROM read_parquet(?)", params=[str(january)]).pl()["gpu_id"]
        assert got.to_list() == sorted(got.to_list())
    finally:
        reader.close()

    # A rerun that replaces a January day with the same number of rows, new values: the log
    # names January, so it is rewritten although its count did not change.
    replace_rows(
        con,
        "price_observations",
        observations(["2026-01-10"]).with_columns(price_usd=pl.col("price_usd") * 2),
        "CAST(observed_at AS DATE) = ?",
        ["2026-01-10"],
    )
    third = publish(con, out)
    assert third.partitions_written["price_observations"] == ["2026-01"]
    # A write that bypassed replace_rows (no log entry) still reaches the snapshot when it
    # changes a month's row count.
    con.sql("DELETE FROM price_observations WHERE CAST(observed_at AS DATE) = '2026-02-02'")
    fourth = publish(con, out)
    assert fourth.partitions_written["price_observations"] == ["2026-02"]
    reader = open_published(out)
    try:
        assert row_counts(reader)["price_observations"] == row_counts(con)["price_observations"]
        assert reader.sql("SELECT max(price_usd) FROM price_observations").fetchall() == [(1004.0,)]
        # Readers see the pipeline's exact column types, views included.
        types = "SELECT column_name, data_type FROM information_schema.columns " + (
            "WHERE table_name = 'price_observations' ORDER BY ordinal_position"
        )
        assert reader.sql(types).fetchall() == con.sql(types).fetchall()
    finally:
        reader.close()


def test_publish_refuses_a_second_publisher(tmp_path):
    con = connect(tmp_path / "w.duckdb")
    out = tmp_path / "published"
    publish(con, out)
    with release_module.lock(tmp_path / "releases"):
        with pytest.raises(PublishError, match="another publish"):
            publish(con, out)


# --- a real build: site and warehouse together -----------------------------------------------


def site_version(root: Path, version: str) -> SiteVersion:
    """The build's rendered version `version` (`.build/<date>/site/<version>/`)."""
    return SiteVersion(version, root / ".build" / version[:10] / "site" / version, render_index)


def relabel(root: Path, day: str, number: int = 2) -> str:
    """The build's rendered pages under the name a rerun of `day` gets (`<day>.N`), and the
    build's version file saying so, as the report step writes it: a published version is
    never rewritten, so publishing the same build again needs the next name."""
    label = f"{day}.{number}"
    rendered = root / ".build" / day / "site"
    if not (rendered / label).exists():
        shutil.copytree(rendered / day, rendered / label)
    (root / ".build" / day / "version.txt").write_text(f"{label}\n", encoding="utf-8")
    return label


def run_date_of(root: Path) -> str:
    con = open_published(root / "published")
    try:
        return str(con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0])
    finally:
        con.close()


def assert_consistent(root: Path, release: str, releases: Path | None = None) -> None:
    """site/ and published/ show the same committed release, whole and readable."""
    releases = releases or root / "releases"
    assert os.readlink(releases / CURRENT) == release
    manifest = json.loads((releases / release / "RELEASE.json").read_text(encoding="utf-8"))
    run_date = run_date_of(root)
    assert run_date == manifest["run_date"]
    latest = (root / "site" / "latest").resolve()
    assert latest.name.startswith(run_date)
    assert (root / "site" / "latest" / "index.html").stat().st_size > 0
    assert f'href="{run_date}/index.html"' in (root / "site" / "index.html").read_text()
    con = open_published(root / "published")
    try:
        counts = row_counts(con)  # every view's Parquet files are there
    finally:
        con.close()
    assert counts["price_observations"] == manifest["tables"]["price_observations"]["rows"]
    assert counts["perf_per_dollar"] > 0


def no_leftovers(releases: Path) -> list[str]:
    """Anything in releases/ that no kept release uses (staged folders, temp links)."""
    current = current_release(releases)
    numbers = sorted(int(p.name[2:]) for p in releases.glob("r-*"))
    stray = [str(p) for p in releases.glob(".*.tmp")]
    stray += [f"r-{n:06d}" for n in numbers if n > int(current.name[2:])]
    used = {
        Path(os.readlink(e)).name
        for r in releases.glob("r-*")
        for e in (r / "site").iterdir()
        if e.is_symlink()
    }
    stray += [p.name for p in (releases / "site-versions").iterdir() if p.name not in used]
    return stray


PUBLISHER = """
import sys
from pathlib import Path

import duckdb

from reports.site import render_index
from warehouse.publish import publish
from warehouse.release import SiteVersion

root, version = Path(sys.argv[1]), sys.argv[2]
releases = Path(sys.argv[3]) if len(sys.argv) > 3 else None
con = duckdb.connect(str(root / "gpuvalue.duckdb"))
site = SiteVersion(version, root / ".build" / version[:10] / "site" / version, render_index)
publish(con, root / "published", site=site, site_dir=root / "site", releases_dir=releases,
        full=True)
"""


def kill_mid_publish(root: Path, version: str, staged: Path, ready, releases=None) -> None:
    """Start a publish in another process and SIGKILL it as soon as `ready(staged)` holds."""
    args = [sys.executable, "-c", PUBLISHER, str(root), version]
    proc = subprocess.Popen([*args, *([str(releases)] if releases else [])], cwd=REPO)
    deadline = time.monotonic() + 120
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if staged.exists() and ready(staged):
                os.kill(proc.pid, signal.SIGKILL)
                break
            time.sleep(0.002)
    finally:
        if proc.poll() is None and time.monotonic() >= deadline:
            proc.kill()
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the publish ended before it could be killed"


def size_on_disk(*paths: Path) -> int:
    total = 0
    for path in paths:
        if path.is_file():
            total += path.stat().st_blocks * 512
            continue
        for root, dirs, files in os.walk(path):
            for name in [*dirs, *files]:
                st = os.lstat(os.path.join(root, name))
                total += st.st_blocks * 512
    return total


def parquet_count(staged: Path) -> int:
    folder = staged / "published" / "parquet"
    return sum(1 for _ in folder.rglob("*.parquet")) if folder.is_dir() else 0


def next_run(root: Path, **paths) -> dg.ExecuteInProcessResult:
    """The nightly publish step itself, as the next night runs it."""
    settings = GpuvalueSettings(
        build_dir=str(root / ".build"),
        site_dir=str(paths.get("site", root / "site")),
        published_dir=str(paths.get("published", root / "published")),
    )
    return dg.materialize(
        [published_warehouse],
        resources={
            "settings": settings,
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        raise_on_error=False,
    )


@pytest.mark.slow(seconds=12)
@pytest.mark.parametrize(
    "moment",
    ["exporting Parquet", "writing the database"],
)
def test_kill_9_mid_publish_keeps_the_previous_release_and_the_next_run_cleans_up(
    built, tmp_path, moment
):
    root = copy_build(built, tmp_path / "root").root
    version = relabel(root, run_date_of(root))  # the built date is published: a rerun's name
    before = os.readlink(root / "releases" / CURRENT)
    staged = root / "releases" / f"r-{int(before[2:]) + 1:06d}"
    ready = {
        "exporting Parquet": lambda s: parquet_count(s) >= 20,
        "writing the database": lambda s: (s / "published" / "gpuvalue.duckdb").exists(),
    }[moment]

    kill_mid_publish(root, version, staged, ready)

    # The kill landed mid-publish: a staged release is left over, nothing was swapped.
    assert staged.is_dir()
    assert_consistent(root, before)
    result = next_run(root)
    assert result.success
    assert_consistent(root, staged.name)  # the next release reuses the number, cleanly
    assert no_leftovers(root / "releases") == []
    publish_event = next(
        e for e in result.all_events if e.event_type_value == "ASSET_MATERIALIZATION"
    )
    assert publish_event.event_specific_data.materialization.metadata["release"].value == (
        staged.name
    )


# --- a full disk -------------------------------------------------------------------------------


# Room for two releases (the one shown and the one being staged) and not much more: a
# release is ~51 MB since issue 24 (a 39 MB site version, of which the LLM serving
# downloads are 12 MB, and a 12 MB published warehouse); 64 MB held two before it.
SMALL_DISK_MB = 160


class SmallDisk:
    """A real tmpfs of a given size (root only), or None where mounting is not allowed."""

    def __init__(self, path: Path):
        self.path = path
        path.mkdir()
        self.mounted = os.geteuid() == 0 and self._mount(f"size={SMALL_DISK_MB}m")

    def _mount(self, options: str) -> bool:
        cmd = ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(self.path)]
        return subprocess.run(cmd, capture_output=True, check=False).returncode == 0

    def resize(self, size: int) -> None:
        size = -(-size // 4096) * 4096
        cmd = ["mount", "-o", f"remount,size={size}", str(self.path)]
        subprocess.run(cmd, check=True, capture_output=True)

    def free(self) -> int:
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize

    def used(self) -> int:
        st = os.statvfs(self.path)
        return (st.f_blocks - st.f_bfree) * st.f_frsize

    def close(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], check=False, capture_output=True)


@pytest.fixture
def small_disk(tmp_path):
    disk = SmallDisk(tmp_path / "disk")
    yield disk
    disk.close()


def first_release_on(disk: Path, root: Path, version: str) -> None:
    con = duckdb.connect(str(root / "gpuvalue.duckdb"))
    try:
        publish(
            con,
            disk / "published",
            site=site_version(root, version),
            site_dir=disk / "site",
        )
    finally:
        con.close()


def consistent_on(disk: Path, release: str) -> None:
    assert_consistent(disk, release, disk / "releases")


@pytest.mark.slow(seconds=8)
def test_disk_full_mid_publish_keeps_the_previous_release_and_says_so(
    built, tmp_path, small_disk, monkeypatch
):
    root = copy_build(built, tmp_path / "root").root
    version = run_date_of(root)
    disk = small_disk.path
    first_release_on(disk, root, version)
    consistent_on(disk, "r-000001")

    if small_disk.mounted:
        # Leave less room than tonight's release needs (its site version alone is larger).
        filler = disk / "filler"
        with filler.open("wb") as handle:
            handle.write(b"\0" * max(small_disk.free() - 512 * 1024, 0))
    else:
        # No right to mount a small filesystem here: the write step itself raises ENOSPC
        # after a few files, as a full disk would make it.
        wrote = release_module.Tally.wrote
        calls = {"n": 0}

        def full_disk(self, path):
            calls["n"] += 1
            if calls["n"] > 5:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
            return wrote(self, path)

        monkeypatch.setattr(release_module.Tally, "wrote", full_disk)

    relabel(root, version)  # tonight's version: the date's next name (the date is published)
    failed = next_run(root, site=disk / "site", published=disk / "published")
    assert not failed.success
    error = next(e for e in failed.all_events if e.is_step_failure)
    message = error.step_failure_data.error.to_string()  # the step's error and its cause
    assert "No space left on device" in message
    assert (
        "Nothing was swapped: the site and the published warehouse both still show release "
        f"r-000001 (run date {version}, site version {version})" in message
    )
    consistent_on(disk, "r-000001")

    # The space comes back (whatever filled the disk is gone): the next run succeeds and
    # nothing of the failed one is left.
    if small_disk.mounted:
        filler.unlink()
    else:
        monkeypatch.undo()
    assert next_run(root, site=disk / "site", published=disk / "published").success
    consistent_on(disk, "r-000002")
    assert no_leftovers(disk / "releases") == []


@pytest.mark.slow(seconds=20)
def test_a_killed_publish_does_not_keep_the_disk_full(built, tmp_path, small_disk):
    """A killed publish's leftovers would leave too little room for the next release; the
    next run removes them first, so it fits without anyone cleaning up."""
    if not small_disk.mounted:
        pytest.skip("needs a real small filesystem: mounting a tmpfs requires root")
    root = copy_build(built, tmp_path / "root").root
    version = run_date_of(root)
    disk = small_disk.path
    first_release_on(disk, root, version)
    used_by_release = small_disk.used()

    # What tonight's release needs, measured on an ordinary disk from the same warehouse.
    scratch = tmp_path / "scratch"
    first_release_on(scratch, root, version)
    con = duckdb.connect(str(root / "gpuvalue.duckdb"))
    try:
        night = publish(
            con,
            scratch / "published",
            site=site_version(root, relabel(root, version)),
            site_dir=scratch / "site",
        )
    finally:
        con.close()
    made = [
        *(scratch / "releases" / night.release).rglob("*"),
        *(scratch / "releases" / "site-versions").glob(f"*.{night.release}/**/*"),
    ]
    new = [p for p in made if p.is_file() and not p.is_symlink() and p.stat().st_nlink == 1]
    needed = size_on_disk(*new) + 256 * 1024
    assert night.files_written > 0

    # Kill a (full) publish late, once its leftovers alone exceed what tonight needs.
    staged = disk / "releases" / "r-000002"
    kill_mid_publish(
        root,
        relabel(root, version),
        staged,
        lambda s: size_on_disk(s, *s.parent.glob(f"site-versions/*.{s.name}")) > needed,
        releases=disk / "releases",
    )
    assert staged.is_dir()
    leftover = small_disk.used() - used_by_release
    assert leftover > needed
    # Shrink the disk to what is in use plus less than tonight needs: without removing the
    # leftovers first, tonight's release cannot fit.
    small_disk.resize(small_disk.used() + needed // 2)
    assert small_disk.free() < needed

    result = next_run(root, site=disk / "site", published=disk / "published")
    assert result.success
    consistent_on(disk, "r-000002")
    assert no_leftovers(disk / "releases") == []
    shutil.rmtree(scratch)


def test_the_first_publish_replaces_the_old_layout_and_its_stale_temp_files(tmp_path):
    """Before releases, site/ and published/ were real folders, and a killed or disk-full
    publish left temp files in them that nothing removed."""
    con = connect(tmp_path / "w.duckdb")
    load_day(con, "2026-01-10")
    out, site = tmp_path / "published", tmp_path / "site"
    (out / "parquet").mkdir(parents=True)
    (out / "gpuvalue.duckdb").write_bytes(b"yesterday")
    (out / ".gpuvalue.4242.tmp.duckdb").write_bytes(b"\0" * 4096)  # a killed publish's
    (out / ".parquet.4242.tmp").mkdir()
    (out / ".parquet.4242.tmp" / "gpus.parquet").write_bytes(b"\0" * 4096)
    old_version = site / "2026-01-09"
    (old_version / "charts").mkdir(parents=True)
    (old_version / "index.html").write_text("the 9th", encoding="utf-8")
    (site / ".2026-01-10.staging").mkdir()
    (site / "index.html").write_text("old index", encoding="utf-8")
    rendered = tmp_path / "build" / "2026-01-10"
    (rendered / "charts").mkdir(parents=True)
    (rendered / "index.html").write_text("the 10th", encoding="utf-8")

    result = publish(
        con,
        out,
        site=SiteVersion("2026-01-10", rendered, render_index),
        site_dir=site,
    )

    assert out.is_symlink() and site.is_symlink()
    assert not list(tmp_path.glob(".*legacy*"))
    assert {Path(p).name for p in result.removed} >= {
        ".gpuvalue.4242.tmp.duckdb",
        ".parquet.4242.tmp",
        ".2026-01-10.staging",
    }
    # The old site's versions are carried into the first release; the new one is latest.
    assert (site / "2026-01-09" / "index.html").read_text(encoding="utf-8") == "the 9th"
    assert (site / "latest" / "index.html").read_text(encoding="utf-8") == "the 10th"
    index = (site / "index.html").read_text(encoding="utf-8")
    assert index.index("2026-01-10/index.html") < index.index("2026-01-09/index.html")
    reader = open_published(out)
    try:
        assert reader.sql("SELECT count(*) FROM price_observations").fetchall() == [(6,)]
    finally:
        reader.close()
    assert parquet_files(out, "price_observations")[0].name == "2026-01.parquet"
