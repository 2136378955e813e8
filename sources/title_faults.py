"""Phrases that make a listing title more than one card, or a card that does not work.

Issue 26 item 4: "2-pack RTX 4090", "price is for both", "RTX 3090 does not work / no post /
needs repair / water damaged / kaputt" were matched as one working card. These tables
extend the matcher's `lot` and `for_parts` rules (sources/catalog.py) in the six languages
of the tuning set (tests/fixtures/titles_labelled.csv: English, German, French, Spanish,
Italian, Japanese). Titles are already normalized (NFKC, lower case).

What they must not catch (each pinned by a labelled row): "Dual Fan", ASUS/Palit "Dual"
boards, "2-slot", "Dual BIOS", "PCB 12-layer", "2x HDMI", "dual GPU" (a K80 is one board),
"no repair needed", "never water damaged", "boîte endommagée" (the box, not the card),
"故障なし" (no fault).
"""

import re

_COUNT = (
    r"(?:[2-9]|two|three|four|five|six|both|multiple|several|zwei|drei|vier|beide|mehrere"
    r"|deux|trois|quatre|plusieurs|dos|tres|cuatro|varias|due|tre|quattro|diverse)"
)
_CARDS = (
    r"(?:(?:graphics?\s+|video\s+)?cards|gpus|(?:grafik)?karten|cartes(?:\s+graphiques)?"
    r"|tarjetas(?:\s+gr[áa]ficas)?|schede(?:\s+(?:video|grafiche))?)"
)


def _words(*phrases: str) -> re.Pattern[str]:
    """One regex for whole-word phrases (not inside a longer word)."""
    return re.compile(r"(?<!\w)(?:" + "|".join(phrases) + r")(?!\w)")


# Several cards in one listing, beyond `lot of`, `2x RTX ...`, `x2`, `2 pcs` (catalog.py).
_SPELLED = r"(?:two|three|four|five|six|zwei|drei|vier|deux|trois|quatre|dos|tres|cuatro|due|tre)"
MULTI_CARD = _words(
    rf"{_COUNT}\s+{_CARDS}",
    rf"{_SPELLED}\s+(?:[^\s,;()]+\s+){{1,5}}?{_CARDS}",  # "two Zotac RTX 3060 Ti 8GB cards"
    rf"^{_SPELLED}(?=\s+(?:x\s+)?(?:nvidia|geforce|rtx|gtx|tesla|quadro|radeon|amd|rx))",
    r"(?:[2-9]|two|three|four|twin|double)[\s-]?packs?",
    r"packs?\s+(?:of|de|da|aus|von)\s+(?:[2-9]|two|three|deux|dos|due)",
    r"\(\s*(?:[x×]\s?[2-9]|[2-9]\s?[x×])\s*\)",  # "RTX 3070 (x2)"
    r"^[x×]\s?[2-9](?=\s)",  # "x2 ASUS TUF RTX 4070"
    r"precio\s+(?:por|para)\s+(?:las|los|ambas|[2-9])",
    r"doppelpack",
    r"[2-9]er[\s-]?(?:pack|set)",
    r"(?:set|juego|kit|confezione)\s+(?:aus|de|da|of)\s+[2-9]",
    r"(?:the\s+)?price\s+(?:is\s+)?(?:for|per)\s+(?:both|all|the\s+(?:pair|lot|set)|[2-9]|two)",
    r"for\s+both(?=\s*(?:$|[,;.)!-]|cards|gpus|units))",
    r"sold\s+(?:together|as\s+a\s+(?:pair|set|lot))",
    r"(?:matched\s+)?pair(?!\s+of\s+(?:fans|cables))",
    r"[2-4][\s-]?way\s+(?:sli|nvlink|crossfire)",
    r"preis\s+(?:gilt\s+)?f[üu]r\s+(?:beide|alle|[2-9])",
    r"f[üu]r\s+beide",
    r"(?:als|im)\s+paar",
    r"(?:pour\s+)?les\s+deux(?=\s*(?:$|[,;.)!-]|cartes))",
    r"prix\s+pour\s+(?:les\s+)?(?:deux|[2-9])",
    r"paire",
    r"ambas",
    r"(?:por\s+)?(?:las|los)\s+dos(?=\s*(?:$|[,;.)!-]|tarjetas))",
    r"par\s+de\s+(?:tarjetas|gpus?|rtx|gtx|nvidia|geforce)",
    r"pareja",
    r"entrambe",
    r"tutte\s+e\s+due",
    r"coppia",
    r"lotto",
)
MULTI_CARD_CJK = re.compile(r"[2-9二三四]\s?(?:台|個|点)|セット売り|両方|複数")

# The same model named twice: "RTX 3090 + RTX 3090", "RTX 4090 und RTX 4090".
SAME_MODEL_TWICE = re.compile(
    r"(?<!\w)(?:rtx|gtx)\s?(\d{4}(?:\s?ti|\s?super)?)(?!\w).{0,40}?"
    r"(?:\+|&|(?<!\w)(?:and|und|et|y|e|plus)(?!\w))\s*(?:nvidia\s+)?(?:geforce\s+)?"
    r"(?:rtx|gtx)\s?\1(?!\w)"
)

# A card that does not work or is damaged, beyond `not working`, `defekt`, `for parts`...
BROKEN = _words(
    r"(?:does|do|did)\s*(?:n['’]?t|\s+not)\s+work\w*",
    r"(?:won['’]?t|will\s+not|wont)\s+(?:work|post|boot|start|power\s+on|turn\s+on)",
    r"(?:no|doesn['’]?t|does\s+not|fails?\s+to)\s+(?:post|boot)(?!\s+(?:issues?|problems?))",
    r"no\s+power(?!\s+(?:issues?|problems?))",
    r"stopped\s+working",
    r"no\s+longer\s+works?",
    r"non[\s-]?functional",
    r"not\s+functioning",
    r"dead(?:\s+card)?(?!\s+(?:silent|quiet))",
    r"needs?\s+(?:a\s+)?(?:repair|fixing|fix)",
    r"requires?\s+repair",
    r"repair\s+needed",
    r"to\s+repair",
    r"(?:water|liquid)[\s-]?damaged?",
    r"(?:pcb|card|gpu|core|die)\s+(?:is\s+)?(?:damaged?|cracked|broken|burnt|burned)",
    r"(?:damaged|cracked|broken|burnt|burned|bent)\s+(?:pcb|card|gpu|core|die)",
    r"cracked",
    r"shorted",
    r"short\s+circuit",
    r"bricked",
    r"(?:corrupt(?:ed)?|bad|damaged|broken|dead)\s+bios(?:\s+chip)?",
    r"bios\s+(?:chip|corrupt(?:ed)?|damaged|broken|flash\s+failed)",
    r"(?:code|error)\s*43",
    r"black\s+screen",
    r"overheat(?:s|ing)?",
    r"for\s+spares",
    r"spares\s+only",
    r"kaputt",
    r"funktioniert\s+nicht(?:\s+mehr)?",
    r"geht\s+nicht(?:\s+mehr)?",
    r"startet\s+nicht",
    r"ohne\s+funktion",
    r"reparaturbed[üu]rftig",
    r"zur\s+reparatur",
    r"wasserschaden",
    r"(?:platine|karte|chip)\s+besch[äa]digt",
    r"an\s+bastler",
    r"als\s+ersatzteil\w*",
    r"ersatzteil(?:e|spender)",
    r"ne\s+(?:fonctionne|marche|s['’]allume|d[ée]marre)\s+(?:plus|pas)",
    r"pas\s+d['’]image",
    r"[àa]\s+r[ée]parer",
    r"pour\s+r[ée]paration",
    r"d[ée]g[âa]ts?\s+des\s+eaux",
    r"(?:carte|puce)\s+(?:endommag[ée]e?|cass[ée]e?)",
    r"cass[ée]e?",
    r"no\s+(?:enciende|arranca|da\s+imagen)",
    r"sin\s+imagen",
    r"para\s+reparar",
    r"da[ñn]o\s+por\s+agua",
    r"(?:tarjeta\s+)?da[ñn]ada",
    r"rota",
    r"non\s+(?:funziona|si\s+accende|parte)",
    r"nessun\s+segnale",
    r"da\s+riparare",
    r"danni\s+da\s+acqua",
    r"(?:scheda\s+)?danneggiata",
    r"rotta",
    r"per\s+pezzi",
)
# A box or packaging that is damaged is no damaged card ("boîte endommagée", "caja dañada").
BOX_BEFORE = re.compile(
    r"(?:box|boxes|packaging|karton|ovp|verpackung|bo[iî]te|emballage|caja|embalaje|scatola"
    r"|imballo|confezione)\s*$"
)
# Damage words that a box can have too; a phrase naming the board ("PCB damaged") is the card's.
_DAMAGE = re.compile(r"damage|besch[äa]dig|endommag|cass|da[ñn]ad|danneg|rott?a|crack|broken")
# ...and water damage is the card's whatever comes before it.
_BOARD = re.compile(
    r"pcb|card|gpu|core|die|carte|tarjeta|scheda|platine|karte|chip|puce|water|liquid|wasser"
    r"|eaux|agua|acqua"
)


# Parts whose fault leaves a working card: "LED doesn't work", "RGB lighting not working".
COSMETIC = frozenset("led leds rgb argb lighting light lights logo backlight aura sync".split())


def box_damage(text: str, phrase_start: int, phrase: str) -> bool:
    """Whether a damage phrase is said of the box before it ("caja dañada"), not the card."""
    return (
        bool(_DAMAGE.search(phrase))
        and not _BOARD.search(phrase)
        and BOX_BEFORE.search(text[:phrase_start]) is not None
    )


# "故障なし" / "水没無し": the fault is denied.
BROKEN_CJK = re.compile(
    r"(?:動作不良|不具合|映らない|映りません|起動しない|起動せず|通電しない|通電せず|破損|水没|部品取り"
    r"|要修理|修理前提|不動|難あり)(?!\s*(?:なし|無し|無|ありません))"
)
