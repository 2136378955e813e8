"""Site version names: `<as-of date>` for a date's first run, then `<date>.2`, `<date>.3`, ...

A published version never changes. A run whose as-of date is already published is therefore
published as the next free name of that date instead of replacing it. Names are ordered by
(date, number), never as strings: `2026-10-07.10` comes after `2026-10-07.9`. A name reaches
file paths (the version's folder), so every name read from a folder, a file or a caller is
checked against one pattern: a date and an optional number, nothing that could leave a
folder.
"""

import datetime as dt
import re
from collections.abc import Iterable

# `.1` is never written: the first run of a date is the bare date. Up to 4 digits: a date
# rerun ten thousand times is a bug, not a version.
_NAME = re.compile(r"^(\d{4}-\d{2}-\d{2})(?:\.([2-9]|[1-9]\d{1,3}))?$")


def parse_version(name: str) -> tuple[dt.date, int]:
    """`2026-10-07.2` -> (2026-10-07, 2); the bare date is number 1. Raises ValueError."""
    match = _NAME.match(name) if isinstance(name, str) else None
    if match is None:
        raise ValueError(f"not a site version (YYYY-MM-DD or YYYY-MM-DD.N, N >= 2): {name!r}")
    try:
        day = dt.date.fromisoformat(match.group(1))
    except ValueError as exc:
        raise ValueError(f"not a site version (no such date): {name!r}") from exc
    return day, int(match.group(2) or 1)


def is_version(name: str) -> bool:
    """True when `name` is a valid version name (see parse_version)."""
    try:
        parse_version(name)
    except ValueError:
        return False
    return True


def version_key(name: str) -> tuple[dt.date, int]:
    """The sort key of a version: its date, then its number."""
    return parse_version(name)


def newest_first(names: Iterable[str]) -> list[str]:
    """Version names, newest first (by date, then number); raises on an invalid name."""
    return sorted(names, key=version_key, reverse=True)


def version_date(name: str) -> str:
    """The as-of date of a version, `YYYY-MM-DD`."""
    return parse_version(name)[0].isoformat()


def next_version(published: Iterable[str], run_date: dt.date) -> str:
    """The name a run dated `run_date` is published under, given the published names.

    The bare date when that date has no version yet, else one above its highest number.
    Names that are not versions (`latest`, `index.html`) are ignored.
    """
    numbers = [
        parse_version(name)[1]
        for name in published
        if is_version(name) and parse_version(name)[0] == run_date
    ]
    if not numbers:
        return run_date.isoformat()
    return f"{run_date.isoformat()}.{max(numbers) + 1}"
