"""A live night against a local server that echoes every configured credential (issue 26
item 2): into cloud region fields and instance types, retail titles, listing URLs and
conditions, error bodies, response headers and a redirect URL, in every encoding of
tests/sources/secret_echo.py (raw, either case, percent-encoded in either hex case,
form-encoded, JSON-escaped, HTML entities, base64 alone and inside blobs, MIME-wrapped).

Nothing written may hold any of them: the archive, the warehouse (file bytes and every
text column), the published files (DuckDB, Parquet, CSV), the site, and the logs
(captured stdout/stderr, Python logging, Dagster's events). The echoed fields are set to
NULL (regions) or drop the offer or listing (instance types, titles), with a counted
reason.

Reuses the machinery of test_live_night.py: the bundled build copied, every endpoint on
127.0.0.1 behind the loopback guard.
"""

import datetime as dt
import json
import logging
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import duckdb
import pytest

from pipeline.defs.partitions import CLOUD_PROVIDERS
from tests.conftest import build, copy_build
from tests.paths import FIXTURES_ROOT
from tests.pipeline.test_live_night import loopback_only  # noqa: F401 - a fixture
from tests.sources.secret_echo import SECRETS, echoes, needles
from warehouse.export import open_published

AMAZON_PAGE = FIXTURES_ROOT / "retail" / "amazon" / "search_2024.html"
AZURE_ITEM = json.loads((FIXTURES_ROOT / "cloud" / "azure_page_1.json").read_text())["Items"][0]
# Every echo: (credential, form, text). 9 credentials x 42 forms.
ECHOES = [(name, form, text) for name, v in SECRETS.items() for form, text in echoes(v).items()]
# What must never be found again (the forms, the blobs and their secret-carrying runs).
NEEDLES = needles(SECRETS.values())


def _in_json(text: str) -> str:
    """`text` as the inside of a JSON string: as is when valid there (a JSON-escaped form
    stays escaped, so the parser decodes it into the secret), escaped otherwise."""
    try:
        json.loads(f'"{text}"')
    except ValueError:
        return json.dumps(text)[1:-1]
    return text


def _json_list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


def vast_body() -> bytes:
    offers = [
        f'{{"id": {i}, "machine_id": {i}, "gpu_name": "RTX 4090", "num_gpus": 1, '
        f'"gpu_ram": 24564, "dph_total": 0.5, "min_bid": null, "reliability2": 0.99, '
        f'"rentable": true, "geolocation": "Texas, US, {_in_json(text)}"}}'
        for i, (_, _, text) in enumerate(ECHOES, start=1)
    ]
    return f'{{"offers": {_json_list(offers)}}}'.encode()


def azure_body() -> bytes:
    items = []
    for _, _, text in ECHOES:
        item = json.dumps({**AZURE_ITEM, "armRegionName": "@@"})
        items.append(item.replace('"@@"', f'"{_in_json(text)}"'))
    return f'{{"BillingCurrency": "USD", "Items": {_json_list(items)}, "Count": 1}}'.encode()


def lambda_body() -> bytes:
    types = [
        f'"gpu_1x_a10_{i}": {{"instance_type": {{"name": "gpu_1x_a10 {_in_json(text)}", '
        f'"description": "1x A10 {_in_json(text)}", "gpu_description": "A10 (24 GB PCIe)", '
        '"price_cents_per_hour": 75, "specs": {"vcpus": 30, "memory_gib": 200, '
        '"storage_gib": 1400, "gpus": 1}}, "regions_with_capacity_available": []}'
        for i, (_, _, text) in enumerate(ECHOES)
    ]
    return ('{"data": {' + ", ".join(types) + "}}").encode()


def amazon_body() -> bytes:
    page = AMAZON_PAGE.read_text(encoding="utf-8")
    block = re.search(r'\n  <div role="listitem" data-asin="B0BJFRT43X".*?\n  </div>\n', page, re.S)
    assert block is not None
    title = "VIPERA NVIDIA GeForce RTX 4090 Founders Edition Graphic Card"
    blocks = [
        block[0].replace("B0BJFRT43X", f"B0ECHO{i:04d}").replace(title, f"RTX 4090 {text}")
        for i, (_, _, text) in enumerate(ECHOES)
    ]
    return page.replace(block[0], "".join(blocks)).encode()


def ebay_body() -> bytes:
    items = [
        f'{{"itemId": "v1|{i}|0", "title": "NVIDIA RTX 3090 {_in_json(text)}", '
        f'"price": {{"value": "700.00", "currency": "USD"}}, "condition": "Used {_in_json(text)}", '
        f'"itemWebUrl": "https://www.ebay.com/itm/{i}?echo={_in_json(text)}", '
        '"buyingOptions": ["FIXED_PRICE"]}'
        for i, (_, _, text) in enumerate(ECHOES)
    ]
    return f'{{"total": {len(items)}, "itemSummaries": {_json_list(items)}}}'.encode()


def error_body() -> bytes:
    return ("request rejected; you sent: " + " ".join(t for _, _, t in ECHOES)).encode()


# One header per credential with all its forms (line breaks cannot be in a header; the
# MIME form goes unwrapped); http.client refuses more than 100 headers.
ECHO_HEADERS = {
    f"X-Echo-{name}": " ".join("".join(t.splitlines()) for t in echoes(value).values())
    for name, value in SECRETS.items()
}
BODIES = {
    "/cloud/vast": vast_body,
    "/cloud/azure": azure_body,
    "/cloud/lambda-real": lambda_body,
    "/ebay-api/buy/browse/v1/item_summary/search": ebay_body,
    "/s": amazon_body,
}


class Echo(BaseHTTPRequestHandler):
    paths: list[str] = []

    def do_POST(self):  # noqa: N802 - the stdlib's name
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        if self.path.endswith("/identity/v1/oauth2/token"):
            token = {"access_token": "v^1.1#i^1#echo-token-0123456789", "expires_in": 7200}
            return self._send(200, json.dumps(token).encode())
        self._send(503, error_body())  # AWS, RunPod: an error page that quotes the request

    def do_GET(self):  # noqa: N802 - the stdlib's name
        Echo.paths.append(self.path)
        path = self.path.split("?")[0]
        if path == "/robots.txt":
            return self._send(404, b"")
        if path == "/cloud/lambda":
            # A redirect whose URL carries an echo: the client logs where it was sent.
            query = "&".join(f"e{i}={t}" for i, (_, _, t) in enumerate(ECHOES[:42]))
            return self._send(
                302, b"", {"Location": "/cloud/lambda-real?" + "".join(query.split())}
            )
        make = BODIES.get(path)
        if make is None:
            return self._send(503, error_body())  # GCP and eBay pages
        self._send(200, make(), {"Content-Type": "application/json"})

    def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in {**ECHO_HEADERS, **(headers or {})}.items():
            self.send_header(name, value)
        if status == 503:
            self.send_header("Retry-After", "0")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def echo_server():
    Echo.paths = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    thread.join(timeout=5)


def _file_leaks(folder: Path, patterns: Path) -> list[str]:
    """Files under `folder` holding a needle (GNU grep: fixed strings, all at once)."""
    done = subprocess.run(
        ["grep", "-r", "-l", "-a", "-F", "-f", str(patterns), str(folder)],
        capture_output=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: nothing found
    return [f"file {line}" for line in done.stdout.decode().splitlines()]


def _text_leaks(label: str, text: bytes) -> list[str]:
    return [f"{label}: {needle[:40]!r}" for needle in NEEDLES if needle in text]


def _table_leaks(
    con: duckdb.DuckDBPyConnection, label: str, patterns: Path, scratch: Path
) -> tuple[list[str], int]:
    """Text columns of every table and view holding a needle; and how many were scanned.

    Each column's distinct values go to a file of their own and one GNU grep looks for
    every needle in all of them (a regular expression of every needle, run by DuckDB per
    column, took ~30 s of CPU per warehouse).
    """
    columns = con.sql(
        "SELECT table_name, column_name FROM information_schema.columns "
        "WHERE table_schema = 'main' AND (data_type LIKE '%VARCHAR%' OR data_type LIKE '%JSON%' "
        "OR data_type LIKE '%STRUCT%' OR data_type LIKE '%[]%' OR data_type LIKE '%MAP%')"
    ).fetchall()
    folder = scratch / f"columns-{label}"
    folder.mkdir(parents=True)
    for i, (table, column) in enumerate(columns):
        values = con.sql(
            f'SELECT DISTINCT CAST("{column}" AS VARCHAR) FROM "{table}" '
            f'WHERE "{column}" IS NOT NULL'
        ).fetchall()
        text = "\n".join(value for (value,) in values)
        (folder / f"{i:04d}").write_text(text, encoding="utf-8", errors="surrogateescape")
    named = {f"{i:04d}": f"{table}.{column}" for i, (table, column) in enumerate(columns)}
    files = _file_leaks(folder, patterns)
    return [f"{label} {named[Path(f.split()[-1]).name]}" for f in files], len(columns)


@pytest.mark.slow(seconds=75)
def test_echoed_credentials_reach_nothing_written(
    built,
    tmp_path,
    echo_server,
    loopback_only,  # noqa: F811 - the fixture imported above
    monkeypatch,
    capfd,
    caplog,
):
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    port = echo_server
    root = tmp_path / "live"
    copy_build(built, root)
    today = dt.datetime.now(dt.UTC).date()
    with caplog.at_level(logging.INFO):
        result = build(
            root,
            days=(today.isoformat(), today.isoformat()),
            live=True,
            archive_dir=str(tmp_path / "archive"),
            amazon_base_url=f"http://127.0.0.1:{port}",
            ebay_base_url=f"http://localhost:{port}",
            ebay_api_base_url=f"http://localhost:{port}/ebay-api",
            amazon_budget=2,
            ebay_budget=2,
            min_interval_per_host=0.0,
            cloud_base_urls={p: f"http://127.0.0.1:{port}/cloud/{p}" for p in CLOUD_PROVIDERS},
        ).result
    assert result.success
    captured = capfd.readouterr()
    patterns = tmp_path / "needles.txt"
    patterns.write_bytes(b"\n".join(NEEDLES) + b"\n")

    # The echoes were served and parsed: every cloud offer kept its price, lost its
    # region; every echoed title dropped its listing.
    con = duckdb.connect(str(root / "gpuvalue.duckdb"), read_only=True)
    try:
        regions = dict(
            con.sql(
                "SELECT provider, count(*) FILTER (region IS NOT NULL) FROM cloud_offers "
                "WHERE CAST(observed_at AS DATE) = ? AND provider IN ('vast', 'azure') "
                "GROUP BY ALL",
                params=[today],
            ).fetchall()
        )
        status = dict(con.sql("SELECT source, detail FROM source_status").fetchall())
        titles = dict(
            con.sql(
                "SELECT source, count(*) FROM price_observations WHERE "
                "CAST(observed_at AS DATE) = ? AND drop_reason LIKE 'bad_title:%' GROUP BY ALL",
                params=[today],
            ).fetchall()
        )
        leaks, columns = _table_leaks(con, "warehouse", patterns, tmp_path)
    finally:
        con.close()
    assert regions == {"vast": 0, "azure": 0}, regions
    assert "region:redacted" in status["vast"] and "region:redacted" in status["azure"]
    assert "instance_type:redacted" in status["lambda"]
    assert titles.get("amazon", 0) >= len(ECHOES) and titles.get("ebay", 0) >= len(ECHOES)
    assert any(p.startswith("/cloud/lambda-real?") for p in Echo.paths)

    published = open_published(root / "published")
    try:
        more, published_columns = _table_leaks(published, "published", patterns, tmp_path)
    finally:
        published.close()
    leaks += more
    # The scanners find what they look for: an unredacted echo in a file and in a table.
    control = tmp_path / "control"
    control.mkdir()
    (control / "body.json").write_bytes(vast_body())
    assert _file_leaks(control, patterns)
    scratch = duckdb.connect()
    scratch.sql("CREATE TABLE t AS SELECT ? AS s", params=[f"x {ECHOES[-1][2]} y"])
    assert _table_leaks(scratch, "control", patterns, tmp_path)[0]
    scratch.close()
    for folder in (tmp_path / "archive", root):  # root: warehouse, releases, site, build
        leaks += _file_leaks(folder, patterns)
    events = "\n".join(str(event) for event in result.all_events).encode()
    leaks += _text_leaks("stdout", captured.out.encode())
    leaks += _text_leaks("stderr", captured.err.encode())
    leaks += _text_leaks("logging", caplog.text.encode())
    leaks += _text_leaks("dagster events", events)
    assert not leaks, leaks
    files = sum(1 for _ in root.rglob("*")) + sum(1 for _ in (tmp_path / "archive").rglob("*"))
    print(
        f"\nsecret echo night: {len(ECHOES)} echoes x (vast regions, azure regions, lambda "
        f"types, Amazon titles, eBay titles/conditions/URLs, error bodies, headers); "
        f"{len(NEEDLES)} needles, {columns + published_columns} text columns, {files} files, "
        f"{len(result.all_events)} Dagster events: 0 leaks"
    )
