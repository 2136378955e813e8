"""The site a reader uses (issue 13): the front page at desktop and phone widths, the
verdicts by budget and memory against the model tables, per-GPU pages, downloads, and
"what changed" between two runs on different data. Headless Chromium through Playwright."""

import dataclasses
import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest

from model.parameters import WORKLOADS, ModelParameters
from model.ties import tie_label
from model.uncertainty import performance_replicates
from model.verdicts import BUDGETS_USD, rental_hours, verdicts
from pipeline.defs.model.inputs import bootstrap
from reports.content import Cell, verdict_cell
from reports.dataset import prepare_dataset
from reports.downloads import DOWNLOAD_DAYS
from reports.pages import (
    cell_html,
    gpu_pages,
    render_front_page,
    render_gpu_page,
    render_report_markdown,
)
from reports.report import load_report_data
from reports.safety import citation_url, safe_url, slug
from warehouse.export import open_published
from warehouse.reads import read_latest_offers

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE, DESKTOP = 390, 1400


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Debian chromium is not installed (.ci/run installs it)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chrome
        chrome.close()


@pytest.fixture(scope="module")
def con(built):
    connection = open_published(built.published)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def run_date(con):
    return con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]


@pytest.fixture(scope="module")
def dataset(con, run_date):
    return prepare_dataset(con, run_date)


def open_page(browser, path: Path, width: int):
    """The page at `width` px, with its requests and console errors recorded."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    seen = {"requests": [], "errors": []}
    page.on("request", lambda r: seen["requests"].append(r.url))
    page.on("console", lambda m: m.type == "error" and seen["errors"].append(m.text))
    page.on("pageerror", lambda e: seen["errors"].append(str(e)))
    page.goto(path.as_uri())
    page.wait_for_load_state("load")
    return page, seen


# Screenshots keep the first screens of a page, as a reader first sees it: a full-page shot
# of the front page is ~75,000 px tall at phone width (3-6 s of Chromium's time each).
SHOT_SCREENS = 3


def screenshot_top(page, path: Path, screens: int = SHOT_SCREENS) -> Path:
    """A PNG of the page's first `screens` window heights (less where the page is shorter)."""
    size = page.viewport_size
    height = min(page.evaluate("document.documentElement.scrollHeight"), screens * size["height"])
    clip = {"x": 0, "y": 0, "width": size["width"], "height": height}
    page.screenshot(path=str(path), full_page=True, clip=clip)
    return path


def horizontal_overflow(page) -> int:
    """How many px the page is wider than the window (0: no sideways scrolling)."""
    return page.evaluate(
        "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        " - window.innerWidth"
    )


def loaded_images(page, selector: str = "figure img") -> list[dict]:
    return page.evaluate(
        f"[...document.querySelectorAll('{selector}')].map(i => ({{src: i.currentSrc,"
        " ok: i.complete && i.naturalWidth > 0, w: i.naturalWidth}))"
    )


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_front_page_shows_the_charts_without_sideways_scrolling(built, browser, width):
    page, seen = open_page(browser, built.site / "latest" / "index.html", width)
    images = loaded_images(page)
    assert len(images) >= 6 and all(i["ok"] for i in images), images
    # A phone gets the narrow variants, each no wider than the phone (legible text).
    narrow = [i for i in images if i["src"].endswith(".narrow.svg")]
    if width == PHONE:
        assert len(narrow) == len(images) and max(i["w"] for i in images) <= width - 18
    else:
        assert not narrow
    assert horizontal_overflow(page) <= 0
    assert not seen["errors"], seen["errors"]
    assert seen["requests"] and all(u.startswith("file://") for u in seen["requests"])
    assert page.locator("h2", has_text="What to get, by budget and by memory").count() == 1
    assert page.locator("table.verdict").count() == 6  # buy and rent x 3 workloads
    shots = built.root / ".build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    path = shots / f"front-{width}.png"
    assert screenshot_top(page, path).stat().st_size > 50_000
    page.close()


# Only GPU x workloads eligible for a pick compete (model/eligibility.py).
def eligible(table: str) -> str:
    """`table`'s rows whose GPU x workload is eligible, as a subquery."""
    return (
        f"(SELECT t.* FROM {table} t SEMI JOIN evidence_basis e ON e.run_date = t.run_date "
        "AND e.gpu_id = t.gpu_id AND e.workload = t.workload AND e.eligible)"
    )


TIERS = (("headline", 0), *(("memory", t) for t in (8, 12, 16, 24, 48, 80)))


def expected_verdicts(con, run_date, hours: float) -> dict[tuple, tuple]:
    """(workload, kind, limit, option) -> (gpu_id, system_gpus, perf_per_dollar), by SQL."""
    out = {}
    for market, option in (("new", "buy_new"), ("used", "buy_used")):
        for budget in BUDGETS_USD:
            rows = con.sql(
                "SELECT workload, arg_max(gpu_id, (perf_per_dollar, -system_gpus)), "
                "arg_max(system_gpus, (perf_per_dollar, -system_gpus)), max(perf_per_dollar) "
                f"FROM {eligible('perf_per_dollar')} WHERE run_date = ? AND market = ? "
                "AND total_cost_usd <= ? GROUP BY workload",
                params=[run_date, market, budget],
            ).fetchall()
            for workload, gpu, size, ppd in rows:
                out[(workload, "budget", float(budget), option)] = (gpu, size, ppd)
        for kind, tier in TIERS:
            rows = con.sql(
                "SELECT p.workload, arg_max(p.gpu_id, p.perf_per_dollar), max(p.perf_per_dollar) "
                f"FROM {eligible('perf_per_dollar')} p JOIN gpus g USING (gpu_id) "
                "WHERE p.run_date = ? AND p.market = ? AND p.system_gpus = 1 "
                "AND g.memory_gb >= ? GROUP BY ALL",
                params=[run_date, market, tier],
            ).fetchall()
            for workload, gpu, ppd in rows:
                out[(workload, kind, float(tier), option)] = (gpu, 1, ppd)
    # Renting: fresh offers only (an offer past its freshness window never wins a cell).
    for price_type, option in (("on_demand", "rent_on_demand"), ("spot", "rent_spot")):
        offers = (
            "SELECT c.*, coalesce(o.n, 1) AS gpu_count FROM "
            f"{eligible('cloud_perf_per_dollar')} c LEFT JOIN "
            "(SELECT provider, instance_type, region, price_type, gpu_id, max(gpu_count) AS n "
            "FROM cloud_offers GROUP BY ALL) o USING (provider, instance_type, region, "
            "price_type, gpu_id) WHERE c.run_date = ? AND c.price_type = ? AND c.fresh"
        )
        for budget in BUDGETS_USD:
            rows = con.sql(
                f"SELECT workload, arg_max(gpu_id, perf_per_dollar), max(perf_per_dollar) "
                f"FROM ({offers}) WHERE usd_per_gpu_hour * gpu_count * ? <= ? GROUP BY workload",
                params=[run_date, price_type, hours, budget],
            ).fetchall()
            for workload, gpu, ppd in rows:
                out[(workload, "budget", float(budget), option)] = (gpu, 1, ppd)
        for kind, tier in TIERS:
            rows = con.sql(
                f"SELECT c.workload, arg_max(c.gpu_id, c.perf_per_dollar), "
                f"max(c.perf_per_dollar) FROM ({offers}) c JOIN gpus g USING (gpu_id) "
                "WHERE g.memory_gb >= ? GROUP BY ALL",
                params=[run_date, price_type, tier],
            ).fetchall()
            for workload, gpu, ppd in rows:
                out[(workload, kind, float(tier), option)] = (gpu, 1, ppd)
    return out


def test_budget_and_memory_answers_equal_the_tables(con, run_date, dataset):
    expected = expected_verdicts(con, run_date, rental_hours(dataset.data.parameters))
    verdicts = dataset.verdicts
    assert verdicts.height == 3 * (len(BUDGETS_USD) + 6 + 1) * 4  # + the headline row
    for row in verdicts.iter_rows(named=True):
        key = (row["workload"], row["kind"], row["limit"], row["option"])
        if key not in expected:
            assert row["gpu_id"] is None, key
            continue
        gpu, size, ppd = expected[key]
        assert (row["gpu_id"], row["system_gpus"]) == (gpu, size), key
        assert row["perf_per_dollar"] == pytest.approx(ppd, rel=1e-9), key
        assert 0 < row["p_best"] <= 1 and row["price_method"] in (None, "observed", "nowcast")
        assert row["perf_per_dollar_low"] <= row["perf_per_dollar"] <= row["perf_per_dollar_high"]
    # The memory verdicts are the model's recommendations, row for row.
    recs = con.sql(
        "SELECT workload, memory_tier_gb, option, gpu_id, p_best FROM recommendations "
        "WHERE run_date = ?",
        params=[run_date],
    ).fetchall()
    names = {"rent": "rent_on_demand"}
    memory = verdicts.filter(pl.col("kind") == "memory")
    for workload, tier, option, gpu, p_best in recs:
        row = memory.filter(
            (pl.col("workload") == workload)
            & (pl.col("limit") == tier)
            & (pl.col("option") == names.get(option, option))
        ).row(0, named=True)
        assert (row["gpu_id"], row["p_best"]) == (gpu, p_best)


def test_front_page_shows_the_verdicts_of_the_tables(built, browser, dataset):
    page, _ = open_page(browser, built.site / "latest" / "index.html", DESKTOP)
    tables = page.evaluate(
        """[...document.querySelectorAll('table.verdict')].map(t =>
            [...t.querySelectorAll('tbody tr')].map(r =>
                [...r.children].map(c => (c.querySelector('strong') || c).textContent.trim())))"""
    )
    page.close()
    options = [("buy_new", "buy_used"), ("rent_on_demand", "rent_spot")]
    for i, workload in enumerate(("training_16bit", "inference_16bit", "inference_8bit")):
        for j, pair in enumerate(options):
            rows = tables[2 * i + j]
            verdicts = dataset.verdicts.filter(
                (pl.col("workload") == workload) & (pl.col("kind") != "headline")
            )
            limits = verdicts.select("kind", "limit").unique(maintain_order=True).rows()
            assert len(rows) == len(limits)
            for row, (kind, limit) in zip(rows, limits, strict=True):
                label = f"≤ ${limit:,.0f}" if kind == "budget" else f"≥ {limit:.0f} GB"
                assert row[0] == label
                for cell, option in zip(row[1:], pair, strict=True):
                    v = verdicts.filter(
                        (pl.col("kind") == kind)
                        & (pl.col("limit") == limit)
                        & (pl.col("option") == option)
                    ).row(0, named=True)
                    if v["gpu_id"] is None:
                        assert cell.startswith("—")
                    elif v["tie_gpu_ids"]:
                        sizes = v["tie_system_gpus"] if option.startswith("buy") else None
                        assert cell == tie_label(v["tie_gpu_ids"], sizes)
                    else:
                        size = v["system_gpus"] if option.startswith("buy") else 1
                        assert cell == (f"{size}× " if size > 1 else "") + v["gpu_id"]


def test_a_page_per_priced_gpu_with_its_price_history(built, browser, con, run_date):
    priced = [
        g
        for (g,) in con.sql(
            "SELECT DISTINCT gpu_id FROM current_prices WHERE run_date = ?", params=[run_date]
        ).fetchall()
    ]
    catalog = [g for (g,) in con.sql("SELECT gpu_id FROM gpus").fetchall()]
    folder = built.site / "latest"
    assert len(priced) >= 45
    assert {p.stem for p in (folder / "gpu").glob("*.html")} == set(catalog)
    for gpu in priced:
        html = (folder / "gpu" / f"{gpu}.html").read_text(encoding="utf-8")
        assert f'src="../charts/gpu/{gpu}.svg"' in html, gpu
        assert (folder / "charts" / "gpu" / f"{gpu}.svg").stat().st_size > 5_000
        assert (folder / "charts" / "gpu" / f"{gpu}.vl.json").is_file()
    for gpu, width in (("rtx-4090", PHONE), ("h100-sxm5-80gb", DESKTOP)):
        page, seen = open_page(browser, folder / "gpu" / f"{gpu}.html", width)
        assert all(i["ok"] for i in loaded_images(page, "img")) and loaded_images(page, "img")
        assert horizontal_overflow(page) <= 0 and not seen["errors"]
        text = page.locator("main").inner_text()
        for heading in ("Where it ranks", "Performance", "Prices", "Specs", "Benchmarks"):
            assert page.locator("h2", has_text=heading).count() >= 1, (gpu, heading)
        assert f"Prices as of {run_date}" in text and "Cloud offers" in text
        # The benchmarks that fed it link to their citations (GitHub, at the commit).
        links = page.locator("#benchmarks a").evaluate_all("as => as.map(a => a.href)")
        assert links and all(u.startswith("https://github.com/") for u in links)
        page.close()


def test_every_published_table_downloads_as_csv_and_parquet(built, browser, con, run_date):
    folder = built.site / "latest"
    page, seen = open_page(browser, folder / "downloads.html", PHONE)
    hrefs = page.locator("main a").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert horizontal_overflow(page) <= 0 and not seen["errors"]
    page.close()
    tables = [
        t
        for (t,) in con.sql(
            "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
        ).fetchall()
    ]
    for table in [*tables, "gpu_prices_monthly", "verdicts", "input_freshness"]:
        assert f"data/{table}.parquet" in hrefs, table
        assert f"data/{table}.csv" in hrefs or f"data/{table}.csv.gz" in hrefs, table
    for href in hrefs:
        if href.startswith(("data/", "charts/")) or href.endswith(".md"):
            assert (folder / href).stat().st_size > 0, href
    assert sum(h.endswith(".vl.json") for h in hrefs) >= 14  # 7 charts, wide and narrow
    # A download holds what the warehouse holds (model tables: this run's rows).
    perf = duckdb.sql(f"SELECT count(*) FROM '{folder / 'data' / 'perf_per_dollar.parquet'}'")
    expected = con.sql(
        "SELECT count(*) FROM perf_per_dollar WHERE run_date = ?", params=[run_date]
    ).fetchall()
    assert perf.fetchall() == expected
    # History tables are bounded to one night: the listings behind today's observed prices,
    # the last DOWNLOAD_DAYS days of other dated inputs, the whole history only by month.
    data = folder / "data"
    behind = con.sql(
        "SELECT count(*) FROM price_observations o JOIN current_prices c"
        " ON o.gpu_id = c.gpu_id AND o.market = c.market"
        " AND CAST(o.observed_at AS DATE) = c.price_day"
        " WHERE c.run_date = ? AND c.price_method = 'observed' AND c.market <> 'mean'"
        " AND o.drop_reason IS NULL",
        params=[run_date],
    ).fetchall()
    csv = next(data.glob("price_observations.csv*"))
    assert duckdb.sql(f"SELECT count(*) FROM read_csv('{csv}')").fetchall() == behind
    assert 0 < behind[0][0] < con.sql("SELECT count(*) FROM price_observations").fetchall()[0][0]
    since = run_date - dt.timedelta(days=DOWNLOAD_DAYS - 1)
    for table, column in (("gpu_prices_daily", "day"), ("price_drops", "day")):
        # The last DOWNLOAD_DAYS days, plus the rows behind the run's prices (older).
        got = duckdb.sql(f"SELECT count(*) FROM '{data / table}.parquet'").fetchall()[0][0]
        recent = con.sql(
            f"SELECT count(*) FROM {table} WHERE CAST({column} AS DATE) BETWEEN ? AND ?",
            params=[since, run_date],
        ).fetchall()[0][0]
        assert recent <= got < con.sql(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    # Cloud offers: every offer the model read (tests/reports/test_machine_access.py).
    offers = duckdb.sql(f"SELECT count(*) FROM '{data / 'cloud_offers.parquet'}'").fetchall()
    assert offers == [(read_latest_offers(con, run_date).height,)]
    monthly = duckdb.sql(
        f"SELECT count(*), min(month) FROM '{data / 'gpu_prices_monthly.parquet'}'"
    ).fetchall()[0]
    assert (
        monthly
        == con.sql(
            "SELECT count(*), min(month) FROM (SELECT DISTINCT gpu_id, market, "
            "CAST(date_trunc('month', day) AS DATE) AS month FROM gpu_prices_daily WHERE day <= ?)",
            params=[run_date],
        ).fetchall()[0]
    )
    assert not (data / "publish_changes.parquet").exists()  # bookkeeping, never published


def test_scraped_strings_are_escaped_on_the_new_pages(dataset):
    evil = '<script>alert(1)</script>"><img src=x onerror=alert(2)>|pipe\nline'
    offers = dataset.offers.with_columns(instance_type=pl.lit(evil), citation=pl.lit(evil))
    gpus = dataset.data.gpus.with_columns(
        name=pl.lit(evil), source=pl.lit(evil), source_url=pl.lit("javascript:alert(3)")
    )
    verdicts = dataset.verdicts.with_columns(why=pl.lit(evil))
    freshness = dataset.data.freshness.with_columns(source=pl.lit(evil), detail=pl.lit(evil))
    bad = dataclasses.replace(
        dataset,
        offers=offers,
        verdicts=verdicts,
        data=dataclasses.replace(dataset.data, gpus=gpus, freshness=freshness),
    )
    pages = [render_front_page(bad)]
    pages += [render_gpu_page(bad.version, page) for page in gpu_pages(bad, {"rtx-4090"})[:8]]
    for html in pages:
        assert "<script>" not in html and "<img src=x" not in html
        assert 'href="javascript:' not in html and '<a href="javascript' not in html
        assert "&lt;script&gt;" in html
    cell = str(cell_html(Cell(evil, href=evil, lines=(evil,)), root="../", label=evil))
    assert "<script>" not in cell and "<img" not in cell and cell.count("<a ") == 1
    # Markdown: a pipe or newline in a scraped string cannot break a table.
    fresh = render_report_markdown(bad).split("## How old each input is")[1].split("\n## ")[0]
    rows = [line for line in fresh.splitlines() if line.startswith("| ")]
    assert len(rows) == dataset.data.freshness.height + 1
    assert all(line.count(" | ") == 7 for line in rows)


def test_link_and_path_guards():
    assert safe_url("https://www.nvidia.com/a?b=1") == "https://www.nvidia.com/a?b=1"
    for bad in ("javascript:alert(1)", "http://www.nvidia.com/", "https://evil.example/", ""):
        assert safe_url(bad) is None
    assert citation_url("lambdal/deeplearning-benchmark pytorch/x.csv@67a9bb51") == (
        "https://github.com/lambdal/deeplearning-benchmark/blob/67a9bb51/pytorch/x.csv"
    )
    assert citation_url('a/b "><script>@1234567') is None
    assert slug("rtx-4090") == "rtx-4090"
    for bad in ("../x", "a/b", "<x>", ""):
        with pytest.raises(ValueError):
            slug(bad)


@pytest.mark.parametrize(
    "name",
    [
        "tables.html",
        "gpus.html",
        "llm.html",
        "methodology.html",
        "downloads.html",
        "../index.html",
        "compare/index.html",
        "compare/b200-vs-b300.html",
    ],
)
def test_every_page_fits_a_phone(built, browser, name):
    page, seen = open_page(browser, built.site / "latest" / name, PHONE)
    assert horizontal_overflow(page) <= 0, name
    assert not seen["errors"] and all(u.startswith("file://") for u in seen["requests"])
    page.close()


@pytest.mark.parametrize("width", [DESKTOP, PHONE])
def test_a_compare_page_reads_as_cards_on_a_phone(built, browser, width):
    path = built.site / "latest" / "compare" / "rtx-3090-vs-rtx-4090.html"
    page, seen = open_page(browser, path, width)
    assert horizontal_overflow(page) <= 0 and not seen["errors"]
    assert all(u.startswith("file://") for u in seen["requests"])
    assert "Verdict:" in page.locator("#verdict").inner_text()
    assert page.locator("table.cards").count() >= 5
    display = page.evaluate("getComputedStyle(document.querySelector('table.cards tr')).display")
    assert display == ("block" if width == PHONE else "table-row")
    shots = built.root / ".build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    screenshot_top(page, shots / f"compare-{width}.png")
    page.close()


def test_front_page_prints_without_navigation_or_scroll_boxes(built, browser):
    page, _ = open_page(browser, built.site / "latest" / "index.html", DESKTOP)
    page.emulate_media(media="print")
    assert page.evaluate("getComputedStyle(document.querySelector('nav')).display") == "none"
    assert (
        page.evaluate("getComputedStyle(document.querySelector('.scroll')).overflowX") == "visible"
    )
    pdf = built.root / ".build" / "screenshots" / "front.pdf"
    pdf.parent.mkdir(parents=True, exist_ok=True)
    page.pdf(path=str(pdf), format="A4")
    assert pdf.stat().st_size > 100_000
    page.close()


def test_price_history_chart_stays_under_altairs_row_limit_over_long_histories():
    import datetime as dt

    import polars as pl

    from reports.charts import MAX_CHART_ROWS, price_history_chart, price_history_data

    # Ten years of daily prices for nine GPUs in two markets: 65,700 rows.
    days = pl.date_range(dt.date(2016, 1, 1), dt.date(2025, 12, 31), eager=True)
    history = pl.DataFrame(
        {
            "gpu_id": [f"g{i}" for i in range(9) for _ in range(2) for _ in days],
            "market": [m for _ in range(9) for m in ("new", "used") for _ in days],
            "day": [d for _ in range(18) for d in days],
            "price_usd": 1000.0,
            "n_observations": 1,
        }
    )
    current = pl.DataFrame(schema={"gpu_id": pl.Utf8, "market": pl.Utf8, "price_usd": pl.Float64,
                                   "price_low": pl.Float64, "price_high": pl.Float64,
                                   "price_method": pl.Utf8, "age_days": pl.Int32})  # fmt: skip
    gpus = [f"g{i}" for i in range(9)]
    data = price_history_data(history, current, gpus, dt.date(2026, 1, 1))
    assert 0 < data.height <= MAX_CHART_ROWS
    price_history_chart(history, current, gpus, dt.date(2026, 1, 1)).to_dict()  # no MaxRowsError


def test_verdicts_without_any_cloud_offer_say_why(con, run_date):
    """A first night whose cloud runs all failed: renting has no verdict, and says why."""
    data = load_report_data(con, run_date)
    params = parameters_from_stored(data.parameters)
    assert json.loads(params.to_json()) == data.parameters
    offers = read_latest_offers(con, run_date)
    found = verdicts(
        data.perf,
        data.cloud_perf.clear(),
        data.recommendations,
        offers.clear(),
        bootstrap(con, run_date, params),
        performance_replicates(data.relative, params),
        data.parameters,
        run_date,
        WORKLOADS,
    )
    # (memory verdicts come from the stored recommendations, which this test keeps)
    rent = found.filter(pl.col("option").str.starts_with("rent") & (pl.col("kind") == "budget"))
    assert rent.height and rent["gpu_id"].null_count() == rent.height
    assert set(rent["why"]) == {"no cloud offer is priced for this option yet"}
    assert found["why"].null_count() == 0
    assert all(str(verdict_cell(row)) for row in found.iter_rows(named=True))


def parameters_from_stored(stored: dict) -> ModelParameters:
    """The ModelParameters of a `model_runs.parameters` JSON (keys and tuples restored)."""
    base = ModelParameters()
    values = {}
    for f in dataclasses.fields(ModelParameters):
        if f.name not in stored:
            continue
        value, default = stored[f.name], getattr(base, f.name)
        if isinstance(default, dict) and default:
            key_type = type(next(iter(default)))
            value = {key_type(k): tuple(v) if isinstance(v, list) else v for k, v in value.items()}
        elif isinstance(default, tuple):
            value = tuple(value)
        values[f.name] = value
    return ModelParameters(**values)
