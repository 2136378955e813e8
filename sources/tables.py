"""A strict, typed CSV reader for the project's own data files.

A malformed row must never load as a silently wrong value: every cell is parsed against a
declared column type, and the first bad cell raises `BadInputError` naming file, line and
field. Parsing is pure (path in, Polars frame out).
"""

import csv
import datetime as dt
import math
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
            raise ValueError(f"not a valid {self.kind}: {raw!r}") from exc
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"{raw!r} is not one of {sorted(self.choices)}")
        if self.minimum is not None and value < self.minimum:
            raise ValueError(f"{raw} is below the minimum {self.minimum:g}")
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            raise ValueError(f"{raw} must be greater than {self.exclusive_minimum:g}")
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


def https_url(value: object) -> str | None:
    """Column check: only https links may reach the report and site."""
    return None if str(value).startswith("https://") else f"not an https URL: {value!r}"


def read_table(
    path: str | Path,
    columns: Iterable[Column],
    unique: tuple[str, ...] = (),
    line_column: str | None = None,
) -> pl.DataFrame:
    """Read a CSV whose header must be exactly the declared columns, in order.

    Blank lines and lines starting with `#` are skipped. Raises BadInputError on the first
    problem, naming file, line and field. `line_column`, when given, adds each row's file
    line number under that name (for checks across rows that must name a line).
    """
    path = Path(path)
    columns = list(columns)
    names = [c.name for c in columns]
    values: dict[str, list[object]] = {n: [] for n in names}
    seen: dict[tuple, int] = {}
    lines: list[int] = []
    position = {"line": 0}

    def physical_lines(handle) -> Iterator[str]:
        # csv.reader pulls lines lazily, so after it yields a row, position["line"] is the
        # file line where that row ended (multi-line quoted fields included).
        for number, text in enumerate(handle, start=1):
            position["line"] = number
            if text.strip() and not text.startswith("#"):
                yield text

    with path.open(newline="", encoding="utf-8") as handle:
        reader = csv.reader(physical_lines(handle))
        header = next(reader, None)
        if header is None:
            raise BadInputError(path, 1, "(header)", "file is empty")
        if header != names:
            raise BadInputError(
                path, position["line"], "(header)", f"expected {names}, got {header}"
            )
        for cells in reader:
            line = position["line"]
            if len(cells) != len(names):
                raise BadInputError(
                    path, line, "(row)", f"expected {len(names)} fields, got {len(cells)}"
                )
            row = {}
            for column, raw in zip(columns, cells, strict=True):
                try:
                    row[column.name] = column.parse(raw)
                except ValueError as exc:
                    raise BadInputError(path, line, column.name, str(exc)) from None
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
    schema = {c.name: _PARSERS[c.kind][1] for c in columns}
    frame = pl.DataFrame(values, schema=schema)
    if line_column:
        frame = frame.with_columns(pl.Series(line_column, lines, dtype=pl.Int64))
    return frame
