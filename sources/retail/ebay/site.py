"""Which eBay site a page is from, and what its urls say: currency, item ids, item urls."""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from lxml import etree

from sources.retail.ebay.markup import xp

SOURCE = "ebay"

# Site (everything after "ebay.") -> the currency prices on that site are in.
SITE_CURRENCY = {
    "com": "USD",
    "co.uk": "GBP",
    "de": "EUR",
    "fr": "EUR",
    "it": "EUR",
    "es": "EUR",
    "at": "EUR",
    "ie": "EUR",
    "nl": "EUR",
    "be": "EUR",
    "ca": "CAD",
    "com.au": "AUD",
    "ch": "CHF",
    "pl": "PLN",
}
_HOST = re.compile(r"(?:^|\.)ebay\.([a-z.]+?)\.?$")
_ITEM_ID = re.compile(r"/itm/(?:[^/?#]+/)?(\d{6,19})(?=[/?#]|$)")

X_CANONICAL = xp("//link[@rel='canonical']/@href | //meta[@property='og:url']/@content")


def item_id(href: str | None) -> str | None:
    """The listing id in an item url ("/itm/<title>/<id>" or "/itm/<id>"), or None."""
    match = _ITEM_ID.search(href or "")
    return match.group(1) if match else None


@dataclass(frozen=True)
class Site:
    """The eBay site a page came from."""

    tld: str  # "com", "co.uk", "de", ...

    @property
    def currency(self) -> str | None:
        """The currency prices on this site are in, when known."""
        return SITE_CURRENCY.get(self.tld)

    def item_url(self, listing_id: str) -> str:
        """The canonical url of a listing on this site."""
        return f"https://www.ebay.{self.tld}/itm/{listing_id}"


def site_of(url: str | None) -> Site | None:
    """The eBay site of a url, or None for any other host."""
    host = urlsplit(url or "").hostname or ""
    match = _HOST.search(host)
    return Site(match.group(1)) if match else None


def page_site(url: str | None, root: etree._Element) -> Site:
    """The site from the fetched url, else the page's canonical link, else ebay.com."""
    if site := site_of(url):
        return site
    for candidate in X_CANONICAL(root):
        if site := site_of(candidate):
            return site
    return Site("com")
