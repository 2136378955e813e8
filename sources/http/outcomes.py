"""What a fetch ends with: the public `FetchResult`, and the policies' verdicts behind it."""

import datetime as dt
import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import requests

from sources.archive import ArchivedResponse


class FetchOutcome(StrEnum):
    """What became of one fetch; compares equal to its plain string."""

    OK = "ok"  # a 2xx response the classifier did not object to
    CAPTCHA = "captcha"  # the classifier saw a bot check; the host is tripped
    BLOCKED = "blocked"  # a 403 or a block page; the host is tripped
    HTTP_ERROR = "http_error"  # any other status, retries exhausted, or a network error
    SKIPPED = "skipped"  # no request made: robots.txt or an open circuit


@dataclass(frozen=True)
class FetchResult:
    """The outcome of one GET or POST, after retries.

    Attributes:
        url: The requested URL, with `params` applied (not redacted: it is the caller's).
        status: The final HTTP status, or None when no response arrived.
        content: The final response body (empty when there was none), decompressed, with
            every known credential redacted by value (`sources.redaction`): no parser
            ever sees a secret a server echoed. Not redacted: a POST made with
            `archive_body=False` (an OAuth token response, itself a secret, never archived).
        fetched_at: When the final response (or failure, or skip) happened, UTC.
        outcome: One of "ok", "captcha", "blocked", "http_error", "skipped".
        attempts: How many requests were sent (0 when skipped).
        error: Why the outcome is not "ok", credentials redacted; None when ok.
        archived: The archive entry for the final response, when archived.
        headers: The final response's headers (case-insensitive), empty without a response;
            known credentials redacted by value.
        received_size: Bytes of the final body as received (decompressed, before
            redaction); 0 without a response.
    """

    url: str
    status: int | None
    content: bytes
    fetched_at: dt.datetime
    outcome: str
    attempts: int
    error: str | None
    archived: ArchivedResponse | None
    headers: Mapping[str, str]
    received_size: int = 0

    @property
    def ok(self) -> bool:
        """Whether the outcome is "ok"."""
        return self.outcome == FetchOutcome.OK

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.content)


@dataclass(frozen=True)
class Verdict:
    """A policy's final word on one attempt: the fetch ends here.

    Attributes:
        outcome: What the fetch became.
        error: Why it is not "ok" (None when ok).
        server_failure: A 5xx or 429 after every retry, or a network error: counts towards
            the circuit breaker.
        cut_off: Why the host must not be asked again this run (a Retry-After beyond the cap).
        defer: A Retry-After to apply to the whole host, in seconds, even though this URL
            is done.
        logged: Whether `error` deserves a warning in the log (network failures, oversized
            bodies, a Retry-After too long to wait); plain statuses are logged already.
    """

    outcome: FetchOutcome
    error: str | None = None
    server_failure: bool = False
    cut_off: str | None = None
    defer: float | None = None
    logged: bool = False


@dataclass(frozen=True)
class Exchange:
    """What the retry loop ended with: the final attempt and the verdict on it."""

    response: requests.Response | None
    content: bytes
    attempts: int
    fetched_at: dt.datetime
    verdict: Verdict
    received_size: int = 0  # the body's bytes before redaction


def now() -> dt.datetime:
    """The wall clock, UTC: when a response (or failure, or skip) happened."""
    return dt.datetime.now(dt.UTC)
