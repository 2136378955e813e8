"""XPath and text helpers shared by the eBay page parsers."""

import re

from lxml import etree

from sources.retail.ebay.classes import TITLE_NOISE


def has(cls: str) -> str:
    """XPath test: the element's class list contains `cls` (a whole token).

    The plain substring test first lets XPath skip the costly concat on most elements.
    """
    return (
        f"(contains(@class, '{cls}')"
        f" and contains(concat(' ', normalize-space(@class), ' '), ' {cls} '))"
    )


def xp(path: str) -> etree.XPath:
    """A compiled XPath."""
    return etree.XPath(path)


def first(found: list) -> etree._Element | None:
    """The first element found, or None."""
    return found[0] if found else None


def classes(node: etree._Element) -> list[str]:
    """The element's class tokens."""
    return (node.get("class") or "").split()


def text_of(node: etree._Element | None) -> str:
    """The element's text (comments and markup dropped), whitespace collapsed."""
    if node is None:
        return ""
    return " ".join(node.xpath("string()").split())


def inside(element: etree._Element, container: etree._Element) -> bool:
    """True when `container` is an ancestor of `element`."""
    return any(ancestor is container for ancestor in element.iterancestors())


def in_class(node: etree._Element, wanted: set[str] | frozenset[str]) -> bool:
    """True when an ancestor of `node` has one of the classes `wanted`."""
    return any(wanted.intersection(classes(ancestor)) for ancestor in node.iterancestors())


_NEW_LISTING = re.compile(r"^\s*(?:new listing|neues angebot|新規出品)\s*", re.I)
_OPENS_IN_NEW_WINDOW = re.compile(
    r"\s*(?:Opens in a new window or tab|Wird in neuem Fenster oder Tab geöffnet|"
    r"新しいウィンドウまたはタブに表示されます)\s*$",
    re.I,
)


def clean_title(node: etree._Element | None) -> str:
    """A card title without the "New Listing" badge and the screen-reader suffix."""
    if node is None:
        return ""
    parts = []
    for piece in node.xpath(".//text()"):
        owner = piece.getparent()
        if piece.is_tail:
            owner = owner.getparent()
        # Badges and screen-reader text sit in their own spans: skipping those is exact;
        # the regexes below only catch copies printed without markup.
        noisy = False
        while owner is not None and owner is not node:
            if TITLE_NOISE.intersection(classes(owner)):
                noisy = True
                break
            owner = owner.getparent()
        if not noisy:
            parts.append(str(piece))
    title = " ".join(" ".join(parts).split())
    title = _NEW_LISTING.sub("", title)
    return _OPENS_IN_NEW_WINDOW.sub("", title).strip()
