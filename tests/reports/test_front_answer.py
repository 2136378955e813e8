"""The answer first (issue 25, items 1-3): three sentences, a table of contents, the
`upgrade` and `rent-or-buy` sections, within two screens at 1400 and 390 px."""

import re

import polars as pl
import pytest
from lxml import html

from model.rent_or_buy import RENT_OR_BUY_UTILIZATIONS
from model.upgrade import UPGRADE_BUDGETS_USD
from reports.content import as_of
from reports.dataset import prepare_dataset
from tests.reports.test_site_pages import horizontal_overflow
from warehouse.export import open_published

# The two screens the answer must fit in: a desktop and a phone (iPhone 12-15 viewport).
SCREENS = {1400: 900, 390: 844}


@pytest.fixture(scope="module")
def dataset(built):
    con = open_published(built.published)
    run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    yield prepare_dataset(con, run_date)
    con.close()


@pytest.fixture(scope="module")
def front(built):
    return html.fromstring((built.site / "latest" / "index.html").read_text(encoding="utf-8"))


def text(node) -> str:
    return " ".join(node.text_content().split())


def test_three_sentences_name_the_headline_picks_with_price_and_why(front, dataset):
    items = front.xpath('//div[@id="answer-first"]//li')
    assert len(items) == 3
    heads = dataset.verdicts.filter(
        (pl.col("kind") == "headline") & (pl.col("workload") == "training_16bit")
    )
    for item, (title, option) in zip(
        items,
        [
            ("Best to buy new:", "buy_new"),
            ("Best to buy used:", "buy_used"),
            ("Best to rent:", "rent_on_demand"),
        ],
        strict=True,
    ):
        sentence = text(item)
        assert sentence.startswith(title), sentence
        row = heads.filter(pl.col("option") == option).row(0, named=True)
        assert row["gpu_id"] in sentence and "$" in sentence
        # The why: the value with its interval and P(best).
        assert f"{row['p_best'] * 100:.0f} % of the bootstrap draws" in sentence
        assert re.search(r"\d \(\d[\d.]*–\d[\d.]*\)", sentence), sentence
        if option.startswith("buy"):
            assert f"{row['age_days']} days old" in sentence and "observation" in sentence
        else:
            assert row["provider"] in sentence and "offer" in sentence
    heading = text(front.xpath('//div[@id="answer-first"]/p')[0])
    # "today" only when every input behind the answer is fresh.
    assert ("today" in heading) == as_of(dataset).all_fresh
    assert str(dataset.run_date) in text(front.xpath('//div[@id="as-of"]')[0])


def test_every_contents_link_reaches_a_section(built, front):
    links = front.xpath('//nav[@id="contents"]/a/@href')
    ids = set(front.xpath("//@id"))
    llm = html.fromstring((built.site / "latest" / "llm.html").read_text(encoding="utf-8"))
    llm_ids = set(llm.xpath("//@id"))
    for href in links:
        page, _, anchor = href.partition("#")
        assert anchor, href
        assert anchor in ({"": ids, "llm.html": llm_ids}[page]), href
    # Every section of the front page is listed, the buyer's questions and the 70B LLM too.
    sections = front.xpath("//main/section/@id")
    assert {f"#{s}" for s in sections} <= set(links)
    assert {"#upgrade", "#rent-or-buy", "#verdict", "#llm"} <= set(links)
    assert any(re.fullmatch(r"llm\.html#model-.*70b", h) for h in links), links


def test_upgrade_section_shows_every_budget_and_workload(front, dataset):
    section = front.xpath('//section[@id="upgrade"]')[0]
    tables = section.xpath(".//table[@class='cards']")
    assert len(tables) == 3  # one per workload
    for table, workload in zip(
        tables, ("training_16bit", "inference_16bit", "inference_8bit"), strict=True
    ):
        rows = table.xpath("./tbody/tr")
        assert [text(r.xpath("./th")[0]) for r in rows] == [
            f"≤ ${b:,.0f}" for b in UPGRADE_BUDGETS_USD
        ]
        picks = dataset.upgrade.filter(
            (pl.col("workload") == workload) & (pl.col("criterion") == "performance")
        )
        for row, budget in zip(rows, UPGRADE_BUDGETS_USD, strict=True):
            for cell, market in zip(row.xpath("./td"), ("new", "used"), strict=True):
                pick = picks.filter(
                    (pl.col("budget_usd") == budget) & (pl.col("market") == market)
                ).row(0, named=True)
                if pick["gpu_id"] is None:
                    assert text(cell).startswith("—")
                else:
                    assert pick["gpu_id"] in text(cell)
                    assert f"PSU ≥ {pick['psu_w']} W" in text(cell)
    assert section.xpath('.//a[@href="#verdict"]')  # the whole-system view beside it


def test_rent_or_buy_section_shows_every_utilisation(front, dataset):
    section = front.xpath('//section[@id="rent-or-buy"]')[0]
    grid, per_gpu = section.xpath(".//table[@class='cards']")
    labels = [text(r.xpath("./th")[0]) for r in grid.xpath("./tbody/tr")]
    assert [label.split(" use")[0] for label in labels] == [
        f"{u:.0%}" for u in RENT_OR_BUY_UTILIZATIONS
    ]
    answers = {text(c.xpath("./strong")[0]) for c in grid.xpath(".//td[strong]")}
    assert answers <= {"buy", "rent", "—"} and len(grid.xpath("./thead/tr/th")) >= 3
    on_demand = dataset.rent_or_buy_gpus.filter(pl.col("price_type") == "on_demand")
    assert len(per_gpu.xpath("./tbody/tr")) == on_demand["gpu_id"].n_unique() > 0


def bottom(page, selector: str) -> float:
    """Where the element ends, in px from the top of the page."""
    return page.evaluate(
        f"document.querySelector('{selector}').getBoundingClientRect().bottom + window.scrollY"
    )


@pytest.mark.parametrize("width", list(SCREENS))
def test_answer_and_contents_within_two_screens(built, browser, width):
    height = SCREENS[width]
    page = browser.new_page(viewport={"width": width, "height": height})
    errors = []
    page.on("console", lambda m: m.type == "error" and errors.append(m.text))
    page.goto((built.site / "latest" / "index.html").as_uri())
    page.wait_for_load_state("load")
    # The first screen states the data's age; the answer and the contents (every section
    # and the 70B LLM one click away) end within the first two.
    assert bottom(page, "#as-of") <= height
    assert bottom(page, "#answer-first") <= 2 * height
    assert bottom(page, "#contents") <= 2 * height
    assert horizontal_overflow(page) <= 0
    assert not errors, errors
    for section in ("#upgrade", "#rent-or-buy"):
        box = page.evaluate(
            f"(() => {{ const r = document.querySelector('{section}').getBoundingClientRect();"
            " return [r.left, r.right]; })()"
        )
        assert box[0] >= 0 and box[1] <= width, (section, box)
    shots = built.root / ".build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(shots / f"front-answer-{width}.png"))
    # One click: the 70B link on the first two screens leads to its section of llm.html.
    page.click("nav#contents a[href^='llm.html#model-']")
    page.wait_for_load_state("load")
    assert page.url.split("#")[0].endswith("/llm.html")
    anchor = page.url.split("#")[1]
    assert page.locator(f"[id='{anchor}']").count() == 1
    page.close()
