"""`PoliteClient`: one request loop that asks small policies, one concern each.

In the manner of Scrapy's downloader middlewares, every politeness rule lives in its own
component and the client only composes them:

- `CircuitBreaker` (breaker.py) and `RobotsCache` (robots.py) may refuse a URL before any
  request is made;
- `HostGate` (hostgate.py) decides when a host's next request may start (spacing, a
  Retry-After) and keeps one request in flight per host;
- `read_body` (body.py) reads the body within the size cap, checks its length against the
  bytes received and decompresses it (a cut-off gzip body is a network error);
- every known credential is redacted from the body by value (`sources.redaction`), in
  every encoding it could be echoed in, before anything (classifier, parser, archive,
  log) sees it;
- `check_page` (blocks.py) spots a captcha, a block page or a 403;
- `RetryPolicy` (retry.py) decides whether a failure is worth another try and how long to
  wait before it;
- the breaker then counts the fetch's verdict, and the response is archived.
"""

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import SplitResult, urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.models import PreparedRequest
from requests.structures import CaseInsensitiveDict

from sources.archive import Archive, redact_body, redact_secrets, redact_url
from sources.http.blocks import Classifier, check_page
from sources.http.body import ACCEPT_ENCODING, DEFAULT_MAX_BYTES, TooLarge, read_body
from sources.http.breaker import CircuitBreaker
from sources.http.hostgate import HostGate, host_of
from sources.http.outcomes import Exchange, FetchOutcome, FetchResult, Verdict, now
from sources.http.retry import Retry, RetryPolicy
from sources.http.robots import RobotsCache

DEFAULT_USER_AGENT = (
    "gpuvalue/0.1 (+https://github.com/gpuvalue/gpuvalue; nightly GPU price research)"
)

log = logging.getLogger("gpuvalue.http")


@dataclass(frozen=True)
class _Sent:
    """One attempt on the wire: the response and its body, or the exception instead."""

    response: requests.Response | None
    content: bytes  # redacted by `_exchange` before anyone reads it
    fetched_at: dt.datetime
    elapsed: float = 0.0  # seconds from sending to the whole body
    error: Exception | None = None
    received_size: int = 0  # the body's bytes before redaction


class PoliteClient:
    """A polite, retrying, archiving HTTP client shared by every fetcher.

    Thread-safe: `get`/`post` may be called from several threads; `fetch_many` does so
    itself, one worker per host. Politeness state (rate limits, robots.txt, tripped hosts)
    lives as long as the client, i.e. one run.

    Args:
        user_agent: Sent on every request; callers cannot override it per request.
        archive: Where every response with a status is stored before it is returned.
        connect_timeout: Seconds to establish a connection.
        read_timeout: Seconds to wait between bytes of the response.
        max_retries: Retries after the first attempt (so at most max_retries + 1 requests).
        backoff_base: First backoff ceiling; the n-th retry waits uniform(0, base * 2**n).
        backoff_cap: Ceiling on any backoff wait.
        min_interval_per_host: Minimum seconds between request starts to one host (raised
            by a robots.txt Crawl-delay).
        max_workers: Hosts fetched concurrently by `fetch_many`.
        respect_robots: Fetch and obey each host's robots.txt.
        classify: `(url, status, content) -> "captcha" | "blocked" | None`, called on every
            response (with the final URL after redirects); "captcha" or "blocked" trips the
            host, even on a status that would otherwise be retried.
        sleep: Waits; injected so tests do not sleep.
        clock: Monotonic seconds for rate limiting; injected with `sleep` in tests.
        session: A requests session to use (default: a new one owned by the client).
        max_retry_after: Longest Retry-After honoured; a longer one ends the fetch as
            http_error instead of stalling the run, and opens the host's circuit (the host
            asked not to be asked for longer than the run can wait).
        trip_after_failures: Open a host's circuit after this many URLs in a row failed
            with a 5xx, a 429 or a network error after all their retries (0: never). One
            success resets the count, so a host that is only flaky keeps being asked.
        max_bytes: Largest response body read (after decompression); a bigger one ends
            the fetch as http_error, unarchived. A body shorter than its Content-Length
            is a network error (retried), never a result.
    """

    def __init__(
        self,
        *,
        user_agent: str = DEFAULT_USER_AGENT,
        archive: Archive | None = None,
        connect_timeout: float = 5.0,
        read_timeout: float = 20.0,
        max_retries: int = 4,
        backoff_base: float = 1.0,
        backoff_cap: float = 60.0,
        min_interval_per_host: float = 2.0,
        max_workers: int = 4,
        respect_robots: bool = True,
        classify: Classifier | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        session: requests.Session | None = None,
        max_retry_after: float = 300.0,
        max_bytes: int = DEFAULT_MAX_BYTES,
        trip_after_failures: int = 3,
    ) -> None:
        if connect_timeout <= 0 or read_timeout <= 0:
            raise ValueError("timeouts must be positive: a request without one can hang a run")
        if max_retries < 0 or max_workers < 1 or trip_after_failures < 0:
            raise ValueError(
                "max_retries and trip_after_failures must be >= 0 and max_workers >= 1"
            )
        if min(backoff_base, backoff_cap, min_interval_per_host, max_retry_after) < 0:
            raise ValueError("backoff, interval and max_retry_after must not be negative")
        self.user_agent = user_agent
        self.archive = archive
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_workers = max_workers
        self.respect_robots = respect_robots
        self.classify = classify
        self.max_bytes = max_bytes
        self._sleep = sleep
        self._retry = RetryPolicy(
            max_retries=max_retries,
            backoff_base=backoff_base,
            backoff_cap=backoff_cap,
            max_retry_after=max_retry_after,
        )
        self._gate = HostGate(min_interval=min_interval_per_host, sleep=sleep, clock=clock)
        self._breaker = CircuitBreaker(trip_after_failures=trip_after_failures)
        self._robots = RobotsCache(
            user_agent=user_agent,
            fetch=self._get_robots_txt,
            gate=self._gate,
            max_delay=max_retry_after,
        )
        self._owns_session = session is None
        self._session = session if session is not None else self._new_session(max_workers)
        self._lock = threading.Lock()  # guards the count below, never held across I/O
        self._archived = 0

    @staticmethod
    def _new_session(max_workers: int) -> requests.Session:
        session = requests.Session()
        # max_retries=0: urllib3 must not retry underneath us, or attempts, backoff and
        # politeness would be invisible; the pool is big enough for every worker thread.
        adapter = HTTPAdapter(max_retries=0, pool_maxsize=max(10, max_workers))
        session.mount("http://", adapter)
        session.mount("https://", adapter)
        return session

    def close(self) -> None:
        """Close the session if the client created it."""
        if self._owns_session:
            self._session.close()

    def __enter__(self) -> "PoliteClient":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- the settings its policies were built with ------------------------------------------

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt."""
        return self._retry.max_retries

    @property
    def backoff_base(self) -> float:
        """First backoff ceiling."""
        return self._retry.backoff_base

    @property
    def backoff_cap(self) -> float:
        """Ceiling on any backoff wait."""
        return self._retry.backoff_cap

    @property
    def max_retry_after(self) -> float:
        """Longest Retry-After honoured."""
        return self._retry.max_retry_after

    @property
    def min_interval_per_host(self) -> float:
        """Minimum seconds between request starts to one host."""
        return self._gate.min_interval

    @property
    def trip_after_failures(self) -> int:
        """Failed URLs in a row that open a host's circuit (0: never)."""
        return self._breaker.trip_after_failures

    # -- public API -----------------------------------------------------------------------

    def get(
        self,
        url: str,
        *,
        params: Mapping[str, Any] | Sequence[tuple[str, Any]] | None = None,
        headers: Mapping[str, str] | None = None,
        source: str = "",
    ) -> FetchResult:
        """GET `url` politely and archive the response.

        Args:
            url: An http(s) URL.
            params: Query parameters added to `url`.
            headers: Extra request headers (never logged or archived).
            source: The fetcher's name, stored with the archived response.

        Returns:
            The result; network failures and error statuses are outcomes, not exceptions.

        Raises:
            ValueError: `url` is not an http(s) URL.
        """
        return self._fetch("GET", url, params=params, headers=headers, source=source)

    def post(
        self,
        url: str,
        *,
        data: Any = None,
        json: Any = None,
        headers: Mapping[str, str] | None = None,
        auth: Any = None,
        source: str = "",
        archive_body: bool = True,
    ) -> FetchResult:
        """POST to `url` politely (e.g. an OAuth token endpoint or a search API).

        Args:
            url: An http(s) URL.
            data: Form data or raw body, as for `requests`.
            json: A JSON body, as for `requests`.
            headers: Extra request headers (never logged or archived).
            auth: Credentials, as for `requests` (never logged or archived).
            source: The fetcher's name, stored with the archived response.
            archive_body: False for responses that are secrets (OAuth tokens): nothing is
                archived, and the body is returned unredacted (it holds the token).

        Returns:
            The result; network failures and error statuses are outcomes, not exceptions.

        Raises:
            ValueError: `url` is not an http(s) URL.
        """
        return self._fetch(
            "POST",
            url,
            headers=headers,
            source=source,
            archive_body=archive_body,
            body={"data": data, "json": json, "auth": auth},
        )

    def fetch_many(self, urls: Sequence[str], *, source: str = "") -> list[FetchResult]:
        """GET many URLs: hosts concurrently, each host's URLs serially and rate-limited.

        Args:
            urls: http(s) URLs, any mix of hosts.
            source: The fetcher's name, stored with the archived responses.

        Returns:
            One result per URL, in input order.

        Raises:
            ValueError: Any URL is not an http(s) URL (checked before anything is fetched).
        """
        by_host: dict[str, list[int]] = {}
        for index, url in enumerate(urls):
            by_host.setdefault(host_of(self._check_url(url)), []).append(index)
        results: list[FetchResult | None] = [None] * len(urls)

        def run(indices: list[int]) -> None:
            for index in indices:
                results[index] = self.get(urls[index], source=source)

        if by_host:
            workers = min(self.max_workers, len(by_host))
            with ThreadPoolExecutor(workers, thread_name_prefix="gpuvalue-http") as pool:
                futures = [pool.submit(run, indices) for indices in by_host.values()]
                for future in futures:
                    future.result()
        return [result for result in results if result is not None]

    @property
    def archived_count(self) -> int:
        """How many responses this client has put in its archive."""
        with self._lock:
            return self._archived

    def tripped_hosts(self) -> set[str]:
        """Hosts whose circuit is open: no more requests to them this run."""
        return self._breaker.tripped_hosts()

    def cut_off(self) -> dict[str, str]:
        """Why each tripped host's circuit opened: {host: "circuit open for host ..."}."""
        return self._breaker.cut_off()

    # -- one fetch ------------------------------------------------------------------------

    @staticmethod
    def _check_url(url: str) -> SplitResult:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"not an http(s) URL: {redact_url(url)!r}")
        return parts

    def _fetch(
        self,
        method: str,
        url: str,
        *,
        params: Any = None,
        headers: Mapping[str, str] | None,
        source: str,
        archive_body: bool = True,
        body: Mapping[str, Any] | None = None,
    ) -> FetchResult:
        self._check_url(url)
        prepared = PreparedRequest()
        prepared.prepare_url(url, params)
        full_url = prepared.url or url
        parts = self._check_url(full_url)
        host = host_of(parts)

        refusal = self._refusal(host, parts, full_url)
        if refusal is not None:
            log.info("skip %s %s: %s", method, redact_url(full_url), refusal)
            return FetchResult(
                url=full_url,
                status=None,
                content=b"",
                fetched_at=now(),
                outcome=FetchOutcome.SKIPPED,
                attempts=0,
                error=refusal,
                archived=None,
                headers=CaseInsensitiveDict(),
            )

        kwargs: dict[str, Any] = {
            "headers": {
                "Accept-Encoding": ACCEPT_ENCODING,  # only what read_body can check
                **(headers or {}),
                "User-Agent": self.user_agent,
            }
        }
        kwargs.update(body or {})
        exchange = self._exchange(method, full_url, host, kwargs, robots=False, redact=archive_body)
        self._breaker.account(host, exchange.verdict, full_url)
        return self._result(full_url, exchange, source=source, archive_body=archive_body)

    def _refusal(self, host: str, parts: SplitResult, url: str) -> str | None:
        """Why `url` must not be requested (open circuit, robots.txt), or None."""
        refusal = self._breaker.refusal(host)
        if refusal is not None or not self.respect_robots or parts.path == "/robots.txt":
            return refusal
        return self._robots.refusal(parts, host, url)

    def _result(
        self, url: str, exchange: Exchange, *, source: str, archive_body: bool
    ) -> FetchResult:
        """The caller's result, archived first when it has a status."""
        response = exchange.response
        archived = None
        if response is not None and self.archive is not None and archive_body:
            # Archived before returning, so whatever parses this result can be re-run later
            # from the archive alone.
            archived = self.archive.store(
                url=url,
                status=response.status_code,
                content=exchange.content,
                fetched_at=exchange.fetched_at,
                source=source,
                headers=response.headers,
                received_size=exchange.received_size,
                redacted=True,
            )
            with self._lock:
                self._archived += 1
        return FetchResult(
            url=url,
            status=None if response is None else response.status_code,
            content=exchange.content,
            fetched_at=exchange.fetched_at,
            outcome=exchange.verdict.outcome,
            attempts=exchange.attempts,
            error=exchange.verdict.error,
            archived=archived,
            headers=CaseInsensitiveDict(
                {name: redact_secrets(value) for name, value in response.headers.items()}
                if response is not None
                else {}
            ),
            received_size=exchange.received_size,
        )

    def _get_robots_txt(self, url: str, host: str) -> Exchange:
        """GET a robots.txt for `RobotsCache`: politely, but unclassified and unbroken."""
        kwargs = {"headers": {"Accept-Encoding": ACCEPT_ENCODING, "User-Agent": self.user_agent}}
        return self._exchange("GET", url, host, kwargs, robots=True)

    # -- the request loop -----------------------------------------------------------------

    def _exchange(
        self,
        method: str,
        url: str,
        host: str,
        kwargs: Mapping[str, Any],
        *,
        robots: bool,
        redact: bool = True,
    ) -> Exchange:
        """Send until a policy gives its verdict on an attempt, retrying as it says.

        `robots=True` is the robots.txt fetch itself: no classifier and no circuit breaker,
        since robots.txt status codes have their own meaning (see `RobotsCache`).
        `redact=False` is for a response that is itself a secret and never archived (an
        OAuth token response): redacting it by value would erase the very token asked for
        when the server hands out one it gave before.
        """
        safe_url = redact_url(url)
        attempts = 0
        while True:
            attempts += 1
            sent = self._send(method, url, host, kwargs)
            if redact and sent.content:
                # Before anything reads it: the classifier, the parsers, the archive, the log.
                sent = replace(sent, content=redact_body(sent.content))
            step = self._judge(sent, method, url, attempts, robots=robots)
            if step.defer is not None:
                # The host asked for a pause: it applies to every request to it, this URL's
                # retry and the next URLs alike (other threads too).
                self._gate.defer(host, step.defer)
            if isinstance(step, Verdict):
                if step.logged:
                    log.warning("%s %s: %s", method, safe_url, step.error)
                return Exchange(
                    sent.response,
                    sent.content,
                    attempts,
                    sent.fetched_at,
                    step,
                    received_size=sent.received_size,
                )
            log.warning(step.log_format, method, safe_url, step.detail, attempts, step.wait)
            if step.defer is None:
                self._sleep(step.wait)  # a Retry-After is waited out by the host gate

    def _send(self, method: str, url: str, host: str, kwargs: Mapping[str, Any]) -> _Sent:
        """One attempt, in the host's turn: the response and its whole body, or the failure."""
        try:
            with self._gate.turn(host):
                started = time.monotonic()
                response = self._session.request(
                    method,
                    url,
                    timeout=(self.connect_timeout, self.read_timeout),
                    allow_redirects=True,
                    stream=True,
                    **kwargs,
                )
                content = read_body(response, self.max_bytes)
        except (TooLarge, requests.RequestException) as exc:
            return _Sent(None, b"", now(), error=exc)
        fetched_at = now()
        elapsed = time.monotonic() - started
        return _Sent(response, content, fetched_at, elapsed, received_size=len(content))

    def _judge(
        self, sent: _Sent, method: str, url: str, attempts: int, *, robots: bool
    ) -> Verdict | Retry:
        """Ask the policies about one attempt, in order: retry, block check, success, retry."""
        if sent.error is not None:
            return self._retry.on_error(sent.error, attempts)
        response, safe_url = sent.response, redact_url(url)
        status = response.status_code
        log.info(
            "%s %s -> %d (%.2fs, attempt %d)", method, safe_url, status, sent.elapsed, attempts
        )
        if response.url and response.url != url:
            log.info("%s %s redirected to %s", method, safe_url, redact_url(response.url))
        final_url = response.url or url
        blocked = check_page(self.classify, final_url, status, sent.content, robots=robots)
        if blocked is not None:
            return blocked
        if 200 <= status < 300:
            return Verdict(FetchOutcome.OK)
        return self._retry.on_status(status, response.headers, attempts, robots=robots)
