"""Archived retail responses -> page outcomes and listing rows (pure, no Dagster).

The same function serves the bundled snapshot and a live night: both are an archive of
responses; only how the archive was filled differs.
"""

import datetime as dt
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

import polars as pl

from sources.retail import amazon, ebay, ebay_api
from sources.retail.document import declared_charset
from sources.retail.records import Outcome, ParseResult

# (body, url, charset of the Content-Type header) -> result.
Parser = Callable[[bytes, str | None, str | None], ParseResult]


def _json_parser(parse: Callable[[object], ParseResult]) -> Parser:
    """An API response parser over archived bytes; a body that is not JSON is a parse_error."""

    def parse_bytes(
        content: bytes, url: str | None = None, charset: str | None = None
    ) -> ParseResult:
        del url, charset  # JSON is UTF-8 and names its own marketplace
        try:
            payload = json.loads(content)
        except (ValueError, RecursionError) as exc:  # not JSON, nested past the stack
            return ParseResult(Outcome.PARSE_ERROR, "unknown", detail=f"not JSON: {exc}")
        try:
            return parse(payload)
        except Exception as exc:  # like the HTML parsers: bad input is an outcome
            return ParseResult(Outcome.PARSE_ERROR, "unknown", detail=f"{type(exc).__name__}")

    return parse_bytes


# Archive source -> parser. HTML pages from scraping, JSON from eBay's official API (Amazon's
# PA-API 5 was retired in 2026-05: Amazon live prices come from its pages only).
PARSERS: dict[str, Parser] = {
    "amazon": amazon.parse_amazon,
    "ebay": ebay.parse_ebay,
    ebay_api.ARCHIVE_SOURCE: _json_parser(ebay_api.parse_browse_search),
}


def classify_block_page(url: str, status: int, content: bytes) -> str | None:
    """'captcha' / 'blocked' for a retailer's bot wall (served as HTTP 200), else None.

    The polite client calls this on every response to open its circuit breaker.
    """
    # Both detectors look only for their own site's wall, so trying both is safe and does
    # not depend on the host name (mirrors, test servers, regional domains).
    return amazon.is_block_page(content) or ebay.is_block_page(content)


PAGE_SCHEMA = {
    "day": pl.Date,
    "fetched_at": pl.Datetime("us"),
    "source": pl.Utf8,
    "url": pl.Utf8,
    "status": pl.Int32,
    "outcome": pl.Utf8,
    "page_kind": pl.Utf8,
    "records": pl.Int32,
    "dropped": pl.Utf8,
    "detail": pl.Utf8,
    "archive_sha256": pl.Utf8,
}
LISTING_SCHEMA = {
    "observed_at": pl.Datetime("us"),
    "source": pl.Utf8,
    "title": pl.Utf8,
    "price": pl.Float64,
    "price_high": pl.Float64,
    "currency": pl.Utf8,
    "url": pl.Utf8,
    "listing_id": pl.Utf8,
    "condition": pl.Utf8,
    "sponsored": pl.Boolean,
    "sold": pl.Boolean,
    "sold_date": pl.Date,
    "best_offer_accepted": pl.Boolean,
    "price_missing_reason": pl.Utf8,
    "archive_sha256": pl.Utf8,
    "citation": pl.Utf8,
    "extra": pl.Utf8,
}


class Archived(Protocol):
    """What an archive entry offers (see sources.archive.ArchivedResponse)."""

    url: str
    status: int
    fetched_at: dt.datetime
    source: str
    sha256: str

    def read(self) -> bytes:
        """The stored bytes."""
        ...


def _short_body(size: int, headers: Mapping[str, str]) -> str | None:
    """Why a body of `size` bytes as received is cut short of its Content-Length, or None."""
    fields = {str(k).lower(): str(v) for k, v in headers.items()}
    if fields.get("content-encoding", "identity") not in ("", "identity"):
        return None  # the header counts encoded bytes; the body is stored decoded
    try:
        announced = int(fields["content-length"])
    except (KeyError, ValueError):
        return None
    if size < announced:
        return f"truncated body: {size} of {announced} bytes (Content-Length)"
    return None


def _naive_utc(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is None:
        return moment
    return moment.astimezone(dt.UTC).replace(tzinfo=None)


def parse_responses(
    responses: Iterable[Archived], citation: Callable[[Archived], str] | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Parse every archived retail response; return (pages, listings).

    A non-2xx response is an `http_error` page without parsing; a page whose source has no
    parser is a `parse_error` page. Nothing raises for bad input.
    """
    pages, listings = [], []
    for response in responses:
        fetched = _naive_utc(response.fetched_at)
        parser = PARSERS.get(response.source)
        if not 200 <= response.status < 300:
            result = ParseResult(Outcome.HTTP_ERROR, "unknown", detail=f"HTTP {response.status}")
        elif parser is None:
            result = ParseResult(
                Outcome.PARSE_ERROR, "unknown", detail=f"no parser for {response.source!r}"
            )
        else:
            content = response.read()
            # The size as received: redaction may have shortened the stored body.
            received = getattr(response, "received_size", None) or len(content)
            short = _short_body(received, getattr(response, "headers", None) or {})
            if short:
                result = ParseResult(Outcome.PARSE_ERROR, "unknown", detail=short)
            else:
                content_type = getattr(response, "content_type", None)
                result = parser(content, response.url, declared_charset(content_type))
        pages.append(
            {
                "day": fetched.date(),
                "fetched_at": fetched,
                "source": response.source,
                "url": response.url,
                "status": response.status,
                "outcome": str(result.outcome),
                "page_kind": result.page_kind,
                "records": len(result.records),
                "dropped": json.dumps(result.dropped, sort_keys=True) if result.dropped else None,
                "detail": result.detail or None,
                "archive_sha256": response.sha256,
            }
        )
        cite = citation(response) if citation else response.url
        for record in result.records:
            listings.append(
                {
                    "observed_at": fetched,
                    "source": record.source,
                    "title": record.title,
                    "price": record.price,
                    "price_high": record.price_high,
                    "currency": record.currency,
                    "url": record.url,
                    "listing_id": record.listing_id,
                    "condition": record.condition,
                    "sponsored": record.sponsored,
                    "sold": record.sold,
                    "sold_date": record.sold_date,
                    "best_offer_accepted": record.best_offer_accepted,
                    "price_missing_reason": record.price_missing_reason,
                    "archive_sha256": response.sha256,
                    "citation": cite,
                    "extra": json.dumps(record.extra, sort_keys=True, ensure_ascii=False)
                    if record.extra
                    else None,
                }
            )
    return (
        pl.DataFrame(pages, schema=PAGE_SCHEMA),
        pl.DataFrame(listings, schema=LISTING_SCHEMA),
    )
