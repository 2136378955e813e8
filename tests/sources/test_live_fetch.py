"""A live night's retail fetch (`fetch_retail`) against a real local server: Amazon and eBay
at the same time, each host still one request at a time; a 503 storm cutting eBay off
after three URLs; a budget below the catalog reported GPU by GPU. No mocks of requests, no
network beyond 127.0.0.1 / localhost, no timing assertions: concurrency is proven by a
barrier both sources' first requests must meet."""

import datetime as dt
import logging
import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from pipeline.defs.ingest.assets import fetch_retail
from pipeline.defs.resources import GpuvalueSettings
from sources.archive import Archive
from sources.bundled import DATA_DIR, read_gpu_specs
from sources.retail.live import tally

EBAY_CREDENTIALS = ("EBAY_CLIENT_ID", "EBAY_CLIENT_SECRET")


class Retail(BaseHTTPRequestHandler):
    """Amazon searches at /s, eBay sold searches at /sch/; optionally an eBay 503 storm."""

    lock = threading.Lock()
    barrier = threading.Barrier(2, timeout=10)
    met: set[str] = set()
    hits: list[tuple[str, str]] = []  # (host, path)
    in_flight: Counter[str] = Counter()
    max_in_flight: Counter[str] = Counter()
    ebay_storm = False

    def do_GET(self):  # noqa: N802 - the stdlib's name
        host = (self.headers.get("Host") or "").split(":")[0]
        kind = "amazon" if self.path.startswith("/s?") else "ebay"
        with Retail.lock:
            Retail.hits.append((host, self.path))
            Retail.in_flight[host] += 1
            Retail.max_in_flight[host] = max(Retail.max_in_flight[host], Retail.in_flight[host])
            first = kind not in Retail.met and not self.path.startswith("/robots.txt")
            if first:
                Retail.met.add(kind)
        try:
            self._answer(kind, first)
        finally:
            with Retail.lock:
                Retail.in_flight[host] -= 1

    def _answer(self, kind: str, first: bool) -> None:
        if self.path.startswith("/robots.txt"):
            return self._send(404, b"")
        if first and not Retail.ebay_storm:
            # Each source's first search waits for the other's: sequential sources would
            # break the barrier and get a 500.
            try:
                Retail.barrier.wait()
            except threading.BrokenBarrierError:
                return self._send(500, b"barrier broken: the sources were not fetched at once")
        if kind == "ebay" and Retail.ebay_storm:
            return self._send(503, b"busy", {"Retry-After": "0"})
        return self._send(200, f"<html><body>results for {self.path}</body></html>".encode())

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def retail_server(monkeypatch):
    for name in EBAY_CREDENTIALS:
        monkeypatch.delenv(name, raising=False)  # scrape eBay, as without an API key
    Retail.barrier = threading.Barrier(2, timeout=10)
    Retail.met, Retail.hits, Retail.ebay_storm = set(), [], False
    Retail.in_flight, Retail.max_in_flight = Counter(), Counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Retail)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    yield server.server_address[1]
    Retail.barrier.abort()
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def catalog(n: int) -> list[dict]:
    rows = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv").select("gpu_id", "name", "vendor")
    return rows.head(n).to_dicts()


def run(port: int, archive: Archive, rows: list[dict], **fields) -> list:
    settings = GpuvalueSettings(
        live=True,
        amazon_base_url=f"http://127.0.0.1:{port}",
        ebay_base_url=f"http://localhost:{port}",
        min_interval_per_host=0.0,
        pages_per_query=1,
        **fields,
    )
    today = dt.datetime.now(dt.UTC).date()
    # fetch_retail only logs through its context; a logger stands in for Dagster's (whose
    # ephemeral instance costs seconds to build) and lets caplog read what was said.
    context = SimpleNamespace(log=logging.getLogger("gpuvalue.test_live_fetch"))
    return fetch_retail(context, settings, archive, today, today, rows)


def test_amazon_and_ebay_are_fetched_at_once_each_host_serially(retail_server, tmp_path):
    archive = Archive(tmp_path / "archive")
    rows = catalog(6)

    fetches = run(retail_server, archive, rows)  # default budgets: the whole catalog

    assert [(f.source, f.status, f.reason) for f in fetches] == [
        ("amazon", "ok", "6 of 6 pages fetched"),
        ("ebay", "ok", "6 of 6 pages fetched"),
    ]
    # Both hosts were busy at once (the barrier), neither ever had two requests at once.
    assert Retail.max_in_flight == {"127.0.0.1": 1, "localhost": 1}
    # Every response reached the archive intact from the two threads, once each.
    day = dt.datetime.now(dt.UTC).date()
    stored = archive.responses(day)
    assert Counter(r.source for r in stored) == {"amazon": 6, "ebay": 6}
    assert len({r.url for r in stored}) == 12
    assert all(r.read().startswith(b"<html>") for r in stored)


def test_a_503_storm_cuts_ebay_off_after_three_urls_and_says_so(retail_server, tmp_path):
    Retail.ebay_storm = True
    rows = catalog(8)

    amazon, ebay = run(retail_server, Archive(tmp_path / "archive"), rows)

    assert (amazon.status, amazon.reason) == ("ok", "8 of 8 pages fetched")
    assert ebay.status == "failed"
    assert ebay.reason == "0 of 8 pages: HTTP 503; cut off after 3 failures in a row (HTTP 503)"
    assert ebay.by_host[f"localhost:{retail_server}"] == {"http_error": 3, "skipped": 5}
    ebay_hits = [path for host, path in Retail.hits if path.startswith("/sch/")]
    assert len(ebay_hits) == 3 * 5  # 3 URLs x (1 try + 4 retries); before: 8 x 5


def test_a_budget_below_the_catalog_names_the_gpus_left_out(retail_server, tmp_path, caplog):
    rows = catalog(7)
    with caplog.at_level(logging.INFO, logger="gpuvalue"):
        amazon, ebay = run(
            retail_server, Archive(tmp_path / "archive"), rows, amazon_budget=4, ebay_budget=None
        )
    assert len(amazon.unsearched) == 3
    assert amazon.reason == "4 of 4 pages fetched; 3 GPUs not searched (budget)"
    assert (ebay.unsearched, ebay.reason) == ((), "7 of 7 pages fetched")
    searched = {path for _, path in Retail.hits if path.startswith("/s?")}
    assert len(searched) == 4
    warning = next(r for r in caplog.records if "not searched:" in r.getMessage())
    assert warning.levelno == logging.WARNING
    warning = warning.getMessage()
    assert "covers 4 of 7 catalog GPUs" in warning
    assert all(gpu_id in warning for gpu_id in amazon.unsearched)


def test_tally_reasons_name_the_cut_off_once():
    storm = "circuit open for h after 3 failed requests in a row (last: HTTP 503 after 5 attempts)"
    fetch = tally(
        "ebay",
        [
            ("h", "ok", None),
            ("h", "http_error", "HTTP 503 after 5 attempts"),
            ("h", "skipped", storm),
        ],
        unsearched=["a100-pcie-40gb"],
    )
    assert fetch.reason == (
        "1 of 3 pages fetched; cut off after 3 failures in a row (HTTP 503); "
        "1 GPUs not searched (budget)"
    )
    # A captcha already names why the host stopped: the reason stays as it was.
    captcha = tally(
        "amazon",
        [
            ("a", "captcha", "captcha page (HTTP 200)"),
            ("a", "skipped", "circuit open for a after captcha at x"),
        ],
    )
    assert captcha.reason == "0 of 2 pages: captcha page"
    # Skipped before anything was asked: the cut-off is the reason, not repeated.
    only = tally("ebay", [("h", "skipped", storm)])
    assert only.reason == "0 of 1 pages: cut off after 3 failures in a row (HTTP 503)"
