"""Credentials read from the environment, the one place every API client gets them."""

from collections.abc import Mapping


def env_secret(env: Mapping[str, str], name: str) -> str | None:
    """The value of `name` in `env`, stripped; None when unset or blank.

    Callers treat None as "this API is not configured" (skip it, or scrape instead), never
    as an error, and never log the value.
    """
    value = env.get(name)
    value = value.strip() if isinstance(value, str) else None
    return value or None
