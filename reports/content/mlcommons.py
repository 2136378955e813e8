"""The attribution MLCommons requires wherever a figure derives from MLPerf® results.

Source: MLCommons' "MLPerf Results Messaging Guidelines" (github.com/mlcommons/policies,
MLPerf_Results_Messaging_Guidelines.adoc, last changed in commit a4520be of 2025-07-11; read at
the repository's commit c195f80 of 2026-04-28). What it asks and how this module meets it:
- every use names the benchmark suite, version and division, the benchmark and scenario,
  the date and source of retrieval and the result ID, in a footnote set as text (not in an
  image): `result_lines`, one line per result (MLPerf Inference and Training), under each
  page that shows derived figures (llm.html, the GPU pages, the methodology page);
- a result not verified through MLCommons review says "Result not verified by MLCommons
  Association." and the word "unverified": every figure here is gpuvalue's own derivation
  (a fitted model, prices, tokens per user), so the notice says so (`NOTICE`);
- derived metrics (cost, per-user rates, energy) are named as such and never presented as
  MLPerf metrics (section "Comparisons based on secondary or derived metrics");
- the trademark legend of section 11.2 and the ® after the name (`TRADEMARK`).
This module is the one place for that text; pages call `notice` and `result_lines`.
"""

import datetime as dt
import re
from functools import cache

import polars as pl

from sources.bundled import DATA_DIR, manifest_as_of

GUIDELINES = (
    "https://github.com/mlcommons/policies/blob/a4520be877271064ceff8339b837edb67027537b/"
    "MLPerf_Results_Messaging_Guidelines.adoc"
)
TRADEMARK = (
    "The MLPerf name and logo are registered and unregistered trademarks of MLCommons "
    "Association in the United States and other countries. All rights reserved. "
    "Unauthorized use strictly prohibited. See www.mlcommons.org for more information."
)
UNVERIFIED = "Result not verified by MLCommons Association."
# The serving measurements (sources/data/benchmarks/llm/serving.csv) were read from the
# results repositories for issue 24: that file's MANIFEST section says "Compiled 2026-11-26".
SERVING_RETRIEVED = dt.date(2026, 11, 26)


def notice(figures: str, suites: str = "Inference") -> str:
    """The attribution paragraph: what is derived, that it is unverified, the trademark."""
    return (
        f"Unverified: {figures} are derived from MLPerf® {suites} results by gpuvalue (a "
        "model fitted to published measurements, with prices and specs); they are not "
        f"MLPerf® metrics and not MLPerf® results. {UNVERIFIED} {TRADEMARK} "
        f"([guidelines followed]({GUIDELINES}))"
    )


NOTICE = notice(
    "the serving throughputs, tokens/s per user, costs per million tokens and energy per "
    "token shown here"
)
BENCHMARK_NOTICE = notice(
    "the relative performance, performance per dollar and per-GPU debiased throughputs "
    "shown here (MLPerf Training throughputs are trainings per hour, 60 divided by the "
    "reported time to train in minutes)",
    "Training and MLPerf® Inference",
)


@cache
def benchmarks_retrieved() -> dt.date:
    """When the bundled MLPerf Training and Inference tables were read (their MANIFEST)."""
    return manifest_as_of(DATA_DIR / "benchmarks")


_ROUND = re.compile(r"(?:inference_results_|inference[- ]?)v?(\d+\.\d+)", re.IGNORECASE)
_TRAINING = re.compile(r"training_results_v(\d+\.\d+)", re.IGNORECASE)
# mlcommons/training_results_vX.Y <submitter>/results/<system>/<benchmark>: the closed
# division (the bundled table keeps closed-division results only: docs/data.md).
_TRAINING_PATH = re.compile(
    r"training_results_v[\d.]+ (?P<submitter>[^/\s]+)/results/(?P<system>[^/]+)/"
    r"(?P<benchmark>[^/@\s]+)",
    re.IGNORECASE,
)
_RESULT_ID = re.compile(r"\b(\d+\.\d+-\d{3,5})\b")
# mlcommons/inference_results_vX.Y <division>/<submitter>/results/<system>/<benchmark>/<scenario>
_PATH = re.compile(
    r"(?P<division>closed|open)/(?P<submitter>[^/\s]+)/results/(?P<system>[^/]+)/"
    r"(?P<benchmark>[^/\s]+)/(?P<scenario>[^/@\s]+)",
    re.IGNORECASE,
)
_REPO = re.compile(r"mlcommons/(?:inference|training)_results_v\d+(?:\.\d+)*")
_COMMIT = re.compile(r"@([0-9a-f]{7,40})\b")


def is_mlperf(frame: pl.DataFrame, *columns: str) -> pl.Series:
    """Rows whose given text columns name MLPerf or MLCommons (case-insensitive)."""
    hit = pl.lit(False)
    for column in columns:
        if column in frame.columns:
            text = pl.col(column).fill_null("").str.to_lowercase()
            hit = hit | text.str.contains("mlperf") | text.str.contains("mlcommons")
    return frame.select(hit.alias("hit"))["hit"]


def mlperf_results(benchmarks: pl.DataFrame) -> pl.DataFrame:
    """The MLPerf rows of `llm_serving_benchmarks`."""
    if benchmarks.is_empty():
        return benchmarks
    return benchmarks.filter(is_mlperf(benchmarks, "source", "citation"))


def uses_mlperf(results: pl.DataFrame, *shown: tuple[pl.DataFrame, str]) -> bool:
    """Whether figures derive from MLPerf: results were fitted, or a shown row cites one."""
    if not results.is_empty():
        return True
    return any(not frame.is_empty() and is_mlperf(frame, column).any() for frame, column in shown)


def _where(citation: str) -> str:
    repo, commit = _REPO.search(citation), _COMMIT.search(citation)
    if not repo:
        return citation
    return f"https://github.com/{repo[0]}" + (f" (commit {commit[1]})" if commit else "")


def _training_line(row: dict, citation: str, retrieved: dt.date) -> str:
    version, path = _TRAINING.search(citation), _TRAINING_PATH.search(citation)
    benchmark = path["benchmark"] if path else row.get("model") or ""
    system = f", {path['submitter']} {path['system']}" if path else ""
    published = f"published {row['as_of']}; " if row.get("as_of") else ""
    return (
        f"MLPerf® Training v{version[1] if version else '?'}, Closed division, benchmark "
        f"{benchmark}, time to train (Training has no scenarios){system}, "
        f"{row.get('num_gpus') or '?'} GPU(s) ({row.get('gpu_id')}); result ID not "
        f"transcribed (the system's results folder identifies it); {published}"
        f"retrieved {retrieved} from {_where(citation)}."
    )


def result_line(row: dict, retrieved: dt.date = SERVING_RETRIEVED) -> str:
    """One result's footnote: suite, version, division, benchmark, scenario, ID, retrieval."""
    citation = row.get("citation") or ""
    if _TRAINING.search(citation):
        return _training_line(row, citation, retrieved)
    text = f"{row.get('source') or ''} {citation}"
    version = _ROUND.search(text)
    path = _PATH.search(citation)
    result_id = _RESULT_ID.search(citation)
    division = path["division"].capitalize() if path else "division not stated"
    benchmark = path["benchmark"] if path else row.get("model_id") or row.get("model") or ""
    scenario = (path["scenario"] if path else row.get("scenario")) or "not stated"
    system = f", {path['submitter']} {path['system']}" if path else ""
    published = f"published {row['as_of']}; " if row.get("as_of") else ""
    return (
        f"MLPerf® Inference v{version[1] if version else '?'}, {division} division, "
        f"benchmark {benchmark}, scenario {scenario}{system}, "
        f"{row.get('num_gpus') or '?'} GPU(s) ({row.get('gpu_id')}); "
        f"result ID {result_id[1] if result_id else 'not stated in the cited file'}; "
        f"{published}retrieved {retrieved} from {_where(citation)}."
    )


def result_lines(
    results: pl.DataFrame, gpu_id: str | None = None, retrieved: dt.date = SERVING_RETRIEVED
) -> list[str]:
    """Footnote lines for the results (one GPU's, when given), deduplicated, in order."""
    rows = results if gpu_id is None else results.filter(pl.col("gpu_id") == gpu_id)
    seen: dict[str, None] = {}
    for row in rows.iter_rows(named=True):
        seen.setdefault(result_line(row, retrieved), None)
    return list(seen)


def benchmark_attribution(benchmarks: pl.DataFrame) -> list[str]:
    """The notice and one line per MLPerf result among benchmark rows (none: no MLPerf row).

    For the debiased Training and Inference benchmark rows a GPU page or the methodology
    page shows (`benchmark_debiased`, or `benchmark_results` with `as_of`).
    """
    if benchmarks.is_empty():
        return []
    mlperf = benchmarks.filter(is_mlperf(benchmarks, "source", "citation"))
    if mlperf.is_empty():
        return []
    return [BENCHMARK_NOTICE, *result_lines(mlperf, retrieved=benchmarks_retrieved())]


def _round_of(row: dict) -> dict[str, str]:
    """Suite, version, division, benchmark, scenario and repository of one result row."""
    citation = row.get("citation") or ""
    training = _TRAINING.search(citation)
    if training:
        path = _TRAINING_PATH.search(citation)
        return {
            "suite": "MLPerf® Training",
            "version": f"v{training[1]}",
            "division": "Closed",
            "benchmark": path["benchmark"] if path else row.get("model") or "",
            "scenario": "time to train",
            "where": _where(citation),
        }
    version, path = _ROUND.search(f"{row.get('source') or ''} {citation}"), _PATH.search(citation)
    return {
        "suite": "MLPerf® Inference",
        "version": f"v{version[1]}" if version else "?",
        "division": path["division"].capitalize() if path else "not stated",
        "benchmark": path["benchmark"] if path else row.get("model_id") or "",
        "scenario": (
            (path["scenario"] if path else row.get("scenario")) or "not stated"
        ).capitalize(),
        "where": _where(citation),
    }


def rounds_table(results: pl.DataFrame) -> pl.DataFrame:
    """One row per MLPerf suite, version and division: benchmarks, scenarios, results, source.

    For a page that summarises many results (the methodology page); the per-result lines
    (system, result ID) are on the GPU pages and llm.html.
    """
    rows = [_round_of(r) for r in results.iter_rows(named=True)]
    if not rows:
        return pl.DataFrame()
    return (
        pl.DataFrame(rows)
        .group_by("suite", "version", "division")
        .agg(
            benchmarks=pl.col("benchmark").unique().sort().str.join(", "),
            scenarios=pl.col("scenario").unique().sort().str.join(", "),
            results=pl.len(),
            retrieved_from=pl.col("where").unique().sort().str.join("; "),
        )
        .sort("suite", "version", "division")
    )
