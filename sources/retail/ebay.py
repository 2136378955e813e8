"""eBay pages -> classified outcome and listing records (pure: bytes in, `ParseResult` out).

Four kinds of page are recognised:

- the bot wall ("Pardon Our Interruption", served with HTTP 200) -> `Outcome.BLOCKED`;
- search results, sold/completed or active, in both layouts eBay has used: the <=2025
  `li.s-item` cards and the 2025-2026 `li.s-card` cards;
- item (VIP) pages -> one record;
- anything else -> `Outcome.PARSE_ERROR` (the parser never raises).

Search pages begin with 1-2 hidden "Shop on eBay" template cards priced $20.00; they are
dropped and counted in `dropped["placeholder"]`. Listings in promoted carousels inside the
result list are not ranked results and are counted in `dropped["carousel"]`. When eBay has
no exact match it fills the page with "Results matching fewer words": those records are
kept (the title matcher decides what each card is) and marked `extra["match"] =
"fewer_words"`.

Sold pages: a card captioned "Sold <date>" is `sold=True`; "Ended <date>" is a completed
listing that did not sell (`sold=False`); active pages leave `sold=None`. A struck-through
price on a sold card means the listing sold through an accepted Best Offer: the printed
price is the seller's ask and the real price is hidden (see `_listing`).

"Sponsored" labels are obfuscated, differently in every era: letter soup whose decoy
letters per-page CSS hides, text drawn in an SVG background, per-page web fonts, CSS
filters. The first two (and the 2022 class-pair scheme) are decoded here; for the others
`sponsored` is False and `extra["sponsored"] = "unknown"` says the flag is not known
rather than false.

Parsing uses lxml with XPath: a 2 MB page takes about a tenth of a second.
"""

import base64
import binascii
import datetime as dt
import json
import math
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from urllib.parse import parse_qs, urlsplit

from lxml import etree
from lxml import html as lxml_html

from sources.retail.document import decode_page, incomplete_reason
from sources.retail.money import ZERO_PRICE, parse_price, price_or_reason
from sources.retail.records import Listing, Outcome, ParseResult

SOURCE = "ebay"

# Site (everything after "ebay.") -> the currency prices on that site are in.
SITE_CURRENCY = {
    "com": "USD",
    "co.uk": "GBP",
    "de": "EUR",
    "fr": "EUR",
    "it": "EUR",
    "es": "EUR",
    "at": "EUR",
    "ie": "EUR",
    "nl": "EUR",
    "be": "EUR",
    "ca": "CAD",
    "com.au": "AUD",
    "ch": "CHF",
    "pl": "PLN",
}
_HOST = re.compile(r"(?:^|\.)ebay\.([a-z.]+?)\.?$")
_ITEM_ID = re.compile(r"/itm/(?:[^/?#]+/)?(\d{6,19})(?=[/?#]|$)")

# --- block pages -----------------------------------------------------------------------

# Literal byte searches: a case-insensitive regex over a 2 MB page costs a tenth of a second.
# The title, not the bare phrase, so that a listing titled so cannot trip the breaker.
_BLOCKED = (b"<title>Pardon Our Interruption", b"Checking your browser before you access eBay")
# eBay's hCaptcha wall (served from /splashui/captcha).
_CAPTCHA = re.compile(rb"<title>\s*Security Measure\s*</title>")


def is_block_page(content: bytes) -> str | None:
    """Tell eBay's bot walls from real pages, for the HTTP client's circuit breaker.

    Both walls are served with HTTP 200. Byte searches only: no HTML parse, never raises.

    Args:
        content: the response body.

    Returns:
        "blocked" for the "Pardon Our Interruption" challenge, "captcha" for the
        "Security Measure" hCaptcha page, None for any other page.
    """
    if isinstance(content, str):
        content = content.encode("utf-8", "replace")
    if not isinstance(content, bytes | bytearray):
        return None
    if any(marker in content for marker in _BLOCKED):
        return "blocked"
    if _CAPTCHA.search(content):
        return "captcha"
    return None


# --- XPath and text helpers ------------------------------------------------------------


def _has(cls: str) -> str:
    """XPath test: the element's class list contains `cls` (a whole token).

    The plain substring test first lets XPath skip the costly concat on most elements.
    """
    return (
        f"(contains(@class, '{cls}')"
        f" and contains(concat(' ', normalize-space(@class), ' '), ' {cls} '))"
    )


def _xp(path: str) -> etree.XPath:
    return etree.XPath(path)


def _first(found: list) -> etree._Element | None:
    return found[0] if found else None


def _classes(node: etree._Element) -> list[str]:
    return (node.get("class") or "").split()


def _text(node: etree._Element | None) -> str:
    """The element's text (comments and markup dropped), whitespace collapsed."""
    if node is None:
        return ""
    return " ".join(node.xpath("string()").split())


_NEW_LISTING = re.compile(r"^\s*(?:new listing|neues angebot|新規出品)\s*", re.I)
_OPENS_IN_NEW_WINDOW = re.compile(
    r"\s*(?:Opens in a new window or tab|Wird in neuem Fenster oder Tab geöffnet|"
    r"新しいウィンドウまたはタブに表示されます)\s*$",
    re.I,
)
_TITLE_NOISE = frozenset({"clipped", "LIGHT_HIGHLIGHT", "s-card__new-listing"})


def _clean_title(node: etree._Element | None) -> str:
    """A card title without the "New Listing" badge and the screen-reader suffix."""
    if node is None:
        return ""
    parts = []
    for piece in node.xpath(".//text()"):
        owner = piece.getparent()
        if piece.is_tail:
            owner = owner.getparent()
        # Badges and screen-reader text sit in their own spans: skipping those is exact;
        # the regexes below only catch copies printed without markup.
        noisy = False
        while owner is not None and owner is not node:
            if _TITLE_NOISE.intersection(_classes(owner)):
                noisy = True
                break
            owner = owner.getparent()
        if not noisy:
            parts.append(str(piece))
    title = " ".join(" ".join(parts).split())
    title = _NEW_LISTING.sub("", title)
    return _OPENS_IN_NEW_WINDOW.sub("", title).strip()


# --- captions: "Sold  Mar 7, 2026", "Ended  Oct 3, 2025", "販売済み  Jan 9, 2026" ---------

_SOLD_WORDS = re.compile(r"^(?:sold|verkauft|vendu|venduto|vendido|verkocht|販売済み)", re.I)
_ENDED_WORDS = re.compile(
    r"^(?:ended|beendet|termin[ée]|terminat[oa]|finalizado|afgelopen|終了)", re.I
)
# Month names and abbreviations: English, German, French, Italian, Spanish, Dutch.
_MONTHS = {
    "jan": 1, "janv": 1, "gen": 1, "ene": 1,
    "feb": 2, "fev": 2, "fevr": 2,
    "mar": 3, "mrz": 3, "mars": 3, "maa": 3,
    "apr": 4, "avr": 4, "abr": 4,
    "may": 5, "mai": 5, "mag": 5, "mei": 5,
    "jun": 6, "juin": 6, "giu": 6,
    "jul": 7, "juil": 7, "lug": 7,
    "aug": 8, "aou": 8, "aout": 8, "ago": 8,
    "sep": 9, "sept": 9, "set": 9,
    "oct": 10, "okt": 10, "ott": 10,
    "nov": 11,
    "dec": 12, "dez": 12, "dic": 12,
}  # fmt: skip
_DATE_MDY = re.compile(r"([^\W\d_]{3,})\.?\s+(\d{1,2}),?\s+(\d{4})")
_DATE_DMY = re.compile(r"(\d{1,2})\.?\s+([^\W\d_]{3,})\.?,?\s+(\d{4})")
_DATE_JA = re.compile(r"(\d{4})年\s*(\d{1,2})月\s*(\d{1,2})日")
_DATE_NUMERIC = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})")


def _month(word: str) -> int | None:
    folded = "".join(
        c for c in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(c)
    )
    for key in (folded, folded[:4], folded[:3]):
        if key in _MONTHS:
            return _MONTHS[key]
    return None


def _date(year: str, month: int | None, day: str) -> dt.date | None:
    if month is None:
        return None
    try:
        return dt.date(int(year), month, int(day))
    except ValueError:
        return None


def parse_date(text: str) -> dt.date | None:
    """A date as eBay captions print it: "Mar 7, 2026", "7 Mar 2026", "7. Mär 2026".

    Month names are read in English, German, French, Italian, Spanish and Dutch; also
    "2026年1月9日" and "07.03.2026". Anything else gives None.
    """
    text = unicodedata.normalize("NFKC", text)
    if match := _DATE_MDY.search(text):
        if found := _date(match.group(3), _month(match.group(1)), match.group(2)):
            return found
    if match := _DATE_DMY.search(text):
        if found := _date(match.group(3), _month(match.group(2)), match.group(1)):
            return found
    if match := _DATE_JA.search(text):
        return _date(match.group(1), int(match.group(2)), match.group(3))
    if match := _DATE_NUMERIC.search(text):
        return _date(match.group(3), int(match.group(2)), match.group(1))
    return None


def parse_caption(text: str | None) -> tuple[bool | None, dt.date | None]:
    """(sold, date) from a sold-page caption; (None, None) for any other caption.

    "Sold  Mar 7, 2026" -> (True, 2026-03-07); "Ended  Oct 3, 2025" -> (False, 2025-10-03);
    "販売済み  Jan 9, 2026" -> (True, 2026-01-09); "NEW LOW PRICE" -> (None, None).
    """
    text = " ".join((text or "").split())
    if _SOLD_WORDS.match(text):
        return True, parse_date(text)
    if _ENDED_WORDS.match(text):
        return False, parse_date(text)
    return None, None


# --- shipping: "+$19.05 delivery", "Free delivery", "+ £9.99 postage", "＋送料1,234 円" -----

_SHIPPING_WORDS = re.compile(
    r"deliver|postage|shipping|versand|lieferung|livraison|spedizione|env[ií]o|送料|配送", re.I
)
_FREE = re.compile(r"\bfree\b|kostenlos|gratuit|gratis|無料", re.I)
# One amount with its currency marker, so day ranges ("in 2-4 days") are never read.
_MONEY = re.compile(
    r"(?:\b[A-Z]{2,3}\s?\$|\b[A-Z]{3}\s?|[$£€¥₹])\s?\d[\d.,]*|\d[\d.,]*\s?(?:円|€|\b[A-Z]{3}\b)"
)


def parse_shipping(text: str | None, default_currency: str | None = None) -> float | None:
    """Shipping cost from a delivery line; 0.0 when free, None when unknown.

    Args:
        text: e.g. "+$19.05 delivery", "Free delivery in 2-4 days", "+EUR 9,99 Versand",
            "＋見積り送料 1,234 円", "Postage not specified".
        default_currency: currency for amounts printed without a symbol.

    Returns:
        The amount in the line's currency, 0.0 for free delivery, else None.
    """
    if not text:
        return None
    text = unicodedata.normalize("NFKC", text)
    if _FREE.search(text):
        return 0.0
    match = _MONEY.search(text)
    if match is None:
        return None
    price, reason = price_or_reason(match.group(0), default_currency)
    if reason == ZERO_PRICE:
        return 0.0
    return price.low if price else None


# --- sponsored labels ------------------------------------------------------------------

_SPONSORED_LABELS = (
    "sponsored",
    "anzeige",
    "gesponsert",
    "sponsorisé",
    "sponsorizzato",
    "patrocinado",
    "gesponsord",
    "sponsorowane",
    "スポンサー",
)
# Cyrillic and Greek letters eBay mixes into the label so that a plain text search fails.
_CONFUSABLES = str.maketrans(
    "АаВЕеЅѕІіЈјКкМНОоРрСсТУуХхΑΒΕΗΙΚΜΝΟοΡρΤΥΧ",
    "AaBEeSsIiJjKkMHOoPpCcTYyXxABEHIKMNOoPpTYX",
)
_OBFUSCATED_CLASS = re.compile(r"^s-[0-9a-z]{5,8}$")
_CLASS_PAIR = re.compile(r"^(?:fj_)?(s-[0-9a-z]{5,8})_s-[0-9a-z]{5,8}$")
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CSS_SIMPLE_SELECTOR = re.compile(r"^(?:[a-z]+)?\.([\w-]+)$")
_CSS_VAR = re.compile(r"var\(\s*(--[\w-]+)\s*\)")
_SVG_DATA = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")
_SVG_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)
_SVG_ATTR = re.compile(r"([\w-]+)\s*=\s*(?:'([^']*)'|\"([^\"]*)\")")
_LEADING_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)")
_RGBA_ALPHA = re.compile(r"rgba\([^)]*,\s*(-?[\d.]+)\s*\)")

_X_STYLES = _xp("//style/text()")
_X_SVG_STYLED = _xp("descendant-or-self::*[contains(@style, 'data:image/svg+xml')]")
_X_LEAF_SPANS = _xp(".//span[@class][not(.//span)]")
_X_CLASSED = _xp("descendant-or-self::*[@class]")
_X_ARIA = _xp("descendant-or-self::*[@aria-labelledby]")


def _normalise_label(text: str) -> str:
    """Fold look-alike letters, drop invisible separators and spaces, casefold."""
    text = unicodedata.normalize("NFKC", text).translate(_CONFUSABLES)
    return "".join(
        c for c in text if not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc")
    ).casefold()


def _is_sponsored_label(text: str) -> bool:
    folded = _normalise_label(text)
    return any(label in folded for label in _SPONSORED_LABELS)


def _number(value: str | None, default: float) -> float:
    match = _LEADING_NUMBER.match(value or "")
    return float(match.group(1)) if match else default


def _svg_visible_text(payload: str) -> str | None:
    """Text an SVG background draws at a readable size and opacity (2025 scheme)."""
    try:
        svg = base64.b64decode(payload).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
    drawn = []
    for attributes, text in _SVG_TEXT.findall(svg):
        pairs = [
            (name.lower(), single or double)
            for name, single, double in _SVG_ATTR.findall(attributes)
        ]
        props = {name: value for name, value in pairs if name != "style"}
        for name, value in pairs:
            if name == "style":
                # The style attribute overrides presentation attributes; the last one wins.
                for part in value.split(";"):
                    key, sep, val = part.partition(":")
                    if sep:
                        props[key.strip().lower()] = val.strip()
        alpha = _RGBA_ALPHA.match(props.get("fill", ""))
        if (
            _number(props.get("font-size"), 16.0) >= 1.0
            and _number(props.get("opacity"), 1.0) > 0.05
            and (float(alpha.group(1)) if alpha else 1.0) > 0.05
            and props.get("display") != "none"
            and props.get("visibility") != "hidden"
        ):
            drawn.append(text)
    return "".join(drawn)


class _PageStyles:
    """Which obfuscation classes the page's own CSS shows or hides.

    Reads simple rules only: `span.s-abc123 {display: none}`, the same through a
    `:root{--x: none}` variable, and "visually hidden" off-screen positioning. A class
    without such a rule is not in `shown`.
    """

    def __init__(self, root: etree._Element):
        css = "\n".join(_X_STYLES(root))
        variables: dict[str, str] = {}
        rules: dict[str, dict[str, str]] = {}
        for selectors, body in _CSS_RULE.findall(css):
            declarations = {}
            for part in body.split(";"):
                name, sep, value = part.partition(":")
                if sep:
                    declarations[name.strip().lower()] = value.strip().lower()
            names = [s.strip() for s in selectors.split(",")]
            if ":root" in names:
                variables.update({k: v for k, v in declarations.items() if k.startswith("--")})
                continue
            for name in names:
                if match := _CSS_SIMPLE_SELECTOR.match(name):
                    rules.setdefault(match.group(1), {}).update(declarations)
        self.shown: dict[str, bool] = {}
        for cls, declarations in rules.items():
            display = declarations.get("display")
            if display and (var := _CSS_VAR.search(display)):
                display = variables.get(var.group(1))
            offscreen = declarations.get("position") == "absolute" and (
                _number(declarations.get("left"), 0.0) < -999
            )
            if display == "none" or offscreen:
                self.shown[cls] = False
            elif display:
                self.shown[cls] = True

    def visible_text(self, label: etree._Element) -> str | None:
        """The label's text as a browser would draw it, or None when that cannot be told."""
        for node in _X_SVG_STYLED(label):
            if svg := _SVG_DATA.search(node.get("style", "")):
                return _svg_visible_text(svg.group(1))
        letters = [
            span
            for span in _X_LEAF_SPANS(label)
            if len(_classes(span)) == 1 and _OBFUSCATED_CLASS.match(_classes(span)[0])
        ]
        if len(letters) >= 3:
            # Letter soup: one letter per span, the page's CSS hides the decoys. A class
            # without a rule is drawn (the CSS default).
            return "".join(
                _text(span) for span in letters if self.shown.get(_classes(span)[0], True)
            )
        for node in _X_CLASSED(label):
            for cls in _classes(node):
                if match := _CLASS_PAIR.match(cls):
                    # "A_B" class pairs: the label is drawn when A is displayed (ebay.de
                    # 2022; the one placeholder carries the shown pair). With no display
                    # rule for A, web fonts, filters or script decide: unknown.
                    shown = self.shown.get(match.group(1))
                    if shown is None:
                        return None
                    return _text(node) if shown else ""
        if _X_ARIA(label):
            # An obfuscated label in a scheme not handled above.
            return None
        return _text(label)


# --- one card, both layouts ------------------------------------------------------------

_ROLE_TEXT = "@role=text"  # pseudo-class for elements with role="text" (sponsored labels)
_CARD_CLASSES = frozenset(
    {
        # 2025-2026 s-card
        "s-card__title",
        "s-card__link",
        "s-card__price",
        "s-card__subtitle",
        "s-card__attribute-row",
        "s-card__caption",
        "s-card__new-listing",
        "s-card__sep",
        # <=2025 s-item
        "s-item__title",
        "s-item__link",
        "s-item__price",
        "s-item__subtitle",
        "SECONDARY_INFO",
        "s-item__caption--signal",
        "s-item__caption",
        "s-item__ended-date",
        "s-item__title--tagblock",
        "POSITIVE",
        "NEGATIVE",
        "STRIKETHROUGH",
        "LIGHT_HIGHLIGHT",
        "s-item__shipping",
        "s-item__logisticsCost",
        "s-item__freeXDays",  # ebay.de 2022: "Gratis 3-Tage-Lieferung" instead of shipping
        "s-item__sep",
        "s-item__purchase-options",
        "s-item__purchaseOptionsWithIcon",
        "s-item__bids",
        "s-item__bidCount",
        "s-item__location",
        "s-item__itemLocation",
        "s-item__formatBestOfferEnabled",
        "s-item__formatBestOfferAccepted",
    }
)
_SITEM_CAPTIONS = frozenset({"s-item__caption--signal", "s-item__caption", "s-item__ended-date"})
_SITEM_ROWS = (
    "s-item__purchase-options",
    "s-item__purchaseOptionsWithIcon",
    "s-item__bids",
    "s-item__bidCount",
    "s-item__location",
    "s-item__itemLocation",
    "s-item__formatBestOfferEnabled",
    "s-item__formatBestOfferAccepted",
)


class _CardIndex:
    """A card's elements by class, in page order: one walk instead of a dozen XPaths.

    A page of 60 cards is parsed either way in well under a second; this keeps a 2 MB page
    of 240 dense cards there too.
    """

    def __init__(self, card: etree._Element):
        self.marked: list[tuple[etree._Element, frozenset[str]]] = []
        self.item_links: list[etree._Element] = []
        for element in card.iter(etree.Element):
            tokens = _CARD_CLASSES.intersection(_classes(element))
            if "text" in (element.get("role") or "").split():
                tokens = tokens | {_ROLE_TEXT}
            if tokens:
                self.marked.append((element, frozenset(tokens)))
            if element.tag == "a" and "/itm/" in (element.get("href") or ""):
                self.item_links.append(element)

    def all(self, *tokens: str) -> list[etree._Element]:
        wanted = set(tokens)
        return [element for element, have in self.marked if have & wanted]

    def first(self, *tokens: str) -> etree._Element | None:
        return _first(self.all(*tokens))

    def href(self, link_class: str) -> str | None:
        """The item link: the card's own link class first, else any /itm/ link."""
        links = [a for a in self.item_links if link_class in _classes(a)] or self.item_links
        return links[0].get("href") if links else None


def _inside(element: etree._Element, container: etree._Element) -> bool:
    return any(ancestor is container for ancestor in element.iterancestors())


def _sponsored(index: _CardIndex, styles: _PageStyles) -> bool | None:
    """True/False when the card's sponsored label could be read, None when it could not."""
    unknown = False
    labels = index.all("s-item__title--tagblock", "s-card__sep", "s-item__sep", _ROLE_TEXT)
    for label in labels:
        text = styles.visible_text(label)
        if text is None:
            unknown = True
        elif _is_sponsored_label(text):
            return True
    return None if unknown else False


@dataclass
class _Card:
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


def _item_id(href: str | None) -> str | None:
    match = _ITEM_ID.search(href or "")
    return match.group(1) if match else None


def _scard(card: etree._Element, index: _CardIndex) -> _Card:
    """Fields of a 2025-2026 `li.s-card`."""
    href = index.href("s-card__link")
    prices = index.all("s-card__price")
    subtitles = index.all("s-card__subtitle")
    # A seller's own tagline can come first; the condition is the last subtitle's first span.
    condition = None
    if subtitles:
        first_span = _first(subtitles[-1].xpath(".//span"))
        condition = _text(first_span if first_span is not None else subtitles[-1]).rstrip(" ·")
    rows = [
        _text(row)
        for row in index.all("s-card__attribute-row")
        if not any(_inside(price, row) for price in prices)
    ]
    shipping = next((row for row in rows if _SHIPPING_WORDS.search(row)), None)
    return _Card(
        title=_clean_title(index.first("s-card__title")),
        link=href,
        listing_id=card.get("data-listingid") or _item_id(href),
        price_text=" ".join(_text(node) for node in prices),
        price_struck=any("strikethrough" in _classes(node) for node in prices),
        caption=_text(index.first("s-card__caption")),
        condition=condition or None,
        shipping_text=shipping,
        rows=[row for row in rows if row and row != shipping],
        new_listing=bool(index.all("s-card__new-listing")),
    )


def _sitem(index: _CardIndex) -> _Card:
    """Fields of a <=2025 `li.s-item`."""
    href = index.href("s-item__link")
    price = index.first("s-item__price")
    struck = price is not None and any(
        element is price or _inside(element, price) for element in index.all("STRIKETHROUGH")
    )
    subtitles = index.all("s-item__subtitle")
    condition = next(
        (
            info
            for info in index.all("SECONDARY_INFO")
            if any(_inside(info, subtitle) for subtitle in subtitles)
        ),
        _first(subtitles),
    )
    # The sold date sat in the tagblock's POSITIVE span, later in a caption element.
    tagblocks = index.all("s-item__title--tagblock")
    captions = [
        _text(node)
        for node in index.all(*_SITEM_CAPTIONS, "POSITIVE", "NEGATIVE")
        if _SITEM_CAPTIONS.intersection(_classes(node))
        or any(_inside(node, block) for block in tagblocks)
    ]
    caption = next((c for c in captions if parse_caption(c)[0] is not None), "")
    caption = caption or next((c for c in captions if c), "")
    titles = index.all("s-item__title")
    shipping = index.first("s-item__shipping", "s-item__logisticsCost")
    if shipping is None:
        shipping = index.first("s-item__freeXDays")
    return _Card(
        title=_clean_title(_first(titles)),
        link=href,
        listing_id=_item_id(href),
        price_text=_text(price),
        price_struck=struck,
        caption=caption,
        condition=_text(condition) or None,
        shipping_text=_text(shipping) or None,
        rows=[row for row in map(_text, index.all(*_SITEM_ROWS)) if row],
        new_listing=any(
            _inside(badge, title) for badge in index.all("LIGHT_HIGHLIGHT") for title in titles
        ),
    )


_OR_BEST_OFFER = re.compile(
    r"or best offer|oder preisvorschlag|ou offre directe|o proposta|o mejor oferta|"
    r"またはベストオファー|ベストオファー対応",
    re.I,
)
_OFFER_ACCEPTED = re.compile(
    r"best offer accepted|preisvorschlag angenommen|offre directe acceptée|"
    r"ベストオファー承認済み",
    re.I,
)
_LOCATION = re.compile(r"^(?:located in|from|aus|standort:?|発送元)\s+(\D.*)$", re.I)
_BIDS = re.compile(r"^(\d+)\s*(?:bids?|gebote?|enchères?|offerte|pujas?|件の入札)$", re.I)
_PLACEHOLDER_TITLE = "shop on ebay"
_PLACEHOLDER_ID = "123456"


def _in_class(node: etree._Element, classes: set[str]) -> bool:
    """True when an ancestor of `node` has one of `classes`."""
    return any(classes.intersection(_classes(ancestor)) for ancestor in node.iterancestors())


def _is_placeholder(node: etree._Element, card: _Card) -> bool:
    """True for the hidden "Shop on eBay" template cards (and the 2021 untitled one)."""
    if card.title.casefold() == _PLACEHOLDER_TITLE:
        return True
    if _PLACEHOLDER_ID in (card.listing_id, _item_id(card.link)):
        return True
    # Templates sit in a visually hidden container outside the result list.
    return not card.title and _in_class(node, {"clipped", "s-clipped"})


@dataclass(frozen=True)
class _Site:
    """The eBay site a page came from."""

    tld: str  # "com", "co.uk", "de", ...

    @property
    def currency(self) -> str | None:
        return SITE_CURRENCY.get(self.tld)

    def item_url(self, listing_id: str) -> str:
        return f"https://www.ebay.{self.tld}/itm/{listing_id}"


def _site_of(url: str | None) -> _Site | None:
    host = urlsplit(url or "").hostname or ""
    match = _HOST.search(host)
    return _Site(match.group(1)) if match else None


_X_CANONICAL = _xp("//link[@rel='canonical']/@href | //meta[@property='og:url']/@content")


def _page_site(url: str | None, root: etree._Element) -> _Site:
    """The site from the fetched url, else the page's canonical link, else ebay.com."""
    if site := _site_of(url):
        return site
    for candidate in _X_CANONICAL(root):
        if site := _site_of(candidate):
            return site
    return _Site("com")


def _listing(card: _Card, site: _Site, sponsored: bool | None, fewer_words: bool) -> Listing:
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
    offer_accepted = card.price_struck or any(_OFFER_ACCEPTED.search(r) for r in card.rows)
    if offer_accepted:
        extra["price_is"] = "asking price; the accepted offer is hidden"
    for row in card.rows:
        if _OR_BEST_OFFER.search(row):
            extra["best_offer"] = row
        elif match := _LOCATION.match(row):
            extra["location"] = match.group(1)
        elif match := _BIDS.match(row):
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
    item_site = _site_of(card.link) or site
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


# --- search pages ----------------------------------------------------------------------

_REWRITE = "srp-river-answer--REWRITE_START"
_X_CARDS = _xp(f"//li[{_has('s-card')} or {_has('s-item')}]")
_X_CARDS_AND_REWRITE = _xp(f"//li[{_has('s-card')} or {_has('s-item')}] | //*[{_has(_REWRITE)}]")
_X_COUNT_BOLD = _xp(f"//*[{_has('srp-controls__count-heading')}]//*[{_has('BOLD')}]")
_X_NULL_SEARCH = _xp(f"//*[{_has('srp-save-null-search')}]")
_X_NULL_HEADING = _xp(f"//*[{_has('srp-save-null-search__heading')}]")
_X_SEARCH_MARKERS = _xp(
    f"//ul[{_has('srp-results')}] | //h1[{_has('srp-controls__count-heading')}]"
    f" | //*[{_has('srp-save-null-search')}] | //*[@id='srp-river-results']"
)
_COUNT = re.compile(r"^\d[\d.,\s]*\+?$")


def _exact_count(root: etree._Element, url: str | None) -> int | None:
    """The "242 results for ..." figure, or None when the heading cannot be read."""
    query = (parse_qs(urlsplit(url or "").query).get("_nkw") or [""])[0].strip()
    for bold in _X_COUNT_BOLD(root):
        text = _text(bold)
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
        if _REWRITE in _classes(node):
            # The same notice also says "we filtered the results" (the Japanese page): only
            # when the exact results have run out do the cards after it match fewer words.
            return before if offset + before >= exact else None
        if id(node) in real:
            before += 1
    return None


def _parse_search(root: etree._Element, url: str | None, nodes: list) -> ParseResult:
    site = _page_site(url, root)
    styles = _PageStyles(root)
    dropped: Counter[str] = Counter()
    kept: list[tuple[etree._Element, _Card, _CardIndex]] = []
    for node in nodes:
        if _in_class(node, {"srp-river-answer"}):
            dropped["carousel"] += 1
            continue
        index = _CardIndex(node)
        card = _scard(node, index) if "s-card" in _classes(node) else _sitem(index)
        if _is_placeholder(node, card):
            dropped["placeholder"] += 1
        elif not card.title and not card.listing_id:
            dropped["unreadable"] += 1
        else:
            kept.append((node, card, index))
    fuzzy_from = _fewer_words_from(root, url, [node for node, _, _ in kept]) if kept else None
    records = tuple(
        _listing(card, site, _sponsored(index, styles), fuzzy_from is not None and i >= fuzzy_from)
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
    null = _first(_X_NULL_HEADING(root))
    return ParseResult(
        Outcome.EMPTY,
        "search",
        detail=_text(null) if null is not None else "no results",
        dropped=dict(dropped),
    )


# --- item (VIP) pages ------------------------------------------------------------------

_SCHEMA_CONDITION = re.compile(r"schema\.org/(\w+?)Condition$")
_X_LD_JSON = _xp("//script[@type='application/ld+json']/text()")
_X_ITEM_MARKERS = _xp(
    f"//h1[{_has('x-item-title__mainTitle')}] | //div[{_has('x-price-primary')}]"
    " | //*[@id='itemTitle' or @id='prcIsum']"
)
_X_ITEM_TITLE = _xp(f"//*[{_has('x-item-title__mainTitle')}]")
_X_ITEM_TITLE_BOLD = _xp(f".//*[{_has('ux-textspans--BOLD')}]")
_X_ITEM_TITLE_OLD = _xp("//*[@id='itemTitle'] | //h1")
_X_PRICE_PRIMARY = _xp(f"//*[{_has('x-price-primary')}]")
_X_OR_BEST_OFFER = _xp(f".//*[{_has('x-price-primary__orBestOffer')}]")
_X_PRICE_SPANS = _xp(
    f".//*[{_has('ux-textspans')}][not(ancestor::*[{_has('x-price-primary__orBestOffer')}])]"
)
_X_PRICE_OLD = _xp("//*[@id='prcIsum' or @id='mm-saleDscPrc' or @id='prcIsum_bidPrice']")
_X_PRICE_APPROX = _xp(f"//*[{_has('x-price-approx__price')}]")
_X_CONDITION = _xp(
    f"//*[{_has('x-item-condition-text')} or {_has('x-item-condition-value')}]"
    f"//*[{_has('ux-textspans')}] | //*[@id='vi-itm-cond']"
)


def _ld_product(root: etree._Element) -> dict:
    """The page's schema.org Product object from ld+json, or {}."""
    for script in _X_LD_JSON(root):
        try:
            data = json.loads(script)
        except (json.JSONDecodeError, TypeError):
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                kind = item.get("@type")
                if kind == "Product" or (isinstance(kind, list) and "Product" in kind):
                    return item
                stack.extend(item.get("@graph") or [])
    return {}


def _one_dict(value: object) -> dict:
    """The object itself, or the first of a list of objects; {} otherwise."""
    if isinstance(value, list):
        value = value[0] if value else {}
    return value if isinstance(value, dict) else {}


def _ld_amount(value: object) -> float | None:
    """A non-negative finite amount from ld+json (number or string), else None."""
    if isinstance(value, bool):
        return None
    try:
        amount = float(str(value).replace(",", ""))
    except (TypeError, ValueError):
        return None
    return amount if math.isfinite(amount) and 0 <= amount < 1e10 else None


def _is_item(root: etree._Element) -> bool:
    if _X_ITEM_MARKERS(root):
        return True
    return any(_item_id(c) for c in _X_CANONICAL(root)) and bool(_ld_product(root))


def _item_price(root: etree._Element, extra: dict[str, str]) -> str:
    """The primary price text; notes "or Best Offer" in `extra`."""
    primary = _first(_X_PRICE_PRIMARY(root))
    if primary is None:
        old = _first(_X_PRICE_OLD(root))
        return (old.get("content") or _text(old)) if old is not None else ""
    best_offer = _first(_X_OR_BEST_OFFER(primary))
    if best_offer is not None:
        extra["best_offer"] = _text(best_offer)
    span = _first(_X_PRICE_SPANS(primary))
    # Not `span or primary`: an lxml element without children is falsy.
    price_text = _text(span if span is not None else primary)
    if match := _OR_BEST_OFFER.search(price_text):
        extra.setdefault("best_offer", match.group(0))
        price_text = _OR_BEST_OFFER.sub("", price_text).strip()
    return price_text


def _parse_item(root: etree._Element, url: str | None) -> ParseResult:
    """One record from an item page; the primary price wins over ld+json.

    ld+json `offers.price` can be a conversion (the RTX 5090 page prints EUR 3,500.00 and
    its ld+json says 3971.45 USD), so it is only a fallback and a cross-check in `extra`.
    """
    site = _page_site(url, root)
    product = _ld_product(root)
    offer = _one_dict(product.get("offers"))
    extra: dict[str, str] = {}

    title_node = _first(_X_ITEM_TITLE(root))
    if title_node is not None:
        bold = _first(_X_ITEM_TITLE_BOLD(title_node))
        title_node = bold if bold is not None else title_node
    else:
        title_node = _first(_X_ITEM_TITLE_OLD(root))
    title = re.sub(r"^Details about\s+", "", _text(title_node)).rstrip(" -")
    title = title or str(product.get("name") or "")
    if not title:
        return ParseResult(Outcome.PARSE_ERROR, "item", detail="item page without a title")

    price_text = _item_price(root, extra)
    price, reason = price_or_reason(price_text, site.currency)
    if price_text:
        extra["price_text"] = price_text
    ld_price = _ld_amount(offer.get("price"))
    ld_currency = offer.get("priceCurrency")
    if ld_price is not None:
        extra["ld_json_price"] = f"{ld_price:g} {ld_currency or ''}".strip()
        if price is None and not price_text:
            # Only when the page prints no price: a printed price that is unreadable stays
            # unread rather than replaced by a figure that may be a conversion.
            price = parse_price(f"{ld_price:.2f} {ld_currency or ''}", site.currency)
            extra["price_from"] = "ld+json"
        elif ld_currency == price.currency and abs(ld_price - price.low) > 0.005:
            extra["price_check"] = "ld+json disagrees"
    approx = _first(_X_PRICE_APPROX(root))
    if approx is not None:
        extra["approx_price"] = _text(approx)

    condition = _text(_first(_X_CONDITION(root))) or None
    if condition is None:
        if match := _SCHEMA_CONDITION.search(str(offer.get("itemCondition", ""))):
            condition = match.group(1)

    listing_id = None
    for candidate in [*_X_CANONICAL(root), url, offer.get("url")]:
        if listing_id := _item_id(candidate):
            break

    shipping = None
    rate = _one_dict(_one_dict(offer.get("shippingDetails")).get("shippingRate"))
    if price is not None and rate.get("currency") == price.currency:
        shipping = _ld_amount(rate.get("value"))

    record = Listing(
        source=SOURCE,
        listing_id=listing_id,
        title=title,
        price=price.low if price else None,
        price_high=price.high if price else None,
        currency=price.currency if price else site.currency,
        condition=condition,
        sold=None,
        sold_date=None,
        best_offer_accepted=False,
        sponsored=False,
        url=site.item_url(listing_id) if listing_id else None,
        price_missing_reason=None
        if price
        else (reason if price_text and reason != "no number" else "no price on item page"),
        shipping=shipping,
        extra=extra,
    )
    return ParseResult(Outcome.OK, "item", (record,))


# --- entry point -----------------------------------------------------------------------

_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


def parse_ebay(content: bytes, url: str | None = None, charset: str | None = None) -> ParseResult:
    """Classify an eBay page and read its listings.

    Args:
        content: the response body as fetched.
        url: the url it was fetched from; its domain gives the currency for prices printed
            without a symbol and the site for record urls.
        charset: the charset of the response's Content-Type header, when known.

    Returns:
        BLOCKED for the bot wall (CAPTCHA for the hCaptcha page), OK with records for
        search and item pages, EMPTY for a results page with no real results, PARSE_ERROR
        for anything else: a page cut short or too big, and an exception inside the
        parser (never raised).
    """
    try:
        wall = is_block_page(content)
        if wall == "blocked":
            return ParseResult(Outcome.BLOCKED, "block", detail="Pardon Our Interruption")
        if wall == "captcha":
            return ParseResult(Outcome.CAPTCHA, "captcha", detail="eBay security measure")
        if not isinstance(content, bytes | bytearray | str):
            return ParseResult(
                Outcome.PARSE_ERROR, "unknown", detail=f"not a page: {type(content).__name__}"
            )
        if isinstance(content, str):
            content = content.encode("utf-8", "replace")
        if incomplete := incomplete_reason(bytes(content)):
            return ParseResult(Outcome.PARSE_ERROR, "unknown", detail=incomplete)
        text = decode_page(bytes(content), charset)
        text = _XML_DECLARATION.sub("", text)
        if not text.strip():
            return ParseResult(Outcome.PARSE_ERROR, "unknown", detail="empty body")
        root = lxml_html.document_fromstring(text)
        if _is_item(root):
            return _parse_item(root, url)
        cards = _X_CARDS(root)
        if cards or _X_SEARCH_MARKERS(root):
            return _parse_search(root, url, cards)
        return ParseResult(
            Outcome.PARSE_ERROR, "unknown", detail="not an eBay search, item or block page"
        )
    except Exception as exc:
        # The contract is "never raises on bad input": a surprise is a classified page.
        return ParseResult(Outcome.PARSE_ERROR, "unknown", detail=f"{type(exc).__name__}: {exc}")
