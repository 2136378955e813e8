"""The circuit breaker: which hosts get no more requests this run, and why.

A host's circuit opens after a captcha, a block page or a 403, after a Retry-After longer
than a run can wait, or after `trip_after_failures` URLs in a row failed with a 5xx, a 429
or a network error even after their retries. One success resets that count, so a host that
is only flaky keeps being asked.
"""

import logging
import threading

from sources.archive import redact_url
from sources.http.outcomes import FetchOutcome, Verdict

log = logging.getLogger("gpuvalue.http")


class CircuitBreaker:
    """Per-host circuits, open for the rest of the run once tripped.

    Args:
        trip_after_failures: Open a host's circuit after this many URLs in a row failed
            with a server or network error after all their retries (0: never).
    """

    def __init__(self, *, trip_after_failures: int) -> None:
        self.trip_after_failures = trip_after_failures
        self._lock = threading.Lock()  # guards the dicts below, never held across I/O
        self._tripped: dict[str, str] = {}
        self._failures: dict[str, int] = {}  # URLs in a row that failed, per host

    def refusal(self, host: str) -> str | None:
        """Why `host`'s circuit is open ("circuit open for host ..."), or None."""
        with self._lock:
            return self._tripped.get(host)

    def account(self, host: str, verdict: Verdict, url: str) -> None:
        """Feed one finished fetch of `url` to the host's circuit."""
        if verdict.outcome in (FetchOutcome.CAPTCHA, FetchOutcome.BLOCKED):
            self._trip(
                host, f"circuit open for {host} after {verdict.outcome} at {redact_url(url)}"
            )
            return
        if verdict.cut_off is not None:
            self._trip(host, f"circuit open for {host}: {verdict.cut_off}")
            return
        with self._lock:
            failures = self._failures.get(host, 0) + 1 if verdict.server_failure else 0
            self._failures[host] = failures
        if verdict.server_failure and 0 < self.trip_after_failures <= failures:
            self._trip(
                host,
                f"circuit open for {host} after {failures} failed requests in a row "
                f"(last: {verdict.error})",
            )

    def tripped_hosts(self) -> set[str]:
        """Hosts whose circuit is open."""
        with self._lock:
            return set(self._tripped)

    def cut_off(self) -> dict[str, str]:
        """Why each tripped host's circuit opened: {host: "circuit open for host ..."}."""
        with self._lock:
            return dict(self._tripped)

    def _trip(self, host: str, message: str) -> None:
        with self._lock:
            if host in self._tripped:
                return
            self._tripped[host] = message
        log.warning("%s; no more requests to %s this run", message, host)
