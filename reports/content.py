"""What each page says, as plain objects the templates lay out (issue 13, item 7).

The Markdown report (`templates/report.md.j2`) and the HTML pages (`templates/*.html.j2`)
render the same `Section`/`Table`/`Cell` objects built here from one prepared `Dataset`, so
the report and the site cannot disagree. Cells hold plain text: the HTML templates escape
it (autoescape), the Markdown template keeps pipes and newlines from breaking tables.
"""

import json
from dataclasses import dataclass, field

import polars as pl

from model.verdicts import BUDGETS_USD, OPTION_TITLES, SCALE, UNITS, rental_hours
from reports.charts import FIGURES, WORKLOAD_TITLES
from reports.dataset import Dataset
from reports.report import HEADLINE_WAYS, REPORT_VERSION, headline


@dataclass(frozen=True)
class Cell:
    """One table cell: text, an optional link (a site-relative path) and extra lines."""

    text: str
    href: str | None = None
    lines: tuple[str, ...] = ()
    strong: bool = False

    def __str__(self) -> str:
        return "; ".join((self.text, *self.lines)) if self.lines else self.text


@dataclass(frozen=True)
class Table:
    """A table with its headers; `heading` (h3) and `title` (bold) come before it."""

    headers: tuple[str, ...]
    rows: list[tuple[Cell, ...]]
    title: str = ""
    heading: str = ""
    unit: str = ""
    css: str = ""
    empty: str = ""


@dataclass(frozen=True)
class Figure:
    """A chart: `charts/<name>.svg`, its narrow variant and its Vega-Lite spec."""

    name: str
    title: str
    caption: str


@dataclass(frozen=True)
class Section:
    """A titled block: Markdown paragraphs (inline only), tables, figures, code."""

    id: str
    title: str
    paragraphs: list[str] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    after: list[str] = field(default_factory=list)
    code: str = ""


def money(value: float | None) -> str:
    """'$2,269' (whole dollars), '' for NULL."""
    return "" if value is None else f"${value:,.0f}"


def number(value: float | None, digits: int = 3) -> str:
    """A number rounded as polars' round() shows it ('' for NULL)."""
    return "" if value is None else str(round(value, digits))


def interval(value: float | None, low: float | None, high: float | None, scale=1.0) -> str:
    """'0.2 (0.161–0.244)': a point estimate with its 95 % interval, when there is one."""
    if value is None:
        return ""
    shown = number(value * scale)
    if low is None or high is None:
        return shown
    return f"{shown} ({number(low * scale)}–{number(high * scale)})"


def percent(value: float | None) -> str:
    """'45 %' ('' for NULL)."""
    return "" if value is None else f"{value * 100:.0f} %"


def gpu_href(gpu_id: str | None) -> str | None:
    """The GPU's page, relative to a version's root folder."""
    return None if gpu_id is None else f"gpu/{gpu_id}.html"


def frame_table(frame: pl.DataFrame, headers: dict[str, str], **kwargs) -> Table:
    """A Table of the given columns (values shown as `str()` shows them; NULL as '')."""
    rows = [
        tuple(Cell("" if v is None else str(v)) for v in row)
        for row in frame.select(list(headers)).iter_rows()
    ]
    return Table(tuple(headers.values()), rows, **kwargs)


# --- the verdict -------------------------------------------------------------------------


def _limit_label(kind: str, limit: float) -> str:
    return f"≤ ${limit:,.0f}" if kind == "budget" else f"≥ {limit:.0f} GB"


def verdict_cell(row: dict) -> Cell:
    """One verdict: GPU (and system size), value with interval, P(best), price, why."""
    if row["gpu_id"] is None:
        return Cell("—", lines=(row["why"],))
    option = row["option"]
    buy = option.startswith("buy")
    label = row["gpu_id"]
    if buy and (row["system_gpus"] or 1) > 1:
        label = f"{row['system_gpus']}× {label}"
    value = interval(
        row["perf_per_dollar"],
        row["perf_per_dollar_low"],
        row["perf_per_dollar_high"],
        SCALE[option],
    )
    estimated = " (estimated perf.)" if row["method"] == "estimated" else ""
    first = f"{value}{estimated}, P(best) {percent(row['p_best'])}"
    if buy:
        price = (
            f"{money(row['price_usd'])} {row['market']}, "
            + (
                f"nowcast from a price {row['age_days']} d old"
                if row["price_method"] == "nowcast"
                else f"observed {row['age_days']} d ago"
            )
            + f"; total {money(row['total_cost_usd'])}"
        )
    else:
        count = row["gpu_count"] or 1
        instance = f"{count}-GPU instance" if count > 1 else "1 GPU"
        price = (
            f"${row['usd_per_gpu_hour']:.2f}/GPU-h at {row['provider']} ({instance}), offer "
            f"{row['age_days']} d old"
        )
    return Cell(label, gpu_href(row["gpu_id"]), (first, price, row["why"]), strong=True)


def verdict_tables(ds: Dataset, workload: str) -> list[Table]:
    """Buy and rent verdicts for one workload: rows = budgets then memory tiers."""
    rows = ds.verdicts.filter(pl.col("workload") == workload)
    hours = rental_hours(ds.data.parameters)
    tables = []
    for group, options in (
        ("buy", ("buy_new", "buy_used")),
        ("rent", ("rent_on_demand", "rent_spot")),
    ):
        body: list[tuple[Cell, ...]] = []
        for kind in ("budget", "memory"):
            part = rows.filter(pl.col("kind") == kind)
            for limit in sorted(set(part["limit"])):
                cells = {
                    r["option"]: verdict_cell(r)
                    for r in part.filter(pl.col("limit") == limit).iter_rows(named=True)
                }
                body.append(
                    (
                        Cell(_limit_label(kind, limit), strong=True),
                        *(cells.get(o, Cell("—")) for o in options),
                    )
                )
        if group == "buy":
            title = (
                f"Buy: {UNITS['buy']} (GPUs + host + {_years(ds)} of electricity); "
                "budgets are that total cost"
            )
        else:
            title = (
                f"Rent: {UNITS['rent']}; budgets are what {hours:,.0f} h "
                f"({_utilisation(ds)} of {_years(ds)}) of the instance cost"
            )
        tables.append(
            Table(
                ("budget or memory", *(OPTION_TITLES[o] for o in options)),
                body,
                title=title,
                heading=WORKLOAD_TITLES[workload] if group == "buy" else "",
                unit=UNITS[group],
                css="verdict",
            )
        )
    return tables


def _years(ds: Dataset) -> str:
    return f"{ds.data.parameters['years']:g} years"


def _utilisation(ds: Dataset) -> str:
    return f"{ds.data.parameters['utilization']:.0%} use"


def short_answer(ds: Dataset) -> list[str]:
    """One line per workload: the best of each way to get a GPU (the headline's #1)."""
    lines = []
    for workload, ways in headline(ds.data, k=1).items():
        picks = []
        for way, top in ways.items():
            title = OPTION_TITLES[way]
            picks.append(f"{title} **{top['gpu_id'][0]}**" if top.height else f"{title}: none")
        lines.append(f"{WORKLOAD_TITLES[workload]}: " + ", ".join(picks))
    return lines


def verdict_section(ds: Dataset) -> Section:
    """The answer: verdict tables per workload, by budget and by memory."""
    p = ds.data.parameters
    host = p["host_cost_usd"]["1"] * p.get("host_cost_scale", 1.0)
    tables = [t for w in WORKLOAD_TITLES for t in verdict_tables(ds, w)]
    return Section(
        "verdict",
        "What to get, by budget and by memory",
        [
            "Each cell is the best choice for that budget or memory tier, by performance "
            f"per dollar (relative to **{ds.data.reference_gpu} = 1.0**). Buying counts "
            f"the whole system over {_years(ds)}: GPUs, host (${host:,.0f} for one GPU) and "
            f"electricity at ${p['electricity_usd_per_kwh']:g}/kWh and "
            f"{p['utilization']:.0%} utilisation; a budget may buy a 2- or 4-GPU system. "
            "Renting counts the cheapest offer of each GPU. In brackets the 95 % interval; "
            "*P(best)* is the share of bootstrap replicates in which the pick is the best of "
            "what fits; each price says how it was obtained (`observed` within "
            f"{p.get('price_freshness_days', 180)} days, else `nowcast` from its last "
            "observation) and how old it is. Memory tiers hold 1-GPU systems with at least "
            "that much memory.",
        ],
        tables,
    )


# --- what changed --------------------------------------------------------------------------


def changes_section(ds: Dataset) -> Section:
    """What changed since the previous published version."""
    changes = ds.changes
    if changes is None:
        return Section(
            "changes",
            "What changed since the previous version",
            ["This is the first published version: there is nothing to compare with yet."],
        )
    section = Section("changes", f"What changed since {changes.previous_version}")
    order = {w: i for i, w in enumerate(WORKLOAD_TITLES)}

    def in_order(frame: pl.DataFrame, *by: str) -> pl.DataFrame:
        key = pl.col("workload").replace_strict(order, default=len(order), return_dtype=pl.Int32)
        return frame.sort(key, *by, nulls_last=True)

    if changes.missing:
        section.paragraphs.append(
            f"Version {changes.previous_version} kept no {', '.join(changes.missing)} "
            "table(s); those parts cannot be compared."
        )
    if changes.empty:
        section.paragraphs.append("Nothing changed beyond the noise.")
        return section
    if not changes.verdicts.is_empty():
        rows = in_order(changes.verdicts, "kind", "limit", "option").with_columns(
            what=pl.format(
                "{}, {} {}",
                pl.col("workload").replace_strict(WORKLOAD_TITLES, default=pl.col("workload")),
                pl.col("option").replace_strict(OPTION_TITLES, default=pl.col("option")),
                pl.struct("kind", "limit").map_elements(
                    lambda s: _limit_label(s["kind"], s["limit"]), return_dtype=pl.Utf8
                ),
            )
        )
        section.tables.append(
            frame_table(
                rows,
                {"what": "verdict", "before": "before", "after": "now"},
                title="Verdicts that changed",
            )
        )
    if not changes.ranks.is_empty():
        rows = in_order(changes.ranks, "market", "rank_after").with_columns(
            pl.col("workload").replace_strict(WORKLOAD_TITLES, default=pl.col("workload")),
            before=pl.col("rank_before").cast(pl.Utf8).fill_null("unpriced"),
            now=pl.col("rank_after").cast(pl.Utf8).fill_null("unpriced"),
            moved=pl.when(pl.col("move") > 0)
            .then(pl.format("up {}", pl.col("move")))
            .when(pl.col("move") < 0)
            .then(pl.format("down {}", -pl.col("move")))
            .otherwise(pl.lit("")),
        )
        section.tables.append(
            frame_table(
                rows,
                {
                    "workload": "workload",
                    "market": "market",
                    "gpu_id": "GPU",
                    "before": "rank before",
                    "now": "rank now",
                    "moved": "move",
                },
                title=(
                    "Rank moves (1-GPU systems in the top 10 of either version: two places "
                    "or more, or into or out of the top 3 or top 10)"
                ),
            )
        )
    if not changes.prices.is_empty():
        rows = changes.prices.with_columns(
            before=_money_expr("before"),
            now=_money_expr("after"),
            change=pl.format("{} %", pl.col("change_pct").round(1)),
            noise=pl.format("± {} %", pl.col("noise_pct").round(1)),
            method=pl.format("{} → {}", pl.col("method_before"), pl.col("method_after")),
        )
        section.tables.append(
            frame_table(
                rows,
                {
                    "gpu_id": "GPU",
                    "market": "market",
                    "before": "before",
                    "now": "now",
                    "change": "change",
                    "noise": "noise",
                    "method": "price method",
                },
                title="Prices that moved beyond their noise (5 % or the two intervals' spread)",
            )
        )
    if not changes.gpus.is_empty():
        section.tables.append(
            frame_table(changes.gpus, {"gpu_id": "GPU", "change": "change"}, title="GPUs")
        )
    if not changes.stale.is_empty():
        section.tables.append(
            frame_table(
                changes.stale,
                {
                    "input": "input",
                    "source": "source",
                    "status_before": "was",
                    "status": "now",
                    "detail": "why",
                },
                title="Inputs that went stale or failed",
            )
        )
    return section


def _money_expr(column: str) -> pl.Expr:
    return pl.col(column).map_elements(money, return_dtype=pl.Utf8)


# --- the report's tables (also the site's "all tables" page) ------------------------------


def _headline_table(top: pl.DataFrame, table: str, **kwargs) -> Table:
    """One headline table: buying (total cost of ownership) or renting (per GPU-hour)."""
    ranked = top.with_columns(rank=pl.int_range(1, pl.len() + 1))
    ppd = pl.struct("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high")
    if table == "cloud":
        return frame_table(
            ranked.with_columns(
                usd=pl.col("usd_per_gpu_hour").round(3),
                ppd=ppd.map_elements(lambda s: interval(*s.values()), return_dtype=pl.Utf8),
                offer_day=pl.col("offer_day").cast(pl.Utf8),
            ),
            {
                "rank": "#",
                "gpu_id": "GPU",
                "provider": "provider",
                "usd": "$/GPU-hour",
                "method": "perf method",
                "ppd": "ref-GPU-hours per $ (95 % interval)",
                "offer_day": "price as of",
            },
            **kwargs,
        )
    return frame_table(
        ranked.with_columns(
            price=_money_expr("price_usd"),
            total=_money_expr("total_cost_usd"),
            rel=pl.col("relative_performance").round(2),
            ppd=ppd.map_elements(lambda s: interval(*s.values(), 1000.0), return_dtype=pl.Utf8),
            p3=pl.format("{}%", (pl.col("p_top3") * 100).round(0).cast(pl.Int64)),
            price_seen=pl.format(
                "{}, {}", pl.col("price_method").fill_null("observed"), pl.col("price_day")
            ),
        ),
        {
            "rank": "#",
            "gpu_id": "GPU",
            "price": "GPU price",
            "total": "total cost",
            "rel": "rel. perf",
            "method": "perf method",
            "ppd": "perf per $1,000 (95 % interval)",
            "p3": "P(top 3)",
            "price_seen": "price: method, last seen",
        },
        **kwargs,
    )


def headline_section(ds: Dataset) -> Section:
    """The three best per workload and way to get a GPU (perf_per_dollar, cloud tables)."""
    tables = []
    for workload, ways in headline(ds.data).items():
        for i, (way, top) in enumerate(ways.items()):
            kwargs = {
                "title": HEADLINE_WAYS[way][3],
                "heading": WORKLOAD_TITLES[workload] if i == 0 else "",
                "empty": "No priced GPU has a value for this workload.",
            }
            if top.is_empty():
                tables.append(Table((), [], **kwargs))
            else:
                tables.append(_headline_table(top, HEADLINE_WAYS[way][0], **kwargs))
    return Section(
        "best",
        "Best performance per dollar",
        [
            "For each workload and each way to get a GPU, the three best by performance per "
            "dollar, read from the `perf_per_dollar` (1-GPU systems; SXM/OAM modules come "
            "only in 4- and 8-GPU servers) and `cloud_perf_per_dollar` tables. Prices of "
            "different markets are never averaged here.",
        ],
        tables,
        after=[
            "*P(top 3)*: the share of bootstrap replicates (prices, benchmarks, scaling) in "
            "which the GPU is among the 3 best of its workload at the same price basis."
        ],
    )


def freshness_section(ds: Dataset) -> Section:
    """How old each input is, with its status (ok, stale, failed) and why."""
    data = ds.data
    return Section(
        "freshness",
        "How old each input is",
        [
            f"Ages in days on {data.today} (the build date). The newest input dates this "
            f"run: {data.run_date}."
        ],
        [
            frame_table(
                data.freshness.with_columns(pl.col("as_of").cast(pl.Utf8)),
                {
                    "input": "input",
                    "source": "source",
                    "rows": "rows",
                    "as_of": "as of",
                    "age_days": "age (days)",
                    "status": "status",
                    "detail": "why",
                },
            )
        ],
    )


def retail_section(ds: Dataset) -> Section:
    """How retail observations were used: page outcomes, and kept/dropped by reason."""
    data, params = ds.data, ds.data.parameters
    section = Section("retail", "Retail observations: used and left out")
    if data.pages.height:
        section.paragraphs.append(
            "Archived retail pages by outcome (a captcha or block page is counted, never "
            "parsed as an empty result):"
        )
        section.tables.append(
            frame_table(
                data.pages,
                {"source": "source", "outcome": "outcome", "pages": "pages", "records": "records"},
            )
        )
    if data.drops.height:
        wide = data.drops.pivot(on="reason", index="source", values="n").fill_null(0)
        reasons = [c for c in wide.columns if c != "source"]
        reasons = (
            ["used"] + sorted(r for r in reasons if r != "used")
            if "used" in reasons
            else sorted(reasons)
        )
        section.tables.append(
            frame_table(
                wide.select("source", *reasons),
                {"source": "source", **{r: r for r in reasons}},
                title=(
                    "Observations per source: `used` feed the daily median; the others were "
                    "left out for the reason named (`outlier`: beyond "
                    f"{params['price_mad_k']:g} scaled MADs of the day's median; "
                    "`unmatched:*`: the title is not one catalog GPU)."
                ),
            )
        )
    if data.price_counts.height:
        section.tables.append(
            frame_table(
                data.price_counts,
                {
                    "market": "market",
                    "gpus": "GPUs priced",
                    "kept": "observations used",
                    "dropped": "outliers",
                },
            )
        )
    return section


def relative_section(ds: Dataset) -> Section:
    """Relative performance per GPU and workload."""
    rel = ds.data.relative
    wide = (
        rel.pivot(on="workload", index="gpu_id", values="value")
        .join(
            rel.filter(pl.col("workload") == "training_16bit").select("gpu_id", "method"),
            on="gpu_id",
        )
        .sort("training_16bit", descending=True)
        .with_columns(pl.col(w).round(2) for w in WORKLOAD_TITLES)
    )
    return Section(
        "relative",
        "Relative performance",
        tables=[
            frame_table(
                wide,
                {
                    "gpu_id": "GPU",
                    "training_16bit": "16-bit training",
                    "inference_16bit": "16-bit inference",
                    "inference_8bit": "8-bit inference",
                    "method": "16-bit method",
                },
            )
        ],
        after=[
            "8-bit inference is estimated from 16-bit inference: FP8 tensor throughput on "
            "Ada, Hopper and Blackwell, the 16-bit speed on older GPUs (Dettmers)."
        ],
    )


def unpriced_section(ds: Dataset) -> Section:
    """GPUs without a price today, and why."""
    data, params = ds.data, ds.data.parameters
    unpriced = sorted(set(data.gpus["gpu_id"]) - set(data.perf["gpu_id"]))
    max_age = params.get("price_max_age_days", 730)
    return Section(
        "unpriced",
        "GPUs without a price",
        [
            f"Prices observed in the last {params.get('price_freshness_days', 180)} days are "
            f"used as observed; older ones are nowcast to {data.run_date} with their "
            "segment's drift (`price_method = nowcast`, wider intervals); a GPU last seen on "
            f"sale over {max_age} days ago, or never, has no price today:",
            ", ".join(unpriced) if unpriced else "Every catalog GPU has a price.",
        ],
    )


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
    rates = ds.llm_throughput.select(
        "gpu_id", "model_params_b", "bits", "num_gpus", "context_tokens", "decode_tokens_per_s"
    ).filter(pl.col("context_tokens") == ds.data.parameters.get("llm_context_tokens", 8192))
    rows = []
    for size in sorted(set(cost["model_params_b"])):
        cells = [Cell(f"{size}B, {bits}-bit")]
        for basis in LLM_BASES:
            hit = cost.filter((pl.col("model_params_b") == size) & (pl.col("basis") == basis))
            if hit.is_empty():
                cells.append(Cell("–"))
                continue
            row = hit.row(0, named=True)
            speed = rates.filter(
                (pl.col("gpu_id") == row["gpu_id"])
                & (pl.col("model_params_b") == size)
                & (pl.col("bits") == bits)
                & (pl.col("num_gpus") == row["num_gpus"])
            )["decode_tokens_per_s"]
            cells.append(
                Cell(
                    _system(row["gpu_id"], row["num_gpus"]),
                    href=gpu_href(row["gpu_id"]),
                    lines=(
                        f"${row['usd_per_million_tokens']:.2f} per 1M tokens "
                        f"({row['low']:.2f}–{row['high']:.2f})",
                        f"{speed[0]:.0f} tokens/s" if speed.len() else "",
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
    from reports.charts import llm_value_data

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
    measured = rows.filter(pl.col("method").str.starts_with("measured"))
    out = []
    for size, bits in sorted(
        {(r[0], r[1]) for r in modelled.select("model_params_b", "bits").rows()}
    ):
        hit = fits.filter((pl.col("model_params_b") == size) & (pl.col("bits") == bits))
        seen = measured.filter((pl.col("model_params_b") == size) & (pl.col("bits") == bits)
                               & (pl.col("num_gpus") == 1))  # fmt: skip
        seen_text = f"measured {seen['decode_tokens_per_s'].median():.0f}" if seen.height else ""
        if hit.is_empty():
            out.append((Cell(f"{size}B"), Cell(f"{bits}"), Cell("does not fit 8 GPUs"),
                        Cell(""), Cell(seen_text)))  # fmt: skip
            continue
        row = hit.row(0, named=True)
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


def renting_section(ds: Dataset, at: float = 0.15) -> Section:
    """Break-even days of buying versus renting, cheapest offer per GPU and price type."""
    cloud = ds.data.cloud.filter((pl.col("utilization") - at).abs() < 1e-9)
    section = Section("renting", "Renting versus buying")
    if cloud.is_empty():
        section.paragraphs.append("No cloud offer matches a priced GPU.")
        return section
    cheapest = (
        cloud.sort("usd_per_gpu_hour")
        .group_by("gpu_id", "price_type", maintain_order=True)
        .first()
        .sort("gpu_id", "price_type")
        .with_columns(
            pl.col("usd_per_gpu_hour").round(2),
            buy=_money_expr("buy_cost_usd"),
            days=pl.col("break_even_days").round(0).cast(pl.Int64).cast(pl.Utf8).fill_null("never"),
        )
    )
    section.paragraphs.append(
        "Cheapest offer per GPU and price type, and the days after which a 1-GPU system is "
        f"cheaper than renting at {at:.0%} utilisation (the buy-versus-rent chart draws "
        "these lines over time):"
    )
    section.tables.append(
        frame_table(
            cheapest,
            {
                "gpu_id": "GPU",
                "price_type": "price type",
                "provider": "provider",
                "instance_type": "instance",
                "usd_per_gpu_hour": "$/GPU-hour",
                "buy": "buy cost",
                "days": "break-even days",
            },
        )
    )
    return section


def cloud_section(ds: Dataset, k: int = 5) -> Section:
    """The k best rented GPUs per workload and price type (never averaged across types)."""
    data = ds.data
    section = Section(
        "rented",
        "Performance per rented dollar",
        [
            "Reference-GPU-hours per dollar at each provider's cheapest offer of that price "
            "type (95 % interval from the relative-performance interval). Spot capacity can "
            "be reclaimed at short notice."
        ],
    )
    if data.cloud_perf.is_empty():
        section.paragraphs.append("No cloud offer matches a GPU with a performance value.")
        return section
    ppd = pl.struct("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high")
    for workload, title in WORKLOAD_TITLES.items():
        for price_type in ("on_demand", "spot"):
            top = (
                data.cloud_perf.filter(
                    (pl.col("workload") == workload) & (pl.col("price_type") == price_type)
                )
                .sort("perf_per_dollar", descending=True)
                .head(k)
                .with_columns(
                    ppd=ppd.map_elements(lambda s: interval(*s.values()), return_dtype=pl.Utf8),
                    usd=pl.col("usd_per_gpu_hour").round(3),
                    offer_day=pl.col("offer_day").cast(pl.Utf8),
                )
            )
            if top.is_empty():
                continue
            section.tables.append(
                frame_table(
                    top,
                    {
                        "gpu_id": "GPU",
                        "provider": "provider",
                        "instance_type": "instance",
                        "usd": "$/GPU-hour",
                        "ppd": "ref-GPU-hours per $",
                        "offer_day": "price as of",
                    },
                    title=f"{title}, {price_type.replace('_', '-')}",
                )
            )
    return section


def method_section(ds: Dataset) -> Section:
    """The method in brief and the run's parameters."""
    params = ds.data.parameters
    return Section(
        "method",
        "Method in brief",
        [
            "Benchmarks are debiased to a reference batch size per model and to per-GPU "
            "throughput (Dettmers' constants, or constants fitted from the data where their "
            "95 % interval is tight enough: this run used "
            f"`{params.get('constants', 'dettmers')}`), then combined into one relative "
            "performance per GPU and workload by a two-way log-linear fit, the geometric "
            "mean over models. GPUs without benchmarks are estimated from their specs by an "
            "estimator validated leave-one-GPU-out (grey in the charts). Intervals come from "
            "a seeded bootstrap over price observations, benchmark fits and scaling "
            "efficiency. The [methodology page](methodology.html) shows the fitted "
            "constants, every validation figure, the spec conflicts and the flagged "
            "benchmark rows of this run; docs/methodology.md explains the method.",
            "Parameters of this run:",
        ],
        code=json.dumps(params, indent=2, sort_keys=True),
    )


def charts_section() -> Section:
    """The charts, in reading order (the lead chart is shown with the answer)."""
    return Section(
        "charts",
        "Charts",
        figures=[f for f in FIGURES if f.name not in ("perf_per_dollar", "llm_value")],
    )


def intro(ds: Dataset) -> str:
    """The report's opening paragraph."""
    params = ds.data.parameters
    return (
        "Which GPU gives the most deep-learning performance per dollar, to buy or to rent. "
        f"Relative performance is normalised to **{ds.data.reference_gpu} = 1.0**. "
        f"Total cost = GPU price + host system (${params['host_cost_usd']['1']:,.0f} for one "
        f"GPU) + {params['years']:g} years of electricity at "
        f"${params['electricity_usd_per_kwh']:g}/kWh and {params['utilization']:.0%} "
        f"utilisation. Report version {REPORT_VERSION}."
    )


def detail_sections(ds: Dataset) -> list[Section]:
    """The report's detailed tables (the site's "all tables" page)."""
    return [
        retail_section(ds),
        relative_section(ds),
        unpriced_section(ds),
        renting_section(ds),
        cloud_section(ds),
        method_section(ds),
    ]


def report_sections(ds: Dataset) -> list[Section]:
    """Every section of the Markdown report, in order."""
    lead = next(f for f in FIGURES if f.name == "perf_per_dollar")
    charts = charts_section()
    return [
        verdict_section(ds),
        changes_section(ds),
        headline_section(ds),
        llm_section(ds),
        Section("charts", "Charts", figures=[lead, *charts.figures]),
        freshness_section(ds),
        *detail_sections(ds),
    ]
