"""Honest dates (issue 23, step 7): one clock, the as-of statement first, "today" only when fresh.

Every age on the site counts back from the run's as-of date; the front page and report.md
open with that date, the number of stale inputs and the oldest input behind the answer; the
word "today" appears only when every input behind the answer is within its freshness
window. Checked on the real build of the bundled snapshot (its answer rests on stale
inputs) and on the same warehouse rendered by the site's own code with freshness windows
wide enough that every input is fresh.
"""

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from reports.content import answer_inputs, as_of
from reports.dataset import prepare_dataset
from reports.methodology import load_methodology_data, render_methodology_markdown
from reports.pages import add_version_files, render_report_markdown, write_version
from reports.site import render_version
from tests.reports.test_site_pages import (  # noqa: F401
    PHONE,
    browser,
    horizontal_overflow,
    open_page,
)
from warehouse.export import open_published

TODAY = re.compile(r"\btoday\b", re.IGNORECASE)
TEXT_SUFFIXES = {".html", ".md", ".svg", ".json", ".csv"}


def todays(folder: Path) -> dict[str, int]:
    """Occurrences of the word 'today' per text file under `folder` (files with any)."""
    found = {}
    for path in sorted(folder.rglob("*")):
        if path.is_file() and path.suffix in TEXT_SUFFIXES:
            n = len(TODAY.findall(path.read_text(encoding="utf-8", errors="replace")))
            if n:
                found[str(path.relative_to(folder))] = n
    return found


def as_of_block(html: str) -> str:
    """The text of the front page's as-of statement (tags dropped)."""
    block = html.split('<div class="asof" id="as-of">', 1)[1].split("</div>", 1)[0]
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", block)).strip()


@pytest.fixture(scope="module")
def con(built):
    connection = open_published(built.published)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def run_date(con) -> dt.date:
    return con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]


@pytest.fixture(scope="module")
def version(built, run_date) -> Path:
    return built.site / run_date.isoformat()


def test_the_stale_snapshot_never_says_today(version):
    # Every page, report.md, chart (SVG text and spec) and CSV download of the version.
    pages = list(version.rglob("*.html"))
    assert len(pages) > 100  # front page, tables, downloads, methodology and GPU pages
    assert todays(version) == {}
    front = (version / "index.html").read_text(encoding="utf-8")
    assert "The best performance per dollar as of " in front


def test_every_age_counts_back_from_the_as_of_date(con, run_date, version):
    freshness = pl.read_csv(version / "data" / "input_freshness.csv", try_parse_dates=True)
    expected = [max(0, (run_date - d).days) for d in freshness["as_of"]]
    assert freshness["age_days"].to_list() == expected
    # The model's ages count from the same date (not the build day).
    off = con.sql(
        "SELECT count(*) FROM verdicts WHERE run_date = ? AND gpu_id IS NOT NULL AND "
        "age_days <> date_diff('day', coalesce(price_day, offer_day), run_date)",
        params=[run_date],
    ).fetchall()[0][0]
    assert off == 0
    off = con.sql(
        "SELECT count(*) FROM current_prices WHERE run_date = ? AND "
        "age_days <> date_diff('day', price_day, run_date)",
        params=[run_date],
    ).fetchall()[0][0]
    assert off == 0
    # The front page's input table shows those ages, and says from which date they count.
    front = (version / "index.html").read_text(encoding="utf-8")
    table = front.split('id="freshness"', 1)[1].split("</table>", 1)[0]
    shown = [int(x) for x in re.findall(r'data-label="age \(days\)">(\d+)<', table)]
    assert shown == expected
    assert f"Ages in days before the as-of date, {run_date}" in front


def behind_the_answer(con, run_date, freshness) -> list[tuple[dt.date, str]]:
    """(day, how the first screen names it) of each input behind a verdict, from the tables."""
    rows = con.sql(
        "SELECT coalesce(price_day, offer_day), CASE WHEN price_day IS NOT NULL "
        "THEN 'the ' || market || ' price of ' || gpu_id "
        "ELSE 'the ' || replace(price_type, '_', '-') || ' offer for ' || gpu_id || ' at ' "
        "|| provider END FROM verdicts WHERE run_date = ? AND gpu_id IS NOT NULL",
        params=[run_date],
    ).fetchall()
    used = [r[0] for r in con.sql("SELECT DISTINCT source FROM benchmark_debiased").fetchall()]
    bench = freshness.filter((pl.col("input") == "benchmarks") & pl.col("source").is_in(used))
    return rows + [
        (d, f"the {s} benchmark table") for s, d in bench.select("source", "as_of").rows()
    ]


def test_the_first_screen_states_the_as_of_date_stale_inputs_and_the_oldest(con, run_date, version):
    freshness = pl.read_csv(version / "data" / "input_freshness.csv", try_parse_dates=True)
    stale = freshness.filter(pl.col("age_days") > pl.col("window_days")).height
    assert stale > 0  # the bundled snapshot's answer rests on stale inputs
    inputs = behind_the_answer(con, run_date, freshness)
    oldest = min(d for d, _ in inputs)
    price = min(d for d, name in inputs if "benchmark" not in name)
    report = (version / "report.md").read_text(encoding="utf-8")
    for text in (
        as_of_block((version / "index.html").read_text(encoding="utf-8")),
        report.split("\n\n", 1)[1].split("\n\nWhich GPU", 1)[0],
    ):
        assert text.replace("*", "").startswith(f"Prices and offers as of {run_date}.")
        assert f"{stale} of {freshness.height} inputs are stale" in text
        said = text.split("The oldest input behind the answer is ", 1)[1]
        assert any(said.startswith(name) for d, name in inputs if d == oldest)
        assert f" from {oldest} ({(run_date - oldest).days} days before the as-of date)" in said
        if price != oldest:
            said = said.split("its oldest price is ", 1)[1]
            assert any(said.startswith(name) for d, name in inputs if d == price)
            assert f" from {price} ({(run_date - price).days} days before)" in said
    # report.md opens with it: before the verdicts.
    assert report.index("Prices and offers as of") < report.index("## What to get")


def test_the_first_screen_fits_a_phone_above_the_verdicts(browser, version):  # noqa: F811
    page, seen = open_page(browser, version / "index.html", PHONE)
    box = page.locator("#as-of").bounding_box()
    verdicts = page.locator("#verdict").bounding_box()
    # On the first screen of a phone (844 px tall), before the verdicts, no sideways scroll.
    assert box is not None and verdicts is not None
    assert box["y"] + box["height"] <= 844 and box["y"] + box["height"] < verdicts["y"]
    assert box["width"] <= PHONE
    assert horizontal_overflow(page) <= 0 and not seen["errors"]
    page.close()


# A version of its own rendered (every page): ~18 s, so in the night tier (conftest.py).
@pytest.mark.slow(seconds=20)
def test_a_fresh_answer_says_today(built, run_date, tmp_path):
    """A warehouse whose run keeps every input within its window: the answer says 'today'.

    A copy of the bundled build's warehouse whose run parameters have freshness windows
    longer than its oldest input, rendered by the site's own code (prepare_dataset,
    write_version, render_version, as the report and site assets call them) into files.
    """
    shutil.copy(built.warehouse, tmp_path / "fresh.duckdb")
    con = duckdb.connect(str(tmp_path / "fresh.duckdb"))
    try:
        params = json.loads(
            con.sql(
                "SELECT parameters FROM model_runs WHERE run_date = ?", params=[run_date]
            ).fetchall()[0][0]
        )
        before = prepare_dataset(con, run_date)
        assert not as_of(before).all_fresh  # the bundled snapshot as built
        longest = int(answer_inputs(before)["age_days"].max())
        longest = max(longest, int(before.data.freshness["age_days"].max())) + 1
        params["stale_after_days"] = dict.fromkeys(params["stale_after_days"], longest)
        params["cloud_freshness_days"] = dict.fromkeys(params["cloud_freshness_days"], longest)
        con.execute(
            "UPDATE model_runs SET parameters = ? WHERE run_date = ?",
            [json.dumps(params), run_date],
        )
        ds = prepare_dataset(con, run_date)
        inputs = answer_inputs(ds)
        assert inputs.height > 0 and not inputs["stale"].any()
        assert as_of(ds).when() == "today"
        build = tmp_path / "build"
        build.mkdir()
        charts = built.root / ".build" / run_date.isoformat() / "charts"
        write_version(ds, con, build)
        folder = render_version(
            tmp_path / "site",
            run_date,
            render_report_markdown(ds),
            sorted(p for p in charts.iterdir() if p.is_file()),
            render_methodology_markdown(load_methodology_data(con, run_date)),
            extra=lambda f: add_version_files(build, f),
        )
    finally:
        con.close()
    front = (folder / "index.html").read_text(encoding="utf-8")
    assert "The best performance per dollar today" in front
    block = as_of_block(front)
    assert f"0 of {ds.data.freshness.height} inputs are stale" in block
    assert f"all {inputs.height} behind the answer are fresh" in block
    # Only the answer says 'today': GPU pages, tables and charts keep the date.
    assert todays(folder) == {"index.html": 1}
