"""PoliteClient against a real local HTTP server (127.0.0.1 / localhost only).

Waits go through an injected fake clock and sleep, so backoff and rate limits are asserted
on the requested sleeps instead of slept; only the read-timeout test spends real time.
"""

import datetime as dt
import email.utils
import json
import logging
import socket
import struct
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

import pytest
import requests

from sources.archive import REDACTED, Archive
from sources.http import (
    DEFAULT_USER_AGENT,
    PoliteClient,
    is_cut_off,
    parse_retry_after,
    short_reason,
)

LOCAL_HOSTS = {"127.0.0.1", "localhost"}


@dataclass
class Reply:
    """One scripted answer of the test server."""

    status: int = 200
    body: bytes = b"ok"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds before answering (interrupted at teardown)
    reset: bool = False  # drop the connection with a TCP RST instead of answering
    barrier: bool = False  # wait until another barrier request arrives (proves concurrency)
    length: int | None = None  # a Content-Length to announce instead of the body's own


@dataclass
class Seen:
    method: str
    path: str
    host: str
    headers: dict[str, str]
    body: bytes


class Server:
    """A scripted HTTP server: per path, a queue of replies (the last one repeats)."""

    def __init__(self) -> None:
        self.script: dict[str, list[Reply]] = {}
        self.seen: list[Seen] = []
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.barrier = threading.Barrier(2, timeout=5)
        self.in_flight: Counter[str] = Counter()
        self.max_in_flight: Counter[str] = Counter()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self.httpd.server_address[1]
        # A short poll interval keeps shutdown (and so each test's teardown) fast.
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    def on(self, path: str, *replies: Reply) -> None:
        self.script[path] = list(replies)

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    def count(self, path: str | None = None) -> int:
        with self.lock:
            return sum(1 for s in self.seen if path is None or urlsplit(s.path).path == path)

    def paths(self) -> list[str]:
        with self.lock:
            return [s.path for s in self.seen]

    def _next(self, path: str) -> Reply:
        with self.lock:
            queue = self.script.get(urlsplit(path).path)
            if not queue:
                if urlsplit(path).path == "/robots.txt":
                    return Reply(404, b"not found")
                return Reply(200, f"page {path}".encode())
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                host = (self.headers.get("Host") or "").split(":")[0]
                with server.lock:
                    server.seen.append(
                        Seen(self.command, self.path, host, dict(self.headers), body)
                    )
                    server.in_flight[host] += 1
                    server.max_in_flight[host] = max(
                        server.max_in_flight[host], server.in_flight[host]
                    )
                try:
                    self._reply(server._next(self.path))
                finally:
                    with server.lock:
                        server.in_flight[host] -= 1

            def _reply(self, reply: Reply) -> None:
                if reply.barrier:
                    try:
                        server.barrier.wait()
                    except threading.BrokenBarrierError:
                        reply = Reply(500, b"barrier broken: requests were not concurrent")
                if reply.delay:
                    server.stop.wait(reply.delay)
                if reply.reset:
                    # Linger 0 turns the close into a RST: a connection reset by peer.
                    self.connection.setsockopt(
                        socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                    )
                    self.close_connection = True
                    # Close every reference now, or the socket outlives the handler and the
                    # server's orderly shutdown sends a FIN first.
                    self.rfile.close()
                    self.wfile.close()
                    self.connection.close()
                    return
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                length = len(reply.body) if reply.length is None else reply.length
                self.send_header("Content-Length", str(length))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: object) -> None:
                pass

            def handle(self) -> None:
                # A client that timed out has gone away; writing to it is expected to fail.
                try:
                    super().handle()
                except OSError:
                    pass

        return Handler

    def start(self) -> None:
        self.httpd.handle_error = lambda request, address: None
        self.thread.start()

    def close(self) -> None:
        self.stop.set()
        self.barrier.abort()
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


class FakeTime:
    """A monotonic clock that only moves when someone sleeps; records every sleep."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def clock(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        assert seconds <= 600, f"a test asked to sleep {seconds}s"
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


class RecordingSession(requests.Session):
    """A real requests session that notes when (fake time) and how each request went out."""

    def __init__(self, fake: FakeTime) -> None:
        super().__init__()
        self.fake = fake
        self.sent: list[tuple[float, str, object]] = []
        self._lock = threading.Lock()

    def send(self, request, **kwargs):
        host = urlsplit(request.url).hostname
        assert host in LOCAL_HOSTS, f"tests must only contact localhost, not {host}"
        with self._lock:
            self.sent.append((self.fake.clock(), request.url, kwargs.get("timeout")))
        return super().send(request, **kwargs)

    def starts(self, host: str) -> list[float]:
        with self._lock:
            return [t for t, url, _ in self.sent if urlsplit(url).hostname == host]


@pytest.fixture
def server():
    srv = Server()
    srv.start()
    yield srv
    srv.close()


@pytest.fixture
def fake():
    return FakeTime()


def make_client(fake: FakeTime, **kwargs) -> tuple[PoliteClient, RecordingSession]:
    session = RecordingSession(fake)
    options = {
        "sleep": fake.sleep,
        "clock": fake.clock,
        "session": session,
        "min_interval_per_host": 0.0,
        "respect_robots": False,
        "connect_timeout": 2.0,
        "read_timeout": 5.0,
    }
    options.update(kwargs)
    return PoliteClient(**options), session


def captcha_detector(url: str, status: int, content: bytes) -> str | None:
    if b"validateCaptcha" in content:
        return "captcha"
    if b"Pardon Our Interruption" in content:
        return "blocked"
    return None


# -- retries -------------------------------------------------------------------------------


def test_429_with_retry_after_waits_exactly_then_succeeds(server, fake, tmp_path):
    server.on("/s", Reply(429, b"slow down", {"Retry-After": "1"}), Reply(200, b"results"))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive)

    result = client.get(server.url("/s"), source="amazon")

    assert (result.outcome, result.status, result.content) == ("ok", 200, b"results")
    assert result.ok and result.error is None
    assert result.attempts == 2
    assert fake.sleeps == [1.0]
    assert server.count("/s") == 2
    # Only the final response is archived: it is the one the result describes.
    assert [r.status for r in archive.responses(result.fetched_at.date())] == [200]


def test_retry_after_http_date_and_beyond_the_cap(server, fake):
    soon = email.utils.format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30), True)
    server.on("/date", Reply(503, b"", {"Retry-After": soon}), Reply(200, b"fine"))
    server.on("/hour", Reply(429, b"come back later", {"Retry-After": "3600"}))
    client, _ = make_client(fake, max_retry_after=300.0)

    assert client.get(server.url("/date")).outcome == "ok"
    assert len(fake.sleeps) == 1 and 27.0 <= fake.sleeps[0] <= 30.0

    result = client.get(server.url("/hour"))
    assert (result.outcome, result.status, result.attempts) == ("http_error", 429, 1)
    assert "Retry-After 3600s" in result.error and "max_retry_after" in result.error
    assert len(fake.sleeps) == 1  # gave up without waiting
    assert server.count("/hour") == 1


def test_parse_retry_after_forms():
    now = dt.datetime(2025, 1, 31, 12, 0, tzinfo=dt.UTC)
    assert parse_retry_after("120", now) == 120.0
    assert parse_retry_after("Fri, 31 Jan 2025 12:00:10 GMT", now) == 10.0
    assert parse_retry_after("Fri, 31 Jan 2025 11:00:00 GMT", now) == 0.0
    assert parse_retry_after("soon", now) is None


def test_503_storm_gives_up_after_max_retries_with_bounded_jittered_backoff(server, fake, tmp_path):
    server.on("/busy", Reply(503, b"busy"))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, max_retries=3, backoff_base=1.0, backoff_cap=3.0)

    result = client.get(server.url("/busy"), source="ebay")

    assert (result.outcome, result.status, result.attempts) == ("http_error", 503, 4)
    assert result.error == "HTTP 503 after 4 attempts"
    assert server.count("/busy") == 4
    assert len(fake.sleeps) == 3
    for retry, slept in enumerate(fake.sleeps):
        assert 0.0 <= slept <= min(3.0, 1.0 * 2**retry)
    assert result.archived is not None and result.archived.status == 503
    assert client.tripped_hosts() == set()  # a busy host is not a blocking host


@pytest.mark.parametrize("status", [502, 504])
def test_gateway_errors_are_retried(server, fake, status):
    server.on("/gw", Reply(status, b"gateway"), Reply(200, b"through"))
    client, _ = make_client(fake)
    result = client.get(server.url("/gw"))
    assert (result.outcome, result.attempts, result.content) == ("ok", 2, b"through")


def test_slow_response_hits_read_timeout_is_retried_then_fails(server, fake):
    server.on("/slow", Reply(200, b"too late", delay=2.0))
    client, _ = make_client(fake, read_timeout=0.3, max_retries=1)

    began = time.monotonic()
    result = client.get(server.url("/slow"))
    took = time.monotonic() - began

    assert (result.outcome, result.status, result.attempts) == ("http_error", None, 2)
    assert "timed out" in result.error.lower()
    assert result.content == b"" and result.archived is None
    assert server.count("/slow") == 2
    assert took < 5.0


def test_connection_reset_is_retried_then_fails_and_archives_nothing(server, fake, tmp_path):
    server.on("/reset", Reply(reset=True))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, max_retries=2)

    result = client.get(server.url("/reset"))

    assert (result.outcome, result.status, result.attempts) == ("http_error", None, 3)
    assert "ConnectionError" in result.error
    assert server.count("/reset") == 3
    assert len(fake.sleeps) == 2
    assert result.archived is None and archive.days() == []


def test_connection_refused_is_retried_then_fails(fake):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client, session = make_client(fake, max_retries=2)

    result = client.get(f"http://127.0.0.1:{port}/")

    assert (result.outcome, result.status, result.attempts) == ("http_error", None, 3)
    assert len(session.sent) == 3


def test_other_4xx_is_not_retried_and_does_not_trip(server, fake, tmp_path):
    server.on("/gone", Reply(404, b"no such page"))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive)

    result = client.get(server.url("/gone"), source="amazon")

    assert (result.outcome, result.status, result.attempts, result.error) == (
        "http_error",
        404,
        1,
        "HTTP 404",
    )
    assert fake.sleeps == [] and server.count("/gone") == 1
    assert client.tripped_hosts() == set()
    assert result.archived is not None and result.archived.read() == b"no such page"


# -- circuit breaker -----------------------------------------------------------------------


def test_captcha_page_with_200_trips_the_host(server, fake, tmp_path):
    page = b"<form action='/errors/validateCaptcha'>Type the characters</form>"
    server.on("/s", Reply(200, page))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, classify=captcha_detector)

    first = client.get(server.url("/s?k=rtx+4090"), source="amazon")
    assert (first.outcome, first.status, first.attempts) == ("captcha", 200, 1)
    assert first.archived is not None and first.archived.read() == page
    host = f"127.0.0.1:{server.port}"
    assert client.tripped_hosts() == {host}

    second = client.get(server.url("/other"), source="amazon")
    assert (second.outcome, second.status, second.attempts) == ("skipped", None, 0)
    assert second.error == f"circuit open for {host} after captcha at {server.url('/s?k=rtx+4090')}"
    assert server.count() == 1  # the second request never left the client
    assert len(archive.responses(first.fetched_at.date())) == 1

    # The breaker is per host: the same server under another name still answers.
    other = client.get(server.url("/fine", host="localhost"))
    assert other.outcome == "ok"


def test_block_page_served_as_503_is_not_retried(server, fake):
    server.on("/sch", Reply(503, b"<h1>Pardon Our Interruption</h1>"))
    client, _ = make_client(fake, classify=captcha_detector)

    result = client.get(server.url("/sch"))

    assert (result.outcome, result.attempts) == ("blocked", 1)
    assert fake.sleeps == [] and server.count("/sch") == 1
    assert client.tripped_hosts() == {f"127.0.0.1:{server.port}"}


def test_403_is_blocked_not_retried_and_trips(server, fake, tmp_path):
    server.on("/p", Reply(403, b"forbidden"))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive)

    result = client.get(server.url("/p"))
    assert (result.outcome, result.status, result.attempts) == ("blocked", 403, 1)
    assert fake.sleeps == []
    assert result.archived is not None and result.archived.status == 403

    again = client.get(server.url("/q"))
    assert again.outcome == "skipped" and "after blocked" in again.error
    assert server.count() == 1


# -- robots.txt ----------------------------------------------------------------------------


def test_robots_disallow_skips_without_requesting_and_is_fetched_once(server, fake):
    server.on("/robots.txt", Reply(200, b"User-agent: *\nDisallow: /private\n"))
    client, session = make_client(fake, respect_robots=True)

    blocked = client.get(server.url("/private/page"))
    allowed = client.get(server.url("/public"))
    allowed_again = client.get(server.url("/public"))

    assert (blocked.outcome, blocked.error, blocked.attempts) == (
        "skipped",
        "disallowed by robots.txt",
        0,
    )
    assert allowed.outcome == allowed_again.outcome == "ok"
    assert server.paths() == ["/robots.txt", "/public", "/public"]
    # robots.txt went through the same session, with timeouts and the honest User-Agent.
    assert session.sent[0][2] == (2.0, 5.0)
    assert server.seen[0].headers["User-Agent"] == DEFAULT_USER_AGENT


def test_robots_group_for_our_user_agent(server, fake):
    server.on(
        "/robots.txt",
        Reply(200, b"User-agent: gpuvalue\nDisallow: /\n\nUser-agent: *\nAllow: /\n"),
    )
    client, _ = make_client(fake, respect_robots=True)
    assert client.get(server.url("/anything")).error == "disallowed by robots.txt"
    assert server.paths() == ["/robots.txt"]


def test_robots_404_allows_everything(server, fake):
    client, _ = make_client(fake, respect_robots=True)  # the server answers 404 by default
    assert client.get(server.url("/x")).outcome == "ok"
    assert server.paths() == ["/robots.txt", "/x"]


def test_unreachable_robots_disallows_the_host_for_the_run(server, fake):
    server.on("/robots.txt", Reply(500, b"oops"))
    client, _ = make_client(fake, respect_robots=True, max_retries=1)

    first = client.get(server.url("/a"))
    second = client.get(server.url("/b"))

    assert first.outcome == second.outcome == "skipped"
    assert first.error.startswith(f"robots.txt unreachable for 127.0.0.1:{server.port}")
    assert "disallowed for this run" in first.error
    assert server.paths() == ["/robots.txt"]  # 500 is not retried; never asked again


def test_robots_crawl_delay_widens_the_interval(server, fake):
    server.on("/robots.txt", Reply(200, b"User-agent: *\nCrawl-delay: 7\n"))
    client, session = make_client(fake, respect_robots=True, min_interval_per_host=2.0)
    client.get(server.url("/a"))
    client.get(server.url("/b"))
    # robots.txt, /a, /b: the delay applies from the first request after robots.txt.
    starts = session.starts("127.0.0.1")
    assert [b - a for a, b in zip(starts, starts[1:], strict=False)] == [7.0, 7.0]


# -- politeness and concurrency ------------------------------------------------------------


def test_rate_limit_spaces_request_starts_to_one_host(server, fake):
    client, session = make_client(fake, min_interval_per_host=2.0)

    for path in ("/1", "/2", "/3"):
        assert client.get(server.url(path)).outcome == "ok"

    starts = session.starts("127.0.0.1")
    assert len(starts) == 3
    assert all(b - a >= 2.0 for a, b in zip(starts, starts[1:], strict=False))
    assert fake.sleeps == [2.0, 2.0]


def test_fetch_many_runs_hosts_concurrently_and_each_host_serially(server, fake, tmp_path):
    # Both /meet requests wait for each other at a barrier: with one host at a time they
    # would time out and get a 500.
    server.on("/meet", Reply(200, b"met", barrier=True))
    archive = Archive(tmp_path)
    client, session = make_client(fake, archive=archive, min_interval_per_host=2.0, max_workers=4)
    urls = [
        server.url("/meet?h=1"),
        server.url("/meet?h=2", host="localhost"),
        server.url("/a"),
        server.url("/b", host="localhost"),
        server.url("/c"),
    ]

    results = client.fetch_many(urls, source="test")

    assert [r.url for r in results] == urls
    assert [r.outcome for r in results] == ["ok"] * 5
    assert [r.content for r in results[:2]] == [b"met", b"met"]
    assert results[2].content == b"page /a"
    assert server.max_in_flight == {"127.0.0.1": 1, "localhost": 1}
    for host in LOCAL_HOSTS:
        starts = session.starts(host)
        assert all(b - a >= 2.0 for a, b in zip(starts, starts[1:], strict=False))
    assert len(archive.responses(results[0].fetched_at.date(), source="test")) == 5
    assert client.fetch_many([]) == []


def test_fetch_many_rejects_bad_urls_before_fetching(server, fake):
    client, _ = make_client(fake)
    with pytest.raises(ValueError, match="not an http"):
        client.fetch_many([server.url("/a"), "ftp://127.0.0.1/file"])
    assert server.count() == 0


def test_honest_user_agent_and_timeouts_on_every_request(server, fake):
    client, session = make_client(fake, respect_robots=True)
    client.get(server.url("/x"), headers={"User-Agent": "Mozilla/5.0 pretend", "Accept": "*/*"})
    client.post(server.url("/y"), data={"a": "1"})
    assert {s.headers["User-Agent"] for s in server.seen} == {DEFAULT_USER_AGENT}
    assert server.seen[1].headers["Accept"] == "*/*"
    assert [timeout for _, _, timeout in session.sent] == [(2.0, 5.0)] * 3


# -- archive and secrets -------------------------------------------------------------------


def test_every_response_with_a_status_is_archived_before_return(server, fake, tmp_path):
    server.on("/ok", Reply(200, b"fine", {"Content-Type": "text/html"}))
    server.on("/missing", Reply(404, b"missing"))
    server.on("/busy", Reply(503, b"busy"))
    server.on("/captcha", Reply(200, b"validateCaptcha"))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, max_retries=0, classify=captcha_detector)

    for path in ("/ok", "/missing", "/busy"):
        result = client.get(server.url(path), source="src")
        assert result.archived is not None
        # Already on disk when the call returns, bytes and all.
        assert archive.responses(result.fetched_at.date())[-1] == result.archived
        assert result.archived.read() == result.content
    captcha = client.get(server.url("/captcha", host="localhost"), source="src")
    assert captcha.outcome == "captcha" and captcha.archived is not None

    day = captcha.fetched_at.date()
    assert [(r.status, r.source) for r in archive.responses(day)] == [
        (200, "src"),
        (404, "src"),
        (503, "src"),
        (200, "src"),
    ]
    assert archive.responses(day)[0].content_type == "text/html"


def test_secrets_are_redacted_in_archive_and_logs(server, fake, tmp_path, caplog):
    server.on(
        "/data",
        Reply(
            200,
            b'{"items": []}',
            {
                "Content-Type": "application/json",
                "Set-Cookie": "session=cookie-value-123",
                "X-Auth-Token": "resp-token-456",
            },
        ),
    )
    server.on("/slow", Reply(200, b"", delay=2.0))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, read_timeout=0.3, max_retries=0)
    caplog.set_level(logging.DEBUG, logger="gpuvalue.http")

    result = client.get(
        server.url("/data?token=abc&q=gpu"),
        headers={"Authorization": "Bearer bearer-xyz"},
        source="api",
    )
    slow = client.get(server.url("/slow"), params={"client_secret": "cs-789"})

    assert result.json() == {"items": []}
    assert server.seen[0].headers["Authorization"] == "Bearer bearer-xyz"  # it was sent
    assert result.archived.url == server.url(f"/data?token={REDACTED}&q=gpu")
    assert "Set-Cookie" not in result.archived.headers
    assert "X-Auth-Token" not in result.archived.headers
    assert "cs-789" not in slow.error
    on_disk = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    logged = caplog.text
    assert "GET" in logged and REDACTED in logged
    for secret in ("abc", "bearer-xyz", "Authorization", "cookie-value-123", "resp-token-456"):
        assert secret.encode() not in on_disk, secret
        assert secret not in logged, secret
    assert "cs-789" not in logged


def test_post_token_endpoint_is_not_archived_and_auth_not_logged(server, fake, tmp_path, caplog):
    token = json.dumps({"access_token": "tok-secret", "expires_in": 7200}).encode()
    server.on("/oauth2/token", Reply(200, token, {"Content-Type": "application/json"}))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive)
    caplog.set_level(logging.DEBUG, logger="gpuvalue.http")

    result = client.post(
        server.url("/oauth2/token"),
        data={"grant_type": "client_credentials"},
        auth=("client-id", "client-pass"),
        source="ebay",
        archive_body=False,
    )

    assert result.ok and result.json()["access_token"] == "tok-secret"
    assert result.archived is None and archive.days() == []
    assert server.seen[0].method == "POST"
    assert server.seen[0].body == b"grant_type=client_credentials"
    assert server.seen[0].headers["Authorization"].startswith("Basic ")
    assert "client-pass" not in caplog.text and "tok-secret" not in caplog.text

    archived = client.post(server.url("/search"), json={"q": "rtx"}, source="api")
    assert archived.archived is not None and server.seen[1].body == b'{"q": "rtx"}'


def test_rejects_non_http_urls(fake):
    client, session = make_client(fake)
    for bad in ("file:///etc/passwd", "ftp://127.0.0.1/x", "not a url"):
        with pytest.raises(ValueError):
            client.get(bad)
    assert session.sent == []


def test_unparseable_retry_after_falls_back_to_backoff(server, fake):
    server.on("/s", Reply(429, b"", {"Retry-After": "whenever"}), Reply(200, b"ok"))
    client, _ = make_client(fake, backoff_base=0.5, backoff_cap=10.0)
    assert client.get(server.url("/s")).attempts == 2
    assert len(fake.sleeps) == 1 and 0.0 <= fake.sleeps[0] <= 0.5


def test_fetch_many_stops_a_host_after_a_captcha_but_not_the_others(server, fake):
    server.on("/captcha", Reply(200, b"validateCaptcha"))
    client, _ = make_client(fake, classify=captcha_detector)
    urls = [
        server.url("/captcha"),
        server.url("/x", host="localhost"),
        server.url("/a"),
        server.url("/y", host="localhost"),
        server.url("/b"),
    ]

    results = client.fetch_many(urls)

    assert [r.outcome for r in results] == ["captcha", "ok", "skipped", "ok", "skipped"]
    assert sorted(server.paths()) == ["/captcha", "/x", "/y"]


# -- robots.txt matching, size cap, short bodies (issue 14) --------------------------------


def test_robots_wildcards_and_the_longest_rule_win(server, fake):
    server.on(
        "/robots.txt",
        Reply(200, b"User-agent: *\nDisallow: /*/dp/\nDisallow: /s\nAllow: /s/ok$\n"),
    )
    client, _ = make_client(fake, respect_robots=True)
    # urllib.robotparser ignored the wildcard and took the first matching rule.
    assert client.get(server.url("/x/dp/1")).error == "disallowed by robots.txt"
    assert client.get(server.url("/s?k=rtx")).error == "disallowed by robots.txt"
    assert client.get(server.url("/s/ok")).outcome == "ok"
    assert server.paths() == ["/robots.txt", "/s/ok"]


def test_response_over_the_size_cap_fails_unarchived(server, fake, tmp_path):
    server.on("/big", Reply(200, b"x" * 5000))
    client, _ = make_client(fake, archive=Archive(tmp_path), max_bytes=1000)
    result = client.get(server.url("/big"))
    assert (result.outcome, result.content, result.archived) == ("http_error", b"", None)
    assert "cap" in result.error
    assert not list(tmp_path.rglob("*.bin"))


def test_body_shorter_than_content_length_is_never_a_result(server, fake, tmp_path):
    server.on("/short", Reply(200, b"<html>$36", length=500))
    client, _ = make_client(fake, archive=Archive(tmp_path), max_retries=1)
    result = client.get(server.url("/short"))
    assert result.outcome == "http_error"
    assert result.attempts == 2
    assert result.content == b""
    assert not list(tmp_path.rglob("*.bin"))


def test_echoed_credentials_are_redacted_by_value_everywhere(server, fake, tmp_path, caplog):
    from sources.credentials import env_secret

    secret = env_secret({"GCP_API_KEY": "gcp-key-echo-0123456789"}, "GCP_API_KEY")
    echo = (
        f"https://cb.example/?auth={secret}&code=abc123&Authorization=Bearer%20{secret}"
        f"&X-Goog-Api-Key=k-{secret}&keep=1"
    )
    server.on(
        "/echo",
        Reply(
            200,
            f'{{"you_sent": "{secret}", "quoted": "{secret.replace("-", "%2D")}"}}'.encode(),
            headers={"X-Echo": secret, "Location": echo},
        ),
    )
    client, _ = make_client(fake, archive=Archive(tmp_path))
    with caplog.at_level(logging.DEBUG, logger="gpuvalue"):
        result = client.get(server.url(f"/echo?q={secret}"), headers={"X-Goog-Api-Key": secret})
    assert result.ok
    on_disk = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert secret.encode() not in on_disk
    assert b"abc123" not in on_disk  # an OAuth code by its parameter name
    assert b"keep=1" in on_disk  # everything else is kept
    assert result.archived.headers["X-Echo"] == REDACTED
    assert secret not in caplog.text


def test_short_reason_is_a_few_words_for_a_status_cell():
    from sources.http import short_reason

    network = (
        "failed: page 1: http_error (ConnectionError: HTTPSConnectionPool(host='prices.azure."
        "com', port=443): Max retries exceeded with url: /api (Caused by NameResolutionError"
        "(...)) (after 5 attempts))"
    )
    assert short_reason(network) == "network error"
    assert short_reason("HTTP 503 after 5 attempts") == "HTTP 503"
    assert short_reason("captcha page (HTTP 200)") == "captcha page"
    long_path = "/tmp/x/y/data/cloud/azure.csv, line 4, field 'price_type': " + "x" * 200
    reason = short_reason(long_path)
    assert reason.startswith("azure.csv, line 4, field 'price_type'")
    assert len(reason) <= 80


# -- the breaker for server errors, and Retry-After per host (issue 15) ---------------------


def test_503_storm_cuts_the_host_off_after_three_failed_urls(server, fake, tmp_path):
    server.on("/busy", Reply(503, b"busy"))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, max_retries=1)
    urls = [server.url(f"/busy?k={n}") for n in range(6)] + [server.url("/fine", host="localhost")]

    results = client.fetch_many(urls, source="ebay")

    host = f"127.0.0.1:{server.port}"
    assert [(r.outcome, r.attempts) for r in results] == [
        *[("http_error", 2)] * 3,
        *[("skipped", 0)] * 3,
        ("ok", 1),
    ]
    assert server.count("/busy") == 3 * 2  # not 6 * 2: the last three never left the client
    assert client.tripped_hosts() == {host}
    why = (
        f"circuit open for {host} after 3 failed requests in a row "
        "(last: HTTP 503 after 2 attempts)"
    )
    assert client.cut_off() == {host: why}
    assert results[3].error == why
    assert short_reason(why) == "cut off after 3 failures in a row (HTTP 503)"
    assert is_cut_off(why)
    # The failed responses were archived like any other; the skipped ones have none.
    assert [r.archived is not None for r in results] == [True] * 3 + [False] * 3 + [True]


def test_a_success_resets_the_count_so_a_flaky_host_is_not_cut_off(server, fake):
    server.on("/busy", Reply(503, b"busy"))
    client, _ = make_client(fake, max_retries=0)
    for path in ("/busy", "/busy", "/ok", "/busy", "/busy", "/missing"):
        client.get(server.url(path))
    assert client.tripped_hosts() == set()  # never three failures in a row (a 404 is no failure)
    for _ in range(3):
        client.get(server.url("/busy"))
    assert client.tripped_hosts() == {f"127.0.0.1:{server.port}"}


def test_429s_with_retry_after_pause_the_whole_host_and_trip_it(server, fake):
    server.on("/s", Reply(429, b"slow down", {"Retry-After": "7"}))
    client, session = make_client(fake, max_retries=1, min_interval_per_host=2.0)

    results = [client.get(server.url(f"/s?k={n}")) for n in range(4)]

    assert [r.outcome for r in results] == ["http_error"] * 3 + ["skipped"]
    assert short_reason(results[3].error) == "cut off after 3 failures in a row (HTTP 429)"
    # Every request after a 429 waited its Retry-After, the next URL's first request too
    # (not the 2 s interval): 3 URLs x 2 attempts, 5 gaps of 7 s.
    starts = session.starts("127.0.0.1")
    assert [b - a for a, b in zip(starts, starts[1:], strict=False)] == [7.0] * 5


def test_network_errors_count_towards_the_breaker(fake):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client, session = make_client(fake, max_retries=1)

    results = [client.get(f"http://127.0.0.1:{port}/{n}") for n in range(5)]

    assert [r.outcome for r in results] == ["http_error"] * 3 + ["skipped"] * 2
    assert len(session.sent) == 3 * 2
    assert short_reason(results[4].error) == "cut off after 3 failures in a row (network error)"


def test_retry_after_beyond_the_cap_cuts_the_host_off_at_once(server, fake):
    server.on("/hour", Reply(429, b"come back later", {"Retry-After": "3600"}))
    client, _ = make_client(fake, max_retry_after=300.0)

    first = client.get(server.url("/hour"))
    second = client.get(server.url("/other"))

    assert (first.outcome, first.attempts) == ("http_error", 1)
    assert (second.outcome, second.attempts) == ("skipped", 0)
    assert short_reason(second.error) == "cut off: Retry-After 3600s"
    assert server.count() == 1 and fake.sleeps == []


def test_retry_after_on_the_last_attempt_still_delays_the_next_url(server, fake):
    server.on("/a", Reply(503, b"", {"Retry-After": "5"}))
    client, session = make_client(fake, max_retries=0)
    assert client.get(server.url("/a")).outcome == "http_error"
    assert client.get(server.url("/b")).outcome == "ok"
    assert fake.sleeps == [5.0]
    first, second = session.starts("127.0.0.1")
    assert second - first == 5.0


def test_the_server_error_breaker_can_be_turned_off(server, fake):
    server.on("/busy", Reply(500, b"oops"))
    client, _ = make_client(fake, trip_after_failures=0)
    results = client.fetch_many([server.url(f"/busy?{n}") for n in range(5)])
    assert [(r.outcome, r.error) for r in results] == [("http_error", "HTTP 500")] * 5
    assert client.tripped_hosts() == set()


def test_two_sources_at_once_share_each_hosts_politeness(server, fake, tmp_path):
    # As a live night does: one fetch_many per source, from two threads. Different hosts
    # run at the same time (the barrier), one host never sees two requests at once and its
    # request starts stay spaced, and every response reaches the archive.
    server.on("/meet", Reply(200, b"met", barrier=True))
    archive = Archive(tmp_path)
    client, session = make_client(fake, archive=archive, min_interval_per_host=2.0)
    amazon = [server.url("/meet?a"), server.url("/a1"), server.url("/a2")]
    ebay = [server.url("/meet?e", host="localhost"), server.url("/e1", host="localhost")]
    shared = [server.url("/s1"), server.url("/s2")]  # a third source on Amazon's host

    with ThreadPoolExecutor(3) as pool:
        futures = [
            pool.submit(client.fetch_many, urls, source=name)
            for name, urls in (("amazon", amazon), ("ebay", ebay), ("other", shared))
        ]
        results = [f.result() for f in futures]

    assert [[r.outcome for r in rs] for rs in results] == [["ok"] * 3, ["ok"] * 2, ["ok"] * 2]
    assert results[0][0].content == results[1][0].content == b"met"
    assert server.max_in_flight == {"127.0.0.1": 1, "localhost": 1}
    for host in LOCAL_HOSTS:
        starts = sorted(session.starts(host))
        assert all(b - a >= 2.0 for a, b in zip(starts, starts[1:], strict=False))
    day = results[0][0].fetched_at.date()
    stored = Counter(r.source for r in archive.responses(day))
    assert stored == {"amazon": 3, "ebay": 2, "other": 2}


# -- compressed and echoed bodies (issue 26 item 2) ----------------------------------------


def _gzip(data: bytes) -> bytes:
    import gzip

    return gzip.compress(data, mtime=0)


def test_gzip_body_is_decoded_and_a_cut_off_one_is_never_a_result(server, fake, tmp_path):
    import zlib

    page = b'{"items": [' + b", ".join(b'{"price": %d}' % i for i in range(400)) + b"]}"
    whole = _gzip(page)
    server.on("/gz", Reply(200, whole, {"Content-Encoding": "gzip"}))
    # Cut before the trailer, with a Content-Length of the cut size (a truncating proxy):
    # urllib3 alone decodes this into a shorter body without an error.
    server.on("/cut", Reply(200, whole[: len(whole) // 2], {"Content-Encoding": "gzip"}))
    server.on("/two", Reply(200, whole + _gzip(b"tail"), {"Content-Encoding": "gzip"}))
    raw_deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    deflated = raw_deflate.compress(page) + raw_deflate.flush()
    server.on("/deflate", Reply(200, deflated, {"Content-Encoding": "deflate"}))
    server.on("/zlib", Reply(200, zlib.compress(page), {"Content-Encoding": "deflate"}))
    server.on("/br", Reply(200, b"\x0b\x02\x80hello\x03", {"Content-Encoding": "br"}))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive, max_retries=1)

    good = client.get(server.url("/gz"))
    assert (good.outcome, good.content, good.received_size) == ("ok", page, len(page))
    assert good.archived.read() == page
    cut = client.get(server.url("/cut"))
    assert (cut.outcome, cut.content, cut.archived, cut.attempts) == ("http_error", b"", None, 2)
    assert "ends before its stream does" in cut.error
    assert client.get(server.url("/two")).content == page + b"tail"
    assert client.get(server.url("/deflate")).content == page
    assert client.get(server.url("/zlib")).content == page
    br = client.get(server.url("/br"))
    assert br.outcome == "http_error" and "was not asked for" in br.error
    assert {s.headers.get("Accept-Encoding") for s in server.seen} == {"gzip, deflate"}
    assert len(archive.responses(good.fetched_at.date())) == 4  # gz, two, deflate, zlib


def test_gzip_bomb_is_cut_off_at_the_size_cap(server, fake):
    server.on("/bomb", Reply(200, _gzip(b"\0" * 5_000_000), {"Content-Encoding": "gzip"}))
    client, _ = make_client(fake, max_bytes=100_000)
    result = client.get(server.url("/bomb"))
    assert (result.outcome, result.content) == ("http_error", b"")
    assert "cap" in result.error


def test_a_body_shortened_by_redaction_is_not_truncated(server, fake, tmp_path, monkeypatch):
    from sources.retail.ingest import parse_responses

    secret = "ebay-echo-secret-0123456789"
    monkeypatch.setenv("EBAY_CLIENT_SECRET", secret)
    page = f'{{"itemSummaries": [], "total": 0, "echo": "{secret}"}}'.encode()
    server.on("/echo", Reply(200, page, {"Content-Type": "application/json"}))
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive)

    result = client.get(server.url("/echo"), source="ebay_api")
    assert result.ok and secret.encode() not in result.content
    assert (result.received_size, result.archived.received_size) == (len(page), len(page))
    assert len(result.archived.read()) < len(page)
    (stored,) = archive.responses(result.fetched_at.date())
    assert stored.received_size == len(page)
    pages, _ = parse_responses([stored])
    # An empty result page, as the API sent it; not "truncated body".
    assert pages.select("outcome", "detail").rows() == [("empty", "no results")]


def test_echoes_in_every_encoding_are_redacted_before_the_caller_sees_them(
    server, fake, tmp_path, monkeypatch, caplog
):
    from tests.sources.secret_echo import SECRETS, echoes, leaks, needles

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    archive = Archive(tmp_path)
    client, _ = make_client(fake, archive=archive)
    wanted = needles(SECRETS.values())
    cases = 0
    with caplog.at_level(logging.DEBUG, logger="gpuvalue"):
        for index, secret in enumerate(SECRETS.values()):
            forms = echoes(secret)
            cases += len(forms)
            # A header value holds no line break: the MIME form is sent unwrapped there.
            flat = {form: "".join(text.splitlines()) for form, text in forms.items()}
            query = "&".join(f"{form}={text}" for form, text in flat.items())
            server.on(f"/e{index}", Reply(302, b"", {"Location": f"/r{index}?{query}"}))
            body = json.dumps([{"region": text} for text in forms.values()])
            headers = {f"X-Echo-{n}": text for n, text in enumerate(flat.values())}
            server.on(f"/r{index}", Reply(200, body.encode(), headers))
            result = client.get(server.url(f"/e{index}"))
            assert result.ok
            assert not leaks(result.content + str(dict(result.headers)).encode(), wanted)
            assert result.content.count(b"REDACTED") >= len(forms)
    on_disk = b"".join(p.read_bytes() for p in tmp_path.rglob("*") if p.is_file())
    assert not leaks(on_disk, wanted)
    assert not leaks(caplog.text.encode(), wanted)
    assert "redirected to" in caplog.text
    print(f"\nhttp echo: {cases} echoes x (body, header, redirect URL), 0 leaks")
