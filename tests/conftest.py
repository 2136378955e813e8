import datetime as dt
import shutil
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
from warehouse.publish import open_published

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


def build(root: Path, data_dir: Path = DATA_DIR, days=None, **settings_fields) -> Build:
    """Run the whole graph in-process with every output under `root`."""
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
    """A copy of `source` on which only the model and report groups run again.

    For tests of the model's parameters: their inputs are the bundled build's, so the
    ingest (and its eight cloud runs) would only reload the same rows.
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
        selection=dg.AssetSelection.groups("model", "report"),
        resources={
            **defs.resources,
            "settings": settings,
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        raise_on_error=False,
    )
    return Build(root, root / "gpuvalue.duckdb", root / "site", root / "published", result)


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Build:
    """The bundled snapshot, built once for the whole session."""
    out = build(tmp_path_factory.mktemp("build"))
    assert out.result.success, "the pipeline failed on the bundled snapshot"
    return out


@dataclass(frozen=True)
class Night:
    """A second night run on a copy of `built`, and the published row counts before it."""

    build: Build
    before: dict[str, int]
    data_dir: Path


# The faults of the shared second night (`faulty_night`), each checked by its own test.
CAPTCHA = Path(__file__).parent / "fixtures" / "retail" / "amazon" / "captcha_classic.html"
CAPTCHA_AT = dt.datetime(2026, 4, 15, 13, 0, tzinfo=dt.UTC)
LAMBDA_SLIP = ("h100-pcie-80gb", "h100-sxm5-80gb")  # on the gpu_1x_h100_pcie line


@pytest.fixture(scope="session")
def faulty_night(built, tmp_path_factory) -> Night:
    """One second night with three independent faults, instead of one night per fault.

    - Amazon answers one more search with a captcha page (served as HTTP 200), archived for
      the night's day (tests/test_pipeline.py, captcha test);
    - Azure's price file changes its schema on line 4 (tests/test_pipeline.py, broken
      provider test);
    - one Lambda fact is mapped to the wrong GPU, so the parser reads it differently
      (tests/test_cloud_replay.py).
    Each fault touches only its own source, and each test checks that the others were not
    affected (exactly Azure and Lambda fail among the cloud providers).
    """
    tmp = tmp_path_factory.mktemp("faulty_night")
    night = copy_build(built, tmp / "root")
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
    con = open_published(night.published)
    try:
        before = row_counts(con)
    finally:
        con.close()
    assert NIGHT[0] == CAPTCHA_AT.date().isoformat()  # the captcha page is the night's
    out = build(night.root, data, days=NIGHT, archive_dir=str(archive))
    return Night(out, before, data)


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A writable copy of the bundled snapshot, for tests that break it."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target
