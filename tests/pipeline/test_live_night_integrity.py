"""Issue 26 H1: a live night where RunPod prices an H100 at $0.0001/GPU-h.

Before integrity it became the #1 rent pick in every budget and memory tier at P(best)
100 %, shown "$0.00/GPU-h". Now the offer is quarantined with its reason and published
nowhere as an offer (cloud tables, rent picks, site); the run publishes the rest and the
input report and the provider's status say why. Then a second night whose RunPod answer
contradicts itself (one GPU type twice at two prices) is refused: the run fails and the
first night's release stays published (issue 26 item 1, "a run whose inputs fail
integrity exits non-zero and leaves the previous release published").

One local server answers RunPod's GraphQL; every other endpoint answers 503 (as in
tests/pipeline/test_live_night.py, whose guard against non-loopback traffic is reused).
Only RunPod's key is set, so AWS, GCP and Lambda are skipped without a request.
"""

import datetime as dt
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import duckdb
import pytest

from pipeline.defs.partitions import CLOUD_PROVIDERS
from tests.conftest import build, copy_build
from tests.pipeline.test_live_night import loopback_only  # noqa: F401 - a fixture
from warehouse.export import open_published

H100 = {"id": "NVIDIA H100 80GB HBM3", "displayName": "H100 SXM", "memoryInGb": 80}
GPU_TYPES = [
    # The H1 answer: $0.0001 per GPU-hour on RunPod's secure cloud.
    {**H100, "securePrice": 0.0001, "communityPrice": 2.69, "secureSpotPrice": 1.75},
    {
        "id": "NVIDIA GeForce RTX 4090",
        "memoryInGb": 24,
        "securePrice": 0.69,
        "communityPrice": 0.34,
    },
    {"id": "NVIDIA GeForce RTX 3070", "memoryInGb": 8, "communityPrice": 0.13},
    {"id": "NVIDIA RTX A6000", "memoryInGb": 48, "securePrice": 0.49},
    {"id": "NVIDIA L40S", "memoryInGb": 48, "securePrice": 0.86},
    {"id": "NVIDIA RTX 5000 Ada Generation", "memoryInGb": 32, "securePrice": 0.83},
]
# The second night: the RTX 4090 listed twice at two prices (a conflicting duplicate).
CONFLICTING = [*GPU_TYPES[1:], {**GPU_TYPES[1], "securePrice": 0.39}]


class RunPodOnly(BaseHTTPRequestHandler):
    answer: list[dict] = GPU_TYPES

    def do_POST(self):  # noqa: N802 - the stdlib's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith("/cloud/runpod"):
            body = json.dumps({"data": {"gpuTypes": RunPodOnly.answer}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.do_GET()

    def do_GET(self):  # noqa: N802 - the stdlib's name
        self.send_response(404 if self.path.startswith("/robots.txt") else 503)
        self.send_header("Retry-After", "0")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def runpod_server():
    RunPodOnly.answer = GPU_TYPES
    server = ThreadingHTTPServer(("127.0.0.1", 0), RunPodOnly)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    thread.join(timeout=5)


def _night(root, tmp_path, port):
    today = dt.datetime.now(dt.UTC).date().isoformat()
    return build(
        root,
        days=(today, today),
        live=True,
        archive_dir=str(tmp_path / "archive"),
        amazon_base_url=f"http://127.0.0.1:{port}",
        ebay_base_url=f"http://127.0.0.1:{port}",
        ebay_api_base_url=f"http://127.0.0.1:{port}/ebay-api",
        amazon_budget=1,
        ebay_budget=1,
        min_interval_per_host=0.0,
        cloud_base_urls={p: f"http://127.0.0.1:{port}/cloud/{p}" for p in CLOUD_PROVIDERS},
    ).result


def _published(root, sql: str):
    con = open_published(root / "published")
    try:
        return con.sql(sql).fetchall()
    finally:
        con.close()


@pytest.mark.slow(seconds=110)
def test_h1_tiny_h100_price_is_quarantined_and_a_refused_night_keeps_the_release(
    built,
    tmp_path,
    runpod_server,
    loopback_only,  # noqa: F811 - the fixture imported above
    monkeypatch,
):
    for name in ("AWS_ACCESS_KEY_ID", "GCP_API_KEY", "LAMBDA_API_KEY", "EBAY_CLIENT_ID"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("RUNPOD_API_KEY", "runpod-api-key-h1")
    root = tmp_path / "live"
    copy_build(built, root)
    assert _night(root, tmp_path, runpod_server).success

    # Nowhere as an offer: no cloud table, rent pick or verdict carries the price.
    for table in ("cloud_offers", "cloud_perf_per_dollar", "cloud_vs_buy", "verdicts"):
        assert _published(root, f"SELECT count(*) FROM {table} WHERE usd_per_gpu_hour < 0.01") == [
            (0,)
        ], table
    live = _published(
        root,
        "SELECT gpu_id, price_type, usd_per_gpu_hour FROM cloud_offers WHERE provider = 'runpod'"
        " AND citation LIKE '%live%' ORDER BY ALL",
    )
    assert ("h100-sxm5-80gb", "on_demand", 2.69) in live  # the community price is kept
    assert ("h100-sxm5-80gb", "spot", 1.75) in live  # its spot is judged on a sane list
    assert len(live) == 8  # 9 offers, 1 quarantined
    # Quarantined, with its reason, in the published warehouse.
    [(rule, reason)] = _published(
        root, "SELECT rule, reason FROM cloud_quarantine WHERE provider = 'runpod'"
    )
    assert rule == "gpu_band"
    assert "$0.0001/GPU-h is outside h100-sxm5-80gb's plausible band" in reason
    assert "the other providers' on_demand median for h100-sxm5-80gb" in reason
    # The run says why: the provider's status, and the input report on the site.
    status = _published(root, "SELECT status, detail FROM source_status WHERE source = 'runpod'")
    assert status[0][0] == "ok" and "1 quarantined (gpu_band: 1)" in status[0][1]
    site = root / "site" / "latest"
    tables = (site / "tables.html").read_text(encoding="utf-8")
    assert "Cloud offers: quarantined before publish" in tables
    assert "$0.0001" in tables and "gpu_band" in tables
    front = (site / "index.html").read_text(encoding="utf-8")
    assert "$0.00/GPU-h" not in front and "$0.00 per GPU-hour" not in front
    first_release = (root / "site" / "latest").resolve()
    offers_before = _published(root, "SELECT count(*) FROM cloud_offers")

    # Night 2: RunPod contradicts itself; its night is refused and nothing is published.
    RunPodOnly.answer = CONFLICTING
    result = _night(root, tmp_path, runpod_server)
    assert not result.success
    failed = [e.step_key for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert any("cloud_offers_pass_integrity" in key for key in failed), failed
    assert (root / "site" / "latest").resolve() == first_release
    assert _published(root, "SELECT count(*) FROM cloud_offers") == offers_before
    # The working warehouse records the refusal (the published one is the first night's).
    con = duckdb.connect(str(root / "gpuvalue.duckdb"), read_only=True)
    try:
        [(state, detail)] = con.sql(
            "SELECT status, detail FROM source_status WHERE source = 'runpod'"
        ).fetchall()
    finally:
        con.close()
    assert state == "rejected" and detail.startswith("integrity: 1 conflicting duplicate")
