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
