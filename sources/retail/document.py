"""Bytes of a fetched page -> text, and whether the page arrived whole.

Decoding never changes what a page says: the charset is taken per document (a byte-order
mark, then the charset the server or the page declares, then UTF-8 with undecodable bytes
replaced), never guessed for the whole page from one bad byte. A single-byte fallback
such as cp1252 would turn "円" into three Latin letters and let a yen price be read in the
marketplace's dollars.
"""

import codecs
import re

# Larger than any real results or item page (the biggest captured one is 2.6 MB), small
# enough that a hostile page cannot keep the parser busy for minutes.
MAX_PAGE_BYTES = 10 * 1024 * 1024

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# <meta charset="x"> and <meta http-equiv="Content-Type" content="text/html; charset=x">.
_META_CHARSET = re.compile(
    rb"<meta[^>]{0,200}?charset\s*=\s*[\"']?\s*([A-Za-z0-9_.:-]{1,40})", re.I
)
_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?([A-Za-z0-9_.:-]{1,40})", re.I)
_HTML_END = re.compile(rb"</html\s*>", re.I)
# What real pages carry after `</html>` (eBay: a tracking script of up to 1.5 KB).
MAX_AFTER_END = 8192
# lxml refuses NUL and most C0 control characters; a damaged or binary capture has them.
# They become U+FFFD, not nothing: a control byte where a digit was ("$\x1f8.27" for
# "$18.27") must leave a mark the price reader refuses, not a shorter number.
# C1 controls and the Unicode line separators go the same way: str.split(), which collapses
# an element's text, would take them for spaces.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029]")


def _codec(name: str | None) -> str | None:
    """The Python codec for a declared charset name, or None when unknown."""
    if not name:
        return None
    try:
        codec = codecs.lookup(name.strip().lower()).name
    except LookupError:
        return None
    # A page cannot really be UTF-16 when its own ASCII meta tag was readable: the
    # declaration is wrong (WHATWG encoding rules say the same), so read it as UTF-8.
    return "utf-8" if codec.startswith("utf-16") else codec


def declared_charset(content_type: str | None) -> str | None:
    """The charset parameter of a Content-Type header value, if any."""
    match = _HEADER_CHARSET.search(content_type or "")
    return match.group(1) if match else None


def decode_page(content: bytes, declared: str | None = None) -> str:
    """The page as text, in the encoding the document itself establishes.

    Args:
        content: The response body.
        declared: The charset from the response's Content-Type header, when known.

    Returns:
        The text: per its BOM, else the declared charset (header, then meta tag) unless
        the bytes are UTF-8 with multi-byte characters, else UTF-8; bytes the chosen
        charset cannot decode become U+FFFD, which no price pattern matches, and so do
        the control characters lxml refuses.
    """
    for bom, codec in _BOMS:
        if content.startswith(bom):
            return _CONTROL.sub("\ufffd", content[len(bom) :].decode(codec, "replace"))
    codec = _codec(declared)
    if codec is None:
        match = _META_CHARSET.search(content[:16384])
        codec = _codec(match.group(1).decode("ascii")) if match else None
    if codec not in (None, "utf-8") and _is_utf8_text(content):
        # Another declared charset on bytes that are UTF-8 is a wrong declaration:
        # honouring it would turn "円" into "å††" and a yen price into dollars.
        codec = "utf-8"
    return _CONTROL.sub("\ufffd", content.decode(codec or "utf-8", "replace"))


def _is_utf8_text(content: bytes) -> bool:
    """Whether `content` is UTF-8 with multi-byte characters, bar a few damaged bytes.

    Text in a single-byte charset almost never forms valid multi-byte sequences ("café"
    in Latin-1 is "caf" + an invalid byte), so many valid sequences and few invalid
    bytes mean UTF-8, however the page is labelled.
    """
    if content.isascii():
        return False
    text = content.decode("utf-8", "replace")
    bad = text.count("\ufffd") - content.decode("utf-8", "ignore").count("\ufffd")
    good = sum(1 for c in text if ord(c) > 127 and c != "\ufffd")
    return good > 0 and bad * 4 <= good


def incomplete_reason(content: bytes) -> str | None:
    """Why an HTML page is not whole (too big, or cut before `</html>`), else None.

    A page cut inside a price ("$369.99" -> "$36") still parses; only its missing end
    tells. Every captured Amazon and eBay page ends with `</html>` (eBay follows it with
    a tracking script), so a page without one near its end was cut short.
    """
    if len(content) > MAX_PAGE_BYTES:
        return f"page larger than {MAX_PAGE_BYTES // (1024 * 1024)} MB"
    # The last one: a `</html>` inside an inline frame or script string (amazon.de prints
    # one 45 KB before the end) must not vouch for a page cut after it.
    ends = list(_HTML_END.finditer(content, max(0, len(content) - 65536)))
    if not ends or len(content) - ends[-1].end() > MAX_AFTER_END:
        return "truncated page: no closing </html>"
    return None
