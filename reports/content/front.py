"""The front page's own sections (best per dollar, freshness, charts) and the report's order.

The front page answers first (issue 25, item 1): under the title the as-of date and the
inputs' ages (asof.py), then three plain sentences — best to buy new, best to buy used,
best to rent, for the main workload — then a table of contents linking every section of
the page and the LLM serving page. The Markdown report is the front page's sections
followed by the "all tables" page's.
"""

import re

import polars as pl

from model.verdicts import HEADLINE_KIND
from reports.charts import FIGURES, WORKLOAD_TITLES
from reports.content.asof import as_of, first_screen
from reports.content.blocks import (
    Section,
    Table,
    frame_table,
    interval,
    money,
    money_expr,
    percent,
)
from reports.content.changes import changes_section
from reports.content.llm import llm_section
from reports.content.prices import priced_with_evidence, with_price_evidence
from reports.content.rent_or_buy import rent_or_buy_section
from reports.content.renting import stale_note, with_offer_text
from reports.content.serving import model_anchor, serving_models
from reports.content.tables import detail_sections
from reports.content.upgrade import upgrade_section
from reports.content.verdicts import verdict_section
from reports.dataset import Dataset
from reports.report import HEADLINE_WAYS, headline, set_aside


def headline_table(top: pl.DataFrame, table: str, **kwargs) -> Table:
    """One headline table: buying (total cost of ownership) or renting (per GPU-hour).

    Buying keeps `perf_per_dollar`'s own rank, so a GPU left out as not eligible shows as
    a skipped rank; renting lists each GPU's best offer in order.
    """
    ranked = top if table == "perf" else top.with_columns(rank=pl.int_range(1, pl.len() + 1))
    ppd = pl.struct("perf_per_dollar", "perf_per_dollar_low", "perf_per_dollar_high")
    if table == "cloud":
        return frame_table(
            with_offer_text(ranked).with_columns(
                usd=pl.col("usd_per_gpu_hour").round(3),
                ppd=ppd.map_elements(lambda s: interval(*s.values()), return_dtype=pl.Utf8),
            ),
            {
                "rank": "#",
                "gpu_id": "GPU",
                "provider": "provider",
                "usd": "$/GPU-hour",
                "method": "perf method",
                "ppd": "ref-GPU-hours per $ (95 % interval)",
                "offer_age": "offer as of",
                "market": "price set by",
            },
            **kwargs,
        )
    if "price_evidence" not in ranked.columns:
        ranked = ranked.with_columns(price_evidence=pl.lit(None, dtype=pl.Utf8))
    return frame_table(
        ranked.with_columns(
            price=pl.struct("price_usd", "price_evidence").map_elements(
                lambda r: priced_with_evidence(r["price_usd"], r["price_evidence"]),
                return_dtype=pl.Utf8,
            ),
            total=money_expr("total_cost_usd"),
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
                kind = HEADLINE_WAYS[way][0]
                if kind == "perf":  # a buy table: say what each price rests on
                    top = with_price_evidence(top, ds.current_prices)
                tables.append(headline_table(top, kind, **kwargs))
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
            "which the GPU is among the 3 best of its workload at the same price basis "
            "(every priced GPU counts, eligible or not).",
            *_set_aside_notes(ds),
            *filter(None, [stale_note(ds.data.cloud_perf, ds.data.parameters)]),
        ],
    )


def _set_aside_notes(ds: Dataset) -> list[str]:
    """Per workload, the GPUs left out of the lists although their estimate ranks top 3."""
    notes = []
    for workload, title in WORKLOAD_TITLES.items():
        rows = set_aside(ds.data, workload)
        if rows.is_empty():
            continue
        named = "; ".join(
            f"{g} (#{r} {m})" for g, m, r in rows.select("gpu_id", "market", "rank").rows()
        )
        reason = rows["caveat"][0]
        notes.append(
            f"*Left out of the {title} lists*, though their estimate ranks in a buying top 3: "
            f"{named}. First of them: {reason}."
        )
    return notes


def freshness_section(ds: Dataset) -> Section:
    """How old each input is, with its status (ok, stale, failed) and why."""
    data = ds.data
    later = data.freshness.filter(pl.col("as_of") > data.run_date).height
    return Section(
        "freshness",
        "How old each input is",
        [
            f"Ages in days before the as-of date, {data.run_date} (the newest price or offer "
            "of the snapshot), as everywhere on this site; the day the site was built plays "
            "no part. An input is stale past its kind's freshness window."
            + (
                f" {later} input(s) dated after the as-of date (a spec sheet edited since) "
                "count as age 0."
                if later
                else ""
            )
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
                    "window_days": "window (days)",
                    "status": "status",
                    "detail": "why",
                },
            )
        ],
    )


def dates(ds: Dataset) -> dict:
    """The first screen's as-of statement and the word for 'now' (reports/content/asof.py).

    `when` is "today" only when every input behind the answer is fresh, else "as of <date>".
    """
    lead, points = first_screen(ds)
    return {"asof_lead": lead, "asof_points": points, "when": as_of(ds).when()}


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
        "utilisation."
    )


def report_sections(ds: Dataset) -> list[Section]:
    """Every section of the Markdown report, in order."""
    lead = next(f for f in FIGURES if f.name == "perf_per_dollar")
    charts = charts_section()
    return [
        verdict_section(ds),
        *buyer_sections(ds),
        changes_section(ds),
        headline_section(ds),
        llm_section(ds),
        Section("charts", "Charts", figures=[lead, *charts.figures]),
        freshness_section(ds),
        *detail_sections(ds),
    ]


# --- the answer first (issue 25, item 1) ---------------------------------------------------

MAIN_WORKLOAD = "training_16bit"
ANSWER_OPTIONS = {
    "buy_new": "Best to buy new",
    "buy_used": "Best to buy used",
    "rent_on_demand": "Best to rent",
}


def _observations(ds: Dataset, gpu_id: str, market: str) -> int | None:
    rows = ds.current_prices.filter((pl.col("gpu_id") == gpu_id) & (pl.col("market") == market))
    return rows["n_observations"][0] if rows.height and "n_observations" in rows else None


def _pick(row: dict) -> str:
    """'**[rtx-4090](gpu/rtx-4090.html)**': the pick, linked to its page."""
    return f"**[{row['gpu_id']}](gpu/{row['gpu_id']}.html)**"


def _odds(row: dict) -> str:
    """Why, in short: best of n in how many bootstrap draws, and the tie when there is one."""
    odds = f"best of {row['n_candidates']} in {percent(row['p_best'])} of the bootstrap draws"
    if row["tie_gpu_ids"]:
        others = [g for g in row["tie_gpu_ids"].split(", ") if g != row["gpu_id"]]
        odds += ", so a tie with " + " and ".join(f"[{g}](gpu/{g}.html)" for g in others)
    if row["basis"] == "validated_estimate" or row["method"] == "estimated":
        odds += " (performance estimated)"
    return odds


def answer_sentence(ds: Dataset, row: dict | None, option: str) -> str:
    """One plain sentence: the pick, its price (observations, age) and why (value, P(best))."""
    title = ANSWER_OPTIONS[option]
    if row is None or row["gpu_id"] is None:
        why = row["why"] if row is not None else "no verdict in this version"
        return f"**{title}:** none ({why})."
    value = interval(
        row["perf_per_dollar"], row["perf_per_dollar_low"], row["perf_per_dollar_high"]
    )
    if option.startswith("buy"):
        n = _observations(ds, row["gpu_id"], row["market"])
        seen = f"{n} observation{'' if n == 1 else 's'}, " if n else ""
        how = "nowcast from a price" if row["price_method"] == "nowcast" else "observed"
        value = interval(
            row["perf_per_dollar"], row["perf_per_dollar_low"], row["perf_per_dollar_high"], 1000.0
        )
        years = ds.data.parameters["years"]
        return (
            f"**{title}:** {_pick(row)} at {money(row['price_usd'])} ({how}, {seen}"
            f"{row['age_days']} days old): {value} relative performance per $1,000 of a "
            f"whole 1-GPU system over {years:g} years; {_odds(row)}."
        )
    return (
        f"**{title}:** {_pick(row)} at {row['provider']}, ${row['usd_per_gpu_hour']:.2f} per "
        f"GPU-hour ({row.get('pricing') or 'list'} price, offer {row['age_days']} days old): "
        f"{value} hours of {ds.data.reference_gpu} work per dollar; {_odds(row)}."
    )


def answer_sentences(ds: Dataset) -> list[str]:
    """The three sentences under the title, for the main workload (headline verdicts)."""
    heads = ds.verdicts.filter(
        (pl.col("kind") == HEADLINE_KIND) & (pl.col("workload") == MAIN_WORKLOAD)
    )
    rows = {r["option"]: r for r in heads.iter_rows(named=True)}
    return [answer_sentence(ds, rows.get(o), o) for o in ANSWER_OPTIONS]


def seventy_b_model(ds: Dataset) -> str | None:
    """The 70B model llm.html shows (the newest id sorts last), or None."""
    found = [m for m in serving_models(ds) if re.search(r"(?i)\b70b\b", m)]
    return sorted(found)[-1] if found else None


def buyer_sections(ds: Dataset) -> list[Section]:
    """The `upgrade` and `rent-or-buy` sections (issue 25, items 2 and 3)."""
    return [
        upgrade_section(ds.upgrade),
        rent_or_buy_section(
            ds.rent_or_buy, ds.rent_or_buy_gpus, ds.data.parameters, ds.data.reference_gpu
        ),
    ]


def front_sections(ds: Dataset) -> list[Section]:
    """The front page's sections below the answer, in reading order."""
    return [
        verdict_section(ds),
        *buyer_sections(ds),
        changes_section(ds),
        llm_section(ds),
        charts_section(),
        headline_section(ds),
        freshness_section(ds),
    ]


def contents(ds: Dataset, sections: list[Section]) -> list[tuple[str, str]]:
    """The table of contents: (label, href) of every section, the LLM page's 70B model first.

    Each buyer's question gets a plain label; the other sections keep their titles.
    """
    questions = {
        "verdict": "What to get by budget and memory (whole system)",
        "upgrade": "I already have a PC: best card for $300-$3,000",
        "rent-or-buy": "Rent or buy at 5-100 % use",
        "llm": "Run an LLM on your own GPU",
    }
    links = [(questions.get(s.id, s.title), f"#{s.id}") for s in sections]
    model = seventy_b_model(ds)
    serving = ("Run a 70B LLM: GPUs and cost per token", f"llm.html#{model_anchor(model)}")
    links.insert(3, serving if model else ("Serve an LLM to N users", "llm.html#serving"))
    return [("The answer and the lead chart", "#answer"), *links, ("More pages", "#more")]


def front_page(ds: Dataset) -> dict:
    """The front page's answer sentences, sections and table of contents (front.html.j2)."""
    sections = front_sections(ds)
    return {
        "sentences": answer_sentences(ds),
        "sections": sections,
        "contents": contents(ds, sections),
    }
