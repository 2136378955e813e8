"""The entry point: classify an eBay page (bot wall, item, search, other) and parse it."""

import re

from lxml import html as lxml_html

from sources.retail.document import decode_page, incomplete_reason
from sources.retail.ebay.item import is_item, parse_item
from sources.retail.ebay.search import X_CARDS, X_SEARCH_MARKERS, parse_search
from sources.retail.records import Outcome, ParseResult

# Literal byte searches: a case-insensitive regex over a 2 MB page costs a tenth of a second.
# The title, not the bare phrase, so that a listing titled so cannot trip the breaker.
_BLOCKED = (b"<title>Pardon Our Interruption", b"Checking your browser before you access eBay")
# eBay's hCaptcha wall (served from /splashui/captcha).
_CAPTCHA = re.compile(rb"<title>\s*Security Measure\s*</title>")
_XML_DECLARATION = re.compile(r"^\s*<\?xml[^>]*\?>")


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
        if is_item(root):
            return parse_item(root, url)
        cards = X_CARDS(root)
        if cards or X_SEARCH_MARKERS(root):
            return parse_search(root, url, cards)
        return ParseResult(
            Outcome.PARSE_ERROR, "unknown", detail="not an eBay search, item or block page"
        )
    except Exception as exc:
        # The contract is "never raises on bad input": a surprise is a classified page.
        return ParseResult(Outcome.PARSE_ERROR, "unknown", detail=f"{type(exc).__name__}: {exc}")
