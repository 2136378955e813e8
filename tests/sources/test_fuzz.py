"""Mutation fuzzing of every page and price-file parser (see tests/fuzz.py).

Seeded and time-bounded: the CI run mutates our own fixtures for about 9 s in all. With
GPUVALUE_REALDATA set, the real captures are fuzzed too (GPUVALUE_FUZZ_SECONDS, default
60 s per family). A failure names the document, the mutation and the case number;
GPUVALUE_FUZZ_SEED replays another seed.
"""

import os
import time
from pathlib import Path

import pytest

from sources.cloud.parsers import CLOUD_PARSERS, REFERENCE_PARSERS
from sources.cloud.records import MAX_USD_PER_GPU_HOUR, MalformedFile
from sources.retail.amazon import parse_amazon
from sources.retail.ebay import parse_ebay
from tests.paths import FIXTURES_ROOT
from tests.sources.fuzz import (
    FILE_MUTATIONS,
    HTML_MUTATIONS,
    Stats,
    cases,
    check_cloud,
    check_retail,
)

FIXTURES = FIXTURES_ROOT
SEED = int(os.environ.get("GPUVALUE_FUZZ_SEED", "20261123"))
REALDATA = os.environ.get("GPUVALUE_REALDATA")
REAL_SECONDS = float(os.environ.get("GPUVALUE_FUZZ_SECONDS", "60"))
# No single parse may take longer (CPU seconds, so a loaded machine does not fail it): a
# superlinear path on a hostile page shows up here.
MAX_SECONDS_PER_CASE = 5.0

RETAIL_PARSERS = {"amazon": parse_amazon, "ebay": parse_ebay}
# Which parser reads which cloud fixture (by file-name prefix).
CLOUD_PREFIXES = {
    "aws": "aws",
    "azure": "azure",
    "gcp": "gcp",
    "lambda": "lambda",
    "vast": "vast",
    "runpod": "runpod",
    "skypilot": "skypilot",
    "gpuhunt": "gpuhunt",
    "primeintellect": "primeintellect",
}
REAL_CLOUD = {
    "aws_": "aws",
    "azure_gpu_vms_skypilot": "skypilot",
    "azure_retail": "azure",
    "gcp_billing": "gcp",
    "gcp_gpu_vms_skypilot": "skypilot",
    "gpuhunt": "gpuhunt",
    "lambda_vms": "skypilot",
    "primeintellect": "primeintellect",
    "runpod_gpu_types_with": "runpod",
    "vast_vms": "skypilot",
}


def _retail_seeds(root: Path) -> dict[str, bytes]:
    seeds = {}
    for source in RETAIL_PARSERS:
        for path in sorted((root / source).glob("*.htm*")):
            seeds[f"{source}/{path.name}"] = path.read_bytes()
    return seeds


def _fuzz_retail(seeds: dict[str, bytes], budget: float, max_cases: int) -> Stats:
    stats = Stats()
    for name, kind, number, content in cases(seeds, HTML_MUTATIONS, SEED, budget, max_cases):
        parse = RETAIL_PARSERS[name.split("/")[0]]
        started = time.process_time()
        try:
            result = parse(content, None)
        except Exception as exc:  # the contract is "never raises"
            stats.failures.append(f"{name} {kind} case {number}: raised {exc!r:.200}")
            continue
        elapsed = time.process_time() - started
        stats.cases += 1
        stats.by_mutation[kind] += 1
        stats.records += len(result.records)
        stats.priced += sum(r.price is not None for r in result.records)
        problems = check_retail(result, content)
        if elapsed > MAX_SECONDS_PER_CASE:
            problems.append(f"took {elapsed:.1f}s")
        stats.failures += [f"{name} {kind} case {number}: {p}" for p in problems]
    return stats


def _fuzz_cloud(seeds: dict[str, tuple[str, bytes]], budget: float, max_cases: int) -> Stats:
    parsers = {**CLOUD_PARSERS, **REFERENCE_PARSERS}
    stats = Stats()
    contents = {name: content for name, (_, content) in seeds.items()}
    for name, kind, number, content in cases(contents, FILE_MUTATIONS, SEED, budget, max_cases):
        started = time.process_time()
        try:
            records = parsers[seeds[name][0]](content)
        except MalformedFile:
            records = []
        except Exception as exc:
            stats.failures.append(f"{name} {kind} case {number}: raised {exc!r:.200}")
            continue
        elapsed = time.process_time() - started
        stats.cases += 1
        stats.by_mutation[kind] += 1
        stats.records += len(records)
        problems = check_cloud(records, MAX_USD_PER_GPU_HOUR)
        if elapsed > MAX_SECONDS_PER_CASE:
            problems.append(f"took {elapsed:.1f}s")
        stats.failures += [f"{name} {kind} case {number}: {p}" for p in problems]
    return stats


def _cloud_fixture_seeds() -> dict[str, tuple[str, bytes]]:
    seeds = {}
    for path in sorted((FIXTURES / "cloud").iterdir()):
        for parser, prefix in CLOUD_PREFIXES.items():
            if path.name.startswith(prefix) and "missing" not in path.name:
                seeds[path.name] = (parser, path.read_bytes())
                break
    return seeds


def _report(stats: Stats, what: str) -> None:
    print(f"{what}: {stats.cases} cases, {stats.records} records ({stats.priced} priced)")
    print(f"  by mutation: {dict(sorted(stats.by_mutation.items()))}")
    assert not stats.failures, f"{len(stats.failures)} failures:\n" + "\n".join(stats.failures[:20])


def test_fuzz_retail_fixtures():
    seeds = _retail_seeds(FIXTURES / "retail")
    assert len(seeds) >= 20
    stats = _fuzz_retail(seeds, budget=6.0, max_cases=1500)
    assert stats.cases >= 100, "the fuzz budget ran out before a meaningful number of cases"
    assert set(stats.by_mutation) == set(HTML_MUTATIONS)
    _report(stats, "retail fixtures")


def test_fuzz_cloud_fixtures():
    seeds = _cloud_fixture_seeds()
    assert {parser for parser, _ in seeds.values()} == set(CLOUD_PREFIXES.values())
    stats = _fuzz_cloud(seeds, budget=3.0, max_cases=1500)
    assert stats.cases >= 100
    _report(stats, "cloud fixtures")


@pytest.mark.slow(seconds=60)  # REAL_SECONDS of fuzzing
@pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")
def test_fuzz_retail_realdata():
    seeds = _retail_seeds(Path(REALDATA))
    assert seeds
    _report(_fuzz_retail(seeds, budget=REAL_SECONDS, max_cases=100_000), "retail realdata")


@pytest.mark.slow(seconds=60)  # REAL_SECONDS of fuzzing
@pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")
def test_fuzz_cloud_realdata():
    seeds = {}
    for path in sorted((Path(REALDATA) / "cloud").iterdir()):
        parser = next((p for prefix, p in REAL_CLOUD.items() if path.name.startswith(prefix)), None)
        if parser:
            seeds[path.name] = (parser, path.read_bytes())
    assert seeds
    _report(_fuzz_cloud(seeds, budget=REAL_SECONDS, max_cases=100_000), "cloud realdata")
