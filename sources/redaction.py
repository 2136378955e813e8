r"""Redaction of known secrets by value, in every encoding a response could carry them.

A server that echoes a request (a debug endpoint, an error page quoting the request, a
hostile or broken API) can put a credential anywhere in its answer, and not only as typed:
percent-encoded in a URL, JSON-escaped in a string, as an HTML entity in a page, or
base64-encoded alone or inside a bigger blob (a base64'd JSON of the request, a Basic
`Authorization` value "user:key"). Matching by header or parameter name misses all of
that, so every response is searched for each secret's value, in all of these forms:

- raw, letters in either case;
- percent-encoded (`%2F` or `%2f`, every character or only some), `+` for a space;
- JSON-escaped (`\u0041` in either case, `\/`, `\"`, `\\`, surrogate pairs);
- HTML character references: named (`&sol;`, `&amp;`, legacy ones without `;`), decimal
  (`&#65;`, leading zeros) and hexadecimal (`&#x41;`, `&#X041;`);
- any mix of these, character by character, and up to `MAX_ROUNDS` layers of them (a
  percent-encoded value inside a JSON string inside an HTML attribute: `&amp;#37;41`);
- base64 of the value at each of the three byte offsets it can have inside a blob, so the
  value alone and any blob holding it (padded or not) are found: standard and URL-safe
  alphabets, line breaks (MIME) between characters, and the base64 characters themselves
  in any of the encodings above (a blob in a URL or a JSON string). The blob's characters
  that carry bits of the secret are all replaced: the run, one character on either side
  (they straddle the value's first and last byte) and the padding.

How: the body is decoded, layer by layer, into a canonical form with a map back to the
original offsets; the plain forms (the value, its base64 runs) are searched there; each
hit is mapped back and that span of the original bytes is replaced by `REDACTED`. Only
the spans that held a secret change; the rest of the body is byte for byte as received.

Values shorter than `MIN_SECRET_LENGTH` are never redacted by value: a short value
("abcd", "true") also occurs in ordinary page text, and erasing it would corrupt the bodies
the parsers read. Such a value is still redacted by parameter and header name
(`sources.archive`). Real credentials are 16 characters or more.

Not covered (documented in docs/reliability.md): two nested layers of base64, compression
inside a body, hex, and any hashing or encryption of the value.
"""

import base64
import bisect
import functools
import html.entities
import re
from collections.abc import Iterable
from dataclasses import dataclass

REDACTED = "REDACTED"
MIN_SECRET_LENGTH = 8
# Layers of character encoding undone (percent inside JSON inside HTML is three).
MAX_ROUNDS = 3

_B64 = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
# One encoded character (or a line break inside base64), in the forms above.
_ESCAPE = re.compile(
    rb"%(?P<pct>[0-9A-Fa-f]{2})"
    rb"|\\u(?P<hi>[dD][89abAB][0-9A-Fa-f]{2})\\u(?P<lo>[dD][c-fC-F][0-9A-Fa-f]{2})"
    rb"|\\u(?P<uni>[0-9A-Fa-f]{4})"
    rb"|\\(?P<json>[/\"\\])"
    rb"|\\[rn]"
    rb"|&#(?P<dec>[0-9]{1,8});?"
    rb"|&#[xX](?P<hex>[0-9A-Fa-f]{1,7});?"
    rb"|&(?P<name>[A-Za-z][A-Za-z0-9]{1,31};?)"
)
# A raw line break; dropped only between two base64 characters (MIME wraps at 76). Kept
# out of `_ESCAPE`: a pattern whose every branch starts with one of a few bytes is scanned
# many times faster.
_LINE_BREAK = re.compile(rb"\n(?=[A-Za-z0-9+/=_-])")


def _entity(name: bytes) -> bytes | None:
    """The UTF-8 bytes an HTML named reference stands for (`amp;`, legacy `amp`), or None."""
    text = name.decode("ascii")
    value = html.entities.html5.get(text)
    if value is None and text.endswith(";"):
        return None
    if value is None:
        # A legacy reference without ";" followed by more letters: `&ampx` is `&` + "x".
        for end in range(len(text) - 1, 1, -1):
            value = html.entities.html5.get(text[:end])
            if value is not None:
                return value.encode("utf-8") + name[end:]
        return None
    return value.encode("utf-8")


def _code_point(number: int) -> bytes | None:
    if number > 0x10FFFF:
        return None
    return chr(number).encode("utf-8", "surrogatepass")


def _decode_one(match: re.Match[bytes]) -> bytes | None:
    """What one escape stands for; None when it is not an escape after all (`&#99999999;`)."""
    if match["pct"] is not None:
        return bytes([int(match["pct"], 16)])
    if match["hi"] is not None:
        high, low = int(match["hi"], 16), int(match["lo"], 16)
        return _code_point(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    if match["uni"] is not None:
        return _code_point(int(match["uni"], 16))
    if match["json"] is not None:
        return match["json"]
    if match["dec"] is not None:
        return _code_point(int(match["dec"]))
    if match["hex"] is not None:
        return _code_point(int(match["hex"], 16))
    if match["name"] is not None:
        return _entity(match["name"])
    return b""  # an escaped line break: dropped, so a wrapped base64 run reads as one


@dataclass(frozen=True)
class _Layer:
    """One round of decoding: the decoded bytes and where each decoded piece came from.

    `starts[i]` is where piece i begins in the decoded bytes and `sources[i]` the
    (start, end) of the bytes it was decoded from; plain pieces map one to one.
    """

    decoded: bytes
    starts: list[int]
    sources: list[tuple[int, int]]
    plain: list[bool]

    def start_of(self, position: int) -> int:
        """The original offset of decoded `position` (an escape maps to its first byte)."""
        index = bisect.bisect_right(self.starts, position) - 1
        begin, _ = self.sources[index]
        return begin + (position - self.starts[index]) if self.plain[index] else begin

    def end_of(self, position: int) -> int:
        """The original end offset of a span ending at decoded `position` (exclusive)."""
        index = bisect.bisect_right(self.starts, position - 1) - 1
        begin, end = self.sources[index]
        return begin + (position - self.starts[index]) if self.plain[index] else end


def _line_breaks(data: bytes) -> list[tuple[tuple[int, int], bytes]]:
    """The spans of raw line breaks (LF or CRLF) between two base64 characters."""
    found = []
    for match in _LINE_BREAK.finditer(data):
        begin = match.start()
        if begin > 0 and data[begin - 1] == 0x0D:  # CR
            begin -= 1
        if begin > 0 and data[begin - 1] in _B64:
            found.append(((begin, match.end()), b""))
    return found


def _decode_layer(data: bytes) -> _Layer | None:
    """Undo one layer of character escapes and base64 line wrapping; None if it has none."""
    escapes = [(m.span(), _decode_one(m)) for m in _ESCAPE.finditer(data)]
    pieces: list[bytes] = []
    starts: list[int] = []
    sources: list[tuple[int, int]] = []
    plain: list[bool] = []
    size = previous = 0
    for (begin, end), decoded in sorted(escapes + _line_breaks(data)):
        if decoded is None:
            continue
        if begin > previous:
            pieces.append(data[previous:begin])
            starts.append(size)
            sources.append((previous, begin))
            plain.append(True)
            size += begin - previous
        pieces.append(decoded)
        starts.append(size)
        sources.append((begin, end))
        plain.append(False)
        size += len(decoded)
        previous = end
    if not sources:
        return None
    pieces.append(data[previous:])
    starts.append(size)
    sources.append((previous, len(data)))
    plain.append(True)
    return _Layer(b"".join(pieces), starts, sources, plain)


def base64_cores(value: bytes) -> list[bytes]:
    """The base64 characters that encode only `value`'s bits, wherever it sits in a blob.

    A value at byte offset 0, 1 or 2 (mod 3) of a blob gives three different encodings;
    the characters that straddle its first and last byte depend on the neighbours and are
    left out. Both alphabets (standard and URL-safe).
    """
    cores: set[bytes] = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + value)
        first = -(-8 * offset // 6)  # the characters holding a filler bit are skipped
        last = 8 * (offset + len(value)) // 6  # the first holding bits after the value
        core = encoded[first:last]
        if len(core) >= 4:
            cores.add(core)
            cores.add(core.translate(bytes.maketrans(b"+/", b"-_")))
    return sorted(cores)


@dataclass(frozen=True)
class _Forms:
    folded: tuple[bytes, ...]  # searched in the lower-cased canonical bytes
    exact: tuple[bytes, ...]  # base64 runs: case matters


def usable_secrets(secrets: Iterable[str | None]) -> tuple[str, ...]:
    """The secrets long enough to redact by value, distinct, longest first."""
    kept = {s for s in secrets if s and len(s) >= MIN_SECRET_LENGTH}
    return tuple(sorted(kept, key=lambda s: (-len(s), s)))


@functools.lru_cache(maxsize=32)
def _forms(secrets: tuple[str, ...]) -> _Forms:
    folded: set[bytes] = set()
    exact: set[bytes] = set()
    for secret in secrets:
        raw = secret.encode("utf-8")
        folded |= {raw.lower(), raw.lower().replace(b" ", b"+")}
        # A blob may hold the value as typed or URL-encoded (a query string, a form body).
        percent = "".join(c if c.isalnum() or c in "-._~" else f"%{ord(c):02X}" for c in secret)
        for blob in {raw, percent.encode("utf-8")}:
            exact.update(base64_cores(blob))
    return _Forms(tuple(sorted(folded)), tuple(sorted(exact)))


def _hits(haystack: bytes, needles: Iterable[bytes]) -> list[tuple[int, int]]:
    spans = []
    for needle in needles:
        start = haystack.find(needle)
        while start != -1:
            spans.append((start, start + len(needle)))
            start = haystack.find(needle, start + 1)
    return spans


def _widen_base64(data: bytes, start: int, end: int) -> tuple[int, int]:
    """A base64 run's span with the straddling character on either side and the padding."""
    if start > 0 and data[start - 1] in _B64:
        start -= 1
    if end < len(data) and data[end] in _B64:
        end += 1
    pads = 0
    while end < len(data) and data[end] == ord("=") and pads < 2:
        end, pads = end + 1, pads + 1
    return start, end


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def secret_spans(content: bytes, secrets: Iterable[str | None]) -> list[tuple[int, int]]:
    """The (start, end) byte spans of `content` that hold a secret, merged and sorted."""
    wanted = usable_secrets(secrets)
    if not wanted or not content:
        return []
    forms = _forms(wanted)
    layers: list[_Layer] = []
    found: list[tuple[int, int]] = []
    data = content
    for round_ in range(MAX_ROUNDS + 1):
        spans = _hits(data.lower(), forms.folded)
        spans += [_widen_base64(data, *span) for span in _hits(data, forms.exact)]
        for start, end in spans:
            for layer in reversed(layers):  # back through every round to the original
                start, end = layer.start_of(start), layer.end_of(end)
            found.append((start, end))
        layer = _decode_layer(data) if round_ < MAX_ROUNDS else None
        if layer is None:
            break
        layers.append(layer)
        data = layer.decoded
    return _merge(found)


def redact_bytes(content: bytes, secrets: Iterable[str | None]) -> bytes:
    """`content` with every secret (in every covered encoding) replaced by `REDACTED`.

    Works on the bytes as received (UTF-8, Latin-1 or any ASCII-compatible charset: the
    encodings above are ASCII). Secrets shorter than `MIN_SECRET_LENGTH` are ignored.
    """
    spans = secret_spans(content, secrets)
    if not spans:
        return content
    out, previous = [], 0
    for start, end in spans:
        out += [content[previous:start], REDACTED.encode("ascii")]
        previous = end
    out.append(content[previous:])
    return b"".join(out)


def redact_str(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every secret (in every covered encoding) replaced by `REDACTED`."""
    if not text:
        return text
    raw = text.encode("utf-8", "surrogatepass")
    redacted = redact_bytes(raw, secrets)
    return text if redacted is raw else redacted.decode("utf-8", "surrogatepass")


def contains_secret(content: bytes | str, secrets: Iterable[str | None]) -> bool:
    """Whether `content` holds any of `secrets` in a covered encoding."""
    if isinstance(content, str):
        content = content.encode("utf-8", "surrogatepass")
    return bool(secret_spans(content, secrets))
