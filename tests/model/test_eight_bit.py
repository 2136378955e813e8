"""A missing spec is unknown, never zero (issue 22, step 5): the 8-bit speedup of a GPU
without its own 8-bit (or fp16) figure is its architecture's cited datasheet ratio,
flagged estimated, with a wider interval, and never below its 16-bit speed.
"""

import math
import shutil

import polars as pl
import pytest

from model.bridging import ESTIMATED_SPEEDUP_HALF, NO_SPEEDUP, eight_bit_speedup, inference_8bit
from sources.bundled import (
    EIGHT_BIT_RATIOS,
    SPEC_SHEET,
    bundled_eight_bit_ratios,
    read_eight_bit_ratios,
    read_gpu_specs,
)
from sources.tables import BadInputError

SPEC_COLUMNS = {
    "gpu_id": pl.Utf8,
    "name": pl.Utf8,
    "architecture": pl.Utf8,
    "fp16_tensor_tflops": pl.Float64,
    "fp8_tensor_tflops": pl.Float64,
    "int8_tensor_tops": pl.Float64,
}


def gpus(rows):
    return pl.DataFrame(rows, schema=SPEC_COLUMNS, orient="row")


def speeds(frame):
    return {r["gpu_id"]: r for r in eight_bit_speedup(frame).iter_rows(named=True)}


def test_missing_8bit_spec_takes_the_architecture_ratio_flagged_estimated():
    speed = speeds(
        gpus(
            [
                ("b200", "B200", "blackwell", 2250.0, 4500.0, 4500.0),
                ("b300", "B300 (HGX B300 SXM)", "blackwell", None, None, None),
                ("rtx-5090-d", "GeForce RTX 5090 D", "blackwell", None, None, None),
                ("rx-9070-xt", "Radeon RX 9070 XT", "rdna4", None, None, None),
                ("arc-b580", "Arc B580 Limited Edition", "xe2-hpg", None, None, 233.0),
                ("a10g", "A10G", "ampere", 70.0, None, None),
                ("rx-7900-xtx", "Radeon RX 7900 XTX", "rdna3", 122.8, None, None),
            ]
        )
    )
    assert speed["b200"]["speedup"] == pytest.approx(2.0)
    assert not speed["b200"]["speedup_estimated"]
    expected = {"b300": 2.0, "rtx-5090-d": 4.0, "rx-9070-xt": 2.0, "arc-b580": 2.0,
                "a10g": 2.0, "rx-7900-xtx": 1.0}  # fmt: skip
    for gpu, ratio in expected.items():
        assert speed[gpu]["speedup"] == pytest.approx(ratio), gpu
        assert speed[gpu]["speedup_estimated"], gpu
        assert speed[gpu]["speedup_basis"].startswith("estimated: "), gpu
        assert speed[gpu]["speedup"] >= 1.0, gpu
    assert speed["rx-9070-xt"]["speedup_basis"] == "estimated: rdna4 fp8/fp16 ratio (datasheet)"


def test_no_table_row_no_tensor_units_no_speedup():
    speed = speeds(
        gpus(
            [
                ("gtx-1660", "GeForce GTX 1660", "turing", None, None, None),
                ("v100", "V100", "volta", 125.0, None, None),
                ("rx-6800", "Radeon RX 6800", "rdna2", None, None, None),
            ]
        )
    )
    for gpu in speed:
        assert speed[gpu]["speedup"] == 1.0, gpu
        assert speed[gpu]["speedup_basis"] == NO_SPEEDUP, gpu
        assert not speed[gpu]["speedup_estimated"], gpu


def test_no_bundled_gpu_with_8bit_units_is_rated_below_its_16bit_speed():
    speed = eight_bit_speedup(read_gpu_specs(SPEC_SHEET))
    assert speed.filter(pl.col("speedup") < 1.0).height == 0
    assert speed.filter(pl.col("speedup_estimated")).height > 0


def test_estimated_speedup_widens_the_8bit_interval():
    specs = gpus(
        [
            ("ref", "A100", "ampere", 312.0, None, 624.0),
            ("own", "L40S", "ada", 362.0, 733.0, 733.0),
            ("est", "L20", "ada", None, None, None),
        ]
    )
    sixteen = pl.DataFrame(
        {
            "gpu_id": ["ref", "own", "est"],
            "value": [1.0, 1.2, 0.6],
            "value_low": [1.0, 1.2 / 1.5, 0.6 / 1.5],
            "value_high": [1.0, 1.2 * 1.5, 0.6 * 1.5],
            "evidence": ["measured", "bridged", "bridged"],
        }
    )
    debiased = pl.DataFrame(
        schema={"workload": pl.Utf8, "gpu_id": pl.Utf8, "model": pl.Utf8,
                "precision": pl.Utf8, "source": pl.Utf8, "software_era": pl.Utf8,
                "citation": pl.Utf8, "throughput_per_gpu": pl.Float64}
    )  # fmt: skip
    out = {
        r["gpu_id"]: r
        for r in inference_8bit(debiased, sixteen, specs, "ref").iter_rows(named=True)
    }
    # No 8-bit results: Dettmers' rule bridge (ratio 1) on base 16-bit x speedup / ref's.
    assert out["est"]["value"] == pytest.approx(0.6 * 2.0 / 2.0)
    assert out["est"]["value"] >= 0.6  # never below its 16-bit value (same ratio as ref)
    own_half = math.log(out["own"]["value_high"] / out["own"]["value_low"]) / 2
    est_half = math.log(out["est"]["value_high"] / out["est"]["value_low"]) / 2
    assert own_half == pytest.approx(math.log(1.5))
    assert est_half == pytest.approx(math.hypot(math.log(1.5), ESTIMATED_SPEEDUP_HALF))
    assert "estimated: ada fp8/fp16 ratio (datasheet)" in out["est"]["interval_method"]


def test_bundled_table_matches_the_spec_sheet_architectures():
    table = bundled_eight_bit_ratios()
    archs = set(read_gpu_specs(SPEC_SHEET)["architecture"])
    assert set(table["architecture"]) <= archs
    assert table["ratio"].min() >= 1.0


@pytest.mark.parametrize(
    ("old", "new", "field", "reason"),
    [
        (",amd,1,int8,,", ",amd,0.5,int8,,", "ratio", "below the minimum"),
        ("rdna4,any,amd", "rdna5,any,amd", "architecture", "is not one of"),
        ("rdna4,any,amd", "rdna4,any,nvidia", "vendor", "rdna4 is amd"),
        ("xe-hpg,any,intel,2,int8", "xe-hpg,any,intel,2,int4", "basis", "is not one of"),
    ],
)
def test_a_bad_ratio_row_is_refused_naming_file_and_line(tmp_path, old, new, field, reason):
    path = tmp_path / "eight_bit_ratios.csv"
    shutil.copy(EIGHT_BIT_RATIOS, path)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines, start=1) if old in line)
    lines[number - 1] = lines[number - 1].replace(old, new, 1)
    path.write_text("".join(lines), encoding="utf-8")
    sheet = read_gpu_specs(SPEC_SHEET)
    vendor_of = dict(sheet.select("architecture", "vendor").unique().iter_rows())
    with pytest.raises(BadInputError, match=reason) as error:
        read_eight_bit_ratios(path, vendor_of)
    message = str(error.value)
    assert str(path) in message and f"line {number}" in message and field in message


def test_an_any_row_beside_a_segment_row_is_refused(tmp_path):
    path = tmp_path / "eight_bit_ratios.csv"
    text = EIGHT_BIT_RATIOS.read_text(encoding="utf-8")
    path.write_text(text.replace("ada,professional,", "ada,any,", 1), encoding="utf-8")
    with pytest.raises(BadInputError, match="'any' row beside a segment row"):
        read_eight_bit_ratios(path)
