"""LLM inference: the front page's section and a GPU page's batch-1 table.

The section leads with serving many users (content/serving.py), then one user on one's own
machine (batch 1: the cheapest tokens, the fastest system per budget).
"""

import dataclasses

import polars as pl

from model.verdicts import BUDGETS_USD
from reports.charts import FIGURES, llm_value_data
from reports.content.blocks import Cell, Section, Table, gpu_href, interval
from reports.content.mlcommons import NOTICE, mlperf_results, uses_mlperf
from reports.content.serving import FRONT_TARGET, PAGE, serving_summary_table
from reports.dataset import Dataset

LLM_BASES = {
    "buy_new": "buy new",
    "buy_used": "buy used",
    "rent_on_demand": "rent on-demand",
    "rent_spot": "rent spot",
}


def _system(gpu_id: str, n: int) -> str:
    return gpu_id if n == 1 else f"{n}x {gpu_id}"


def llm_cheapest_table(ds: Dataset, bits: int = 4) -> Table:
    """Per model size and basis: the cheapest $ per million tokens, with its speed."""
    cost = ds.llm_cost.filter((pl.col("bits") == bits) & (pl.col("rank") == 1))
    # The speed shown is the one the cost was computed from (llm_cost carries it: a
    # measured rate where one matches the configuration, else the modelled one).
    rows = []
    for size in sorted(set(cost["model_params_b"])):
        cells = [Cell(f"{size}B, {bits}-bit")]
        for basis in LLM_BASES:
            hit = cost.filter((pl.col("model_params_b") == size) & (pl.col("basis") == basis))
            if hit.is_empty():
                cells.append(Cell("–"))
                continue
            row = hit.row(0, named=True)
            speed = row.get("decode_tokens_per_s")
            source = row.get("rate_source") or "modelled"
            cells.append(
                Cell(
                    _system(row["gpu_id"], row["num_gpus"]),
                    href=gpu_href(row["gpu_id"]),
                    lines=(
                        f"${row['usd_per_million_tokens']:.2f} per 1M tokens "
                        f"({row['low']:.2f}–{row['high']:.2f})",
                        f"{speed:.0f} tokens/s ({source})" if speed is not None else "",
                        row["detail"],
                    ),
                )
            )
        rows.append(tuple(cells))
    return Table(
        ("model", *LLM_BASES.values()),
        rows,
        title=f"Cheapest per million generated tokens for one user, {bits}-bit weights "
        "(batch 1: not the cost of serving)",
        unit="USD per 1M tokens at batch 1 (95 % interval)",
        empty="No LLM configuration has a price.",
    )


def llm_budget_table(ds: Dataset, bits: int = 4) -> Table:
    """Per budget (system cost of ownership) and model size: the fastest system to buy."""
    data = llm_value_data(ds.llm_throughput, ds.data.perf, sizes=(8, 32, 70))
    sizes = sorted(set(data["model_params_b"]))
    rows = []
    for budget in BUDGETS_USD:
        cells = [Cell(f"${budget:,}")]
        for size in sizes:
            hit = data.filter((pl.col("model_params_b") == size) & (pl.col("cost") <= budget)).sort(
                "tps", "cost", descending=[True, False]
            )
            if hit.is_empty():
                cells.append(Cell("–"))
                continue
            row = hit.row(0, named=True)
            cells.append(
                Cell(
                    row["label"],
                    href=gpu_href(row["gpu_id"]),
                    lines=(f"{row['tps']:.0f} tokens/s", f"${row['cost']:,.0f} ({row['market']})"),
                )
            )
        rows.append(tuple(cells))
    return Table(
        ("budget", *(f"{size}B, {bits}-bit" for size in sizes)),
        rows,
        title="Fastest system for one user to buy within a budget (total cost of ownership)",
        unit="tokens/s at batch 1; system cost of ownership and its market",
        empty="No LLM speed has a price in this version.",
    )


LOCAL_HEADING = "One user, on your own machine"
LOCAL_NOTE = (
    'The two tables under "{heading}" are batch 1, one request at a time: this is not '
    "the cost of serving, where one system answers many users at once."
)


def llm_section(ds: Dataset) -> Section:
    """LLM inference: serving many users (summary), then one user on one's own machine."""
    params = ds.data.parameters
    serving = not ds.llm_serving_cost.is_empty()
    if ds.llm_throughput.is_empty() and not serving:
        return Section("llm", "LLM inference", ["No LLM results in this version."])
    local = [
        dataclasses.replace(llm_cheapest_table(ds), heading=LOCAL_HEADING),
        llm_budget_table(ds),
    ]
    results = mlperf_results(ds.llm_serving_benchmarks)
    attributed = serving and uses_mlperf(results, (ds.llm_serving_cost, "detail"))
    return Section(
        "llm",
        "LLM inference",
        [
            "Serving a model to many users: which GPUs, how many, and what a million output "
            "and input tokens cost to buy or rent at 10, 20 or 50 tokens/s per user, per "
            f"model, with published API prices beside them: [LLM serving]({PAGE}). The "
            f"summary below is at {FRONT_TARGET} tokens/s per user.",
            LOCAL_NOTE.format(heading=LOCAL_HEADING),
            "One user: which GPU runs an 8B, 32B or 70B model, how fast, and what a million "
            "generated tokens cost. Speeds are batch-1 generation with "
            f"{params.get('llm_context_tokens', 8192):,} tokens of context, modelled from "
            "memory bandwidth and fitted to published llama.cpp results (methodology §11); "
            "several GPUs split the layers. Buying spreads the system's total cost of "
            f"ownership over the tokens it makes in {params['years']:g} years at "
            f"{params['utilization']:.0%} use; renting pays the cheapest GPU-hour for the "
            "hours the tokens take.",
        ],
        tables=[serving_summary_table(ds), *local],
        figures=[]
        if ds.llm_throughput.is_empty()
        else [f for f in FIGURES if f.name == "llm_value"],
        after=[NOTICE] if attributed else [],
    )


def llm_gpu_table(rows: pl.DataFrame, context: int) -> Table:
    """A GPU's page: for each model size and bits, the fewest GPUs that hold it and speed."""
    modelled = rows.filter(
        pl.col("method").str.starts_with("modelled") & (pl.col("context_tokens") == context)
    )
    fits = (
        modelled.filter(pl.col("fits"))
        .sort("num_gpus")
        .group_by("model_params_b", "bits", maintain_order=True)
        .first()
    )
    # One pass each, then dictionary lookups: this runs once per GPU page (144 a night).
    first_fit = {(r["model_params_b"], r["bits"]): r for r in fits.iter_rows(named=True)}
    seen_median = {
        (size, bits): median
        for size, bits, median in rows.filter(
            pl.col("method").str.starts_with("measured") & (pl.col("num_gpus") == 1)
        )
        .group_by("model_params_b", "bits")
        .agg(pl.col("decode_tokens_per_s").median())
        .iter_rows()
    }
    out = []
    for size, bits in sorted(
        {(r[0], r[1]) for r in modelled.select("model_params_b", "bits").rows()}
    ):
        seen = seen_median.get((size, bits))
        seen_text = f"measured {seen:.0f}" if seen is not None else ""
        row = first_fit.get((size, bits))
        if row is None:
            out.append((Cell(f"{size}B"), Cell(f"{bits}"), Cell("does not fit 8 GPUs"),
                        Cell(""), Cell(seen_text)))  # fmt: skip
            continue
        out.append(
            (
                Cell(f"{size}B"),
                Cell(f"{bits}"),
                Cell(f"{row['num_gpus']} GPU{'s' if row['num_gpus'] > 1 else ''}",
                     lines=(f"{row['needed_gb']:.1f} of {row['available_gb']:.1f} GB",)),
                Cell(interval(row["decode_tokens_per_s"], row["decode_low"],
                              row["decode_high"])),
                Cell(seen_text),
            )
        )  # fmt: skip
    return Table(
        ("model", "bits", "fewest GPUs that hold it", "tokens/s (95 % interval)", "measured"),
        out,
        title=f"One user at {context:,} tokens of context (batch 1: not the cost of serving)",
        empty="No LLM configuration for this GPU.",
    )
