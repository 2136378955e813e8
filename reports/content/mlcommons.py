"""The attribution MLCommons requires wherever a figure derives from MLPerf® results.

Source: MLCommons' "MLPerf Results Messaging Guidelines" (github.com/mlcommons/policies,
MLPerf_Results_Messaging_Guidelines.adoc, last changed in commit a4520be of 2025-07-11; read at
the repository's commit c195f80 of 2026-04-28). What it asks and how this module meets it:
- every use names the benchmark suite, version and division, the benchmark and scenario,
  the date and source of retrieval and the result ID, in a footnote set as text (not in an
  image): `result_lines`, one line per result, under each page that shows derived figures;
- a result not verified through MLCommons review says "Result not verified by MLCommons
  Association." and the word "unverified": every figure here is gpuvalue's own derivation
  (a fitted model, prices, tokens per user), so the notice says so (`NOTICE`);
- derived metrics (cost, per-user rates, energy) are named as such and never presented as
  MLPerf metrics (section "Comparisons based on secondary or derived metrics");
- the trademark legend of section 11.2 and the ® after the name (`TRADEMARK`).
"""

import re

import polars as pl

GUIDELINES = (
    "https://github.com/mlcommons/policies/blob/a4520be877271064ceff8339b837edb67027537b/"
    "MLPerf_Results_Messaging_Guidelines.adoc"
)
TRADEMARK = (
    "The MLPerf name and logo are registered and unregistered trademarks of MLCommons "
    "Association in the United States and other countries. All rights reserved. "
    "Unauthorized use strictly prohibited. See www.mlcommons.org for more information."
)
NOTICE = (
    "Unverified: the serving throughputs, tokens/s per user, costs per million tokens and "
    "energy per token shown here are derived by gpuvalue (a model fitted to published "
    "measurements, MLPerf® Inference results among them, with prices and specs); they are "
    "not MLPerf® metrics and not MLPerf® results. Result not verified by MLCommons "
    f"Association. {TRADEMARK} ([guidelines followed]({GUIDELINES}))"
)

_ROUND = re.compile(r"(?:inference_results_|inference[- ]?)v?(\d+\.\d+)", re.IGNORECASE)
_RESULT_ID = re.compile(r"\b(\d+\.\d+-\d{3,5})\b")
# mlcommons/inference_results_vX.Y <division>/<submitter>/results/<system>/<benchmark>/<scenario>
_PATH = re.compile(
    r"(?P<division>closed|open)/(?P<submitter>[^/\s]+)/results/(?P<system>[^/\s]+)/"
    r"(?P<benchmark>[^/\s]+)/(?P<scenario>[^/@\s]+)",
    re.IGNORECASE,
)
_REPO = re.compile(r"mlcommons/inference_results_v\d+(?:\.\d+)*")
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


def result_line(row: dict) -> str:
    """One result's footnote: suite, version, division, benchmark, scenario, ID, retrieval."""
    citation = row.get("citation") or ""
    text = f"{row.get('source') or ''} {citation}"
    version = _ROUND.search(text)
    path = _PATH.search(citation)
    result_id = _RESULT_ID.search(citation)
    repo, commit = _REPO.search(citation), _COMMIT.search(citation)
    division = path["division"].capitalize() if path else "division not stated"
    benchmark = path["benchmark"] if path else row.get("model_id") or ""
    scenario = (path["scenario"] if path else row.get("scenario")) or "scenario not stated"
    system = f", {path['submitter']} {path['system']}" if path else ""
    where = citation
    if repo:
        where = f"https://github.com/{repo[0]}" + (f" (commit {commit[1]})" if commit else "")
    return (
        f"MLPerf® Inference v{version[1] if version else '?'} {division}, {benchmark}, "
        f"{scenario}{system}, {row.get('num_gpus') or '?'} GPU(s) ({row.get('gpu_id')}); "
        f"entry {result_id[1] if result_id else 'ID not stated in the cited file'}; "
        f"as of {row.get('as_of')}, retrieved from {where}."
    )


def result_lines(results: pl.DataFrame, gpu_id: str | None = None) -> list[str]:
    """Footnote lines for the results (one GPU's, when given), deduplicated, in order."""
    rows = results if gpu_id is None else results.filter(pl.col("gpu_id") == gpu_id)
    seen: dict[str, None] = {}
    for row in rows.iter_rows(named=True):
        seen.setdefault(result_line(row), None)
    return list(seen)
