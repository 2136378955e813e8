"""Item (VIP) pages -> one record; the printed price wins over the page's ld+json."""

import json
import math
import re

from lxml import etree

from sources.retail.ebay.classes import Item
from sources.retail.ebay.fields import OR_BEST_OFFER
from sources.retail.ebay.markup import first, has, text_of, xp
from sources.retail.ebay.site import SOURCE, X_CANONICAL, Site, item_id, page_site
from sources.retail.money import Price, parse_price, price_or_reason
from sources.retail.records import Listing, Outcome, ParseResult

_SCHEMA_CONDITION = re.compile(r"schema\.org/(\w+?)Condition$")
_X_LD_JSON = xp("//script[@type='application/ld+json']/text()")
_X_ITEM_MARKERS = xp(
    f"//h1[{has(Item.TITLE)}] | //div[{has(Item.PRICE)}]"
    f" | //*[@id='{Item.TITLE_ID}' or @id='{Item.PRICE_IDS[0]}']"
)
_X_ITEM_TITLE = xp(f"//*[{has(Item.TITLE)}]")
_X_ITEM_TITLE_BOLD = xp(f".//*[{has(Item.TITLE_BOLD)}]")
_X_ITEM_TITLE_OLD = xp(f"//*[@id='{Item.TITLE_ID}'] | //h1")
_X_PRICE_PRIMARY = xp(f"//*[{has(Item.PRICE)}]")
_X_OR_BEST_OFFER = xp(f".//*[{has(Item.OR_BEST_OFFER)}]")
_X_PRICE_SPANS = xp(f".//*[{has(Item.TEXT_SPANS)}][not(ancestor::*[{has(Item.OR_BEST_OFFER)}])]")
_X_PRICE_OLD = xp("//*[" + " or ".join(f"@id='{i}'" for i in Item.PRICE_IDS) + "]")
_X_PRICE_APPROX = xp(f"//*[{has(Item.PRICE_APPROX)}]")
_X_CONDITION = xp(
    "//*[" + " or ".join(has(c) for c in Item.CONDITION) + "]"
    f"//*[{has(Item.TEXT_SPANS)}] | //*[@id='{Item.CONDITION_ID}']"
)


def _ld_product(root: etree._Element) -> dict:
    """The page's schema.org Product object from ld+json, or {}."""
    for script in _X_LD_JSON(root):
        try:
            data = json.loads(script)
        except (json.JSONDecodeError, TypeError):
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(item)
            elif isinstance(item, dict):
                kind = item.get("@type")
                if kind == "Product" or (isinstance(kind, list) and "Product" in kind):
                    return item
                stack.extend(item.get("@graph") or [])
    return {}


def _one_dict(value: object) -> dict:
    """The object itself, or the first of a list of objects; {} otherwise."""
    if isinstance(value, list):
        value = value[0] if value else {}
    return value if isinstance(value, dict) else {}


# What schema.org's `price` holds: digits with "." as the decimal mark, at most two decimals
# (a "1.299,00" or "12.345" is some locale's text, not a schema.org number).
_LD_NUMBER = re.compile(r"[0-9]{1,10}(?:\.[0-9]{1,2})?", re.ASCII)


def _ld_amount(value: object) -> float | None:
    """A non-negative finite amount from ld+json (number or strict decimal string), else None."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, str):
        return float(value) if _LD_NUMBER.fullmatch(value.strip()) else None
    amount = float(value)
    if not (math.isfinite(amount) and 0 <= amount < 1e10) or round(amount, 2) != amount:
        return None
    return amount


def is_item(root: etree._Element) -> bool:
    """Whether the page is an item page: its markup, or a canonical /itm/ url and a Product."""
    if _X_ITEM_MARKERS(root):
        return True
    return any(item_id(c) for c in X_CANONICAL(root)) and bool(_ld_product(root))


def _title(root: etree._Element, product: dict) -> str:
    """The printed title (its bold part on the 2020s layout), else the ld+json name."""
    title_node = first(_X_ITEM_TITLE(root))
    if title_node is not None:
        bold = first(_X_ITEM_TITLE_BOLD(title_node))
        title_node = bold if bold is not None else title_node
    else:
        title_node = first(_X_ITEM_TITLE_OLD(root))
    title = re.sub(r"^Details about\s+", "", text_of(title_node)).rstrip(" -")
    return title or str(product.get("name") or "")


def _price_text(root: etree._Element, extra: dict[str, str]) -> str:
    """The primary price text; notes "or Best Offer" in `extra`."""
    primary = first(_X_PRICE_PRIMARY(root))
    if primary is None:
        old = first(_X_PRICE_OLD(root))
        return (old.get("content") or text_of(old)) if old is not None else ""
    best_offer = first(_X_OR_BEST_OFFER(primary))
    if best_offer is not None:
        extra["best_offer"] = text_of(best_offer)
    span = first(_X_PRICE_SPANS(primary))
    # Not `span or primary`: an lxml element without children is falsy.
    price_text = text_of(span if span is not None else primary)
    if match := OR_BEST_OFFER.search(price_text):
        extra.setdefault("best_offer", match.group(0))
        price_text = OR_BEST_OFFER.sub("", price_text).strip()
    return price_text


def _price(
    root: etree._Element, site: Site, offer: dict, extra: dict[str, str]
) -> tuple[Price | None, str | None]:
    """(price, why there is none); notes the printed text and the ld+json cross-check.

    ld+json `offers.price` can be a conversion (the RTX 5090 page prints EUR 3,500.00 and
    its ld+json says 3971.45 USD), so it is only a fallback and a cross-check in `extra`.
    """
    price_text = _price_text(root, extra)
    price, reason = price_or_reason(price_text, site.currency)
    if price_text:
        extra["price_text"] = price_text
    ld_price = _ld_amount(offer.get("price"))
    ld_currency = offer.get("priceCurrency")
    if ld_price is not None:
        extra["ld_json_price"] = f"{ld_price:g} {ld_currency or ''}".strip()
        if price is None and not price_text:
            # Only when the page prints no price: a printed price that is unreadable stays
            # unread rather than replaced by a figure that may be a conversion.
            price = parse_price(f"{ld_price:.2f} {ld_currency or ''}", site.currency)
            extra["price_from"] = "ld+json"
        elif (
            price is not None
            and ld_currency == price.currency
            and abs(ld_price - price.low) > 0.005
        ):
            extra["price_check"] = "ld+json disagrees"
    approx = first(_X_PRICE_APPROX(root))
    if approx is not None:
        extra["approx_price"] = text_of(approx)
    if price:
        return price, None
    return None, reason if price_text and reason != "no number" else "no price on item page"


def _condition(root: etree._Element, offer: dict) -> str | None:
    """The printed condition, else the schema.org one of the ld+json offer."""
    condition = text_of(first(_X_CONDITION(root))) or None
    if condition is None:
        if match := _SCHEMA_CONDITION.search(str(offer.get("itemCondition", ""))):
            condition = match.group(1)
    return condition


def _listing_id(root: etree._Element, url: str | None, offer: dict) -> str | None:
    """The listing id from the canonical url, the fetched url, or the ld+json offer url."""
    listing_id = None
    for candidate in [*X_CANONICAL(root), url, offer.get("url")]:
        if listing_id := item_id(candidate):
            break
    return listing_id


def _shipping(offer: dict, price: Price | None) -> float | None:
    """The ld+json shipping rate, when it is in the price's currency."""
    rate = _one_dict(_one_dict(offer.get("shippingDetails")).get("shippingRate"))
    if price is not None and rate.get("currency") == price.currency:
        return _ld_amount(rate.get("value"))
    return None


def parse_item(root: etree._Element, url: str | None) -> ParseResult:
    """One record from an item page; the primary price wins over ld+json."""
    site = page_site(url, root)
    product = _ld_product(root)
    offer = _one_dict(product.get("offers"))
    extra: dict[str, str] = {}

    title = _title(root, product)
    if not title:
        return ParseResult(Outcome.PARSE_ERROR, "item", detail="item page without a title")
    price, missing_reason = _price(root, site, offer, extra)
    condition = _condition(root, offer)
    listing_id = _listing_id(root, url, offer)
    record = Listing(
        source=SOURCE,
        listing_id=listing_id,
        title=title,
        price=price.low if price else None,
        price_high=price.high if price else None,
        currency=price.currency if price else site.currency,
        condition=condition,
        sold=None,
        sold_date=None,
        best_offer_accepted=False,
        sponsored=False,
        url=site.item_url(listing_id) if listing_id else None,
        price_missing_reason=missing_reason,
        shipping=_shipping(offer, price),
        extra=extra,
    )
    return ParseResult(Outcome.OK, "item", (record,))
