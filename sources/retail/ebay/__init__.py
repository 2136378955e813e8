"""eBay pages -> classified outcome and listing records (pure: bytes in, `ParseResult` out).

Four kinds of page are recognised:

- the bot wall ("Pardon Our Interruption", served with HTTP 200) -> `Outcome.BLOCKED`;
- search results, sold/completed or active, in both layouts eBay has used: the <=2025
  `li.s-item` cards and the 2025-2026 `li.s-card` cards;
- item (VIP) pages -> one record;
- anything else -> `Outcome.PARSE_ERROR` (the parser never raises).

Search pages begin with 1-2 hidden "Shop on eBay" template cards priced $20.00; they are
dropped and counted in `dropped["placeholder"]`. Listings in promoted carousels inside the
result list are not ranked results and are counted in `dropped["carousel"]`. When eBay has
no exact match it fills the page with "Results matching fewer words": those records are
kept (the title matcher decides what each card is) and marked `extra["match"] =
"fewer_words"`.

Sold pages: a card captioned "Sold <date>" is `sold=True`; "Ended <date>" is a completed
listing that did not sell (`sold=False`); active pages leave `sold=None`. A struck-through
price on a sold card means the listing sold through an accepted Best Offer: the printed
price is the seller's ask and the real price is hidden (see `cards.listing`).

"Sponsored" labels are obfuscated, differently in every era: letter soup whose decoy
letters per-page CSS hides, text drawn in an SVG background, per-page web fonts, CSS
filters. The first two (and the 2022 class-pair scheme) are decoded here; for the others
`sponsored` is False and `extra["sponsored"] = "unknown"` says the flag is not known
rather than false.

Parsing uses lxml with XPath: a 2 MB page takes about a tenth of a second.

The modules, by what they hold:

- `page`: the entry point `parse_ebay` and the bot-wall check `is_block_page`;
- `search`: search-results pages; `cards`: one result card in either layout;
- `item`: item (VIP) pages;
- `sponsored`: sponsored-label detection through the obfuscations;
- `fields`: readers for captions and dates, shipping lines and other printed rows;
- `site`: the eBay site of a url (currency, item ids and urls);
- `classes`: the one table of CSS class names and element ids the parsers rely on;
- `markup`: XPath and text helpers.
"""

from sources.retail.ebay.fields import parse_caption, parse_date, parse_shipping
from sources.retail.ebay.page import is_block_page, parse_ebay
from sources.retail.ebay.site import SITE_CURRENCY, SOURCE

__all__ = [
    "SITE_CURRENCY",
    "SOURCE",
    "is_block_page",
    "parse_caption",
    "parse_date",
    "parse_ebay",
    "parse_shipping",
]
