"""A live night against a local server: Amazon answers with a captcha, eBay with a 503
storm. The run must record both, write no price rows from them, erase nothing, and still
publish. Only 127.0.0.1 / localhost are contacted; every loop is bounded."""

import datetime as dt
import os
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pipeline.defs.partitions import CLOUD_PROVIDERS
from tests.conftest import build
from warehouse.db import row_counts
from warehouse.publish import open_published

CAPTCHA = Path(__file__).parent / "fixtures" / "retail" / "amazon" / "captcha_classic.html"


class Hostile(BaseHTTPRequestHandler):
    hits: list[str] = []

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


@pytest.fixture
def hostile_server():
    Hostile.hits = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hostile)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    thread.join(timeout=5)


def test_blocked_live_night_writes_no_prices_and_still_publishes(built, tmp_path, hostile_server):
    port = hostile_server
    root = tmp_path / "live"
    shutil.copytree(built.root, root)
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
        amazon_budget=3,
        ebay_budget=2,
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
        # Amazon: one captcha, then the circuit breaker skipped the rest (not archived).
        # eBay: every page ended in http_error after bounded retries.
        assert pages == [("amazon", "captcha", 1), ("ebay", "http_error", 2)]
        todays = con.sql(
            "SELECT count(*) FROM price_observations WHERE CAST(observed_at AS DATE) = ?",
            params=[today],
        ).fetchall()[0][0]
        assert todays == 0
        after = row_counts(con)
    finally:
        con.close()
    assert after["price_observations"] == before["price_observations"]
    assert after["gpu_prices_daily"] == before["gpu_prices_daily"]
    # Cloud: providers without credentials are skipped (no request); the public ones
    # (Azure, vast.ai) met a 503 storm and failed alone, keeping their last offers.
    con = open_published(root / "published")
    try:
        status = dict(con.sql("SELECT source, status FROM source_status").fetchall())
        cloud_after = row_counts(con)["cloud_offers"]
    finally:
        con.close()
    assert status["azure"] == "failed" and status["vast"] == "failed"
    # Providers without a price API (bundled offers only) are skipped without a request.
    for provider in ("coreweave", "hyperstack"):
        assert status[provider] == "skipped"
        assert not any(h.startswith(f"/cloud/{provider}") for h in Hostile.hits)
    assert cloud_after == before["cloud_offers"]
    # Providers whose credentials are absent are skipped without a request.
    credentials = {
        "aws": "AWS_ACCESS_KEY_ID",
        "gcp": "GCP_API_KEY",
        "lambda": "LAMBDA_API_KEY",
        "runpod": "RUNPOD_API_KEY",
    }
    for provider, variable in credentials.items():
        if not os.environ.get(variable, "").strip():
            assert status[provider] == "skipped"
            assert not any(h.startswith(f"/cloud/{provider}") for h in Hostile.hits)
    amazon_hits = [h for h in Hostile.hits if h.startswith("/s?")]
    ebay_hits = [h for h in Hostile.hits if h.startswith("/sch/")]
    assert len(amazon_hits) == 1
    assert len(ebay_hits) == 2 * 5  # 1 try + 4 retries each, then give up
