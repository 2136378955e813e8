"""A GPU page's performance section: the headline value beside the all-benchmarks value.

The headline `value` of `relative_performance` weights each benchmark table by its class
(transformer and LLM tables 1, diffusion 0.5, CNN and RNN 0.1; model/benchmark_weights.py),
because the three workloads describe transformer work; `value_all_benchmarks` weights
every table alike (issue 22, step 4). Both are shown, so a reader sees when a GPU's
CNN/RNN results tell another story than its transformer results.
"""

import polars as pl

from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table, interval

NOTE = (
    "The first column weights each benchmark table by what the workload measures: "
    "transformer and LLM benchmarks (BERT, Llama 2 70B LoRA, Llama 3.1, GPT-J, Mixtral, "
    "Whisper) count fully, Stable Diffusion half, CNN and RNN benchmarks a tenth. The "
    "second weights every table alike. Both are relative to the reference GPU (1.0) with "
    "their 95 % interval; the rankings use the first."
)


def performance_table(rows: pl.DataFrame) -> Table:
    """One row per workload: both values, method, evidence, figures and interval text."""
    records = rows.sort("workload").to_dicts() if not rows.is_empty() else []
    return Table(
        (
            "workload",
            "relative performance, transformer-weighted (95 %)",
            "all benchmarks alike (95 %)",
            "method",
            "evidence",
            "figures",
            "interval",
        ),
        [
            (
                Cell(WORKLOAD_TITLES.get(r["workload"], r["workload"])),
                Cell(interval(r["value"], r["value_low"], r["value_high"])),
                Cell(
                    interval(
                        r.get("value_all_benchmarks"),
                        r.get("value_all_benchmarks_low"),
                        r.get("value_all_benchmarks_high"),
                    )
                ),
                Cell(r["method"] or ""),
                Cell(r["evidence"] or ""),
                Cell("" if r["n_results"] is None else str(r["n_results"])),
                Cell(r["interval_method"] or ""),
            )
            for r in records
        ],
        title="Relative performance",
        empty="No relative performance for this GPU.",
    )


def performance_section(rows: pl.DataFrame) -> Section:
    """The GPU page's "Performance" section."""
    return Section("performance", "Performance", [NOTE], [performance_table(rows)])
