import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.defs.resources import GpuvalueSettings
from pipeline.run import run_pipeline, snapshot_days
from sources.bundled import DATA_DIR


@dataclass(frozen=True)
class Build:
    """Where one in-process pipeline run put its outputs."""

    root: Path
    data_dir: Path
    warehouse: Path
    site: Path
    published: Path
    result: dg.ExecuteInProcessResult

    @property
    def settings(self) -> GpuvalueSettings:
        return settings_for(self.root, self.data_dir)


def settings_for(root: Path, data_dir: Path = DATA_DIR) -> GpuvalueSettings:
    return GpuvalueSettings(
        data_dir=str(data_dir),
        build_dir=str(root / ".build"),
        site_dir=str(root / "site"),
        published_dir=str(root / "published"),
    )


def build(root: Path, data_dir: Path = DATA_DIR) -> Build:
    """Run the whole graph in-process with every output under `root`."""
    settings = settings_for(root, data_dir)
    first, last = snapshot_days(settings)
    result = run_pipeline(
        dg.DagsterInstance.ephemeral(),
        first,
        last,
        resources={
            "settings": settings,
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        log_level="WARNING",
    )
    return Build(
        root, data_dir, root / "gpuvalue.duckdb", root / "site", root / "published", result
    )


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Build:
    """The bundled snapshot, built once for the whole session."""
    out = build(tmp_path_factory.mktemp("build"))
    assert out.result.success, "the pipeline failed on the bundled snapshot"
    return out


@pytest.fixture
def data_copy(tmp_path) -> Path:
    """A writable copy of the bundled snapshot, for tests that break it."""
    target = tmp_path / "data"
    shutil.copytree(DATA_DIR, target)
    return target
