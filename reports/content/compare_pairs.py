"""Which GPU pairs get a compare page (issue 25, item 4): two rules and one curated list.

The pairs people ask about fall in a few groups (`GROUPS`, each with why it exists). Two of
them follow from the catalog alone, by rule, so a card added to the catalog gets its pages
without anyone remembering to list it:

- **generations**: a GeForce card and the card with the same tier name one generation on
  (`gtx-1080-ti` -> `rtx-2080-ti`, `rtx-3090` -> `rtx-4090` -> `rtx-5090`, memory and
  Ti/SUPER suffixes kept), and a Radeon RX 6000 card and its RX 7000 namesake
  (`rx-6800-xt` -> `rx-7800-xt`);
- **rivals**: each AMD Radeon RX or Intel Arc A/B consumer card and the GeForce RTX card
  with the nearest launch price among those released within `RIVAL_DAYS` days of it, when
  the two launch prices differ by at most `RIVAL_PRICE_GAP`.

The rest, which no catalog field can tell (which used flagship costs what a new mid-range
card costs, which consumer card people weigh against which data-center card, the
data-center generations and vendor rivals), is `CURATED`, the one list to edit. A curated
pair comes first and keeps its orientation; a pair the rules find again is not repeated
(a-vs-b and b-vs-a are one page). Every id must be a catalog `gpu_id`
(sources/data/specs/gpu_specs.csv): `compare_pairs` raises naming the pair otherwise.
"""

import datetime as dt
import re
from dataclasses import dataclass

import polars as pl

from reports.safety import slug

GROUPS = {
    "generations": (
        "One generation to the next, same tier: what an upgrade buys, or what the older "
        "card still gives per dollar."
    ),
    "rivals": (
        "Same-price rivals from different vendors: the choice at one price point, where "
        "software support differs."
    ),
    "new-vs-used": (
        "A used flagship against a new mid-range card at a similar price: more memory and "
        "speed used, or a warranty and lower power new."
    ),
    "consumer-vs-data-center": (
        "A consumer card against a workstation or data-center card: what the extra memory, "
        "price and interconnect buy."
    ),
    "data-center": (
        "Data-center generations and vendor rivals: what a newer or other-vendor "
        "accelerator buys per dollar and per rented hour."
    ),
    "llm-boxes": (
        "Large-memory boxes and cards bought to run big LLMs locally: memory against "
        "memory bandwidth."
    ),
}

# (a, b, group, market of a, market of b): the market is the one the verdict compares
# ("used", "new"); None compares each GPU at its best-value market. Why each pair is here is
# its group's reason in GROUPS.
CURATED: tuple[tuple[str, str, str, str | None, str | None], ...] = (
    # generations the issue names (the rule finds more)
    # (rtx-3090 vs rtx-4090, a generation too, is under new-vs-used: a used 3090 against a
    # new 4090 is how people ask it)
    ("rtx-4090", "rtx-5090", "generations", None, None),
    ("rtx-3090", "rtx-5090", "generations", None, None),
    ("rtx-4080-super", "rtx-5080", "generations", None, None),
    ("rtx-4070-ti-super", "rtx-5070-ti", "generations", None, None),
    ("rtx-a6000", "rtx-6000-ada", "generations", None, None),
    ("rtx-6000-ada", "rtx-pro-6000-blackwell", "generations", None, None),
    # same-price rivals the issue names (the rule finds more)
    ("rtx-4070-ti-super", "rx-7900-xtx", "rivals", None, None),
    ("rtx-4080-super", "rx-7900-xtx", "rivals", None, None),
    ("rtx-5070-ti", "rx-9070-xt", "rivals", None, None),
    ("rtx-5060-ti-16gb", "rx-9060-xt-16gb", "rivals", None, None),
    ("rtx-4060-ti-16gb", "arc-a770-16gb", "rivals", None, None),
    ("rtx-3060-12gb", "arc-b580", "rivals", None, None),
    ("rtx-6000-ada", "radeon-pro-w7900", "rivals", None, None),
    ("rtx-3090", "arc-pro-b60", "rivals", None, None),
    ("rtx-5090", "radeon-ai-pro-r9700", "rivals", None, None),
    # a used flagship against a new card at a similar price
    ("rtx-3090", "rtx-5070-ti", "new-vs-used", "used", "new"),
    ("rtx-3090", "rtx-4070-ti-super", "new-vs-used", "used", "new"),
    ("rtx-4090", "rtx-5080", "new-vs-used", "used", "new"),
    ("rtx-3080-ti", "rtx-5070", "new-vs-used", "used", "new"),
    ("rtx-2080-ti", "rtx-5060-ti-16gb", "new-vs-used", "used", "new"),
    ("rtx-3090", "rtx-4090", "new-vs-used", "used", "new"),
    ("rtx-a6000", "rtx-5090", "new-vs-used", "used", "new"),
    ("v100-sxm2-32gb", "rtx-5070-ti", "new-vs-used", "used", "new"),
    ("p40", "rtx-3060-12gb", "new-vs-used", "used", None),
    # consumer against workstation or data center
    ("rtx-4090", "l40s", "consumer-vs-data-center", None, None),
    ("rtx-5090", "rtx-pro-6000-blackwell", "consumer-vs-data-center", None, None),
    ("rtx-3090", "a100-pcie-40gb", "consumer-vs-data-center", None, None),
    ("rtx-3090", "a100-sxm4-80gb", "consumer-vs-data-center", None, None),
    ("rtx-3090", "rtx-a6000", "consumer-vs-data-center", None, None),
    ("rtx-4090", "rtx-6000-ada", "consumer-vs-data-center", None, None),
    ("rtx-4090", "h100-pcie-80gb", "consumer-vs-data-center", None, None),
    ("rtx-5090", "h100-sxm5-80gb", "consumer-vs-data-center", None, None),
    ("rtx-4090", "l4", "consumer-vs-data-center", None, None),
    # data-center generations and rivals
    ("a100-sxm4-80gb", "h100-sxm5-80gb", "data-center", None, None),
    ("a100-pcie-80gb", "h100-pcie-80gb", "data-center", None, None),
    ("v100-sxm2-32gb", "a100-sxm4-80gb", "data-center", None, None),
    ("h100-sxm5-80gb", "h200-sxm", "data-center", None, None),
    ("h100-sxm5-80gb", "b200", "data-center", None, None),
    ("h200-sxm", "b200", "data-center", None, None),
    ("b200", "b300", "data-center", None, None),
    ("h100-sxm5-80gb", "mi300x", "data-center", None, None),
    ("h200-sxm", "mi325x", "data-center", None, None),
    ("b200", "mi355x", "data-center", None, None),
    ("l40s", "h100-pcie-80gb", "data-center", None, None),
    # large-memory LLM boxes
    ("dgx-spark", "ryzen-ai-max-395-128gb", "llm-boxes", None, None),
    ("dgx-spark", "m3-ultra-96gb", "llm-boxes", None, None),
    ("dgx-spark", "rtx-5090", "llm-boxes", None, None),
    ("m3-ultra-256gb", "rtx-pro-6000-blackwell", "llm-boxes", None, None),
)

GEFORCE = re.compile(r"^(?:gtx|rtx)-(10|20|30|40|50)([5-9]0)(-[a-z0-9-]+)?$")
GEFORCE_NEXT = {"10": "20", "20": "30", "30": "40", "40": "50"}
RADEON = re.compile(r"^rx-(6|7)([5-9]00)(-[a-z0-9-]+)?$")
RADEON_NEXT = {"6": "7"}
RIVAL = re.compile(r"^(?:rx-\d|arc-[ab]\d)")  # AMD Radeon RX and Intel Arc consumer cards
GEFORCE_RTX = re.compile(r"^rtx-\d{4}")
RIVAL_DAYS = 365
RIVAL_PRICE_GAP = 0.10  # relative to the rival's launch price


@dataclass(frozen=True)
class Pair:
    """One compare page: `a` against `b`, why, and the markets its verdict compares."""

    a: str
    b: str
    group: str
    a_market: str | None = None
    b_market: str | None = None

    @property
    def name(self) -> str:
        """The page's file stem, `<a>-vs-<b>`."""
        return f"{self.a}-vs-{self.b}"

    @property
    def href(self) -> str:
        """The page, relative to a version's root folder."""
        return f"compare/{self.name}.html"

    def other(self, gpu_id: str) -> str:
        """The GPU this page compares `gpu_id` with."""
        return self.b if gpu_id == self.a else self.a


def generation_pairs(ids: set[str]) -> list[Pair]:
    """Same tier name, next generation (GeForce 10 to 50 series, Radeon RX 6000 to 7000)."""
    out = []
    for gpu_id in sorted(ids):
        if m := GEFORCE.match(gpu_id):
            gen, tier, suffix = m.groups()
            nxt = GEFORCE_NEXT.get(gen)
            successor = f"rtx-{nxt}{tier}{suffix or ''}" if nxt else None
        elif m := RADEON.match(gpu_id):
            gen, tier, suffix = m.groups()
            nxt = RADEON_NEXT.get(gen)
            successor = f"rx-{nxt}{tier}{suffix or ''}" if nxt else None
        else:
            continue
        if successor in ids:
            out.append(Pair(gpu_id, successor, "generations"))
    return out


def _launch(row: dict) -> tuple[float, dt.date] | None:
    price, day = row.get("launch_price_usd"), row.get("release_date")
    if price is None or day is None or price <= 0:
        return None
    return float(price), day if isinstance(day, dt.date) else dt.date.fromisoformat(str(day))


def rival_pairs(catalog: pl.DataFrame) -> list[Pair]:
    """Each Radeon RX / Arc card and the GeForce RTX card nearest in launch price (see module)."""
    launches = {
        r["gpu_id"]: hit for r in catalog.iter_rows(named=True) if (hit := _launch(r)) is not None
    }
    geforce = {g: v for g, v in launches.items() if GEFORCE_RTX.match(g)}
    out = []
    for gpu_id, (price, day) in sorted(launches.items()):
        if not RIVAL.match(gpu_id):
            continue
        near = [
            (abs(p - price), abs((d - day).days), g)
            for g, (p, d) in geforce.items()
            if abs((d - day).days) <= RIVAL_DAYS
        ]
        if not near:
            continue
        gap, _, best = min(near)
        if gap <= RIVAL_PRICE_GAP * price:
            out.append(Pair(best, gpu_id, "rivals"))
    return out


def curated_pairs(ids: set[str], strict: bool = False) -> list[Pair]:
    """CURATED as pairs; an unknown group, a self-pair or a bad market is an error.

    An id missing from `ids` is an error when `strict` (the test against the bundled catalog
    catches a typo); a site build skips the pair instead, so a version built on a smaller
    catalog (a deployment's own, a test's) still gets the pages it can have.
    """
    out = []
    for a, b, group, a_market, b_market in CURATED:
        where = f"reports/content/compare_pairs.py CURATED ({a}, {b})"
        missing = [g for g in (a, b) if g not in ids]
        if missing and strict:
            raise ValueError(f"{where}: not a catalog gpu_id: {', '.join(missing)}")
        if missing:
            continue
        if group not in GROUPS:
            raise ValueError(f"{where}: unknown group {group!r}")
        if a == b:
            raise ValueError(f"{where}: a GPU compared with itself")
        if {a_market, b_market} - {None, "new", "used"}:
            raise ValueError(f"{where}: a market is 'new', 'used' or None")
        out.append(Pair(a, b, group, a_market, b_market))
    return out


def compare_pairs(catalog: pl.DataFrame, strict: bool = False) -> list[Pair]:
    """Every compare page of a version: curated first, then the two rules; no pair twice.

    `catalog` is the gpus table (gpu_id, release_date, launch_price_usd). Every id is a
    safe file-name slug (reports.safety.slug), so `<a>-vs-<b>.html` stays in its folder.
    """
    ids = set(catalog["gpu_id"])
    seen: set[frozenset[str]] = set()
    out = []
    for pair in (*curated_pairs(ids, strict), *generation_pairs(ids), *rival_pairs(catalog)):
        key = frozenset((pair.a, pair.b))
        if key in seen or pair.a == pair.b:
            continue
        seen.add(key)
        slug(pair.a), slug(pair.b)  # raises on an id that is not a safe file name
        out.append(pair)
    return out
