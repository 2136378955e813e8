"""Amazon pages -> typed listings: search results, product pages and bot checks.

`parse_amazon` is pure (bytes in, `ParseResult` out) and never raises. It reads:

- bot checks served with HTTP 200: a form posting to `/errors/validateCaptcha`, both the
  classic "Enter the characters you see below" page and the 2025 "Click the button below
  to continue shopping" page without an image -> `Outcome.CAPTCHA`;
- search results in three layouts: 2018 `li.s-result-item[data-asin]`; 2021+
  `div[data-component-type="s-search-result"]`; and 2024+ cards of that kind whose first
  `h2` holds only the brand, the title being the next `h2`;
- product pages: `#productTitle` and the buy-box price, from the 2018 `#priceblock_*`
  spans to the 2023+ `corePrice` blocks whose screen-reader text is often empty.

Prices come from price elements only, never from titles. The page is parsed with lxml
directly (no BeautifulSoup tree): a 2.6 MB results page parses in well under a second.
"""

import html
import re
from collections.abc import Callable, Iterable
from urllib.parse import urlsplit

import lxml.html
from lxml import etree

from sources.retail.document import decode_page, incomplete_reason
from sources.retail.money import (
    ZERO_PRICE,
    Price,
    Unreadable,
    read_number,
    read_price,
    symbol_currency,
)
from sources.retail.records import Listing, Outcome, ParseResult

SOURCE = "amazon"

# Marketplace domain -> the currency its prices are in when the text shows no symbol.
DOMAIN_CURRENCY: dict[str, str] = {
    "amazon.com": "USD",
    "amazon.co.uk": "GBP",
    "amazon.de": "EUR",
    "amazon.fr": "EUR",
    "amazon.it": "EUR",
    "amazon.es": "EUR",
    "amazon.in": "INR",
    "amazon.com.br": "BRL",
    "amazon.sa": "SAR",
    "amazon.co.jp": "JPY",
    "amazon.ca": "CAD",
    "amazon.com.au": "AUD",
}
# Amazon's public marketplace ids, printed in every page's `ue_mid` script variable: the
# surest way to tell the marketplace of a saved page when its URL is unknown.
MARKETPLACE_IDS: dict[str, str] = {
    "ATVPDKIKX0DER": "amazon.com",
    "A1F83G8C2ARO7P": "amazon.co.uk",
    "A1PA6795UKMFR9": "amazon.de",
    "A13V1IB3VIYZZH": "amazon.fr",
    "APJ6JRA9NG5V4": "amazon.it",
    "A1RKKUPIHCS9HS": "amazon.es",
    "A21TJRUUN4KGV": "amazon.in",
    "A2Q3Y263D00KWC": "amazon.com.br",
    "A17E79C6D8DWNP": "amazon.sa",
    "A1VC38T7YXB528": "amazon.co.jp",
    "A2EUQ1WTGCTBG2": "amazon.ca",
    "A39IBJ37TRP1C6": "amazon.com.au",
}

# "No results for" as the main marketplaces word it (.de/.fr render in English for some
# visitors, so every page is checked for all of them).
_NO_RESULTS = (
    "No results for",
    "Keine Ergebnisse für",
    "Aucun résultat pour",
    "Nessun risultato per",
    "No hay resultados para",
    "Nenhum resultado para",
)
_SPONSORED_WORDS = ("Sponsored", "Gesponsert", "Sponsorisé", "Sponsorizzato", "Patrocinado")

_CAPTCHA_FORM = re.compile(
    rb"<form[^>]*action\s*=\s*[\"'][^\"']*/errors/validateCaptcha", re.IGNORECASE
)
_MARKETPLACE_ID = re.compile(
    r"(?:ue_mid|obfuscatedMarketplaceId)\s*[=:]\s*['\"]([A-Z0-9]{8,16})['\"]"
)
_AMAZON_HOST = re.compile(r"https?://(?:www\.)?(amazon\.(?:com\.[a-z]{2}|co\.[a-z]{2}|[a-z]{2,3}))")
_ASIN = re.compile(r"^[A-Z0-9]{10}$")
_DP_ASIN = re.compile(r"/(?:dp|gp/product)/([A-Z0-9]{10})(?:[/?#]|$)")
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{2,6}|#x[0-9A-Fa-f]{2,6});")
# Amazon's 2018 pages print "Men&#39;s" as "Men39;s" (the "&#" is lost upstream).
_LOST_APOSTROPHE = re.compile(r"(?<=[A-Za-z])39;")
_SPONSORED_PREFIX = re.compile(
    r"^\s*(?:\[?(?:" + "|".join(_SPONSORED_WORDS) + r")\]?)(?:\s+Ad)?\s*[-–—:]?\s*",
    re.IGNORECASE,
)

# Product-page containers that hold the buy-box price, most specific first.
_CORE_PRICE_IDS = (
    "corePrice_feature_div",
    "corePriceDisplay_desktop_feature_div",
    "corePrice_desktop",
    "apex_desktop",
)
_LEGACY_PRICE_IDS = ("priceblock_ourprice", "priceblock_dealprice", "priceblock_saleprice")


def _cls(name: str) -> str:
    """XPath predicate: the element's class list contains `name`."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


# A current price: an .a-price that is neither a list/was price (.a-text-price, struck
# through) nor inside one. Per-unit prices ("$1.16/Ounce") are .a-text-price too.
_CURRENT_PRICE = (
    f".//span[{_cls('a-price')} and not({_cls('a-text-price')})"
    f" and not(@data-a-strike='true')"
    f" and not(ancestor::*[{_cls('a-text-price')} or @data-a-strike='true'])]"
)
_TEXT_NODES = ".//text()[not(ancestor::script) and not(ancestor::style)]"
# A card's text outside its titles: where "Currently unavailable" etc. is read from, so a
# title that happens to contain those words cannot set the reason.
_STATUS_NODES = ".//text()[not(ancestor::script) and not(ancestor::style) and not(ancestor::h2)]"


# ---------------------------------------------------------------------------------------
# Entry points


def is_block_page(content: bytes) -> str | None:
    """'captcha' when the page is one of Amazon's bot checks, else None.

    Both variants post a form to /errors/validateCaptcha; nothing else does, so the HTTP
    client's circuit breaker can call this on every response without parsing the page.
    """
    if _CAPTCHA_FORM.search(content):
        return "captcha"
    return None


def parse_amazon(content: bytes, url: str | None = None, charset: str | None = None) -> ParseResult:
    """Classify an Amazon page and extract its listings.

    Args:
        content: The response body as fetched.
        url: The page's URL; its domain sets the marketplace (and so the currency of
            prices printed without a symbol). Without it the marketplace is read from the
            page itself.
        charset: The charset of the response's Content-Type header, when known.

    Returns:
        A `ParseResult`: CAPTCHA for a bot check, OK with records for a results or
        product page, EMPTY for a "No results for" page, PARSE_ERROR for anything else
        (a page cut short or too big, and an exception while parsing, with its message
        in `detail`).
    """
    try:
        return _parse(content, url, charset)
    except Exception as exc:  # a bad page must become an outcome, never stop a night's run
        return ParseResult(
            Outcome.PARSE_ERROR, "unknown", detail=f"{type(exc).__name__}: {exc}"[:500]
        )


def _parse(content: bytes, url: str | None, charset: str | None) -> ParseResult:
    if not content or not content.strip():
        return ParseResult(Outcome.PARSE_ERROR, "unknown", detail="empty response body")
    if is_block_page(content):
        return ParseResult(
            Outcome.CAPTCHA, "captcha", detail="Amazon bot check (/errors/validateCaptcha)"
        )
    if incomplete := incomplete_reason(content):
        return ParseResult(Outcome.PARSE_ERROR, "unknown", detail=incomplete)
    text = decode_page(content, charset)
    doc = lxml.html.document_fromstring(text)
    domain = _domain_from_url(url) or _domain_from_page(text, doc)
    if doc.xpath("//*[@id='productTitle']") or doc.xpath("//*[@id='dp']"):
        return _parse_product(doc, domain, url)
    modern = doc.xpath("//*[@data-component-type='s-search-result']")
    if modern:
        return _search_result(doc, modern, _modern_card, domain)
    legacy = doc.xpath(f"//li[{_cls('s-result-item')}]")
    if legacy:
        return _search_result(doc, legacy, _legacy_card, domain)
    if _says_no_results(doc):
        return ParseResult(Outcome.EMPTY, "search", detail="the page says there are no results")
    return ParseResult(
        Outcome.PARSE_ERROR, "unknown", detail="no Amazon search results or product found"
    )


# ---------------------------------------------------------------------------------------
# Decoding and marketplace


def _domain_from_url(url: str | None) -> str | None:
    if not url:
        return None
    host = (urlsplit(url).hostname or "").lower()
    match = re.search(r"(?:^|\.)(amazon\.[a-z.]+)$", host)
    return match.group(1) if match else None


def _domain_from_page(text: str, doc: etree._Element) -> str | None:
    """The marketplace a saved page belongs to: its marketplace id, canonical link or links."""
    for marketplace_id in _MARKETPLACE_ID.findall(text):
        if marketplace_id in MARKETPLACE_IDS:
            return MARKETPLACE_IDS[marketplace_id]
    for href in doc.xpath("//link[@rel='canonical']/@href"):
        domain = _domain_from_url(href)
        if domain:
            return domain
    # Last resort: the marketplace its own absolute links point to most often.
    counts: dict[str, int] = {}
    for host in _AMAZON_HOST.findall(text):
        counts[host] = counts.get(host, 0) + 1
    return max(counts, key=counts.__getitem__) if counts else None


def _product_url(domain: str | None, asin: str | None) -> str | None:
    """The canonical product URL, without the tracking parameters of the page's links."""
    if not domain or not asin:
        return None
    return f"https://www.{domain}/dp/{asin}"


# ---------------------------------------------------------------------------------------
# Text and price helpers


def _text(element: etree._Element) -> str:
    """Visible text of an element with whitespace collapsed (scripts and styles skipped)."""
    return " ".join(" ".join(element.xpath(_TEXT_NODES)).split())


def _clean_title(title: str) -> str:
    # Some titles arrive escaped twice ("Land &amp; Sea") or with a mangled apostrophe.
    if _ENTITY.search(title):
        title = html.unescape(title)
    title = _LOST_APOSTROPHE.sub("'", title)
    return " ".join(title.split())


def _first(elements: Iterable[etree._Element]) -> etree._Element | None:
    return next(iter(elements), None)


def _read_price(text: str | None, domain: str | None) -> Price | None:
    """Parse a price element's text in the marketplace's currency; None without digits.

    Raises:
        Unreadable: The text has digits but is no well-formed price.
    """
    if not text or not any(c.isdigit() for c in text):
        return None
    return read_price(text, DOMAIN_CURRENCY.get(domain or ""))


def _whole_fraction_price(price_el: etree._Element, domain: str | None) -> Price | None:
    """A price rebuilt from the aria-hidden `.a-price-whole` + `.a-price-fraction` spans.

    The whole part ends in the locale's decimal mark when a fraction span follows ("1.499,"
    + "99", "109." + "99"); some layouts (amazon.de 2022) put the whole price in it
    ("2.95") with no fraction span. The whole part is read strictly either way, so neither
    its grouping nor its decimals can be dropped into a 100x price.

    Raises:
        Unreadable: The spans do not make one well-formed positive price.
    """
    whole_el = _first(price_el.xpath(f".//span[{_cls('a-price-whole')}]"))
    if whole_el is None:
        return None
    whole_text = _text(whole_el)
    if not any(c.isdigit() for c in whole_text):
        return None
    symbol_el = _first(price_el.xpath(f".//span[{_cls('a-price-symbol')}]"))
    symbol = _text(symbol_el) if symbol_el is not None else ""
    default = DOMAIN_CURRENCY.get(domain or "")
    fraction_el = _first(price_el.xpath(f".//span[{_cls('a-price-fraction')}]"))
    fraction = _text(fraction_el) if fraction_el is not None else ""
    if not fraction:
        return read_price(f"{symbol} {whole_text}", default)
    currency = symbol_currency(symbol, default)
    whole = read_number(whole_text, currency)
    if whole != int(whole) or not re.fullmatch(r"[0-9]{2}", fraction, re.ASCII):
        raise Unreadable(f"whole {whole_text!r:.20} and fraction {fraction!r:.10} disagree")
    value = float(f"{int(whole)}.{fraction}")
    if value <= 0:
        raise Unreadable(ZERO_PRICE)
    return Price(value, None, currency)


class _Tries:
    """Price readings in order of preference, remembering why refused ones were refused."""

    def __init__(self) -> None:
        self.refused: str | None = None

    def read(self, read: Callable[..., Price | None], *args: object) -> Price | None:
        """`read(*args)`, or None (the refusal kept) when its text is no price."""
        try:
            return read(*args)
        except Unreadable as exc:
            self.refused = self.refused or str(exc)
            return None

    def reason(self, fallback: str) -> str:
        """Why no price was read: the first refusal, else `fallback`."""
        if self.refused is None:
            return fallback
        return ZERO_PRICE if self.refused == ZERO_PRICE else f"unreadable price: {self.refused}"


def _a_price(price_el: etree._Element, domain: str | None, tries: _Tries) -> Price | None:
    """The price an `.a-price` element shows: its screen-reader text, else whole+fraction."""
    offscreen = _first(price_el.xpath(f".//span[{_cls('a-offscreen')}]"))
    price = tries.read(_read_price, _text(offscreen), domain) if offscreen is not None else None
    return price or tries.read(_whole_fraction_price, price_el, domain)


def _missing_reason(*elements: etree._Element) -> str:
    """Why a card or product shows no price, from what the elements say instead."""
    texts = (text for element in elements for text in element.xpath(_STATUS_NODES))
    said = " ".join(" ".join(texts).split()).lower()
    if "currently unavailable" in said:
        return "currently unavailable"
    if "see price in cart" in said or "add this item to your cart" in said:
        return "see price in cart"
    if "no featured offers available" in said:
        return "no featured offers"
    return "no price shown"


def _listing(
    *,
    asin: str | None,
    title: str,
    price: Price | None,
    reason: str | None,
    domain: str | None,
    sponsored: bool,
    condition: str | None = None,
    extra: dict[str, str] | None = None,
) -> Listing:
    """One record: a price, or None with the reason there is none."""
    return Listing(
        source=SOURCE,
        listing_id=asin,
        title=title,
        price=price.low if price else None,
        price_high=price.high if price else None,
        currency=price.currency if price else None,
        condition=condition,
        sold=None,
        sold_date=None,
        best_offer_accepted=False,
        sponsored=sponsored,
        url=_product_url(domain, asin),
        price_missing_reason=None if price else reason,
        extra=extra or {},
    )


# ---------------------------------------------------------------------------------------
# Search results


def _search_result(
    doc: etree._Element,
    cards: list[etree._Element],
    read_card: Callable[[etree._Element, str, str | None], Listing | None],
    domain: str | None,
) -> ParseResult:
    """Read every card of a results page; count the ones without an ASIN or title."""
    records: list[Listing] = []
    dropped: dict[str, int] = {}
    for card in cards:
        asin = (card.get("data-asin") or "").strip().upper()
        if not _ASIN.match(asin):
            # Placeholders, layout spacers and widget shells carry no (valid) ASIN.
            dropped["no_asin"] = dropped.get("no_asin", 0) + 1
            continue
        record = read_card(card, asin, domain)
        if record is None:
            dropped["no_title"] = dropped.get("no_title", 0) + 1
            continue
        records.append(record)
    no_results = _says_no_results(doc)
    if not records:
        if no_results:
            return ParseResult(
                Outcome.EMPTY,
                "search",
                detail="the page says there are no results",
                dropped=dropped,
            )
        return ParseResult(
            Outcome.PARSE_ERROR, "search", detail="no result card with an ASIN", dropped=dropped
        )
    detail = ""
    if no_results:
        # Amazon follows "No results for X" with results for related searches.
        detail = "the page says there are no results for the query; cards are related results"
    return ParseResult(Outcome.OK, "search", tuple(records), detail=detail, dropped=dropped)


def _says_no_results(doc: etree._Element) -> bool:
    """Whether the page's visible text says the query found nothing.

    One pass over the tree (an XPath with `ancestor::` tests per text node is quadratic
    on a deeply nested page); script and style contents are skipped, their tails are not.
    """
    body = doc.find("body")
    if body is None:
        return False
    for element in body.iter():
        texts = [element.tail] if element is not body else []
        if isinstance(element.tag, str) and element.tag not in ("script", "style"):
            texts.append(element.text)  # not a comment's or a script's own text
        for text in texts:
            if text and any(phrase in text for phrase in _NO_RESULTS):
                return True
    return False


def _modern_title(card: etree._Element) -> tuple[str, str | None]:
    """(title, brand) of a 2021+ card.

    The title is the h2 tied to the product link. Since ~2024 a card may open with an
    unlinked `h2.s-line-clamp-1` holding only the brand, and may carry further unlinked
    h2s (certification side sheets such as "OEKO-TEX STANDARD 100"); those are not titles.
    The brand is put in front of a title that does not already start with it, so "ASUS" +
    "ROG Strix GeForce RTX 4090 ..." reads as the full product name.
    """
    h2s = card.xpath(".//h2")
    linked = [h for h in h2s if h.xpath("ancestor::a") or h.xpath(".//a")]
    title_h2 = linked[0] if linked else None
    brand = None
    for h2 in h2s:
        if h2 is title_h2:
            break
        if "s-line-clamp-1" in (h2.get("class") or "").split():
            brand = _text(h2) or None
    if title_h2 is None:
        # No link around any h2: the first h2 with text that is not the brand.
        texts = ((h, _text(h)) for h in h2s)
        title_h2 = next((h for h, text in texts if text and text != brand), None)
    if title_h2 is None:
        return "", brand
    title = _text(title_h2)
    if not title:
        # The aria-label repeats the title, prefixed "Sponsored Ad – " on ads.
        title = _SPONSORED_PREFIX.sub("", title_h2.get("aria-label") or "", count=1)
    title = _clean_title(title)
    if brand and title and not title.lower().startswith(brand.lower()):
        title = f"{brand} {title}"
    return title, brand


def _modern_sponsored(card: etree._Element) -> bool:
    if "AdHolder" in (card.get("class") or "").split():
        return True
    if card.xpath(f".//*[{_cls('puis-sponsored-label-text')} or {_cls('s-sponsored-label-text')}]"):
        return True
    labels = card.xpath(f".//h2/@aria-label | .//*[{_cls('puis-label-popover-default')}]//text()")
    return any(str(label).strip().startswith(_SPONSORED_WORDS) for label in labels)


def _modern_card(card: etree._Element, asin: str, domain: str | None) -> Listing | None:
    """A 2021+ `s-search-result` card (including the 2024+ brand-h2 variant)."""
    title, brand = _modern_title(card)
    if not title:
        return None
    price = None
    tries = _Tries()
    for price_el in card.xpath(_CURRENT_PRICE):
        price = _a_price(price_el, domain, tries)
        if price is not None or tries.refused is not None:
            # The card's first price decides: a $0.00 Kindle price is no price, not a
            # reason to take the paperback's.
            break
    return _listing(
        asin=asin,
        title=title,
        price=price,
        reason=None if price else tries.reason(_missing_reason(card)),
        domain=domain,
        sponsored=_modern_sponsored(card),
        extra={"brand": brand} if brand else None,
    )


def _legacy_title(card: etree._Element) -> str:
    """Title of a 2018 card.

    The h2's data-attribute (or the link's title) is clean; the h2's text may start with
    a screen-reader "[Sponsored]".
    """
    for value in card.xpath(
        f".//h2[{_cls('s-access-title')}]/@data-attribute"
        f" | .//a[{_cls('s-access-detail-page')}]/@title"
    ):
        if str(value).strip():
            return _clean_title(str(value))
    h2 = _first(card.xpath(".//h2"))
    if h2 is None:
        return ""
    parts = h2.xpath(
        f".//text()[not(ancestor::*[{_cls('a-offscreen')}]) and not(ancestor::script)]"
    )
    return _clean_title(" ".join(parts))


def _legacy_price(card: etree._Element, domain: str | None, tries: _Tries) -> Price | None:
    """Price of a 2018 card: the screen-reader text (may be a range), else sx-price spans."""
    offscreens = card.xpath(
        f".//span[{_cls('a-offscreen')} and not(ancestor::h2)"
        f" and not(ancestor::*[{_cls('a-text-strike')}])]"
    )
    for offscreen in offscreens:
        price = tries.read(_read_price, _text(offscreen), domain)
        if price is not None:
            return price
    block = _first(card.xpath(f".//span[{_cls('sx-price')}]"))
    return tries.read(_sx_price, block, domain) if block is not None else None


def _sx_price(block: etree._Element, domain: str | None) -> Price | None:
    """A 2018 `sx-price` block: whole + fractional spans, one per end of a range.

    Raises:
        Unreadable: A span pair is not a well-formed positive price.
    """
    symbol_el = _first(block.xpath(f".//*[{_cls('sx-price-currency')}]"))
    symbol = _text(symbol_el) if symbol_el is not None else ""
    currency = symbol_currency(symbol, DOMAIN_CURRENCY.get(domain or ""))
    values = []
    for whole in block.xpath(f".//span[{_cls('sx-price-whole')}]"):
        fraction = _first(whole.xpath(f"following-sibling::*[{_cls('sx-price-fractional')}][1]"))
        whole_text = _text(whole)
        cents = _text(fraction) if fraction is not None else ""
        if not any(c.isdigit() for c in whole_text):
            continue
        amount = read_number(whole_text, currency)
        if cents and (amount != int(amount) or not re.fullmatch(r"[0-9]{2}", cents, re.ASCII)):
            raise Unreadable(f"whole {whole_text!r:.20} and fraction {cents!r:.10} disagree")
        value = float(f"{int(amount)}.{cents}") if cents else amount
        if value <= 0:
            raise Unreadable(ZERO_PRICE)
        values.append(value)
    if not values:
        return None
    high = values[1] if len(values) > 1 and values[1] != values[0] else None
    if high is not None and high < values[0]:
        return Price(high, values[0], currency)
    return Price(values[0], high, currency)


def _legacy_card(card: etree._Element, asin: str, domain: str | None) -> Listing | None:
    """A 2018 `li.s-result-item` card."""
    title = _legacy_title(card)
    if not title:
        return None
    sponsored = "AdHolder" in (card.get("class") or "").split() or bool(
        card.xpath(f".//*[{_cls('s-sponsored-header')}]")
    )
    tries = _Tries()
    price = _legacy_price(card, domain, tries)
    return _listing(
        asin=asin,
        title=title,
        price=price,
        reason=None if price else tries.reason(_missing_reason(card)),
        domain=domain,
        sponsored=sponsored,
    )


# ---------------------------------------------------------------------------------------
# Product pages


def _all_by_id(doc: etree._Element, element_id: str) -> list[etree._Element]:
    # Amazon repeats ids: every accordion row of a buy box has its own corePrice block.
    return doc.xpath("//*[@id=$id]", id=element_id)


def _by_id(doc: etree._Element, element_id: str) -> etree._Element | None:
    return _first(_all_by_id(doc, element_id))


def _product_asin(doc: etree._Element, url: str | None) -> str | None:
    candidates = doc.xpath("//input[@id='ASIN']/@value | //input[@name='ASIN']/@value")
    candidates += doc.xpath(
        "//*[@id='dp']/@data-asin | //*[@id='averageCustomerReviews']/@data-asin"
    )
    for value in candidates:
        if _ASIN.match(str(value).strip()):
            return str(value).strip()
    for href in [*doc.xpath("//link[@rel='canonical']/@href"), url or ""]:
        match = _DP_ASIN.search(str(href))
        if match:
            return match.group(1)
    return None


def _product_title(doc: etree._Element) -> str:
    for element_id in ("productTitle", "title", "btAsinTitle"):
        element = _by_id(doc, element_id)
        if element is not None and _text(element):
            return _clean_title(_text(element))
    og = doc.xpath("//meta[@property='og:title']/@content | //meta[@name='title']/@content")
    return _clean_title(str(og[0])) if og else ""


def _offer_row(element: etree._Element) -> str | None:
    """'new' / 'used' when the element sits in an accordion buy box's new or used row."""
    for row_id in element.xpath("ancestor::*[contains(@id, 'AccordionRow')]/@id"):
        if str(row_id).startswith("newAccordionRow"):
            return "new"
        if str(row_id).startswith("usedAccordionRow"):
            return "used"
    return None


def _current_prices(container: etree._Element) -> list[etree._Element]:
    """The current-price `.a-price` elements of a container, the container included."""
    own = container.xpath(
        f"self::*[{_cls('a-price')} and not({_cls('a-text-price')}) and not(@data-a-strike='true')]"
    )
    return own + container.xpath(_CURRENT_PRICE)


def _offscreen_price(price_el: etree._Element, domain: str | None) -> Price | None:
    offscreen = _first(price_el.xpath(f".//span[{_cls('a-offscreen')}]"))
    return _read_price(_text(offscreen), domain) if offscreen is not None else None


def _product_price(
    doc: etree._Element, domain: str | None, tries: _Tries
) -> tuple[Price | None, etree._Element | None]:
    """(buy-box price, its element), in the order the page generations need.

    1. `#corePrice_feature_div .a-offscreen` with text (2023+);
    2. `.priceToPay` / `#corePriceDisplay_desktop_feature_div` / `#corePrice_desktop`
       `.a-offscreen` with text;
    3. the aria-hidden `.a-price-whole` + `.a-price-fraction` of those blocks (their
       `.a-offscreen` is often empty and these spans the only filled ones);
    4. the 2018 `#priceblock_ourprice` / `#priceblock_dealprice` spans.

    List and was prices (struck through) are skipped everywhere, and the new offer of an
    accordion buy box is preferred to its used one, whatever the order.
    """
    core = _all_by_id(doc, _CORE_PRICE_IDS[0])
    to_pay = doc.xpath(f"//*[{_cls('priceToPay')} or {_cls('apexPriceToPay')}]")
    others = to_pay + [b for i in _CORE_PRICE_IDS[1:] for b in _all_by_id(doc, i)]
    steps = (
        (core, _offscreen_price),
        (others, _offscreen_price),
        (core + others, _whole_fraction_price),
    )
    used: tuple[Price, etree._Element] | None = None
    for containers, read in steps:
        for container in containers:
            for price_el in _current_prices(container):
                price = tries.read(read, price_el, domain)
                if price is None:
                    continue
                if _offer_row(price_el) != "used":
                    return price, price_el
                used = used or (price, price_el)
    for element_id in _LEGACY_PRICE_IDS:
        element = _by_id(doc, element_id)
        price = tries.read(_read_price, _text(element), domain) if element is not None else None
        if price is not None:
            return price, element
    return used if used else (None, None)


def _product_condition(doc: etree._Element, price_el: etree._Element | None) -> str | None:
    """'new' when the page labels the offer new ("Buy new:"), 'used' for a used-row offer."""
    if price_el is None:
        return None
    row = _offer_row(price_el)
    if row:
        return row
    caption = _by_id(doc, "newAccordionCaption_feature_div")
    if caption is not None and re.search(r"\bnew\b", _text(caption), re.IGNORECASE):
        return "new"
    return None


def _parse_product(doc: etree._Element, domain: str | None, url: str | None) -> ParseResult:
    title = _product_title(doc)
    asin = _product_asin(doc, url)
    if not title and not asin:
        return ParseResult(Outcome.PARSE_ERROR, "item", detail="product page without title or ASIN")
    tries = _Tries()
    price, price_el = _product_price(doc, domain, tries)
    reason = None
    if price is None:
        statuses = (_by_id(doc, i) for i in ("availability", "outOfStock", "buybox"))
        reason = tries.reason(_missing_reason(*(e for e in statuses if e is not None)))
    record = _listing(
        asin=asin,
        title=title,
        price=price,
        reason=reason,
        domain=domain,
        sponsored=False,
        condition=_product_condition(doc, price_el) if price else None,
    )
    return ParseResult(Outcome.OK, "item", (record,))
