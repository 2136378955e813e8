"""The suite's shared builds, their order on two workers, and its CPU-time report.

Dagster, the pipeline and the warehouse are imported inside the functions that use them:
the xdist controller loads this file too, and it runs no test (a heavy import here cost
it ~5 s of CPU, and the workers waited for it).
"""

from __future__ import annotations

import atexit
import contextlib
import datetime as dt
import errno
import fcntl
import functools
import hashlib
import json
import os
import resource
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from sources.bundled import DATA_DIR

if TYPE_CHECKING:
    import dagster as dg


@functools.cache
def night_days() -> tuple[str, str]:
    """A second night: the bundled snapshot's newest partition day alone, as the nightly
    job runs it. Tests that change an input and run again use it (`NIGHT`) instead of
    re-materializing every day of the snapshot (the fixture `built` has them all)."""
    from pipeline.defs.resources import GpuvalueSettings
    from pipeline.run import snapshot_days

    return (snapshot_days(GpuvalueSettings())[1],) * 2


def __getattr__(name: str) -> object:
    """`NIGHT` (`night_days()`), computed when a test module imports it, not when the
    controller loads this file."""
    if name == "NIGHT":
        return night_days()
    raise AttributeError(name)


@dataclass(frozen=True)
class Build:
    """Where one in-process pipeline run put its outputs."""

    root: Path
    warehouse: Path
    site: Path
    published: Path
    result: dg.ExecuteInProcessResult


# The SVG cache every build of the session shares (reports/charts/rendering.py SvgCache:
# content-addressed, so a chart whose spec is unchanged is not rendered again), as the
# nights of one deployment do. One folder for the whole session, every xdist worker
# included (the controller makes it and hands it to the workers): each build gets a view
# of it (`chart_cache`), so one build's prune never removes another's charts.
# (An environment variable, not a module global: test modules import this file as
# `tests.conftest`, a second module beside the `conftest` pytest loaded.)
CHARTS_ENV = "GPUVALUE_TEST_CHART_CACHE"


# Kept chart entries not used for this long are removed when a session starts.
CHART_CACHE_DAYS = 14


def pytest_addoption(parser) -> None:
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="show the CPU seconds (user + sys, the test process and the children it waited "
        "for) of the N costliest tests and of each worker (0: all)",
    )
    parser.addoption(
        "--chart-cache",
        default=None,
        metavar="DIR",
        help="keep the session's rendered charts in DIR for the next session (`make test`: "
        ".build/test-chart-cache); by default a fresh folder, removed at the end",
    )


def pytest_configure(config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        os.environ[CHARTS_ENV] = workerinput[CHARTS_ENV]
        return
    kept = config.getoption("chart_cache")
    if kept:
        # Content-addressed (vl-convert's version and the whole spec), so an entry is never
        # stale: a chart whose spec or renderer changed misses and is rendered again. Entries
        # no build of the last CHART_CACHE_DAYS used are dropped (`chart_cache` touches them).
        folder = Path(kept).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        cutoff = dt.datetime.now().timestamp() - CHART_CACHE_DAYS * 86400
        for entry in folder.iterdir():
            if entry.is_file() and entry.stat().st_mtime < cutoff:
                entry.unlink(missing_ok=True)
        os.environ[CHARTS_ENV] = str(folder)
        return
    folder = tempfile.mkdtemp(prefix="gpuvalue-test-charts-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.environ[CHARTS_ENV] = folder


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    """xdist: every worker uses the controller's chart folder."""
    node.workerinput[CHARTS_ENV] = os.environ[CHARTS_ENV]


# CPU time, not wall time: the machine is shared, so wall time measures the neighbours.
# Each test's figure is the getrusage delta of its whole protocol (setup, call, teardown) in
# its worker, children included (a subprocess counts once it has been waited for), so a
# shared build's cost lands on the first test that asked for it.
def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


_test_cpu: dict[str, float] = {}


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    start = _cpu()
    yield
    _test_cpu[item.nodeid] = _cpu() - start


def pytest_sessionfinish(session) -> None:
    """xdist: each worker hands its figures to the controller."""
    output = getattr(session.config, "workeroutput", None)
    if output is not None:
        output["cpu"] = {"tests": _test_cpu, "total": _cpu()}


_worker_cpu: dict[str, dict] = {}


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    """xdist: the controller keeps each worker's figures."""
    cpu = getattr(node, "workeroutput", {}).get("cpu")
    if cpu is not None:
        _worker_cpu[node.gateway.id] = cpu


def pytest_terminal_summary(terminalreporter, config) -> None:
    count = config.getoption("cpu_durations")
    if count is None:
        return
    workers = _worker_cpu or {"main": {"tests": _test_cpu, "total": _cpu()}}
    write = terminalreporter.write_line
    terminalreporter.section("CPU seconds (user + sys, children included)")
    if _worker_cpu:
        own = resource.getrusage(resource.RUSAGE_SELF)
        write(f"controller: {own.ru_utime + own.ru_stime:.1f} (its own process)")
    for name, cpu in sorted(workers.items()):
        tests = sum(cpu["tests"].values())
        write(f"{name}: {cpu['total']:.1f} ({tests:.1f} in {len(cpu['tests'])} tests)")
    write(f"all workers: {sum(c['total'] for c in workers.values()):.1f}")
    ranked = sorted(
        ((seconds, nodeid) for c in workers.values() for nodeid, seconds in c["tests"].items()),
        reverse=True,
    )
    for seconds, nodeid in ranked[: count or None]:
        write(f"{seconds:8.1f}  {nodeid}")


def _entries(folder: Path) -> Iterator[Path]:
    # Finished entries only: SvgCache stages a new entry under a dotted name, then renames.
    # Every kind is shared: the SVGs and the interactive charts' JavaScript bundle (~2.5 s
    # of CPU to make, once per build before it was shared).
    return (p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def _link(entry: Path, target: Path) -> None:
    """A hard link, or a copy where the two folders are on different filesystems (a kept
    cache in the checkout, the builds in a tmpfs /tmp)."""
    try:
        os.link(entry, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        if target.exists():
            raise FileExistsError(target) from exc
        shutil.copy2(entry, target)


@contextlib.contextmanager
def chart_cache(build_dir: Path) -> Iterator[Path]:
    """`build_dir/chart-cache` as a view of the session's chart cache while a build runs.

    The view holds hard links to every entry (SVGs, the charts' script bundle) the session
    has made so far; afterwards the entries this build added are linked back. SvgCache
    never rewrites an entry in place (a new one is written aside and renamed), and its
    prune removes unused entries from the view only, so builds in any order, in either
    worker, reuse each other's charts. A copied build's own view (or the symlink older
    copies held) is replaced.
    """
    view = build_dir / "chart-cache"
    if view.is_symlink() or view.is_file():
        view.unlink()
    elif view.exists():
        shutil.rmtree(view)
    view.mkdir(parents=True)
    shared = Path(os.environ[CHARTS_ENV])
    for entry in _entries(shared):
        _link(entry, view / entry.name)
    try:
        yield view
    finally:
        for entry in _entries(view):
            with contextlib.suppress(FileExistsError):
                _link(entry, shared / entry.name)
            # Used now: a kept cache (--chart-cache) drops what no build used for a while.
            os.utime(shared / entry.name)


def build(root: Path, data_dir: Path = DATA_DIR, days=None, **settings_fields) -> Build:
    """Run the whole graph in-process with every output under `root`.

    The builds of one test session share their rendered charts (`chart_cache`), as the
    nights of one deployment do; each build's own outputs stay under `root`.
    """
    from pipeline.run import build_into

    with chart_cache(root / ".build"):
        settings, result = build_into(root, data_dir, days=days, **settings_fields)
    return Build(
        root,
        root / "gpuvalue.duckdb",
        Path(settings.site_dir),
        Path(settings.published_dir),
        result,
    )


def copy_build(source: Build, root: Path) -> Build:
    """A copy of a built tree (warehouse, releases, site and published links) to change.

    Links are copied as links: they are relative, so the copy's `site/` and `published/`
    follow the copy's own releases.
    """
    # The chart cache is not copied: a build makes its own view (`chart_cache`).
    shutil.copytree(source.root, root, symlinks=True, ignore=shutil.ignore_patterns("chart-cache"))
    return Build(root, root / "gpuvalue.duckdb", root / "site", root / "published", source.result)


def rerun_model(source: Build, root: Path, **settings_fields) -> Build:
    """A copy of `source` on which only the model group runs again (its warehouse changes;
    nothing is published).

    For tests of the model's parameters: their inputs are the bundled build's, so the
    ingest (and its eight cloud runs) would only reload the same rows, and the site and
    publish are tested on their own.
    """
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from pipeline.definitions import defs as load_defs
    from pipeline.defs.resources import GpuvalueSettings

    copy_build(source, root)
    defs = load_defs()
    settings = GpuvalueSettings(
        build_dir=str(root / ".build"),
        site_dir=str(root / "site"),
        published_dir=str(root / "published"),
        **settings_fields,
    )
    result = dg.materialize(
        [*defs.assets, *defs.asset_checks],
        selection=dg.AssetSelection.groups("model"),
        resources={
            **defs.resources,
            "settings": settings,
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        raise_on_error=False,
    )
    return Build(root, root / "gpuvalue.duckdb", root / "site", root / "published", result)


# Whole pipeline runs are most of the suite's time. How the suite keeps two workers busy
# (`-n 2 --dist loadgroup --no-loadscope-reorder`: work is dealt out in the order below,
# one test at a time to whichever worker is free, except an xdist group, which goes whole
# to one worker):
# 1. first, one test that reads the bundled build (`built`): its worker builds it while
#    the other worker starts on the fast tests;
# 2. then every test without a build, in collection order (both workers, once the build
#    is made);
# 3. then the other tests that read the bundled build, on both workers, one group per
#    module, the costliest groups first (`_group_costs`: the browser's modules): the build
#    is made by the time they come up (a worker that asks earlier waits for it, `_once`);
# 4. last the long ones (the `night` tier), longest first, to whichever worker is free: the
#    tests marked `slow(seconds)` (a pipeline run, PostgreSQL, a publish killed midway...)
#    and the groups of the later shared builds (`LONG_GROUPS`: each build and the tests
#    that read it).
# The shared builds are made once per session, by whichever worker asks first, under a
# file lock (`_once`); the other worker reads the same folders (tests never change a
# shared build: they copy it, `copy_build`).
BUILD_FIXTURES = {"built", "second_night", "rerun"}
# The shared builds made after `built`, each an xdist group of its readers, and what each
# costs with its readers on an idle machine (for the order only).
LONG_GROUPS = {"second_night": 60, "rerun": 50}


def _seconds(item) -> float:
    """How long the test is expected to take, if long; 0 for the fast ones."""
    mark = item.get_closest_marker("slow")
    if mark is not None:
        return float(mark.kwargs.get("seconds", mark.args[0] if mark.args else 30))
    names = set(getattr(item, "fixturenames", ()))
    return max((seconds for group, seconds in LONG_GROUPS.items() if group in names), default=0.0)


def _group(item) -> str | None:
    """The xdist group of a test reading a shared build; none for a `slow` one (it copies
    the build and runs on its own, on either worker).

    The readers of a later shared build are one group each; the readers of `built` one
    group per module (`built-<module>`), so a module's browser, server and connection
    fixtures are set up once, on one worker, while the modules spread over both.
    """
    names = set(getattr(item, "fixturenames", ()))
    if item.get_closest_marker("slow") is not None:
        return None
    for group in LONG_GROUPS:
        if group in names:
            return group
    if "built" in names:
        return f"built-{item.module.__name__.rsplit('.', 1)[-1]}"
    return None


def _reads_built(item) -> bool:
    return not _seconds(item) and "built" in getattr(item, "fixturenames", ())


# What a reader of `built` costs, for the order of their groups only: one that drives
# Chromium takes seconds (a context and a renderer per page, pages of 10,000-100,000 px at
# phone width), the others a fraction of one.
BROWSER_SECONDS, READER_SECONDS = 5.0, 0.3


def _group_costs(items) -> dict[str, float]:
    """The expected seconds of each group of `built` readers (`built-<module>`)."""
    costs: dict[str, float] = {}
    for item in items:
        if _reads_built(item):
            uses = set(getattr(item, "fixturenames", ()))
            seconds = BROWSER_SECONDS if "browser" in uses else READER_SECONDS
            group = _group(item)
            costs[group] = costs.get(group, 0.0) + seconds
    return costs


# The long ones of NIGHT_SECONDS or more are also the `night` tier (`make test-nights`,
# which CI runs after `make test`): each runs a night of its own (live, production, dev
# server, crash-safety...) or reads a later shared night (`second_night`, `rerun`). `make
# test` is the rest: every unit test, every test that reads the one bundled build (but one
# that renders a whole version of its own from it), and the short slow ones (a refused spec
# file, a refused cloud file, a full disk: seconds each) (docs/performance.md, "Test tiers").
NIGHT_SECONDS = 10


# tryfirst: xdist's worker turns the marks into node ids in its own hook of this name, so
# they must be set before it runs (otherwise the group is ignored and each worker builds);
# and the mark plugin's own hook deselects by `-m` after this one.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        group = _group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
        if _seconds(item) >= NIGHT_SECONDS:
            item.add_marker(pytest.mark.night)
    first = next((item for item in items if _reads_built(item)), None)
    costs = _group_costs(items)

    def order(item) -> tuple[int, float]:
        if item is first:
            return (0, 0.0)
        if _reads_built(item):
            # Costliest group first: whichever worker is free takes the next, so the
            # workers finish close together (the last group dealt is a short one).
            return (2, -costs[_group(item)])
        seconds = _seconds(item)
        return (3, -seconds) if seconds else (1, 0.0)

    items.sort(key=order)  # stable: collection order within each rank


def _shared_root(factory: pytest.TempPathFactory) -> Path:
    """A folder every xdist worker of the session sees (their basetemps are siblings)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextlib.contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# What the worker that built a shared fixture returned, to give its own tests the original.
_made: dict[str, object] = {}


def _once(
    factory: pytest.TempPathFactory,
    name: str,
    make: Callable[[Path], object],
    save: Callable[[object], dict],
    load: Callable[[dict], object],
) -> object:
    """`make(folder)` once per session, in whichever worker asks first.

    The other workers wait for it (a file lock), then rebuild the value from what `save`
    recorded in `folder/fixture.json`. A failed `make` records nothing: the next ask tries
    again (and fails the same way, with its own error).
    """
    if name in _made:
        return _made[name]
    folder = _shared_root(factory) / name
    record = folder / "fixture.json"
    with _exclusive(folder.with_name(f"{name}.lock")):
        if record.exists():
            value = load(json.loads(record.read_text(encoding="utf-8")))
        else:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            value = make(folder)
            staged = record.with_name("fixture.json.tmp")
            staged.write_text(json.dumps(save(value)), encoding="utf-8")
            staged.replace(record)
    _made[name] = value
    return value


def _save_build(out: Build) -> dict:
    """A Build as JSON: its folders and its Dagster run (the events, with Dagster's serdes)."""
    import dagster as dg

    return {
        "root": str(out.root),
        "warehouse": str(out.warehouse),
        "site": str(out.site),
        "published": str(out.published),
        "events": dg.serialize_value(list(out.result.all_events)),
        "run": dg.serialize_value(out.result.dagster_run),
    }


def _load_build(saved: dict) -> Build:
    """The Build another worker made: the same folders, and its run rebuilt from its events
    (success, every event, materializations and check evaluations; not the job's outputs,
    which no test reads: `job_def` is not kept)."""
    import dagster as dg

    result = dg.ExecuteInProcessResult(
        dg.deserialize_value(saved["events"]),
        dg.deserialize_value(saved["run"], dg.DagsterRun),
        None,
        None,  # type: ignore[arg-type]
    )
    return Build(
        Path(saved["root"]),
        Path(saved["warehouse"]),
        Path(saved["site"]),
        Path(saved["published"]),
        result,
    )


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Build:
    """The bundled snapshot, built once for the whole session (all workers)."""
    out = _once(tmp_path_factory, "built", build, _save_build, _load_build)
    assert out.result.success, "the pipeline failed on the bundled snapshot"
    return out


@dataclass(frozen=True)
class Night:
    """A second night run on a copy of `built`, and what it looked like before."""

    build: Build
    before: dict[str, int]  # published row counts
    run_date: str  # the first night's run date
    site_before: dict[str, str]  # sha256 of every file of the first night's site version
    data_dir: Path


# The changes of the shared second night (`second_night`), each checked by its own tests.
NIGHT2 = "2026-10-14"  # the second night's run date (as_of)
CAPTCHA = Path(__file__).parent / "fixtures" / "retail" / "amazon" / "captcha_classic.html"
CAPTCHA_AT = dt.datetime(2026, 4, 15, 13, 0, tzinfo=dt.UTC)
LAMBDA_SLIP = ("h100-pcie-80gb", "h100-sxm5-80gb")  # on the gpu_1x_h100_pcie line
UK_SOLD_ROW = (
    "2026-07-07,ebay-sold-uk,used,rx-9060-xt-16gb,Sapphire PULSE Radeon RX 9060 XT 16GB,"
    "245.00,GBP,https://www.ebay.co.uk/itm/100000000001,100000000001,"
    "test fixture (a second night's data)\n"
)


def digest(folder: Path) -> dict[str, str]:
    """sha256 of every file under `folder`, by relative path."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="session")
def second_night(built, tmp_path_factory) -> Night:
    """One second night on other data, run once for every test that needs one (see
    `_second_night`)."""

    def save(night: Night) -> dict:
        return {
            "build": _save_build(night.build),
            "before": night.before,
            "run_date": night.run_date,
            "site_before": night.site_before,
            "data_dir": str(night.data_dir),
        }

    def load(saved: dict) -> Night:
        return Night(
            _load_build(saved["build"]),
            saved["before"],
            saved["run_date"],
            saved["site_before"],
            Path(saved["data_dir"]),
        )

    return _once(
        tmp_path_factory, "second_night", functools.partial(_second_night, built), save, load
    )


def _second_night(built: Build, tmp: Path) -> Night:
    """One second night on other data, run once for every test that needs one.

    Each change touches only its own source, and each test checks its own and that the
    others did not spill over:
    - Amazon answers one more search with a captcha page (served as HTTP 200), archived for
      the night's day (tests/pipeline/test_pipeline.py, captcha test);
    - Azure's price file changes its schema on line 4 (tests/pipeline/test_pipeline.py, broken
      provider test; tests/reports/test_site_changes.py);
    - one Lambda fact is mapped to the wrong GPU, so the parser reads it differently
      (tests/pipeline/test_cloud_replay.py);
    - in the curated UK eBay history, rtx-3080-ti's used prices rise 2.2x and an
      rx-9060-xt-16gb sale appears, so that GPU is priced for the first time
      (tests/reports/test_site_changes.py: what changed since the first night).
    The night runs as the nightly job does, one partition day, dated NIGHT2.
    """
    from sources.archive import Archive
    from warehouse.db import row_counts
    from warehouse.export import open_published

    night = copy_build(built, tmp / "root")
    con = open_published(night.published)
    try:
        before = row_counts(con)
        run_date = str(con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0])
    finally:
        con.close()
    site_before = digest(night.site / run_date)
    data = tmp / "data"
    shutil.copytree(DATA_DIR, data)
    archive = data / "archive"
    Archive(archive).store(
        url="https://www.amazon.com/s?k=RTX+4080",
        status=200,
        content=CAPTCHA.read_bytes(),
        fetched_at=CAPTCHA_AT,
        source="amazon",
    )
    azure = data / "cloud" / "azure.csv"
    lines = azure.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace(",on_demand,", ",on_demnd,")  # a schema change, say
    azure.write_text("".join(lines), encoding="utf-8")
    lambda_csv = data / "cloud" / "lambda.csv"
    text = lambda_csv.read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if ",gpu_1x_h100_pcie," in x)
    lambda_csv.write_text(text.replace(line, line.replace(*LAMBDA_SLIP)), encoding="utf-8")
    uk = data / "prices" / "history" / "ebay-sold-uk.csv"
    lines = uk.read_text(encoding="utf-8").splitlines(keepends=True)
    out = [lines[0]]
    for row in lines[1:]:
        fields = row.split(",")
        if fields[3] == "rtx-3080-ti":
            fields[5] = f"{float(fields[5]) * 2.2:.2f}"
        out.append(",".join(fields))
    out.append(UK_SOLD_ROW)
    uk.write_text("".join(out), encoding="utf-8")
    night_day = night_days()
    assert night_day[0] == CAPTCHA_AT.date().isoformat()  # the captcha page is the night's
    result = build(night.root, data, days=night_day, archive_dir=str(archive), as_of=NIGHT2)
    return Night(result, before, run_date, site_before, data)


@dataclass(frozen=True)
class Rerun:
    """The whole graph run again on a copy of `built`: every bundled day, the same inputs."""

    build: Build
    before: dict[str, int]  # published row counts before the rerun
    first: str  # the first version's name (the as-of date)
    site_before: dict[str, str]  # sha256 of every file of the first version, before


@pytest.fixture(scope="session")
def rerun(built, tmp_path_factory) -> Rerun:
    """A rerun of the bundled build's as-of date, made once for every test that reads one:
    it re-ingests every bundled day and runs the model, the report, the site and the
    publish again, as `make run` twice does (tests/pipeline/test_pipeline.py: every row
    count unchanged; tests/reports/test_site_rerun.py: a second version beside the first).
    """

    def save(out: Rerun) -> dict:
        return {
            "build": _save_build(out.build),
            "before": out.before,
            "first": out.first,
            "site_before": out.site_before,
        }

    def load(saved: dict) -> Rerun:
        return Rerun(
            _load_build(saved["build"]),
            saved["before"],
            saved["first"],
            saved["site_before"],
        )

    return _once(tmp_path_factory, "rerun", functools.partial(_rerun, built), save, load)


def _rerun(built: Build, tmp: Path) -> Rerun:
    from warehouse.db import row_counts
    from warehouse.export import open_published

    out = copy_build(built, tmp / "root")
    con = open_published(out.published)
    try:
        before = row_counts(con)
    finally:
        con.close()
    first = os.readlink(out.site / "latest").rsplit(".", 1)[0].rsplit("/", 1)[-1]
    site_before = digest(out.site / first)
    return Rerun(build(out.root), before, first, site_before)


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A writable copy of the bundled snapshot, for tests that break it."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target
