"""The one polite HTTP client every fetcher uses.

`PoliteClient` puts timeouts on every request, identifies itself honestly, retries only what
is worth retrying (429, 502, 503, 504 and network errors) with full-jitter backoff that
honours Retry-After for the whole host, spaces requests to one host, obeys robots.txt, stops
hitting a host (circuit breaker) after a captcha, a block page or a 403, after a Retry-After
longer than a run can wait, or after a few URLs in a row failed with server errors, 429s or
network errors even after their retries, and archives every response that got a status
before returning it, so parsers only ever read archived bytes.

Nothing secret is logged: no headers, no auth, and credentials in URLs are redacted.
"""

import datetime as dt
import email.utils
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any
from urllib.parse import SplitResult, urlsplit

import requests
from protego import Protego
from requests.adapters import HTTPAdapter
from requests.models import PreparedRequest
from requests.structures import CaseInsensitiveDict

from sources.archive import Archive, ArchivedResponse, redact_text, redact_url

DEFAULT_USER_AGENT = (
    "gpuvalue/0.1 (+https://github.com/gpuvalue/gpuvalue; nightly GPU price research)"
)
# Bigger than any page or API response we read (a GCP catalog page of 5000 SKUs is ~6 MB):
# a response past it is cut off and failed, never buffered whole.
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
# Statuses that mean "not now": worth another try after a pause.
RETRY_STATUSES = frozenset({429, 502, 503, 504})

log = logging.getLogger("gpuvalue.http")


class FetchOutcome(StrEnum):
    """What became of one fetch; compares equal to its plain string."""

    OK = "ok"  # a 2xx response the classifier did not object to
    CAPTCHA = "captcha"  # the classifier saw a bot check; the host is tripped
    BLOCKED = "blocked"  # a 403 or a block page; the host is tripped
    HTTP_ERROR = "http_error"  # any other status, retries exhausted, or a network error
    SKIPPED = "skipped"  # no request made: robots.txt or an open circuit


# Network failures where the next attempt may well succeed. SSL errors are ConnectionErrors
# too, but a bad certificate stays bad, so they are excluded below.
_RETRYABLE_ERRORS = (
    requests.ConnectionError,
    requests.Timeout,
    requests.exceptions.ChunkedEncodingError,
)
_DELAY_SECONDS = re.compile(r"\d+(?:\.\d+)?")


@dataclass(frozen=True)
class FetchResult:
    """The outcome of one GET or POST, after retries.

    Attributes:
        url: The requested URL, with `params` applied (not redacted: it is the caller's).
        status: The final HTTP status, or None when no response arrived.
        content: The final response body (empty when there was none).
        fetched_at: When the final response (or failure, or skip) happened, UTC.
        outcome: One of "ok", "captcha", "blocked", "http_error", "skipped".
        attempts: How many requests were sent (0 when skipped).
        error: Why the outcome is not "ok", credentials redacted; None when ok.
        archived: The archive entry for the final response, when archived.
        headers: The final response's headers (case-insensitive), empty without a response.
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

    @property
    def ok(self) -> bool:
        """Whether the outcome is "ok"."""
        return self.outcome == FetchOutcome.OK

    def json(self) -> Any:
        """The body decoded as JSON."""
        return json.loads(self.content)


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


def host_key(url: str) -> str:
    """The host a URL's politeness is tracked under: `hostname` or `hostname:port`."""
    return _host_key(urlsplit(url))


def _host_key(parts: SplitResult) -> str:
    host = (parts.hostname or "").lower()
    return host if parts.port is None else f"{host}:{parts.port}"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


@dataclass
class _HostState:
    """Politeness bookkeeping for one host."""

    lock: threading.Lock  # serialises request starts so threads cannot both go at once
    interval: float
    # Held from a request's turn until its body is read: one request in flight per host,
    # whatever the clock says (a slow response must not let the next one overlap it).
    busy: threading.Lock = field(default_factory=threading.Lock)
    last_start: float | None = None
    not_before: float | None = None  # a Retry-After: no request starts before this clock
    failures: int = 0  # URLs in a row that failed with a server or network error


@dataclass(frozen=True)
class _Robots:
    """A host's robots.txt verdict for this run."""

    parser: Protego | None
    unreachable: str | None = None  # why the whole host is disallowed


class _IncompleteBody(requests.exceptions.ChunkedEncodingError):
    """The body ended before the Content-Length the server announced (retried)."""


@dataclass(frozen=True)
class _Exchange:
    """What the retry loop ended with."""

    response: requests.Response | None
    content: bytes
    outcome: FetchOutcome
    error: str | None
    attempts: int
    fetched_at: dt.datetime
    # A 5xx or 429 after every retry, or a network error: counts towards the breaker.
    server_failure: bool = False
    # Why the host must not be asked again this run (a Retry-After beyond the cap).
    cut_off: str | None = None


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
        classify: Callable[[str, int, bytes], str | None] | None = None,
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
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_cap = backoff_cap
        self.min_interval_per_host = min_interval_per_host
        self.max_workers = max_workers
        self.respect_robots = respect_robots
        self.classify = classify
        self.max_retry_after = max_retry_after
        self.max_bytes = max_bytes
        self.trip_after_failures = trip_after_failures
        self._sleep = sleep
        self._clock = clock
        self._random = random.Random()
        self._owns_session = session is None
        self._session = session if session is not None else self._new_session(max_workers)
        self._lock = threading.Lock()  # guards the dicts below, never held across I/O
        self._hosts: dict[str, _HostState] = {}
        self._tripped: dict[str, str] = {}
        self._robots: dict[str, _Robots] = {}
        self._robots_locks: dict[str, threading.Lock] = {}
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
                archived.

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
            by_host.setdefault(_host_key(self._check_url(url)), []).append(index)
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
        with self._lock:
            return set(self._tripped)

    def cut_off(self) -> dict[str, str]:
        """Why each tripped host's circuit opened: {host: "circuit open for host ..."}."""
        with self._lock:
            return dict(self._tripped)

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
        host = _host_key(parts)

        refusal = self._refusal(host, parts, full_url)
        if refusal is not None:
            log.info("skip %s %s: %s", method, redact_url(full_url), refusal)
            return FetchResult(
                url=full_url,
                status=None,
                content=b"",
                fetched_at=_now(),
                outcome=FetchOutcome.SKIPPED,
                attempts=0,
                error=refusal,
                archived=None,
                headers=CaseInsensitiveDict(),
            )

        kwargs: dict[str, Any] = {"headers": {**(headers or {}), "User-Agent": self.user_agent}}
        kwargs.update(body or {})
        exchange = self._exchange(method, full_url, host, kwargs, robots=False)
        response = exchange.response
        self._account(host, exchange, full_url)

        archived = None
        if response is not None and self.archive is not None and archive_body:
            # Archived before returning, so whatever parses this result can be re-run later
            # from the archive alone.
            archived = self.archive.store(
                url=full_url,
                status=response.status_code,
                content=exchange.content,
                fetched_at=exchange.fetched_at,
                source=source,
                headers=response.headers,
            )
            with self._lock:
                self._archived += 1
        return FetchResult(
            url=full_url,
            status=None if response is None else response.status_code,
            content=exchange.content,
            fetched_at=exchange.fetched_at,
            outcome=exchange.outcome,
            attempts=exchange.attempts,
            error=exchange.error,
            archived=archived,
            headers=CaseInsensitiveDict(response.headers if response is not None else {}),
        )

    def _refusal(self, host: str, parts: SplitResult, url: str) -> str | None:
        """Why `url` must not be requested (open circuit, robots.txt), or None."""
        with self._lock:
            tripped = self._tripped.get(host)
        if tripped is not None:
            return tripped
        if not self.respect_robots or parts.path == "/robots.txt":
            return None
        robots = self._robots_for(parts, host)
        if robots.unreachable is not None:
            return robots.unreachable
        if robots.parser is not None and not robots.parser.can_fetch(url, self.user_agent):
            return "disallowed by robots.txt"
        return None

    def _account(self, host: str, exchange: _Exchange, url: str) -> None:
        """Feed one finished fetch to the host's circuit breaker."""
        if exchange.outcome in (FetchOutcome.CAPTCHA, FetchOutcome.BLOCKED):
            self._trip(
                host, f"circuit open for {host} after {exchange.outcome} at {redact_url(url)}"
            )
            return
        if exchange.cut_off is not None:
            self._trip(host, f"circuit open for {host}: {exchange.cut_off}")
            return
        state = self._host_state(host)
        with self._lock:
            state.failures = state.failures + 1 if exchange.server_failure else 0
            failures = state.failures
        if exchange.server_failure and 0 < self.trip_after_failures <= failures:
            self._trip(
                host,
                f"circuit open for {host} after {failures} failed requests in a row "
                f"(last: {exchange.error})",
            )

    def _trip(self, host: str, message: str) -> None:
        with self._lock:
            if host in self._tripped:
                return
            self._tripped[host] = message
        log.warning("%s; no more requests to %s this run", message, host)

    def _defer(self, host: str, seconds: float) -> None:
        """Honour a Retry-After: no request to `host` starts for `seconds` from now."""
        state = self._host_state(host)
        until = self._clock() + seconds
        with self._lock:
            state.not_before = max(until, state.not_before or until)

    def _exchange(
        self, method: str, url: str, host: str, kwargs: Mapping[str, Any], *, robots: bool
    ) -> _Exchange:
        """Send with bounded retries; classify the final response.

        `robots=True` is the robots.txt fetch itself: no classifier and no circuit breaker,
        since robots.txt status codes have their own meaning (see `_robots_for`).
        """
        safe_url = redact_url(url)
        attempts = 0
        busy = self._host_state(host).busy
        while True:
            attempts += 1
            try:
                with busy:
                    self._wait_turn(host)
                    started = time.monotonic()
                    response = self._session.request(
                        method,
                        url,
                        timeout=(self.connect_timeout, self.read_timeout),
                        allow_redirects=True,
                        stream=True,
                        **kwargs,
                    )
                    content = self._read_body(response)
            except _TooLarge as exc:
                log.warning("%s %s: %s", method, safe_url, exc)
                return _Exchange(None, b"", FetchOutcome.HTTP_ERROR, str(exc), attempts, _now())
            except requests.exceptions.SSLError as exc:
                return self._failed(exc, attempts, method, safe_url)
            except _RETRYABLE_ERRORS as exc:
                if attempts > self.max_retries:
                    return self._failed(exc, attempts, method, safe_url, server_failure=True)
                wait = self._backoff(attempts - 1)
                log.warning(
                    "%s %s: %s (attempt %d); retrying in %.1fs",
                    method,
                    safe_url,
                    _describe(exc),
                    attempts,
                    wait,
                )
                self._sleep(wait)
                continue
            except requests.RequestException as exc:
                return self._failed(exc, attempts, method, safe_url)

            fetched_at = _now()
            status = response.status_code
            elapsed = time.monotonic() - started
            log.info("%s %s -> %d (%.2fs, attempt %d)", method, safe_url, status, elapsed, attempts)
            if response.url and response.url != url:
                log.info("%s %s redirected to %s", method, safe_url, redact_url(response.url))

            verdict = None
            if not robots and self.classify is not None:
                verdict = self.classify(response.url or url, status, content)
            if verdict in (FetchOutcome.CAPTCHA, FetchOutcome.BLOCKED):
                outcome = FetchOutcome(verdict)
                error = f"{outcome} page (HTTP {status})"
                return _Exchange(response, content, outcome, error, attempts, fetched_at)
            if 200 <= status < 300:
                return _Exchange(response, content, FetchOutcome.OK, None, attempts, fetched_at)
            if status == 403 and not robots:
                # Retrying a 403 only digs the hole deeper: the host has decided.
                error = "HTTP 403 Forbidden"
                return _Exchange(
                    response, content, FetchOutcome.BLOCKED, error, attempts, fetched_at
                )
            server_error = status >= 500 or status == 429
            retry_after = self._retry_after(response) if server_error else None
            if retry_after is not None and retry_after > self.max_retry_after:
                error = (
                    f"HTTP {status} with Retry-After {retry_after:.0f}s, more than "
                    f"max_retry_after {self.max_retry_after:.0f}s; giving up"
                )
                log.warning("%s %s: %s", method, safe_url, error)
                cut_off = (
                    None
                    if robots
                    else f"HTTP {status} asked to wait {retry_after:.0f}s (Retry-After), more "
                    f"than max_retry_after {self.max_retry_after:.0f}s"
                )
                return _Exchange(
                    response,
                    content,
                    FetchOutcome.HTTP_ERROR,
                    error,
                    attempts,
                    fetched_at,
                    server_failure=True,
                    cut_off=cut_off,
                )
            if retry_after is not None:
                # The host asked for a pause: it applies to every request to it, this URL's
                # retry and the next URLs alike (other threads too).
                self._defer(host, retry_after)
            if status not in RETRY_STATUSES or attempts > self.max_retries:
                error = f"HTTP {status}"
                if status in RETRY_STATUSES:
                    error += f" after {attempts} attempts"
                return _Exchange(
                    response,
                    content,
                    FetchOutcome.HTTP_ERROR,
                    error,
                    attempts,
                    fetched_at,
                    server_failure=server_error,
                )
            wait = retry_after if retry_after is not None else self._backoff(attempts - 1)
            log.warning(
                "%s %s -> %d (attempt %d); retrying in %.1fs",
                method,
                safe_url,
                status,
                attempts,
                wait,
            )
            if retry_after is None:
                self._sleep(wait)  # a Retry-After is waited out by `_wait_turn`

    def _failed(
        self,
        exc: requests.RequestException,
        attempts: int,
        method: str,
        safe_url: str,
        *,
        server_failure: bool = False,
    ) -> _Exchange:
        error = f"{_describe(exc)} (after {attempts} attempts)"
        log.warning("%s %s: %s", method, safe_url, error)
        return _Exchange(
            None,
            b"",
            FetchOutcome.HTTP_ERROR,
            error,
            attempts,
            _now(),
            server_failure=server_failure,
        )

    def _read_body(self, response: requests.Response) -> bytes:
        """The whole body, at most `max_bytes` of it (decompressed), checked for length.

        Raises:
            _TooLarge: The body is (or announces itself as) bigger than `max_bytes`.
            _IncompleteBody: Fewer bytes arrived than the Content-Length announced.
        """
        try:
            announced = int(response.headers.get("Content-Length", ""))
        except ValueError:
            announced = None
        if announced is not None and announced > self.max_bytes:
            response.close()
            raise _TooLarge(f"response of {announced} bytes is over the {self.max_bytes} cap")
        chunks, size = [], 0
        for chunk in response.iter_content(chunk_size=1 << 16):
            size += len(chunk)
            if size > self.max_bytes:
                response.close()
                raise _TooLarge(f"response over the {self.max_bytes}-byte cap; cut off")
            chunks.append(chunk)
        content = b"".join(chunks)
        # urllib3 checks this too; an encoded body's length is of the encoded bytes, so the
        # check is only exact without Content-Encoding.
        encoded = response.headers.get("Content-Encoding", "identity") not in ("", "identity")
        if announced is not None and not encoded and len(content) < announced:
            raise _IncompleteBody(f"body of {len(content)} bytes, Content-Length {announced}")
        return content

    @staticmethod
    def _retry_after(response: requests.Response) -> float | None:
        """The response's Retry-After in seconds, or None without a usable one."""
        header = response.headers.get("Retry-After")
        return None if header is None else parse_retry_after(header)

    def _backoff(self, retry: int) -> float:
        # Full jitter: spreads retries from many clients instead of synchronising them.
        return self._random.uniform(0.0, min(self.backoff_cap, self.backoff_base * 2**retry))

    # -- politeness -----------------------------------------------------------------------

    def _host_state(self, host: str) -> _HostState:
        with self._lock:
            state = self._hosts.get(host)
            if state is None:
                state = _HostState(threading.Lock(), self.min_interval_per_host)
                self._hosts[host] = state
            return state

    def _wait_turn(self, host: str) -> None:
        """Block until this host may see another request start, then claim the slot."""
        state = self._host_state(host)
        with state.lock:
            now = self._clock()
            start = now
            if state.last_start is not None:
                start = max(start, state.last_start + state.interval)
            with self._lock:
                not_before = state.not_before
            if not_before is not None:
                start = max(start, not_before)
            if start > now:
                self._sleep(start - now)
            # The planned start, not "now" after sleeping: a fake clock does not advance,
            # and a real one that overslept only makes the next gap longer.
            state.last_start = max(start, self._clock())

    def _robots_for(self, parts: SplitResult, host: str) -> _Robots:
        """This host's robots.txt rules, fetched once per run (per scheme and host)."""
        origin = f"{parts.scheme}://{host}"
        with self._lock:
            cached = self._robots.get(origin)
            if cached is not None:
                return cached
            origin_lock = self._robots_locks.setdefault(origin, threading.Lock())
        with origin_lock:
            with self._lock:
                cached = self._robots.get(origin)
            if cached is None:
                cached = self._fetch_robots(origin, host)
                with self._lock:
                    self._robots[origin] = cached
            return cached

    def _fetch_robots(self, origin: str, host: str) -> _Robots:
        # RFC 9309: a robots.txt that cannot be reached (5xx, network) means "disallow all";
        # one that does not exist (4xx) means "allow all". 401/403 are treated as
        # disallow: a host refusing us robots.txt is refusing. Protego implements RFC 9309
        # matching (`*` and `$` wildcards, the longest rule wins), which
        # urllib.robotparser does not: it reads `Disallow: /*/dp/` as allowing `/x/dp/1`.
        url = f"{origin}/robots.txt"
        kwargs = {"headers": {"User-Agent": self.user_agent}}
        exchange = self._exchange("GET", url, host, kwargs, robots=True)
        response = exchange.response
        if response is None or response.status_code >= 500 or response.status_code == 429:
            why = exchange.error or f"HTTP {response.status_code if response else None}"
            reason = f"robots.txt unreachable for {host} ({why}); host disallowed for this run"
            log.warning(reason)
            return _Robots(None, reason)
        status = response.status_code
        if status in (401, 403):
            parser = Protego.parse("User-agent: *\nDisallow: /")
            log.warning("robots.txt for %s answered HTTP %d: host disallowed", host, status)
        elif status >= 400:
            parser = Protego.parse("")
            log.info("robots.txt for %s: HTTP %d, everything allowed", host, status)
        else:
            parser = Protego.parse(exchange.content.decode("utf-8", errors="replace"))
            delay = parser.crawl_delay(self.user_agent)
            if delay is not None:
                # Honour Crawl-delay, but a silly value must not stall the whole run.
                interval = max(self.min_interval_per_host, min(float(delay), self.max_retry_after))
                self._host_state(host).interval = interval
                log.info(
                    "robots.txt for %s: Crawl-delay %ss, interval %.1fs", host, delay, interval
                )
        return _Robots(parser)


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


class _TooLarge(Exception):
    """The response body is over the client's `max_bytes`."""


def _describe(exc: BaseException) -> str:
    """A one-line description of a request failure, credentials redacted.

    requests puts the URL (query included) into its messages, so they are redacted too.
    """
    return f"{type(exc).__name__}: {redact_text(str(exc))}"
