"""The Markdown report: recommendations, input freshness, tables and methodology notes.

`load_report_data` reads what the report needs from the warehouse; `render_markdown` is a
pure function of that data. The site renders this same Markdown to HTML.
"""

import datetime as dt
import json
from dataclasses import dataclass

import duckdb
import polars as pl

from pipeline.model.cost import best_market
from reports.charts import WORKLOAD_TITLES

REPORT_VERSION = "2"


@dataclass(frozen=True)
class ReportData:
    """Everything the report shows, for one run date."""

    run_date: dt.date
    today: dt.date
    reference_gpu: str
    parameters: dict
    freshness: pl.DataFrame
    relative: pl.DataFrame
    perf: pl.DataFrame
    cloud: pl.DataFrame
    gpus: pl.DataFrame
    price_counts: pl.DataFrame
    drops: pl.DataFrame
    pages: pl.DataFrame
    recommendations: pl.DataFrame
    cloud_perf: pl.DataFrame

    @property
    def best(self) -> pl.DataFrame:
        """1-GPU perf per dollar at each GPU's preferred price."""
        return best_market(self.perf, 1)


# Each input with its newest date and its source's last attempt (NULL: never recorded).
FRESHNESS_SQL = """
SELECT 'specs' AS input, source || coalesce(' ' || version, '') AS source, records AS rows,
       source_as_of AS as_of, CASE WHEN status = 'ok' THEN NULL ELSE status END AS attempt,
       detail
FROM spec_inputs WHERE status <> 'absent'  -- an optional input nobody supplied is no news
UNION ALL
SELECT 'benchmarks', source, count(*), max(as_of), NULL, NULL FROM benchmark_results
GROUP BY source
UNION ALL
SELECT 'retail prices', p.source || ' (' || p.market || ')', count(*),
       max(CAST(p.observed_at AS DATE)), any_value(a.status), any_value(a.detail)
FROM price_observations p LEFT JOIN source_status a ON a.source = p.source AND a.kind = 'retail'
GROUP BY p.source, p.market
UNION ALL
SELECT 'cloud prices', o.provider, count(*), max(CAST(o.observed_at AS DATE)),
       any_value(a.status), any_value(a.detail)
FROM cloud_offers o LEFT JOIN source_status a ON a.source = o.provider AND a.kind = 'cloud'
GROUP BY o.provider
ORDER BY input, source
"""


def freshness_status(rows: pl.DataFrame, stale_after_days: dict[str, int]) -> pl.DataFrame:
    """`status` ok | stale | failed and a `detail` per input (needs `age_days`, `attempt`).

    failed: the source's last attempt failed or was skipped (its last good rows are kept
    and used, and the detail says so); stale: older than its kind's threshold
    (`stale_after_days`); ok otherwise. An input is never `ok` past its threshold.
    """
    limit = pl.col("input").replace_strict(stale_after_days, default=None, return_dtype=pl.Int64)
    failed = pl.col("attempt").is_in(["failed", "skipped", "rejected", "error"])
    stale = limit.is_not_null() & (pl.col("age_days") > limit)
    return rows.with_columns(
        status=pl.when(failed)
        .then(pl.lit("failed"))
        .when(stale)
        .then(pl.lit("stale"))
        .otherwise(pl.lit("ok")),
        detail=pl.when(failed)
        .then(
            pl.format(
                "last attempt {} ({}); its rows of {} are kept",
                pl.col("attempt"),
                pl.col("detail").fill_null("no detail"),
                pl.col("as_of").cast(pl.Utf8),
            )
        )
        .when(stale)
        .then(pl.format("older than {} days", limit))
        .otherwise(pl.lit("")),
    ).drop("attempt")


def load_report_data(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, today: dt.date | None = None
) -> ReportData:
    """Read the run's model tables and the inputs' freshness from the warehouse.

    Input ages are counted to `today` (the build date, UTC): what a reader needs to know
    is how old a figure is now, not relative to the run's as-of date.
    """
    today = today or dt.datetime.now(dt.UTC).date()
    run = con.sql(
        "SELECT reference_gpu, parameters FROM model_runs WHERE run_date = ?", params=[run_date]
    ).fetchall()
    if not run:
        raise ValueError(f"no model run for {run_date}: materialize the model first")
    reference_gpu, parameters = run[0]

    def for_run(table: str) -> pl.DataFrame:
        return con.sql(f"SELECT * FROM {table} WHERE run_date = ?", params=[run_date]).pl()

    freshness = freshness_status(
        con.sql(FRESHNESS_SQL)
        .pl()
        .with_columns(age_days=(pl.lit(today) - pl.col("as_of")).dt.total_days()),
        json.loads(parameters).get("stale_after_days", {}),
    )
    price_counts = con.sql(
        "SELECT market, sum(n_observations) AS kept, sum(n_dropped) AS dropped, "
        "count(DISTINCT gpu_id) AS gpus FROM gpu_prices_daily WHERE day <= ? "
        "GROUP BY market ORDER BY market",
        params=[run_date],
    ).pl()
    # Retail observations used and left out, by source and reason, up to the run date.
    # `used` = rows without a drop reason that were not outliers either.
    drops = con.sql(
        "WITH dropped AS (SELECT source, reason, sum(n) AS n FROM price_drops "
        " WHERE day <= ? GROUP BY source, reason), "
        "candidates AS (SELECT source, count(*) AS n FROM price_observations "
        " WHERE drop_reason IS NULL AND CAST(observed_at AS DATE) <= ? GROUP BY source) "
        "SELECT c.source, 'used' AS reason, c.n - coalesce(o.n, 0) AS n FROM candidates c "
        "LEFT JOIN dropped o ON o.source = c.source AND o.reason = 'outlier' "
        "UNION ALL SELECT source, reason, n FROM dropped ORDER BY source, reason",
        params=[run_date, run_date],
    ).pl()
    pages = con.sql(
        "SELECT source, outcome, count(*) AS pages, sum(records) AS records FROM retail_pages "
        "WHERE day <= ? GROUP BY source, outcome ORDER BY source, outcome",
        params=[run_date],
    ).pl()
    return ReportData(
        run_date=run_date,
        today=today,
        reference_gpu=reference_gpu,
        parameters=json.loads(parameters),
        freshness=freshness,
        relative=for_run("relative_performance"),
        perf=for_run("perf_per_dollar"),
        cloud=for_run("cloud_vs_buy"),
        gpus=con.sql("SELECT * FROM gpus ORDER BY gpu_id").pl(),
        price_counts=price_counts,
        drops=drops,
        pages=pages,
        recommendations=for_run("recommendations"),
        cloud_perf=for_run("cloud_perf_per_dollar"),
    )


# Each way to get a GPU the headline ranks: (table, filter column, value, title).
HEADLINE_WAYS = {
    "buy_new": ("perf", "market", "new", "Buy new (1-GPU system)"),
    "buy_used": ("perf", "market", "used", "Buy used (1-GPU system)"),
    "rent_on_demand": ("cloud", "price_type", "on_demand", "Rent on-demand"),
    "rent_spot": ("cloud", "price_type", "spot", "Rent spot"),
}


def headline(data: ReportData, k: int = 3) -> dict[str, dict[str, pl.DataFrame]]:
    """Per workload and way to get a GPU, the k best GPUs, read off the model tables.

    Ways: buy new, buy used, rent on-demand, rent spot (HEADLINE_WAYS).

    Buying: `perf_per_dollar` rows of 1-GPU systems at one price basis (new or used, never
    the mean of both), in the table's own `rank` order. Renting: `cloud_perf_per_dollar`
    at one price type, each GPU once at its best offer (the table ranks offers).
    """
    out: dict[str, dict[str, pl.DataFrame]] = {}
    for workload in WORKLOAD_TITLES:
        out[workload] = {}
        for way, (table, column, value, _) in HEADLINE_WAYS.items():
            if table == "perf":
                rows = data.perf.filter(
                    (pl.col("workload") == workload)
                    & (pl.col("system_gpus") == 1)
                    & (pl.col(column) == value)
                ).sort("rank", "gpu_id")
            else:
                rows = (
                    data.cloud_perf.filter(
                        (pl.col("workload") == workload) & (pl.col(column) == value)
                    )
                    .sort("perf_per_dollar", "provider", descending=[True, False])
                    .unique("gpu_id", keep="first", maintain_order=True)
                )
            out[workload][way] = rows.head(k)
    return out


def _cell(value: object) -> str:
    # Markdown table cells: keep pipes and newlines from breaking the table.
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pl.DataFrame, headers: dict[str, str]) -> str:
    """A Markdown table of the given columns, with display headers."""
    lines = [
        "| " + " | ".join(headers.values()) + " |",
        "|" + "|".join("---" for _ in headers) + "|",
    ]
    for row in frame.select(list(headers)).iter_rows():
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def _retail_section(data: ReportData, params: dict) -> list[str]:
    """How retail observations were used: page outcomes, and kept/dropped by reason."""
    out = ["## Retail observations: used and left out", ""]
    if data.pages.height:
        out += [
            "Archived retail pages by outcome (a captcha or block page is counted, never "
            "parsed as an empty result):",
            "",
            markdown_table(
                data.pages,
                {"source": "source", "outcome": "outcome", "pages": "pages", "records": "records"},
            ),
            "",
        ]
    if data.drops.height:
        wide = data.drops.pivot(on="reason", index="source", values="n").fill_null(0)
        reasons = [c for c in wide.columns if c != "source"]
        reasons = (
            ["used"] + sorted(r for r in reasons if r != "used")
            if "used" in reasons
            else sorted(reasons)
        )
        out += [
            "Observations per source: `used` feed the daily median; the others were left out "
            f"for the reason named (`outlier`: beyond {params['price_mad_k']:g} scaled MADs of "
            "the day's median; `unmatched:*`: the title is not one catalog GPU).",
            "",
            markdown_table(
                wide.select("source", *reasons), {"source": "source", **{r: r for r in reasons}}
            ),
            "",
        ]
    if data.price_counts.height:
        out += [
            markdown_table(
                data.price_counts,
                {
                    "market": "market",
                    "gpus": "GPUs priced",
                    "kept": "observations used",
                    "dropped": "outliers",
                },
            ),
            "",
        ]
    return out


def _money(expr: pl.Expr) -> pl.Expr:
    """'$2,269': whole dollars with a thousands separator."""
    return expr.map_elements(lambda v: f"${v:,.0f}", return_dtype=pl.Utf8)


def _interval(value: str, low: str, high: str, scale: pl.Expr | float = 1.0) -> pl.Expr:
    """'0.200 (0.161–0.244)': a point estimate with its 95 % interval, when there is one."""
    shown = [(pl.col(c) * scale).round(3).cast(pl.Utf8) for c in (value, low, high)]
    return (
        pl.when(pl.col(low).is_not_null() & pl.col(high).is_not_null())
        .then(pl.format("{} ({}–{})", *shown))
        .otherwise(shown[0])
    )


RECOMMENDATION_OPTIONS = {
    "buy_new": "buy new",
    "buy_used": "buy used",
    "rent": "rent (on-demand)",
    "rent_spot": "rent (spot)",
}


def _recommendations_section(data: ReportData) -> list[str]:
    """Best GPU per workload x memory tier x option, with interval, P(best) and runner-up."""
    rec = data.recommendations
    out = [
        "## Recommendations by memory tier",
        "",
        "The best GPU with at least the given memory, for each way to get one. Buying: "
        "relative performance per $1,000 of total cost of a 1-GPU system; renting: "
        "reference-GPU-hours per dollar at the provider's cheapest offer. In brackets the 95 % "
        "bootstrap interval; *p* is the share of bootstrap replicates in which it is the best "
        "of its tier; *next* is the runner-up.",
        "",
    ]
    if rec.is_empty():
        return out + ["No recommendation could be made (no priced GPU).", ""]
    # Buying is shown per $1,000 of total cost, renting per dollar (an hour's scale).
    scale = pl.when(pl.col("option").str.starts_with("buy")).then(1000.0).otherwise(1.0)
    cells = rec.with_columns(
        cell=pl.format(
            "{} {}, p {}%{}",
            pl.col("gpu_id"),
            _interval("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high", scale),
            (pl.col("p_best") * 100).round(0).cast(pl.Int64),
            pl.when(pl.col("runner_up_gpu_id").is_not_null())
            .then(pl.format("; next {}", pl.col("runner_up_gpu_id")))
            .otherwise(pl.lit("")),
        )
    )
    for workload, title in WORKLOAD_TITLES.items():
        wide = (
            cells.filter(pl.col("workload") == workload)
            .with_columns(tier=pl.format("≥ {} GB", pl.col("memory_tier_gb").cast(pl.Int64)))
            .pivot(on="option", index=["memory_tier_gb", "tier"], values="cell")
            .sort("memory_tier_gb")
            .fill_null("no priced GPU")
        )
        options = {k: v for k, v in RECOMMENDATION_OPTIONS.items() if k in wide.columns}
        out += [f"**{title}**", "", markdown_table(wide, {"tier": "memory", **options}), ""]
    return out


def _cloud_perf_section(data: ReportData, k: int = 5) -> list[str]:
    """The k best rented GPUs per workload and price type (never averaged across types)."""
    out = [
        "## Performance per rented dollar",
        "",
        "Reference-GPU-hours per dollar at each provider's cheapest offer of that price type "
        "(95 % interval from the relative-performance interval). Spot capacity can be "
        "reclaimed at short notice.",
        "",
    ]
    if data.cloud_perf.is_empty():
        return out + ["No cloud offer matches a GPU with a performance value.", ""]
    for workload, title in WORKLOAD_TITLES.items():
        for price_type in ("on_demand", "spot"):
            top = (
                data.cloud_perf.filter(
                    (pl.col("workload") == workload) & (pl.col("price_type") == price_type)
                )
                .sort("perf_per_dollar", descending=True)
                .head(k)
                .with_columns(
                    ppd=_interval("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high"),
                    usd=pl.col("usd_per_gpu_hour").round(3),
                    offer_day=pl.col("offer_day").cast(pl.Utf8),
                )
            )
            if top.is_empty():
                continue
            out += [
                f"**{title}, {price_type.replace('_', '-')}**",
                "",
                markdown_table(
                    top,
                    {
                        "gpu_id": "GPU",
                        "provider": "provider",
                        "instance_type": "instance",
                        "usd": "$/GPU-hour",
                        "ppd": "ref-GPU-hours per $",
                        "offer_day": "price as of",
                    },
                ),
                "",
            ]
    return out


def _headline_table(top: pl.DataFrame, table: str) -> str:
    """One headline table: buying (total cost of ownership) or renting (per GPU-hour)."""
    ranked = top.with_columns(rank=pl.int_range(1, pl.len() + 1))
    if table == "cloud":
        return markdown_table(
            ranked.with_columns(
                usd=pl.col("usd_per_gpu_hour").round(3),
                ppd=_interval("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high"),
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
        )
    table_rows = ranked.with_columns(
        price=_money(pl.col("price_usd")),
        total=_money(pl.col("total_cost_usd")),
        rel=pl.col("relative_performance").round(2),
        ppd=_interval("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high", 1000.0),
        p3=pl.format("{}%", (pl.col("p_top3") * 100).round(0).cast(pl.Int64)),
        price_seen=pl.format(
            "{}, {}", pl.col("price_method").fill_null("observed"), pl.col("price_day")
        ),
    )
    return markdown_table(
        table_rows,
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
    )


def render_markdown(data: ReportData, chart_dir: str = "charts") -> str:
    """The report as Markdown (links to the charts relative to the report)."""
    params = data.parameters
    out = [
        f"# gpuvalue report, {data.run_date}",
        "",
        "Which GPU gives the most deep-learning performance per dollar, to buy or to rent. "
        f"Relative performance is normalised to **{data.reference_gpu} = 1.0**. "
        f"Total cost = GPU price + host system (${params['host_cost_usd']['1']:,.0f} for one "
        f"GPU) + {params['years']:g} years of electricity at "
        f"${params['electricity_usd_per_kwh']:g}/kWh and {params['utilization']:.0%} "
        f"utilisation. Report version {REPORT_VERSION}.",
        "",
        "## Best performance per dollar",
        "",
        "For each workload and each way to get a GPU, the three best by performance per "
        "dollar, read from the `perf_per_dollar` (1-GPU systems; SXM/OAM modules come only "
        "in 4- and 8-GPU servers) and `cloud_perf_per_dollar` tables. Prices of different "
        "markets are never averaged here.",
        "",
    ]
    for workload, ways in headline(data).items():
        out += [f"### {WORKLOAD_TITLES[workload]}", ""]
        for way, top in ways.items():
            title = HEADLINE_WAYS[way][3]
            out += [f"**{title}**", ""]
            if top.is_empty():
                out += ["No priced GPU has a value for this workload.", ""]
                continue
            out += [_headline_table(top, HEADLINE_WAYS[way][0]), ""]

    out += [
        "*P(top 3)*: the share of bootstrap replicates (prices, benchmarks, scaling) in which "
        "the GPU is among the 3 best of its workload at the same price basis.",
        "",
    ]
    out += _recommendations_section(data)
    out += [
        "## Charts",
        "",
        f"![Raw relative performance]({chart_dir}/relative_performance.svg)",
        "",
        f"![Performance per dollar]({chart_dir}/perf_per_dollar.svg)",
        "",
        "## How old each input is",
        "",
        f"Ages in days on {data.today} (the build date). The newest input dates this run: "
        f"{data.run_date}.",
        "",
        markdown_table(
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
        ),
        "",
    ]
    out += _retail_section(data, params)
    out += ["## Relative performance", ""]
    wide = (
        data.relative.pivot(on="workload", index="gpu_id", values="value")
        .join(
            data.relative.filter(pl.col("workload") == "training_16bit").select("gpu_id", "method"),
            on="gpu_id",
        )
        .sort("training_16bit", descending=True)
        .with_columns(pl.col(w).round(2) for w in WORKLOAD_TITLES)
    )
    out.append(
        markdown_table(
            wide,
            {
                "gpu_id": "GPU",
                "training_16bit": "16-bit training",
                "inference_16bit": "16-bit inference",
                "inference_8bit": "8-bit inference",
                "method": "16-bit method",
            },
        )
    )
    out.append("")
    out.append(
        "8-bit inference is estimated from 16-bit inference: FP8 tensor throughput on "
        "Ada, Hopper and Blackwell, the 16-bit speed on older GPUs (Dettmers)."
    )
    out.append("")

    unpriced = sorted(set(data.gpus["gpu_id"]) - set(data.perf["gpu_id"]))
    max_age = params.get("price_max_age_days", 730)
    out += [
        "## GPUs without a price",
        "",
        f"Prices observed in the last {params.get('price_freshness_days', 180)} days are used "
        f"as observed; older ones are nowcast to {data.run_date} with their segment's drift "
        f"(`price_method = nowcast`, wider intervals); a GPU last seen on sale over {max_age} "
        "days ago, or never, has no price today:",
        "",
        ", ".join(unpriced) if unpriced else "Every catalog GPU has a price.",
        "",
        "## Renting versus buying",
        "",
    ]
    at = 0.15
    cloud = data.cloud.filter((pl.col("utilization") - at).abs() < 1e-9)
    if cloud.is_empty():
        out.append("No cloud offer matches a priced GPU.")
    else:
        cheapest = (
            cloud.sort("usd_per_gpu_hour")
            .group_by("gpu_id", "price_type", maintain_order=True)
            .first()
            .sort("gpu_id", "price_type")
            .with_columns(
                pl.col("usd_per_gpu_hour").round(2),
                buy=_money(pl.col("buy_cost_usd")),
                days=pl.col("break_even_days")
                .round(0)
                .cast(pl.Int64)
                .cast(pl.Utf8)
                .fill_null("never"),
            )
        )
        out.append(
            f"Cheapest offer per GPU and price type, and the days after which a "
            f"1-GPU system is cheaper than renting at {at:.0%} utilisation:"
        )
        out.append("")
        out.append(
            markdown_table(
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
    out += [""] + _cloud_perf_section(data)
    out += [
        "## Method in brief",
        "",
        "Benchmarks are debiased to a reference batch size per model and to per-GPU "
        "throughput (Dettmers' constants, or constants fitted from the data where their 95 % "
        f"interval is tight enough: this run used `{params.get('constants', 'dettmers')}`), "
        "then combined into one relative performance per GPU and workload by a two-way "
        "log-linear fit, the geometric mean over models. GPUs without benchmarks are "
        "estimated from their specs by an estimator validated leave-one-GPU-out (grey in the "
        "charts). Intervals come from a seeded bootstrap over price observations, benchmark "
        "fits and scaling efficiency. The [methodology page](methodology.html) shows the "
        "fitted constants, every validation figure, the spec conflicts and the flagged "
        "benchmark rows of this run; docs/methodology.md explains the method.",
        "",
        "Parameters of this run:",
        "",
        "```json",
        json.dumps(params, indent=2, sort_keys=True),
        "```",
        "",
    ]
    return "\n".join(out)
