"""GPU names -> canonical gpu_id: the one knowledge base for retail, cloud and benchmarks.

Neutral on purpose (no Dagster, no retail or cloud imports, no file read): the retail title
matcher (`sources.catalog`), the cloud name mapping (`sources.cloud.gpu_names`) and the
benchmark name mapping (`sources.benchmarks.names`) all read names through `Catalog` and
`gpu_for_name`, so a variant fact is written once, here or in the spec sheet. Callers build
the `Catalog` from the specs they hold (`Catalog.from_specs`): the ingest from the `gpus`
table, the file readers and the command line from the bundled sheet
(`sources.bundled.bundled_catalog`).

What a name says is read in three steps:

1. tokens: NFKC, lowercase, ASCII word tokens with glued model names split ("rtx4090ti"
   -> rtx 4090 ti, "RTXPRO6000" -> rtx pro 6000); clocks and sizes ("2070 MHz") removed;
2. model mentions: the longest alias at each position. Aliases come from the spec sheet's
   ids ("rtx-3060-12gb" -> family "rtx 3060", also "3060"; "rtx 4070 ti super" also
   "4070 ti s", "4070 super ti", "4070s ti") plus the tables below: extra aliases ("rtx
   6000" may be the Quadro or the Ada card), real cards outside the catalog (so "RTX 5050"
   is seen and reported, never read as something else) and non-catalog memory variants;
3. variant: memory and form factor pick the card of a family. A memory size or form
   factor that no card of the family has is a contradiction ("RTX 3090 12GB",
   "H100-SXM5-96GB"): no match, never a corrected one. When several cards remain, the
   context's default table decides: a bare "A100" on a cloud is the SXM4 40 GB part; in a
   retail title it is ambiguous.
"""

import functools
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import polars as pl

# ---------------------------------------------------------------------------------------
# Knowledge the spec sheet does not carry
# ---------------------------------------------------------------------------------------

# Real cards that share a catalog family's name but are not in the catalog: memory (or
# form factor) is what tells them apart, so a name without it is ambiguous.
# family key -> (label, memory_gb, form)
EXTRA_VARIANTS: dict[str, tuple[tuple[str, float, str], ...]] = {
    "gtx-1060": (("GeForce GTX 1060 3 GB", 3, "pcie"), ("GeForce GTX 1060 5 GB", 5, "pcie")),
    "rtx-3050": (("GeForce RTX 3050 6 GB", 6, "pcie"),),
    "rtx-pro-5000-blackwell": (("RTX PRO 5000 Blackwell 72 GB", 72, "pcie"),),
    "radeon-pro-w7800": (("Radeon PRO W7800 48 GB", 48, "pcie"),),
    "a800": (("A800 PCIe 40 GB", 40, "pcie"),),
    # Unified-memory machines: the catalog lists the configurations with a dated price.
    "m3-ultra": (("Mac Studio M3 Ultra 512 GB", 512, "system"),),
    "m4-max": tuple((f"M4 Max {gb} GB", gb, "system") for gb in (48, 64, 128)),
    "ryzen-ai-max-395": (("Ryzen AI Max+ 395 64 GB", 64, "system"),),
}

# Extra alias -> the families it may mean (several: memory or form factor decides).
EXTRA_ALIASES: dict[str, tuple[str, ...]] = {
    "rtx 4000": ("quadro-rtx-4000", "rtx-4000-ada"),
    "rtx 5000": ("quadro-rtx-5000", "rtx-5000-ada"),
    "rtx 6000": ("quadro-rtx-6000", "rtx-6000-ada"),
    "rtx 8000": ("quadro-rtx-8000",),
    "q rtx 6000": ("quadro-rtx-6000",),  # vast.ai's names for the Quadro cards
    "q rtx 8000": ("quadro-rtx-8000",),
    "rtx 4000 ada generation": ("rtx-4000-ada",),
    "rtx a6000 ada": ("rtx-a6000", "rtx-6000-ada"),  # sellers mix the two names up
    "rtx pro 4000": ("rtx-pro-4000-blackwell",),
    "rtx pro 4500": ("rtx-pro-4500-blackwell",),
    "rtx pro 5000": ("rtx-pro-5000-blackwell",),
    "rtx pro 6000": ("rtx-pro-6000-blackwell",),
    "rtx 6000 blackwell": ("rtx-pro-6000-blackwell",),
    "rtx pro 6000 max q": ("rtx-pro-6000-blackwell-max-q",),
    "rtx pro 6000 blackwell max q": ("rtx-pro-6000-blackwell-max-q",),
    "pro 6000 max q": ("rtx-pro-6000-blackwell-max-q",),
    "l40 s": ("l40s",),
    "titan x p": ("titan-xp",),
    "arc a770": ("arc-a770",),
    "radeon vii": (),  # seen, not in the catalog (see UNKNOWN_MODELS)
    "r9700": ("radeon-ai-pro-r9700",),  # "AMD Radeon AI PRO R9700" is often just "R9700"
    "ryzen ai max 395": ("ryzen-ai-max-395-128gb",),  # "Ryzen AI Max+ 395"
}

# Models that are not in the catalog but would otherwise be read as one that is (the
# longest alias wins, so "RTX 5050" is never "RTX 50..." noise and "RTX PRO 6000 Server"
# never the Workstation card), or that deserve a name in the `unknown` reason.
UNKNOWN_MODELS: tuple[str, ...] = (
    "GTX 1050",
    "GTX 1050 Ti",
    "GTX 1630",
    "GTX 1650 SUPER",
    "GTX 970",
    "GTX 980",
    "GTX 980 Ti",
    "GT 1030",
    "GT 730",
    "RTX 2050",
    "RTX 3050 Ti",
    "RTX 4050",
    "RTX 5090 D V2",
    "RTX 5070 SUPER",
    "RTX 5080 SUPER",
    "RTX 2000 Ada",
    "RTX 4500 Ada",
    "RTX PRO 2000",
    "RTX PRO 6000 Blackwell Server",
    "RTX PRO 6000 Server",
    "RTX A1000",
    "A1000",
    "RTX A400",
    "T1000",
    "T400",
    "Quadro P1000",
    "Quadro P2000",
    "Quadro P2200",
    "Quadro P4000",
    "Quadro P5000",
    "Quadro P6000",
    "Quadro M4000",
    "Quadro RTX 3000",
    "Titan X",
    "Titan Black",
    "Tesla M40",
    "Tesla M60",
    "Tesla K40",
    "M40",
    "M60",
    "K40",
    "P6",
    "RX 470",
    "RX 480",
    "RX 570",
    "RX 580",
    "RX 590",
    "RX 5500 XT",
    "RX 5600 XT",
    "RX 5700",
    "RX 5700 XT",
    "RX 6400",
    "RX 6500 XT",
    "RX 6600",
    "RX 6600 XT",
    "RX 6650 XT",
    "RX 6700",
    "RX 6750 XT",
    "RX 6750 GRE",
    "RX 7650 GRE",
    "RX 7700",
    "RX 9060",
    "RX 9070 GRE",
    "Radeon VII",
    "Vega 56",
    "Vega 64",
    "Radeon PRO W5700",
    "Radeon PRO W6600",
    "Radeon PRO W7600",
    "Radeon PRO W7700",
    "Arc A310",
    "Arc A380",
    "Arc A580",
    "Arc Pro B60 Dual",
    "MI25",
    "MI300",
    "MI308X",
    "MI350X",
    "B100",
    "H20",
)

# A single model mention that also names another model: GH200 pairs an H100 GPU, GB200
# two B200s.
CONTAINS: dict[str, frozenset[str]] = {
    "gh200": frozenset({"h100"}),
    "gb200": frozenset({"b200"}),
}

# Which card a name means when it names a family and nothing else, per context. Retail
# titles are read strictly: only where the other cards are rare late variants.
RETAIL_DEFAULTS: dict[str, str] = {
    "rtx-2060": "rtx-2060",  # the 12 GB card is a late variant; plain "RTX 2060" is 6 GB
    "h200": "h200-sxm",  # "H200" alone is the SXM part; the PCIe card is always "H200 NVL"
    "gh200": "gh200-96gb",
}
# A provider's own GPU names and benchmark tables: the instance type or system fixes the
# variant, and the bare name is the part they have always meant by it.
CLOUD_DEFAULTS: dict[str, str] = {
    **RETAIL_DEFAULTS,
    "a100": "a100-sxm4-40gb",  # GCP a2-highgpu, Lambda gpu_*_a100, Azure ND96asr_v4
    "a800": "a800-sxm4-80gb",
    "h100": "h100-sxm5-80gb",  # "H100", "H100-MEGA", "H100 80GB HBM3"
    "h800": "h800-sxm5-80gb",
    "v100": "v100-sxm2-16gb",  # GCP, Lambda, DGX-1
    "p100": "p100-pcie-16gb",  # GCP nvidia-tesla-p100
    "rtx 6000": "quadro-rtx-6000",  # Lambda gpu_1x_rtx6000 (24 GB)
    "rtx 5000": "quadro-rtx-5000",
    "rtx 4000": "quadro-rtx-4000",
    "rtx-3060": "rtx-3060-12gb",
    "rtx-3080": "rtx-3080-10gb",
    "rtx-4060-ti": "rtx-4060-ti-16gb",
    "rtx-5060-ti": "rtx-5060-ti-16gb",
    "rtx-a2000": "rtx-a2000-12gb",
    "mi50": "mi50-32gb",
}
# Aggregators (gpuhunt, Prime Intellect) list every provider's cards under one bare name:
# a family sold in several variants needs the name (or memory) to pin one.
AGGREGATOR_DEFAULTS: dict[str, str] = {"gh200": "gh200-96gb"}

# Memory types that tell a family's form factors apart: the H100 PCIe card carries HBM2e,
# the SXM5 module and the NVL card HBM3 ("H100 80GB HBM2e ... Dell" is the PCIe card).
MEMORY_TYPE_FORMS: dict[str, dict[str, str]] = {"h100": {"hbm2e": "pcie"}}

# Laptop and embedded parts share desktop names; they are never a catalog card.
_LAPTOP_PART = re.compile(r"(?<!\w)(?:max[\s-]?q|laptops?|mobile|notebooks?)(?!\w)", re.I)
# "RTX PRO 6000 Blackwell Max-Q Workstation Edition" is a desktop card.
_MAX_Q_CARD = re.compile(r"pro\s?6000\s+(?:blackwell\s+)?max[\s-]?q", re.IGNORECASE)

# Words after a model number that make it another model ("4090 D", "3070 Ti").
_MODEL_SUFFIXES = [[suffix] for suffix in ("ti", "super", "d", "xt", "xtx", "gre")]

_FORM_PARTS = frozenset({"pcie", "sxm", "sxm2", "sxm4", "sxm5", "nvl"})
_MEMORY_PART = re.compile(r"\d+gb")
# A stated memory size matches a card within this (provider figures: 79.6, 81.9, "140GB"
# for the 141 GB H200, "192GB" for the 180 GB usable on a B200).
MEMORY_TOLERANCE = 0.12


def laptop_part(name: str) -> str | None:
    """The word that makes a name a laptop part ("RTX 2080 SUPER Max-Q", "4090 Laptop")."""
    found = _LAPTOP_PART.search(name)
    if found is None or (found[0].lower().startswith("max") and _MAX_Q_CARD.search(name)):
        return None
    return found[0].lower()


@dataclass(frozen=True)
class Match:
    """The outcome of reading one name: a catalog id, or None and why not."""

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
_EBAY_PREFIX = re.compile(r"^\s*new\s*listing\s*[:\-]?\s*")  # also glued: "New ListingNVIDIA"
_EBAY_SUFFIX = re.compile(r"\s*opens\s+in\s+a\s+new\s+window\s+or\s+tab\s*$")
_WITHOUT = re.compile(r"(?<!\w)w/o(?!\w)")
_WITH = re.compile(r"(?<!\w)w/")
# Board names whose "3X"/"X3" is a fan count, not a quantity.
_BOARD_NOISE = re.compile(r"\b(?:ventus|windforce)\s?[23]x\b|\bichill\s?x[2-5]\b|\btwin\s?x2\b")
# Inno3D names its three-fan boards "X3" anywhere in the title ("RTX 5060 Ti 16GB X3"): in
# its titles the token is the cooler, not a lot of three.
_INNO3D_X3 = re.compile(r"\bx3\b")

# Clocks, bandwidth, power, sizes, resolutions: "2070 MHz" is no RTX 2070, "1080p" no GTX 1080.
_MEASURES = re.compile(r"\d+(?:\.\d+)?(?:[\s-]?(?:mhz|ghz|gbps|gb/s|watts?|mm|bit|hz)|w|p)(?!\w)")
_PREFIXED = re.compile(r"^(rtx|gtx|rx|quadro|tesla|titan|radeon|geforce)(pro)?(\d\w*|a\d+)$")
_SUFFIX_WORDS = "ti|super|xtx|xt|gre|gb|go|g|d|s|x"
_SUFFIXES = re.compile(f"(?:{_SUFFIX_WORDS})+")
_SUFFIX = re.compile(_SUFFIX_WORDS)


def normalize(title: str) -> str:
    """NFKC, lowercase, trademark signs and marketplace text removed, spaces collapsed."""
    text = unicodedata.normalize("NFKC", _MARKS.sub(" ", title)).lower()
    text = _EBAY_SUFFIX.sub("", _EBAY_PREFIX.sub("", text))
    text = _WITH.sub(" with ", _WITHOUT.sub(" without ", text))
    text = _BOARD_NOISE.sub(" ", text)
    if "inno3d" in text:
        text = _INNO3D_X3.sub(" ", text)
    return " ".join(text.split())


def tokens(text: str) -> list[str]:
    """ASCII word tokens with glued model names split: "rtx4090ti" -> rtx 4090 ti.

    Tokens that start with a digit are split into digit and letter runs ("24gb" -> 24
    gb, "7900xtx" -> 7900 xtx, "4070tisuper" -> 4070 ti super); tokens that start with a
    letter stay whole ("a100", "l40s", "mi300x") unless a brand prefix is glued on.
    """
    out: list[str] = []
    for raw in re.findall(r"[a-z0-9]+", _MEASURES.sub(" ", text)):
        if prefixed := _PREFIXED.match(raw):
            out.extend(p for p in prefixed.groups()[:2] if p)
            raw = prefixed[3]
        if not raw[0].isdigit():
            # "tis", "tisuper" standing alone are suffixes too; "a100", "l40s" stay whole
            out.extend(_SUFFIX.findall(raw) if _SUFFIXES.fullmatch(raw) else [raw])
            continue
        for run in re.findall(r"\d+|[a-z]+", raw):
            out.extend(_SUFFIX.findall(run) if _SUFFIXES.fullmatch(run) else [run])
    return out


def _alias_forms(words: tuple[str, ...]) -> set[tuple[str, ...]]:
    """The token sequences that name a model.

    "rtx 4080 super" -> also "4080 super", "4080 s", "rtx 4080 s"; "rtx 4070 ti super" ->
    also "4070 super ti"; "radeon pro w7900" -> also "w7900", "pro w7900"; "mi300x" ->
    also "mi 300 x".
    """
    forms = {words}
    # GeForce/Radeon/Arc numbers are named without the brand too ("4090", "7900 xtx",
    # "a770"), but workstation "RTX 6000" needs its prefix: a bare "6000" is too common.
    rest = words[1:]
    if words[0] in ("rtx", "rx", "gtx", "arc", "radeon") and rest:
        if not (len(rest) == 1 and rest[0].isdigit() and rest[0].endswith("000")):
            forms.add(rest)
    if words[:2] == ("radeon", "pro"):
        forms.add(words[2:])
    forms |= {tuple("s" if w == "super" else w for w in form) for form in forms}
    # "4070 SUPER Ti" is how some sellers write the 4070 Ti SUPER.
    forms |= {_swap(form, "ti", "super") for form in forms}
    forms |= {_swap(form, "ti", "s") for form in forms}
    split = set()
    for form in forms:
        for i, word in enumerate(form):
            if glued := re.fullmatch(r"([a-z]{2,})(\d+)([a-z]*)", word):
                split.add(form[:i] + tuple(p for p in glued.groups() if p) + form[i + 1 :])
    return forms | split


def _swap(form: tuple[str, ...], first: str, second: str) -> tuple[str, ...]:
    """`form` with adjacent `first second` written `second first` (unchanged otherwise)."""
    for i in range(len(form) - 1):
        if form[i : i + 2] == (first, second):
            return form[:i] + (second, first) + form[i + 2 :]
    return form


def family_key(gpu_id: str) -> str:
    """The spec id without memory and form factor: a100-sxm4-80gb -> a100."""
    parts = gpu_id.split("-")
    return "-".join(p for p in parts if p not in _FORM_PARTS and not _MEMORY_PART.fullmatch(p))


# Memory ("80GB", "12 G", "24 Go", ASUS part numbers "O24G") and form factor in a name.
_MEMORY = re.compile(r"(?<![\w.])o?(\d{1,3})\s?(?:gb|g|go|gig)(?!\w)")
_MEMORY_GLUED = re.compile(r"(?<=[a-z])-?(\d{2,3})gb(?!\w)")  # "A100-SXM4-40GB", "Ti16GB"
_MEMORY_PART_NUMBER = re.compile(r"(?<=-)o?(\d{1,2})gd\w?(?!\w)")  # Gigabyte "GV-N406TEAGLE-8GD"
_FORMS = (
    ("nvl", re.compile(r"\bnvl\b")),
    ("sxm", re.compile(r"\bsxm\d?\b|\bsxm\d?(?=[-_ ])")),
    ("pcie", re.compile(r"\bpci[\s-]?e\b|\bpci[\s-]?express\b|\bpcie\d?\b")),
)


def stated_memory(text: str) -> set[float]:
    """Memory sizes a normalized name states ("24GB", "O24G", "a100-sxm4-40gb")."""
    found = _MEMORY.findall(text) + _MEMORY_GLUED.findall(text) + _MEMORY_PART_NUMBER.findall(text)
    return {float(m) for m in found}


def stated_forms(text: str) -> set[str]:
    """Form factors a normalized name states; NVL wins over PCIe ("H100 NVL PCIe")."""
    forms = {form for form, pattern in _FORMS if pattern.search(text.replace("_", " "))}
    return {"nvl"} if "nvl" in forms else forms


def _memory_fits(variant: Variant, memory: float) -> bool:
    return variant.memory_gb is not None and (
        abs(variant.memory_gb - memory) <= MEMORY_TOLERANCE * variant.memory_gb
    )


# ---------------------------------------------------------------------------------------
# The catalog: alias table built from the spec sheet
# ---------------------------------------------------------------------------------------


class Catalog:
    """Alias rules for the GPUs of a spec sheet.

    Built from rows with gpu_id, name, form_factor and memory_gb; names can only be read
    as these rows' ids.
    """

    def __init__(self, rows: Iterable[Mapping[str, object]]) -> None:
        families: dict[str, list[Variant]] = {}
        for row in rows:
            gpu = str(row["gpu_id"])
            form = "nvl" if "nvl" in gpu.split("-") else str(row["form_factor"])
            variant = Variant(gpu, str(row["name"]), float(str(row["memory_gb"])), form)
            families.setdefault(family_key(gpu), []).append(variant)
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
        self._longest = max(len(alias) for alias in aliases)

    @classmethod
    def from_specs(cls, specs: pl.DataFrame) -> "Catalog":
        """The catalog of a spec frame (the `gpus` table or the bundled spec sheet).

        The caller reads the specs: this module reads no files, so the readers of bundled
        and fetched files can read names through it.
        """
        return cls(specs.iter_rows(named=True))

    @functools.cached_property
    def gpu_ids(self) -> frozenset[str]:
        """Every id a name can be read as."""
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

    def models(self, words: list[str]) -> list[tuple[str, tuple[str, ...]]]:
        """`mentions` without the ones another mention already covers.

        "Quadro RTX 6000 ... RTX 6000" keeps the more specific mention of the same card;
        "GH200" is not also an H100.
        """
        mentions = self.mentions(words)
        keysets = {frozenset(keys) for _, keys in mentions}
        contained = {k for keys in keysets for key in keys for k in CONTAINS.get(key, ())}
        return [
            (alias, keys)
            for alias, keys in mentions
            if not set(keys) <= contained and not any(other < set(keys) for other in keysets)
        ]

    def in_catalog(self, keys: tuple[str, ...]) -> bool:
        """Whether any card of these families is a catalog GPU."""
        return any(v.gpu for key in keys for v in self.families.get(key, ()))

    def resolve(
        self,
        alias: str,
        keys: tuple[str, ...],
        text: str,
        defaults: Mapping[str, str],
        memory_gb: float | None = None,
    ) -> Match:
        """One model family named: let memory and form factor pick the variant.

        The family's cards are narrowed by each of `NARROWING_STEPS` in turn; a step that
        finds the name contradicting every card ends the reading with its conflict.

        Args:
            alias: The text that named the model.
            keys: Its family keys.
            text: The normalized name (memory and form factor are read from it).
            defaults: The context's {family key or alias: gpu_id} for a bare name.
            memory_gb: Memory per GPU stated beside the name (a provider's field).
        """
        family = tuple(v for key in keys for v in self.families.get(key, ()))
        name = NamedFamily(alias, keys, text, defaults, family, memory_gb)
        variants, used = list(family), []
        for step in NARROWING_STEPS:
            outcome = step(name, variants)
            if isinstance(outcome, Match):
                return outcome
            variants, notes = outcome
            used.extend(notes)
        return _verdict(alias, variants, used)


# ---------------------------------------------------------------------------------------
# Resolving a family to one card: narrowing steps, applied in order
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NamedFamily:
    """A model family named in a text, with what the text says about the card."""

    alias: str
    keys: tuple[str, ...]
    text: str
    defaults: Mapping[str, str]
    family: tuple[Variant, ...]
    memory_gb: float | None = None  # stated beside the name (a provider's field)

    @property
    def label(self) -> str:
        """How a conflict names the model: the card's label, or the alias for a family."""
        return self.family[0].label if len(self.family) == 1 else self.alias

    @functools.cached_property
    def memories(self) -> set[float]:
        """Memory sizes stated in the text, else the stated field."""
        return stated_memory(self.text) or ({self.memory_gb} if self.memory_gb else set())


# A step narrows the remaining cards (and says what it used) or returns the conflict.
Narrowed = tuple[list[Variant], list[str]]
Step = Callable[[NamedFamily, list[Variant]], Narrowed | Match]


def _by_memory(name: NamedFamily, variants: list[Variant]) -> Narrowed | Match:
    """Cards whose memory fits a stated size (the nearest, when several fit)."""
    memories = name.memories
    if not memories or not any(v.memory_gb for v in variants):
        return variants, []
    fits = [v for v in variants if any(_memory_fits(v, m) for m in memories)]
    if not fits:
        sizes = "/".join(sorted({f"{v.memory_gb:g}" for v in variants if v.memory_gb}))
        stated = "/".join(f"{m:g}" for m in sorted(memories))
        return Match(None, f"memory_conflict: {name.label} has {sizes} GB, not {stated} GB")
    if len(variants) == 1:
        return variants, []
    nearest = min(abs(v.memory_gb - m) for v in fits for m in memories if v.memory_gb)
    closest = [
        v for v in fits if any(v.memory_gb and abs(v.memory_gb - m) == nearest for m in memories)
    ]
    return closest, [f"{closest[0].memory_gb:g} GB"]


def _by_form(name: NamedFamily, variants: list[Variant]) -> Narrowed | Match:
    """Cards of a stated form factor; a form no card has is a conflict."""
    forms = stated_forms(name.text)
    if not forms:
        return variants, []
    # An NVL card is a PCIe card too ("H100 94GB PCIe"), when nothing else fits.
    narrowed = [v for v in variants if v.form in forms] or [
        v for v in variants if v.form == "nvl" and "pcie" in forms
    ]
    if not narrowed and all(v.form for v in variants):
        stated = "/".join(sorted(forms))
        return Match(None, f"form_conflict: {name.label} is not sold as {stated}")
    if narrowed and len(variants) > 1:
        return narrowed, sorted(forms)
    return variants, []


def _by_memory_type(name: NamedFamily, variants: list[Variant]) -> Narrowed | Match:
    """Cards of the form factor a stated memory type implies (HBM2e: the H100 PCIe)."""
    hints = {
        form
        for key in name.keys
        for memory_type, form in MEMORY_TYPE_FORMS.get(key, {}).items()
        if re.search(rf"\b{memory_type}\b", name.text)
    }
    narrowed = [v for v in variants if v.form in hints]
    if len(variants) > 1 and narrowed:
        return narrowed, sorted(hints)
    return variants, []


def _by_default(name: NamedFamily, variants: list[Variant]) -> Narrowed | Match:
    """The context's default card, or else the cards of the default's form.

    A bare "A100 80GB" on a cloud is the SXM4 80 GB part, as a bare "A100" is the SXM4
    40 GB one.
    """
    if len(variants) <= 1:
        return variants, []
    wanted = {name.defaults[k] for k in (name.alias, *name.keys) if k in name.defaults}
    default_forms = {v.form for v in name.family if v.gpu in wanted}
    chosen = (
        [v for v in variants if v.gpu in wanted]
        or [v for v in variants if v.form in default_forms]
        or variants
    )
    return chosen, (["default variant"] if len(chosen) == 1 else [])


NARROWING_STEPS: tuple[Step, ...] = (_by_memory, _by_form, _by_memory_type, _by_default)


def _verdict(alias: str, variants: list[Variant], used: list[str]) -> Match:
    """The one card left, or why there is none (several left, or one outside the catalog)."""
    if len(variants) > 1:
        labels = " / ".join(v.label for v in variants)
        return Match(None, f"ambiguous: {alias} could be {labels}")
    (variant,) = variants
    if variant.gpu is None:
        return Match(None, f"unknown: {variant.label} is not in the catalog")
    return Match(variant.gpu, "matched: " + " + ".join([alias, *used]))


def read_models(
    text: str, catalog: Catalog, defaults: Mapping[str, str], memory_gb: float | None = None
) -> Match:
    """The one catalog GPU a normalized name names, or None with the reason.

    Shared by every context after its own cleaning: no model, a model outside the
    catalog, two models, or a variant the name cannot pin is None with its reason.
    """
    if part := laptop_part(text):
        return Match(None, f"laptop: {part} (a laptop part shares the desktop card's name)")
    mentions = catalog.models(tokens(text))
    in_catalog = [(alias, keys) for alias, keys in mentions if catalog.in_catalog(keys)]
    if not in_catalog:
        seen = ", ".join(dict.fromkeys(alias for alias, _ in mentions))
        return Match(
            None, f"unknown: {seen} not in the catalog" if seen else "unknown: no catalog GPU named"
        )
    if len({frozenset(keys) for _, keys in mentions}) > 1:
        return Match(None, "multi_model: " + ", ".join(dict.fromkeys(a for a, _ in mentions)))
    alias, keys = in_catalog[0]
    return catalog.resolve(alias, keys, text, defaults, memory_gb)


def gpu_for_name(
    name: str,
    catalog: Catalog,
    defaults: Mapping[str, str] = CLOUD_DEFAULTS,
    memory_gb: float | None = None,
) -> str | None:
    """The gpu_id a provider's or benchmark's GPU name means, or None.

    Args:
        name: e.g. "NVIDIA A100-SXM4-80GB", "H100 NVL", "RTX 4070S Ti", "MI300X".
        catalog: The GPUs the name may be read as.
        defaults: The context's table for bare names (CLOUD_DEFAULTS, AGGREGATOR_DEFAULTS).
        memory_gb: Memory per GPU when the source states it; decides variants (A100 40/80
            GB, V100 16/32 GB, H100 NVL, RTX 6000 Turing/Ada) the name does not.
    """
    if not name:
        return None
    return read_models(normalize(name), catalog, defaults, memory_gb).gpu
