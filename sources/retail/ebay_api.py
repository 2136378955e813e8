"""eBay's official Browse API: active listings by keyword, used instead of scraping when configured.

When `EBAY_CLIENT_ID` and `EBAY_CLIENT_SECRET` are set, eBay is read through the Browse API
(`GET /buy/browse/v1/item_summary/search`) with an OAuth application token
(client-credentials grant) instead of scraping search pages.

**Active asking prices are a different signal from sold prices.** The Browse API returns
only *active* listings: what sellers ask today, not what buyers paid. The scraper's eBay
source reads sold-and-completed searches because a sale price is what a used card is worth.
Records from this module therefore have `sold=None` and `extra["api"] = "browse"`, and the
pipeline must label them as asking prices (never mix them silently into sold prices).
For an auction-only listing the price is the current bid (`extra["price_kind"] =
"current_bid"`), which is a lower bound that moves until the auction ends.

What is parsed from each `itemSummaries[]` entry (documented `ItemSummary` fields):
`itemId`, `title`, `price{value,currency}`, `currentBidPrice`, `condition`, `conditionId`,
`itemWebUrl`, `buyingOptions` (FIXED_PRICE, AUCTION, BEST_OFFER, CLASSIFIED_AD),
`shippingOptions[].shippingCost` (the cheapest option), `bidCount`, `itemEndDate`. Money
values are strings in the API (`"429.99"`). A missing or zero price is None with a reason,
never 0. A non-USD price keeps its own currency (conversion is the pipeline's job).

Secrets: the client secret and the access token are never logged, archived or put in an
exception, a `ParseResult` or a repr. The token request goes through
`PoliteClient.post(..., archive_body=False)`; search responses are archived (source
`ebay_api`) but request headers never are. Pagination follows the response's `next` link
only when it points at the configured API host, so the bearer token is never sent elsewhere.

Errors: a 401 on a search invalidates the cached token, fetches a new one and retries once;
429 and 5xx are retried by `PoliteClient`; an unreadable body is `Outcome.PARSE_ERROR`.
"""

import base64
import logging
import math
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sources.credentials import env_secret, remember_secret
from sources.http import FetchOutcome, FetchResult, PoliteClient
from sources.retail.plan import EBAY_GPU_CATEGORY
from sources.retail.records import Listing, Outcome, ParseResult

SOURCE = "ebay"  # Listing.source: the marketplace
ARCHIVE_SOURCE = "ebay_api"  # the archive's source: JSON, not the scraper's HTML
API_BASE_URL = "https://api.ebay.com"
TOKEN_PATH = "/identity/v1/oauth2/token"
SEARCH_PATH = "/buy/browse/v1/item_summary/search"
SCOPE = "https://api.ebay.com/oauth/api_scope"
MARKETPLACE = "EBAY_US"
# The Browse API returns only FIXED_PRICE listings unless buyingOptions is filtered.
DEFAULT_FILTER = "buyingOptions:{FIXED_PRICE|AUCTION|BEST_OFFER}"
PAGE_LIMIT = 200  # the documented maximum for `limit`
REFRESH_MARGIN = 60.0  # seconds before expiry at which a cached token is renewed

ENV_CLIENT_ID = "EBAY_CLIENT_ID"
ENV_CLIENT_SECRET = "EBAY_CLIENT_SECRET"

log = logging.getLogger("gpuvalue.retail.ebay_api")


@dataclass(frozen=True)
class Credentials:
    """An eBay application's OAuth client credentials; the repr shows neither field."""

    client_id: str = field(repr=False)
    client_secret: str = field(repr=False)


def credentials_from_env(env: Mapping[str, str]) -> Credentials | None:
    """Credentials from `EBAY_CLIENT_ID` and `EBAY_CLIENT_SECRET`; None if either is unset.

    Args:
        env: The environment, e.g. `os.environ`.

    Returns:
        The credentials, or None when the API is not configured (scrape instead).
    """
    client_id, client_secret = env_secret(env, ENV_CLIENT_ID), env_secret(env, ENV_CLIENT_SECRET)
    if not (client_id and client_secret):
        return None
    # The Basic authorization header requests builds from the pair, redacted if echoed.
    remember_secret(base64.b64encode(f"{client_id}:{client_secret}".encode()).decode())
    return Credentials(client_id, client_secret)


class TokenError(Exception):
    """The token endpoint did not give us a token (the message holds no secret)."""


class TokenCache:
    """One OAuth access token, kept until `margin` seconds before it expires.

    Thread-safe. The token is never part of the repr.

    Args:
        clock: Wall-clock seconds (injected in tests).
        margin: Renew this many seconds before the token's stated expiry.
    """

    def __init__(self, clock: Callable[[], float] = time.time, margin: float = REFRESH_MARGIN):
        self._clock = clock
        self._margin = margin
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0

    def __repr__(self) -> str:
        return f"TokenCache(cached={self._token is not None})"

    def get(self, fetch: Callable[[], tuple[str, float]]) -> str:
        """The cached token, or a new one from `fetch() -> (token, expires_in_seconds)`.

        Raises:
            TokenError: `fetch` failed.
        """
        with self._lock:
            now = self._clock()
            if self._token is not None and now < self._renew_at:
                return self._token
            token, expires_in = fetch()
            self._token = token
            self._renew_at = now + max(0.0, float(expires_in) - self._margin)
            return token

    def invalidate(self, token: str | None = None) -> None:
        """Forget the cached token (only if it is still `token`, when given)."""
        with self._lock:
            if token is None or token == self._token:
                self._token = None


# --- parsing ------------------------------------------------------------------------------


# The Browse API's `value` is a decimal string ("1299.99"): no grouping, exponent, sign,
# underscore or third decimal (float() would take "1_299", "1e3" and "12.345").
_API_NUMBER = re.compile(r"[0-9]{1,10}(?:\.[0-9]{1,2})?", re.ASCII)
_CURRENCY = re.compile(r"[A-Z]{3}", re.ASCII)


def _api_number(raw: Any) -> float | None:
    """A Browse API amount (decimal string, or a JSON number with at most two decimals)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        value = float(raw)
        return value if math.isfinite(value) and round(value, 2) == value else None
    if isinstance(raw, str) and _API_NUMBER.fullmatch(raw):
        return float(raw)
    return None


def _amount(money: Any) -> tuple[float | None, str | None, str | None]:
    """(value, currency, problem) from an eBay `ConvertedAmount` object."""
    if not isinstance(money, Mapping):
        return None, None, "no price"
    currency = money.get("currency")
    currency = str(currency).upper() if currency else None
    raw = money.get("value")
    if raw is None or raw == "":
        return None, currency, "no price"
    if currency is None or not _CURRENCY.fullmatch(currency):
        # Never the marketplace's currency by default: an amount without its code is no price.
        return None, None, "unreadable price"
    value = _api_number(raw)
    if value is None or not math.isfinite(value) or value < 0 or value >= 1e10:
        return None, currency, "unreadable price"
    if value == 0:
        return None, currency, "zero price"
    return value, currency, None


def _shipping(options: Any, currency: str | None) -> tuple[float | None, dict[str, str]]:
    """The cheapest shipping cost in `currency`, and notes for `extra`."""
    if not isinstance(options, list):
        return None, {}
    costs: list[tuple[float, str | None]] = []
    for option in options:
        if not isinstance(option, Mapping):
            continue
        value, ship_currency, problem = _amount(option.get("shippingCost"))
        if problem == "zero price":
            value = 0.0  # free shipping is a real 0, unlike a free GPU
        if value is not None:
            costs.append((value, ship_currency))
    if not costs:
        return None, {}
    value, ship_currency = min(costs, key=lambda cost: cost[0])
    if currency is not None and ship_currency is not None and ship_currency != currency:
        return None, {"shipping": f"{value:.2f} {ship_currency}"}
    return value, {}


def _item(summary: Mapping[str, Any]) -> Listing | str:
    """One `ItemSummary` -> a record, or the reason it was dropped."""
    title = summary.get("title")
    if not isinstance(title, str) or not title.strip():
        return "no title"
    item_id = summary.get("itemId")
    options = summary.get("buyingOptions")
    options = [str(o) for o in options] if isinstance(options, list) else []
    extra = {"api": "browse", "buying_options": ",".join(options)}

    bid, bid_currency, _ = _amount(summary.get("currentBidPrice"))
    if bid is not None:
        extra["current_bid"] = f"{bid:.2f}"
    if "AUCTION" in options and "FIXED_PRICE" not in options and bid is not None:
        price, currency, reason = bid, bid_currency, None
        extra["price_kind"] = "current_bid"
    else:
        price, currency, reason = _amount(summary.get("price"))
        extra["price_kind"] = "asking"
    money = summary.get("price")
    if isinstance(money, Mapping) and money.get("convertedFromCurrency"):
        extra["converted_from"] = (
            f"{money.get('convertedFromValue')} {money.get('convertedFromCurrency')}"
        )
    shipping, shipping_extra = _shipping(summary.get("shippingOptions"), currency)
    extra.update(shipping_extra)
    for key, name in (("conditionId", "condition_id"), ("bidCount", "bid_count")):
        if summary.get(key) is not None:
            extra[name] = str(summary[key])
    if summary.get("itemEndDate"):
        extra["item_end_date"] = str(summary["itemEndDate"])
    condition = summary.get("condition")
    url = summary.get("itemWebUrl")
    return Listing(
        source=SOURCE,
        listing_id=str(item_id) if item_id else None,
        title=" ".join(title.split()),
        price=price,
        price_high=None,
        currency=currency,
        condition=str(condition) if condition else None,
        sold=None,  # active listings: an asking price, not a sale
        sold_date=None,
        best_offer_accepted=False,
        sponsored=False,
        url=str(url) if url else None,
        price_missing_reason=reason,
        shipping=shipping,
        extra=extra,
    )


def _api_errors(errors: Any) -> str:
    parts = []
    for error in errors if isinstance(errors, list) else []:
        if isinstance(error, Mapping):
            parts.append(f"{error.get('errorId', '?')} {error.get('message', '')}".strip())
    return "; ".join(parts) or "unspecified error"


def parse_browse_search(payload: Any) -> ParseResult:
    """A Browse API `item_summary/search` response -> records (pure, never raises).

    Args:
        payload: The decoded JSON body (a `SearchPagedCollection`).

    Returns:
        OK with one record per readable item summary; EMPTY when the search found nothing;
        HTTP_ERROR when the body is an eBay error document; PARSE_ERROR otherwise.
    """
    if not isinstance(payload, Mapping):
        return ParseResult(
            Outcome.PARSE_ERROR, "search", detail=f"not a JSON object: {type(payload).__name__}"
        )
    summaries = payload.get("itemSummaries")
    if summaries is None:
        if payload.get("errors"):
            detail = f"eBay API error: {_api_errors(payload['errors'])}"
            return ParseResult(Outcome.HTTP_ERROR, "search", detail=detail)
        if "total" in payload or "href" in payload:
            return ParseResult(Outcome.EMPTY, "search", detail="no results")
        return ParseResult(Outcome.PARSE_ERROR, "search", detail="not a Browse API search response")
    if not isinstance(summaries, list):
        return ParseResult(Outcome.PARSE_ERROR, "search", detail="itemSummaries is not a list")
    dropped: Counter[str] = Counter()
    records = []
    for summary in summaries:
        parsed = _item(summary) if isinstance(summary, Mapping) else "unreadable"
        if isinstance(parsed, str):
            dropped[parsed] += 1
        else:
            records.append(parsed)
    if records:
        return ParseResult(Outcome.OK, "search", tuple(records), dropped=dict(dropped))
    if dropped:
        return ParseResult(
            Outcome.PARSE_ERROR,
            "search",
            detail=f"{sum(dropped.values())} item summaries, none readable",
            dropped=dict(dropped),
        )
    return ParseResult(Outcome.EMPTY, "search", detail="no results")


# --- the client ---------------------------------------------------------------------------

_FETCH_TO_PARSE = {
    FetchOutcome.CAPTCHA: Outcome.CAPTCHA,
    FetchOutcome.BLOCKED: Outcome.BLOCKED,
}


def _failed(result: FetchResult, what: str) -> ParseResult:
    outcome = _FETCH_TO_PARSE.get(FetchOutcome(result.outcome), Outcome.HTTP_ERROR)
    return ParseResult(outcome, "search", detail=f"{what}: {result.error or result.outcome}")


class EbayBrowseClient:
    """Searches eBay through the Browse API with a cached application token.

    Args:
        http: The run's polite client (rate limits, retries, archive).
        credentials: The application's client id and secret.
        clock: Wall-clock seconds, for token expiry (injected in tests).
        base_url: The API origin (a local server in tests).
        marketplace: Sent as `X-EBAY-C-MARKETPLACE-ID`.
        category_id: The category searched (graphics cards).
        filter: The `filter` query parameter (None for none).
        limit: Items per page (at most 200).
    """

    def __init__(
        self,
        http: PoliteClient,
        credentials: Credentials,
        clock: Callable[[], float] = time.time,
        *,
        base_url: str = API_BASE_URL,
        marketplace: str = MARKETPLACE,
        category_id: str = EBAY_GPU_CATEGORY,
        filter: str | None = DEFAULT_FILTER,
        limit: int = PAGE_LIMIT,
    ) -> None:
        self.http = http
        self._credentials = credentials
        self.base_url = base_url.rstrip("/")
        self.marketplace = marketplace
        self.category_id = category_id
        self.filter = filter
        self.limit = limit
        self.tokens = TokenCache(clock)

    def __repr__(self) -> str:
        return f"EbayBrowseClient(base_url={self.base_url!r}, marketplace={self.marketplace!r})"

    def _fetch_token(self) -> tuple[str, float]:
        result = self.http.post(
            self.base_url + TOKEN_PATH,
            data={"grant_type": "client_credentials", "scope": SCOPE},
            auth=(self._credentials.client_id, self._credentials.client_secret),
            headers={"Accept": "application/json"},
            source=ARCHIVE_SOURCE,
            archive_body=False,
        )
        if not result.ok:
            raise TokenError(f"eBay token request failed: {result.error or result.outcome}")
        try:
            body = result.json()
            token = body["access_token"]
            expires_in = float(body.get("expires_in", 0))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            # Never echo the body: it would hold the token.
            raise TokenError(f"eBay token response unreadable ({type(exc).__name__})") from None
        if not isinstance(token, str) or not token:
            raise TokenError("eBay token response has no access_token")
        remember_secret(token)  # redacted by value wherever a server echoes it
        log.info("eBay application token obtained (expires in %.0fs)", expires_in)
        return token, expires_in

    def _same_host(self, url: str) -> bool:
        ours, theirs = urlsplit(self.base_url), urlsplit(url)
        return (ours.scheme, ours.netloc.lower()) == (theirs.scheme, theirs.netloc.lower())

    def _get(self, url: str, params: Mapping[str, Any] | None) -> FetchResult | ParseResult:
        """GET a search page with a bearer token; a 401 renews the token once."""
        for attempt in range(2):
            try:
                token = self.tokens.get(self._fetch_token)
            except TokenError as exc:
                return ParseResult(Outcome.HTTP_ERROR, "search", detail=str(exc))
            headers = {
                "Authorization": f"Bearer {token}",
                "X-EBAY-C-MARKETPLACE-ID": self.marketplace,
                "Accept": "application/json",
            }
            result = self.http.get(url, params=params, headers=headers, source=ARCHIVE_SOURCE)
            if result.status == 401 and attempt == 0:
                log.info("eBay search answered 401: renewing the token and retrying once")
                self.tokens.invalidate(token)
                continue
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def search(self, query: str, max_pages: int = 1) -> list[ParseResult]:
        """Search active listings for `query`, following `next` links up to `max_pages`.

        Args:
            query: The keywords, e.g. "RTX 3060 12GB".
            max_pages: The most pages to fetch (each up to `limit` items).

        Returns:
            One result per page fetched; the last one says why paging stopped when it failed.
        """
        params: dict[str, Any] | None = {
            "q": query,
            "category_ids": self.category_id,
            "limit": self.limit,
        }
        if self.filter:
            params["filter"] = self.filter
        url = self.base_url + SEARCH_PATH
        results: list[ParseResult] = []
        for _ in range(max(0, max_pages)):
            fetched = self._get(url, params)
            if isinstance(fetched, ParseResult):
                results.append(fetched)
                break
            if not fetched.ok:
                results.append(_failed(fetched, f"eBay search {query!r}"))
                break
            try:
                payload = fetched.json()
            except (ValueError, UnicodeDecodeError) as exc:
                results.append(
                    ParseResult(Outcome.PARSE_ERROR, "search", detail=f"malformed JSON: {exc}")
                )
                break
            page = parse_browse_search(payload)
            results.append(page)
            next_url = payload.get("next") if isinstance(payload, Mapping) else None
            if page.outcome != Outcome.OK or not isinstance(next_url, str) or not next_url:
                break
            if not self._same_host(next_url):
                log.warning("eBay next link leaves %s; not followed", self.base_url)
                break
            url, params = next_url, None
        return results


def client_from_env(
    http: PoliteClient,
    env: Mapping[str, str],
    clock: Callable[[], float] = time.time,
    *,
    base_url: str = API_BASE_URL,
) -> EbayBrowseClient | None:
    """A Browse API client when credentials are configured in `env`, else None (scrape).

    `base_url` is the API origin from the settings (a local server in tests).
    """
    credentials = credentials_from_env(env)
    if credentials is None:
        return None
    return EbayBrowseClient(http, credentials, clock, base_url=base_url)
