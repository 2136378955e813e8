"""Validate every file of a bundled snapshot (`sources/data/`) before a bundled run.

`python -m sources.bundled_check [DATA_DIR]` reads each file through the reader the
pipeline uses (so through the same checks), adds the checks across files the readers
cannot make alone (every GPU a catalog id, launch prices against the GPU's bundled prices,
each cloud fact replayed through its provider's parser, archive blobs against their
hashes), and fails on a file no validator covers. The first problem raises
`BadInputError` naming file, line and field; the bundled run (`make run`) calls
`validate_snapshot` first, so a bad file stops it before anything is published and the
previous release stays. `--spreads` prints the real min/max per spec field, from which
the bounds in sources/specs/plausibility.py were set.
"""

import argparse
import datetime as dt
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.archive import Archive, ArchiveError
from sources.benchmarks.inbox import load_inbox
from sources.benchmarks.serving import read_serving_benchmarks
from sources.bundled import (
    DATA_DIR,
    PAGE_SOURCES,
    manifest_as_of,
    price_fact_files,
    read_archive_citations,
    read_benchmark_figures,
    read_cloud_offers,
    read_eight_bit_ratios,
    read_fx_rates,
    read_independent_ratios,
    read_llm_benchmarks,
    read_price_facts,
)
from sources.cloud.providers import PROVIDERS
from sources.cloud.snapshot import RENDERED, replay_bundled
from sources.llm_api_prices import read_llm_api_prices
from sources.llm_models import read_llm_models
from sources.specs.build import build_spec_catalog
from sources.specs.curated import read_spec_citations
from sources.specs.names import read_source_names
from sources.specs.plausibility import FIELD_BOUNDS
from sources.specs.software_support import read_software_support
from sources.specs.unified_memory import read_unified_memory
from sources.tables import BadInputError

# Files under the data folder that are not data: documentation and the inbox's readme.
_NOT_DATA = re.compile(r"(^|/)(MANIFEST|README)\.md$|\.gitkeep$|^benchmarks/batch_sweeps\.md$")


@dataclass(frozen=True)
class Checked:
    """One validated file: its path under the data folder and how many rows it holds."""

    path: str
    rows: int


def _specs(data: Path, out: list[Checked]) -> pl.DataFrame:
    """The spec folder: sheet, citations, source names, unified memory, 8-bit, support."""
    specs = data / "specs"
    catalog = build_spec_catalog(specs)  # reads and checks the sheet and its companions
    sheet = catalog.merged.gpus
    out.append(Checked("specs/gpu_specs.csv", sheet.height))
    epoch = catalog.inputs.filter(pl.col("source") == "epoch").row(0, named=True)
    if epoch["status"] != "absent":
        # A user's optional third-party file: read by the spec build (a rejected one is
        # reported in spec_inputs, never fatal: the other sources make the catalog).
        out.append(Checked("specs/epoch_ml_hardware.csv", epoch["records"]))
    companions = {
        "gpu_spec_citations.csv": lambda path: read_spec_citations(path, sheet),
        "spec_source_names.csv": lambda path: read_source_names(path, frozenset(sheet["gpu_id"])),
        "unified_memory.csv": lambda path: read_unified_memory(path, sheet),
    }
    for name, read in companions.items():
        rows = read(specs / name)
        count = sum(map(len, rows.values())) if isinstance(rows, dict) else rows.height
        out.append(Checked(f"specs/{name}", count))
    vendor_of = dict(sheet.select("architecture", "vendor").unique().iter_rows())
    ratios = read_eight_bit_ratios(specs / "eight_bit_ratios.csv", vendor_of)
    out.append(Checked("specs/eight_bit_ratios.csv", ratios.height))
    support = read_software_support(specs / "software_support.csv", sheet)
    out.append(Checked("specs/software_support.csv", support.height))
    return sheet


def _prices(data: Path, sheet: pl.DataFrame, out: list[Checked]) -> None:
    prices = data / "prices"
    ids = frozenset(sheet["gpu_id"])
    launch = dict(sheet.select("gpu_id", "launch_price_usd").drop_nulls().iter_rows())
    facts = read_price_facts(prices, ids, launch, data / "specs" / "gpu_specs.csv")
    out.append(Checked("prices/fx_rates.csv", read_fx_rates(prices / "fx_rates.csv").height))
    for path in price_fact_files(prices):
        # Each source has one file: the history files are named after it, the page facts
        # hold the page sources.
        sources = PAGE_SOURCES if path.name == "retail_observations.csv" else (path.stem,)
        rows = facts.filter(pl.col("source").is_in(sources)).height
        out.append(Checked(path.relative_to(data).as_posix(), rows))


def _benchmarks(data: Path, ids: frozenset[str], out: list[Checked]) -> None:
    bench = data / "benchmarks"
    for path in sorted(bench.glob("*.csv")):
        out.append(Checked(f"benchmarks/{path.name}", read_benchmark_figures(path, ids).height))
    for name in ("llm_inference.csv", "llamacpp_threads.csv"):
        rows = read_llm_benchmarks(bench / "llm" / name, ids).height
        out.append(Checked(f"benchmarks/llm/{name}", rows))
    models = read_llm_models(data / "llm" / "models.csv")
    known = frozenset(models["model_id"])
    serving = read_serving_benchmarks(bench / "llm" / "serving.csv", ids, known)
    out.append(Checked("benchmarks/llm/serving.csv", serving.height))
    # A user's public-format drops (MLPerf, NVIDIA DLE, Lambda CSV), read as the asset does.
    inbox, report = load_inbox(bench / "inbox", ids)
    for ignored in report.ignored:
        name, why = ignored.split(": ", 1)
        raise BadInputError(bench / "inbox" / name, 0, "(file)", why)
    out.append(Checked("benchmarks/inbox/ (every file the inbox reads)", inbox.height))
    pairs = read_independent_ratios(bench / "independent" / "independent_ratios.csv", ids)
    out.append(Checked("benchmarks/independent/independent_ratios.csv", pairs.height))
    out.append(Checked("llm/models.csv", models.height))
    api = read_llm_api_prices(data / "llm" / "api_prices.csv", known)
    out.append(Checked("llm/api_prices.csv", api.height))


# One GPU's bundled prices per GPU-hour lie within 0.17x (RunPod's V100 spot) .. 5.7x
# (Azure's V100 on demand) of its median across every provider file; a price 30x off is
# a typo (a price x1000 or /1000 of a GPU a file offers once has no group of its own).
CROSS_PROVIDER_FACTOR = 30.0


def cloud_reference(data_dir: str | Path = DATA_DIR) -> dict[str, float]:
    """Median USD per GPU-hour of each GPU over every bundled cloud file (plain read)."""
    frames = [
        pl.read_csv(path, columns=["gpu_id", "gpu_count", "usd_per_hour"], infer_schema=False)
        for path in sorted((Path(data_dir) / "cloud").glob("*.csv"))
    ]
    rows = pl.concat(frames).with_columns(
        per_gpu=pl.col("usd_per_hour").cast(pl.Float64, strict=False)
        / pl.col("gpu_count").cast(pl.Float64, strict=False)
    )
    medians = rows.group_by("gpu_id").agg(pl.col("per_gpu").median()).drop_nulls()
    return dict(medians.iter_rows())


def check_cloud_file(
    path: Path,
    provider: str,
    memory_gb: dict[str, float],
    reference: dict[str, float] | None = None,
) -> pl.DataFrame:
    """One bundled provider file, read and (for `RENDERED` providers) replayed.

    The same path as the bundled `cloud_offers` asset: the strict reader, the provider
    check, then the facts rendered in the provider's format and read by its live parser.
    `reference` (gpu_id -> median USD per GPU-hour over all the bundled files,
    `cloud_reference`) adds the check across providers.

    Raises:
        BadInputError: A bad row (file, line, field), a row of another provider, a price
            `CROSS_PROVIDER_FACTOR` off its GPU's median, or a fact the parser reads
            differently.
    """
    rows = read_cloud_offers(path, frozenset(memory_gb), PROVIDERS, line_column="_line")
    wrong = rows.filter(pl.col("provider") != provider)
    if wrong.height:
        reason = f"a {wrong['provider'][0]!r} row in {provider}'s file"
        raise BadInputError(path, int(wrong["_line"][0]), "provider", reason)
    for gpu, per_gpu, line in rows.select("gpu_id", "usd_per_gpu_hour", "_line").iter_rows():
        median = (reference or {}).get(gpu)
        if median and not 1 / CROSS_PROVIDER_FACTOR <= per_gpu / median <= CROSS_PROVIDER_FACTOR:
            reason = (
                f"${per_gpu:g} per GPU-hour is {per_gpu / median:.3g}x the median ${median:g} "
                f"of {gpu} across the bundled cloud files"
            )
            raise BadInputError(path, line, "usd_per_hour", reason)
    if provider in RENDERED:
        replay_bundled(provider, rows, memory_gb, path)
    return rows.drop("_line")


def _cloud(data: Path, sheet: pl.DataFrame, out: list[Checked]) -> None:
    memory = dict(sheet.select("gpu_id", "memory_gb").iter_rows())
    reference = cloud_reference(data)
    for provider in sorted(PROVIDERS):
        path = data / "cloud" / f"{provider}.csv"
        if not path.exists():
            raise BadInputError(path, 0, "(file)", f"no bundled offers for {provider}")
        rows = check_cloud_file(path, provider, memory, reference).height
        out.append(Checked(f"cloud/{path.name}", rows))


def _archive(data: Path, out: list[Checked]) -> None:
    root = data / "archive"
    citations = read_archive_citations(root / "CITATIONS.csv")
    out.append(Checked("archive/CITATIONS.csv", citations.height))
    archive = Archive(root)
    for day in archive.days():
        try:
            count = len(archive.responses(day))
        except ArchiveError as exc:
            index = root / day.isoformat() / "index.jsonl"
            raise BadInputError(index, 0, "(archive)", str(exc)) from None
        out.append(Checked(f"archive/{day.isoformat()}/ (index.jsonl, *.bin)", count))


def _manifests(data: Path, today: dt.date, out: list[Checked]) -> None:
    for manifest in sorted(data.rglob("MANIFEST.md")):
        if "as_of:" not in manifest.read_text(encoding="utf-8"):
            continue  # a folder README-style manifest without a snapshot date
        as_of = manifest_as_of(manifest.parent)
        if as_of > today + dt.timedelta(days=1):
            raise BadInputError(manifest, 0, "as_of", f"{as_of} is in the future")
        out.append(Checked(str(manifest.relative_to(data)), 1))


def _uncovered(data: Path, checked: list[Checked]) -> list[str]:
    """Files under `data` that no validator read (a new file needs one).

    A checked group ("archive/2025-06-02/ (index.jsonl, *.bin)") covers its folder.
    """
    covered = {c.path for c in checked}
    folders = tuple(c.path.split(" (")[0] for c in checked if " (" in c.path)
    missing = []
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        name = path.relative_to(data).as_posix()
        if _NOT_DATA.search(name) or name in covered or name.startswith(folders):
            continue
        missing.append(name)
    return missing


def validate_snapshot(data_dir: str | Path = DATA_DIR, today: dt.date | None = None) -> list:
    """Read and check every bundled file; return one `Checked` per file (or group).

    Raises:
        BadInputError: The first problem, naming file, line and field; or a data file no
            validator reads (field `(file)`).
    """
    data = Path(data_dir)
    today = today or dt.datetime.now(dt.UTC).date()
    out: list[Checked] = []
    # Cheapest first: a bad small file is reported before the 36,000 price rows are read.
    sheet = _specs(data, out)
    _cloud(data, sheet, out)
    _archive(data, out)
    _benchmarks(data, frozenset(sheet["gpu_id"]), out)
    _prices(data, sheet, out)
    _manifests(data, today, out)
    missing = _uncovered(data, out)
    if missing:
        raise BadInputError(data / missing[0], 0, "(file)", "no validator reads this file")
    return out


def bundled_problem(data_dir: str | Path = DATA_DIR) -> str | None:
    """None when every bundled file is valid, else the first problem as one line."""
    try:
        validate_snapshot(data_dir)
    except BadInputError as exc:
        return f"bad bundled file: {exc}"
    return None


def spec_spreads(data_dir: str | Path = DATA_DIR) -> pl.DataFrame:
    """Min and max of every bounded spec field in the sheet, with the bounds in force."""
    sheet = pl.read_csv(Path(data_dir) / "specs" / "gpu_specs.csv", comment_prefix="#")
    rows = []
    for field, (low, high, unit) in FIELD_BOUNDS.items():
        known = sheet.select("gpu_id", field).drop_nulls(field).sort(field)
        rows.append(
            {
                "field": field,
                "unit": unit,
                "n": known.height,
                "min": float(known[field][0]),
                "min_gpu": known["gpu_id"][0],
                "max": float(known[field][-1]),
                "max_gpu": known["gpu_id"][-1],
                "bound_low": float(low),
                "bound_high": float(high),
            }
        )
    return pl.DataFrame(rows)


def main(argv: list[str] | None = None) -> int:
    """Validate a snapshot folder; print each file's row count and the CPU time taken."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("data_dir", nargs="?", default=str(DATA_DIR))
    parser.add_argument("--spreads", action="store_true", help="print spec min/max per field")
    args = parser.parse_args(argv)
    if args.spreads:
        with pl.Config(tbl_rows=20, tbl_cols=12, tbl_width_chars=160):
            print(spec_spreads(args.data_dir))
        return 0
    started = time.process_time()
    try:
        checked = validate_snapshot(args.data_dir)
    except BadInputError as exc:
        print(f"bad bundled file: {exc}", file=sys.stderr)
        return 1
    for item in checked:
        print(f"{item.rows:>7}  {item.path}")
    cpu = time.process_time() - started
    print(f"{len(checked)} files or groups valid; {cpu:.2f} s CPU")
    return 0


if __name__ == "__main__":
    sys.exit(main())
