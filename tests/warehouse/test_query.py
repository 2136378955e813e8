import subprocess
import sys


def run_query(published, sql):
    return subprocess.run(
        [sys.executable, "-m", "warehouse.query", sql, "--published", str(published)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_query_prints_a_table(built):
    out = run_query(built.published, "SELECT gpu_id, memory_gb FROM gpus WHERE gpu_id = 'rtx-4090'")
    assert out.returncode == 0, out.stderr
    assert "rtx-4090" in out.stdout and "24.0" in out.stdout


def test_query_is_read_only(built):
    out = run_query(built.published, "DELETE FROM gpus")
    assert out.returncode == 2
    assert "read-only" in out.stderr.lower()


def test_query_without_a_published_warehouse_says_what_to_do(tmp_path):
    out = run_query(tmp_path, "SELECT 1")
    assert out.returncode == 2 and "make run" in out.stderr


def test_gpuvalue_published_dir_moves_the_snapshot_for_every_reader(tmp_path, monkeypatch):
    """GPUVALUE_PUBLISHED_DIR is where the pipeline publishes and where `make query` (and
    `make docs`) look, not only the latter."""
    from pipeline.defs.resources import GpuvalueSettings
    from reports.methodology import main as methodology_main

    elsewhere = tmp_path / "srv" / "published"
    monkeypatch.setenv("GPUVALUE_PUBLISHED_DIR", str(elsewhere))
    settings = GpuvalueSettings()
    assert settings.published_dir == str(elsewhere)
    assert settings.releases_path() == tmp_path / "srv" / "releases"
    out = subprocess.run(
        [sys.executable, "-m", "warehouse.query", "SELECT 1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 2 and str(elsewhere / "gpuvalue.duckdb") in out.stderr
    try:
        methodology_main([])
    except Exception as exc:  # noqa: BLE001 - only the path it tried matters here
        assert str(elsewhere / "gpuvalue.duckdb") in str(exc)
    else:
        raise AssertionError("reports.methodology read a warehouse that does not exist")
