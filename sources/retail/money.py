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
# ASCII digits only (re.ASCII): a digit of another script is refused, not read as 0-9.
_NUMBER = re.compile(r"[0-9][0-9.,'\s]*", re.ASCII)
# A sign before the number: "-$129.99", "$-129.99", "− 5,00 €" (a range's dash has a number
# before it, so it never matches here).
_NEGATIVE = re.compile(r"^[^0-9]{0,6}?[-−‐‑‒–—]\s*[^0-9\s]{0,4}\s*[0-9]|[-−]\s*$", re.ASCII)
# Currencies a marketplace prints as a bare "$"; "US $" / "USD" is always USD.
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN"})
_EXPLICIT_USD = re.compile(r"US\s?\$|USD")
# Currencies printed without minor units.
_NO_DECIMALS = frozenset({"JPY", "KRW"})
# More integer digits than any retail price has (10 digits: 9,999,999,999 won or rupees):
# a longer run is a page fault or an attack, and would overflow to inf at 309 digits.
MAX_INTEGER_DIGITS = 10
# Why a price of 0 is no price (Kindle Unlimited "$0.00", "free with subscription").
ZERO_PRICE = "zero price"
# Full-width digits are how Japanese pages print numbers; NFKC folds them to ASCII.
_FULL_WIDTH_DIGITS = frozenset(chr(c) for c in range(0xFF10, 0xFF1A))


@dataclass(frozen=True)
class Price:
    """A price or a price range in one currency."""

    low: float
    high: float | None
    currency: str | None


class Unreadable(ValueError):
    """Price text with digits that is not a well-formed positive price; the message says why."""


def _clean(text: str) -> str:
    # NFKC folds full-width digits and no-break/thin spaces into plain ones.
    return unicodedata.normalize("NFKC", text).replace("\u202f", " ").strip()


def _foreign_digits(text: str) -> bool:
    """Whether `text` has a numeral that is neither ASCII nor full-width (Arabic-Indic, ²...).

    Checked before NFKC, which would silently turn "²" into "2".
    """
    return any(
        not ("0" <= c <= "9")
        and c not in _FULL_WIDTH_DIGITS
        and unicodedata.numeric(c, None) is not None
        for c in text
    )


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


def _groups_ok(groups: list[str], currency: str | None) -> bool:
    """Whether digit groups follow a real grouping: 1-3 then threes, or Indian 1-2, twos, 3."""
    if len(groups) == 1:
        return True
    head, *middle, last = groups
    western = 1 <= len(head) <= 3 and all(len(g) == 3 for g in [*middle, last])
    indian = (
        currency in (None, "INR")
        and 1 <= len(head) <= 2
        and all(len(g) == 2 for g in middle)
        and len(last) == 3
    )
    return (western or indian) and head.lstrip("0") != ""


def _decimal_mark(digits: str, raw: str, currency: str | None) -> str | None:
    """The decimal mark of a number's `digits` ("." or ","), or None when it has none.

    Raises:
        Unreadable: Both marks appear and the last one more than once ("1.234.567,8,9").
    """
    marks = [c for c in digits if c in ".,"]
    if "." in marks and "," in marks:
        decimal = marks[-1]  # whichever comes last is the decimal mark
        if marks.count(decimal) != 1:
            raise Unreadable(f"mixed separators: {raw.strip()!r:.40}")
        return decimal
    if marks:
        sep = marks[0]
        tail = digits.rsplit(sep, 1)[1]
        # One separator before exactly three digits is grouping ("3,500", "1.299"), as is a
        # repeated one ("1,57,990"); one before one or two digits is the decimal mark.
        if len(marks) == 1 and len(tail) in (1, 2) and currency not in _NO_DECIMALS:
            return sep
    return None


def read_number(raw: str, currency: str | None = None) -> float:
    """A positive amount in any real grouping: 1,299.00 / 1.299,00 / 1 299,00 / 1,57,990.

    Strict: a separator must group digits the way some locale does ("1,2,3" does not), at
    most two decimals follow the decimal mark, and the integer part has at most
    `MAX_INTEGER_DIGITS` digits.

    Raises:
        Unreadable: The text is not such a number (the message says why).
    """
    digits = re.sub(r"\s+", " ", raw).strip()
    # A trailing decimal mark with nothing after it: Amazon's whole-part span ("1.499,").
    if digits[-1:] in ".,":
        digits = digits[:-1].rstrip()
    if not digits or not re.fullmatch(r"[0-9][0-9.,' ]*", digits, re.ASCII):
        raise Unreadable(f"not a number: {raw.strip()!r:.40}")
    decimal = _decimal_mark(digits, raw, currency)
    whole, _, fraction = digits.partition(decimal) if decimal else (digits, "", "")
    if len(fraction) > 2 or (decimal and not fraction.isdigit()):
        raise Unreadable(f"not a price's decimals: {raw.strip()!r:.40}")
    grouping = {c for c in whole if not c.isdigit()}
    if len(grouping) > 1 or (decimal and decimal in grouping):
        raise Unreadable(f"mixed separators: {raw.strip()!r:.40}")
    groups = re.split(r"[.,' ]", whole) if grouping else [whole]
    if not all(groups) or not _groups_ok(groups, currency):
        raise Unreadable(f"malformed digit grouping: {raw.strip()!r:.40}")
    integer = "".join(groups).lstrip("0")
    if len(integer) > MAX_INTEGER_DIGITS:
        raise Unreadable(f"implausibly long number ({len(integer)} digits)")
    return float(f"{integer or '0'}.{fraction or '0'}")


def parse_number(raw: str, currency: str | None = None) -> float | None:
    """`read_number`, or None when the text is not a well-formed number."""
    try:
        return read_number(raw, currency)
    except Unreadable:
        return None


def _part_value(part: str, currency: str | None) -> float:
    """The one number of one end of a price (range); anything else is unreadable."""
    numbers = list(_NUMBER.finditer(part))
    if len(numbers) != 1:
        raise Unreadable(f"{len(numbers)} numbers in one price: {part!r:.40}")
    match = numbers[0]
    if part[: match.start()].rstrip()[-1:] in (".", ","):
        # "$.99" / "€,50": a number that starts with its decimal mark is not 99 or 50.
        raise Unreadable(f"number starts with a separator: {part!r:.40}")
    if re.search(r"[0-9]", part[match.end() :], re.ASCII):
        # "$1e5", "$12.99x2": digits after the number are not part of one price.
        raise Unreadable(f"not a plain number: {part!r:.40}")
    value = read_number(match.group(0), currency)
    if value <= 0:
        raise Unreadable(ZERO_PRICE)
    return value


def read_price(text: str | None, default_currency: str | None = None) -> Price | None:
    """Parse a price element's text strictly; None when it holds no digit at all.

    A range ("$66.01 - $208.00", "£5.99 to £14.99") keeps both ends. `default_currency`
    (the marketplace's) applies when the text names none, and to a bare "$" on a
    marketplace whose own currency is a dollar. The result is always finite and positive
    and its digits are the text's own.

    Raises:
        Unreadable: The text has digits but is not one well-formed positive price or range
            in one currency: a sign, an exponent, a bad grouping, too many digits, digits of
            another script, a zero, two currencies, more than two numbers.
    """
    if not text:
        return None
    if _foreign_digits(text):
        raise Unreadable("digits of another script")
    cleaned = _clean(text)
    if not re.search(r"[0-9]", cleaned, re.ASCII):
        return None
    if _NEGATIVE.search(cleaned):
        raise Unreadable(f"negative amount: {cleaned!r:.40}")
    currency = price_currency(cleaned, default_currency)
    parts = [p for p in _RANGE.split(cleaned) if p and re.search(r"[0-9]", p, re.ASCII)]
    if len(parts) > 2:
        raise Unreadable(f"{len(parts)} numbers in a price: {cleaned!r:.40}")
    named = {code for part in parts if (code := detect_currency(part))}
    if len(named) > 1:
        raise Unreadable(f"a range in two currencies: {cleaned!r:.40}")
    values = [_part_value(part, currency) for part in parts]
    low = values[0]
    high = values[1] if len(values) > 1 and values[1] != low else None
    if high is not None and high < low:
        low, high = high, low
    return Price(low=low, high=high, currency=currency)


def price_or_reason(
    text: str | None, default_currency: str | None = None
) -> tuple[Price | None, str | None]:
    """(price, None), or (None, why the text is no price): "no number" or the refusal."""
    try:
        price = read_price(text, default_currency)
    except Unreadable as exc:
        return None, ZERO_PRICE if str(exc) == ZERO_PRICE else f"unreadable price: {exc}"
    return (price, None) if price is not None else (None, "no number")


def parse_price(text: str | None, default_currency: str | None = None) -> Price | None:
    """`read_price`, or None when the text holds no well-formed price."""
    return price_or_reason(text, default_currency)[0]
