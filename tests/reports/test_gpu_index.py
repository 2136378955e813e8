"""gpus.html and its pre-sorted copies (issue 25, item 5): every catalog GPU with its new and
used price, memory, performance per dollar and rank, sorted four ways without JavaScript.
The pages of the bundled build are parsed and checked against the published warehouse."""

import re
from pathlib import Path

import lxml.html
import pytest

from reports.content.gpu_index import HEADERS, ORDERS
from warehouse.export import open_published


@pytest.fixture(scope="module")
def version(built) -> Path:
    return built.site / "latest"


@pytest.fixture(scope="module")
def tables(version) -> dict[str, list[dict[str, str]]]:
    """Each page's rows as {header: cell text}."""
    out = {}
    for order in ORDERS:
        doc = lxml.html.parse(str(version / order.file)).getroot()
        headers = [th.text_content() for th in doc.xpath("//main//table//thead//th")]
        assert tuple(headers) == HEADERS, order.file
        out[order.file] = [
            dict(zip(headers, (td.text_content() for td in tr.xpath("./td")), strict=True))
            for tr in doc.xpath("//main//table//tbody/tr")
        ]
    return out


@pytest.fixture(scope="module")
def expected(built) -> dict[str, tuple]:
    """gpu_id -> (memory_gb, new price, used price, best perf per $1,000, rank, market), in SQL."""
    con = open_published(built.published)
    try:
        (run_date,) = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0]
        rows = con.sql(
            """
            WITH p AS (
                SELECT * FROM perf_per_dollar
                WHERE run_date = $d AND workload = 'training_16bit' AND market IN ('new', 'used')
            ), smallest AS (
                SELECT * FROM p
                WHERE system_gpus = (SELECT min(system_gpus) FROM p q WHERE q.gpu_id = p.gpu_id)
            ), best AS (
                SELECT gpu_id, arg_max(perf_per_dollar * 1000, perf_per_dollar) AS ppd,
                       arg_max(rank, perf_per_dollar) AS rank,
                       arg_max(market, perf_per_dollar) AS market
                FROM smallest GROUP BY gpu_id
            ), price AS (
                SELECT gpu_id, max(price_usd) FILTER (market = 'new') AS new,
                       max(price_usd) FILTER (market = 'used') AS used
                FROM current_prices WHERE run_date = $d GROUP BY gpu_id
            )
            SELECT g.gpu_id, g.memory_gb, price.new, price.used, best.ppd, best.rank,
                   best.market
            FROM gpus g LEFT JOIN price USING (gpu_id) LEFT JOIN best USING (gpu_id)
            """,
            params={"d": run_date},
        ).fetchall()
    finally:
        con.close()
    return {r[0]: r[1:] for r in rows}


def money(text: str) -> float | None:
    found = re.match(r"\$([\d,]+)", text)
    return None if found is None else float(found.group(1).replace(",", ""))


def leading_number(text: str) -> float | None:
    found = re.match(r"[\d.]+", text)
    return None if found is None else float(found.group(0))


def keys(rows, key):
    return [key(r) for r in rows]


def assert_sorted(values: list, descending: bool) -> None:
    """Known values in order, then every GPU without one (NULLs last)."""
    known = [v for v in values if v is not None]
    assert values[: len(known)] == known, "a GPU without the key comes before one with it"
    assert known == sorted(known, reverse=descending)


def test_every_page_lists_every_catalog_gpu_once(tables, expected, version):
    for name, rows in tables.items():
        ids = [r["GPU"] for r in rows]
        assert sorted(ids) == sorted(expected) and len(set(ids)) == len(ids), name
    doc = lxml.html.parse(str(version / "gpus.html")).getroot()
    for href in doc.xpath("//main//table//a/@href"):
        assert (version / href).is_file(), href


def test_each_page_is_sorted_by_its_key(tables):
    price = tables["gpus-by-price.html"]
    cheapest = [
        min(
            (v for v in (money(r["price new"]), money(r["price used"])) if v is not None),
            default=None,
        )
        for r in price
    ]
    assert_sorted(cheapest, descending=False)
    assert cheapest[0] is not None and cheapest[-1] is None
    perf = keys(
        tables["gpus-by-perf-per-dollar.html"],
        lambda r: leading_number(r["perf per $1,000 (16-bit training)"]),
    )
    assert_sorted(perf, descending=True)
    assert perf[0] is not None and perf[-1] is None
    memory = keys(tables["gpus-by-memory.html"], lambda r: leading_number(r["memory (GB)"]))
    assert_sorted(memory, descending=True)
    ids = keys(tables["gpus.html"], lambda r: r["GPU"])
    assert ids == sorted(ids)


def test_the_columns_match_the_warehouse(tables, expected):
    rows = {r["GPU"]: r for r in tables["gpus.html"]}
    for gpu_id, (memory, new, used, ppd, rank, market) in expected.items():
        row = rows[gpu_id]
        assert leading_number(row["memory (GB)"]) == memory, gpu_id
        assert money(row["price new"]) == (None if new is None else round(new)), gpu_id
        assert money(row["price used"]) == (None if used is None else round(used)), gpu_id
        shown = leading_number(row["perf per $1,000 (16-bit training)"])
        if ppd is None:
            assert shown is None and row["rank (16-bit training)"] == "", gpu_id
        else:
            assert shown == pytest.approx(ppd, abs=6e-4), gpu_id
            assert row["rank (16-bit training)"].startswith(f"{rank} of "), gpu_id
            assert f"({market}" in row["rank (16-bit training)"], gpu_id
    assert any(r["rank (16-bit training)"].startswith("1 of ") for r in rows.values())


def test_the_sorted_copies_link_each_other_and_stay_out_of_the_search_index(version):
    for order in ORDERS:
        doc = lxml.html.parse(str(version / order.file)).getroot()
        sort = doc.get_element_by_id("sort")
        links = sort.xpath(".//a/@href")
        assert sorted(links) == sorted(o.file for o in ORDERS if o is not order), order.file
        assert sort.xpath(".//strong[@aria-current='page']/text()") == [order.label]
        ignored = doc.xpath("//main//*[@data-pagefind-ignore]//table")
        assert len(ignored) == (0 if order is ORDERS[0] else 1), order.file
