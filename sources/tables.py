"""A strict, typed CSV reader for the project's own data files.

A malformed row must never load as a silently wrong value: every cell is parsed against a
declared column type, and the first bad cell raises `BadInputError` naming file, line and
field. Parsing is pure (path in, Polars frame out).
"""

import codecs
import csv
import datetime as dt
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl


class BadInputError(ValueError):
    """A cell of an input file that cannot be trusted."""

    def __init__(self, path: Path | str, line: int, column: str, reason: str):
        self.path = str(path)
        self.line = line
        self.column = column
        self.reason = reason
        super().__init__(f"{self.path}, line {line}, field {column!r}: {reason}")


def _parse_str(raw: str) -> str:
    return raw


def _parse_int(raw: str) -> int:
    return int(raw)


def _parse_float(raw: str) -> float:
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _parse_date(raw: str) -> dt.date:
    return dt.date.fromisoformat(raw)


def _parse_datetime(raw: str) -> dt.datetime:
    # A bare date means the observation is only known to the day: midnight UTC, naive.
    value = dt.datetime.fromisoformat(raw)
    if value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


_PARSERS: dict[str, tuple[Callable[[str], object], pl.DataType]] = {
    "str": (_parse_str, pl.Utf8()),
    "int": (_parse_int, pl.Int64()),
    "float": (_parse_float, pl.Float64()),
    "date": (_parse_date, pl.Date()),
    "datetime": (_parse_datetime, pl.Datetime("us")),
}


@dataclass(frozen=True)
class Column:
    """One declared column of a data file."""

    name: str
    kind: str = "str"
    required: bool = True
    choices: frozenset[str] | None = None
    minimum: float | None = None
    exclusive_minimum: float | None = None
    check: Callable[[object], str | None] | None = field(default=None, compare=False)
    # Dates and datetimes of observations: one after tomorrow (UTC) is a typo or a lie.
    not_future: bool = False
    # Plausible range of a number (the unit names the column's unit in the messages, where
    # a value out of range is most often one written in another unit), or earliest date.
    maximum: float | None = None
    unit: str = ""
    earliest: dt.date | None = None

    def parse(self, raw: str) -> object:
        """Parse one cell; raise ValueError with a reason when it is not acceptable."""
        raw = raw.strip()
        if raw == "":
            if self.required:
                raise ValueError("missing value")
            return None
        parse, _ = _PARSERS[self.kind]
        try:
            value = parse(raw)
        except ValueError as exc:
            raise ValueError(self._unparsable(raw)) from exc
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{raw!r} is not one of {sorted(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{raw} is below the minimum {self.minimum:g}{self._unit_hint()}")
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            raise ValueError(f"{raw} must be greater than {self.exclusive_minimum:g}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"{raw} is above the maximum {self.maximum:g}{self._unit_hint()}")
        if self.earliest is not None and isinstance(value, dt.date) and value < self.earliest:
            raise ValueError(f"{raw} is before {self.earliest.isoformat()}")
        if self.not_future and isinstance(value, dt.date):
            tomorrow = dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
            day = value.date() if isinstance(value, dt.datetime) else value
            if day > tomorrow:
                raise ValueError(f"{raw} is in the future")
        if self.check is not None:
            problem = self.check(value)
            if problem:
                raise ValueError(problem)
        return value

    def _unit_hint(self) -> str:
        return f" {self.unit} (a value in another unit?)" if self.unit else ""

    def _unparsable(self, raw: str) -> str:
        if self.kind in ("float", "int") and _UNIT_SUFFIX.match(raw):
            unit = f"; the column is in {self.unit}" if self.unit else ""
            return f"not a valid {self.kind}: {raw!r} carries a unit{unit}: write the number alone"
        return f"not a valid {self.kind}: {raw!r}"


# A number followed by a unit ("0.448 TB/s", "8GB", "175 W"): units belong to the column.
_UNIT_SUFFIX = re.compile(r"^[-+]?[\d.,]+\s*[A-Za-z/%$€£]+$")


def https_url(value: object) -> str | None:
    """Column check: only https links may reach the report and site."""
    return None if str(value).startswith("https://") else f"not an https URL: {value!r}"


# Characters no bundled cell holds: line breaks (a quoted cell spanning lines), C0 controls
# but tab (binary junk, a NUL from a damaged copy), DEL, U+FFFD (text already damaged by a
# wrong decoding), and the two-character mojibake of UTF-8 read as Latin-1/cp1252 then
# saved again as UTF-8 ("Ã©" for "é").
_BAD_TEXT = re.compile(r"[\x00-\x08\x0a-\x1f\x7f\ufffd]|[ÃÂ][\u0080-\u00bf]")
_UTF16_BOMS = (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
# What a wrong delimiter looks like in a header read as one field.
_OTHER_DELIMITERS = (";", "\t", "|")


def _bad_text_reason(text: str) -> str | None:
    match = _BAD_TEXT.search(text)
    if match is None:
        return None
    found = match.group()
    if found in ("\n", "\r"):
        return "a line break inside a quoted cell (a bundled cell is one line)"
    if len(found) == 2:
        return f"{found!r} is UTF-8 text decoded as Latin-1 and saved again (mojibake)"
    if found == "\ufffd":
        return "U+FFFD: the text was damaged by a wrong decoding before it was saved"
    return f"control character U+{ord(found):04X} (binary junk?)"


def _decoded_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The file's physical lines, decoded, numbered from 1.

    A UTF-8 BOM (Excel's "CSV UTF-8") is dropped and CRLF line ends are read like LF; any
    other encoding, a NUL, or a last line without a line end (a file cut short) is refused.
    """
    data = path.read_bytes()
    if data.startswith(_UTF16_BOMS):
        raise BadInputError(path, 1, "(encoding)", "UTF-16 text: save the file as CSV UTF-8")
    data = data.removeprefix(codecs.BOM_UTF8)
    if not data.strip():
        raise BadInputError(path, 1, "(header)", "file is empty")
    lines = data.splitlines(keepends=True)
    if not lines[-1].endswith((b"\n", b"\r")):
        raise BadInputError(
            path,
            len(lines),
            "(row)",
            "the last line has no line end: the file was cut short (truncated?)",
        )
    for number, raw in enumerate(lines, start=1):
        try:
            yield number, raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadInputError(
                path,
                number,
                "(encoding)",
                f"not UTF-8: byte 0x{raw[exc.start]:02x} at column {exc.start + 1} "
                "(another encoding, or binary junk)",
            ) from None


def _header_problem(header: list[str], names: list[str]) -> tuple[str, str]:
    """(field, reason) for a header that is not exactly `names`."""
    if len(header) == 1 and len(names) > 1:
        used = [d for d in _OTHER_DELIMITERS if d in header[0]]
        if used:
            return "(header)", f"the delimiter is {used[0]!r}, not ','"
    for position, expected in enumerate(names):
        if position >= len(header):
            return expected, f"column {expected!r} is missing (expected {names})"
        if header[position].strip() != expected:
            return expected, (
                f"column {position + 1} is {header[position]!r}, expected {expected!r} "
                f"(expected {names})"
            )
    return "(header)", f"unexpected extra columns {header[len(names) :]} (expected {names})"


def _count_problem(cells: list[str], names: list[str]) -> tuple[str, str]:
    """(field, reason) for a row with the wrong number of fields."""
    if len(cells) < len(names):
        missing = names[len(cells)]
        return missing, (
            f"missing: the row has {len(cells)} of {len(names)} fields "
            "(cut short, or a cell lost its quotes?)"
        )
    return "(row)", (
        f"expected {len(names)} fields, got {len(cells)}: an extra column, or a comma in an "
        "unquoted cell?"
    )


def read_table(
    path: str | Path,
    columns: Iterable[Column],
    unique: tuple[str, ...] = (),
    line_column: str | None = None,
    allow_empty: bool = False,
) -> pl.DataFrame:
    """Read a CSV whose header must be exactly the declared columns, in order.

    Blank lines and lines starting with `#` are skipped. A UTF-8 BOM and CRLF line ends
    (a spreadsheet's "CSV UTF-8") are read; any other encoding, a control character, a
    line break inside a cell, a file cut short or (unless `allow_empty`) a file without
    data rows is refused. Raises BadInputError on the first problem, naming file, line and
    field. `line_column`, when given, adds each row's file line number under that name
    (for checks across rows that must name a line).
    """
    path = Path(path)
    columns = list(columns)
    names = [c.name for c in columns]
    values: dict[str, list[object]] = {n: [] for n in names}
    seen: dict[tuple, int] = {}
    lines: list[int] = []
    position = {"line": 0}

    def physical_lines() -> Iterator[str]:
        # csv.reader pulls lines lazily, so after it yields a row, position["line"] is the
        # file line where that row ended (multi-line quoted fields included).
        for number, text in _decoded_lines(path):
            position["line"] = number
            if text.strip() and not text.startswith("#"):
                yield text

    # strict: a stray or unterminated quote is an error, not a silently merged cell.
    reader = csv.reader(physical_lines(), strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise BadInputError(path, position["line"], "(header)", "no header line")
        if header != names:
            raise BadInputError(path, position["line"], "(header)", _header_problem(header, names))
        for cells in reader:
            line = position["line"]
            if len(cells) != len(names):
                raise BadInputError(path, line, *_count_problem(cells, names))
            row = _parse_row(path, line, columns, cells)
            if unique:
                key = tuple(row[k] for k in unique)
                if key in seen:
                    raise BadInputError(
                        path, line, ",".join(unique), f"duplicate of line {seen[key]}: {key}"
                    )
                seen[key] = line
            for name in names:
                values[name].append(row[name])
            lines.append(line)
    except csv.Error as exc:
        raise BadInputError(path, position["line"], "(row)", f"malformed CSV: {exc}") from None
    if not lines and not allow_empty:
        raise BadInputError(path, position["line"], "(rows)", "no data rows after the header")
    schema = {c.name: _PARSERS[c.kind][1] for c in columns}
    frame = pl.DataFrame(values, schema=schema)
    if line_column:
        frame = frame.with_columns(pl.Series(line_column, lines, dtype=pl.Int64))
    return frame


def _parse_row(path: Path, line: int, columns: list[Column], cells: list[str]) -> dict:
    """One row's cells parsed by their columns; BadInputError names the first bad cell."""
    row = {}
    for column, raw in zip(columns, cells, strict=True):
        problem = _bad_text_reason(raw) if _BAD_TEXT.search(raw) else None
        if problem:
            raise BadInputError(path, line, column.name, problem)
        try:
            row[column.name] = column.parse(raw)
        except ValueError as exc:
            raise BadInputError(path, line, column.name, str(exc)) from None
    return row
