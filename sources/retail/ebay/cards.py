"""One search-result card, in both layouts: what it prints (`Card`) and what that means (`listing`).

The 2025-2026 layout is `li.s-card`, the <=2025 one `li.s-item`. A sold card captioned
"Sold <date>" is `sold=True`; "Ended <date>" is a completed listing that did not sell
(`sold=False`); cards on active pages leave `sold=None`.
"""

from dataclasses import dataclass, field

from lxml import etree

from sources.retail.ebay.classes import CARD_CLASSES, SCard, Search, SItem
from sources.retail.ebay.fields import (
    BIDS,
    LOCATION,
    OFFER_ACCEPTED,
    OR_BEST_OFFER,
    SHIPPING_WORDS,
    parse_caption,
    parse_shipping,
)
from sources.retail.ebay.markup import classes, clean_title, first, in_class, inside, text_of
from sources.retail.ebay.site import SOURCE, Site, item_id, site_of
from sources.retail.money import price_or_reason
from sources.retail.records import Listing

ROLE_TEXT = "@role=text"  # pseudo-class for elements with role="text" (sponsored labels)

_PLACEHOLDER_TITLE = "shop on ebay"
_PLACEHOLDER_ID = "123456"


class CardIndex:
    """A card's elements by class, in page order: one walk instead of a dozen XPaths.

    A page of 60 cards is parsed either way in well under a second; this keeps a 2 MB page
    of 240 dense cards there too.
    """

    def __init__(self, card: etree._Element):
        self.marked: list[tuple[etree._Element, frozenset[str]]] = []
        self.item_links: list[etree._Element] = []
        for element in card.iter(etree.Element):
            tokens = CARD_CLASSES.intersection(classes(element))
            if "text" in (element.get("role") or "").split():
                tokens = tokens | {ROLE_TEXT}
            if tokens:
                self.marked.append((element, frozenset(tokens)))
            if element.tag == "a" and "/itm/" in (element.get("href") or ""):
                self.item_links.append(element)

    def all(self, *tokens: str) -> list[etree._Element]:
        """The card's elements with any of `tokens`, in page order."""
        wanted = set(tokens)
        return [element for element, have in self.marked if have & wanted]

    def first(self, *tokens: str) -> etree._Element | None:
        """The card's first element with any of `tokens`, or None."""
        return first(self.all(*tokens))

    def href(self, link_class: str) -> str | None:
        """The item link: the card's own link class first, else any /itm/ link."""
        links = [a for a in self.item_links if link_class in classes(a)] or self.item_links
        return links[0].get("href") if links else None


@dataclass
class Card:
    """What one result card prints, before interpretation."""

    title: str
    link: str | None
    listing_id: str | None
    price_text: str
    price_struck: bool  # the price element itself is struck through
    caption: str
    condition: str | None
    shipping_text: str | None
    rows: list[str] = field(default_factory=list)  # other attribute lines
    new_listing: bool = False


def read_card(node: etree._Element, index: CardIndex) -> Card:
    """The fields of a result card, whichever its layout."""
    return _scard(node, index) if SCard.CARD in classes(node) else _sitem(index)


def _scard(card: etree._Element, index: CardIndex) -> Card:
    """Fields of a 2025-2026 `li.s-card`."""
    href = index.href(SCard.LINK)
    prices = index.all(SCard.PRICE)
    subtitles = index.all(SCard.SUBTITLE)
    # A seller's own tagline can come first; the condition is the last subtitle's first span.
    condition = None
    if subtitles:
        first_span = first(subtitles[-1].xpath(".//span"))
        condition = text_of(first_span if first_span is not None else subtitles[-1]).rstrip(" ·")
    rows = [
        text_of(row)
        for row in index.all(SCard.ATTRIBUTE_ROW)
        if not any(inside(price, row) for price in prices)
    ]
    shipping = next((row for row in rows if SHIPPING_WORDS.search(row)), None)
    return Card(
        title=clean_title(index.first(SCard.TITLE)),
        link=href,
        listing_id=card.get("data-listingid") or item_id(href),
        price_text=" ".join(text_of(node) for node in prices),
        price_struck=any(SCard.PRICE_STRUCK in classes(node) for node in prices),
        caption=text_of(index.first(SCard.CAPTION)),
        condition=condition or None,
        shipping_text=shipping,
        rows=[row for row in rows if row and row != shipping],
        new_listing=bool(index.all(SCard.NEW_LISTING)),
    )


def _sitem(index: CardIndex) -> Card:
    """Fields of a <=2025 `li.s-item`."""
    href = index.href(SItem.LINK)
    price = index.first(SItem.PRICE)
    struck = price is not None and any(
        element is price or inside(element, price) for element in index.all(SItem.STRIKETHROUGH)
    )
    subtitles = index.all(SItem.SUBTITLE)
    condition = next(
        (
            info
            for info in index.all(SItem.SECONDARY_INFO)
            if any(inside(info, subtitle) for subtitle in subtitles)
        ),
        first(subtitles),
    )
    # The sold date sat in the tagblock's POSITIVE span, later in a caption element.
    tagblocks = index.all(SItem.TAGBLOCK)
    captions = [
        text_of(node)
        for node in index.all(*SItem.CAPTIONS, SItem.POSITIVE, SItem.NEGATIVE)
        if SItem.CAPTIONS.intersection(classes(node))
        or any(inside(node, block) for block in tagblocks)
    ]
    caption = next((c for c in captions if parse_caption(c)[0] is not None), "")
    caption = caption or next((c for c in captions if c), "")
    titles = index.all(SItem.TITLE)
    shipping = index.first(*SItem.SHIPPING)
    if shipping is None:
        shipping = index.first(SItem.FREE_X_DAYS)
    return Card(
        title=clean_title(first(titles)),
        link=href,
        listing_id=item_id(href),
        price_text=text_of(price),
        price_struck=struck,
        caption=caption,
        condition=text_of(condition) or None,
        shipping_text=text_of(shipping) or None,
        rows=[row for row in map(text_of, index.all(*SItem.ROWS)) if row],
        new_listing=any(
            inside(badge, title) for badge in index.all(SItem.NEW_LISTING) for title in titles
        ),
    )


def is_placeholder(node: etree._Element, card: Card) -> bool:
    """True for the hidden "Shop on eBay" template cards (and the 2021 untitled one)."""
    if card.title.casefold() == _PLACEHOLDER_TITLE:
        return True
    if _PLACEHOLDER_ID in (card.listing_id, item_id(card.link)):
        return True
    # Templates sit in a visually hidden container outside the result list.
    return not card.title and in_class(node, Search.HIDDEN)


def listing(card: Card, site: Site, sponsored: bool | None, fewer_words: bool) -> Listing:
    """Interpret one card.

    A struck-through price on a sold card (`best_offer_accepted=True`) is the seller's
    asking price, not the sale price, which eBay hides. The record keeps that price, with
    `price_missing_reason=None`, so the page can be audited against the record, and says
    so in `extra["price_is"]`; downstream price models must drop `best_offer_accepted` rows.
    """
    extra: dict[str, str] = {}
    price, reason = price_or_reason(card.price_text, site.currency)
    if card.price_text:
        extra["price_text"] = card.price_text
    if not card.price_text:
        reason = "no price on card"
    elif reason == "no number":
        reason = "unreadable price"
    sold, sold_date = parse_caption(card.caption)
    if card.caption and sold is None:
        extra["caption"] = card.caption
    if sold is False and sold_date is not None:
        # An unsold listing has no sale date; keep when it ended.
        extra["ended"] = sold_date.isoformat()
        sold_date = None
    offer_accepted = card.price_struck or any(OFFER_ACCEPTED.search(r) for r in card.rows)
    if offer_accepted:
        extra["price_is"] = "asking price; the accepted offer is hidden"
    for row in card.rows:
        if OR_BEST_OFFER.search(row):
            extra["best_offer"] = row
        elif match := LOCATION.match(row):
            extra["location"] = match.group(1)
        elif match := BIDS.match(row):
            extra["bids"] = match.group(1)
    shipping = None
    if card.shipping_text:
        extra["shipping_text"] = card.shipping_text
        shipping = parse_shipping(card.shipping_text, price.currency if price else site.currency)
    if card.new_listing:
        extra["new_listing"] = "true"
    if sponsored is None:
        extra["sponsored"] = "unknown"
    if fewer_words:
        extra["match"] = "fewer_words"
    item_site = site_of(card.link) or site
    return Listing(
        source=SOURCE,
        listing_id=card.listing_id,
        title=card.title,
        price=price.low if price else None,
        price_high=price.high if price else None,
        currency=price.currency if price else site.currency,
        condition=card.condition,
        sold=sold,
        sold_date=sold_date,
        best_offer_accepted=offer_accepted,
        sponsored=bool(sponsored),
        url=item_site.item_url(card.listing_id) if card.listing_id else None,
        price_missing_reason=reason,
        shipping=shipping,
        extra=extra,
    )
