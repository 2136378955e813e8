"""The "all tables" page: retail use, relative performance, unpriced GPUs, renting, method."""

import json

import polars as pl

from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Section, frame_table, interval, money_expr
from reports.content.break_even import break_even_days_text, break_even_use_text
from reports.content.prices import consistency_table, unpriced_reasons
from reports.content.quarantine import quarantine_section
from reports.content.renting import stale_note, top_fresh
from reports.content.units import relative_headers
from reports.dataset import Dataset


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
                    **relative_headers(ds.data.reference_gpu),
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
    """GPUs without a price at the as-of date, and why; prices market consistency left out."""
    data, params = ds.data, ds.data.parameters
    unpriced = sorted(set(data.gpus["gpu_id"]) - set(data.perf["gpu_id"]))
    max_age = params.get("price_max_age_days", 730)
    return Section(
        "unpriced",
        "GPUs without a price",
        [
            f"Prices observed in the last {params.get('price_freshness_days', 180)} days are "
            f"used as observed; older ones are nowcast to {data.run_date} with their market "
            "group's price index (`price_method = nowcast`, wider intervals); a GPU last seen on "
            f"sale over {max_age} days before it, or never, has no price as of {data.run_date}. "
            "Market consistency (methodology §4) leaves out a discontinued card's stale new "
            "price and the older of a used price above the new one; each such price is listed "
            "below with why.",
            *([] if unpriced else ["Every catalog GPU has a price."]),
        ],
        tables=[
            unpriced_reasons(
                unpriced, ds.current_prices, ds.price_consistency, ds.price_history, max_age
            ),
            consistency_table(ds.price_consistency),
        ],
    )


def renting_section(ds: Dataset, at: float = 0.15) -> Section:
    """Break-even days of buying versus renting, cheapest offer per GPU and price type."""
    cloud = ds.data.cloud.filter((pl.col("utilization") - at).abs() < 1e-9)
    years = float(ds.data.parameters.get("years", 5.0))
    section = Section("renting", "Renting versus buying")
    if cloud.is_empty():
        section.paragraphs.append("No cloud offer matches a priced GPU.")
        return section
    # Ties (two providers at the same price): the first provider by name, then instance.
    cheapest = (
        cloud.sort("usd_per_gpu_hour", "provider", "instance_type", nulls_last=True)
        .group_by("gpu_id", "price_type", maintain_order=True)
        .first()
        .sort("gpu_id", "price_type")
        .with_columns(
            pl.col("usd_per_gpu_hour").round(2),
            buy=money_expr("buy_cost_usd"),
            resale=money_expr("resale_usd"),
            days=break_even_days_text(years),
            use=break_even_use_text(),
        )
    )
    section.paragraphs.append(
        "Cheapest offer per GPU and price type, and the days after which a 1-GPU system, "
        f"bought, run and then sold used, is cheaper than renting at {at:.0%} utilisation "
        f"(the buy-versus-rent chart draws these lines over time). A break-even later than "
        f"the {years:g}-year ownership period is 'never'; 'break-even use' is the "
        f"utilisation above which owning for {years:g} years, net of the resale value, "
        "costs less than renting the same hours:"
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
                "resale": f"resale after {years:g} years",
                "days": "break-even days",
                "use": "break-even use",
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
    note = stale_note(data.cloud_perf, data.parameters)
    if note:
        section.paragraphs.append(note)
    for workload, title in WORKLOAD_TITLES.items():
        for price_type in ("on_demand", "spot"):
            top = top_fresh(
                data.cloud_perf.filter(
                    (pl.col("workload") == workload) & (pl.col("price_type") == price_type)
                ),
                k,
            ).with_columns(
                ppd=ppd.map_elements(lambda s: interval(*s.values()), return_dtype=pl.Utf8),
                usd=pl.col("usd_per_gpu_hour").round(3),
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
                        "offer_age": "offer as of",
                        "market": "price set by",
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


def detail_sections(ds: Dataset) -> list[Section]:
    """The report's detailed tables (the site's "all tables" page)."""
    return [
        retail_section(ds),
        quarantine_section(ds),
        relative_section(ds),
        unpriced_section(ds),
        renting_section(ds),
        cloud_section(ds),
        method_section(ds),
    ]
