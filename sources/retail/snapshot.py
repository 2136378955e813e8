"""The bundled retail archive: our own pages that carry cited listing facts.

The bundled snapshot replays through the same path as a live night (archive -> parser ->
matcher -> daily price). We may not redistribute captured pages, so for every listing fact
in `sources/data/prices/retail_observations.csv` that came from a page (an Amazon search,
an eBay item page, eBay sold listings) we render a minimal page of our own in that site's
real markup (Amazon 2024+ search cards with the brand-only first h2, eBay s-card sold
cards, eBay item page) and store it in `sources/data/archive/` in the live archive format.
`sources/data/archive/MANIFEST.md` says so; `CITATIONS.csv` maps each page to the sources
of its figures. Rebuild with `python -m sources.retail.snapshot` after editing the facts.
"""

import datetime as dt
import html
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlencode

import polars as pl

from sources.archive import Archive
from sources.bundled import DATA_DIR, PAGE_SOURCES, read_retail_observations

ARCHIVE_DIR = DATA_DIR / "archive"
# Rows of these sources were listings on a page: they are rendered into the archive and
# come back through the parsers. The others are aggregates or label-only datasets, loaded
# as curated history with the gpu_id assigned when they were transcribed.
_CONDITION_SUFFIX = " ["


def _esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def _money(value: float, currency: str) -> str:
    symbol = {"USD": "$", "EUR": "EUR ", "GBP": "£"}.get(currency, f"{currency} ")
    return f"{symbol}{value:,.2f}"


def _split_condition(title: str) -> tuple[str, str | None]:
    """'Title [Pre-Owned]' -> ('Title', 'Pre-Owned') (how the facts file records it)."""
    if title.endswith("]") and _CONDITION_SUFFIX in title:
        head, _, tail = title.rpartition(_CONDITION_SUFFIX)
        return head, tail[:-1].removeprefix("Condition: ")
    return title, None


def render_amazon_search(query: str, rows: Iterable[dict], fetched: dt.datetime) -> bytes:
    """An Amazon.com search page (2024+ layout) with one card per listing."""
    qid = int(fetched.replace(tzinfo=dt.UTC).timestamp())
    cards = []
    for row in rows:
        brand = row["title"].split()[0]
        cards.append(
            f"""<div data-component-type="s-search-result" data-asin="{_esc(row["listing_id"])}"
 class="s-result-item s-asin">
 <div class="puis-card-container">
  <h2 class="a-size-mini s-line-clamp-1"><span class="a-size-base-plus">{_esc(brand)}</span></h2>
  <a class="a-link-normal s-link-style" href="/dp/{_esc(row["listing_id"])}/ref=sr_1?qid={qid}">
   <h2 aria-label="{_esc(row["title"])}" class="a-size-base-plus a-spacing-none a-text-normal">
    <span>{_esc(row["title"])}</span></h2></a>
  <div class="a-row"><span class="a-price" data-a-size="xl">
   <span class="a-offscreen">{_money(row["price"], row["currency"])}</span>
   <span aria-hidden="true"><span class="a-price-symbol">$</span>
   <span class="a-price-whole">{int(row["price"]):,}<span class="a-price-decimal">.</span></span>
   <span class="a-price-fraction">{round(row["price"] % 1 * 100):02d}</span></span></span>
  </div>
 </div>
</div>"""
        )
    return _page(
        f"Amazon.com : {query}",
        '<div class="s-main-slot s-result-list s-search-results sg-row">'
        + "\n".join(cards)
        + "</div>",
    )


def render_ebay_sold(query: str, rows: Iterable[dict]) -> bytes:
    """An eBay.com sold-listings search page (2025+ s-card layout; test fixtures).

    The bundled sold listings are curated history now (sources/data/prices/history/), so
    no bundled page uses it; tests render sold pages with it.
    """
    cards = [
        """<li class="s-card s-card--horizontal" data-listingid="123456">
 <div class="s-card__title"><span>Shop on eBay</span></div>
 <div class="s-card__attribute-row"><span class="s-card__price">$20.00</span></div></li>"""
    ]
    for row in rows:
        title, condition = _split_condition(row["title"])
        sold = row["observed_at"].strftime("%b %-d, %Y")
        cards.append(
            f"""<li class="s-card s-card--horizontal" data-listingid="{_esc(row["listing_id"])}">
 <div class="s-card__caption"><span class="su-styled-text positive">Sold  {sold}</span></div>
 <a class="su-link" href="https://www.ebay.com/itm/{_esc(row["listing_id"])}?_skw=x">
  <div class="s-card__title"><span class="su-styled-text primary default">{_esc(title)}</span>
  <span class="clipped">Opens in a new window or tab</span></div></a>
 <div class="s-card__subtitle"><span>{_esc(condition or "Pre-Owned")}</span></div>
 <div class="s-card__attribute-row">
  <span class="s-card__price su-styled-text positive bold">
   {_money(row["price"], row["currency"])}</span></div>
</li>"""
        )
    return _page(
        f"{query} for sale | eBay",
        '<ul class="srp-results srp-list clearfix">' + "\n".join(cards) + "</ul>",
    )


def render_ebay_item(row: dict) -> bytes:
    """An eBay item (VIP) page for one listing."""
    title, condition = _split_condition(row["title"])
    price = _money(row["price"], row["currency"])
    return _page(
        f"{title} | eBay",
        f"""<link rel="canonical" href="https://www.ebay.com/itm/{_esc(row["listing_id"])}">
<h1 class="x-item-title__mainTitle"><span class="ux-textspans ux-textspans--BOLD">
{_esc(title)}</span></h1>
<div class="x-item-condition-text"><span class="ux-textspans">{_esc(condition or "")}</span></div>
<div class="x-price-primary"><span class="ux-textspans">{price}</span></div>""",
    )


def _page(title: str, body: str) -> bytes:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{_esc(title)}</title></head>\n<body>\n{body}\n</body></html>\n"
    ).encode()


def build(facts: pl.DataFrame, archive: Archive) -> pl.DataFrame:
    """Render and archive one page per (source, day, citation); return sha256 -> citation."""
    pages = []
    rows = facts.filter(pl.col("source").is_in(PAGE_SOURCES)).sort("observed_at", "title")
    for (source, day, citation), group in rows.group_by(
        "source", pl.col("observed_at").dt.date(), "citation", maintain_order=True
    ):
        records = group.to_dicts()
        if source == "amazon":
            query = "RTX 4090"
            # The capture's qid gives 12:43 UTC; the other pages are dated to the day.
            fetched = dt.datetime.combine(day, dt.time(12, 43))
            content = render_amazon_search(query, records, fetched)
            url = f"https://www.amazon.com/s?{urlencode({'k': query})}"
            kinds = [("amazon", url, content)]
        elif source == "ebay":
            fetched = dt.datetime.combine(day, dt.time(12, 0))
            kinds = [
                ("ebay", f"https://www.ebay.com/itm/{r['listing_id']}", render_ebay_item(r))
                for r in records
            ]
        else:
            raise ValueError(f"no page renderer for source {source!r} (PAGE_SOURCES)")
        for parser_source, url, content in kinds:
            stored = archive.store(
                url=url,
                status=200,
                content=content,
                fetched_at=fetched.replace(tzinfo=dt.UTC),
                source=parser_source,
                headers={"Content-Type": "text/html; charset=utf-8"},
            )
            pages.append({"sha256": stored.sha256, "day": day, "citation": citation})
    return pl.DataFrame(pages, schema={"sha256": pl.Utf8, "day": pl.Date, "citation": pl.Utf8})


def rebuild(root: Path = ARCHIVE_DIR) -> pl.DataFrame:
    """Re-render the bundled archive from the facts file (keeps MANIFEST.md)."""
    facts = read_retail_observations(DATA_DIR / "prices" / "retail_observations.csv", None)
    for child in root.glob("*"):
        if child.is_dir():
            shutil.rmtree(child)
    citations = build(facts, Archive(root))
    citations.write_csv(root / "CITATIONS.csv")
    return citations


if __name__ == "__main__":
    written = rebuild()
    print(f"rendered {written.height} pages into {ARCHIVE_DIR}", file=sys.stderr)
