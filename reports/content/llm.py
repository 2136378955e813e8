"""LLM inference: the cheapest tokens, the fastest system per budget, and a GPU's LLM table."""

import polars as pl

from model.verdicts import BUDGETS_USD
from reports.charts import FIGURES, llm_value_data
from reports.content.blocks import Cell, Section, Table, gpu_href, interval
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
        title=f"Cheapest per million generated tokens, {bits}-bit weights",
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
        title="Fastest system to buy within a budget (total cost of ownership)",
        unit="tokens/s at batch 1; system cost of ownership and its market",
    )


def llm_section(ds: Dataset) -> Section:
    """LLM inference: what to buy or rent to run a model of a given size."""
    params = ds.data.parameters
    if ds.llm_throughput.is_empty():
        return Section("llm", "LLM inference", ["No LLM results in this version."])
    return Section(
        "llm",
        "LLM inference",
        [
            "Which GPU runs an 8B, 32B or 70B model, how fast, and what a million generated "
            f"tokens cost. Speeds are batch-1 generation (one user) with "
            f"{params.get('llm_context_tokens', 8192):,} tokens of context, modelled from "
            "memory bandwidth and fitted to published llama.cpp results (methodology §11); "
            "several GPUs split the layers. Buying spreads the system's total cost of "
            f"ownership over the tokens it makes in {params['years']:g} years at "
            f"{params['utilization']:.0%} use; renting pays the cheapest GPU-hour for the "
            "hours the tokens take.",
        ],
        tables=[llm_cheapest_table(ds), llm_budget_table(ds)],
        figures=[f for f in FIGURES if f.name == "llm_value"],
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
        title=f"LLM inference at {context:,} tokens of context (batch 1)",
        empty="No LLM configuration for this GPU.",
    )
