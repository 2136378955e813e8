"""Benchmark files users drop into the snapshot, in their public formats.

Layout (under `sources/data/benchmarks/inbox/`, or any folder given to `load_inbox`):

    lambda-csv/<era>/pytorch-train-throughput-fp16.csv   + pytorch-train-bs-fp16.csv
    nvidia-dle/<path in the repository>/README.md
    mlperf/<any name>.csv | .json                        (training summary or inference
                                                           summary_results)

Each folder may hold a MANIFEST.md with `as_of: YYYY-MM-DD` and `citation: <repo @ commit>`
lines (the nearest one up the tree applies). Without `as_of`, the file's modification date is
used and the citation says so. For Lambda, the era is the folder name (`lambda-v1`, ...),
because the CSV itself does not say which software stack produced it. A file the adapter
cannot read raises `MalformedFile` naming it: the load fails and yesterday's rows stay.
A file no adapter reads (a wrong extension, a wrong or missing format folder, a Lambda
batch-size table without its throughput table) is listed in `InboxReport.ignored`, and the
ingest logs a warning for each, so a dropped file is never silently left out.
"""

import datetime as dt
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from sources.benchmarks.lambda_csv import batch_size_file_for, parse_lambda_csv, precision_of
from sources.benchmarks.mlperf import parse_mlperf
from sources.benchmarks.nvidia_dle import parse_dle_readme
from sources.benchmarks.records import MalformedFile, ParsedTable, records_frame

FORMATS = ("lambda-csv", "nvidia-dle", "mlperf")
# Files the inbox keeps for people and git, never data.
_NOT_DATA = frozenset({"README.md", "MANIFEST.md", ".gitkeep"})


@dataclass
class InboxReport:
    """What was loaded from the inbox, and what was not."""

    files: list[str] = field(default_factory=list)
    skipped: Counter = field(default_factory=Counter)
    unknown_gpus: Counter = field(default_factory=Counter)
    ignored: list[str] = field(default_factory=list)  # files no adapter reads (see ignored_files)


def _manifest(folder: Path, stop: Path) -> dict[str, str]:
    """`as_of:` and `citation:` from the nearest MANIFEST.md between folder and stop."""
    current = folder
    while True:
        manifest = current / "MANIFEST.md"
        if manifest.exists():
            text = manifest.read_text(encoding="utf-8")
            found = dict(re.findall(r"^(as_of|citation):\s*(.+?)\s*$", text, re.MULTILINE))
            if found:
                return found
        if current == stop or current.parent == current:
            return {}
        current = current.parent


def _dated(path: Path, root: Path) -> tuple[dt.date, str]:
    meta = _manifest(path.parent, root)
    if "as_of" in meta:
        try:
            as_of = dt.date.fromisoformat(meta["as_of"])
        except ValueError as exc:
            raise MalformedFile(f"{path.parent}/MANIFEST.md: as_of {meta['as_of']!r}") from exc
        return as_of, meta.get("citation", "")
    mtime = dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).date()
    return mtime, meta.get("citation", "") or "(no MANIFEST.md: as_of is the file date)"


def parse_inbox_file(fmt: str, path: Path, root: Path, known: frozenset[str] | None) -> ParsedTable:
    """Parse one dropped-in file with its format's adapter."""
    as_of, cited = _dated(path, root)
    relative = path.relative_to(root).as_posix()
    if fmt == "lambda-csv":
        era_folder = path.parent.relative_to(root / fmt).as_posix()
        era = "lambda" if era_folder in ("", ".") else era_folder.replace("/", "-")
        pair = batch_size_file_for(path)
        return parse_lambda_csv(
            path.read_bytes(),
            pair.read_bytes() if pair.exists() else None,
            precision=precision_of(path),
            software_era=era,
            as_of=as_of,
            citation=f"{cited} {path.name}".strip(),
            source_file=relative,
            known=known,
        )
    if fmt == "nvidia-dle":
        readme_path = path.relative_to(root / fmt).as_posix()
        return parse_dle_readme(
            path.read_bytes(),
            readme_path=readme_path,
            as_of=as_of,
            citation_prefix=cited or "NVIDIA/DeepLearningExamples",
            source_file=relative,
            known=known,
        )
    commit = re.search(r"@([0-9a-f]{7,40})", cited)
    return parse_mlperf(
        path.read_bytes(),
        source_file=relative,
        commit=commit.group(1) if commit else "",
        known=known,
    )


def inbox_files(root: Path) -> list[tuple[str, Path]]:
    """(format, path) of every file the inbox's adapters read, in a stable order."""
    found = []
    patterns = {"lambda-csv": "*throughput*.csv", "nvidia-dle": "*.md", "mlperf": "*"}
    for fmt in FORMATS:
        folder = root / fmt
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob(patterns[fmt])):
            if not path.is_file() or path.name == "MANIFEST.md":
                continue
            if fmt == "mlperf" and path.suffix.lower() not in (".csv", ".json"):
                continue
            found.append((fmt, path))
    return found


def ignored_files(root: Path) -> list[str]:
    """Files under the inbox that no adapter reads, relative to it, with why.

    `mlperf/notes.txt: not a .csv or .json`, `results.csv: not in a format folder
    (lambda-csv/, nvidia-dle/, mlperf/)`: a file dropped where it is ignored would otherwise
    vanish without a word. README.md, MANIFEST.md and .gitkeep are not data.
    """
    if not root.is_dir():
        return []
    read = {path for _, path in inbox_files(root)}
    read |= {batch_size_file_for(path) for fmt, path in inbox_files(root) if fmt == "lambda-csv"}
    why = {
        "lambda-csv": "not a Lambda throughput table (*throughput*.csv) or its batch-size pair",
        "nvidia-dle": "not a DeepLearningExamples README (*.md)",
        "mlperf": "not a .csv or .json",
    }
    ignored = []
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path in read or path.name in _NOT_DATA:
            continue
        relative = path.relative_to(root)
        fmt = relative.parts[0] if len(relative.parts) > 1 else ""
        reason = why.get(fmt, f"not in a format folder ({', '.join(f + '/' for f in FORMATS)})")
        ignored.append(f"{relative.as_posix()}: {reason}")
    return ignored


def load_inbox(root: Path, known: frozenset[str] | None) -> tuple[pl.DataFrame, InboxReport]:
    """Rows of every inbox file (unknown GPUs counted, not written) and a report."""
    report = InboxReport(ignored=ignored_files(root))
    frames = []
    for fmt, path in inbox_files(root):
        parsed = parse_inbox_file(fmt, path, root, known)
        report.files.append(path.relative_to(root).as_posix())
        report.skipped.update(parsed.skipped)
        report.unknown_gpus.update(parsed.unknown_gpus)
        frames.append(records_frame(parsed.records))
    rows = pl.concat(frames) if frames else records_frame([])
    return rows, report


def merge_with_bundled(bundled: pl.DataFrame, inbox: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """Bundled figures plus inbox figures, and how many bundled rows were superseded.

    An inbox table supersedes the bundled rows of the same source and era: it is a newer
    version of the same published table, and keeping both would count each figure twice.
    """
    if inbox.is_empty():
        return bundled, 0
    newer = inbox.select("source", "software_era").unique()
    kept = bundled.join(newer, on=["source", "software_era"], how="anti")
    rows = pl.concat([kept, inbox], how="diagonal_relaxed")
    return rows, bundled.height - kept.height
