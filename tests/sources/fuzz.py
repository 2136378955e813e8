"""Seeded mutation fuzzing of the page and price-file parsers, and its oracles.

A case is (seed document, mutation, rng state): the same seed replays the same cases, and
a failure message names the document, the mutation and the case number to replay it.

Oracles:
- retail: the parser returns a `ParseResult` (never raises); every price, range end and
  shipping amount is finite and positive; every price is printed on the page (see
  `printed_amounts`); every eBay `price_text` is text of the page as it was sent;
- cloud: the parser returns records or raises `MalformedFile`, nothing else; every price
  is finite, positive, and no more than `MAX_USD_PER_GPU_HOUR` per GPU.
"""

import html
import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import lxml.html
from lxml import etree

# Price texts that must never become a plausible number.
HOSTILE_PRICES = (
    "-$129.99",
    "$-5.00",
    "$1,2,3",
    "$1e5",
    "$" + "9" * 400,
    "$" + "9" * 29 + ".99",
    "$5.00 - €10.00",
    "$٣٩٩",
    "$3٩٩.00",
    "$0.00",
    "$",
    "NaN",
    "$Infinity",
    "1.2.3,4,5",
    "$1.2345",
    "¥1²",
    "$12.99 $8.99",
    "US $1,299.00 to EUR 1.399,00",
)
HOSTILE_NUMBERS = (
    "Infinity",
    "-Infinity",
    "NaN",
    "1e308",
    "1e400",
    "-1",
    "0",
    "9" * 400,
    "1e-300",
    '"x"',
    "[]",
    "{}",
    "null",
)
_PRICE = re.compile(
    rb"(?:US ?\$|C ?\$|[$\xc2\xa3\xe2\x82\xac\xc2\xa5]|EUR ?|\xe2\x82\xb9)\s?[0-9][0-9.,]*"
    rb"|[0-9][0-9.,]*\s?(?:\xe5\x86\x86|\xe2\x82\xac)"
)
_NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_ELEMENT = re.compile(rb"<(span|div|li|h2|a|td|sup)\b[^>]*>[^<]{0,200}</\1>")
_META = re.compile(rb"<meta[^>]*charset[^>]*>", re.I)


@dataclass
class Stats:
    """What a fuzz run did."""

    cases: int = 0
    records: int = 0
    priced: int = 0
    by_mutation: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)


# --- mutations ---------------------------------------------------------------------------


def _swap_price(data: bytes, rng: random.Random) -> bytes:
    spans = list(_PRICE.finditer(data))
    if not spans:
        return data
    hostile = rng.choice(HOSTILE_PRICES).encode()
    for match in rng.sample(spans, min(len(spans), rng.randint(1, 5))):
        data = data[: match.start()] + hostile + data[match.end() :]
        break  # offsets move after the first replacement
    return data


def _swap_all_prices(data: bytes, rng: random.Random) -> bytes:
    hostile = rng.choice(HOSTILE_PRICES).encode()
    return _PRICE.sub(lambda _m: hostile, data)


def _truncate_in_price(data: bytes, rng: random.Random) -> bytes:
    spans = list(_PRICE.finditer(data))
    if not spans:
        return data[: rng.randrange(1, max(2, len(data)))]
    match = rng.choice(spans)
    return data[: rng.randint(match.start() + 1, match.end())]


def _flip_bytes(data: bytes, rng: random.Random) -> bytes:
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 20)):
        buffer[rng.randrange(len(buffer))] = rng.randrange(256)
    return bytes(buffer)


def _charset_damage(data: bytes, rng: random.Random) -> bytes:
    choice = rng.randrange(4)
    if choice == 0:  # invalid UTF-8 bytes somewhere
        at = rng.randrange(len(data))
        return data[:at] + rng.choice([b"\xff", b"\xc3", b"\xe5\x86", b"\x80\x80"]) + data[at:]
    if choice == 1:  # a lying or unknown declaration
        charset = rng.choice([b"iso-8859-1", b"windows-1252", b"utf-16", b"bogus", b"shift_jis"])
        meta = b'<meta charset="' + charset + b'">'
        if _META.search(data):
            return _META.sub(meta, data, count=1)
        return data.replace(b"<head>", b"<head>" + meta, 1)
    if choice == 2:  # a byte-order mark that does not match
        return rng.choice([b"\xff\xfe", b"\xfe\xff", b"\xef\xbb\xbf"]) + data
    return data.decode("utf-8", "replace").encode("cp1252", "replace")  # re-encoded


def _delete_element(data: bytes, rng: random.Random) -> bytes:
    spans = list(_ELEMENT.finditer(data))
    if not spans:
        return data
    chosen = rng.sample(spans, min(len(spans), rng.randint(1, 8)))
    for match in sorted(chosen, key=lambda m: m.start(), reverse=True):
        data = data[: match.start()] + data[match.end() :]
    return data


def _duplicate_element(data: bytes, rng: random.Random) -> bytes:
    spans = list(_ELEMENT.finditer(data))
    if not spans:
        return data
    match = rng.choice(spans)
    return data[: match.end()] + match.group(0) * rng.randint(1, 50) + data[match.end() :]


def _hostile_size(data: bytes, rng: random.Random) -> bytes:
    at = data.find(b"<body")
    at = data.find(b">", at) + 1 if at >= 0 else 0
    choice = rng.randrange(3)
    if choice == 0:  # deep nesting
        depth = rng.choice([1000, 5000, 20000])
        return data[:at] + b"<div>" * depth + b"</div>" * depth + data[at:]
    if choice == 1:  # a huge attribute and text
        return data[:at] + b'<p class="' + b"a" * 500_000 + b'">' + b"9" * 200_000 + data[at:]
    spans = list(_ELEMENT.finditer(data))  # many copies of one element
    piece = rng.choice(spans).group(0) if spans else b"<span>$1.00</span>"
    return data[:at] + piece * 2000 + data[at:]


HTML_MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "price_swap": _swap_price,
    "price_swap_all": _swap_all_prices,
    "truncate_in_price": _truncate_in_price,
    "byte_flip": _flip_bytes,
    "charset_damage": _charset_damage,
    "element_delete": _delete_element,
    "element_duplicate": _duplicate_element,
    "hostile_size": _hostile_size,
}


def _swap_number(data: bytes, rng: random.Random) -> bytes:
    spans = list(_NUMBER.finditer(data))
    if not spans:
        return data
    match = rng.choice(spans)
    return data[: match.start()] + rng.choice(HOSTILE_NUMBERS).encode() + data[match.end() :]


def _nest(data: bytes, rng: random.Random) -> bytes:
    depth = rng.choice([1000, 10_000, 100_000])
    if data.lstrip()[:1] in (b"{", b"["):
        return b"[" * depth + data + b"]" * depth
    return data + b"\n" + b"{" * depth  # a CSV or JSONL line that nests


def _duplicate_lines(data: bytes, rng: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if len(lines) < 2:
        return data + data
    at = rng.randrange(1, len(lines))
    return b"".join(lines[:at] + [lines[at]] * rng.randint(2, 100) + lines[at:])


FILE_MUTATIONS: dict[str, Callable[[bytes, random.Random], bytes]] = {
    "number_swap": _swap_number,
    "truncate": lambda data, rng: data[: rng.randrange(0, max(1, len(data)))],
    "byte_flip": _flip_bytes,
    "nesting": _nest,
    "line_duplicate": _duplicate_lines,
    "charset_damage": lambda data, rng: (
        rng.choice([b"\xff\xfe", b"\xef\xbb\xbf", b""]) + data.replace(b"a", b"\xe9", 3)
    ),
}


def cases(
    seeds: dict[str, bytes],
    mutations: dict[str, Callable[[bytes, random.Random], bytes]],
    seed: int,
    budget_seconds: float,
    max_cases: int,
) -> Iterator[tuple[str, str, int, bytes]]:
    """(document, mutation, case number, mutated bytes), round-robin, until the budget ends."""
    rng = random.Random(seed)
    names = sorted(seeds)
    kinds = sorted(mutations)
    deadline = time.process_time() + budget_seconds
    for number in range(max_cases):
        if time.process_time() > deadline:
            return
        # Every document and every mutation early on, whatever the budget: the kind
        # moves on with each case and shifts by one on each pass over the documents.
        name = names[number % len(names)]
        kind = kinds[(number + number // len(names)) % len(kinds)]
        yield name, kind, number, mutations[kind](seeds[name], rng)


# --- oracles -----------------------------------------------------------------------------

_TOKEN = re.compile(r"[0-9](?:[0-9.,'\s]*[0-9])?[.,]?", re.ASCII)


def _readings(token: str) -> set[float]:
    """Every amount a printed number can honestly mean (grouping or decimal mark)."""
    values: set[float] = set()
    token = token.rstrip(".,")
    marks = [i for i, c in enumerate(token) if c in ".,'"]
    digits = re.sub(r"[^0-9]", "", token)
    if not digits:
        return values
    groups = re.split(r"[.,']", token)
    if (
        not marks
        or all(len(g) == 3 for g in groups[1:])
        or all(len(g) == 2 for g in groups[1:-1])
        and len(groups[-1]) == 3
    ):
        values.add(float(digits))
    if len(digits) >= 3:
        # Whole and cents in adjacent elements with no mark between ("1,299" + "95").
        values.add(float(digits) / 100)
    if marks:
        whole = re.sub(r"[^0-9]", "", token[: marks[-1]])
        fraction = token[marks[-1] + 1 :]
        if whole and 1 <= len(fraction) <= 2 and fraction.isdigit():
            values.add(float(f"{whole}.{fraction}"))
    return values


def printed_amounts(text: str) -> set[float]:
    """Amounts (in cents precision) printed in `text`, however they are grouped.

    A number split over elements ("109." + "99", "66" + "01" in 2018 sx-price spans) is
    read both as one number and as its parts, and its last two digits may be cents.
    Dropping a decimal mark is never a reading: "26.29" is not 2629.
    """
    amounts: set[float] = set()
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        pieces = token.split()
        for piece in pieces:
            amounts |= _readings(piece)
        joined = "".join(pieces)
        amounts |= _readings(joined)
        if len(pieces) > 1 and re.fullmatch(r"[0-9]{2}", pieces[-1]):
            amounts |= _readings("".join(pieces[:-1]).rstrip(".,") + "." + pieces[-1])
    return {round(a, 2) for a in amounts}


def page_texts(content: bytes) -> list[str]:
    """The page's text as its bytes say in UTF-8 (the fixtures' encoding), several ways.

    Tags removed by a regex and by lxml's recovering parser (a damaged tag is recovered
    differently by each), each with elements joined directly ("1,299" + "95") and with a
    space ("$6,799.00" + "$6,799.00" are two prices, not one long number).
    """
    text = content.decode("utf-8", "replace")
    texts = [html.unescape(re.sub(r"<[^>]*>", joiner, text)) for joiner in ("", " ")]
    try:
        root = lxml.html.document_fromstring(re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f]", "", text))
        pieces = list(root.itertext())
        texts += ["".join(pieces), " ".join(pieces)]
    except (ValueError, etree.ParserError):
        pass
    return texts


def _collapse(text: str) -> str:
    # Parsers join an element's pieces with spaces, the page may print them without.
    return "".join(text.split())


def check_retail(result: object, content: bytes) -> list[str]:
    """Oracle violations of one retail parse."""
    from sources.retail.records import ParseResult

    if not isinstance(result, ParseResult):
        return [f"returned {type(result).__name__}, not a ParseResult"]
    problems = []
    text = None
    amounts: set[float] | None = None
    for record in result.records:
        for name in ("price", "price_high", "shipping"):
            value = getattr(record, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                problems.append(f"{name} {value!r} is not finite and positive")
        if record.price is None:
            continue
        if text is None:
            texts = page_texts(content)
            text = "\n".join(_collapse(t) for t in texts)
            amounts = set().union(*(printed_amounts(t) for t in texts))
        for value in (record.price, record.price_high):
            if value is not None and round(value, 2) not in amounts:
                problems.append(f"price {value!r} {record.currency} is not on the page")
        price_text = record.extra.get("price_text")
        if price_text and _collapse(price_text) not in text:
            problems.append(f"price text {price_text!r:.60} is not the page's own text")
    return problems


def check_cloud(records: list, max_per_gpu: float) -> list[str]:
    """Oracle violations of one cloud parse that returned records."""
    problems = []
    for record in records:
        for name in ("usd_per_hour", "usd_per_gpu_hour"):
            value = getattr(record, name, None)
            if value is None:
                continue
            if not (math.isfinite(value) and value > 0):
                problems.append(f"{name} {value!r} is not finite and positive")
        per_gpu = getattr(record, "usd_per_gpu_hour", None)
        if per_gpu is not None and per_gpu > max_per_gpu:
            problems.append(f"usd_per_gpu_hour {per_gpu!r} over {max_per_gpu}")
    return problems
