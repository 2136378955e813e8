"""Listing title -> canonical GPU id: which catalog GPU (if any) a retail listing sells.

The matcher is a short list of ordered rules, first hit wins:

1. `empty`: nothing left once marketplace text ("New Listing", "Opens in a new window
   or tab") is stripped;
2. rejections by phrase, each a small regex table: `accessory` (water block, backplate,
   box only, ...), `for_parts` (not working, defekt, ジャンク, and the broken-card phrases
   of `sources.title_faults`: does not work, no post, water damaged, kaputt, ...),
   `laptop`, `system` (gaming PC, CPU + GPU combos), `lot` (lot of, 2x RTX ..., bundle,
   and the several-card phrases of `sources.title_faults`: 2-pack, price is for both...);
3. the model, read by the shared GPU-name knowledge base (`sources.gpu_names`): the
   longest alias at each position, so "4070 ti super" (or "4070 SUPER Ti") is one
   mention; near-miss models outside the catalog ("RTX 5050", "RX 580") are seen and
   rejected as `unknown`; two models -> `multi_model`;
4. one model family: memory ("80GB", "12G", "O24G") and form factor (PCIe, SXM, NVL)
   pick the variant. A memory size or form no card of the family has is
   `memory_conflict` / `form_conflict` ("RTX 3090 12GB" is no RTX 3090, and is never
   "corrected" to one); several cards left -> `ambiguous`, naming them (unless
   `RETAIL_DEFAULTS` names one, e.g. plain "H200" is the SXM part); a non-catalog variant
   ("RTX 3050 6GB") -> `unknown`, else `matched`.

`reason` is "matched: <what matched>" or "<code>: <detail>".
"""

import json
import re
import sys
from typing import TextIO

from sources.gpu_names import (
    RETAIL_DEFAULTS,
    Catalog,
    Match,
    laptop_part,
    normalize,
    read_models,
)
from sources.title_faults import (
    BROKEN,
    BROKEN_CJK,
    COSMETIC,
    MULTI_CARD,
    MULTI_CARD_CJK,
    SAME_MODEL_TWICE,
    box_damage,
)

__all__ = ["Catalog", "Match", "match_title", "normalize", "normalize_condition"]


# ---------------------------------------------------------------------------------------
# Rejection rules, in order. Each is a table of phrases; the detail is the phrase found.
# ---------------------------------------------------------------------------------------


def _words(*phrases: str) -> re.Pattern[str]:
    """One regex for whole-word phrases (not inside a longer word)."""
    return re.compile(r"(?<!\w)(?:" + "|".join(phrases) + r")(?!\w)")


# Phrases that always name the thing sold: the card is not in the listing.
_ACCESSORY_ONLY = _words(
    r"fans?\s+only",
    r"replacement\s+(?:cooling\s+)?fans?",
    r"(?:cooling\s+)?fans?\s+replacement",
    r"box\s+only",
    r"only\s+(?:the\s+)?box",
    r"empty\s+box",
    r"leerkarton",
    r"nur\s+ovp",
    r"bo[iî]te\s+vide",
    r"caja\s+vac[ií]a",
    r"(?:picture|photo|image)\s+of",
    # packaging without the card ("nur Karton ohne Grafikkarte", "box (no card)")
    r"nur\s+(?:der\s+)?(?:karton|verpackung)",
    r"karton\s+leer",
    r"leere?r?\s+karton",
    r"ohne\s+(?:die\s+)?(?:grafikkarte|gpu|karte)",
    r"(?:no|without)\s+(?:the\s+)?(?:gpu|card|graphics\s+card)\s+(?:included|inside)",
    r"\(\s*no\s+(?:gpu|(?:graphics\s+|video\s+)?card)\s*\)",
    r"(?:packaging|verpackung|emballage|embalaje|imballo)\s+only",
    r"only\s+(?:the\s+)?packaging",
    r"box\s+without\s+(?:the\s+)?(?:gpu|card)",
    r"no\s+(?:gpu|card)\s*$",
    r"scatola\s+vuota",
    r"solo\s+(?:la\s+)?(?:scatola|caja)",
    r"bo[iî]te\s+seule",
    r"sans\s+(?:la\s+)?carte",
    r"sin\s+(?:la\s+)?tarjeta",
    # things that only look like the card
    r"key\s?(?:chains?|rings?)",
    r"porte[\s-]?cl[ée]s",
    r"schl[üu]sselanh[äa]nger",
    r"llaveros?",
    r"portachiavi",
    r"replicas?",
    r"r[ée]plique",
    r"miniatures?",
    r"scale\s+model",
    r"(?:desk\s+)?ornaments?",
    r"maqueta",
    r"modellino",
    r"dummy",
    r"mock[\s-]?up",
    r"3d[\s-]?print(?:ed)?",
    # a bare GPU die or chip for board repair
    r"(?:gpu|bare|core)\s+(?:die|chips?)",
    r"chips?\s+(?:for|für|pour|para|per)",
    r"bga",
    r"[agt][abdu]\d{3}-\d{3}-[a-z]\d",
)
_ACCESSORY_ONLY_CJK = re.compile("空箱|箱のみ|キーホルダー|ステッカー|フィギュア")
# Parts that may also come with a card ("RTX 3090 with EK water block", "in original box",
# "Graphics Card - ..., Anti-sag Bracket, Metal Back Plate").
_ACCESSORY_PARTS = _words(
    r"water[\s-]?blocks?",
    r"wasserk[üu]hler",
    r"eisblock",
    r"heatkiller",
    r"(?:cooling\s+)?fans?\s+(?:kit|shroud|adapter|duct)",
    r"blower\s+(?:kit|fan)",
    r"bloc\s+d['’]\s?eau",
    r"bloque\s+de\s+agua",
    r"blocco\s+(?:ad\s+)?acqua",
    r"k[üu]hler",
    r"refroidisseur",
    r"ventirad",
    r"disipador",
    r"dissipatore",
    r"ventilateurs?",
    r"ventilador(?:es)?",
    r"ventole?",
    r"l[üu]fter",
    r"adapters?\s+(?:for|für|pour|para)",
    r"(?<!warranty\s)(?<!seal\s)stickers?",
    r"aufkleber",
    r"autocollants?",
    r"pegatinas?",
    r"adesivi",
    r"back[\s-]?plates?",
    r"(?:support\s+|anti[\s-]?sag\s+)?brackets?",
    r"halterung",
    r"(?:cooling\s+)?fans?\s+for",
    r"coolers?",
    r"heat[\s-]?sinks?",
    r"cables?",
    r"kabel",
    r"risers?",
    r"original\s+box",
    r"shrouds?",
    r"thermal\s+(?:pads?|paste)",
    r"(?:anti[\s-]?)?sag",
    r"(?:nvlink|sli)\s+bridges?",
)
# A part named right after one of these words comes with the card ("full height bracket"
# is how data-center cards are sold)...
_COMPANION = frozenset(
    "with incl incl. including includes plus + and & in im mit inkl inkl. avec con"
    " height full-height profile low-profile".split()
)
# ...unless the part is the subject: "backplate for RTX 3080", "cooler only".
_SUBJECT = re.compile(r"\s*(?:for|fits|compatible|only|für|pour|para)(?!\w)")
# "<model> Graphics Card - <features>": parts listed after this are the card's own.
_CARD_NOUN = re.compile(
    r"(?:graphics?|video)\s+cards?|grafikkarte|carte\s+graphique|tarjeta\s+gr[áa]fica"
    r"|グラフィックボード|グラボ|显卡"
)

_FOR_PARTS = _words(
    r"for\s+parts(?!\s+of\s)",  # not "selling for parts of my build"
    r"parts\s+only",
    r"for\s+repair",
    r"spares\s+(?:or|and|/)\s+repairs?",
    r"not\s+working",
    r"broken",
    r"defect(?:ive)?",
    r"as[\s-]is",
    r"no\s+(?:display|signal|video)(?!\s+(?:issues?|problems?))",
    r"artifact(?:s|ing)",
    r"faulty",
    r"melted",
    r"burn(?:t|ed)",
    r"defekt\w*",
    r"f[üu]r\s+bastler",
    r"pour\s+pi[èe]ces",
    r"en\s+panne",
    r"hs",
    r"d[ée]fectueu(?:x|se)",
    r"para\s+(?:piezas|repuestos)",
    r"averiad[ao]",
    r"defectuos[ao]",
    r"no\s+funciona",
    r"guast[ao]",
    r"untested",
    r"parts\s*$",  # a trailing "... GDDR6 Parts" is eBay shorthand for "for parts"
    r"not\s+tested",
    r"ungetestet",
    r"non\s+test[ée]e?",
    r"sin\s+probar",
    r"non\s+testat[ao]",
    r"pcb\s+only",
    r"bare\s+pcb",
    r"without\s+(?:gpu\s+)?(?:core|chip|die)",
    r"per\s+ricambi",
    r"non\s+funzionante",
    r"difettos[ao]",
)
_FOR_PARTS_CJK = re.compile("(?:ジャンク|故障|動作未確認)(?!\\s*(?:なし|無し|無|ありません))")
# "no artifacts", "not broken", "keine Defekte": a negated phrase is a selling point.
_NEGATION = frozenset(
    "no not never without zero non kein keine keinen nicht ohne nie niemals pas sans jamais"
    " sin ni nunca nessun nessuna senza".split()
)

_LAPTOP = _words(
    r"(?:pc|ordinateur)\s+portable",
    r"port[áa]til",
    r"macbook",
    r"zephyrus",
    r"rog\s+strix\s+(?:scar|g\d{2})\w*",
    r"strix\s+scar",
    r"tuf\s+(?:gaming\s+)?[af]\d{2}\w*",
    r"tuf\s+dash",
    r"legion(?!\s+(?:tower|t\d))",
    r"razer\s+blade",
    r"blade\s+1[4-8]",
    r"alienware\s+[mx]\d{2}\w*",
    r"predator\s+helios",
    r"helios",
    r"triton",
    r"nitro\s?5",
    # Laptop lines named by screen size ("AERO 16 OLED", "AORUS 17X"), not a desktop card's
    # memory ("RTX 5080 Aero 16GB OC", a Gigabyte desktop board): no "G" after the number.
    r"aorus\s+1[5-7](?![\s-]*g)\w*",
    r"aero\s+1[4-7](?![\s-]*g)\w*",
    r"omen\s+(?:1[5-7]|transcend)\w*",
    r"victus",
    r"msi\s+(?:raider|stealth|vector|katana|crosshair|pulse|sword|cyborg|titan\s+gt|summit|creator"
    r"|prestige)",
    r"summit\s+e1\d",
    r"proart\s+p1\d",
    r"nitro\s+v(?:\s+1\d)?",
    r"g[epst]\d{2}[a-z]?",  # MSI chassis codes: GE76, GT77, GS66, GP66
    r"xps\s?1[57]",
    r"dell\s+g1[56]",
    r"precision\s+7\d{3}",
    r"zbook",
    r"thinkpad",
    r"studiobook",
    r"flow\s+[xz]1\d",
    r"1[3-8](?:\.\d)?\s?(?:inch|zoll|pouces|\"|''|”)",  # a screen size
    r"i[3579][\s-]?\d{4,5}(?:hx|hk|hs|h|u)",  # mobile CPUs
    r"ryzen\s+[3579]\s+\d{4}(?:hx|hs|h|u)",
    r"core\s+ultra\s+[3579]\s+\d{3}hx?",
)
_LAPTOP_CJK = re.compile("ノートパソコン|ノートpc|笔记本")

_SYSTEM = _words(
    r"gaming[\s-]?(?:pc|computer|desktop|rig|tower)",
    r"desktop\s+(?:pc|computer)",
    r"pre[\s-]?built",
    r"(?:tower|workstation)\s+pc",
    r"pc\s+tower",
    r"computer\s+with",
    r"pc\s+gamer",
    r"ordinateur",
    r"ordenador",
    r"komplett[\s-]?(?:pc|system)",
    r"dgx",
    r"mining[\s-]?(?:rigs?|frames?)",
    r"rig\s+de\s+minage",
    r"alienware\s+aurora",
    r"aurora\s+r\d+",
    r"legion\s+(?:tower|t\d)\w*",
    r"omen\s+\d{2}l",
    r"optiplex",
    # A desktop or server CPU next to the GPU means a whole computer.
    r"i[3579](?:[\s-]?\d{4,5}[a-z]{0,2})?",
    r"core\s+(?:i[3579]|ultra\s+[3579])",
    r"ryzen\s+(?:[3579]|threadripper)",
    r"threadripper",
    r"xeon",
    r"epyc",
)
_SYSTEM_CJK = re.compile("ゲーミングpc|自作pc|デスクトップpc|游戏主机|台式机")
_RAM = re.compile(r"\d+\s?gb\s+(?:ddr\d\s+)?ram\b")
_STORAGE = re.compile(r"\b(?:ssd|hdd|nvme)\b|\b\d+\s?tb\b")

_LOT = _words(
    r"lots?(?:\s+of)?",
    r"lote",
    r"konvolut",
    r"bundle",
    r"combo",
    r"pair\s+of",
    r"set\s+of",
    r"[2-9]\s?(?:pcs|pieces|stück|stk|units)",
    r"(?:qty|quantity):?\s?[2-9]",
    r"(?:[2-9]|1\d)[\s-]?gpus?",
)
# "2x RTX 3090", "3 x A100": a count right before a model name (not "2x 8-pin").
_LOT_COUNT = re.compile(
    r"(?<![\w.])(?:[2-9]|1\d)\s?[x×]\s?"
    r"(?=(?:nvidia|geforce|rtx|gtx|tesla|quadro|radeon|amd|instinct|rx|titan)(?!\w)"
    r"|[a-z]{1,3}\d{2,5}[a-z]?(?!\w)|\d{4}(?!\w))"
)
# "RTX 3090 x2" (not the PCIe lane count in "PCIe 4.0 x8").
_LOT_SUFFIX = re.compile(r"(?<![\w.])[x×]\s?[2-9](?![\w.-]|\s?pins?\b)")
_LANES = re.compile(r"(?:pci[\s-]?e?|gen\s?\d|\d\.\d|lanes?)\s*$")
_LOT_CJK = re.compile("[2-9]枚|まとめ")


def _preceding_words(text: str, end: int) -> list[str]:
    """The last three words before `end`, within the same clause (stops at , ; / ( etc.)."""
    clause = re.split(r"[,;/|()\[\]!]", text[:end])[-1]
    return clause.split()[-3:]


def _negated(words: list[str]) -> bool:
    """Whether the words before a phrase negate it: "not", "no signs of", "keine"."""
    if words and words[-1] in _NEGATION:
        return True
    return len(words) == 3 and words[0] in _NEGATION and words[-1] in ("of", "any", "von")


_INSTALLED = re.compile(
    r"\s*(?:\w+\s+)?(?:pre[\s-]?)?(?:installed|mounted|fitted|attached|montiert|verbaut"
    r"|mont[ée]e?|instalad[oa]|installat[oa])(?!\w)"
)
_WATER_BLOCK = re.compile(
    r"water[\s-]?blocks?|wasserk[üu]hler|eisblock|heatkiller|bloc\s+d['’]\s?eau"
    r"|bloque\s+de\s+agua|blocco\s+(?:ad\s+)?acqua"
)
# Where a title's comma-separated feature list starts: ", ", " - ", "(" ...
_CLAUSE_BREAK = re.compile(r"[,;|()\[\]]|\s[-–—]\s")


def _accessory(text: str) -> str | None:
    if found := _ACCESSORY_ONLY_CJK.search(text) or _ACCESSORY_ONLY.search(text):
        return found[0]
    noun = _CARD_NOUN.search(text)
    # The card is the subject when a model number comes before "graphics card"...
    card_from = noun.end() if noun and re.search(r"\d{2}", text[: noun.start()]) else len(text)
    # ...or before the clause a part is listed in: "RTX 3090 FTW3, 24GB, Metal Backplate",
    # "RTX 4090 FE - Excellent Condition, Original Box" (not "RTX 3090 backplate").
    model = re.search(r"\d{2}", text)
    if model and (after := _CLAUSE_BREAK.search(text, model.end())):
        card_from = min(card_from, after.start())
    for found in _ACCESSORY_PARTS.finditer(text):
        if _SUBJECT.match(text, found.end()):
            return found[0]
        if _INSTALLED.match(text, found.end()):
            continue  # "EK water block installed": the block is on the card sold
        # A water block in a later clause is still what a block seller lists ("RTX 4090 -
        # Heatkiller V water block"); only a companion word or "installed" makes it the card's.
        until = len(text) if _WATER_BLOCK.fullmatch(found[0]) else card_from
        if found.start() < until and not _COMPANION.intersection(
            _preceding_words(text, found.start())
        ):
            return found[0]
    return None


def _for_parts(text: str) -> str | None:
    if found := _FOR_PARTS_CJK.search(text) or BROKEN_CJK.search(text):
        return found[0]
    for pattern in (_FOR_PARTS, BROKEN):
        for found in pattern.finditer(text):
            if _negated(_preceding_words(text, found.start())):
                continue  # "no artifacts", "never water damaged", "kein Defekt"
            if pattern is BROKEN and box_damage(text, found.start(), found[0]):
                continue  # "boîte endommagée": the box is damaged, not the card
            if COSMETIC.intersection(_preceding_words(text, found.start())[-2:]):
                continue  # "LED doesn't work", "RGB lighting not working"
            return found[0]
    return None


def _laptop(text: str) -> str | None:
    found = _LAPTOP_CJK.search(text) or _LAPTOP.search(text)
    return found[0] if found else laptop_part(text)


# "RTX 3070 OEM pulled from Alienware Aurora", "A100-SXM4-40GB pulled from DGX": the donor
# machine is named, the card is sold.
_PULLED_FROM = re.compile(
    r"(?<!\w)(?:(?:pulled|pull|removed|taken|extracted|ausgebaut)\s+(?:out\s+)?(?:of|from|aus)"
    r"|from\s+(?:an?\s+)?(?:dgx|hgx))\s.*$"
)


_CPU = re.compile(r"i[3579]|core|ryzen|threadripper|xeon|epyc")


def _system(text: str) -> str | None:
    text = _PULLED_FROM.sub("", text)
    # "RTX 4060 Low Profile Graphics Card Compact Gaming PC SFF": named after the card, a
    # system is what the card is for.
    noun = _CARD_NOUN.search(text)
    card_end = noun.end() if noun and re.search(r"\d{2}", text[: noun.start()]) else None
    if found := _SYSTEM_CJK.search(text):
        return found[0]
    for found in _SYSTEM.finditer(text):
        cpu = _CPU.match(found[0])  # a card sold with a CPU is a combo, wherever it is named
        if card_end is None or found.start() < card_end or cpu:
            return found[0]
    if (ram := _RAM.search(text)) and _STORAGE.search(text):
        return ram[0] + " + storage"
    return None


def _lot(text: str) -> str | None:
    found = _LOT_CJK.search(text) or MULTI_CARD_CJK.search(text) or _LOT.search(text)
    if found := found or _LOT_COUNT.search(text) or MULTI_CARD.search(text):
        return found[0].strip()
    if found := SAME_MODEL_TWICE.search(text):
        return f"{found[1]} twice"
    for found in _LOT_SUFFIX.finditer(text):
        # "pcie 4.0 x8" is a link width; a GPU's link is x4, x8 or x16, never x2 or x3.
        lanes = (
            found[0][-1] in "48" and " " not in found[0] and _LANES.search(text[: found.start()])
        )
        # "RTX 3090 x2 ...", a trailing "... 24GB x2"; not a board name ("8G X2 White").
        before = text[: found.start()].split()[-1:]
        after_model = bool(before) and re.fullmatch(r"\d{3,5}", before[0]) is not None
        if not lanes and (after_model or not text[found.end() :].strip()):
            return found[0]
    return None


REJECTIONS = (
    ("accessory", _accessory),
    ("for_parts", _for_parts),
    ("laptop", _laptop),
    ("system", _system),
    ("lot", _lot),
)


def _machine(text: str, catalog: Catalog) -> Match | None:
    """The match when the title names a catalog machine sold whole (DGX Spark, Mac Studio).

    For those the computer is the product: the system rule (RAM, SSD, "DGX") must not
    refuse the listing.
    """
    found = read_models(text, catalog, RETAIL_DEFAULTS)
    if found.gpu is None:
        return None
    forms = {
        v.form for variants in catalog.families.values() for v in variants if v.gpu == found.gpu
    }
    return found if forms == {"system"} else None


def match_title(title: str, catalog: Catalog) -> Match:
    """The catalog GPU a listing title sells, or None with the reason it is not one."""
    if not title or not title.strip():
        return Match(None, "empty: empty title")
    text = normalize(title)
    if not text:
        return Match(None, "empty: no text besides marketplace labels")
    machine = _machine(text, catalog)
    for code, rule in REJECTIONS:
        if code == "system" and machine is not None:
            continue
        if (detail := rule(text)) is not None:
            return Match(None, f"{code}: {detail}")
    return machine or read_models(text, catalog, RETAIL_DEFAULTS)


# ---------------------------------------------------------------------------------------
# Condition text
# ---------------------------------------------------------------------------------------

# Checked in this order: "Used - Like New" is used, "Renewed" is refurbished.
_CONDITIONS = (
    (
        "for_parts",
        re.compile(
            r"for\s+parts|parts\s+only|spares|not\s+working|\bdefekt|ersatzteil"
            r"|pour\s+pi[èe]ces|ne\s+fonctionne\s+pas|para\s+(?:piezas|repuestos)|desguace"
            r"|no\s+funciona|ricambi|non\s+funzionante|ジャンク|部品取り"
        ),
    ),
    (
        "refurbished",
        re.compile(r"refurb|renewed|generalüberholt|reconditionn|reacondicionad|整備済"),
    ),
    (
        "used",
        re.compile(
            r"pre-?owned|\bused\b|gebraucht|occasion|\busad[oa]\b|中古|二手|like\s+new|wie\s+neu"
            r"|comme\s+neuf|como\s+nuevo|neuwertig|open\s+box"
        ),
    ),
    ("new", re.compile(r"\bnew\b|\bneu\b|\bneu(?:f|ve)\b|\bnuev[oa]\b|新品|全新")),
)


def normalize_condition(text: str | None, title: str = "") -> str | None:
    """A listing's condition as new, used, refurbished or for_parts (None if unknown).

    A for-parts phrase in the title ("RTX 3080 not working") wins over the condition.
    """
    if title and _for_parts(normalize(title)) is not None:
        return "for_parts"
    if not text:
        return None
    condition = normalize(text)
    for name, pattern in _CONDITIONS:
        if pattern.search(condition):
            return name
    return None


# ---------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------


def _as_json(match: Match) -> str:
    return json.dumps({"gpu": match.gpu, "reason": match.reason}, ensure_ascii=False)


def match_command(argv: list[str], stdin: TextIO, stdout: TextIO, catalog: Catalog) -> int:
    """`match "<title>"` prints one JSON line; `match -` matches stdin, one title a line."""
    if len(argv) != 1:
        print('usage: match "<title>" | match -', file=sys.stderr)
        return 2
    if argv[0] != "-":
        print(_as_json(match_title(argv[0], catalog)), file=stdout)
        return 0
    for line in stdin:
        print(_as_json(match_title(line.rstrip("\r\n"), catalog)), file=stdout)
    return 0
