"""Where each retail price source's prices come from: country, currency, label, unit.

One table for every retail source of `sources.bundled.RETAIL_SOURCES` (the bundled curated
history and the live page sources), written once so the warehouse's `current_prices`
(`source_country`, `source_currency`), the price interval (model/price_uncertainty.py: which
sources' same-day observations are separate listings) and the site's price labels
("$2,400 (1 sale, eBay UK, GBP→USD)") all read the same facts. What each source is, with
its citation, is in sources/data/prices/MANIFEST.md; tests/sources/test_price_origins.py
checks that every retail source has a row here.

`listings` says whether a day's observations of one GPU from the source are separate
offers or sales (eBay sold listings, an Amazon search page's result cards) or repeated
points of one offer or one figure (Keepa's price history of one Amazon product, Lambda's
quote, a monthly average): only the former measure the spread between listings a buyer
faces, and only they count as more than one observation for the interval.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Origin:
    """Country (ISO 3166 alpha-2) and currency (ISO 4217) of a source's prices."""

    country: str
    currency: str
    label: str  # shown on the site; names the country, e.g. "eBay UK", "Amazon US"
    unit: str  # what one observation is: "sale", "listing", "price point", "quote", ...
    listings: bool  # a day's observations are separate listings (see the module docstring)
    # A list price (a vendor's or reseller's published price, a launch MSRP), not a street
    # observation: model/market_consistency.py lets it stand only where no newer street
    # price exists, and the site labels it.
    list_price: bool = False
    # Sales tax included in the source's prices (EU retail asks include VAT; US prices are
    # quoted before sales tax): the USD conversion divides it out (sources/fx.add_usd), so
    # every price in the warehouse is comparable, before tax.
    vat_rate: float = 0.0
    # A seller's asking price (a shop listing, an Amazon buy box, a tracker's lowest ask),
    # not a completed sale or a quote: model/implausible_asks.py sets aside a new-market ask
    # far above the same GPU's other figures from the same country (a placeholder price of
    # an item out of stock).
    ask: bool = False


ORIGINS: dict[str, Origin] = {
    # Page sources replayed from the archive: the bundled pages are amazon.com search results
    # and an ebay.com item page (MANIFEST.md). A live night's observation carries its own
    # currency in price_observations; the country here is the marketplace the plan searches.
    "amazon": Origin("US", "USD", "Amazon US", "listing", True, ask=True),
    "ebay": Origin("US", "USD", "eBay US", "listing", True, ask=True),
    # Curated history (sources/data/prices/history/<source>.csv).
    "datacenter-street-price": Origin(
        "US", "USD", "US data-center reseller", "listing", True, ask=True
    ),
    "ebay-auction-median": Origin("US", "USD", "eBay US auctions", "daily estimate", False),
    "ebay-sold-dataset": Origin("US", "USD", "eBay US", "sale", True),
    "ebay-sold-history": Origin("US", "USD", "eBay US", "sale", True),
    "ebay-sold-uk": Origin("GB", "GBP", "eBay UK", "sale", True),
    "delta-list-price": Origin("DE", "EUR", "Delta Computer DE list price", "quote", False, True),
    # Greek shops' asks, EUR incl. 24 % VAT (the standard rate, Greek VAT code art. 21).
    "gpu-prices-gr": Origin("GR", "EUR", "Greek retail", "listing", True, vat_rate=0.24, ask=True),
    # The tracker's daily lowest ask of a model across the same shops: one figure a day (not
    # separate listings), the cheapest offer, so below a typical ask.
    "gpu-prices-gr-daily-min": Origin(
        "GR",
        "EUR",
        "Greek retail, lowest ask of the day",
        "daily minimum",
        False,
        vat_rate=0.24,
        ask=True,
    ),
    "keepa-amazon": Origin("US", "USD", "Amazon US via Keepa", "price point", False, ask=True),
    "lambda-list-price": Origin("US", "USD", "Lambda US list price", "quote", False, True),
    "newegg-siliconvalueindex": Origin("US", "USD", "Newegg US", "listing", True, ask=True),
    "published-list-price": Origin("US", "USD", "US list price", "quote", False, True),
    "quoted-street-price": Origin("US", "USD", "US price quoted by a dated page", "quote", False),
    # A German page's quoted price (EUR). A German consumer price from a business seller
    # includes 19 % VAT (the standard rate, UStG section 12); divided out like the Greek one.
    "quoted-street-price-de": Origin(
        "DE", "EUR", "DE price quoted by a dated page", "quote", False, vat_rate=0.19
    ),
    "tomshardware-ebay": Origin("US", "USD", "eBay US (Tom's Hardware)", "monthly average", False),
}


# The sources whose prices are list prices, not street observations.
LIST_PRICE_SOURCES = tuple(sorted(name for name, o in ORIGINS.items() if o.list_price))
# The sources whose prices are sellers' asks (Origin.ask).
ASK_SOURCES = tuple(sorted(name for name, o in ORIGINS.items() if o.ask))


def origin(source: str) -> Origin | None:
    """The source's origin, or None for a source without a row (shown by its name)."""
    return ORIGINS.get(source)


def split_sources(sources: str | None) -> list[str]:
    """The distinct sources of a comma-joined `sources` value, sorted."""
    return sorted({s.strip() for s in (sources or "").split(",") if s.strip()})


def countries(sources: str | None) -> str | None:
    """Comma-joined distinct countries of a `sources` value (None if none is known)."""
    found = sorted({o.country for s in split_sources(sources) if (o := origin(s))})
    return ",".join(found) or None


def currencies(sources: str | None) -> str | None:
    """Comma-joined distinct currencies of a `sources` value (None if none is known)."""
    found = sorted({o.currency for s in split_sources(sources) if (o := origin(s))})
    return ",".join(found) or None


def all_listings(sources: str | None) -> bool:
    """True when every source of the value is known and counts separate listings."""
    parts = split_sources(sources)
    return bool(parts) and all((o := origin(s)) is not None and o.listings for s in parts)
