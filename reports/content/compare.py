"""Compare pages (issue 25, item 4): `compare/<a>-vs-<b>.html` and `compare/index.html`.

Each page sets two GPUs side by side from the version's own tables, nothing typed by hand:
specs (gpus), relative performance per workload with its 95 % interval and evidence
(relative_performance), prices with their evidence (current_prices), performance per dollar
of total cost of ownership (perf_per_dollar), batch-1 LLM fit and speed (llm_throughput) and
serving cost at 20 tokens/s per user (llm_serving_cost), and a one-line verdict computed
from them. Which pairs get a page is `compare_pairs` (a rule plus one curated list).

A ratio's 95 % interval treats the two GPUs' estimates as independent log-normals with the
spread their own intervals imply, the approximation the model's bootstrap makes
(model/uncertainty.py `performance_replicates`): log-SDs add in quadrature. Estimates that
share the reference GPU or one spec fit are correlated, so the true interval of a ratio
can be narrower than shown.
"""

import datetime as dt
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import polars as pl

from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table, gpu_href, interval, money
from reports.content.compare_pairs import GROUPS, Pair, compare_pairs
from reports.content.prices import evidence_label
from reports.content.serving import BASES, FRONT_TARGET, MODEL_ORDER, cost_cell
from reports.dataset import Dataset
from reports.site import inside

Z95 = NormalDist().inv_cdf(0.975)
VERDICT_WORKLOAD = "training_16bit"  # the site's headline workload (first in every table)
MARKETS = ("new", "used")  # the "mean" market is not shown on the site (issue 25, item 6)
SAME_SPEED = 1.05  # within 5 %: "about as fast", not "1.0x faster"
SPECS = (
    ("memory_gb", "memory", "GB"),
    ("memory_bandwidth_gbs", "memory bandwidth", "GB/s"),
    ("fp16_tensor_tflops", "FP16 tensor (dense)", "TFLOPS"),
    ("fp8_tensor_tflops", "FP8 tensor (dense)", "TFLOPS"),
    ("int8_tensor_tops", "INT8 tensor (dense)", "TOPS"),
    ("tdp_w", "board power (TDP)", "W"),
    ("release_date", "released", ""),
    ("launch_price_usd", "launch price", "USD"),
)
Estimate = tuple[float | None, float | None, float | None]  # value, 95 % low, 95 % high


# --- ratios and the verdict ---------------------------------------------------------------


def _log_sd(low: float | None, high: float | None) -> float | None:
    if low is None or high is None or low <= 0 or high < low:
        return None
    return (math.log(high) - math.log(low)) / (2 * Z95)


def ratio(top: Estimate, bottom: Estimate) -> Estimate | None:
    """Top / bottom with a 95 % interval (see the module docstring); None without both."""
    if top[0] is None or bottom[0] is None or top[0] <= 0 or bottom[0] <= 0:
        return None
    r = top[0] / bottom[0]
    s1, s2 = _log_sd(top[1], top[2]), _log_sd(bottom[1], bottom[2])
    if s1 is None or s2 is None:
        return (r, None, None)
    spread = Z95 * math.hypot(s1, s2)
    return (r, r * math.exp(-spread), r * math.exp(spread))


def times(x: float) -> str:
    """'1.6×' (one decimal below 10, none above)."""
    return f"{x:.1f}×" if x < 10 else f"{x:.0f}×"


def times_interval(r: Estimate) -> str:
    """'1.6× (1.3–2.0×)', or '1.6×' without an interval."""
    if r[0] is None:
        return ""
    if r[1] is None or r[2] is None:
        return times(r[0])
    return f"{times(r[0])} ({times(r[1])[:-1]}–{times(r[2])})"


def _inverse(r: Estimate) -> Estimate:
    value, low, high = r
    return (
        None if value is None else 1 / value,
        None if high is None else 1 / high,
        None if low is None else 1 / low,
    )


# --- one version's facts, by GPU ----------------------------------------------------------


def _rows(frame: pl.DataFrame, *keys: str) -> dict[str, dict[tuple, dict]]:
    """gpu_id -> (key values) -> row."""
    out: dict[str, dict[tuple, dict]] = {}
    for r in frame.iter_rows(named=True):
        out.setdefault(r["gpu_id"], {})[tuple(r[k] for k in keys)] = r
    return out


def _split(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    if frame.is_empty():
        return {}
    return {k[0]: v for k, v in frame.partition_by("gpu_id", as_dict=True).items()}


@dataclass(frozen=True)
class Facts:
    """What every compare page reads, split by GPU once per version."""

    run_date: dt.date
    gpus: dict[str, dict]
    relative: dict[str, dict[tuple, dict]]  # (workload,)
    perf: dict[str, dict[tuple, dict]]  # (workload, market): each GPU's smallest system
    prices: dict[str, dict[tuple, dict]]  # (market,)
    llm: dict[str, pl.DataFrame]
    serving: dict[str, pl.DataFrame]
    context: int
    max_age_days: int

    @classmethod
    def of(cls, ds: Dataset) -> "Facts":
        """Read the version's tables (only the new and used markets)."""
        perf = ds.data.perf.filter(pl.col("market").is_in(MARKETS))
        smallest = perf.group_by("gpu_id", "market").agg(_min=pl.col("system_gpus").min())
        perf = perf.join(smallest, on=["gpu_id", "market"]).filter(
            pl.col("system_gpus") == pl.col("_min")
        )
        cost = ds.llm_serving_cost
        if not cost.is_empty():
            cost = cost.filter(pl.col("min_tokens_per_s_per_user") == FRONT_TARGET)
        params = ds.data.parameters
        return cls(
            run_date=ds.run_date,
            gpus={r["gpu_id"]: r for r in ds.data.gpus.iter_rows(named=True)},
            relative=_rows(ds.data.relative, "workload"),
            perf=_rows(perf, "workload", "market"),
            prices=_rows(ds.current_prices.filter(pl.col("market").is_in(MARKETS)), "market"),
            llm=_split(ds.llm_throughput),
            serving=_split(cost),
            context=int(params.get("llm_context_tokens", 8192)),
            max_age_days=int(params.get("price_max_age_days", 730)),
        )

    def performance(self, gpu_id: str, workload: str) -> Estimate | None:
        """Relative performance with its interval, or None."""
        r = self.relative.get(gpu_id, {}).get((workload,))
        return None if r is None else (r["value"], r["value_low"], r["value_high"])

    def value_row(self, gpu_id: str, workload: str, market: str | None) -> dict | None:
        """The perf-per-dollar row at `market`, or at the GPU's best-value market (None)."""
        rows = self.perf.get(gpu_id, {})
        if market is not None:
            return rows.get((workload, market))
        found = [rows[(workload, m)] for m in MARKETS if (workload, m) in rows]
        return max(found, key=lambda r: r["perf_per_dollar"]) if found else None

    def markets(self, pair: Pair, workload: str) -> tuple[str | None, str | None]:
        """The markets the verdict compares: the pair's own, else one both are priced in.

        Unless the pair names its markets (a used card against a new one), like is compared
        with like: new against new where both have a new price, else used against used;
        with no market in common, each GPU at its best-value market.
        """
        if pair.a_market or pair.b_market:
            return pair.a_market, pair.b_market
        for market in MARKETS:
            if all((workload, market) in self.perf.get(g, {}) for g in (pair.a, pair.b)):
                return market, market
        return None, None


def _value(row: dict) -> Estimate:
    return (row["perf_per_dollar"], row["perf_per_dollar_low"], row["perf_per_dollar_high"])


def _speed_clause(a: str, b: str, speed: Estimate, title: str) -> tuple[str, str]:
    """(the faster GPU, 'is 1.7× (1.5–1.9×) faster at 16-bit training')."""
    if speed[0] >= 1:
        faster, factor = b, speed
    else:
        faster, factor = a, _inverse(speed)
    if factor[0] < SAME_SPEED:
        return (
            "",
            f"{a} and {b} are within 5 % of each other at {title} ({b} ÷ {a} = {speed[0]:.2f})",
        )
    return faster, f"is {times_interval(factor)} faster at {title}"


def verdict(pair: Pair, facts: Facts, workload: str = VERDICT_WORKLOAD) -> str:
    """The page's one line, computed from the tables it shows (never written by hand)."""
    title = WORKLOAD_TITLES[workload]
    pa, pb = facts.performance(pair.a, workload), facts.performance(pair.b, workload)
    missing = [g for g, p in ((pair.a, pa), (pair.b, pb)) if p is None]
    if missing:
        return f"No {title} performance for {' or '.join(missing)} in this version: no verdict."
    speed = ratio(pb, pa)
    faster, clause = _speed_clause(pair.a, pair.b, speed, title)
    ma, mb = facts.markets(pair, workload)
    va, vb = facts.value_row(pair.a, workload, ma), facts.value_row(pair.b, workload, mb)
    if va is None or vb is None:
        unpriced = [g for g, v in ((pair.a, va), (pair.b, vb)) if v is None]
        market = {m for g, m, v in ((pair.a, ma, va), (pair.b, mb, vb)) if v is None}
        lead = f"The {faster} {clause}" if faster else clause
        return (
            f"{lead}; no {market.pop() or 'new or used'} price observed for "
            f"{' or '.join(unpriced)}, so no per-dollar verdict."
            if len(market) == 1
            else f"{lead}; no price observed for {pair.a} or {pair.b}, so no per-dollar verdict."
        )
    value_text, better = _value_clause(va, vb, title)
    if faster and faster == better:
        return f"{value_text} and {clause}."
    return f"{value_text}; {_tail(faster, clause)}."


def _tail(faster: str, clause: str) -> str:
    return f"the {faster} {clause}" if faster else clause


def _value_clause(va: dict, vb: dict, title: str) -> tuple[str, str]:
    """('A used rtx-3090 gives 1.1× (0.9–1.3×) the ... per dollar of a new ...', the better).

    The better GPU is '' when the two are within 5 % of each other.
    """
    value = ratio(_value(va), _value(vb))
    a, b = f"{va['market']} {va['gpu_id']}", f"{vb['market']} {vb['gpu_id']}"
    if max(value[0], 1 / value[0]) < SAME_SPEED:
        text = (
            f"A {a} and a {b} give the same {title} per dollar within 5 % "
            f"({vb['gpu_id']} ÷ {va['gpu_id']} = {1 / value[0]:.2f})"
        )
        return text, ""
    if value[0] >= 1:
        better, worse, gain, gpu = a, b, value, va["gpu_id"]
    else:
        better, worse, gain, gpu = b, a, _inverse(value), vb["gpu_id"]
    return f"A {better} gives {times_interval(gain)} the {title} per dollar of a {worse}", gpu


# --- the page's tables --------------------------------------------------------------------


def _spec_text(value: object, unit: str) -> str:
    if value is None:
        return "not published"
    if isinstance(value, dt.date):
        return value.isoformat()
    if unit == "USD":
        return money(float(value))
    return f"{value:g} {unit}".strip()


def spec_table(pair: Pair, facts: Facts) -> Table:
    """Specs side by side, with b ÷ a where both are numbers."""
    ga, gb = facts.gpus.get(pair.a, {}), facts.gpus.get(pair.b, {})
    rows = []
    for column, label, unit in SPECS:
        x, y = ga.get(column), gb.get(column)
        both = isinstance(x, int | float) and isinstance(y, int | float) and x > 0
        rows.append(
            (
                Cell(label),
                Cell(_spec_text(x, unit)),
                Cell(_spec_text(y, unit)),
                Cell(times(y / x) if both else ""),
            )
        )
    return Table(
        ("spec", pair.a, pair.b, f"{pair.b} ÷ {pair.a}"),
        rows,
        title="Specs (sources on each GPU's page)",
        css="cards",
    )


def _performance_cell(row: dict | None) -> Cell:
    if row is None:
        return Cell("no estimate")
    n = row["n_results"] or 0
    basis = ", ".join(dict.fromkeys(x for x in (row["method"], row["evidence"]) if x))
    return Cell(
        interval(row["value"], row["value_low"], row["value_high"]),
        lines=(f"{basis}; {n} benchmark figure{'s' if n != 1 else ''}",),
    )


def performance_table(pair: Pair, facts: Facts) -> Table:
    """Relative performance per workload (reference GPU = 1.0) and b ÷ a, with intervals."""
    rows = []
    for workload, title in WORKLOAD_TITLES.items():
        ra = facts.relative.get(pair.a, {}).get((workload,))
        rb = facts.relative.get(pair.b, {}).get((workload,))
        pa, pb = facts.performance(pair.a, workload), facts.performance(pair.b, workload)
        r = ratio(pb, pa) if pa and pb else None
        rows.append(
            (
                Cell(title),
                _performance_cell(ra),
                _performance_cell(rb),
                Cell(times_interval(r) if r else "–"),
            )
        )
    return Table(
        ("workload", pair.a, pair.b, f"{pair.b} ÷ {pair.a} (95 %)"),
        rows,
        title="Relative performance per workload (reference GPU = 1.0; 95 % interval)",
        css="cards",
    )


def _price_cell(row: dict | None, market: str, facts: Facts) -> Cell:
    if row is None:
        return Cell(
            f"no {market} price observed in the {facts.max_age_days} days to {facts.run_date}"
        )
    return Cell(
        money(row["price_usd"]),
        lines=(
            f"95 % range {money(row['price_low'])}–{money(row['price_high'])}",
            evidence_label(row["n_observations"], row["sources"], row["source_currency"])
            + (f" ({row['source_country']})" if row.get("source_country") else ""),
            f"{row['price_method']}, last observed {row['price_day']}, "
            f"{row['age_days']} day{'s' if row['age_days'] != 1 else ''} before {facts.run_date}",
        ),
    )


def price_table(pair: Pair, facts: Facts) -> Table:
    """New and used prices at the as-of date, with what each rests on."""
    rows = [
        (
            Cell(market),
            _price_cell(facts.prices.get(pair.a, {}).get((market,)), market, facts),
            _price_cell(facts.prices.get(pair.b, {}).get((market,)), market, facts),
        )
        for market in MARKETS
    ]
    return Table(
        ("market", pair.a, pair.b),
        rows,
        title=f"Prices as of {facts.run_date} (evidence: n, where, currency)",
        css="cards",
    )


def _value_cell(row: dict | None, market: str) -> Cell:
    if row is None:
        return Cell(f"no {market} price")
    system = f"{row['system_gpus']}-GPU {row['platform']}"
    per_1000 = interval(*_value(row), 1000.0)
    return Cell(
        per_1000,
        lines=(f"{system}, {money(row['total_cost_usd'])} total cost", f"rank {row['rank']}"),
    )


def value_table(pair: Pair, facts: Facts) -> Table:
    """Performance per $1,000 of total cost of ownership, per workload and market."""
    rows = []
    for workload, title in WORKLOAD_TITLES.items():
        for market in MARKETS:
            va = facts.value_row(pair.a, workload, market)
            vb = facts.value_row(pair.b, workload, market)
            r = ratio(_value(vb), _value(va)) if va and vb else None
            rows.append(
                (
                    Cell(f"{title}, {market}"),
                    _value_cell(va, market),
                    _value_cell(vb, market),
                    Cell(times_interval(r) if r else "–"),
                )
            )
    return Table(
        ("workload, market", pair.a, pair.b, f"{pair.b} ÷ {pair.a} (95 %)"),
        rows,
        title="Performance per $1,000 of total cost of ownership (95 % interval): GPU, its "
        "share of the host and electricity over the ownership period; each GPU's smallest system",
        css="cards",
    )


def _tokens(value: float, low: float | None, high: float | None) -> str:
    """'93 (66–132)': tokens/s to the unit (a tenth below 10)."""
    digits = 0 if value >= 10 else 1
    band = f" ({low:.{digits}f}–{high:.{digits}f})" if low is not None and high is not None else ""
    return f"{value:.{digits}f}{band}"


def _batch1(rows: pl.DataFrame | None, context: int) -> dict[tuple, Cell]:
    """(size, bits) -> the fewest GPUs that hold it and batch-1 decode speed, with its label."""
    if rows is None or rows.is_empty():
        return {}
    modelled = rows.filter(
        pl.col("method").str.starts_with("modelled") & (pl.col("context_tokens") == context)
    )
    measured = (
        rows.filter(pl.col("method").str.starts_with("measured") & (pl.col("num_gpus") == 1))
        .group_by("model_params_b", "bits")
        .agg(pl.col("decode_tokens_per_s").median(), pl.len())
    )
    seen = {(s, b): (v, n) for s, b, v, n in measured.iter_rows()}
    out = {}
    for key in sorted(set(modelled.select("model_params_b", "bits").iter_rows())):
        fit = modelled.filter(
            (pl.col("model_params_b") == key[0]) & (pl.col("bits") == key[1]) & pl.col("fits")
        ).sort("num_gpus")
        extra = ()
        if key in seen and seen[key][0] is not None:
            median, n = seen[key]
            extra = (f"measured {median:.0f} tokens/s on 1 GPU (median of {n})",)
        if fit.is_empty():
            out[key] = Cell("does not fit 8 GPUs", lines=extra)
            continue
        r = fit.row(0, named=True)
        gpus = f"{r['num_gpus']} GPU{'s' if r['num_gpus'] > 1 else ''}"
        held = f"{gpus}, {r['needed_gb']:.1f} of {r['available_gb']:.1f} GB"
        out[key] = Cell(
            f"{_tokens(r['decode_tokens_per_s'], r['decode_low'], r['decode_high'])} tokens/s",
            lines=(held, "modelled", *extra),
        )
    return out


def llm_table(pair: Pair, facts: Facts) -> Table:
    """Which model sizes fit (fewest GPUs) and batch-1 decode speed, side by side."""
    a, b = (
        _batch1(facts.llm.get(pair.a), facts.context),
        _batch1(facts.llm.get(pair.b), facts.context),
    )
    none = Cell("no LLM estimate")
    rows = [
        (Cell(f"{size}B, {bits}-bit"), a.get((size, bits), none), b.get((size, bits), none))
        for size, bits in sorted(set(a) | set(b))
    ]
    return Table(
        ("model", pair.a, pair.b),
        rows,
        title=f"One user (batch 1) at {facts.context:,} tokens of context: the fewest GPUs "
        "that hold the model and tokens/s (95 % interval)",
        css="cards",
        empty="No LLM configuration for either GPU in this version.",
    )


def _serving_cell(rows: pl.DataFrame | None, model: str) -> Cell:
    """The GPU's cheapest configuration for `model` (grounded first, as the site ranks)."""
    if rows is None or rows.is_empty():
        return Cell(f"no configuration at ≥ {FRONT_TARGET} tokens/s per user")
    hit = rows.filter(
        (pl.col("model_id") == model) & pl.col("usd_per_million_output_tokens").is_not_null()
    )
    if hit.is_empty():
        return Cell(f"no configuration at ≥ {FRONT_TARGET} tokens/s per user")
    best = (
        hit.with_columns(_estimate=pl.col("grounded").fill_null(True).not_())
        .sort("_estimate", "usd_per_million_output_tokens", "num_gpus")
        .row(0, named=True)
    )
    cell = cost_cell(best)
    grounded = () if best.get("grounded") is False else ("grounded in serving measurements",)
    return Cell(cell.text, cell.href, (BASES[best["basis"]], *cell.lines, *grounded))


def serving_table(pair: Pair, facts: Facts) -> Table:
    """Serving many users: each GPU's cheapest system per model at FRONT_TARGET tokens/s."""
    sa, sb = facts.serving.get(pair.a), facts.serving.get(pair.b)
    present = set()
    for rows in (sa, sb):
        if rows is not None and not rows.is_empty():
            present |= set(rows["model_id"].drop_nulls())
    models = [m for m in MODEL_ORDER if m in present] + sorted(present - set(MODEL_ORDER))
    return Table(
        ("model", pair.a, pair.b),
        [(Cell(m), _serving_cell(sa, m), _serving_cell(sb, m)) for m in models],
        title=f"Serving many users at ≥ {FRONT_TARGET} tokens/s each: each GPU's cheapest "
        "system per million output tokens (95 % interval), buying or renting",
        css="cards",
        empty="Neither GPU has a serving configuration in this version.",
    )


# --- pages --------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparePage:
    """What one compare page shows."""

    pair: Pair
    title: str
    verdict: str
    why: str
    sections: list[Section]


def compare_page(pair: Pair, facts: Facts) -> ComparePage:
    """One pair's page content."""
    links = f"[{pair.a}](../{gpu_href(pair.a)}), [{pair.b}](../{gpu_href(pair.b)})"
    sections = [
        Section("specs", "Specs", tables=[spec_table(pair, facts)]),
        Section(
            "performance",
            "Relative performance",
            [
                "Each value is relative to the reference GPU (1.0), with its method, evidence "
                "and 95 % interval; the last column divides them. The interval of a ratio "
                "treats the two estimates as independent, as the model's bootstrap does."
            ],
            [performance_table(pair, facts)],
        ),
        Section("prices", "Prices", tables=[price_table(pair, facts)]),
        Section("value", "Performance per dollar", tables=[value_table(pair, facts)]),
        Section(
            "llm",
            "LLM: which models fit, and how fast",
            [
                "Batch-1 speeds are modelled from memory bandwidth and fitted to published "
                "llama.cpp results; a measured median is shown where one exists. Serving "
                "costs are labelled by evidence as on the LLM serving page: an architecture "
                "no published serving run reaches is marked estimated."
            ],
            [llm_table(pair, facts), serving_table(pair, facts)],
        ),
    ]
    return ComparePage(
        pair,
        f"{pair.a} vs {pair.b}",
        verdict(pair, facts),
        f"{GROUPS[pair.group]} GPU pages: {links}.",
        sections,
    )


def index_section(pairs: list[Pair], facts: Facts) -> list[Section]:
    """compare/index.html: every compare page by group, with its verdict."""
    intro = Section(
        "compare",
        "Compare two GPUs",
        [
            f"{len(pairs)} pairs, chosen by rule (the same tier one generation on; the "
            "GeForce card nearest in launch price to each Radeon and Arc card) and a curated "
            "list (used against new at a similar price, consumer against data center, "
            "data-center generations, large-memory LLM boxes). Each verdict compares "
            f"{WORKLOAD_TITLES[VERDICT_WORKLOAD]} per dollar of total cost of ownership."
        ],
    )
    sections = [intro]
    for group, why in GROUPS.items():
        members = [p for p in pairs if p.group == group]
        if not members:
            continue
        rows = [(Cell(f"{p.a} vs {p.b}", p.href), Cell(verdict(p, facts))) for p in members]
        sections.append(
            Section(
                f"group-{group}",
                group.replace("-", " ").capitalize(),
                [why],
                [Table(("pair", "verdict"), rows, css="cards")],
            )
        )
    return sections


def gpu_compare_section(gpu_id: str, by_gpu: dict[str, list[Pair]]) -> Section:
    """A GPU page's links to its compare pages (the GPU page sits in `gpu/`)."""
    pairs = by_gpu.get(gpu_id, [])
    return Section(
        "compare",
        "Compare",
        ["All compare pages: [compare/index.html](../compare/index.html)."],
        [
            Table(
                ("compared with", "page"),
                [(Cell(p.other(gpu_id)), Cell(f"{p.a} vs {p.b}", p.href)) for p in pairs],
                empty="No compare page names this GPU.",
            )
        ],
    )


def pairs_by_gpu(ds: Dataset) -> dict[str, list[Pair]]:
    """gpu_id -> the compare pages naming it."""
    out: dict[str, list[Pair]] = {}
    for pair in compare_pairs(ds.data.gpus):
        out.setdefault(pair.a, []).append(pair)
        out.setdefault(pair.b, []).append(pair)
    return out


def write_compare_pages(ds: Dataset, pages: Path, render: Callable[..., str]) -> int:
    """Write `compare/<a>-vs-<b>.html` and `compare/index.html`; return how many pairs.

    `render(template, **context)` is the site's page renderer (reports.pages._page).
    """
    pairs = compare_pairs(ds.data.gpus)
    facts = Facts.of(ds)
    folder = pages / "compare"
    folder.mkdir(parents=True, exist_ok=True)
    for pair in pairs:
        html = render(
            "compare.html.j2", version=ds.version, root="../", page=compare_page(pair, facts)
        )
        inside(folder, f"{pair.name}.html").write_text(html, encoding="utf-8")
    index = render(
        "sections.html.j2",
        version=ds.version,
        root="../",
        title=f"gpuvalue {ds.version}: compare GPUs",
        sections=index_section(pairs, facts),
    )
    inside(folder, "index.html").write_text(index, encoding="utf-8")
    return len(pairs)
