"""What changed since the previous published version (reports/changes.py computes it)."""

import polars as pl

from model.verdicts import OPTION_TITLES
from reports.changes import Changes
from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Section, Table, frame_table, money_expr
from reports.content.verdicts import limit_label
from reports.dataset import Dataset
from warehouse.versions import parse_version

_WORKLOAD_ORDER = {w: i for i, w in enumerate(WORKLOAD_TITLES)}


def _in_workload_order(frame: pl.DataFrame, *by: str) -> pl.DataFrame:
    """Rows sorted by workload in the site's order (unknown workloads last), then `by`."""
    key = pl.col("workload").replace_strict(
        _WORKLOAD_ORDER, default=len(_WORKLOAD_ORDER), return_dtype=pl.Int32
    )
    return frame.sort(key, *by, nulls_last=True)


def _verdicts_table(verdicts: pl.DataFrame) -> Table:
    rows = _in_workload_order(verdicts, "kind", "limit", "option").with_columns(
        what=pl.format(
            "{}, {} {}",
            pl.col("workload").replace_strict(WORKLOAD_TITLES, default=pl.col("workload")),
            pl.col("option").replace_strict(OPTION_TITLES, default=pl.col("option")),
            pl.struct("kind", "limit").map_elements(
                lambda s: limit_label(s["kind"], s["limit"]), return_dtype=pl.Utf8
            ),
        )
    )
    return frame_table(
        rows,
        {"what": "verdict", "before": "before", "after": "after"},
        title="Verdicts that changed",
    )


def _ranks_table(ranks: pl.DataFrame) -> Table:
    rows = _in_workload_order(ranks, "market", "rank_after").with_columns(
        pl.col("workload").replace_strict(WORKLOAD_TITLES, default=pl.col("workload")),
        before=pl.col("rank_before").cast(pl.Utf8).fill_null("unpriced"),
        now=pl.col("rank_after").cast(pl.Utf8).fill_null("unpriced"),
        moved=pl.when(pl.col("move") > 0)
        .then(pl.format("up {}", pl.col("move")))
        .when(pl.col("move") < 0)
        .then(pl.format("down {}", -pl.col("move")))
        .otherwise(pl.lit("")),
    )
    return frame_table(
        rows,
        {
            "workload": "workload",
            "market": "market",
            "gpu_id": "GPU",
            "before": "rank before",
            "now": "rank after",
            "moved": "move",
        },
        title=(
            "Rank moves (1-GPU systems in the top 10 of either version: two places "
            "or more, or into or out of the top 3 or top 10)"
        ),
    )


def _prices_table(prices: pl.DataFrame) -> Table:
    rows = prices.with_columns(
        before=money_expr("before"),
        now=money_expr("after"),
        change=pl.format("{} %", pl.col("change_pct").round(1)),
        noise=pl.format("± {} %", pl.col("noise_pct").round(1)),
        method=pl.format("{} → {}", pl.col("method_before"), pl.col("method_after")),
    )
    return frame_table(
        rows,
        {
            "gpu_id": "GPU",
            "market": "market",
            "before": "before",
            "now": "after",
            "change": "change",
            "noise": "noise",
            "method": "price method",
        },
        title="Prices that moved beyond their noise (5 % or the two intervals' spread)",
    )


def _gpus_table(gpus: pl.DataFrame) -> Table:
    return frame_table(gpus, {"gpu_id": "GPU", "change": "change"}, title="GPUs")


def _stale_table(stale: pl.DataFrame) -> Table:
    return frame_table(
        stale,
        {
            "input": "input",
            "source": "source",
            "status_before": "was",
            "status": "after",
            "detail": "why",
        },
        title="Inputs that went stale or failed",
    )


def _change_tables(changes: Changes) -> list[Table]:
    """One table per kind of change that has rows, in the page's order."""
    steps = (
        (changes.verdicts, _verdicts_table),
        (changes.ranks, _ranks_table),
        (changes.prices, _prices_table),
        (changes.gpus, _gpus_table),
        (changes.stale, _stale_table),
    )
    return [build(frame) for frame, build in steps if not frame.is_empty()]


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
    day, number = parse_version(ds.version)
    if number > 1:
        section.paragraphs.append(
            f"This version is run {number} of the as-of date {day.isoformat()}: the date was "
            "already published, and a published version is never rewritten, so this run is "
            "a new version beside it."
        )
    if changes.missing:
        section.paragraphs.append(
            f"Version {changes.previous_version} kept no {', '.join(changes.missing)} "
            "table(s); those parts cannot be compared."
        )
    if changes.empty:
        section.paragraphs.append("Nothing changed beyond the noise.")
        return section
    section.paragraphs.append(
        f"*Before*: version {changes.previous_version}; *after*: this version, {ds.version}."
    )
    section.tables.extend(_change_tables(changes))
    return section
