"""The README's developer commands work as written (issue 25 item 12).

Every `uv run python -m sources ...` example in README.md runs offline on the test fixtures,
under the names the README gives its files; one runs through `uv run` itself, from the
repository root, exactly as a reader types it.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.paths import FIXTURES_ROOT

REPO = Path(__file__).resolve().parents[1]
PREFIX = "uv run python -m sources "
# The files the examples name, and the fixture each stands for.
FILES = {
    "amazon-search.html": FIXTURES_ROOT / "retail" / "amazon" / "search_2024.html",
    "ebay-search.html": FIXTURES_ROOT / "retail" / "ebay" / "search_scard_sold_com.html",
    "prices.json": FIXTURES_ROOT / "cloud" / "azure_items.json",
    "pytorch-train-throughput-fp16.csv": FIXTURES_ROOT
    / "benchmarks/lambda-csv/lambda-test/pytorch-train-throughput-fp16.csv",
    "pytorch-train-bs-fp16.csv": FIXTURES_ROOT
    / "benchmarks/lambda-csv/lambda-test/pytorch-train-bs-fp16.csv",
    "README.md": FIXTURES_ROOT
    / "benchmarks/nvidia-dle/PyTorch/Classification/ConvNets/resnet50v1.5/README.md",
    "summary.csv": FIXTURES_ROOT / "benchmarks" / "mlperf" / "training_summary.csv",
}
TITLES = "ASUS TUF RTX 4090 OC 24GB\nSapphire PULSE Radeon RX 7900 XTX 24GB\n"


def examples() -> list[str]:
    """The README's `python -m sources` command lines (comments dropped)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    lines = [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()]
    bare = [line for line in lines if line.startswith("python -m sources")]
    assert not bare, f"README examples without uv run (they need the project's env): {bare}"
    return [line for line in lines if line.startswith(PREFIX)]


def test_the_readme_has_its_examples():
    found = examples()
    assert len(found) == 8
    assert {shlex.split(line)[6] for line in found if " parse " in line} == {
        "amazon",
        "ebay",
        "azure",
        "lambda-csv",
        "nvidia-dle",
        "mlperf",
    }


@pytest.mark.parametrize("line", examples())
def test_each_sources_example_runs_offline(line, tmp_path):
    for name, fixture in FILES.items():
        shutil.copy(fixture, tmp_path / name)
    (tmp_path / "titles.txt").write_text(TITLES, encoding="utf-8")
    command, _, stdin = line.partition(" < ")
    args = shlex.split(command)[len(shlex.split(PREFIX)) :]
    for arg in args:  # every file an example names is one the test provides
        if "." in arg and not arg.startswith("-") and " " not in arg:
            assert (tmp_path / arg).is_file(), f"{line}: no fixture for {arg}"
    # The project's environment, as `uv run` gives it (the same interpreter).
    result = subprocess.run(
        [sys.executable, "-m", "sources", *args],
        cwd=tmp_path,
        stdin=(tmp_path / stdin.strip()).open("rb") if stdin else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert result.returncode == 0, f"{line}\n{result.stderr[-2000:]}"
    records = [x for x in result.stdout.splitlines() if x.strip()]
    assert records and all(x.startswith("{") for x in records), line


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not on PATH")
def test_uv_run_works_as_written_from_the_repository_root():
    line = next(x for x in examples() if " match " in x and " - " not in x)
    result = subprocess.run(
        shlex.split(line),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "UV_OFFLINE": "1", "UV_FROZEN": "1"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith('{"gpu": "rtx-4070-ti-super", ')
