"""Import of Epoch AI's "Data on Machine Learning Hardware" CSV (`ml_hardware.csv`).

A user drops the file in (it is CC-BY 4.0; the repository ships none). Units are raw:
bytes, byte/s, FLOP/s; they are scaled to GB, GB/s and TFLOPS here. Epoch adds columns
over time, so only the columns read here must be present, in any order.

Bad input is classified, never guessed: a file without the needed columns is rejected as a
whole (`EpochFormatError`); an unparseable or non-positive cell is skipped and counted; a
name that appears twice is skipped (which row would be right?); a mapped name missing from
the file is counted.
"""

import csv
import datetime as dt
import io
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from sources.specs.fields import EPOCH, SourceResult, candidate, candidates_frame
from sources.tables import BadInputError

EPOCH_URL = "https://epoch.ai/data/machine-learning-hardware"
NAME = "Hardware name"
# Epoch column -> (our field, divisor to our unit).
EPOCH_FIELDS: dict[str, tuple[str, float]] = {
    "Memory (bytes)": ("memory_gb", 1e9),
    "Memory bandwidth (byte/s)": ("memory_bandwidth_gbs", 1e9),
    "Tensor-FP16/BF16 performance (FLOP/s)": ("fp16_tensor_tflops", 1e12),
    "FP8 performance (FLOP/s)": ("fp8_tensor_tflops", 1e12),
    "INT8 performance (OP/s)": ("int8_tensor_tops", 1e12),
    "TDP (W)": ("tdp_w", 1.0),
    "Release price (USD)": ("launch_price_usd", 1.0),
    "Release date": ("release_date", 1.0),
}
LAST_MODIFIED = "Last modified"
DATASHEET = "Link to datasheet"


class EpochFormatError(BadInputError):
    """The file is not in Epoch's ML-hardware format."""


def _date(raw: str) -> dt.date:
    # "2025-12-16 02:09:01+00:00" in Last modified; plain ISO dates elsewhere.
    return dt.date.fromisoformat(raw.strip()[:10])


def _first_url(raw: str) -> str | None:
    for part in raw.split():
        if part.startswith("https://"):
            return part.rstrip(";,")
    return None


def read_epoch_rows(path: str | Path) -> list[dict[str, str]]:
    """The file's rows as dicts; raises EpochFormatError when columns are missing."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        # strerror, not str(exc): the latter repeats the (absolute) path.
        raise EpochFormatError(path, 0, "(file)", f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise EpochFormatError(path, 0, "(file)", f"cannot read: {exc}") from None
    reader = csv.DictReader(io.StringIO(text))
    header = reader.fieldnames or []
    missing = [c for c in (NAME, *EPOCH_FIELDS) if c not in header]
    if missing:
        raise EpochFormatError(
            path, 1, "(header)", f"not an Epoch ML-hardware CSV: missing columns {missing}"
        )
    try:
        return list(reader)
    except csv.Error as exc:
        raise EpochFormatError(path, reader.line_num, "(row)", str(exc)) from None


def epoch_candidates(path: str | Path, names: Mapping[str, str]) -> SourceResult:
    """Candidates for the catalog GPUs named in `names` ({Epoch name: gpu_id})."""
    rows = read_epoch_rows(path)
    modified = []
    for row in rows:
        try:
            modified.append(_date(row.get(LAST_MODIFIED) or ""))
        except ValueError:
            pass  # an undated row does not date the file
    as_of = max(modified) if modified else None
    counts = Counter((row.get(NAME) or "").strip() for row in rows)
    out, problems, matched = [], [], set()
    for number, row in enumerate(rows, start=2):
        name = (row.get(NAME) or "").strip()
        gpu_id = names.get(name)
        if gpu_id is None:
            continue  # not a catalog GPU
        if counts[name] > 1:
            problems.append(f"line {number}: {name!r} appears {counts[name]} times; skipped")
            continue
        matched.add(gpu_id)
        link = _first_url(row.get(DATASHEET) or "")
        citation = f"Epoch AI, 'Data on Machine Learning Hardware' (CC-BY 4.0): {name}"
        if link:
            citation += f" (Epoch's source: {link})"
        for column, (field, divisor) in EPOCH_FIELDS.items():
            raw = (row.get(column) or "").strip()
            if not raw:
                continue
            try:
                if field == "release_date":
                    value: float | dt.date = _date(raw)
                else:
                    value = float(raw) / divisor
                    if not value > 0 or value == float("inf"):
                        raise ValueError("not a positive finite number")
                    value = round(value, 4)
            except ValueError as exc:
                problems.append(f"line {number}, {column!r}: {raw!r} ({exc})")
                continue
            out.append(candidate(gpu_id, field, value, EPOCH, name, citation, EPOCH_URL, as_of))
    for name, gpu_id in sorted(names.items()):
        if counts[name] == 0:
            problems.append(f"{gpu_id}: no row named {name!r}")
    return SourceResult(
        EPOCH, "ok", candidates_frame(out), as_of, None, len(rows), len(matched), tuple(problems)
    )
