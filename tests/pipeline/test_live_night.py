"""A live night against a local server: Amazon answers with a captcha, eBay with a 503
storm. The run must record both, write no price rows from them, erase nothing, and still
publish. Every credential is set (as on a configured machine), so eBay goes through its
API and every cloud API is called; Amazon's retired PA-API variables must change nothing.
A guard fails the test on any connection or name lookup that is not 127.0.0.1 /
localhost; every loop is bounded. (Without credentials, providers are skipped without a
request: tests/sources/cloud/test_cloud_fetch.py.)"""

import datetime as dt
import ipaddress
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.defs.partitions import CLOUD_PROVIDERS
from tests.conftest import build, copy_build
from tests.paths import FIXTURES_ROOT
from warehouse.db import row_counts
from warehouse.export import open_published

CAPTCHA = FIXTURES_ROOT / "retail" / "amazon" / "captcha_classic.html"


class Hostile(BaseHTTPRequestHandler):
    hits: list[str] = []

    def do_POST(self):  # noqa: N802 - the stdlib's name
        # Token endpoints and POST APIs (eBay OAuth, AWS, RunPod) meet the same 503 storm.
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.do_GET()

    def do_GET(self):  # noqa: N802 - the stdlib's name
        Hostile.hits.append(self.path)
        if self.path.startswith("/robots.txt"):
            self.send_response(404)
            self.end_headers()
        elif self.path.startswith("/s?"):
            body = CAPTCHA.read_bytes()
            self.send_response(200)  # a bot wall served as a normal page
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        else:
            self.send_response(503)
            self.send_header("Retry-After", "0")
            self.send_header("Content-Length", "0")
            self.end_headers()

    def log_message(self, *args):
        pass


CREDENTIALS = {
    "EBAY_CLIENT_ID": "ebay-client-id-0001",
    "EBAY_CLIENT_SECRET": "ebay-client-secret-0001",
    "AMAZON_PAAPI_ACCESS_KEY": "AKIAPAAPI00000000001",
    "AMAZON_PAAPI_SECRET_KEY": "paapi-secret-key-0001",
    "AMAZON_PARTNER_TAG": "gpuvalue-20",
    "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE000000001",
    "AWS_SECRET_ACCESS_KEY": "aws-secret-access-key-0001",
    "GCP_API_KEY": "gcp-api-key-0001",
    "LAMBDA_API_KEY": "lambda-api-key-0001",
    "VAST_API_KEY": "vast-api-key-0001",
    "RUNPOD_API_KEY": "runpod-api-key-0001",
}
API_PROVIDERS = ("aws", "gcp", "lambda", "runpod")  # called only with their credentials


@pytest.fixture
def loopback_only(monkeypatch):
    """Fail the test on any connection (or name lookup) that is not to this machine."""
    attempts: list[str] = []
    connect, getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def is_local(host: object) -> bool:
        if host in ("localhost", "", None):
            return True
        try:
            return ipaddress.ip_address(str(host)).is_loopback
        except ValueError:
            return False

    def guarded_connect(sock, address):
        host = address[0] if isinstance(address, tuple) else None
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not is_local(host):
            attempts.append(f"connect {address}")
            raise ConnectionRefusedError(f"test guard: no connection to {address}")
        return connect(sock, address)

    def guarded_getaddrinfo(host, *args, **kwargs):
        if not is_local(host if not isinstance(host, bytes) else host.decode()):
            attempts.append(f"lookup {host}")
            raise socket.gaierror(f"test guard: no lookup of {host}")
        return getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", guarded_connect)
    monkeypatch.setattr(socket, "getaddrinfo", guarded_getaddrinfo)
    yield attempts
    assert not attempts, f"non-loopback network use: {attempts}"


@pytest.fixture
def hostile_server():
    Hostile.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    thread.join(timeout=5)


@pytest.mark.slow(seconds=55)
def test_blocked_live_night_writes_no_prices_and_still_publishes(
    built, tmp_path, hostile_server, loopback_only, monkeypatch
):
    for name, value in CREDENTIALS.items():
        monkeypatch.setenv(name, value)
    port = hostile_server
    root = tmp_path / "live"
    copy_build(built, root)
    con = open_published(root / "published")
    before = row_counts(con)
    con.close()
    today = dt.datetime.now(dt.UTC).date()

    result = build(
        root,
        days=(today.isoformat(), today.isoformat()),
        live=True,
        archive_dir=str(tmp_path / "archive"),
        amazon_base_url=f"http://127.0.0.1:{port}",
        ebay_base_url=f"http://localhost:{port}",
        ebay_api_base_url=f"http://localhost:{port}/ebay-api",
        amazon_budget=3,
        ebay_budget=5,
        min_interval_per_host=0.0,
        # Every cloud endpoint points here too: no test may reach the real APIs, even
        # on a machine with credentials in its environment.
        cloud_base_urls={
            provider: f"http://127.0.0.1:{port}/cloud/{provider}" for provider in CLOUD_PROVIDERS
        },
    ).result
    assert result.success

    con = open_published(root / "published")
    try:
        pages = con.sql(
            "SELECT source, outcome, count(*) FROM retail_pages WHERE day = ? GROUP BY ALL "
            "ORDER BY ALL",
            params=[today],
        ).fetchall()
        todays = con.sql(
            "SELECT count(*) FROM price_observations WHERE CAST(observed_at AS DATE) = ?",
            params=[today],
        ).fetchall()[0][0]
        after = row_counts(con)
        status = {
            (source, kind): (state, detail)
            for source, kind, state, detail in con.sql(
                "SELECT source, kind, status, detail FROM source_status"
            ).fetchall()
        }
    finally:
        con.close()
    # Amazon: one captcha, then the circuit breaker skipped the rest (not archived).
    # eBay, through its API: the token request met the 503 storm, so no page was fetched
    # (token POSTs are never archived); after three queries' token requests failed every
    # retry, the breaker cut the API host off and the last two queries asked nothing.
    assert pages == [("amazon", "captcha", 1)]
    assert todays == 0
    assert after["price_observations"] == before["price_observations"]
    assert after["gpu_prices_daily"] == before["gpu_prices_daily"]
    assert after["cloud_offers"] == before["cloud_offers"]
    # Every source that got nothing says so in a few words; the full text is in the log.
    assert status["amazon", "retail"] == ("failed", "0 of 3 pages: captcha page")
    assert status["ebay", "retail"] == (
        "failed",
        "0 of 5 pages: HTTP 503; cut off after 3 failures in a row (HTTP 503)",
    )
    for provider in ("azure", "vast", *API_PROVIDERS):
        assert status[provider, "cloud"] == ("failed", "HTTP 503"), provider
        assert any(h.startswith(f"/cloud/{provider}") for h in Hostile.hits)
    # Providers without a price API (bundled offers only) are skipped without a request.
    for provider in ("coreweave", "hyperstack"):
        assert status[provider, "cloud"][0] == "skipped"
        assert len(status[provider, "cloud"][1]) <= 80
        assert not any(h.startswith(f"/cloud/{provider}") for h in Hostile.hits)
    amazon_hits = [h for h in Hostile.hits if h.startswith("/s?")]
    ebay_hits = [h for h in Hostile.hits if h.startswith("/sch/")]
    token_hits = [h for h in Hostile.hits if h.startswith("/ebay-api/")]
    assert len(amazon_hits) == 1
    assert (ebay_hits, len(token_hits)) == ([], 3 * 5)  # 3 queries x (1 try + 4 retries)
    # The site shows the failed sources as failed, with the short reason and that their last
    # good rows are kept, not a traceback.
    site = (root / "site" / "latest" / "index.html").read_text(encoding="utf-8")
    assert "last attempt failed (0 of 3 pages: captcha page); its rows of" in site
    assert "last attempt failed (HTTP 503)" in site
    assert "last attempt skipped (no public price API" in site
    assert "HTTPConnectionPool" not in site and "Traceback" not in site
