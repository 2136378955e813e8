"""Cloud offer integrity before publish: pure rules over `cloud_offers` rows (issue 26).

A provider's offers of one night are checked before they are loaded; what fails is never a
`cloud_offers` row (so never a model input, a rent pick or a site figure) but a
`cloud_quarantine` row with its rule and reason (docs/methodology.md, "Cloud offer
integrity"). In order:

1. Duplicates (`collapse_duplicates`): rows with one key (provider, instance type, region,
   price type, GPU, day) and one price collapse into one, counted; one key with two prices
   or GPU counts is a source contradicting itself, and the provider's night is refused
   (`IntegrityError`: the load fails loudly, the other providers go on).
2. Price rules (`check_offers`), each offer against what it can be compared with:
   - `gpu_band`: every GPU, always (the thin-evidence rule): at least $0.01 and
     $0.001 per GB of memory per GPU-hour, at most $1.00 per GB. The bundled snapshot's
     cheapest is $0.0044/GB-h (vast.ai, an RTX 3060 12 GB at $0.0525), its dearest
     $0.21/GB-h (Azure, a V100 16 GB at $3.365): the band is 4.4x and 4.8x beyond them.
   - `discount_above_list`: a spot or reserved price above the same instance's on-demand
     price of the night is not a discount; the discount row is quarantined.
   - `instance_history`: the same instance (instance type, region, price type, GPU) in the
     provider's own offers of the last `HISTORY_DAYS` days: more than `INSTANCE_FACTOR`
     times above or below its median there.
   - `provider_history`: when the instance is new, the provider's own offers of that GPU
     and price type in the window: outside their robust band (`robust_band`, `HISTORY_K`).
   - `cross_provider`: the other providers' newest snapshot within `REFERENCE_DAYS` of the
     offer, same GPU and price type, one median per provider: outside their robust band
     (`CROSS_K_LOW` below, `CROSS_K_HIGH` above).
   The reason names every rule the offer fails, with the band and the evidence.
3. The night (`rejection`): when more than `REJECT_SHARE` of a provider's offers, and at
   least `REJECT_MIN` of them, fail the price bounds, the source has changed underneath us
   (a unit, a currency, a parser): its night is refused like a conflicting duplicate.
"""

import datetime as dt
import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

import polars as pl

# Duplicates: what names one offer of one night.
KEY = ("provider", "instance_type", "region", "price_type", "gpu_id")
# The thin-evidence band (see the module docstring for its figures).
FLOOR_USD_PER_GPU_HOUR = 0.01
FLOOR_USD_PER_GB_HOUR = 0.001
CEILING_USD_PER_GB_HOUR = 1.0
# History: a provider's own offers of the last 90 days (earlier nights only).
HISTORY_DAYS = 90
# 3.5: a GPU count read as 4x or 8x its value moves the per-GPU price 4x or 8x; an
# instance's own list price does not move that much in 90 days (AWS's 2025 H100 cut was
# 45 %), and a marketplace host repricing past 3.5x loses one listing, not the night.
INSTANCE_FACTOR = 3.5
# Robust bands: median - k_low / + k_high scaled MADs of ln(USD per GPU-hour), the scale
# never under ln 2 (so k = 5 is at least 2**5 = 32x). Across providers the reference is
# one median per other provider (a cloud listing 300 regions counts as much as a
# marketplace listing one offer). Below, the dangerous side (a too-low price becomes the
# pick, issue 26's $0.0001 H100): k 5. The widest legitimate gap below in the bundled
# snapshot is 16x (V100 PCIe 16 GB on-demand: RunPod $0.19 against Azure's $3.06), 4.0
# units: k 5 leaves 2x of margin. Above, a too-high price is never a pick and the gaps are
# wider (Azure's Brazil South V100 at $6.12-$6.73 is 35x RunPod's $0.19 in the real
# captures), so k 7 (>= 128x); the GPU band's ceiling and the $100 cap stand beside it.
# Within one provider the widest spread is 4.1x (Azure A10 on-demand, $1.10-$4.52 per GPU
# by size): k 3 (>= 8x) either way.
MIN_SCALE = math.log(2.0)
CROSS_K_LOW = 5.0
CROSS_K_HIGH = 7.0
HISTORY_K = 3.0
REFERENCE_DAYS = 365
# A provider's night is refused past this share of offers out of bounds.
REJECT_SHARE = 0.25
REJECT_MIN = 3
DISCOUNT_TYPES = ("spot", "reserved_1y", "reserved_3y")
# Rules that count toward refusing a night (a spot quirk does not).
PRICE_RULES = ("gpu_band", "instance_history", "provider_history", "cross_provider")

QUARANTINE_SCHEMA = {
    "rule": pl.Utf8,
    "reason": pl.Utf8,
    "low_usd_per_gpu_hour": pl.Float64,
    "high_usd_per_gpu_hour": pl.Float64,
}


class IntegrityError(ValueError):
    """A provider's offers of a night that may not be loaded.

    Conflicting duplicates, or too many offers out of bounds: the provider's load fails,
    with this reason.
    """


@dataclass(frozen=True)
class Duplicates:
    """What `collapse_duplicates` did: identical rows collapsed."""

    collapsed: int


# The day an offer was observed on (its night).
DAY = pl.col("observed_at").cast(pl.Date).alias("day")


def _conflicts(keyed: pl.DataFrame) -> pl.DataFrame:
    """Offers of one night said two ways: (key, prices, counts) of each conflict.

    One offer (KEY, day and GPU count) at two prices; or one named instance at two GPU
    counts (an instance has one). A row without an instance type (a SkyPilot accelerator
    row priced per 1, 2, 4, 8 GPUs) is one offer per GPU count.
    """
    key = [*KEY, "day"]
    prices = keyed.group_by([*key, "gpu_count"]).agg(
        pl.col("usd_per_hour").unique().sort().alias("prices"),
        pl.col("gpu_count").unique().alias("counts"),
    )
    counts = (
        keyed.filter(pl.col("instance_type").is_not_null())
        .group_by(key)
        .agg(
            pl.col("usd_per_hour").unique().sort().alias("prices"),
            pl.col("gpu_count").unique().sort().alias("counts"),
        )
    )
    return (
        pl.concat([prices.drop("gpu_count"), counts], how="vertical_relaxed")
        .filter((pl.col("prices").list.len() > 1) | (pl.col("counts").list.len() > 1))
        .unique(key, keep="first", maintain_order=True)
        .sort(key, nulls_last=True)
    )


def collapse_duplicates(rows: pl.DataFrame) -> tuple[pl.DataFrame, Duplicates]:
    """Rows with identical duplicates collapsed into one (counted).

    Raises:
        IntegrityError: One offer with two prices, or one instance with two GPU counts
            (`_conflicts`), naming the first few conflicts.
    """
    if rows.is_empty():
        return rows, Duplicates(0)
    keyed = rows.with_columns(DAY)
    conflicts = _conflicts(keyed)
    if conflicts.height:
        named = "; ".join(
            f"{r['instance_type'] or r['gpu_id']} {r['region'] or ''} {r['price_type']} "
            f"{r['day']}: ${', $'.join(f'{p:g}' for p in r['prices'])}/h"
            + (f" x {sorted(r['counts'])} GPUs" if len(r["counts"]) > 1 else "")
            for r in conflicts.head(3).iter_rows(named=True)
        )
        raise IntegrityError(
            f"integrity: {conflicts.height} conflicting duplicate offer(s) (one instance, "
            f"region, price type and day at two prices or GPU counts): {named}"
        )
    unique = keyed.unique([*KEY, "day", "gpu_count"], keep="first", maintain_order=True)
    return unique.drop("day"), Duplicates(rows.height - unique.height)


def robust_band(
    values: Iterable[float], k_low: float, k_high: float | None = None
) -> tuple[float, float] | None:
    """(low, high) USD per GPU-hour: median - k_low and + k_high scaled MADs of ln(price).

    The scale is 1.4826 MAD (the standard deviation of a normal sample), never under
    `MIN_SCALE`: one reference price, or several equal ones, still leave a band. None when
    there is no reference price.
    """
    logs = [math.log(v) for v in values if v > 0]
    if not logs:
        return None
    center = statistics.median(logs)
    mad = statistics.median(abs(v - center) for v in logs)
    scale = max(1.4826 * mad, MIN_SCALE)
    high = k_low if k_high is None else k_high
    return math.exp(center - k_low * scale), math.exp(center + high * scale)


def gpu_band(memory_gb: float | None) -> tuple[float, float]:
    """The thin-evidence band of a GPU with `memory_gb` of memory (USD per GPU-hour)."""
    if memory_gb is None or not memory_gb > 0:
        return FLOOR_USD_PER_GPU_HOUR, math.inf
    low = max(FLOOR_USD_PER_GPU_HOUR, FLOOR_USD_PER_GB_HOUR * memory_gb)
    return low, CEILING_USD_PER_GB_HOUR * memory_gb


@dataclass
class _Reference:
    """One night's evidence for one provider: USD per GPU-hour lists by what they match."""

    instance: dict[tuple, list[float]] = field(default_factory=dict)
    group: dict[tuple, list[float]] = field(default_factory=dict)
    others: dict[tuple, dict[str, list[float]]] = field(default_factory=dict)
    list_price: dict[tuple, float] = field(default_factory=dict)


def _reference(provider: str, day: dt.date, reference: pl.DataFrame) -> _Reference:
    """The evidence an offer of `provider` on `day` is compared with (module docstring)."""
    ref = _Reference()
    days = reference.with_columns(DAY)
    own = days.filter(
        (pl.col("provider") == provider)
        & (pl.col("day") < day)
        & (pl.col("day") >= day - dt.timedelta(days=HISTORY_DAYS))
    )
    for r in own.iter_rows(named=True):
        inst = (r["instance_type"], r["region"], r["price_type"], r["gpu_id"])
        ref.instance.setdefault(inst, []).append(r["usd_per_gpu_hour"])
        ref.group.setdefault((r["gpu_id"], r["price_type"]), []).append(r["usd_per_gpu_hour"])
    near = days.filter(
        (pl.col("provider") != provider)
        & ((pl.col("day") - pl.lit(day)).dt.total_days().abs() <= REFERENCE_DAYS)
    )
    # Each other provider's newest snapshot near the day: what the model reads beside it.
    newest = near.filter(pl.col("day") == pl.col("day").max().over("provider"))
    for r in newest.iter_rows(named=True):
        by_provider = ref.others.setdefault((r["gpu_id"], r["price_type"]), {})
        by_provider.setdefault(r["provider"], []).append(r["usd_per_gpu_hour"])
    return ref


def _money(value: float) -> str:
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"


def _outside(price: float, band: tuple[float, float]) -> bool:
    return not band[0] <= price <= band[1]


def _failures(
    offer: dict, ref: _Reference, memory: dict[str, float]
) -> list[tuple[str, str, float, float]]:
    """Every rule `offer` fails: (rule, reason, low, high)."""
    price, gpu, kind = offer["usd_per_gpu_hour"], offer["gpu_id"], offer["price_type"]
    found = []
    band = gpu_band(memory.get(gpu))
    if _outside(price, band):
        found.append(
            (
                "gpu_band",
                f"{_money(price)}/GPU-h is outside {gpu}'s plausible band "
                f"{_money(band[0])}-{_money(band[1])} (from its {memory.get(gpu, 0):g} GB of "
                "memory, at least $0.01)",
                *band,
            )
        )
    listed = ref.list_price.get((offer["instance_type"], offer["region"], gpu))
    if kind in DISCOUNT_TYPES and listed is not None and price > listed:
        found.append(
            (
                "discount_above_list",
                f"{kind} {_money(price)}/GPU-h is above the same instance's on-demand "
                f"{_money(listed)}: not a discount",
                0.0,
                listed,
            )
        )
    past = ref.instance.get((offer["instance_type"], offer["region"], kind, gpu))
    if past:
        mid = statistics.median(past)
        band = (mid / INSTANCE_FACTOR, mid * INSTANCE_FACTOR)
        if _outside(price, band):
            found.append(
                (
                    "instance_history",
                    f"{price / mid:.3g}x the same instance's median {_money(mid)} over "
                    f"{len(past)} offer(s) of the last {HISTORY_DAYS} days (allowed "
                    f"{1 / INSTANCE_FACTOR:g}x-{INSTANCE_FACTOR:g}x)",
                    *band,
                )
            )
    else:
        group = ref.group.get((gpu, kind), [])
        own = robust_band(group, HISTORY_K)
        if own is not None and _outside(price, own):
            found.append(
                (
                    "provider_history",
                    f"outside the provider's own {kind} band {_money(own[0])}-{_money(own[1])} "
                    f"for {gpu} ({len(group)} offer(s) of the last {HISTORY_DAYS} days)",
                    *own,
                )
            )
    others = ref.others.get((gpu, kind), {})
    medians = [statistics.median(prices) for prices in others.values()]
    cross = robust_band(medians, CROSS_K_LOW, CROSS_K_HIGH)
    if cross is not None and _outside(price, cross):
        named = ", ".join(f"{p} {_money(statistics.median(v))}" for p, v in sorted(others.items()))
        found.append(
            (
                "cross_provider",
                f"{price / statistics.median(medians):.3g}x the other providers' {kind} "
                f"median for {gpu}, outside their band {_money(cross[0])}-{_money(cross[1])} "
                f"(each provider's median: {named})",
                *cross,
            )
        )
    return found


@dataclass(frozen=True)
class Checked:
    """One provider's rows split: `kept` (cloud_offers) and `quarantined` (cloud_quarantine)."""

    kept: pl.DataFrame
    quarantined: pl.DataFrame

    def counts(self) -> dict[str, int]:
        """Quarantined offers per rule (the first rule each failed)."""
        if self.quarantined.is_empty():
            return {}
        return dict(self.quarantined.group_by("rule").len().sort("rule").iter_rows())

    def summary(self) -> str:
        """'1 quarantined (cross_provider: 1)', or '' when nothing was."""
        if self.quarantined.is_empty():
            return ""
        rules = ", ".join(f"{rule}: {n}" for rule, n in self.counts().items())
        return f"{self.quarantined.height} quarantined ({rules})"

    def rejection(self) -> str | None:
        """Why the provider's night is refused (too many offers out of bounds), or None."""
        bad = self.quarantined.filter(pl.col("rule").is_in(PRICE_RULES)).height
        total = self.kept.height + self.quarantined.height
        if bad >= REJECT_MIN and bad > REJECT_SHARE * total:
            return (
                f"integrity: {bad} of {total} offers out of bounds (over "
                f"{REJECT_SHARE:.0%}): the source changed, not the prices; first: "
                f"{self.quarantined.filter(pl.col('rule').is_in(PRICE_RULES))['reason'][0]}"
            )
        return None


def check_offers(rows: pl.DataFrame, reference: pl.DataFrame, memory: dict[str, float]) -> Checked:
    """Split one provider's `cloud_offers` rows into kept and quarantined.

    Args:
        rows: The provider's rows being loaded (duplicates already collapsed), any days.
        reference: Earlier `cloud_offers` rows of every provider (the provider's own rows of
            the days being loaded are ignored: a reload is not its own history).
        memory: gpu_id -> memory in GB (the catalog), for the thin-evidence band.

    Returns:
        The rows kept, and the quarantined rows with QUARANTINE_SCHEMA's columns added
        (`rule`: the first rule failed; `reason`: every rule failed, with its band).
    """
    order = rows.with_row_index("_row").with_columns(DAY)
    parts = []
    for night in order.partition_by("provider", "day", maintain_order=True):
        ref = _reference(night["provider"][0], night["day"][0], reference)
        marks = _night_marks(night, ref, memory)
        columns = {name: [m[i] for m in marks] for i, name in enumerate(QUARANTINE_SCHEMA)}
        parts.append(
            pl.concat([night, pl.DataFrame(columns, schema=QUARANTINE_SCHEMA)], how="horizontal")
        )
    if not parts:
        marked = rows.with_columns(
            pl.lit(None, dtype=dtype).alias(name) for name, dtype in QUARANTINE_SCHEMA.items()
        )
    else:
        marked = pl.concat(parts).sort("_row").drop("_row", "day")
    return Checked(
        kept=marked.filter(pl.col("rule").is_null()).drop(*QUARANTINE_SCHEMA),
        quarantined=marked.filter(pl.col("rule").is_not_null()),
    )


def _night_marks(night: pl.DataFrame, ref: _Reference, memory: dict[str, float]) -> list:
    """Each offer's mark, on-demand first.

    A discount is compared with a list price that passed: a $0.0001 on-demand price must
    not make its instance's spot price look like one above the list.
    """
    offers = list(night.iter_rows(named=True))
    marks: list = [None] * len(offers)
    for listed in (True, False):
        for i, o in enumerate(offers):
            if (o["price_type"] == "on_demand") == listed:
                marks[i] = _mark(_failures(o, ref, memory))
                if listed and marks[i][0] is None:
                    key = (o["instance_type"], o["region"], o["gpu_id"])
                    ref.list_price[key] = o["usd_per_gpu_hour"]
    return marks


def _mark(found: list[tuple[str, str, float, float]]) -> tuple:
    """(rule, reason, low, high) of the first rule failed, every reason; Nones if none."""
    if not found:
        return (None, None, None, None)
    high = found[0][3] if math.isfinite(found[0][3]) else None  # no ceiling: NULL
    return (found[0][0], "; ".join(f[1] for f in found), found[0][2], high)
