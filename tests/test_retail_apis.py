"""Official retail APIs: eBay Browse (OAuth) and Amazon PA-API 5 (SigV4).

Parsers run on fixtures written from the documented response formats; the clients run
against a local HTTP server on 127.0.0.1 that plays the token, search and SearchItems
endpoints. Nothing here touches the network beyond 127.0.0.1.
"""

import base64
import datetime as dt
import hashlib
import hmac
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from sources.archive import Archive
from sources.http import PoliteClient
from sources.retail import amazon_api, ebay_api
from sources.retail.amazon_api import (
    AmazonCredentials,
    AmazonProductClient,
    parse_search_items,
    sign_request,
)
from sources.retail.ebay_api import (
    Credentials,
    EbayBrowseClient,
    TokenCache,
    credentials_from_env,
    parse_browse_search,
)
from sources.retail.records import Outcome

FIXTURES = Path(__file__).parent / "fixtures" / "retail" / "api"

CLIENT_ID = "gpuvalue-app-PRD-0123456789"
CLIENT_SECRET = "PRD-s3cr3t-client-secret-do-not-leak"
ACCESS_KEY = "AKIAPAAPIEXAMPLE0001"
SECRET_KEY = "paapi/secret+key/DO-NOT-LEAK/0123456789abc"
PARTNER_TAG = "gpuvalue-20"


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


# --- Amazon parsing --------------------------------------------------------------------------


def test_amazon_items_with_offers():
    result = parse_search_items(load("paapi5_searchitems_offers.json"))
    assert result.outcome == Outcome.OK and len(result.records) == 3
    records = by_id(result)
    msi = records["B08W8DGK3X"]
    assert msi.source == "amazon"
    assert msi.title.startswith("MSI Gaming GeForce RTX 3060 12GB")
    assert (msi.price, msi.currency, msi.condition) == (279.99, "USD", "New")
    assert msi.url == "https://www.amazon.com/dp/B08W8DGK3X"
    assert msi.extra["detail_page_url"].startswith("https://www.amazon.com/dp/B08W8DGK3X?")
    assert msi.extra["display_amount"] == "$279.99"
    assert msi.extra["api"] == "paapi5" and msi.extra["offers"] == "v1"
    used = records["B0985ZQ9YB"]
    assert (used.price, used.condition, used.extra["sub_condition"]) == (
        215.5,
        "Used",
        "VeryGood",
    )
    v2 = records["B09ABCDEF1"]
    assert (v2.price, v2.currency, v2.extra["offers"]) == (299.0, "USD", "v2")


def test_amazon_items_without_offers_or_with_zero_price():
    result = parse_search_items(load("paapi5_searchitems_no_offers.json"))
    assert result.outcome == Outcome.OK
    records = by_id(result)
    assert records["B0BZ1234XY"].price is None
    assert records["B0BZ1234XY"].price_missing_reason == "no offer"
    assert records["B0BZ9999ZZ"].price is None
    assert records["B0BZ9999ZZ"].price_missing_reason == "zero price"
    assert records["B0BZ9999ZZ"].condition == "Refurbished"


@pytest.mark.parametrize(
    ("name", "outcome", "code"),
    [
        ("paapi5_errors_throttled.json", Outcome.HTTP_ERROR, "TooManyRequests"),
        ("paapi5_errors_signature.json", Outcome.HTTP_ERROR, "InvalidSignature"),
        ("paapi5_errors_no_results.json", Outcome.EMPTY, "NoResults"),
    ],
)
def test_amazon_errors_payloads(name, outcome, code):
    result = parse_search_items(load(name))
    assert result.outcome == outcome
    assert code in result.detail
    assert result.records == ()


def test_amazon_garbage_payloads():
    assert parse_search_items({"Errors": "nope"}).outcome == Outcome.PARSE_ERROR
    assert parse_search_items({"foo": 1}).outcome == Outcome.PARSE_ERROR
    assert parse_search_items("x").outcome == Outcome.PARSE_ERROR  # type: ignore[arg-type]
    assert parse_search_items({"SearchResult": {"Items": {}}}).outcome == Outcome.PARSE_ERROR
    assert parse_search_items({"SearchResult": {}}).outcome == Outcome.EMPTY


# --- SigV4 -----------------------------------------------------------------------------------


def test_sigv4_reproduces_the_published_aws_example():
    # AWS's documented example: GET iam ListUsers, 2015-08-30 12:36:00 UTC.
    headers = {
        "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
        "Host": "iam.amazonaws.com",
        "X-Amz-Date": "20150830T123600Z",
    }
    url = "https://iam.amazonaws.com/?Version=2010-05-08&Action=ListUsers"  # order-agnostic
    canonical, signed = amazon_api.canonical_request("GET", url, headers, b"")
    assert signed == "content-type;host;x-amz-date"
    assert (
        hashlib.sha256(canonical.encode()).hexdigest()
        == "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59"
    )
    out = sign_request(
        "GET",
        url,
        headers,
        b"",
        "AKIDEXAMPLE",
        "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
        "us-east-1",
        "iam",
        dt.datetime(2015, 8, 30, 12, 36, 0, tzinfo=dt.UTC),
    )
    assert out["Authorization"] == (
        "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, "
        "SignedHeaders=content-type;host;x-amz-date, "
        "Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
    )


def _independent_sigv4(body: bytes, amz_date: str, secret: str) -> str:
    """The SigV4 steps for a PA-API SearchItems POST, written out from the spec."""
    date = amz_date[:8]
    canonical_headers = (
        "content-encoding:amz-1.0\n"
        "content-type:application/json; charset=utf-8\n"
        "host:webservices.amazon.com\n"
        f"x-amz-date:{amz_date}\n"
        "x-amz-target:com.amazon.paapi5.v1.ProductAdvertisingAPIv1.SearchItems\n"
    )
    signed = "content-encoding;content-type;host;x-amz-date;x-amz-target"
    canonical = "\n".join(
        [
            "POST",
            "/paapi5/searchitems",
            "",
            canonical_headers,
            signed,
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{date}/us-east-1/ProductAdvertisingAPI/aws4_request"
    to_sign = "\n".join(
        ["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()]
    )
    key = ("AWS4" + secret).encode()
    for part in (date, "us-east-1", "ProductAdvertisingAPI", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def test_sigv4_paapi_request_matches_the_spec_steps():
    body = b'{"Keywords":"RTX 3060 12GB","SearchIndex":"Electronics"}'
    headers = {
        "content-encoding": "amz-1.0",
        "content-type": "application/json; charset=utf-8",
        "host": "webservices.amazon.com",
        "x-amz-target": amazon_api.TARGET,
    }
    now = dt.datetime(2026, 4, 13, 8, 5, 9, tzinfo=dt.UTC)
    out = sign_request(
        "POST",
        "https://webservices.amazon.com/paapi5/searchitems",
        headers,
        body,
        ACCESS_KEY,
        SECRET_KEY,
        "us-east-1",
        "ProductAdvertisingAPI",
        now,
    )
    expected = _independent_sigv4(body, "20260413T080509Z", SECRET_KEY)
    assert out["x-amz-date"] == "20260413T080509Z"
    assert out["Authorization"] == (
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/20260413/us-east-1/ProductAdvertisingAPI/"
        "aws4_request, SignedHeaders=content-encoding;content-type;host;x-amz-date;x-amz-target, "
        f"Signature={expected}"
    )
    with pytest.raises(ValueError):
        sign_request("GET", "https://x/", {}, b"", "a", "b", "r", "s", dt.datetime(2026, 1, 1))


# --- credentials -----------------------------------------------------------------------------


def test_credentials_from_env_and_hidden_reprs():
    assert credentials_from_env({}) is None
    assert credentials_from_env({"EBAY_CLIENT_ID": "x", "EBAY_CLIENT_SECRET": " "}) is None
    creds = credentials_from_env({"EBAY_CLIENT_ID": CLIENT_ID, "EBAY_CLIENT_SECRET": CLIENT_SECRET})
    assert creds == Credentials(CLIENT_ID, CLIENT_SECRET)
    assert CLIENT_SECRET not in repr(creds) and CLIENT_ID not in repr(creds)
    env = {
        "AMAZON_PAAPI_ACCESS_KEY": ACCESS_KEY,
        "AMAZON_PAAPI_SECRET_KEY": SECRET_KEY,
        "AMAZON_PARTNER_TAG": PARTNER_TAG,
    }
    amazon = amazon_api.credentials_from_env(env)
    assert amazon == AmazonCredentials(ACCESS_KEY, SECRET_KEY)
    assert SECRET_KEY not in repr(amazon) and ACCESS_KEY not in repr(amazon)
    assert amazon_api.partner_tag_from_env(env) == PARTNER_TAG
    http = PoliteClient(respect_robots=False)
    try:
        assert amazon_api.client_from_env(http, {}) is None
        client = amazon_api.client_from_env(http, env)
        assert client is not None and SECRET_KEY not in repr(client)
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
    """eBay token + Browse search and PA-API SearchItems on 127.0.0.1."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.token_requests: list[dict] = []
        self.searches: list[dict] = []
        self.valid_tokens: set[str] = set()
        self.expires_in = 7200
        self.revoke_next_valid = 0  # answer 401 to this many searches with a valid token
        self.search_status = 200
        self.search_body: bytes | None = None
        self.amazon_requests: list[dict] = []
        self.amazon_reply: tuple[int, bytes] = (
            200,
            (FIXTURES / "paapi5_searchitems_offers.json").read_bytes(),
        )
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
                elif path == amazon_api.SEARCH_PATH:
                    with apis.lock:
                        apis.amazon_requests.append({"headers": dict(self.headers), "body": body})
                        status, reply = apis.amazon_reply
                    self._send(status, reply)
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


def amazon_client(http, apis) -> AmazonProductClient:
    return AmazonProductClient(
        http,
        AmazonCredentials(ACCESS_KEY, SECRET_KEY),
        PARTNER_TAG,
        clock=lambda: dt.datetime(2026, 4, 13, 8, 5, 9, tzinfo=dt.UTC).timestamp(),
        base_url=apis.base,
    )


def test_amazon_search_sends_a_signed_searchitems_request(apis, http, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    result = amazon_client(http, apis).search("RTX 3060 12GB")
    assert result.outcome == Outcome.OK and len(result.records) == 3
    (request,) = apis.amazon_requests
    headers = {name.lower(): value for name, value in request["headers"].items()}
    assert headers["content-encoding"] == "amz-1.0"
    assert headers["x-amz-target"] == amazon_api.TARGET
    assert headers["x-amz-date"] == "20260413T080509Z"
    assert headers["authorization"].startswith(
        f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/20260413/us-east-1/ProductAdvertisingAPI/"
        "aws4_request, SignedHeaders=content-encoding;content-type;host;x-amz-date;x-amz-target, "
        "Signature="
    )
    body = json.loads(request["body"])
    assert body["Keywords"] == "RTX 3060 12GB"
    assert body["PartnerTag"] == PARTNER_TAG and body["PartnerType"] == "Associates"
    assert body["Marketplace"] == "www.amazon.com" and body["SearchIndex"] == "Electronics"
    assert "Offers.Listings.Price" in body["Resources"]
    # The server can check the signature: recompute it over exactly what arrived.
    signed = {
        name: headers[name]
        for name in ("content-encoding", "content-type", "host", "x-amz-date", "x-amz-target")
    }
    again = sign_request(
        "POST",
        apis.base + amazon_api.SEARCH_PATH,
        signed,
        request["body"],
        ACCESS_KEY,
        SECRET_KEY,
        "us-east-1",
        "ProductAdvertisingAPI",
        dt.datetime(2026, 4, 13, 8, 5, 9, tzinfo=dt.UTC),
    )
    assert again["Authorization"] == headers["authorization"]
    archive = archived_text(tmp_path / "archive")
    assert "SearchResult" in archive
    signature = headers["authorization"].rsplit("=", 1)[1]
    for secret in (SECRET_KEY, signature):
        assert secret not in archive and secret not in caplog.text


@pytest.mark.parametrize(
    ("status", "fixture", "outcome", "code"),
    [
        (429, "paapi5_errors_throttled.json", Outcome.HTTP_ERROR, "TooManyRequests"),
        (401, "paapi5_errors_signature.json", Outcome.HTTP_ERROR, "InvalidSignature"),
        (404, "paapi5_errors_no_results.json", Outcome.EMPTY, "NoResults"),
    ],
)
def test_amazon_error_responses_carry_the_error_code(apis, http, status, fixture, outcome, code):
    apis.amazon_reply = (status, (FIXTURES / fixture).read_bytes())
    result = amazon_client(http, apis).search("RTX 3060 12GB")
    assert result.outcome == outcome
    assert code in result.detail
    assert SECRET_KEY not in result.detail


def test_amazon_malformed_body_is_a_parse_error(apis, http):
    apis.amazon_reply = (200, b"<html>not json</html>")
    result = amazon_client(http, apis).search("RTX 3060 12GB")
    assert result.outcome == Outcome.PARSE_ERROR
