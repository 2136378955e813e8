"""Prices as retail pages print them: locale number formats, currencies and ranges.

Examples this module reads: "$3,429.99", "$66.01 - $208.00", "£5.99 to £14.99",
"1.299,00 €", "37,43 €" (with a no-break space), "₹1,57,990" (Indian grouping),
"R$1.499,99", "SAR1,279.00", "EUR 3,500.00", "US $3,971.45", "3,858 円 ～ 13,507 円".
Only the price element's text is given to it: never a title.

It never guesses (issue 26 item 3). A price text is a sequence of tokens, each a number, a
currency or a range word ("-", "to", "bis", "～"), and must have the shape
`[currency] number [currency] [range [currency] number [currency]]` with at most one
currency per end. Anything else refuses the text with a reason, most specific first:

- a negative form: "-$5", "$-5", "($1,234.56)", "1.234,56- €";
- a bound, a unit price, an instalment or an approximation, in the wording of the six
  languages the project reads (en, de, fr, es, it, ja): "from $", "starting at", "up to",
  "$1,299+", "ab 1.299 €", "à partir de", "desde", "da", "3,858円から", "3,858円～",
  "$0.52/Ounce", "$25/mo", "4 payments of", "en 3 fois", "ca. 50 €";
- an unknown currency: "NT$" and "₽" are read as printed (TWD, RUB; converted only with a
  rate in sources/data/prices/fx_rates.csv), "RD$", "₦" or "XYZ" are refused, never read as
  the marketplace's currency;
- junk inside or at the edges of a number, a number that ends in its decimal mark ("EUR 3,"),
  one decimal digit ("$18.2": a digit is missing), a malformed grouping.

A text with no digit at all is no price (None), not an error.
"""

import re
import unicodedata
from dataclasses import dataclass

# Longest first: "US $" before "$", "R$" before "$", "CN¥" before "¥". "$" alone is the
# marketplace's dollar (see `_resolve`).
_SYMBOLS: tuple[tuple[str, str], ...] = (
    ("US $", "USD"),
    ("US$", "USD"),
    ("CDN$", "CAD"),
    ("CA $", "CAD"),
    ("CA$", "CAD"),
    ("C $", "CAD"),
    ("AU $", "AUD"),
    ("AU$", "AUD"),
    ("A $", "AUD"),
    ("A$", "AUD"),
    ("NZ$", "NZD"),
    ("HK$", "HKD"),
    ("NT$", "TWD"),
    ("MX$", "MXN"),
    ("S$", "SGD"),
    ("R$", "BRL"),
    ("CN¥", "CNY"),
    ("Rs.", "INR"),
    ("zł", "PLN"),
    ("Kč", "CZK"),
    ("円", "JPY"),
    ("₹", "INR"),
    ("€", "EUR"),
    ("£", "GBP"),
    ("¥", "JPY"),
    ("₩", "KRW"),
    ("₽", "RUB"),
    ("₺", "TRY"),
    ("₪", "ILS"),
    ("฿", "THB"),
    ("₱", "PHP"),
    ("₴", "UAH"),
    ("$", "$"),
)
# ISO 4217 codes a price may be printed with. Another three capitals ("RUR", "XYZ") are
# refused as an unknown currency rather than ignored.
_KNOWN_ISO = frozenset(
    "USD EUR GBP JPY INR CAD AUD BRL SAR AED CHF SEK NOK DKK PLN CNY HKD SGD NZD MXN KRW TRY"
    " CZK TWD RUB ILS THB PHP UAH HUF RON ZAR".split()
)
_ISO = re.compile(r"(?<![A-Za-z])([A-Z]{3})(?![A-Za-z])")
# Currencies a marketplace prints as a bare "$"; "US $" / "USD" is always USD.
_DOLLARS = frozenset({"USD", "CAD", "AUD", "NZD", "SGD", "HKD", "MXN", "TWD"})
# Currencies printed without minor units.
_NO_DECIMALS = frozenset({"JPY", "KRW"})
# More integer digits than any retail price has (10 digits: 9,999,999,999 won or rupees):
# a longer run is a page fault or an attack, and would overflow to inf at 309 digits.
MAX_INTEGER_DIGITS = 10
# Why a price of 0 is no price (Kindle Unlimited "$0.00", "free with subscription").
ZERO_PRICE = "zero price"
# Full-width digits are how Japanese pages print numbers; NFKC folds them to ASCII.
_FULL_WIDTH_DIGITS = frozenset(chr(c) for c in range(0xFF10, 0xFF1A))
_DASHES = "-‐‑‒–—−"
# One token of a price text. Only real spaces separate tokens: a control character or a
# zero-width one is junk (a damaged byte), not a gap. A number starts and ends with a digit
# (so "3," leaves its comma as junk) and groups digits with . , ' or one space.
_TOKEN = re.compile(
    r"(?P<space>[ \t\n\r]+)"
    r"|(?P<number>[0-9]+(?:(?:[.,']| (?=[0-9]))[0-9]+)*)"
    r"|(?P<currency>"
    + "|".join(re.escape(s) for s, _ in _SYMBOLS[:-1])
    + r"|(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])|\$)"
    + rf"|(?P<range>[{_DASHES}~〜]|(?<!\w)(?:to|bis|à)(?!\w))"
    + r"|(?P<other>.)",
    re.DOTALL,
)
# What a text says instead of one exact price, checked on the text with its numbers as "#"
# and its currencies as "¤" (so "CA $" is never read as "ca." = circa). Instalments before
# unit prices: "/mo" is a monthly payment, "/Ounce" a unit price.
_WORDING: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "instalment",
        re.compile(
            r"/\s*(?:mo|mon|month|monat|mois|mes|mese)\.?(?!\w)|(?<!\w)(?:per|a|pro|par|al)\s+"
            r"(?:month|monat|mois|mes|mese)(?!\w)|(?<!\w)(?:monthly|months?|payments?"
            r"|instal+ments?|raten?|ratenzahlung|monatlich|mtl|fois|mensualit[ée]s?|mensuel"
            r"|cuotas?|meses|plazos|mensual(?:es)?|rate|mensil[ei]|klarna|affirm|afterpay"
            r"|apr|interest|zinsen|int[ée]r[êe]ts?|intereses|interessi)(?!\w)"
            r"|分割|回払い|月々|毎月|/月"
        ),
    ),
    (
        "unit price",
        re.compile(
            r"/\s*#?\s*[^\W\d_]+|(?<!\w)(?:per|each|ea|unit|pro|je|st[üu]ck|stk|pi[èe]ce"
            r"|unit[ée]|l['’]unit[ée]|por|unidad|c/u|cad|cadauno|cadauna|pezzo|pz|count"
            r"|ounces?|oz|kg|lb|grams?|litre|liter|ml)(?!\w)|あたり|当たり|個"
        ),
    ),
    (
        "bound",
        re.compile(
            r"\+|(?<!\w)(?:from|start(?:s|ing)?|as\s+low\s+as|up\s*to|upto|under|over|below"
            r"|above|min(?:imum)?|max(?:imum)?|least|most|or\s+(?:more|less)|and\s+up|less"
            r"|more|ab|von|bis\s+zu|mindestens|h[öo]chstens|unter|[üu]ber|mehr|partir|d[èe]s"
            r"|jusqu|depuis|moins|plus|de|desde|hasta|menos|m[áa]s|da|partire|fino|meno|pi[ùu]"
            r"|oltre)(?!\w)|から|より|以上|以下|まで|未満|超"
        ),
    ),
    (
        "approximate",
        re.compile(
            r"≈|(?<!\w)(?:approx(?:imately)?|about|around|est(?:imated)?|ca|circa|etwa|ungef[äa]hr"
            r"|environ|aprox(?:imadamente)?|alrededor|circa)(?!\w)|約|程度|前後"
        ),
    ),
)
_ACCOUNTING = re.compile(r"^\s*[(（].*#.*[)）]\s*$")
_LEADING_MINUS = re.compile(rf"^[¤\s]*[{_DASHES}]")
_TRAILING_MINUS = re.compile(rf"#\s*¤?\s*[{_DASHES}][^#]*$")
_OPEN_RANGE = re.compile(r"^[¤\s]*(?:~|〜|to|bis|à)(?!\w)|(?<!\w)(?:~|〜|to|bis|à)[¤\s]*$")


@dataclass(frozen=True)
class Price:
    """A price or a price range in one currency."""

    low: float
    high: float | None
    currency: str | None


class Unreadable(ValueError):
    """Price text with digits that is not a well-formed positive price; the message says why."""


@dataclass(frozen=True)
class _Token:
    kind: str  # space, number, currency, range, other
    text: str
    start: int
    end: int


def _clean(text: str) -> str:
    # NFKC folds full-width digits and no-break/thin spaces into plain ones.
    # Only real spaces are stripped: str.strip() would also drop \x1c-\x1f, \x85 and \u2028,
    # so a damaged byte in place of a last digit ("$749" -> "$74\x1f") would vanish.
    return unicodedata.normalize("NFKC", text).replace("\u202f", " ").strip(" \t\n\r")


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


def _currency_code(token: str) -> str | None:
    """The code of one currency token ("$" for a bare dollar), None for an unknown code."""
    for symbol, code in _SYMBOLS:
        if token == symbol:
            return code
    return token if token in _KNOWN_ISO else None


def detect_currency(text: str) -> str | None:
    """The ISO code of the first known currency a text names, if any (a bare "$" is USD)."""
    text = _clean(text)
    for code in _ISO.findall(text):
        if code in _KNOWN_ISO:
            return code
    for symbol, code in _SYMBOLS:
        if symbol in text:
            return "USD" if code == "$" else code
    return None


def _resolve(code: str | None, default_currency: str | None) -> str | None:
    """A bare "$" is the marketplace's own dollar (amazon.ca, ebay.com.au), else USD."""
    if code == "$":
        return default_currency if default_currency in _DOLLARS else "USD"
    return code or default_currency


def _tokens(text: str) -> list[_Token]:
    return [_Token(str(m.lastgroup), m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def symbol_currency(symbol: str, default_currency: str | None) -> str | None:
    """The currency of a separate symbol element (Amazon's `.a-price-symbol`).

    Empty means the marketplace's currency; anything but one known currency is refused.

    Raises:
        Unreadable: The element holds something else than one known currency symbol.
    """
    tokens = [t for t in _tokens(_clean(symbol)) if t.kind != "space"]
    if not tokens:
        return default_currency
    if len(tokens) != 1 or tokens[0].kind != "currency" or not _currency_code(tokens[0].text):
        raise Unreadable(f"unknown currency {symbol.strip()!r:.20}")
    return _resolve(_currency_code(tokens[0].text), default_currency)


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


def _split_number(raw: str, currency: str | None) -> tuple[str, str]:
    """(integer digits, decimal digits) of a number in any real grouping.

    Raises:
        Unreadable: The text is not such a number.
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
    return integer, fraction


def read_number(raw: str, currency: str | None = None) -> float:
    """A positive amount in any real grouping: 1,299.00 / 1.299,00 / 1 299,00 / 1,57,990.

    Strict: a separator must group digits the way some locale does ("1,2,3" does not), at
    most two decimals follow the decimal mark, and the integer part has at most
    `MAX_INTEGER_DIGITS` digits. A trailing decimal mark is allowed: Amazon prints the whole
    part of a price as "1.499," next to a separate fraction span ("99").

    Raises:
        Unreadable: The text is not such a number (the message says why).
    """
    integer, fraction = _split_number(raw, currency)
    return float(f"{integer or '0'}.{fraction or '0'}")


def parse_number(raw: str, currency: str | None = None) -> float | None:
    """`read_number`, or None when the text is not a well-formed number."""
    try:
        return read_number(raw, currency)
    except Unreadable:
        return None


def _masked(tokens: list[_Token]) -> str:
    """The text with numbers as "#" and currencies as "¤", case-folded (for wording rules)."""
    marks = {"number": "#", "currency": "¤"}
    return "".join(marks.get(t.kind, t.text) for t in tokens).casefold()


def _refuse_negative_and_wording(masked: str) -> None:
    """Refuse a negative form, a bound, a unit price, an instalment or an approximation.

    Raises:
        Unreadable: The text is one of those, named with the words that say so.
    """
    for kind, pattern in _WORDING:
        if found := pattern.search(masked):
            raise Unreadable(f"{kind} ({found[0].strip()!r}), not one exact price")
    if _ACCOUNTING.search(masked):
        raise Unreadable(f"negative amount (accounting parentheses): {masked!r:.40}")
    if _LEADING_MINUS.search(masked) or _TRAILING_MINUS.search(masked):
        raise Unreadable(f"negative amount (a minus sign): {masked!r:.40}")
    if found := _OPEN_RANGE.search(masked):
        raise Unreadable(f"bound ({found[0].strip(' ¤')!r}), a range with one end")


def _refuse_unknown_currency(text: str, tokens: list[_Token]) -> None:
    """Refuse a currency that is not known rather than read it as the marketplace's.

    Raises:
        Unreadable: A three-capital code not in `_KNOWN_ISO`, a currency sign (Unicode Sc)
            that is not in `_SYMBOLS`, or letters glued to a "$" ("RD$", "N$").
    """
    for token in tokens:
        if token.kind == "currency" and _currency_code(token.text) is None:
            raise Unreadable(f"unknown currency code {token.text!r}")
        if token.kind == "other" and unicodedata.category(token.text) == "Sc":
            raise Unreadable(f"unknown currency sign {token.text!r}")
    for i, token in enumerate(tokens):
        # "RD$", "N$", "TT $": letters glued to a bare "$" name another dollar.
        before = [t for t in tokens[max(0, i - 2) : i] if t.kind != "space"][-1:]
        if token.text == "$" and before and before[0].kind == "other" and before[0].text.isalpha():
            raise Unreadable(f"unknown currency {text[max(0, token.start - 4) : token.end]!r}")


def _refuse_junk(text: str, tokens: list[_Token]) -> None:
    """Refuse anything that is not a number, a currency, a range word or a space.

    Raises:
        Unreadable: Junk at the edge of a number (a damaged byte: "$\ufffd8.27"), a number
            that starts or ends with its separator ("$.99", "EUR 3,"), or other text.
    """
    for i, token in enumerate(tokens):
        before = tokens[i - 1].kind if i > 0 else None
        after = tokens[i + 1].kind if i + 1 < len(tokens) else None
        if token.kind == "range" and not before == after == "space":
            # Real ranges space their mark ("$66.01 - $208.00", "3,858 円 ～ 13,507 円"); a
            # glued one is a damaged byte as often as a range ("₩95" -> "₩9~5").
            raise Unreadable(f"a range mark glued to the price: {text!r:.40}")
        if token.kind != "other":
            continue
        if token.text in ".,'" and after == "number":
            raise Unreadable(f"number starts with a separator: {text!r:.40}")
        if token.text in ".,'" and before == "number":
            raise Unreadable(f"number ends with a separator: {text!r:.40}")
        if "number" in (before, after):
            raise Unreadable(f"junk at the edge of the number: {text!r:.40}")
    # Not str.split(): it takes \x85, \x1c-\x1f and \u2028 for spaces and would drop them.
    junk = "".join(t.text if t.kind == "other" else " " for t in tokens).strip(" ")
    if junk:
        raise Unreadable(f"unexpected text {junk!r:.30} in a price")


def _side_currency(side: list[_Token], text: str) -> str | None:
    currencies = [t.text for t in side if t.kind == "currency"]
    if len(currencies) > 1:
        raise Unreadable(f"two currencies in one price: {text!r:.40}")
    return _currency_code(currencies[0]) if currencies else None


def _amount(number: str, currency: str | None) -> float:
    """The value of one number token: no decimals, or exactly two (one means a lost digit)."""
    integer, fraction = _split_number(number, currency)
    if re.match(r"0[0-9]", number, re.ASCII):
        raise Unreadable(f"a number with a leading zero: {number!r:.40}")  # "€\x1f 010,97"
    if len(fraction) == 1:
        raise Unreadable(f"one decimal digit: {number!r:.40}")
    value = float(f"{integer or '0'}.{fraction or '0'}")
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
            in one currency (see the module docstring for every refusal).
    """
    if not text:
        return None
    if _foreign_digits(text):
        raise Unreadable("digits of another script")
    cleaned = _clean(text)
    if not re.search(r"[0-9]", cleaned, re.ASCII):
        return None
    tokens = _tokens(cleaned)
    _refuse_negative_and_wording(_masked(tokens))
    _refuse_unknown_currency(cleaned, tokens)
    _refuse_junk(cleaned, tokens)
    sides: list[list[_Token]] = [[]]
    for token in tokens:
        if token.kind == "range":
            sides.append([])
        elif token.kind != "space":
            sides[-1].append(token)
    numbers = [[t.text for t in side if t.kind == "number"] for side in sides]
    if len(sides) > 2 or any(len(n) != 1 for n in numbers):
        count = sum(len(n) for n in numbers)
        where = "a price" if len(sides) > 1 else "one price"
        raise Unreadable(f"{count} numbers in {where}: {cleaned!r:.40}")
    named = {code for side in sides if (code := _side_currency(side, cleaned))}
    if len(named) > 1:
        raise Unreadable(f"a range in two currencies: {cleaned!r:.40}")
    currency = _resolve(next(iter(named), None), default_currency)
    values = [_amount(n[0], currency) for n in numbers]
    low = min(values)
    high = max(values) if len(values) > 1 and max(values) != low else None
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
