"""Prices as retail pages print them: locale number formats, currencies and ranges.

Examples this module reads: "$3,429.99", "$66.01 - $208.00", "£5.99 to £14.99",
"1.299,00 €", "37,43 €" (with a no-break space), "₹1,57,990" (Indian grouping),
"R$1.499,99", "SAR1,279.00", "EUR 3,500.00", "US $3,971.45", "3,858 円 ～ 13,507 円".
Only the price element's text is given to it: never a title.
"""

import re
import unicodedata
from dataclasses import dataclass

# Longest first: "US $" before "$", "R$" before "$", "CN¥" before "¥".
_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("US $", "USD"),
    ("US$", "USD"),
    ("C $", "CAD"),
    ("CA $", "CAD"),
    ("CA$", "CAD"),
    ("AU $", "AUD"),
    ("AU$", "AUD"),
    ("A $", "AUD"),
    ("A$", "AUD"),
    ("NZ$", "NZD"),
    ("HK$", "HKD"),
    ("S$", "SGD"),
    ("MX$", "MXN"),
    ("R$", "BRL"),
    ("CN¥", "CNY"),
    ("Rs.", "INR"),
    ("zł", "PLN"),
    ("円", "JPY"),
    ("₹", "INR"),
    ("€", "EUR"),
    ("£", "GBP"),
    ("¥", "JPY"),
    ("₩", "KRW"),
    ("$", "USD"),
)
_ISO = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
_KNOWN_ISO = frozenset(
    {
        "USD",
        "EUR",
        "GBP",
        "JPY",
        "INR",
        "CAD",
        "AUD",
        "BRL",
        "SAR",
        "AED",
        "CHF",
        "SEK",
        "NOK",
        "DKK",
        "PLN",
        "CNY",
        "HKD",
        "SGD",
        "NZD",
        "MXN",
        "KRW",
        "TRY",
        "CZK",
    }
)
_RANGE = re.compile(r"\s*(?:-|–|—|~|～|〜|\bto\b|\bbis\b|\bà\b)\s*")
_NUMBER = re.compile(r"\d[\d.,'\s]*")
# Currencies a marketplace prints as a bare "$"; "US $" / "USD" is always USD.
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN"})
_EXPLICIT_USD = re.compile(r"US\s?\$|USD")
# Currencies printed without minor units.
_NO_DECIMALS = frozenset({"JPY", "KRW"})


@dataclass(frozen=True)
class Price:
    """A price or a price range in one currency."""

    low: float
    high: float | None
    currency: str | None


def _clean(text: str) -> str:
    # NFKC folds full-width digits and no-break/thin spaces into plain ones.
    return unicodedata.normalize("NFKC", text).replace("\u202f", " ").strip()


def detect_currency(text: str) -> str | None:
    """The ISO code of the currency a price text names, if any."""
    text = _clean(text)
    for code in _ISO.findall(text):
        if code in _KNOWN_ISO:
            return code
    for symbol, code in _SYMBOLS:
        if symbol in text:
            return code
    return None


def price_currency(text: str, default_currency: str | None) -> str | None:
    """The currency of a price text on a marketplace whose own currency is the default.

    The text's symbol or code wins, except that a bare "$" is the marketplace's own dollar
    (amazon.ca, ebay.com.au, ...); only "US $"/"USD" is always USD.
    """
    cleaned = _clean(text)
    currency = detect_currency(cleaned)
    if currency == "USD" and default_currency in _DOLLARS and not _EXPLICIT_USD.search(cleaned):
        return default_currency
    return currency or default_currency


def parse_number(raw: str, currency: str | None = None) -> float | None:
    """A number in any common grouping: 1,299.00 / 1.299,00 / 1 299,00 / 1,57,990."""
    digits = re.sub(r"[\s']", "", raw).strip(".,")
    if not digits or not any(c.isdigit() for c in digits):
        return None
    dots, commas = digits.count("."), digits.count(",")
    if dots and commas:
        # Both present: whichever comes last is the decimal separator.
        decimal = "." if digits.rfind(".") > digits.rfind(",") else ","
    elif dots or commas:
        sep = "." if dots else ","
        tail = digits.rsplit(sep, 1)[1]
        # One separator followed by exactly three digits is grouping ("3,500", "1.299"),
        # as is any separator that repeats ("1,57,990"); otherwise it is the decimal point.
        if digits.count(sep) > 1 or len(tail) == 3 or currency in _NO_DECIMALS:
            decimal = None
        else:
            decimal = sep
    else:
        decimal = None
    if decimal is None:
        number = digits.replace(".", "").replace(",", "")
    else:
        grouping = "," if decimal == "." else "."
        number = digits.replace(grouping, "").replace(decimal, ".")
    try:
        return float(number)
    except ValueError:
        return None


def parse_price(text: str | None, default_currency: str | None = None) -> Price | None:
    """Parse a price element's text; None when it holds no number.

    A range ("$66.01 - $208.00", "£5.99 to £14.99") keeps both ends. `default_currency`
    (the marketplace's) applies when the text names none, and to a bare "$" on a
    marketplace whose own currency is a dollar.
    """
    if not text:
        return None
    cleaned = _clean(text)
    currency = price_currency(cleaned, default_currency)
    parts = [p for p in _RANGE.split(cleaned) if p and any(c.isdigit() for c in p)]
    values = []
    for part in parts[:2]:
        match = _NUMBER.search(part)
        if match:
            value = parse_number(match.group(0), currency)
            if value is not None:
                values.append(value)
    if not values:
        return None
    low = values[0]
    high = values[1] if len(values) > 1 and values[1] != low else None
    if high is not None and high < low:
        low, high = high, low
    return Price(low=low, high=high, currency=currency)
