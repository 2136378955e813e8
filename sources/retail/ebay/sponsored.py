"""Sponsored labels: whether a result card is an ad, through eBay's obfuscations.

"Sponsored" labels are obfuscated, differently in every era: letter soup whose decoy
letters per-page CSS hides, text drawn in an SVG background, per-page web fonts, CSS
filters. The first two (and the 2022 class-pair scheme) are decoded here; for the others
the flag is unknown (None), not False.
"""

import base64
import binascii
import re
import unicodedata

from lxml import etree

from sources.retail.ebay.cards import ROLE_TEXT, CardIndex
from sources.retail.ebay.classes import SCard, SItem
from sources.retail.ebay.markup import classes, text_of, xp

_SPONSORED_LABELS = (
    "sponsored",
    "anzeige",
    "gesponsert",
    "sponsorisé",
    "sponsorizzato",
    "patrocinado",
    "gesponsord",
    "sponsorowane",
    "スポンサー",
)
# Cyrillic and Greek letters eBay mixes into the label so that a plain text search fails.
_CONFUSABLES = str.maketrans(
    "АаВЕеЅѕІіЈјКкМНОоРрСсТУуХхΑΒΕΗΙΚΜΝΟοΡρΤΥΧ",
    "AaBEeSsIiJjKkMHOoPpCcTYyXxABEHIKMNOoPpTYX",
)
# Obfuscated class names are per page, so these are patterns, not entries of `classes.py`.
_OBFUSCATED_CLASS = re.compile(r"^s-[0-9a-z]{5,8}$")
_CLASS_PAIR = re.compile(r"^(?:fj_)?(s-[0-9a-z]{5,8})_s-[0-9a-z]{5,8}$")
_CSS_RULE = re.compile(r"([^{}]+)\{([^{}]*)\}")
_CSS_SIMPLE_SELECTOR = re.compile(r"^(?:[a-z]+)?\.([\w-]+)$")
_CSS_VAR = re.compile(r"var\(\s*(--[\w-]+)\s*\)")
_SVG_DATA = re.compile(r"data:image/svg\+xml;base64,([A-Za-z0-9+/=]+)")
_SVG_TEXT = re.compile(r"<text\b([^>]*)>(.*?)</text>", re.S)
_SVG_ATTR = re.compile(r"([\w-]+)\s*=\s*(?:'([^']*)'|\"([^\"]*)\")")
_LEADING_NUMBER = re.compile(r"\s*(-?\d+(?:\.\d+)?)")
_RGBA_ALPHA = re.compile(r"rgba\([^)]*,\s*(-?[\d.]+)\s*\)")

_X_STYLES = xp("//style/text()")
_X_SVG_STYLED = xp("descendant-or-self::*[contains(@style, 'data:image/svg+xml')]")
_X_LEAF_SPANS = xp(".//span[@class][not(.//span)]")
_X_CLASSED = xp("descendant-or-self::*[@class]")
_X_ARIA = xp("descendant-or-self::*[@aria-labelledby]")


def _normalise_label(text: str) -> str:
    """Fold look-alike letters, drop invisible separators and spaces, casefold."""
    text = unicodedata.normalize("NFKC", text).translate(_CONFUSABLES)
    return "".join(
        c for c in text if not c.isspace() and unicodedata.category(c) not in ("Cf", "Cc")
    ).casefold()


def _is_sponsored_label(text: str) -> bool:
    folded = _normalise_label(text)
    return any(label in folded for label in _SPONSORED_LABELS)


def _number(value: str | None, default: float) -> float:
    match = _LEADING_NUMBER.match(value or "")
    return float(match.group(1)) if match else default


def _svg_visible_text(payload: str) -> str | None:
    """Text an SVG background draws at a readable size and opacity (2025 scheme)."""
    try:
        svg = base64.b64decode(payload).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return None
    drawn = []
    for attributes, text in _SVG_TEXT.findall(svg):
        pairs = [
            (name.lower(), single or double)
            for name, single, double in _SVG_ATTR.findall(attributes)
        ]
        props = {name: value for name, value in pairs if name != "style"}
        for name, value in pairs:
            if name == "style":
                # The style attribute overrides presentation attributes; the last one wins.
                for part in value.split(";"):
                    key, sep, val = part.partition(":")
                    if sep:
                        props[key.strip().lower()] = val.strip()
        alpha = _RGBA_ALPHA.match(props.get("fill", ""))
        if (
            _number(props.get("font-size"), 16.0) >= 1.0
            and _number(props.get("opacity"), 1.0) > 0.05
            and (float(alpha.group(1)) if alpha else 1.0) > 0.05
            and props.get("display") != "none"
            and props.get("visibility") != "hidden"
        ):
            drawn.append(text)
    return "".join(drawn)


class PageStyles:
    """Which obfuscation classes the page's own CSS shows or hides.

    Reads simple rules only: `span.s-abc123 {display: none}`, the same through a
    `:root{--x: none}` variable, and "visually hidden" off-screen positioning. A class
    without such a rule is not in `shown`.
    """

    def __init__(self, root: etree._Element):
        css = "\n".join(_X_STYLES(root))
        variables: dict[str, str] = {}
        rules: dict[str, dict[str, str]] = {}
        for selectors, body in _CSS_RULE.findall(css):
            declarations = {}
            for part in body.split(";"):
                name, sep, value = part.partition(":")
                if sep:
                    declarations[name.strip().lower()] = value.strip().lower()
            names = [s.strip() for s in selectors.split(",")]
            if ":root" in names:
                variables.update({k: v for k, v in declarations.items() if k.startswith("--")})
                continue
            for name in names:
                if match := _CSS_SIMPLE_SELECTOR.match(name):
                    rules.setdefault(match.group(1), {}).update(declarations)
        self.shown: dict[str, bool] = {}
        for cls, declarations in rules.items():
            display = declarations.get("display")
            if display and (var := _CSS_VAR.search(display)):
                display = variables.get(var.group(1))
            offscreen = declarations.get("position") == "absolute" and (
                _number(declarations.get("left"), 0.0) < -999
            )
            if display == "none" or offscreen:
                self.shown[cls] = False
            elif display:
                self.shown[cls] = True

    def visible_text(self, label: etree._Element) -> str | None:
        """The label's text as a browser would draw it, or None when that cannot be told."""
        for node in _X_SVG_STYLED(label):
            if svg := _SVG_DATA.search(node.get("style", "")):
                return _svg_visible_text(svg.group(1))
        letters = [
            span
            for span in _X_LEAF_SPANS(label)
            if len(classes(span)) == 1 and _OBFUSCATED_CLASS.match(classes(span)[0])
        ]
        if len(letters) >= 3:
            # Letter soup: one letter per span, the page's CSS hides the decoys. A class
            # without a rule is drawn (the CSS default).
            return "".join(
                text_of(span) for span in letters if self.shown.get(classes(span)[0], True)
            )
        for node in _X_CLASSED(label):
            for cls in classes(node):
                if match := _CLASS_PAIR.match(cls):
                    # "A_B" class pairs: the label is drawn when A is displayed (ebay.de
                    # 2022; the one placeholder carries the shown pair). With no display
                    # rule for A, web fonts, filters or script decide: unknown.
                    shown = self.shown.get(match.group(1))
                    if shown is None:
                        return None
                    return text_of(node) if shown else ""
        if _X_ARIA(label):
            # An obfuscated label in a scheme not handled above.
            return None
        return text_of(label)


def sponsored(index: CardIndex, styles: PageStyles) -> bool | None:
    """True/False when the card's sponsored label could be read, None when it could not."""
    unknown = False
    labels = index.all(SItem.TAGBLOCK, SCard.SEP, SItem.SEP, ROLE_TEXT)
    for label in labels:
        text = styles.visible_text(label)
        if text is None:
            unknown = True
        elif _is_sponsored_label(text):
            return True
    return None if unknown else False
