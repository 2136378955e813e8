"""Every CSS class and element id the eBay parsers rely on, in one table.

When eBay renames a class, this is the one place to change it. Grouped by page kind and by
result-card layout: the 2025-2026 `li.s-card` and the <=2025 `li.s-item` cards.

The obfuscated classes of sponsored labels ("s-abc123") are not names but patterns; they
are in `sponsored.py`, next to the code that decodes them.
"""


class Search:
    """A search-results page, outside the cards."""

    RESULTS = "srp-results"  # ul of result cards
    RESULTS_ID = "srp-river-results"  # id of the results container
    COUNT_HEADING = "srp-controls__count-heading"  # h1 "242 results for ..."
    BOLD = "BOLD"  # the bold count (and query) inside the heading
    NULL_SEARCH = "srp-save-null-search"  # "No exact matches found"
    NULL_HEADING = "srp-save-null-search__heading"
    CAROUSEL = "srp-river-answer"  # promoted carousels inside the result list
    REWRITE = "srp-river-answer--REWRITE_START"  # "Results matching fewer words"
    # Visually hidden containers: the "Shop on eBay" template cards sit in one.
    HIDDEN = frozenset({"clipped", "s-clipped"})


class SCard:
    """A 2025-2026 `li.s-card` result card."""

    CARD = "s-card"
    TITLE = "s-card__title"
    LINK = "s-card__link"
    PRICE = "s-card__price"
    PRICE_STRUCK = "strikethrough"  # on the price element itself
    SUBTITLE = "s-card__subtitle"
    ATTRIBUTE_ROW = "s-card__attribute-row"
    CAPTION = "s-card__caption"
    NEW_LISTING = "s-card__new-listing"
    SEP = "s-card__sep"  # holds the sponsored label


class SItem:
    """A <=2025 `li.s-item` result card."""

    CARD = "s-item"
    TITLE = "s-item__title"
    LINK = "s-item__link"
    PRICE = "s-item__price"
    SUBTITLE = "s-item__subtitle"
    SECONDARY_INFO = "SECONDARY_INFO"  # the condition, inside a subtitle
    # The sold date sat in the tagblock's POSITIVE span, later in a caption element.
    CAPTIONS = frozenset({"s-item__caption--signal", "s-item__caption", "s-item__ended-date"})
    TAGBLOCK = "s-item__title--tagblock"  # also holds the sponsored label
    POSITIVE = "POSITIVE"
    NEGATIVE = "NEGATIVE"
    STRIKETHROUGH = "STRIKETHROUGH"
    NEW_LISTING = "LIGHT_HIGHLIGHT"  # the "New Listing" badge inside the title
    SHIPPING = ("s-item__shipping", "s-item__logisticsCost")
    FREE_X_DAYS = "s-item__freeXDays"  # ebay.de 2022: "Gratis 3-Tage-Lieferung" instead
    SEP = "s-item__sep"  # holds the sponsored label
    # Other attribute lines: purchase options, bids, location, best offer.
    ROWS = (
        "s-item__purchase-options",
        "s-item__purchaseOptionsWithIcon",
        "s-item__bids",
        "s-item__bidCount",
        "s-item__location",
        "s-item__itemLocation",
        "s-item__formatBestOfferEnabled",
        "s-item__formatBestOfferAccepted",
    )


# Spans inside a card title that are not the title: badges and screen-reader text.
TITLE_NOISE = frozenset({"clipped", SItem.NEW_LISTING, SCard.NEW_LISTING})

# The classes a card is indexed by (see `cards.CardIndex`).
CARD_CLASSES = frozenset(
    {
        SCard.TITLE,
        SCard.LINK,
        SCard.PRICE,
        SCard.SUBTITLE,
        SCard.ATTRIBUTE_ROW,
        SCard.CAPTION,
        SCard.NEW_LISTING,
        SCard.SEP,
        SItem.TITLE,
        SItem.LINK,
        SItem.PRICE,
        SItem.SUBTITLE,
        SItem.SECONDARY_INFO,
        *SItem.CAPTIONS,
        SItem.TAGBLOCK,
        SItem.POSITIVE,
        SItem.NEGATIVE,
        SItem.STRIKETHROUGH,
        SItem.NEW_LISTING,
        *SItem.SHIPPING,
        SItem.FREE_X_DAYS,
        SItem.SEP,
        *SItem.ROWS,
    }
)


class Item:
    """An item (VIP) page: the 2020s `x-` layout and the older one by element id."""

    TITLE = "x-item-title__mainTitle"
    TITLE_BOLD = "ux-textspans--BOLD"
    PRICE = "x-price-primary"
    OR_BEST_OFFER = "x-price-primary__orBestOffer"
    TEXT_SPANS = "ux-textspans"
    PRICE_APPROX = "x-price-approx__price"  # "Approximately US $3,971.45"
    CONDITION = ("x-item-condition-text", "x-item-condition-value")
    # The older layout's element ids.
    TITLE_ID = "itemTitle"
    PRICE_IDS = ("prcIsum", "mm-saleDscPrc", "prcIsum_bidPrice")
    CONDITION_ID = "vi-itm-cond"
