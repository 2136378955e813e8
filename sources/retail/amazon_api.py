"""Amazon's Product Advertising API 5.0 (PA-API 5) SearchItems, used instead of scraping.

When `AMAZON_PAAPI_ACCESS_KEY`, `AMAZON_PAAPI_SECRET_KEY` and `AMAZON_PARTNER_TAG` are set,
Amazon new prices are read through PA-API 5 `SearchItems`: a JSON `POST
https://webservices.amazon.com/paapi5/searchitems` signed with AWS Signature Version 4
(service `ProductAdvertisingAPI`, region `us-east-1`, headers `content-encoding: amz-1.0`
and `x-amz-target: com.amazon.paapi5.v1.ProductAdvertisingAPIv1.SearchItems`).

**Retirement.** Amazon's PA-API 5 documentation announces that PA-API is deprecated on
2026-04-30 (and, per third-party migration notes, retired on 2026-05-15) in favour of the
*Creators API*. The Creators API uses OAuth 2.0 client credentials (a "Credential ID" and
"Credential Secret" plus a credential version per region) and camelCase JSON instead of
SigV4 and PascalCase. Its endpoints and payloads are documented only behind the Associates
program (https://affiliate-program.amazon.com/creatorsapi/docs/en-us/introduction) and
were not available to confirm, so it is the *planned* replacement and is not implemented
here; no endpoint is guessed. Until then this module implements PA-API 5, whose parser is
also what archived PA-API responses are re-parsed with. The PA-API documentation also
marks the `Offers` resources deprecated in favour of `OffersV2`; the parser reads
`Offers.Listings[0]` and, when present instead, `OffersV2.Listings[0]` (`Price.Money`).

What is kept per item (`SearchResult.Items[]`): `ASIN`, `ItemInfo.Title.DisplayValue`,
`Offers.Listings[0].Price.Amount` / `Currency` / `DisplayAmount`,
`Offers.Listings[0].Condition.Value` (and `SubCondition.Value`), `DetailPageURL` (kept in
`extra`; `url` is the canonical `https://www.amazon.com/dp/<ASIN>` like the scraper's). An
item without offers has `price=None` and the reason "no offer"; a zero amount is "zero
price". An `Errors` array without items is `Outcome.HTTP_ERROR` with the error code
(`TooManyRequests`, `InvalidSignature`, ...), except `NoResults`, which is `EMPTY`.

Secrets: the access key, the secret key and the signature are never logged, archived or put
in an exception or a repr; only response bodies are archived (source `amazon_api`).
"""

import datetime as dt
import hashlib
import hmac
import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from sources.credentials import env_secret
from sources.http import FetchOutcome, PoliteClient
from sources.retail.records import Listing, Outcome, ParseResult

SOURCE = "amazon"  # Listing.source: the marketplace
ARCHIVE_SOURCE = "amazon_api"  # the archive's source: JSON, not the scraper's HTML
API_BASE_URL = "https://webservices.amazon.com"
SEARCH_PATH = "/paapi5/searchitems"
SERVICE = "ProductAdvertisingAPI"
REGION = "us-east-1"
TARGET = "com.amazon.paapi5.v1.ProductAdvertisingAPIv1.SearchItems"
MARKETPLACE = "www.amazon.com"
SEARCH_INDEX = "Electronics"
RESOURCES = (
    "ItemInfo.Title",
    "Offers.Listings.Price",
    "Offers.Listings.Condition",
    "Offers.Listings.Condition.SubCondition",
)
ALGORITHM = "AWS4-HMAC-SHA256"

ENV_ACCESS_KEY = "AMAZON_PAAPI_ACCESS_KEY"
ENV_SECRET_KEY = "AMAZON_PAAPI_SECRET_KEY"
ENV_PARTNER_TAG = "AMAZON_PARTNER_TAG"

# Error codes meaning "no results", not a failure.
_EMPTY_CODES = frozenset({"NoResults"})

log = logging.getLogger("gpuvalue.retail.amazon_api")


@dataclass(frozen=True)
class AmazonCredentials:
    """PA-API 5 access and secret keys; the repr shows neither."""

    access_key: str = field(repr=False)
    secret_key: str = field(repr=False)


def credentials_from_env(env: Mapping[str, str]) -> AmazonCredentials | None:
    """Keys from `AMAZON_PAAPI_ACCESS_KEY` and `AMAZON_PAAPI_SECRET_KEY`; None if either is unset.

    Args:
        env: The environment, e.g. `os.environ`.

    Returns:
        The credentials, or None when the API is not configured (scrape instead).
    """
    access, secret = env_secret(env, ENV_ACCESS_KEY), env_secret(env, ENV_SECRET_KEY)
    return AmazonCredentials(access, secret) if access and secret else None


def partner_tag_from_env(env: Mapping[str, str]) -> str | None:
    """The Associates partner tag from `AMAZON_PARTNER_TAG`, or None if unset."""
    return env_secret(env, ENV_PARTNER_TAG)


# --- AWS Signature Version 4 ----------------------------------------------------------------


def _hmac(key: bytes, message: str) -> bytes:
    return hmac.new(key, message.encode("utf-8"), hashlib.sha256).digest()


def _uri_encode(text: str) -> str:
    # RFC 3986 unreserved characters stay; everything else is %XX with upper-case hex.
    return quote(text, safe="-_.~")


def _canonical_query(query: str) -> str:
    pairs = parse_qsl(query, keep_blank_values=True)
    encoded = sorted((_uri_encode(name), _uri_encode(value)) for name, value in pairs)
    return "&".join(f"{name}={value}" for name, value in encoded)


def _canonical_path(path: str) -> str:
    # Non-S3 services: each segment URI-encoded (the path is already normalised by us).
    return "/".join(_uri_encode(segment) for segment in (path or "/").split("/")) or "/"


def signing_key(secret_key: str, date: str, region: str, service: str) -> bytes:
    """The SigV4 signing key: HMAC chain over date (YYYYMMDD), region, service, "aws4_request"."""
    key = _hmac(f"AWS4{secret_key}".encode(), date)
    key = _hmac(key, region)
    key = _hmac(key, service)
    return _hmac(key, "aws4_request")


def canonical_request(
    method: str, url: str, headers: Mapping[str, str], body: bytes
) -> tuple[str, str]:
    """The SigV4 canonical request for a request whose headers are all signed.

    Args:
        method: The HTTP method.
        url: The full URL (its query string is canonicalised).
        headers: Every header to sign, `host` and `x-amz-date` included.
        body: The exact body bytes sent.

    Returns:
        (canonical request, signed header names joined by ";").
    """
    parts = urlsplit(url)
    canonical: dict[str, str] = {}
    for name, value in headers.items():
        canonical[name.strip().lower()] = " ".join(str(value).split())
    names = sorted(canonical)
    signed = ";".join(names)
    lines = [
        method.upper(),
        _canonical_path(parts.path),
        _canonical_query(parts.query),
        "".join(f"{name}:{canonical[name]}\n" for name in names),
        signed,
        hashlib.sha256(body).hexdigest(),
    ]
    return "\n".join(lines), signed


def sign_request(
    method: str,
    url: str,
    headers: Mapping[str, str],
    body: bytes,
    access_key: str,
    secret_key: str,
    region: str,
    service: str,
    now: dt.datetime,
) -> dict[str, str]:
    """Sign a request with AWS Signature Version 4 (AWS4-HMAC-SHA256).

    Args:
        method: The HTTP method.
        url: The full URL.
        headers: The headers to send and sign; `host` is added from `url` when missing.
        body: The exact body bytes to send (b"" for none).
        access_key: The access key id (appears in the Authorization header's Credential).
        secret_key: The secret key (never leaves this function).
        region: e.g. "us-east-1".
        service: e.g. "ProductAdvertisingAPI".
        now: The signing time; must be timezone-aware.

    Returns:
        The headers to send: `headers`, plus `host`, `x-amz-date` and `Authorization`.

    Raises:
        ValueError: `now` is naive.
    """
    if now.tzinfo is None or now.utcoffset() is None:
        raise ValueError("now must be timezone-aware")
    now = now.astimezone(dt.UTC)
    amz_date = now.strftime("%Y%m%dT%H%M%SZ")
    date = now.strftime("%Y%m%d")
    to_sign = {str(name): str(value) for name, value in headers.items()}
    lowered = {name.lower() for name in to_sign}
    if "host" not in lowered:
        to_sign["host"] = urlsplit(url).netloc
    if "x-amz-date" not in lowered:
        to_sign["x-amz-date"] = amz_date
    request, signed = canonical_request(method, url, to_sign, body)
    scope = f"{date}/{region}/{service}/aws4_request"
    string_to_sign = "\n".join(
        [ALGORITHM, amz_date, scope, hashlib.sha256(request.encode("utf-8")).hexdigest()]
    )
    signature = hmac.new(
        signing_key(secret_key, date, region, service),
        string_to_sign.encode("utf-8"),
        hashlib.sha256,
    ).hexdigest()
    to_sign["Authorization"] = (
        f"{ALGORITHM} Credential={access_key}/{scope}, SignedHeaders={signed}, "
        f"Signature={signature}"
    )
    return to_sign


# --- parsing ------------------------------------------------------------------------------


def _get(data: Any, *path: str | int) -> Any:
    for step in path:
        if isinstance(step, int):
            if not isinstance(data, list) or len(data) <= step:
                return None
        elif not isinstance(data, Mapping):
            return None
        data = data[step] if isinstance(step, int) else data.get(step)
    return data


def _errors(errors: Any) -> list[tuple[str, str]] | None:
    if not isinstance(errors, list):
        return None
    found = []
    for error in errors:
        if not isinstance(error, Mapping):
            return None
        found.append((str(error.get("Code") or "Unknown"), str(error.get("Message") or "")))
    return found


def _offer(item: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, str, Any]:
    """(first offer listing, offers version, its Money-like price object)."""
    listing = _get(item, "Offers", "Listings", 0)
    if isinstance(listing, Mapping):
        return listing, "v1", listing.get("Price")
    listing = _get(item, "OffersV2", "Listings", 0)
    if isinstance(listing, Mapping):
        return listing, "v2", _get(listing, "Price", "Money")
    return None, "", None


def _item(item: Mapping[str, Any]) -> Listing | str:
    """One PA-API item -> a record, or the reason it was dropped."""
    asin = item.get("ASIN")
    title = _get(item, "ItemInfo", "Title", "DisplayValue")
    if not isinstance(title, str) or not title.strip():
        return "no title"
    extra = {"api": "paapi5"}
    if item.get("DetailPageURL"):
        extra["detail_page_url"] = str(item["DetailPageURL"])
    listing, version, money = _offer(item)
    price: float | None = None
    currency: str | None = None
    condition: str | None = None
    reason: str | None = "no offer"
    if listing is not None:
        extra["offers"] = version
        condition_value = _get(listing, "Condition", "Value")
        condition = str(condition_value) if condition_value else None
        sub = _get(listing, "SubCondition", "Value") or _get(
            listing, "Condition", "SubCondition", "Value"
        )
        if sub:
            extra["sub_condition"] = str(sub)
        if isinstance(money, Mapping):
            currency = str(money["Currency"]).upper() if money.get("Currency") else None
            if money.get("DisplayAmount"):
                extra["display_amount"] = str(money["DisplayAmount"])
            amount = money.get("Amount")
            if isinstance(amount, bool) or not isinstance(amount, int | float | str):
                reason = "no price"
            else:
                try:
                    value = float(amount)
                except ValueError:
                    value = float("nan")
                if value != value or value < 0:
                    reason = "unreadable price"
                elif value == 0:
                    reason = "zero price"
                else:
                    price, reason = value, None
        else:
            reason = "no price"
    return Listing(
        source=SOURCE,
        listing_id=str(asin) if asin else None,
        title=" ".join(title.split()),
        price=price,
        price_high=None,
        currency=currency,
        condition=condition,
        sold=None,
        sold_date=None,
        best_offer_accepted=False,
        sponsored=False,
        url=f"https://www.amazon.com/dp/{asin}" if asin else None,
        price_missing_reason=reason,
        extra=extra,
    )


def parse_search_items(payload: Any) -> ParseResult:
    """A PA-API 5 SearchItems response -> records (pure, never raises).

    Args:
        payload: The decoded JSON body.

    Returns:
        OK with one record per readable item (errors alongside items go in `detail`);
        EMPTY for `NoResults` or no items; HTTP_ERROR with the error code(s) for an `Errors`
        payload without items; PARSE_ERROR for anything else.
    """
    if not isinstance(payload, Mapping):
        return ParseResult(
            Outcome.PARSE_ERROR, "search", detail=f"not a JSON object: {type(payload).__name__}"
        )
    errors = None
    if "Errors" in payload:
        errors = _errors(payload["Errors"])
        if errors is None:
            return ParseResult(Outcome.PARSE_ERROR, "search", detail="malformed Errors array")
    error_text = "; ".join(f"{code}: {message}".rstrip(": ") for code, message in errors or [])
    items = _get(payload, "SearchResult", "Items")
    if items is None:
        if errors:
            if all(code in _EMPTY_CODES for code, _ in errors):
                return ParseResult(Outcome.EMPTY, "search", detail=error_text)
            return ParseResult(Outcome.HTTP_ERROR, "search", detail=f"PA-API error {error_text}")
        if isinstance(payload.get("SearchResult"), Mapping):
            return ParseResult(Outcome.EMPTY, "search", detail="no results")
        return ParseResult(Outcome.PARSE_ERROR, "search", detail="not a SearchItems response")
    if not isinstance(items, list):
        return ParseResult(Outcome.PARSE_ERROR, "search", detail="SearchResult.Items is not a list")
    dropped: Counter[str] = Counter()
    records = []
    for item in items:
        parsed = _item(item) if isinstance(item, Mapping) else "unreadable"
        if isinstance(parsed, str):
            dropped[parsed] += 1
        else:
            records.append(parsed)
    detail = f"PA-API errors alongside results: {error_text}" if errors else ""
    if records:
        return ParseResult(Outcome.OK, "search", tuple(records), detail, dict(dropped))
    if dropped:
        return ParseResult(
            Outcome.PARSE_ERROR,
            "search",
            detail=f"{sum(dropped.values())} items, none readable",
            dropped=dict(dropped),
        )
    return ParseResult(Outcome.EMPTY, "search", detail=detail or "no results")


# --- the client ---------------------------------------------------------------------------


class AmazonProductClient:
    """Searches Amazon through PA-API 5 SearchItems with SigV4-signed requests.

    Args:
        http: The run's polite client (rate limits, retries, archive).
        credentials: The PA-API access and secret keys.
        partner_tag: The Associates tag (e.g. "xyz-20"), required by PA-API.
        clock: Wall-clock seconds, the signing time (injected in tests).
        base_url: The API origin (a local server in tests).
        marketplace: The PA-API `Marketplace`.
        search_index: The PA-API `SearchIndex`.
        region: The SigV4 region of `base_url`'s host.
    """

    def __init__(
        self,
        http: PoliteClient,
        credentials: AmazonCredentials,
        partner_tag: str,
        clock: Callable[[], float] = time.time,
        *,
        base_url: str = API_BASE_URL,
        marketplace: str = MARKETPLACE,
        search_index: str = SEARCH_INDEX,
        region: str = REGION,
    ) -> None:
        self.http = http
        self._credentials = credentials
        self.partner_tag = partner_tag
        self._clock = clock
        self.base_url = base_url.rstrip("/")
        self.marketplace = marketplace
        self.search_index = search_index
        self.region = region

    def __repr__(self) -> str:
        return f"AmazonProductClient(base_url={self.base_url!r}, marketplace={self.marketplace!r})"

    def request_body(self, query: str) -> bytes:
        """The SearchItems JSON body for `query`, exactly as sent and signed."""
        payload = {
            "Keywords": query,
            "SearchIndex": self.search_index,
            "Resources": list(RESOURCES),
            "PartnerTag": self.partner_tag,
            "PartnerType": "Associates",
            "Marketplace": self.marketplace,
        }
        return json.dumps(payload, separators=(",", ":")).encode("utf-8")

    def search(self, query: str) -> ParseResult:
        """Search Amazon for `query` (one page of up to 10 items, PA-API's maximum).

        Returns:
            The parsed page; fetch failures and PA-API errors are outcomes, not exceptions.
        """
        url = self.base_url + SEARCH_PATH
        body = self.request_body(query)
        headers = {
            "content-encoding": "amz-1.0",
            "content-type": "application/json; charset=utf-8",
            "host": urlsplit(url).netloc,
            "x-amz-target": TARGET,
        }
        signed = sign_request(
            "POST",
            url,
            headers,
            body,
            self._credentials.access_key,
            self._credentials.secret_key,
            self.region,
            SERVICE,
            dt.datetime.fromtimestamp(self._clock(), dt.UTC),
        )
        result = self.http.post(url, data=body, headers=signed, source=ARCHIVE_SOURCE)
        parsed: ParseResult | None = None
        if result.content:
            try:
                parsed = parse_search_items(result.json())
            except (ValueError, UnicodeDecodeError) as exc:
                if result.ok:
                    return ParseResult(
                        Outcome.PARSE_ERROR, "search", detail=f"malformed JSON: {exc}"
                    )
        if result.ok:
            if parsed is None:
                return ParseResult(Outcome.PARSE_ERROR, "search", detail="empty body")
            return parsed
        # PA-API answers errors with a JSON Errors body (404 NoResults, 429 TooManyRequests,
        # 401 InvalidSignature, ...): use its code when there is one.
        if parsed is not None and parsed.outcome == Outcome.EMPTY:
            return parsed
        detail = result.error or str(result.outcome)
        if parsed is not None and parsed.outcome == Outcome.HTTP_ERROR:
            detail = f"{detail}; {parsed.detail}"
        outcome = {
            FetchOutcome.BLOCKED: Outcome.BLOCKED,
            FetchOutcome.CAPTCHA: Outcome.CAPTCHA,
        }.get(FetchOutcome(result.outcome), Outcome.HTTP_ERROR)
        log.warning("Amazon PA-API search %r: %s", query, detail)
        return ParseResult(outcome, "search", detail=detail)


def client_from_env(
    http: PoliteClient, env: Mapping[str, str], clock: Callable[[], float] = time.time
) -> AmazonProductClient | None:
    """A PA-API client when keys and partner tag are configured in `env`, else None (scrape)."""
    credentials = credentials_from_env(env)
    tag = partner_tag_from_env(env)
    if credentials is None or tag is None:
        return None
    return AmazonProductClient(http, credentials, tag, clock)
