"""The cited software-support file (sources/specs/software_support.py; issue 22 step 8)."""

from pathlib import Path

import polars as pl
import pytest

from sources.bundled import SPEC_SHEET, read_gpu_specs
from sources.specs.software_support import (
    SOFTWARE_SUPPORT,
    bundled_software_support,
    read_software_support,
    support_per_gpu,
)
from sources.tables import BadInputError

HEADER = "vendor,architecture,gpu_id,stack,status,since,detail,source_url,as_of\n"
GOOD = (
    "amd,rdna3,rx-7900-xtx,pytorch-rocm,supported,ROCm 5.7,listed,https://x.example/a,2023-10-31\n"
)


def write(tmp_path: Path, *rows: str) -> Path:
    path = tmp_path / "software_support.csv"
    path.write_text(HEADER + "".join(rows), encoding="utf-8")
    return path


def test_the_bundled_file_reads_against_the_spec_sheet():
    rows = bundled_software_support()
    assert rows.height >= 15 and rows["source_url"].str.starts_with("https://").all()
    per_gpu = support_per_gpu(rows, read_gpu_specs(SPEC_SHEET)).filter(
        pl.col("gpu_id").is_in(
            [
                "rx-7900-xtx",
                "rx-7900-xt",
                "rx-6800-xt",
                "p100-pcie-16gb",
                "v100-sxm2-32gb",
                "k80",
                "arc-b580",
                "rtx-4090",
            ]
        )  # fmt: skip
    )
    status = dict(per_gpu.select("gpu_id", "status").rows())
    # A GPU row wins over its architecture's; an architecture row covers the rest; a GPU
    # current PyTorch supports has no row.
    assert status == {
        "rx-7900-xtx": "supported",
        "rx-7900-xt": "partial",
        "rx-6800-xt": "unofficial",
        "p100-pcie-16gb": "legacy-wheel-only",
        "v100-sxm2-32gb": "legacy-wheel-only",
        "k80": "unsupported",
        "arc-b580": "prototype",
    }


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        (GOOD.replace("supported", "works"), "status", "is not one of"),
        (GOOD.replace("https://", "http://"), "source_url", "not an https URL"),
        (GOOD.replace("2023-10-31", "2999-01-01"), "as_of", "in the future"),
        (GOOD.replace(",listed,", ",,"), "detail", "missing value"),
        (GOOD.replace("rdna3", "rdna9"), "architecture", "not in the spec sheet"),
        (GOOD.replace("amd,", "intel,", 1), "vendor", "is amd in the sheet"),
        (GOOD.replace("rx-7900-xtx", "rx-9070-xt"), "gpu_id", "is amd rdna4 in the sheet"),
        (GOOD.replace("pytorch-rocm", "pytorch-cuda"), "stack", "amd GPUs run pytorch-rocm"),
    ],
)
def test_a_bad_row_is_refused_naming_file_line_and_field(tmp_path, row, field, reason):
    path = write(tmp_path, GOOD.replace("rx-7900-xtx", "rx-7800-xt"), row)
    with pytest.raises(BadInputError) as err:
        read_software_support(path, read_gpu_specs(SPEC_SHEET))
    message = str(err.value)
    assert str(path) in message and "line 3" in message and field in message
    assert reason in message


def test_a_repeated_row_is_refused(tmp_path):
    with pytest.raises(BadInputError, match="line 3"):
        read_software_support(write(tmp_path, GOOD, GOOD))


def test_the_bundled_file_is_the_one_the_manifest_describes():
    manifest = (SOFTWARE_SUPPORT.parent / "MANIFEST.md").read_text(encoding="utf-8")
    assert "## Software support (`software_support.csv`)" in manifest
