"""The official retail API: eBay Browse (OAuth).

The parser runs on fixtures written from the documented response formats; the client runs
against a local HTTP server on 127.0.0.1 that plays the token and search endpoints.
Nothing here touches the network beyond 127.0.0.1. (Amazon's PA-API 5 was retired in
2026-05; Amazon live prices come from its pages only.)
"""

import base64
import datetime as dt
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sources.archive import Archive
from sources.http import PoliteClient
from sources.retail import ebay_api
from sources.retail.ebay_api import (
    Credentials,
    EbayBrowseClient,
    TokenCache,
    credentials_from_env,
    parse_browse_search,
)
from sources.retail.records import Outcome
from tests.paths import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "retail" / "api"

CLIENT_ID = "gpuvalue-app-PRD-0123456789"
CLIENT_SECRET = "PRD-s3cr3t-client-secret-do-not-leak"


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def by_id(result) -> dict:
    return {record.listing_id: record for record in result.records}


# --- eBay parsing ----------------------------------------------------------------------------


def test_ebay_fixed_price_with_cheapest_shipping():
    result = parse_browse_search(load("ebay_browse_search_page1.json"))
    assert result.outcome == Outcome.OK and result.page_kind == "search"
    record = by_id(result)["v1|110000000001|0"]
    assert record.source == "ebay"
    assert record.title == "NVIDIA GeForce RTX 3060 12GB GDDR6 Graphics Card"
    assert (record.price, record.currency, record.shipping) == (249.99, "USD", 9.95)
    assert record.condition == "Used"
    assert record.sold is None and record.sold_date is None  # active listing, not a sale
    assert record.url == "https://www.ebay.com/itm/110000000001"
    assert record.extra["api"] == "browse"
    assert record.extra["buying_options"] == "FIXED_PRICE"
    assert record.extra["price_kind"] == "asking"
    assert record.extra["condition_id"] == "3000"


def test_ebay_auction_uses_the_current_bid_and_free_shipping_is_zero():
    record = by_id(parse_browse_search(load("ebay_browse_search_page1.json")))["v1|110000000002|0"]
    assert record.price == 151.00 and record.currency == "USD"
    assert record.extra["price_kind"] == "current_bid"
    assert record.extra["buying_options"] == "AUCTION"
    assert record.extra["bid_count"] == "7"
    assert record.extra["item_end_date"] == "2026-11-23T18:04:11.000Z"
    assert record.shipping == 0.0


def test_ebay_best_offer_keeps_the_asking_price():
    record = by_id(parse_browse_search(load("ebay_browse_search_page1.json")))["v1|110000000003|0"]
    assert record.price == 265.00
    assert record.extra["buying_options"] == "FIXED_PRICE,BEST_OFFER"
    assert record.best_offer_accepted is False
    assert record.condition == "Open box" and record.shipping is None


def test_ebay_missing_and_zero_price_are_none_with_a_reason():
    records = by_id(parse_browse_search(load("ebay_browse_search_page1.json")))
    missing, zero = records["v1|110000000004|0"], records["v1|110000000005|0"]
    assert missing.price is None and missing.price_missing_reason == "no price"
    assert zero.price is None and zero.price_missing_reason == "zero price"


def test_ebay_non_usd_keeps_its_currency_and_refuses_mixed_currency_shipping():
    record = by_id(parse_browse_search(load("ebay_browse_search_page1.json")))["v1|110000000006|0"]
    assert (record.price, record.currency) == (229.00, "EUR")
    assert record.extra["converted_from"] == "229.00 EUR"
    assert record.shipping is None and record.extra["shipping"] == "25.00 USD"


def test_ebay_summary_without_title_is_dropped_and_counted():
    result = parse_browse_search(load("ebay_browse_search_page1.json"))
    assert len(result.records) == 6
    assert result.dropped == {"no title": 1}


def test_ebay_empty_error_and_garbage_payloads():
    assert parse_browse_search(load("ebay_browse_search_empty.json")).outcome == Outcome.EMPTY
    error = parse_browse_search(load("ebay_browse_error_401.json"))
    assert error.outcome == Outcome.HTTP_ERROR and "1001" in error.detail
    assert parse_browse_search({"hello": 1}).outcome == Outcome.PARSE_ERROR
    assert parse_browse_search([]).outcome == Outcome.PARSE_ERROR  # type: ignore[arg-type]
    assert parse_browse_search({"itemSummaries": {}}).outcome == Outcome.PARSE_ERROR
    unreadable = parse_browse_search({"itemSummaries": [1, {"itemId": "x"}]})
    assert unreadable.outcome == Outcome.PARSE_ERROR
    assert unreadable.dropped == {"unreadable": 1, "no title": 1}
    odd = parse_browse_search(
        {"itemSummaries": [{"title": "RTX", "price": {"value": "n/a", "currency": "USD"}}]}
    )
    assert odd.records[0].price is None
    assert odd.records[0].price_missing_reason == "unreadable price"


# --- credentials -----------------------------------------------------------------------------


def test_credentials_from_env_and_hidden_reprs():
    assert credentials_from_env({}) is None
    assert credentials_from_env({"EBAY_CLIENT_ID": "x", "EBAY_CLIENT_SECRET": " "}) is None
    creds = credentials_from_env({"EBAY_CLIENT_ID": CLIENT_ID, "EBAY_CLIENT_SECRET": CLIENT_SECRET})
    assert creds == Credentials(CLIENT_ID, CLIENT_SECRET)
    assert CLIENT_SECRET not in repr(creds) and CLIENT_ID not in repr(creds)
    http = PoliteClient(respect_robots=False)
    try:
        assert ebay_api.client_from_env(http, {}) is None
        ebay = ebay_api.client_from_env(
            http, {"EBAY_CLIENT_ID": CLIENT_ID, "EBAY_CLIENT_SECRET": CLIENT_SECRET}
        )
        assert ebay is not None and CLIENT_SECRET not in repr(ebay)
    finally:
        http.close()


def test_token_cache_renews_60_seconds_before_expiry():
    now = [1000.0]
    cache = TokenCache(clock=lambda: now[0])
    issued = iter(["t1", "t2", "t3"])

    def fetch():
        return next(issued), 7200

    assert cache.get(fetch) == "t1"
    now[0] += 7139
    assert cache.get(fetch) == "t1"
    now[0] += 1
    assert cache.get(fetch) == "t2"
    cache.invalidate("stale")  # someone else's token: no effect
    assert cache.get(fetch) == "t2"
    cache.invalidate("t2")
    assert cache.get(fetch) == "t3"
    assert "t3" not in repr(cache)


# --- a local API server ----------------------------------------------------------------------


class FakeApis:
    """eBay token + Browse search on 127.0.0.1."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.token_requests: list[dict] = []
        self.searches: list[dict] = []
        self.valid_tokens: set[str] = set()
        self.expires_in = 7200
        self.revoke_next_valid = 0  # answer 401 to this many searches with a valid token
        self.search_status = 200
        self.search_body: bytes | None = None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        apis = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                path = urlsplit(self.path).path
                if path == ebay_api.TOKEN_PATH:
                    self._token(body)
                else:
                    self._send(404, b"{}")

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != ebay_api.SEARCH_PATH:
                    self._send(404, b"{}")
                    return
                auth = self.headers.get("Authorization", "")
                token = auth.removeprefix("Bearer ")
                query = parse_qs(parts.query)
                with apis.lock:
                    apis.searches.append(
                        {
                            "token": token,
                            "query": query,
                            "marketplace": self.headers.get("X-EBAY-C-MARKETPLACE-ID"),
                        }
                    )
                    valid = token in apis.valid_tokens
                    if valid and apis.revoke_next_valid > 0:
                        apis.revoke_next_valid -= 1
                        valid = False
                if not valid:
                    self._send(401, (FIXTURES / "ebay_browse_error_401.json").read_bytes())
                    return
                if apis.search_body is not None:
                    self._send(apis.search_status, apis.search_body)
                    return
                if query.get("offset") == ["200"]:
                    self._send(200, (FIXTURES / "ebay_browse_search_page2.json").read_bytes())
                    return
                page = load("ebay_browse_search_page1.json")
                page["next"] = page["next"].replace("https://api.ebay.com", apis.base)
                self._send(200, json.dumps(page).encode())

            def _token(self, body: bytes) -> None:
                auth = self.headers.get("Authorization", "")
                expected = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                form = parse_qs(body.decode())
                with apis.lock:
                    apis.token_requests.append({"auth": auth, "form": form})
                    if auth != f"Basic {expected}":
                        self._send(401, b'{"error":"invalid_client"}')
                        return
                    token = f"v^1.1#i^1#TOKEN-{len(apis.token_requests)}-secret-bearer"
                    apis.valid_tokens.add(token)
                    reply = {
                        "access_token": token,
                        "expires_in": apis.expires_in,
                        "token_type": "Application Access Token",
                    }
                self._send(200, json.dumps(reply).encode())

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        return Handler


@pytest.fixture
def apis():
    server = FakeApis()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture
def http(tmp_path):
    client = PoliteClient(
        archive=Archive(tmp_path / "archive"),
        min_interval_per_host=0.0,
        respect_robots=False,
        max_retries=1,
        sleep=lambda seconds: None,
    )
    yield client
    client.close()


def archived_text(root: Path) -> str:
    return "\n".join(
        path.read_bytes().decode("utf-8", "replace") for path in root.rglob("*") if path.is_file()
    )


def ebay_client(http, apis, now) -> EbayBrowseClient:
    return EbayBrowseClient(
        http, Credentials(CLIENT_ID, CLIENT_SECRET), clock=lambda: now[0], base_url=apis.base
    )


def test_ebay_token_is_cached_across_searches_and_never_archived_or_logged(
    apis, http, tmp_path, caplog
):
    caplog.set_level(logging.DEBUG)
    now = [1_000_000.0]
    client = ebay_client(http, apis, now)
    first = client.search("RTX 3060 12GB")
    second = client.search("RTX 3090")
    assert [r.outcome for r in first + second] == [Outcome.OK, Outcome.OK]
    assert len(first[0].records) == 6
    assert len(apis.token_requests) == 1
    token_request = apis.token_requests[0]
    assert token_request["form"] == {
        "grant_type": ["client_credentials"],
        "scope": ["https://api.ebay.com/oauth/api_scope"],
    }
    assert [s["marketplace"] for s in apis.searches] == ["EBAY_US", "EBAY_US"]
    query = apis.searches[0]["query"]
    assert query["q"] == ["RTX 3060 12GB"] and query["category_ids"] == ["27386"]
    assert query["limit"] == ["200"]
    assert query["filter"] == ["buyingOptions:{FIXED_PRICE|AUCTION|BEST_OFFER}"]

    token = apis.searches[0]["token"]
    archive = archived_text(tmp_path / "archive")
    assert "itemSummaries" in archive  # search responses are archived...
    for secret in (token, CLIENT_SECRET, "TOKEN-1"):  # ...token and secret are not
        assert secret not in archive
        assert secret not in caplog.text
        assert all(secret not in r.detail for r in first + second)
    entries = Archive(tmp_path / "archive").responses(dt.datetime.now(dt.UTC).date())
    assert {e.source for e in entries} == {"ebay_api"}
    assert all("oauth2" not in e.url for e in entries)


def test_ebay_token_is_renewed_after_expiry(apis, http):
    now = [1_000_000.0]
    apis.expires_in = 7200
    client = ebay_client(http, apis, now)
    client.search("RTX 3060")
    now[0] += 7100  # within the token's life, more than 60 s before expiry
    client.search("RTX 3060")
    assert len(apis.token_requests) == 1
    now[0] += 100  # 60 s before expiry has passed
    client.search("RTX 3060")
    assert len(apis.token_requests) == 2
    assert apis.searches[-1]["token"] != apis.searches[0]["token"]


def test_ebay_401_renews_the_token_once_and_retries(apis, http):
    now = [1_000_000.0]
    client = ebay_client(http, apis, now)
    apis.revoke_next_valid = 1
    results = client.search("RTX 3060")
    assert [r.outcome for r in results] == [Outcome.OK]
    assert len(apis.token_requests) == 2
    assert len(apis.searches) == 2
    assert apis.searches[0]["token"] != apis.searches[1]["token"]


def test_ebay_persistent_401_is_an_http_error_after_one_retry(apis, http, caplog):
    now = [1_000_000.0]
    client = ebay_client(http, apis, now)
    apis.revoke_next_valid = 5
    results = client.search("RTX 3060")
    assert [r.outcome for r in results] == [Outcome.HTTP_ERROR]
    assert "401" in results[0].detail
    assert len(apis.token_requests) == 2 and len(apis.searches) == 2
    assert CLIENT_SECRET not in caplog.text


def test_ebay_bad_credentials_are_an_http_error_without_the_secret(apis, http, caplog):
    caplog.set_level(logging.DEBUG)
    client = EbayBrowseClient(
        http, Credentials(CLIENT_ID, "wrong-secret-xyz"), clock=lambda: 0.0, base_url=apis.base
    )
    results = client.search("RTX 3060")
    assert [r.outcome for r in results] == [Outcome.HTTP_ERROR]
    assert "token" in results[0].detail and "wrong-secret-xyz" not in results[0].detail
    assert "wrong-secret-xyz" not in caplog.text
    assert apis.searches == []


def test_ebay_pagination_follows_next_up_to_max_pages(apis, http):
    now = [1_000_000.0]
    client = ebay_client(http, apis, now)
    one = client.search("RTX 3060 12GB", max_pages=1)
    assert len(one) == 1 and len(apis.searches) == 1
    pages = client.search("RTX 3060 12GB", max_pages=5)
    assert [len(p.records) for p in pages] == [6, 1]  # page 2 has no next link
    assert apis.searches[-1]["query"]["offset"] == ["200"]
    assert len(apis.token_requests) == 1


def test_ebay_next_link_to_another_host_is_not_followed(apis, http):
    page = load("ebay_browse_search_page1.json")  # next points at api.ebay.com, not us
    apis.search_body = json.dumps(page).encode()
    client = ebay_client(http, apis, [0.0])
    pages = client.search("RTX 3060 12GB", max_pages=3)
    assert len(pages) == 1 and len(apis.searches) == 1


def test_ebay_malformed_json_is_a_parse_error(apis, http):
    apis.search_body = b'{"itemSummaries": [ {"itemId": '
    results = ebay_client(http, apis, [0.0]).search("RTX 3060")
    assert [r.outcome for r in results] == [Outcome.PARSE_ERROR]
    assert "malformed JSON" in results[0].detail


def test_ebay_server_error_after_retries_is_an_http_error(apis, http):
    apis.search_status, apis.search_body = 503, b'{"errors": []}'
    results = ebay_client(http, apis, [0.0]).search("RTX 3060")
    assert [r.outcome for r in results] == [Outcome.HTTP_ERROR]
    assert len(apis.searches) == 2  # PoliteClient retried once (max_retries=1)


# --- Amazon client ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 100_000 + b"]" * 100_000,
        b'{"itemSummaries": [{"itemId": "v1|1|0", "title": "RTX 4090", '
        b'"price": {"value": "1e308", "currency": "USD"}}]}',
        b'{"itemSummaries": [{"itemId": "v1|1|0", "title": "RTX 4090", '
        b'"price": {"value": "Infinity", "currency": "USD"}}]}',
    ],
)
def test_hostile_api_bodies_are_outcomes_without_non_finite_prices(body):
    from sources.retail.ingest import PARSERS

    result = PARSERS[ebay_api.ARCHIVE_SOURCE](body, None, None)
    for record in result.records:
        assert record.price is None
