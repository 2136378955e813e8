"""A broken bundled cloud file fails like every other bundled file (issue 26 item 5).

Each corruption kind below is applied to a copy of a real bundled provider file and read
through the bundled path (`check_cloud_file`: the strict reader, then the facts replayed
through the provider's live parser). Every kind must be refused with the file, a line
and a field named; an Excel-saved copy (UTF-8 BOM, CRLF) must read exactly like the
original.
"""

import functools
import math
import shutil

import polars as pl
import pytest

from pipeline import run
from sources.bundled import DATA_DIR, read_gpu_specs
from sources.bundled_check import bundled_problem, check_cloud_file, validate_snapshot
from sources.tables import BadInputError

PROVIDER = "lambda"  # rendered as a SkyPilot vms.csv and read by that parser
ORIGINAL = DATA_DIR / "cloud" / f"{PROVIDER}.csv"


@functools.cache
def memory_gb() -> dict[str, float]:
    return dict(read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv").select(
        "gpu_id", "memory_gb").iter_rows())  # fmt: skip


def _lines() -> list[str]:
    return ORIGINAL.read_text(encoding="utf-8").splitlines(keepends=True)


def _first_row() -> int:
    """Index (0-based) of the first data row: the line after the header."""
    lines = _lines()
    header = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    return header + 1


def _cells(line: str) -> list[str]:
    return line.rstrip("\n").split(",")


def _set_cell(text_lines: list[str], index: int, column: int, value: str) -> str:
    cells = _cells(text_lines[index])
    cells[column] = value
    text_lines[index] = ",".join(cells) + "\n"
    return "".join(text_lines)


def _text(lines: list[str]) -> bytes:
    return "".join(lines).encode("utf-8")


def truncated() -> bytes:
    data = ORIGINAL.read_bytes()
    return data[: len(data) - 17]  # cut inside the last row's citation


def wrong_header() -> bytes:
    return ORIGINAL.read_bytes().replace(b"usd_per_hour", b"usd_per_hr", 1)


def missing_column() -> bytes:
    lines = _lines()
    return _text([",".join(_cells(line)[:-1]) + "\n" if "," in line else line for line in lines])


def non_numeric_price() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 7, "call us").encode()


def nan_price() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 7, "NaN").encode()


def inf_price() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 7, "inf").encode()


def negative_price() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 7, "-2.49").encode()


def duplicated_header() -> bytes:
    lines = _lines()
    header = lines[_first_row() - 1]
    return _text([*lines[:4], header, *lines[4:]])


def binary_junk() -> bytes:
    data = ORIGINAL.read_bytes()
    middle = len(data) // 2
    return data[:middle] + bytes(range(0x80, 0xA0)) + b"\x00\x01" + data[middle:]


def wrong_delimiter() -> bytes:
    return _text([line.replace(",", ";") for line in _lines()])


def mixed_encodings() -> bytes:
    # One row saved as Latin-1 (a hand edit in another editor): "é" is byte 0xE9.
    lines = _lines()
    index = _first_row() + 2
    return (
        _text(lines[:index])
        + lines[index].replace("\n", " café\n").encode("latin-1", "replace")
        + _text(lines[index + 1 :])
    )


def empty_file() -> bytes:
    return b""


def only_header() -> bytes:
    return _text(_lines()[: _first_row()])


def extra_columns() -> bytes:
    lines = _lines()
    index = _first_row()
    lines[index] = lines[index].rstrip("\n") + ",extra\n"
    return _text(lines)


def quoted_newline() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 3, '"us-east\n1"').encode()


def unterminated_quote() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 2, '"gpu_1x_a10').encode()


def utf16() -> bytes:
    return ORIGINAL.read_text(encoding="utf-8").encode("utf-16")


def duplicated_row() -> bytes:
    lines = _lines()
    index = _first_row()
    return _text([*lines[: index + 1], lines[index], *lines[index + 1 :]])


def future_date() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 0, "2099-01-01").encode()


def price_x1000() -> bytes:
    lines = _lines()
    index = _first_row()
    price = float(_cells(lines[index])[7])
    return _set_cell(lines, index, 7, repr(price * 1000)).encode()


def thousands_separator() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 7, '"1,234.50"').encode()


def currency_symbol() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 7, "$2.49").encode()


def unknown_gpu() -> bytes:
    lines = _lines()
    return _set_cell(lines, _first_row(), 5, "rtx-9999").encode()


# kind -> (corruption, the field the error must name; None: any field, named)
KINDS = {
    "truncated": (truncated, "(row)"),
    "wrong header": (wrong_header, "(header)"),
    "missing column": (missing_column, "(header)"),
    "non-numeric price": (non_numeric_price, "usd_per_hour"),
    "NaN price": (nan_price, "usd_per_hour"),
    "inf price": (inf_price, "usd_per_hour"),
    "negative price": (negative_price, "usd_per_hour"),
    "duplicated header": (duplicated_header, "observed_at"),
    "binary junk": (binary_junk, "(encoding)"),
    "wrong delimiter": (wrong_delimiter, "(header)"),
    "mixed encodings": (mixed_encodings, "(encoding)"),
    "empty file": (empty_file, "(header)"),
    "only header": (only_header, "(rows)"),
    "extra columns": (extra_columns, "(row)"),
    "quoted newline": (quoted_newline, "region"),
    "unterminated quote": (unterminated_quote, "(row)"),
    "UTF-16 file": (utf16, "(encoding)"),
    "duplicated row": (duplicated_row, None),
    "future date": (future_date, "observed_at"),
    "price x1000": (price_x1000, "usd_per_hour"),
    "thousands separator": (thousands_separator, "usd_per_hour"),
    "currency symbol": (currency_symbol, "usd_per_hour"),
    "unknown gpu": (unknown_gpu, "gpu_id"),
}


def test_at_least_eighteen_kinds():
    assert len(KINDS) >= 18


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_corruption_is_refused_naming_file_line_and_field(tmp_path, kind):
    corrupt, field = KINDS[kind]
    path = tmp_path / ORIGINAL.name
    path.write_bytes(corrupt())
    with pytest.raises(BadInputError) as error:
        check_cloud_file(path, PROVIDER, memory_gb())
    assert error.value.path == str(path)
    assert error.value.line >= 1, str(error.value)
    assert error.value.column, str(error.value)
    if field is not None:
        assert error.value.column == field, str(error.value)
    assert str(path) in str(error.value) and f"line {error.value.line}" in str(error.value)


def test_an_excel_saved_copy_reads_like_the_original(tmp_path):
    # Excel's "CSV UTF-8": a byte-order mark and CRLF line ends.
    path = tmp_path / ORIGINAL.name
    text = ORIGINAL.read_text(encoding="utf-8").replace("\n", "\r\n")
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    original = check_cloud_file(ORIGINAL, PROVIDER, memory_gb())
    excel = check_cloud_file(path, PROVIDER, memory_gb())
    assert excel.height == original.height > 0
    assert excel.equals(original)
    assert not any(math.isnan(v) for v in excel["usd_per_hour"])


def test_a_broken_cloud_file_stops_the_bundled_run_before_it_starts(tmp_path, monkeypatch):
    # The snapshot with one broken cloud file (the other folders linked, not copied).
    data = tmp_path / "data"
    data.mkdir()
    for folder in DATA_DIR.iterdir():
        if folder.name != "cloud":
            (data / folder.name).symlink_to(folder)
    shutil.copytree(DATA_DIR / "cloud", data / "cloud")
    (data / "cloud" / ORIGINAL.name).write_bytes(nan_price())
    problem = bundled_problem(data)
    assert problem and f"{ORIGINAL.name}, line " in problem and "usd_per_hour" in problem
    ran = []
    monkeypatch.setattr(run, "run_pipeline", lambda *a, **k: ran.append(a))
    monkeypatch.setattr(run, "bundled_problem", lambda folder: problem if folder else None)
    assert run.main([]) == 1
    assert ran == []  # nothing materialized, so nothing published


@pytest.mark.slow(seconds=6)
def test_the_bundled_snapshot_is_valid_and_a_file_without_a_validator_is_not(tmp_path):
    # The real snapshot (linked) plus one data file no validator reads. The coverage check
    # comes last, so reaching it means every real file passed every check (no false
    # positive; about 2.5 s of CPU).
    data = tmp_path / "data"
    data.mkdir()
    for folder in DATA_DIR.iterdir():
        (data / folder.name).symlink_to(folder)
    (data / "notes.csv").write_text("gpu_id,comment\nrtx-4090,fast\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="no validator reads this file") as error:
        validate_snapshot(data)
    assert error.value.path == str(data / "notes.csv")


def test_the_rows_match_the_frame_reader():
    # The excel test compares frames: make sure the reader gives one row per data line.
    lines = [line for line in _lines()[_first_row() :] if line.strip()]
    assert check_cloud_file(ORIGINAL, PROVIDER, memory_gb()).height == len(lines)
    assert isinstance(check_cloud_file(ORIGINAL, PROVIDER, memory_gb()), pl.DataFrame)
