import shutil
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from pipeline.run import build_into
from sources.bundled import DATA_DIR


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
