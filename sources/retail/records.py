"""What a retail page parser returns: typed records plus a classified outcome.

Parsers are pure functions from bytes to a `ParseResult`. A block page served with HTTP
200 (Amazon's /errors/validateCaptcha, eBay's "Pardon Our Interruption") is an outcome,
never an empty list of records; a price is never 0 for "no price": it is None with a reason.
"""

import datetime as dt
import math
from dataclasses import asdict, dataclass, field
from enum import StrEnum


class Outcome(StrEnum):
    """How a fetched page is classified."""

    OK = "ok"  # records found
    EMPTY = "empty"  # a real results page with no results
    CAPTCHA = "captcha"  # a bot check (Amazon captcha / "continue shopping" button)
    BLOCKED = "blocked"  # a block page (eBay "Pardon Our Interruption", HTTP 403)
    HTTP_ERROR = "http_error"  # a non-2xx status, a timeout, a reset connection
    PARSE_ERROR = "parse_error"  # a page we do not understand


@dataclass(frozen=True)
class Listing:
    """One offer or sale on a retail page."""

    source: str  # "amazon" or "ebay"
    listing_id: str | None  # ASIN or eBay item id
    title: str
    price: float | None  # low end of a range; None when the card shows no price
    price_high: float | None  # high end of a range, else None
    currency: str | None  # ISO 4217
    condition: str | None  # the page's condition text, e.g. "Pre-Owned", "Brand New"
    sold: bool | None  # eBay sold/completed pages: True sold, False ended unsold
    sold_date: dt.date | None
    best_offer_accepted: bool  # eBay: struck-through price, the real price is hidden
    sponsored: bool
    url: str | None
    price_missing_reason: str | None = None  # why price is None
    shipping: float | None = None  # shipping cost in `currency`, when shown
    extra: dict[str, str] = field(default_factory=dict)  # anything else worth keeping

    # The fields `python -m sources parse` prints, in order.
    CLI_FIELDS = (
        "listing_id",
        "title",
        "price",
        "price_high",
        "currency",
        "condition",
        "sold",
        "sold_date",
        "best_offer_accepted",
        "sponsored",
        "url",
    )

    def __post_init__(self) -> None:
        # The last line of defence of "a price is finite, positive and on the page": a
        # parser bug that slips past the price reader fails the page, never the model.
        for name in ("price", "price_high"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} {value!r} is not a finite positive amount")
        if self.shipping is not None and not (math.isfinite(self.shipping) and self.shipping >= 0):
            raise ValueError(f"shipping {self.shipping!r} is not a finite amount")

    def to_cli(self) -> dict[str, object]:
        """The JSON object `python -m sources parse` prints for this record."""
        data = asdict(self)
        out = {key: data[key] for key in self.CLI_FIELDS}
        if out["sold_date"] is not None:
            out["sold_date"] = out["sold_date"].isoformat()
        return out


@dataclass(frozen=True)
class ParseResult:
    """A parsed page: its kind, outcome, records and what was dropped."""

    outcome: Outcome
    page_kind: str  # "search", "item", "captcha", "block", "unknown"
    records: tuple[Listing, ...] = ()
    detail: str = ""  # human-readable reason for a non-ok outcome
    dropped: dict[str, int] = field(default_factory=dict)  # e.g. {"placeholder": 2}
