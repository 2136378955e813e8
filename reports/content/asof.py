"""One clock for the site (issue 23, step 7): the as-of date and how old the answer's inputs are.

Every age on the site counts back from the run's as-of date (`ReportData.run_date`: the
newest observation of the snapshot), never from the day the site was built. The first
screen of the front page and of report.md says that date, how many inputs are stale, and
which input behind the answer is the oldest (`first_screen`).

"The answer" is what the verdicts shown rest on, read from the tables, not assumed:
- the price of each buy pick (`verdicts.price_day`, its sources from `current_prices`),
- the offer of each rent pick (`verdicts.offer_day`, provider and price type),
- the benchmark tables the run's relative performance is fitted on (`benchmark_debiased`;
  an estimated pick rests on the fit of all of them), dated by `input_freshness`.
Each is stale past its kind's freshness window (`stale_after_days`). The word "today" is
used only when none of them is (`AsOf.when`); otherwise the site says "as of <date>".
"""

import datetime as dt
from dataclasses import dataclass

import polars as pl

from model.parameters import ModelParameters
from reports.dataset import Dataset

# The freshness window of each kind of answer input: the `stale_after_days` key.
_WINDOW_KEY = {"price": "retail prices", "offer": "cloud prices", "benchmarks": "benchmarks"}
# When a run's parameters lack a window (older runs): the defaults of model/parameters.py.
_DEFAULTS = ModelParameters()

ANSWER_SCHEMA = {
    "kind": pl.Utf8,  # price | offer | benchmarks
    "label": pl.Utf8,  # what a reader is told, e.g. "the new price of rtx-a6000 (keepa-amazon)"
    "day": pl.Date,  # the input's date
    "age_days": pl.Int64,  # days before the as-of date
    "window_days": pl.Int64,
    "stale": pl.Boolean,
}


def _windows(ds: Dataset) -> dict[str, int]:
    given = ds.data.parameters.get("stale_after_days", {})
    defaults = _DEFAULTS.stale_after_days
    return {kind: int(given.get(key, defaults[key])) for kind, key in _WINDOW_KEY.items()}


def _picks(ds: Dataset) -> pl.DataFrame:
    return ds.verdicts.filter(pl.col("gpu_id").is_not_null())


def _prices(ds: Dataset) -> pl.DataFrame:
    """The price behind each buy pick: kind, label, day."""
    buys = (
        _picks(ds)
        .filter(pl.col("price_day").is_not_null())
        .select("gpu_id", "market", day="price_day")
        .unique()
    )
    sources = ds.current_prices.select("gpu_id", "market", "sources")
    return buys.join(sources, on=["gpu_id", "market"], how="left").select(
        kind=pl.lit("price"),
        label=pl.format(
            "the {} price of {} ({})",
            "market",
            "gpu_id",
            pl.col("sources").fill_null("source not recorded"),
        ),
        day="day",
    )


def _offers(ds: Dataset) -> pl.DataFrame:
    """The offer behind each rent pick: kind, label, day, pricing (its window's key)."""
    picks = _picks(ds)
    if "pricing" not in picks.columns:
        picks = picks.with_columns(pricing=pl.lit(None, dtype=pl.Utf8))
    return (
        picks.filter(pl.col("offer_day").is_not_null())
        .select(
            kind=pl.lit("offer"),
            label=pl.format(
                "the {} offer for {} at {}",
                pl.col("price_type").str.replace("_", "-"),
                "gpu_id",
                "provider",
            ),
            day="offer_day",
            pricing="pricing",
        )
        .unique()
    )


def _benchmarks(ds: Dataset) -> pl.DataFrame:
    """The benchmark tables the run's relative performance rests on: kind, label, day."""
    used = ds.benchmarks["source"].unique().to_list() if "source" in ds.benchmarks else []
    return ds.data.freshness.filter(
        (pl.col("input") == "benchmarks") & pl.col("source").is_in(used)
    ).select(
        kind=pl.lit("benchmarks"),
        label=pl.format("the {} benchmark table", "source"),
        day="as_of",
    )


def answer_inputs(ds: Dataset) -> pl.DataFrame:
    """Every input behind the verdicts shown, with its age and whether it is stale.

    Columns: ANSWER_SCHEMA; oldest first. Ages count back from the as-of date (an input
    dated after it has age 0).
    """
    windows = _windows(ds)
    # An offer is stale past its pricing kind's window (the rent verdicts' rule).
    by_kind = {k: int(v) for k, v in (ds.data.parameters.get("cloud_freshness_days") or {}).items()}
    parts = [part(ds) for part in (_prices, _offers, _benchmarks)]
    rows = pl.concat([p for p in parts if not p.is_empty()] or [parts[0]], how="diagonal_relaxed")
    if "pricing" not in rows.columns:
        rows = rows.with_columns(pricing=pl.lit(None, dtype=pl.Utf8))
    kind_window = pl.col("kind").replace_strict(windows, return_dtype=pl.Int64)
    offer_window = pl.col("pricing").replace_strict(by_kind, default=None, return_dtype=pl.Int64)
    return (
        rows.with_columns(
            age_days=(pl.lit(ds.run_date) - pl.col("day"))
            .dt.total_days()
            .clip(lower_bound=0)
            .cast(pl.Int64),
            window_days=pl.when(pl.col("kind") == "offer")
            .then(pl.coalesce(offer_window, kind_window))
            .otherwise(kind_window),
        )
        .with_columns(stale=pl.col("age_days") > pl.col("window_days"))
        .select(list(ANSWER_SCHEMA))
        .cast(ANSWER_SCHEMA)
        .sort("day", "kind", "label")
    )


@dataclass(frozen=True)
class AsOf:
    """The as-of date, the inputs' staleness and the answer's inputs (see the module doc)."""

    as_of: dt.date
    inputs: int  # every input of the run (`input_freshness` rows)
    stale: int  # of them, older than their freshness window
    failed: int  # of them, whose source's last attempt failed (its last rows are kept)
    answer: pl.DataFrame  # answer_inputs

    @property
    def all_fresh(self) -> bool:
        """True when every input behind the answer is within its freshness window."""
        return not self.answer.is_empty() and not self.answer["stale"].any()

    def when(self) -> str:
        """'today' when every input of the answer is fresh, else 'as of <as-of date>'."""
        return "today" if self.all_fresh else f"as of {self.as_of}"

    def oldest(self, *kinds: str) -> dict | None:
        """The oldest answer input (of `kinds`, default all), or None."""
        rows = self.answer.filter(pl.col("kind").is_in(kinds)) if kinds else self.answer
        return rows.row(0, named=True) if rows.height else None


def as_of(ds: Dataset) -> AsOf:
    """The run's as-of state, from the input freshness and the answer's inputs."""
    fresh = ds.data.freshness
    too_old = pl.col("window_days").is_not_null() & (pl.col("age_days") > pl.col("window_days"))
    return AsOf(
        as_of=ds.run_date,
        inputs=fresh.height,
        stale=fresh.filter(too_old).height,
        failed=fresh.filter(pl.col("status") == "failed").height,
        answer=answer_inputs(ds),
    )


def _days(n: int) -> str:
    return "1 day" if n == 1 else f"{n:,} days"


def first_screen(ds: Dataset) -> tuple[str, list[str]]:
    """The first thing a reader sees: the as-of date, then the stale inputs and the oldest.

    A lead sentence and short points (inline Markdown; read on a phone).
    """
    state = as_of(ds)
    lead = (
        f"**Prices and offers as of {state.as_of}.** Every age on this site counts back "
        "from that date."
    )
    stale = f"{state.stale} of {state.inputs} inputs are stale (older than their freshness window)"
    if state.failed:
        stale += f", {state.failed} failed their last update"
    oldest = state.oldest()
    if oldest is None:
        return lead, [stale + ".", "No verdict has a pick: no input is behind the answer."]
    behind = state.answer.filter(pl.col("stale")).height
    stale += (
        f"; so {'is' if behind == 1 else 'are'} {behind} of the {state.answer.height} behind "
        "the answer."
        if behind
        else f"; all {state.answer.height} behind the answer are fresh."
    )
    text = (
        f"The oldest input behind the answer is {oldest['label']} from {oldest['day']} "
        f"({_days(oldest['age_days'])} before the as-of date)"
    )
    price = state.oldest("price", "offer")
    if price is not None and price["label"] != oldest["label"]:
        text += (
            f"; its oldest price is {price['label']} from {price['day']} "
            f"({_days(price['age_days'])} before)"
        )
    return lead, [stale, text + "."]
