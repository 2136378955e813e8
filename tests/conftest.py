import atexit
import datetime as dt
import functools
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.definitions import defs as load_defs
from pipeline.defs.resources import GpuvalueSettings
from pipeline.run import build_into, snapshot_days
from sources.archive import Archive
from sources.bundled import DATA_DIR
from warehouse.db import row_counts
from warehouse.export import open_published

# A second night: the bundled snapshot's newest partition day alone, as the nightly job
# runs it. Tests that change an input and run again use it instead of re-materializing
# every day of the snapshot (the fixture `built` has them all).
NIGHT = (snapshot_days(GpuvalueSettings())[1],) * 2


@dataclass(frozen=True)
class Build:
    """Where one in-process pipeline run put its outputs."""

    root: Path
    warehouse: Path
    site: Path
    published: Path
    result: dg.ExecuteInProcessResult


@functools.cache
def _chart_cache() -> Path:
    """One SVG cache per test process, removed when the process ends."""
    folder = Path(tempfile.mkdtemp(prefix="gpuvalue-test-charts-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def build(root: Path, data_dir: Path = DATA_DIR, days=None, **settings_fields) -> Build:
    """Run the whole graph in-process with every output under `root`.

    The builds of one test process share their chart cache (reports/charts/rendering.py
    SvgCache: content-addressed, so a chart whose spec is unchanged is not rendered again),
    as the nights of one deployment do; each build's own outputs stay under `root`.
    """
    cache = root / ".build" / "chart-cache"
    if not cache.exists() and not cache.is_symlink():
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.symlink_to(_chart_cache(), target_is_directory=True)
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
    shutil.copytree(source.root, root, symlinks=True)
    return Build(root, root / "gpuvalue.duckdb", root / "site", root / "published", source.result)


def rerun_model(source: Build, root: Path, **settings_fields) -> Build:
    """A copy of `source` on which only the model group runs again (its warehouse changes;
    nothing is published).

    For tests of the model's parameters: their inputs are the bundled build's, so the
    ingest (and its eight cloud runs) would only reload the same rows, and the site and
    publish are tested on their own.
    """
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


# Whole pipeline runs are most of the suite's time. Every test that uses one (the fixtures
# below, directly or through another fixture) goes to one xdist group, so with `-n 2` one
# worker builds them once and runs those tests while the other runs everything else.
BUILD_FIXTURES = {"built", "second_night"}


# tryfirst: xdist's worker turns the marks into node ids in its own hook of this name, so
# they must be set before it runs (otherwise the group is ignored and each worker builds).
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items) -> None:
    for item in items:
        if BUILD_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("builds"))
    # The production-profile test runs PostgreSQL, a daemon, a webserver and their code
    # servers beside the run it waits for: dealt out last, it no longer slows the shared
    # build on the other worker while that build starts.
    items.sort(key=lambda item: item.nodeid.startswith(LAST))


LAST = "tests/pipeline/test_production.py"


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Build:
    """The bundled snapshot, built once for the whole session."""
    out = build(tmp_path_factory.mktemp("build"))
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
    tmp = tmp_path_factory.mktemp("second_night")
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
    assert NIGHT[0] == CAPTCHA_AT.date().isoformat()  # the captcha page is the night's
    result = build(night.root, data, days=NIGHT, archive_dir=str(archive), as_of=NIGHT2)
    return Night(result, before, run_date, site_before, data)


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A writable copy of the bundled snapshot, for tests that break it."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target
