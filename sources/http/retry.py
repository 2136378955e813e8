"""The retry policy: what is worth another try, and how long to wait before it.

Only 429, 502, 503, 504 and network errors are retried, with full-jitter backoff; a
Retry-After is honoured for the whole host (the host gate waits it out), and one longer
than a run can wait ends the fetch and cuts the host off.
"""

import datetime as dt
import email.utils
import random
import re
from collections.abc import Mapping
from dataclasses import dataclass

import requests

from sources.http.body import TooLarge
from sources.http.outcomes import FetchOutcome, Verdict
from sources.http.reasons import describe

# Statuses that mean "not now": worth another try after a pause.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

# Network failures where the next attempt may well succeed. SSL errors are ConnectionErrors
# too, but a bad certificate stays bad, so they are excluded (see `RetryPolicy.on_error`).
_RETRYABLE_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)
_DELAY_SECONDS = re.compile(r"\d+(?:\.\d+)?")

# The retry warnings, formatted with (method, redacted URL, detail, attempt, wait).
_RETRY_ERROR_LOG = "%s %s: %s (attempt %d); retrying in %.1fs"
_RETRY_STATUS_LOG = "%s %s -> %d (attempt %d); retrying in %.1fs"


def parse_retry_after(value: str, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delay-seconds or an HTTP-date.

    Args:
        value: The header value.
        now: The current time for HTTP-dates (default: the wall clock, UTC).

    Returns:
        The delay in seconds (0 for a date in the past), or None if `value` is neither form.
    """
    value = value.strip()
    if _DELAY_SECONDS.fullmatch(value):
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    return max(0.0, (when - now).total_seconds())


@dataclass(frozen=True)
class Retry:
    """Another attempt, after a pause.

    Attributes:
        wait: Seconds until the next attempt.
        log_format: The warning, formatted with (method, redacted URL, detail, attempt, wait).
        detail: What went wrong: the failure's description or the status.
        defer: A Retry-After (equal to `wait`) that applies to the whole host: the host gate
            waits it out, so the client does not sleep itself. None for a backoff.
    """

    wait: float
    log_format: str
    detail: object
    defer: float | None = None


class RetryPolicy:
    """Bounded retries with full-jitter backoff that honour Retry-After.

    Args:
        max_retries: Retries after the first attempt (so at most max_retries + 1 requests).
        backoff_base: First backoff ceiling; the n-th retry waits uniform(0, base * 2**n).
        backoff_cap: Ceiling on any backoff wait.
        max_retry_after: Longest Retry-After honoured; a longer one ends the fetch and cuts
            the host off.
    """

    def __init__(
        self, *, max_retries: int, backoff_base: float, backoff_cap: float, max_retry_after: float
    ) -> None:
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.max_retry_after = max_retry_after
        self._random = random.Random()

    def on_error(self, exc: Exception, attempts: int) -> Verdict | Retry:
        """Retry a network error while attempts remain; anything else ends the fetch."""
        if isinstance(exc, TooLarge):
            return Verdict(FetchOutcome.HTTP_ERROR, str(exc), logged=True)
        retryable = isinstance(exc, _RETRYABLE_ERRORS) and not isinstance(
            exc, requests.exceptions.SSLError
        )
        if retryable and attempts <= self.max_retries:
            return Retry(self.backoff(attempts - 1), _RETRY_ERROR_LOG, describe(exc))
        error = f"{describe(exc)} (after {attempts} attempts)"
        return Verdict(FetchOutcome.HTTP_ERROR, error, server_failure=retryable, logged=True)

    def on_status(
        self, status: int, headers: Mapping[str, str], attempts: int, *, robots: bool
    ) -> Verdict | Retry:
        """Retry a "not now" status while attempts remain; any other status ends the fetch.

        Called for the statuses no other policy settled (not 2xx, not a block). `robots` is
        the robots.txt fetch itself, which never cuts its host off (see `RobotsCache`).
        """
        server_error = status >= 500 or status == 429
        retry_after = _retry_after(headers) if server_error else None
        if retry_after is not None and retry_after > self.max_retry_after:
            return self._too_long(status, retry_after, robots=robots)
        # A Retry-After applies to every request to the host, this URL's retry and the next
        # URLs alike (other threads too), even when this URL gets no retry.
        if status not in RETRY_STATUSES or attempts > self.max_retries:
            error = f"HTTP {status}"
            if status in RETRY_STATUSES:
                error += f" after {attempts} attempts"
            return Verdict(
                FetchOutcome.HTTP_ERROR, error, server_failure=server_error, defer=retry_after
            )
        if retry_after is None:
            return Retry(self.backoff(attempts - 1), _RETRY_STATUS_LOG, status)
        return Retry(retry_after, _RETRY_STATUS_LOG, status, defer=retry_after)

    def _too_long(self, status: int, retry_after: float, *, robots: bool) -> Verdict:
        """Give up on a Retry-After longer than the run can wait, and cut the host off."""
        error = (
            f"HTTP {status} with Retry-After {retry_after:.0f}s, more than "
            f"max_retry_after {self.max_retry_after:.0f}s; giving up"
        )
        cut_off = (
            None
            if robots
            else f"HTTP {status} asked to wait {retry_after:.0f}s (Retry-After), more "
            f"than max_retry_after {self.max_retry_after:.0f}s"
        )
        return Verdict(
            FetchOutcome.HTTP_ERROR, error, server_failure=True, cut_off=cut_off, logged=True
        )

    def backoff(self, retry: int) -> float:
        """The wait before retry number `retry` (0 for the first)."""
        # Full jitter: spreads retries from many clients instead of synchronising them.
        return self._random.uniform(0.0, min(self.backoff_cap, self.backoff_base * 2**retry))


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """A response's Retry-After in seconds, or None without a usable one."""
    header = headers.get("Retry-After")
    return None if header is None else parse_retry_after(header)
