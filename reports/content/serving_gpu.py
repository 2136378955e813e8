"""A GPU page's serving curve (issue 24, item 8): throughput against concurrent users.

For each model the GPU holds, at each precision, the fewest GPUs that hold it: output
tokens/s of the whole system and per user as the number of users served at once grows,
until KV-cache memory runs out, with energy per output token and its basis (measured
power, or board power (TDP) where nothing was measured).
"""

from dataclasses import dataclass

import polars as pl

from reports.content.blocks import Cell, Section, Table
from reports.content.mlcommons import NOTICE, mlperf_results, result_lines, uses_mlperf
from reports.content.serving import MODEL_ORDER, system_label
from reports.dataset import Dataset
from reports.serving_schema import empty_serving_table

SHOWN_CONCURRENCY = (1, 4, 16, 64, 256)  # of the grid 1, 2, 4, ..., 256: the curve's shape
ENERGY_BASIS = {"measured": "measured power", "tdp": "board power (TDP)"}


def _rate(value: float | None) -> str:
    return "" if value is None else f"{value:,.0f}" if value >= 10 else f"{value:.1f}"


def curve_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """The configurations shown: per model and precision, the fewest GPUs with a fitting row."""
    fit = rows.filter(pl.col("fits") & pl.col("output_tokens_per_s").is_not_null())
    if fit.is_empty():
        return fit
    fewest = fit.group_by("model_id", "precision_bits").agg(pl.col("num_gpus").min())
    return fit.join(fewest, on=["model_id", "precision_bits", "num_gpus"]).sort(
        "model_id", "precision_bits", "concurrency"
    )


def _point(row: dict | None) -> Cell:
    if row is None:
        return Cell("–")
    low, high = row["low"], row["high"]
    band = f" ({_rate(low)}–{_rate(high)})" if low is not None and high is not None else ""
    lines = [f"{_rate(row['output_tokens_per_s_per_user'])} per user"]
    if (row["method"] or "").startswith("measured"):
        lines.append("measured")
    return Cell(f"{_rate(row['output_tokens_per_s'])}{band}", lines=tuple(lines))


def _energy(first: dict, last: dict) -> Cell:
    """Joules per output token at one user and at the most users, with its basis."""
    j1, jn = first["joules_per_output_token"], last["joules_per_output_token"]
    if j1 is None and jn is None:
        return Cell("")
    basis = ENERGY_BASIS.get(last["energy_basis"] or "", last["energy_basis"] or "basis unknown")
    text = f"{j1:.2g} J at {first['concurrency']}" if j1 is not None else ""
    if jn is not None and last is not first:
        text = f"{text} → {jn:.2g} J at {last['concurrency']}".lstrip(" →")
    return Cell(text, lines=(basis,))


def _order(model: str) -> tuple[int, str]:
    return (MODEL_ORDER.index(model) if model in MODEL_ORDER else len(MODEL_ORDER), model)


def serving_curve_table(rows: pl.DataFrame) -> Table:
    """One row per model x precision (fewest GPUs): tokens/s at each shown concurrency."""
    shown = curve_rows(rows)
    out = []
    groups = shown.partition_by("model_id", "precision_bits", "num_gpus", as_dict=True)
    for key in sorted(groups, key=lambda k: (*_order(k[0]), k[1])):
        model, bits, n = key
        part = list(groups[key].iter_rows(named=True))
        at = {r["concurrency"]: r for r in part}
        first, last = part[0], part[-1]
        engine = ", ".join(x for x in (first["engine"], first["interconnect"]) if x)
        out.append(
            (
                Cell(model),
                Cell(f"{system_label(first['gpu_id'], n)}, {bits}-bit", lines=(engine,)),
                *(_point(at.get(c)) for c in SHOWN_CONCURRENCY),
                Cell(
                    f"{last['concurrency']} users",
                    lines=(f"{_rate(last['output_tokens_per_s_per_user'])} tokens/s each",),
                ),
                _energy(first, last),
            )
        )
    return Table(
        (
            "model",
            "system",
            *(f"{c} user{'s' if c > 1 else ''} (tokens/s)" for c in SHOWN_CONCURRENCY),
            "most users (KV memory)",
            "energy per output token (J)",
        ),
        out,
        title="Serving: output tokens/s of the system (95 % interval) and per user, "
        "by users served at once",
        css="cards",  # the verdicts' card layout on phones, not a verdict
        empty="No model fits this GPU for serving, or no serving figure in this version.",
    )


@dataclass(frozen=True)
class ServingPages:
    """Every GPU page's serving section, from one pass over the version's tables."""

    by_gpu: dict[str, pl.DataFrame]
    results: pl.DataFrame
    attributed: bool

    @classmethod
    def of(cls, ds: Dataset) -> "ServingPages":
        """Split the serving rows by GPU once (a version has ~150 GPU pages)."""
        rows = ds.llm_serving
        results = mlperf_results(ds.llm_serving_benchmarks)
        by_gpu = (
            {k[0]: v for k, v in rows.partition_by("gpu_id", as_dict=True).items()}
            if not rows.is_empty()
            else {}
        )
        return cls(by_gpu, results, uses_mlperf(results, (rows, "evidence")))

    def section(self, gpu_id: str) -> Section:
        """The GPU page's "LLM serving" section, with the MLPerf® notice when it applies."""
        rows = self.by_gpu.get(gpu_id, empty_serving_table("llm_serving"))
        table = serving_curve_table(rows)
        after = [NOTICE, *result_lines(self.results, gpu_id)] if self.attributed else []
        methods = sorted({m.split(":")[0] for m in rows["method"].drop_nulls()})
        return Section(
            "serving",
            "LLM serving (many users at once)",
            [
                "Batched serving: as more users are served at once, the system makes more "
                "tokens per second and each user gets fewer. Each row is the fewest GPUs "
                "that hold the model at that precision; the curve stops where the KV cache "
                "no longer fits. Energy per output token is from measured power where the "
                "evidence has it, otherwise from board power (TDP)."
                + (f" Method: {', '.join(methods)}." if methods else ""),
            ],
            tables=[table],
            after=after if table.rows else [],
        )
