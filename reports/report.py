"""The report's model tables and input freshness, read from the warehouse.

`load_report_data` reads what the report needs for one run date; `reports.dataset` adds the
verdicts and what changed, and the Markdown report (`templates/report.md.j2`), the site and
the run summary are all rendered from that one prepared dataset (`reports.pages`).
"""

import datetime as dt
import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import duckdb
import polars as pl

from model.cloud_freshness import fresh_only
from model.cost import best_market
from reports.charts import WORKLOAD_TITLES

# The report's format: the layout of its pages, tables and downloads (not its data, not the
# site version). Bump it when a table's columns or a download's schema change, so a reader
# comparing versions knows the layout moved. Shown in every page's footer.
REPORT_FORMAT = "3"


@dataclass(frozen=True)
class ReportData:
    """Everything the report shows, for one run date."""

    run_date: dt.date  # the as-of date: every age in the report counts back from it
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
    # What each GPU x workload's value rests on, and whether it may be a pick (evidence_basis).
    basis: pl.DataFrame

    @property
    def best(self) -> pl.DataFrame:
        """1-GPU perf per dollar at each GPU's preferred price."""
        return best_market(self.perf, 1)


# Each input with its newest date and its source's last attempt (NULL: never recorded).
# Cloud offers count per provider x pricing kind, each against its own window
# (`cloud_freshness_days`, model/cloud_freshness.py): the window the rent verdicts use.
# Prices and offers count up to the run date only (`?`): a backfilled version does not see
# later observations, as the model does not. They are counted before the join to
# source_status (one row per source x kind) and bounded on the raw timestamp, not a cast of
# it: over 10 years (49 M observations) the count reads two columns of each row group
# instead of joining and casting every row.
FRESHNESS_SQL = """
SELECT 'specs' AS input, source || coalesce(' ' || version, '') AS source, records AS rows,
       source_as_of AS as_of, CASE WHEN status = 'ok' THEN NULL ELSE status END AS attempt,
       detail, NULL AS pricing
FROM spec_inputs WHERE status <> 'absent'  -- an optional input nobody supplied is no news
UNION ALL
SELECT 'benchmarks', source, count(*), max(as_of), NULL, NULL, NULL FROM benchmark_results
GROUP BY source
UNION ALL
SELECT 'retail prices', p.source || ' (' || p.market || ')', p.n, p.as_of, a.status, a.detail,
       NULL
FROM (SELECT source, market, count(*) AS n, CAST(max(observed_at) AS DATE) AS as_of
      FROM price_observations WHERE observed_at < CAST($run_date AS DATE) + INTERVAL 1 DAY
      GROUP BY source, market) p
LEFT JOIN source_status a ON a.source = p.source AND a.kind = 'retail'
UNION ALL
SELECT 'cloud prices', o.provider || ' (' || coalesce(o.pricing, 'marketplace') || ')', o.n,
       o.as_of, a.status, a.detail, coalesce(o.pricing, 'marketplace')
FROM (SELECT provider, pricing, count(*) AS n, CAST(max(observed_at) AS DATE) AS as_of
      FROM cloud_offers WHERE observed_at < CAST($run_date AS DATE) + INTERVAL 1 DAY
      GROUP BY provider, pricing) o
LEFT JOIN source_status a ON a.source = o.provider AND a.kind = 'cloud'
ORDER BY input, source
"""


def freshness_status(
    rows: pl.DataFrame,
    stale_after_days: dict[str, int],
    cloud_freshness_days: dict[str, int] | None = None,
) -> pl.DataFrame:
    """`status` ok | stale | failed, `window_days` and a `detail` per input.

    Needs `age_days` (days before the run's as-of date) and `attempt`. failed: the source's
    last attempt failed or was skipped (its last good rows are kept and used, and the detail
    says so); stale: older than its kind's freshness window (`stale_after_days`, shown as
    `window_days`); ok otherwise. An input is never `ok` past its window.
    """
    limit = pl.col("input").replace_strict(stale_after_days, default=None, return_dtype=pl.Int64)
    if cloud_freshness_days and "pricing" in rows.columns:
        # A cloud offer is stale past its pricing kind's window, as in the rent verdicts.
        by_kind = pl.col("pricing").replace_strict(
            cloud_freshness_days, default=None, return_dtype=pl.Int64
        )
        limit = pl.when(pl.col("pricing").is_not_null()).then(by_kind).otherwise(limit)
    failed = pl.col("attempt").is_in(["failed", "skipped", "rejected", "error"])
    stale = limit.is_not_null() & (pl.col("age_days") > limit)
    return rows.with_columns(
        window_days=limit,
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
    ).drop("attempt", *(["pricing"] if "pricing" in rows.columns else []))


def input_ages(inputs: pl.DataFrame, run_date: dt.date) -> pl.DataFrame:
    """`age_days`: days from each input's `as_of` to the run's as-of date (one clock).

    The verdicts and today's prices count their ages from the run date too, so the site
    never mixes two clocks; the build date is never used to age an input. An input dated
    after the run date (a spec sheet edited later) has age 0.
    """
    return inputs.with_columns(
        age_days=(pl.lit(run_date) - pl.col("as_of")).dt.total_days().clip(lower_bound=0)
    )


def load_report_data(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, input_counts: bool = True
) -> ReportData:
    """Read the run's model tables and the inputs' freshness from the warehouse.

    Every age counts back from `run_date`, the run's as-of date (`input_ages`).
    `input_counts=False` leaves `freshness`, `price_counts`, `drops` and `pages` empty:
    they count every observation ever kept (a scan of the history), and the charts, which
    draw none of them, need not pay for it.
    """
    run = con.sql(
        "SELECT reference_gpu, parameters FROM model_runs WHERE run_date = ?", params=[run_date]
    ).fetchall()
    if not run:
        raise ValueError(f"no model run for {run_date}: materialize the model first")
    reference_gpu, parameters = run[0]

    def for_run(table: str) -> pl.DataFrame:
        return con.sql(f"SELECT * FROM {table} WHERE run_date = ?", params=[run_date]).pl()

    params = json.loads(parameters)
    counts = (pl.DataFrame(),) * 4
    if input_counts:
        with _small_cache(con):
            counts = _input_counts(con, run_date, params)
    freshness, price_counts, drops, pages = counts
    return ReportData(
        run_date=run_date,
        reference_gpu=reference_gpu,
        parameters=params,
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
        basis=for_run("evidence_basis"),
    )


# The input counts scan every observation and offer ever kept; left to itself DuckDB keeps
# the blocks it read cached for the rest of the step (~0.5 GB of the report's RSS at 10
# years). A small limit while they run evicts as it goes; the limit is restored after.
COUNTS_MEMORY_LIMIT = "256MB"


@contextmanager
def _small_cache(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """DuckDB's memory limit lowered to COUNTS_MEMORY_LIMIT inside the block, if it can be."""
    try:
        before = con.sql("SELECT current_setting('memory_limit')").fetchall()[0][0]
        con.sql(f"SET memory_limit = '{COUNTS_MEMORY_LIMIT}'")
    except duckdb.Error:  # another engine, or more pinned than the limit: leave it
        yield
        return
    try:
        yield
    finally:
        con.sql(f"SET memory_limit = '{before}'")


def _input_counts(
    con: duckdb.DuckDBPyConnection, run_date: dt.date, params: dict
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """The inputs' freshness, price counts, drops and pages up to the run date."""
    freshness = freshness_status(
        input_ages(con.sql(FRESHNESS_SQL, params={"run_date": run_date}).pl(), run_date),
        params.get("stale_after_days", {}),
        params.get("cloud_freshness_days"),
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
        "candidates AS (SELECT source, count(*) AS n FROM price_observations WHERE drop_reason"
        " IS NULL AND observed_at < CAST(? AS DATE) + INTERVAL 1 DAY GROUP BY source) "
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
    return freshness, price_counts, drops, pages


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
    at one price type, each GPU once at its best fresh offer (the table ranks offers; offers
    older than their freshness window are never listed). Only GPUs
    eligible for the workload are listed (evidence_basis; model/eligibility.py); the
    others keep their rank in the tables, so a buying list may skip a rank.
    """
    eligible = data.basis.filter(pl.col("eligible")).select("gpu_id", "workload")
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
                # Fresh offers only: a stale offer never makes a top 3 (cloud_freshness).
                rows = (
                    fresh_only(data.cloud_perf)
                    .filter((pl.col("workload") == workload) & (pl.col(column) == value))
                    .sort("perf_per_dollar", "provider", descending=[True, False])
                    .unique("gpu_id", keep="first", maintain_order=True)
                )
            out[workload][way] = rows.join(
                eligible, on=["gpu_id", "workload"], maintain_order="left"
            ).head(k)
    return out


def set_aside(data: ReportData, workload: str, k: int = 3) -> pl.DataFrame:
    """GPUs not eligible for `workload` that would rank in a top k (buying new or used).

    gpu_id, market, rank and caveat: what the headline leaves out, and why.
    """
    ineligible = data.basis.filter(~pl.col("eligible") & (pl.col("workload") == workload))
    return (
        data.perf.filter(
            (pl.col("workload") == workload)
            & (pl.col("system_gpus") == 1)
            & pl.col("market").is_in(["new", "used"])
            & (pl.col("rank") <= k)
        )
        .join(ineligible.select("gpu_id", "caveat"), on="gpu_id")
        .select("gpu_id", "market", "rank", "caveat")
        .sort("market", "rank", "gpu_id")
    )


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
