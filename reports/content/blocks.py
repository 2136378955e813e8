"""The building blocks of every page: cells, tables, sections, and how numbers are shown."""

from dataclasses import dataclass, field

import polars as pl


@dataclass(frozen=True)
class Cell:
    """One table cell: text, an optional link (a site-relative path) and extra lines."""

    text: str
    href: str | None = None
    lines: tuple[str, ...] = ()
    strong: bool = False

    def __str__(self) -> str:
        return "; ".join((self.text, *self.lines)) if self.lines else self.text


@dataclass(frozen=True)
class Table:
    """A table with its headers; `heading` (h3) and `title` (bold) come before it."""

    headers: tuple[str, ...]
    rows: list[tuple[Cell, ...]]
    title: str = ""
    heading: str = ""
    unit: str = ""
    css: str = ""
    empty: str = ""


@dataclass(frozen=True)
class Figure:
    """A chart: `charts/<name>.svg`, its narrow variant and its Vega-Lite spec."""

    name: str
    title: str
    caption: str


@dataclass(frozen=True)
class Section:
    """A titled block: Markdown paragraphs (inline only), tables, figures, code."""

    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    code: str = ""


def money(value: float | None) -> str:
    """'$2,269' (whole dollars), '' for NULL."""
    return "" if value is None else f"${value:,.0f}"


def number(value: float | None, digits: int = 3) -> str:
    """A number rounded as polars' round() shows it ('' for NULL)."""
    return "" if value is None else str(round(value, digits))


def interval(value: float | None, low: float | None, high: float | None, scale=1.0) -> str:
    """'0.2 (0.161–0.244)': a point estimate with its 95 % interval, when there is one."""
    if value is None:
        return ""
    shown = number(value * scale)
    if low is None or high is None:
        return shown
    return f"{shown} ({number(low * scale)}–{number(high * scale)})"


def percent(value: float | None) -> str:
    """'45 %' ('' for NULL)."""
    return "" if value is None else f"{value * 100:.0f} %"


def gpu_href(gpu_id: str | None) -> str | None:
    """The GPU's page, relative to a version's root folder."""
    return None if gpu_id is None else f"gpu/{gpu_id}.html"


def frame_table(frame: pl.DataFrame, headers: dict[str, str], **kwargs) -> Table:
    """A Table of the given columns (values shown as `str()` shows them; NULL as '')."""
    rows = [
        tuple(Cell("" if v is None else str(v)) for v in row)
        for row in frame.select(list(headers)).iter_rows()
    ]
    return Table(tuple(headers.values()), rows, **kwargs)


def money_expr(column: str) -> pl.Expr:
    """A column of amounts shown as `money` shows them."""
    return pl.col(column).map_elements(money, return_dtype=pl.Utf8)
