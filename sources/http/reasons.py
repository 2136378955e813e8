"""Short texts for why a fetch failed: for the log, the status cells and the run metadata."""

import re

from sources.archive import redact_text

_NETWORK_WORDS = (
    "ConnectionError",
    "ConnectTimeout",
    "ReadTimeout",
    "Timeout",
    "NameResolution",
    "Max retries exceeded",
    "Connection refused",
    "Connection reset",
    "ChunkedEncodingError",
)
SHORT_REASON_LENGTH = 80
_ABSOLUTE_PATH = re.compile(r"(?<![\w:/])(?:/[^\s/,:'\"]+)+/([^\s/,:'\"]+)")


def short_reason(detail: str | None) -> str:
    """A few words for a status cell ("network error", "HTTP 503", "captcha page").

    Exception texts from requests run to hundreds of characters of pool and socket detail;
    those belong in the log, the site shows this. Credentials are redacted either way.
    """
    text = redact_text(" ".join((detail or "").split()))
    if not text:
        return "no detail"
    if "circuit open for" in text:
        return _cut_off_reason(text)
    if any(word in text for word in _NETWORK_WORDS):
        return "network error"
    for pattern in (r"\b(?:captcha|blocked) page", r"disallowed by robots\.txt", r"HTTP \d{3}"):
        if match := re.search(pattern, text):
            return match.group(0)
    if "robots.txt unreachable" in text:
        return "robots.txt unreachable"
    # A file's name says which file; its absolute path says nothing a reader needs.
    text = _ABSOLUTE_PATH.sub(r"\1", text)
    first = text.split(": ", 1)[1] if text.startswith("failed: ") else text
    if len(first) <= SHORT_REASON_LENGTH:
        return first
    return first[: SHORT_REASON_LENGTH - 3].rstrip() + "..."


def _cut_off_reason(text: str) -> str:
    """A few words for a request the circuit breaker refused, saying why the host is off."""
    if match := re.search(r"after (\d+) failed requests in a row \(last: (.*)", text):
        return f"cut off after {match[1]} failures in a row ({short_reason(match[2])})"
    if match := re.search(r"asked to wait (\d+)s \(Retry-After\)", text):
        return f"cut off: Retry-After {match[1]}s"
    return "skipped after a captcha or block"


def is_cut_off(detail: str | None) -> bool:
    """Whether `detail` says the breaker cut a host off for errors or a Retry-After.

    A captcha or block page is not counted: the failure itself already names it.
    """
    return short_reason(detail).startswith("cut off")


def describe(exc: BaseException) -> str:
    """A one-line description of a request failure, credentials redacted.

    requests puts the URL (query included) into its messages, so they are redacted too.
    """
    return f"{type(exc).__name__}: {redact_text(str(exc))}"
