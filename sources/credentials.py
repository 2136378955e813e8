"""Credentials read from the environment, the one place every API client gets them.

Every value handed out here (and every token an API gives us in exchange) is remembered
for the life of the process, and every variable of `CREDENTIAL_ENV` set in the process's
environment counts as known even before a fetcher reads it, so that every response can be
redacted by value (`sources.redaction`) before anything parses, archives or logs it,
wherever a server echoes it: a response body, a header, a redirect URL, in any encoding.
Redaction by header or parameter name alone misses an echo under another name.

Values shorter than `MIN_SECRET_LENGTH` (8) are not redacted by value: a short value also
occurs in ordinary page text, and erasing it would corrupt the bodies the parsers read.
"""

import os
import threading
from collections.abc import Mapping

from sources.redaction import MIN_SECRET_LENGTH, usable_secrets

__all__ = [
    "CREDENTIAL_ENV",
    "MIN_SECRET_LENGTH",
    "env_secret",
    "known_secrets",
    "remember_secret",
]

# Every environment variable that holds a credential the project reads (the live fetchers
# in sources/cloud/fetch.py and sources/retail/ebay_api.py; the warehouse and Dagster
# storage settings in docs/deployment.md). A value set here is redacted from every
# response even if the fetcher that reads it never runs this process.
CREDENTIAL_ENV = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "GCP_API_KEY",
    "LAMBDA_API_KEY",
    "VAST_API_KEY",
    "RUNPOD_API_KEY",
    "EBAY_CLIENT_ID",
    "EBAY_CLIENT_SECRET",
    # Amazon's PA-API 5 was retired in 2026-05; a machine may still have its keys set.
    "AMAZON_PAAPI_ACCESS_KEY",
    "AMAZON_PAAPI_SECRET_KEY",
    "MOTHERDUCK_TOKEN",
    "DAGSTER_PG_PASSWORD",
)

_lock = threading.Lock()
_secrets: set[str] = set()


def remember_secret(value: str | None) -> None:
    """Add a credential (or a token derived from one) to the values redacted by value."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _secrets.add(value)


def known_secrets(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """Every credential this process has read or obtained, and those set in `env`.

    Args:
        env: The environment whose `CREDENTIAL_ENV` values count too (default
            `os.environ`).

    Returns:
        The values long enough to redact by value, distinct, longest first.
    """
    env = os.environ if env is None else env
    configured = [(env.get(name) or "").strip() for name in CREDENTIAL_ENV]
    with _lock:
        return usable_secrets([*_secrets, *configured])


def env_secret(env: Mapping[str, str], name: str) -> str | None:
    """The value of `name` in `env`, stripped; None when unset or blank.

    Callers treat None as "this API is not configured" (skip it, or scrape instead), never
    as an error, and never log the value. The value is remembered for redaction.
    """
    value = env.get(name)
    value = value.strip() if isinstance(value, str) else None
    remember_secret(value)
    return value or None
