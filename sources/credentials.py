"""Credentials read from the environment, the one place every API client gets them.

Every value handed out here (and every token an API gives us in exchange) is remembered
for the life of the process, so that `sources.archive` can redact it by value from
anything it writes, wherever a server echoes it: a response body, a header, a redirect
URL. Redaction by header or parameter name alone misses an echo under another name.
"""

import threading
from collections.abc import Mapping

# Shorter values are not redacted by value: "1" or "abc" would erase ordinary page text.
MIN_SECRET_LENGTH = 4

_lock = threading.Lock()
_secrets: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Add a credential (or a token derived from one) to the values redacted by value."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _secrets.add(value)


def known_secrets() -> tuple[str, ...]:
    """Every credential this process has read or obtained, longest first."""
    with _lock:
        return tuple(sorted(_secrets, key=len, reverse=True))


def env_secret(env: Mapping[str, str], name: str) -> str | None:
    """The value of `name` in `env`, stripped; None when unset or blank.

    Callers treat None as "this API is not configured" (skip it, or scrape instead), never
    as an error, and never log the value. The value is remembered for redaction.
    """
    value = env.get(name)
    value = value.strip() if isinstance(value, str) else None
    remember_secret(value)
    return value or None
