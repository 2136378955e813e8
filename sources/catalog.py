"""Listing title -> canonical GPU id: which catalog GPU (if any) a retail listing sells.

The matcher is a short list of ordered rules, first hit wins:

1. `empty`: nothing left once marketplace text ("New Listing", "Opens in a new window
   or tab") is stripped;
2. rejections by phrase, each a small regex table: `accessory` (water block, backplate,
   box only, ...), `for_parts` (not working, defekt, ジャンク, ...), `laptop`, `system`
   (gaming PC, CPU + GPU combos), `lot` (lot of, 2x RTX ..., bundle);
3. model mentions: the title's tokens are scanned left to right, taking the longest
   alias at each position, so "4070 ti super" is one mention and never "4070" + noise.
   Aliases come from the spec sheet's ids ("rtx-3060-12gb" -> family "rtx 3060") plus
   explicit extras: near-miss models that are *not* in the catalog ("RTX 4090 D",
   "RX 7900 XT", "RTX 4070 SUPER"), so that they are seen and rejected as `unknown`;
   likewise a model number followed by a suffix no alias took ("4090 ti", "3090 super");
4. two different models -> `multi_model`; none in the catalog -> `unknown`;
5. one model family: memory ("80GB", "12G", "O24G") and form factor (PCIe, SXM, NVL)
   in the title pick the variant; if several remain -> `ambiguous` (unless the family
   has a default, e.g. plain "H200" is the SXM part), a non-catalog variant ("RTX 3060
   8GB") -> `unknown`, else `matched`.

`reason` is "matched: <what matched>" or "<code>: <detail>".
"""

import functools
import json
import re
import sys
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TextIO

from sources.bundled import DATA_DIR, read_gpu_specs

# ---------------------------------------------------------------------------------------
# Explicit knowledge the spec sheet does not carry
# ---------------------------------------------------------------------------------------

# Real cards that share a catalog family's name but are not in the catalog: memory (or
# form factor) is what tells them apart, so a title without it is ambiguous.
# family key -> (label, memory_gb, form)
EXTRA_VARIANTS: dict[str, tuple[tuple[str, float, str], ...]] = {
    "rtx-2060": (("GeForce RTX 2060 12 GB", 12, "pcie"),),
    "rtx-3060": (("GeForce RTX 3060 8 GB", 8, "pcie"),),
    "rtx-3080": (("GeForce RTX 3080 12 GB", 12, "pcie"),),
    "rtx-4060-ti": (("GeForce RTX 4060 Ti 8 GB", 8, "pcie"),),
    "v100": (("Tesla V100 PCIe 32 GB", 32, "pcie"),),
    "gh200": (("GH200 144 GB HBM3e", 144, "superchip"),),
}

# Family key -> the catalog id a title means when it names the family and nothing else.
DEFAULTS: dict[str, str] = {
    "rtx-2060": "rtx-2060",  # the 12 GB card is a late variant; plain "RTX 2060" is 6 GB
    "h200": "h200-sxm",  # "H200" alone is the SXM part; the PCIe card is always "H200 NVL"
    "gh200": "gh200-96gb",
}

# Extra alias -> the families it may mean (several: memory or form factor decides).
EXTRA_ALIASES: dict[str, tuple[str, ...]] = {
    "rtx 6000": ("quadro-rtx-6000", "rtx-6000-ada"),
    "rtx 5000": ("quadro-rtx-5000", "rtx 5000 ada"),
    "rtx 8000": ("quadro-rtx-8000",),
    "rtx a6000 ada": ("rtx-a6000", "rtx-6000-ada"),  # sellers mix the two names up
    "rtx pro 6000": ("rtx-pro-6000-blackwell",),
    "rtx 6000 blackwell": ("rtx-pro-6000-blackwell",),
    "l40 s": ("l40s",),
}

# Models that are not in the catalog but would otherwise be read as one that is (the
# longest alias wins, so "RTX 4090 D" is never "RTX 4090"), or that deserve a name in
# the `unknown` reason. Aliases come from the lowercased label.
UNKNOWN_MODELS: tuple[str, ...] = (
    "RTX 2060 SUPER",
    "RTX 2070 SUPER",
    "RTX 2080 SUPER",
    "RTX 3050",
    "RTX 3060 Ti",
    "RTX 3070 Ti",
    "RTX 4060",
    "RTX 4070 SUPER",
    "RTX 4090 D",
    "RTX 5060",
    "RTX 5060 Ti",
    "RTX 5090 D",
    "RX 7900 XT",
    "RX 7900 GRE",
    "RTX 4000 Ada",
    "RTX 5000 Ada",
    "RTX PRO 6000 Blackwell Max-Q",
    "RTX PRO 6000 Max-Q",
    "RTX PRO 6000 Blackwell Server",
    "RTX PRO 6000 Server",
    "Titan V",
    "Titan X",
    "Titan Xp",
    "GTX 1080",
    "GTX 1080 Ti",
    "A1000",
    "A2000",
    "A800",
    "H800",
    "V100S",
    "MI210",
    "MI250X",
    "MI300A",
    "MI355X",
)

# A single model mention that also names another model: GH200 pairs an H100 GPU.
CONTAINS: dict[str, frozenset[str]] = {"gh200": frozenset({"h100"})}

# Words after a model number that make it another model ("4090 D", "3070 Ti").
_MODEL_SUFFIXES = [[suffix] for suffix in ("ti", "super", "d", "xt", "xtx", "gre")]

_FORM_PARTS = frozenset({"pcie", "sxm", "sxm2", "sxm4", "sxm5", "nvl"})
_MEMORY_PART = re.compile(r"\d+gb")


@dataclass(frozen=True)
class Match:
    """The outcome of matching one title: a catalog id, or None and why not."""

    gpu: str | None
    reason: str  # "matched: <what matched>" or "<code>: <detail>"


@dataclass(frozen=True)
class Variant:
    """One card of a model family; `gpu` is None for a real card outside the catalog."""

    gpu: str | None
    label: str
    memory_gb: float | None
    form: str | None  # pcie | sxm | nvl | oam | superchip


# ---------------------------------------------------------------------------------------
# Normalization: one lowercase text for phrase rules, ASCII tokens for model names
# ---------------------------------------------------------------------------------------

_MARKS = re.compile(r"[®™©℠]")  # before NFKC, which would turn ™ into "TM"
_EBAY_PREFIX = re.compile(r"^\s*new\s+listing\s*[:\-]?\s*")
_EBAY_SUFFIX = re.compile(r"\s*opens\s+in\s+a\s+new\s+window\s+or\s+tab\s*$")
_WITHOUT = re.compile(r"(?<!\w)w/o(?!\w)")
_WITH = re.compile(r"(?<!\w)w/")
# Board names whose "3X"/"X3" is a fan count, not a quantity.
_BOARD_NOISE = re.compile(r"\b(?:ventus|windforce)\s?[23]x\b|\bichill\s?x[2-5]\b|\btwin\s?x2\b")

# Clocks, bandwidth, power, sizes: "2070 MHz" is no RTX 2070.
_MEASURES = re.compile(r"\d+(?:\.\d+)?(?:[\s-]?(?:mhz|ghz|gbps|gb/s|watts?|mm|bit|hz)|w)(?!\w)")
_PREFIXED = re.compile(r"^(rtx|gtx|rx|quadro|tesla|titan|radeon|geforce)(\d\w*|a\d+)$")
_SUFFIX_WORDS = "ti|super|xtx|xt|gre|gb|go|g|d|s|x"
_SUFFIXES = re.compile(f"(?:{_SUFFIX_WORDS})+")
_SUFFIX = re.compile(_SUFFIX_WORDS)


def normalize(title: str) -> str:
    """NFKC, lowercase, trademark signs and marketplace text removed, spaces collapsed."""
    text = unicodedata.normalize("NFKC", _MARKS.sub(" ", title)).lower()
    text = _EBAY_SUFFIX.sub("", _EBAY_PREFIX.sub("", text))
    text = _WITH.sub(" with ", _WITHOUT.sub(" without ", text))
    return " ".join(_BOARD_NOISE.sub(" ", text).split())


def tokens(text: str) -> list[str]:
    """ASCII word tokens with glued model names split: "rtx4090ti" -> rtx 4090 ti.

    Tokens that start with a digit are split into digit and letter runs ("24gb" -> 24
    gb, "7900xtx" -> 7900 xtx, "4070tisuper" -> 4070 ti super); tokens that start with a
    letter stay whole ("a100", "l40s", "mi300x") unless a brand prefix is glued on.
    """
    out: list[str] = []
    for raw in re.findall(r"[a-z0-9]+", _MEASURES.sub(" ", text)):
        if prefixed := _PREFIXED.match(raw):
            out.append(prefixed[1])
            raw = prefixed[2]
        if not raw[0].isdigit():
            # "tis", "tisuper" standing alone are suffixes too; "a100", "l40s" stay whole
            out.extend(_SUFFIX.findall(raw) if _SUFFIXES.fullmatch(raw) else [raw])
            continue
        for run in re.findall(r"\d+|[a-z]+", raw):
            out.extend(_SUFFIX.findall(run) if _SUFFIXES.fullmatch(run) else [run])
    return out


def _alias_forms(words: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The token sequences that name a model.

    "rtx 4080 super" -> also "4080 super", "4080 s", "rtx 4080 s"; "mi300x" -> also
    "mi 300 x".
    """
    forms = {words}
    # GeForce/Radeon numbers are named without the brand too ("4090", "7900 xtx"), but
    # workstation "RTX 6000" needs its prefix: a bare "6000" is too common a number.
    rest = words[1:]
    if words[0] in ("rtx", "rx") and rest and not (len(rest) == 1 and rest[0].endswith("000")):
        forms.add(rest)
    forms |= {tuple("s" if w == "super" else w for w in form) for form in forms}
    split = set()
    for form in forms:
        for i, word in enumerate(form):
            if glued := re.fullmatch(r"([a-z]{2,})(\d+)([a-z]*)", word):
                split.add(form[:i] + tuple(p for p in glued.groups() if p) + form[i + 1 :])
    return forms | split


def _family_key(gpu_id: str) -> str:
    """The spec id without memory and form factor: a100-sxm4-80gb -> a100."""
    parts = gpu_id.split("-")
    return "-".join(p for p in parts if p not in _FORM_PARTS and not _MEMORY_PART.fullmatch(p))


# ---------------------------------------------------------------------------------------
# The catalog: alias table built from the spec sheet
# ---------------------------------------------------------------------------------------


class Catalog:
    """Alias rules for the GPUs of a spec sheet.

    Built from rows with gpu_id, name, form_factor and memory_gb; the matcher can only
    return these rows' ids.
    """

    def __init__(self, rows: Iterable[Mapping[str, object]]) -> None:
        families: dict[str, list[Variant]] = {}
        for row in rows:
            gpu = str(row["gpu_id"])
            form = "nvl" if "nvl" in gpu.split("-") else str(row["form_factor"])
            variant = Variant(gpu, str(row["name"]), float(str(row["memory_gb"])), form)
            families.setdefault(_family_key(gpu), []).append(variant)
        for key, extras in EXTRA_VARIANTS.items():
            if key in families:
                families[key].extend(Variant(None, *extra) for extra in extras)
        aliases: dict[tuple[str, ...], tuple[str, ...]] = {}
        for key in families:
            for form in _alias_forms(tuple(tokens(key.replace("-", " ")))):
                aliases[form] = (key,)
        for label in UNKNOWN_MODELS:
            key = label.lower()
            families.setdefault(key, [Variant(None, label, None, None)])
            for form in _alias_forms(tuple(tokens(key))):
                aliases.setdefault(form, (key,))
        for alias, keys in EXTRA_ALIASES.items():
            if known := tuple(k for k in keys if k in families):
                for form in _alias_forms(tuple(tokens(alias))):
                    aliases.setdefault(form, known)
        self.families = {key: tuple(variants) for key, variants in families.items()}
        self.aliases = aliases
        self.defaults = {k: v for k, v in DEFAULTS.items() if v in self.gpu_ids}
        self._longest = max(len(alias) for alias in aliases)

    @classmethod
    @functools.cache
    def default(cls) -> "Catalog":
        """The catalog of the bundled spec sheet (built once, then cached)."""
        specs = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv")
        return cls(specs.iter_rows(named=True))

    @functools.cached_property
    def gpu_ids(self) -> frozenset[str]:
        """Every id the matcher can return."""
        return frozenset(v.gpu for variants in self.families.values() for v in variants if v.gpu)

    def mentions(self, words: list[str]) -> list[tuple[str, tuple[str, ...]]]:
        """(matched text, family keys) for each model named, longest alias first.

        A model number followed by a suffix no alias took ("4090 ti", "3090 super") names
        a card outside the catalog: its key is the text, which is no family.
        """
        found = []
        i = 0
        while i < len(words):
            for size in range(min(self._longest, len(words) - i), 0, -1):
                if keys := self.aliases.get(tuple(words[i : i + size])):
                    end = i + size
                    if words[end - 1].isdigit() and words[end : end + 1] in _MODEL_SUFFIXES:
                        end += 1
                        keys = (" ".join(words[i:end]),)
                    found.append((" ".join(words[i:end]), keys))
                    i = end
                    break
            else:
                i += 1
        return found

    def in_catalog(self, keys: tuple[str, ...]) -> bool:
        """Whether any card of these families is a catalog GPU."""
        return any(v.gpu for key in keys for v in self.families.get(key, ()))


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
)
_ACCESSORY_ONLY_CJK = re.compile("空箱|箱のみ")
# Parts that may also come with a card ("RTX 3090 with EK water block", "in original box",
# "Graphics Card - ..., Anti-sag Bracket, Metal Back Plate").
_ACCESSORY_PARTS = _words(
    r"water[\s-]?blocks?",
    r"wasserk[üu]hler",
    r"eisblock",
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
    r"for\s+parts",
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
)
_FOR_PARTS_CJK = re.compile("ジャンク|故障")
# "no artifacts", "not broken", "keine Defekte": a negated phrase is a selling point.
_NEGATION = frozenset(
    "no not never without zero non kein keine keinen nicht ohne pas sans sin".split()
)

_LAPTOP = _words(
    r"laptops?",
    r"notebooks?",
    r"mobile",
    r"max[\s-]?q(?!\s+workstation)",  # "RTX PRO 6000 Max-Q Workstation Edition" is a card
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
    r"aorus\s+1[5-7]\w*",
    r"aero\s+1[4-7]\w*",
    r"omen\s+(?:1[5-7]|transcend)\w*",
    r"victus",
    r"msi\s+(?:raider|stealth|vector|katana|crosshair|pulse|sword|cyborg|titan\s+gt)",
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


def _accessory(text: str) -> str | None:
    if found := _ACCESSORY_ONLY_CJK.search(text) or _ACCESSORY_ONLY.search(text):
        return found[0]
    noun = _CARD_NOUN.search(text)
    # The card is the subject when a model number comes before "graphics card".
    card_from = noun.end() if noun and re.search(r"\d{2}", text[: noun.start()]) else len(text)
    for found in _ACCESSORY_PARTS.finditer(text):
        if _SUBJECT.match(text, found.end()):
            return found[0]
        if found.start() < card_from and not _COMPANION.intersection(
            _preceding_words(text, found.start())
        ):
            return found[0]
    return None


def _for_parts(text: str) -> str | None:
    if found := _FOR_PARTS_CJK.search(text):
        return found[0]
    for found in _FOR_PARTS.finditer(text):
        if not _negated(_preceding_words(text, found.start())):
            return found[0]
    return None


def _laptop(text: str) -> str | None:
    found = _LAPTOP_CJK.search(text) or _LAPTOP.search(text)
    return found[0] if found else None


def _system(text: str) -> str | None:
    if found := _SYSTEM_CJK.search(text) or _SYSTEM.search(text):
        return found[0]
    if (ram := _RAM.search(text)) and _STORAGE.search(text):
        return ram[0] + " + storage"
    return None


def _lot(text: str) -> str | None:
    if found := _LOT_CJK.search(text) or _LOT.search(text) or _LOT_COUNT.search(text):
        return found[0].strip()
    for found in _LOT_SUFFIX.finditer(text):
        lanes = " " not in found[0] and _LANES.search(text[: found.start()])  # "pcie 4.0 x8"
        if not lanes:
            return found[0]
    return None


REJECTIONS = (
    ("accessory", _accessory),
    ("for_parts", _for_parts),
    ("laptop", _laptop),
    ("system", _system),
    ("lot", _lot),
)

# Memory ("80GB", "12 G", "24 Go", ASUS part numbers "O24G") and form factor in a title.
_MEMORY = re.compile(r"(?<![\w.])o?(\d{1,3})\s?(?:gb|g|go|gig)(?!\w)")
_FORMS = (
    ("nvl", re.compile(r"\bnvl\b")),
    ("sxm", re.compile(r"\bsxm\d?\b")),
    ("pcie", re.compile(r"\bpci[\s-]?e\b|\bpci[\s-]?express\b|\bpcie\d?\b")),
)


def _resolve(alias: str, keys: tuple[str, ...], text: str, catalog: Catalog) -> Match:
    """One model family named: let memory and form factor pick the variant."""
    variants = [v for key in keys for v in catalog.families.get(key, ())]
    used = []
    memories = {float(m) for m in _MEMORY.findall(text)}
    if len(variants) > 1 and (narrowed := [v for v in variants if v.memory_gb in memories]):
        variants = narrowed
        used.append(f"{narrowed[0].memory_gb:g} GB")
    forms = {form for form, pattern in _FORMS if pattern.search(text)}
    forms = {"nvl"} if "nvl" in forms else forms  # "H100 NVL PCIe": NVL is the more specific
    if len(variants) > 1 and (narrowed := [v for v in variants if v.form in forms]):
        variants = narrowed
        used.extend(sorted(forms))
    if len(variants) > 1:
        defaults = {catalog.defaults[key] for key in keys if key in catalog.defaults}
        variants = [v for v in variants if v.gpu in defaults] or variants
        if len(variants) == 1:
            used.append("default variant")
    if len(variants) > 1:
        labels = " / ".join(v.label for v in variants)
        return Match(None, f"ambiguous: {alias} could be {labels}")
    (variant,) = variants
    if variant.gpu is None:
        return Match(None, f"unknown: {variant.label} is not in the catalog")
    return Match(variant.gpu, "matched: " + " + ".join([alias, *used]))


def match_title(title: str, catalog: Catalog | None = None) -> Match:
    """The catalog GPU a listing title sells, or None with the reason it is not one."""
    if not title or not title.strip():
        return Match(None, "empty: empty title")
    catalog = catalog or Catalog.default()
    text = normalize(title)
    if not text:
        return Match(None, "empty: no text besides marketplace labels")
    for code, rule in REJECTIONS:
        if (detail := rule(text)) is not None:
            return Match(None, f"{code}: {detail}")
    mentions = catalog.mentions(tokens(text))
    # "Quadro RTX 6000 ... RTX 6000": keep the more specific mention of the same card.
    keysets = {frozenset(keys) for _, keys in mentions}
    contained = {k for keys in keysets for key in keys for k in CONTAINS.get(key, ())}
    mentions = [
        (alias, keys)
        for alias, keys in mentions
        if not set(keys) <= contained and not any(other < set(keys) for other in keysets)
    ]
    named = {frozenset(keys) for _, keys in mentions}
    in_catalog = [(alias, keys) for alias, keys in mentions if catalog.in_catalog(keys)]
    if not in_catalog:
        seen = ", ".join(dict.fromkeys(alias for alias, _ in mentions))
        return Match(
            None, f"unknown: {seen} not in the catalog" if seen else "unknown: no catalog GPU named"
        )
    if len(named) > 1:
        return Match(None, "multi_model: " + ", ".join(dict.fromkeys(a for a, _ in mentions)))
    alias, keys = in_catalog[0]
    return _resolve(alias, keys, text, catalog)


# ---------------------------------------------------------------------------------------
# Condition text
# ---------------------------------------------------------------------------------------

# Checked in this order: "Used - Like New" is used, "Renewed" is refurbished.
_CONDITIONS = (
    ("for_parts", re.compile(r"for\s+parts|not\s+working|\bdefekt|ジャンク|pour\s+pi[èe]ces")),
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


def match_command(argv: list[str], stdin: TextIO, stdout: TextIO) -> int:
    """`match "<title>"` prints one JSON line; `match -` matches stdin, one title a line."""
    if len(argv) != 1:
        print('usage: match "<title>" | match -', file=sys.stderr)
        return 2
    if argv[0] != "-":
        print(_as_json(match_title(argv[0])), file=stdout)
        return 0
    catalog = Catalog.default()
    for line in stdin:
        print(_as_json(match_title(line.rstrip("\r\n"), catalog)), file=stdout)
    return 0
