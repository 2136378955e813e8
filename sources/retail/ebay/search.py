"""Search-results pages (sold/completed or active) -> records, one per real result card.

Search pages begin with 1-2 hidden "Shop on eBay" template cards priced $20.00; they are
dropped and counted in `dropped["placeholder"]`. Listings in promoted carousels inside the
result list are not ranked results and are counted in `dropped["carousel"]`. When eBay has
no exact match it fills the page with "Results matching fewer words": those records are
kept (the title matcher decides what each card is) and marked `extra["match"] =
"fewer_words"`.
"""

import re
from collections import Counter
from urllib.parse import parse_qs, urlsplit

from lxml import etree

from sources.retail.ebay.cards import Card, CardIndex, is_placeholder, listing, read_card
from sources.retail.ebay.classes import SCard, Search, SItem
from sources.retail.ebay.markup import classes, first, has, in_class, text_of, xp
from sources.retail.ebay.site import page_site
from sources.retail.ebay.sponsored import PageStyles, sponsored
from sources.retail.records import Outcome, ParseResult

_CARDS = f"//li[{has(SCard.CARD)} or {has(SItem.CARD)}]"
X_CARDS = xp(_CARDS)
_X_CARDS_AND_REWRITE = xp(f"{_CARDS} | //*[{has(Search.REWRITE)}]")
_X_COUNT_BOLD = xp(f"//*[{has(Search.COUNT_HEADING)}]//*[{has(Search.BOLD)}]")
_X_NULL_SEARCH = xp(f"//*[{has(Search.NULL_SEARCH)}]")
_X_NULL_HEADING = xp(f"//*[{has(Search.NULL_HEADING)}]")
X_SEARCH_MARKERS = xp(
    f"//ul[{has(Search.RESULTS)}] | //h1[{has(Search.COUNT_HEADING)}]"
    f" | //*[{has(Search.NULL_SEARCH)}] | //*[@id='{Search.RESULTS_ID}']"
)
_COUNT = re.compile(r"^\d[\d.,\s]*\+?$")


def _exact_count(root: etree._Element, url: str | None) -> int | None:
    """The "242 results for ..." figure, or None when the heading cannot be read."""
    query = (parse_qs(urlsplit(url or "").query).get("_nkw") or [""])[0].strip()
    for bold in _X_COUNT_BOLD(root):
        text = text_of(bold)
        # The query is bold too, and comes first in the Japanese heading.
        if _COUNT.match(text) and text != query:
            return int(re.sub(r"\D", "", text))
    return None


def _fewer_words_from(root: etree._Element, url: str | None, cards: list) -> int | None:
    """Index into `cards` (real cards, page order) from which results match fewer words."""
    exact = _exact_count(root, url)
    if _X_NULL_SEARCH(root) or exact == 0:
        return 0
    if exact is None:
        return None
    params = parse_qs(urlsplit(url or "").query)
    try:
        offset = (int((params.get("_pgn") or ["1"])[0]) - 1) * int(
            (params.get("_ipg") or ["60"])[0]
        )
    except ValueError:
        offset = 0
    if offset + len(cards) < exact:
        # The exact results outnumber this page's cards: none can be a fewer-words result.
        return None
    real = {id(card) for card in cards}
    before = 0
    for node in _X_CARDS_AND_REWRITE(root):
        if Search.REWRITE in classes(node):
            # The same notice also says "we filtered the results" (the Japanese page): only
            # when the exact results have run out do the cards after it match fewer words.
            return before if offset + before >= exact else None
        if id(node) in real:
            before += 1
    return None


def parse_search(root: etree._Element, url: str | None, nodes: list) -> ParseResult:
    """Records from a search page's result cards `nodes`; EMPTY when none is a real result."""
    site = page_site(url, root)
    styles = PageStyles(root)
    dropped: Counter[str] = Counter()
    kept: list[tuple[etree._Element, Card, CardIndex]] = []
    for node in nodes:
        if in_class(node, {Search.CAROUSEL}):
            dropped["carousel"] += 1
            continue
        index = CardIndex(node)
        card = read_card(node, index)
        if is_placeholder(node, card):
            dropped["placeholder"] += 1
        elif not card.title and not card.listing_id:
            dropped["unreadable"] += 1
        else:
            kept.append((node, card, index))
    fuzzy_from = _fewer_words_from(root, url, [node for node, _, _ in kept]) if kept else None
    records = tuple(
        listing(card, site, sponsored(index, styles), fuzzy_from is not None and i >= fuzzy_from)
        for i, (_, card, index) in enumerate(kept)
    )
    if records:
        detail = ""
        if fuzzy_from is not None:
            fuzzy = len(records) - fuzzy_from
            detail = f"{fuzzy} of {len(records)} results only match fewer words of the query"
        return ParseResult(Outcome.OK, "search", records, detail, dict(dropped))
    if dropped["unreadable"]:
        return ParseResult(
            Outcome.PARSE_ERROR,
            "search",
            detail=f"{dropped['unreadable']} result cards, none readable",
            dropped=dict(dropped),
        )
    null = first(_X_NULL_HEADING(root))
    return ParseResult(
        Outcome.EMPTY,
        "search",
        detail=text_of(null) if null is not None else "no results",
        dropped=dict(dropped),
    )
