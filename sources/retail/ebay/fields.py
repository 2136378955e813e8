"""Field readers for the text eBay prints: sold/ended captions and dates, shipping, rows.

Multilingual: eBay's own sites in English, German, French, Italian, Spanish and Dutch, and
the Japanese locale of ebay.com.
"""

import datetime as dt
import re
import unicodedata

from sources.retail.money import ZERO_PRICE, price_or_reason

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

SHIPPING_WORDS = re.compile(
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


# --- other lines a card or item page prints ----------------------------------------------

OR_BEST_OFFER = re.compile(
    r"or best offer|oder preisvorschlag|ou offre directe|o proposta|o mejor oferta|"
    r"またはベストオファー|ベストオファー対応",
    re.I,
)
OFFER_ACCEPTED = re.compile(
    r"best offer accepted|preisvorschlag angenommen|offre directe acceptée|"
    r"ベストオファー承認済み",
    re.I,
)
LOCATION = re.compile(r"^(?:located in|from|aus|standort:?|発送元)\s+(\D.*)$", re.I)
BIDS = re.compile(r"^(\d+)\s*(?:bids?|gebote?|enchères?|offerte|pujas?|件の入札)$", re.I)
