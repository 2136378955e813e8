"""Seeded fuzzing of money reading (issue 26 items 3 and 7): 0 wrong prices, 0 silent acceptances.

Every case is a price text whose meaning the test knows independently of the parser: one
exact amount in a currency, a range, or "no exact price" (a bound, a unit price, an
instalment, a negative form, an unknown currency, a damaged byte at a digit's edge). The
contract: the reader returns exactly that amount in that currency, or refuses the text with
a reason. Never another amount, never the marketplace's currency for another one.

Two levels: the money functions directly (thousands of cases, well under a second), and the
same texts injected into the price elements of the retail fixture pages (Amazon, eBay) and
read by the page parsers. Counts per kind are printed (`pytest -s`) and are in
docs/reliability.md. GPUVALUE_FUZZ_SEED replays another seed.
"""

import html
import os
import random
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

import lxml.html

from sources.retail.amazon import parse_amazon
from sources.retail.document import decode_page
from sources.retail.ebay import parse_ebay
from sources.retail.money import Price, price_or_reason
from tests.paths import FIXTURES_ROOT

SEED = int(os.environ.get("GPUVALUE_FUZZ_SEED", "20261123"))
CASES_PER_KIND = 600

# --- the oracle's own knowledge of currencies (not the parser's table) --------------------

# (printed symbol, ISO code, printed before the number?). "$" alone is the marketplace's
# dollar on a dollar marketplace, else USD.
KNOWN = (
    ("$", "$", True),
    ("US $", "USD", True),
    ("US$", "USD", True),
    ("USD ", "USD", True),
    (" USD", "USD", False),
    ("€", "EUR", True),
    (" €", "EUR", False),
    ("EUR ", "EUR", True),
    ("£", "GBP", True),
    ("¥", "JPY", True),
    (" 円", "JPY", False),
    ("円", "JPY", False),
    ("₹", "INR", True),
    ("R$", "BRL", True),
    ("CHF ", "CHF", True),
    ("C $", "CAD", True),
    ("CA$", "CAD", True),
    ("AU $", "AUD", True),
    ("NT$", "TWD", True),
    (" ₽", "RUB", False),
    ("₩", "KRW", True),
    (" zł", "PLN", False),
    ("SAR", "SAR", True),
)
# Currencies the parser must not know: read as printed would need a code it cannot give,
# and the marketplace's currency would be a guess.
UNKNOWN = ("₦", "RD$", "N$", "TT$", "kr ", "₿", "XYZ ", "Ks ", "₮", "RM ", "Rp ", "lei ", "Fr. ")
DOLLAR_MARKETS = ("USD", "CAD", "AUD")
MARKETS = ("USD", "CAD", "AUD", "EUR", "GBP", "JPY", "INR")
NO_DECIMALS = ("JPY", "KRW")

# Wordings that make a price text something other than one exact price, in the six
# languages of the tuning set; "{p}" is a well-formed price.
BOUNDS = (
    "from {p}", "From {p}", "starting at {p}", "Starting from {p}", "as low as {p}",
    "up to {p}", "{p}+", "{p} or more", "under {p}", "min. {p}", "max {p}", "to {p}",
    "ab {p}", "Ab {p}", "bis zu {p}", "mindestens {p}", "{p} und mehr", "unter {p}",
    "à partir de {p}", "dès {p}", "jusqu'à {p}", "moins de {p}", "plus de {p}",
    "desde {p}", "Desde {p}", "a partir de {p}", "hasta {p}", "más de {p}", "menos de {p}",
    "da {p}", "a partire da {p}", "fino a {p}", "oltre {p}", "meno di {p}",
    "{p}から", "{p}～", "～{p}", "{p}以上", "{p}以下", "{p}より", "{p} ~", "~ {p}",
    "ca. {p}", "≈ {p}", "approx. {p}", "約{p}", "circa {p}", "environ {p}", "aprox. {p}",
    "etwa {p}",
)  # fmt: skip
UNIT_PRICES = (
    "{p}/mo", "{p}/month", "{p} per month", "{p} a month", "4 payments of {p}",
    "{p}/Ounce", "({p}/Ounce)", "{p}/count", "{p} each", "{p}/ea", "{p} per unit",
    "{p}/100 g", "{p}/Monat", "{p} pro Monat", "{p} mtl.", "in 3 Raten à {p}", "{p}/Stück",
    "{p} pro Stück", "{p}/kg", "{p} je Stück", "{p}/mois", "{p} par mois", "3 fois {p}",
    "en 4 fois {p}", "{p}/unité", "{p} la pièce", "{p}/mes", "{p} al mes",
    "12 cuotas de {p}", "{p}/unidad", "{p} por unidad", "{p}/mese", "{p} al mese",
    "3 rate da {p}", "{p}/pezzo", "{p} cad.", "月々{p}", "{p}/月", "分割 {p}",
    "1個あたり{p}", "{p}/個",
)  # fmt: skip
# A negative amount: "{s}" the symbol, "{n}" the number, "{p}" both.
NEGATIVES = (
    "-{p}", "−{p}", "- {p}", "({p})", "（{p}）", "{s}-{n}", "{s} -{n}", "{s}−{n}",
    "{n}- {s}", "{n} {s}-", "{n}-{s}", "{p} -", "{p}-",
)  # fmt: skip
RANGE_WORDS = (" - ", " – ", " to ", " bis ", " ～ ", " ~ ", " à ", "-", "~", "～")
# Characters a damaged byte can become that are neither digits, separators nor spaces
# (a digit replaced by a space cannot be told from a real gap: see docs/reliability.md).
JUNK = (
    "\ufffd", "\x00", "\x1f", "\x0b", "\x7f", "\x85", "\u2028", "\u200b", "\ufeff", "?",
    "#", "*", "!", "@", "%", "&", "_", "=", "|", "\\", '"', "/", ":", ";", "a", "O", "l", "e",
    "x", "S", "Ã", "ÿ", "é", "¤", "°", "~", "+", "-", "(", ")", "$", "€", "£", "¥", "円", ".",
    ",", "'",
)  # fmt: skip


@dataclass(frozen=True)
class Case:
    """A price text and what it means: `expected` is the one right reading, None = refuse."""

    kind: str
    text: str
    market: str
    expected: Price | None


def _code(code: str, market: str) -> str:
    if code == "$":
        return market if market in DOLLAR_MARKETS else "USD"
    return code


def _number(rng: random.Random, code: str) -> tuple[str, float]:
    """A well-formed number in a random locale style, and its value."""
    whole = rng.choice([rng.randint(1, 99), rng.randint(100, 999), rng.randint(1000, 99_999)])
    whole = rng.choice([whole, rng.randint(100_000, 9_999_999)]) if rng.random() < 0.2 else whole
    cents = 0 if code in NO_DECIMALS or rng.random() < 0.2 else rng.randint(1, 99)
    digits = str(whole)
    style = rng.choice(["en", "de", "fr", "ch", "plain"] + (["in"] if code == "INR" else []))
    if code in NO_DECIMALS:
        style = rng.choice(["en", "plain"])
    group, decimal = {
        "en": (",", "."), "de": (".", ","), "fr": (rng.choice([" ", "\u00a0", "\u202f"]), ","),
        "ch": ("'", "."), "plain": ("", "."), "in": (",", "."),
    }[style]  # fmt: skip
    if style == "in" and len(digits) > 3:
        head, tail = digits[:-3], digits[-3:]
        pairs = [head[max(0, i - 2) : i] for i in range(len(head), 0, -2)][::-1]
        text = ",".join([*pairs, tail])
    else:
        groups = [digits[max(0, i - 3) : i] for i in range(len(digits), 0, -3)][::-1]
        text = group.join(groups)
    if cents or rng.random() < 0.5 and code not in NO_DECIMALS:
        text += f"{decimal}{cents:02d}"
    return text, float(f"{whole}.{cents:02d}")


def _priced(rng: random.Random, known: tuple = KNOWN) -> tuple[str, str, str, float, str]:
    """(text, symbol, number, value, printed code) of one well-formed exact price."""
    symbol, code, before = rng.choice(known)
    number, value = _number(rng, code)
    text = f"{symbol}{number}" if before else f"{number}{symbol}"
    return text, symbol, number, value, code


def _locale_currency(rng: random.Random, market: str) -> Case:
    if rng.random() < 0.75:
        text, _, _, value, code = _priced(rng)
        return Case("locale_currency", text, market, Price(value, None, _code(code, market)))
    symbol = rng.choice(UNKNOWN)
    number, _ = _number(rng, "USD")
    text = f"{symbol}{number}" if rng.random() < 0.7 else f"{number} {symbol.strip()}"
    return Case("unknown_currency", text, market, None)


def _bound(rng: random.Random, market: str) -> Case:
    text = rng.choice(BOUNDS).format(p=_priced(rng)[0])
    return Case("bound_wording", text, market, None)


def _unit_price(rng: random.Random, market: str) -> Case:
    text = rng.choice(UNIT_PRICES).format(p=_priced(rng)[0])
    return Case("unit_or_instalment", text, market, None)


def _negative(rng: random.Random, market: str) -> Case:
    symbol, code, before = rng.choice(KNOWN)
    number, _ = _number(rng, code)
    priced = f"{symbol}{number}" if before else f"{number}{symbol}"
    text = rng.choice(NEGATIVES).format(p=priced, s=symbol.strip(), n=number)
    return Case("negative_form", text, market, None)


def _range(rng: random.Random, market: str) -> Case:
    """A two-ended range is kept as a range; one end, or two currencies, is refused."""
    symbol, code, before = rng.choice(KNOWN)
    (n1, v1), (n2, v2) = _number(rng, code), _number(rng, code)
    ends = [f"{symbol}{n}" if before else f"{n}{symbol}" for n in (n1, n2)]
    if rng.random() < 0.3:  # the symbol printed once, as in "$5 - 10" or "5 - 10 €"
        ends = [ends[0], n2] if before else [n1, ends[1]]
    word = rng.choice(RANGE_WORDS)
    if word.strip() == word:  # a glued mark ("$5-$9") is refused: see money._refuse_junk
        return Case("range", word.join(ends), market, None)
    if rng.random() < 0.15 and ends[0] != n1 and ends[1] != n2:
        other, other_code, other_before = rng.choice(KNOWN)
        if _code(other_code, market) != _code(code, market):
            ends[1] = f"{other}{n2}" if other_before else f"{n2}{other}"
            return Case("range", word.join(ends), market, None)
    low, high = min(v1, v2), max(v1, v2)
    expected = Price(low, high if high != low else None, _code(code, market))
    return Case("range", word.join(ends), market, expected)


def _bad_byte(rng: random.Random, market: str) -> Case:
    """A junk character replacing, or inserted next to, the first or last digit."""
    text = _priced(rng)[0]
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    at = rng.choice([digits[0], digits[-1]])
    junk = rng.choice(JUNK)
    # Replacing the digit, or inserting the byte outside the number (before its first digit,
    # after its last): a separator inserted inside a number can make another valid number.
    how = rng.choice(["replace", "outside"])
    if how == "replace":
        text = text[:at] + junk + text[at + 1 :]
    else:
        at += at == digits[-1]
        text = text[:at] + junk + text[at:]
    return Case("bad_byte_digit_edge", text, market, None)


def _junk_inside(rng: random.Random, market: str) -> Case:
    """A junk character replacing, or inserted after, a digit inside the number."""
    text = _priced(rng)[0]
    digits = [i for i, c in enumerate(text) if c.isdigit()]
    at = rng.choice(digits)
    junk = rng.choice([j for j in JUNK if j not in ".,'"])  # a separator can make a number
    text = text[:at] + junk + text[at + 1 :] if rng.random() < 0.5 else text[:at] + junk + text[at:]
    return Case("junk_in_number", text, market, None)


KINDS: dict[str, Callable[[random.Random, str], Case]] = {
    "locale_currency": _locale_currency,
    "bound_wording": _bound,
    "unit_or_instalment": _unit_price,
    "negative_form": _negative,
    "range": _range,
    "bad_byte_digit_edge": _bad_byte,
    "junk_in_number": _junk_inside,
}


def generate(seed: int, per_kind: int) -> list[Case]:
    """`per_kind` cases of every kind, reproducible from `seed`."""
    rng = random.Random(seed)
    return [
        KINDS[kind](rng, rng.choice(MARKETS)) for kind in sorted(KINDS) for _ in range(per_kind)
    ]


def verdict(case: Case, price: Price | None, reason: str | None) -> str | None:
    """Why a reading breaks the contract, else None."""
    if case.expected is None:
        if price is not None:
            return f"silently accepted as {price}"
        return None if reason else "refused without a reason"
    if price is None:
        return None if reason else "refused without a reason"
    if price != case.expected:
        return f"wrong: {price}, expected {case.expected}"
    return None


def _report(title: str, counts: Counter[str], refused: Counter[str], failures: list[str]) -> None:
    print(f"{title}: {sum(counts.values())} cases")
    for kind in sorted(counts):
        print(f"  {kind}: {counts[kind]} cases, {refused[kind]} refused with a reason")
    assert not failures, f"{len(failures)} broken cases:\n" + "\n".join(failures[:25])


def test_money_reader_never_guesses():
    counts: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    failures = []
    for number, case in enumerate(generate(SEED, CASES_PER_KIND)):
        price, reason = price_or_reason(case.text, case.market)
        counts[case.kind] += 1
        refused[case.kind] += price is None
        if problem := verdict(case, price, reason):
            failures.append(f"case {number} {case.kind} {case.text!r} on {case.market}: {problem}")
    _report("money reader", counts, refused, failures)
    assert set(KINDS) <= set(counts) | {"locale_currency"}
    assert counts["unknown_currency"] > 0 and refused["locale_currency"] == 0


# --- the same texts in the price elements of the fixture pages ----------------------------

PAGES = {
    "amazon": (
        parse_amazon,
        ("search_2018.html", "search_2021.html", "search_2024.html", "search_de.html",
         "search_in.html", "product_2018.html", "product_2023.html"),
    ),
    "ebay": (
        parse_ebay,
        ("search_sitem_sold_com.html", "search_scard_sold_com.html",
         "search_scard_active_com.html", "search_sitem_active_de.html",
         "search_sitem_active_co_uk.html", "search_scard_sold_jp_locale.html",
         "item_usd.html", "item_eur_de.html"),
    ),
}  # fmt: skip
# Explicit symbols only: which dollar a bare "$" is depends on the marketplace of the page.
PAGE_KNOWN = tuple(k for k in KNOWN if k[0] != "$")
PAGE_CASES = 200  # about 3 s


def _text(element: lxml.html.HtmlElement) -> str:
    return " ".join(element.text_content().split())


def _classes(element: lxml.html.HtmlElement) -> list[str]:
    return (element.get("class") or "").split()


def _a_price(element: lxml.html.HtmlElement) -> lxml.html.HtmlElement | None:
    return next((a for a in element.iterancestors() if "a-price" in _classes(a)), None)


def _price_elements(root: lxml.html.HtmlElement, printed: str) -> list[lxml.html.HtmlElement]:
    """The deepest elements whose whole text is `printed` (one price element each).

    Inside an Amazon `.a-price` only the screen-reader `.a-offscreen` span counts (its
    aria-hidden twin prints the same amount in whole/fraction spans).
    """
    found = [e for e in root.iter() if isinstance(e.tag, str) and _text(e) == printed]
    deepest = [
        e for e in found if not any(isinstance(c.tag, str) and _text(c) == printed for c in e)
    ]
    return [e for e in deepest if _a_price(e) is None or "a-offscreen" in _classes(e)]


def _inject(root: lxml.html.HtmlElement, printed: str) -> int:
    """Make every element printing `printed` print `_MARKER` instead; how many were changed.

    An Amazon `.a-price` also carries its amount in aria-hidden whole/fraction spans: the
    whole price element is rewritten, so the page prints the new text and nothing else.
    """
    changed = 0
    for element in _price_elements(root, printed):
        price_el = _a_price(element)
        if price_el is None and "a-offscreen" in _classes(element):
            # 2018 cards: the screen-reader text's twin is an aria-hidden sx-price sibling.
            for twin in element.itersiblings():
                if twin.get("aria-hidden") == "true":
                    twin.getparent().remove(twin)
        for child in list(price_el if price_el is not None else element):
            if price_el is not None and child is not element:
                price_el.remove(child)
            elif price_el is None:
                element.remove(child)
        element.text = _MARKER  # lxml refuses control characters: see `_serialize`
        changed += 1
    return changed


_MARKER = "PRICEMARKER"


def _serialize(root: lxml.html.HtmlElement, text: str) -> bytes:
    """The page's bytes with the injected text as a damaged page would carry it (raw bytes)."""
    page = lxml.html.tostring(root, encoding="utf-8")
    return page.replace(_MARKER.encode(), html.escape(text, quote=False).encode("utf-8"))


_BARE_DOLLAR = re.compile(r"(?<![A-Za-z])(?<![A-Za-z] )\$")


def _page_case(rng: random.Random, currency: str | None) -> Case:
    """A case of a random kind without a bare "$" (which dollar it is depends on the site)."""
    kind = rng.choice(sorted(KINDS))
    while True:
        case = KINDS[kind](rng, currency or "USD")
        if not _BARE_DOLLAR.search(case.text):
            return case


def _record_texts(records: tuple, root: lxml.html.HtmlElement) -> dict[int, str]:
    """Record index -> the printed price text it was read from, when one element shows it."""
    texts = {}
    offscreen = [
        _text(e) for e in root.xpath("//span[contains(concat(' ', @class, ' '), ' a-offscreen ')]")
    ]
    for i, record in enumerate(records):
        printed = record.extra.get("price_text")
        if printed is None and record.price is not None:
            readings = [t for t in offscreen if price_or_reason(t, record.currency)[0]]
            matching = [
                t
                for t in readings
                if (p := price_or_reason(t, record.currency)[0]) is not None
                and (p.low, p.high, p.currency)
                == (record.price, record.price_high, record.currency)
            ]
            printed = matching[0] if matching else None
        # A range printed over three elements ("$1,699.00" "to" "$1,749.00") is not one.
        if printed and _price_elements(root, printed):
            texts[i] = printed
    return texts


@dataclass(frozen=True)
class _Page:
    name: str
    parse: Callable
    content: (
        bytes  # as lxml serializes it, so the baseline and the mutants differ only in the price
    )
    baseline: tuple
    texts: dict[int, str]  # record index -> the price text it was read from


def _pages() -> list[_Page]:
    pages = []
    for source, (parse, names) in PAGES.items():
        for name in names:
            # Decoded as the parsers decode it: lxml alone would guess Latin-1 for a page
            # without a meta charset and turn "£" into "Â£".
            root = lxml.html.document_fromstring(
                decode_page((FIXTURES_ROOT / "retail" / source / name).read_bytes())
            )
            content = lxml.html.tostring(root, encoding="utf-8")
            baseline = parse(content, None).records
            pages.append(_Page(name, parse, content, baseline, _record_texts(baseline, root)))
    return [page for page in pages if page.texts]


def test_price_texts_injected_into_fixture_pages():
    rng = random.Random(SEED)
    counts: Counter[str] = Counter()
    refused: Counter[str] = Counter()
    failures: list[str] = []
    pages = _pages()
    assert len(pages) >= 12
    for number in range(PAGE_CASES):
        page = pages[number % len(pages)]
        index = rng.choice(sorted(page.texts))
        printed = page.texts[index]
        case = _page_case(rng, page.baseline[index].currency)
        root = lxml.html.document_fromstring(page.content.decode("utf-8"))
        _inject(root, printed)
        records = page.parse(_serialize(root, case.text), None).records
        counts[case.kind] += 1
        if len(records) != len(page.baseline):
            failures.append(f"{page.name} {case.text!r}: a record was lost")
            continue
        for i, (before, after) in enumerate(zip(page.baseline, records, strict=True)):
            if printed in page.texts.get(i, "") != printed:
                continue  # one end of a range printed over three elements: changed with it
            if page.texts.get(i) != printed:
                if after != before:
                    failures.append(f"{page.name} {case.text!r}: an untouched record changed")
                continue
            got = Price(after.price, after.price_high, after.currency) if after.price else None
            refused[case.kind] += got is None
            if problem := verdict(case, got, after.price_missing_reason):
                failures.append(f"{page.name} record {i} {case.kind} {case.text!r}: {problem}")
    _report("fixture pages", counts, refused, failures)
    assert set(counts) >= set(KINDS) - {"locale_currency"}
