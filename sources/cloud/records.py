"""What a cloud price parser returns: one offer per instance x region x price type.

Aggregator files (gpuhunt, Prime Intellect) parse to `ReferencePrice`s instead: prices
without the instance, region or price type that an offer needs.

Parsers are pure functions from a provider's response bytes to offers. Unknown GPU names
are returned (with gpu None) and counted, never dropped silently; a file the parser does
not understand raises `MalformedFile` naming what is wrong.
"""

import datetime as dt
import json
import math
from dataclasses import dataclass

import polars as pl

PRICE_TYPES = ("on_demand", "spot", "reserved_1y", "reserved_3y")


# No cloud sells a GPU-hour for more (the dearest in any captured catalog is ~$15), and no
# instance or aggregated configuration has more GPUs: a figure past these is damage.
MAX_USD_PER_GPU_HOUR = 100.0
MAX_GPU_COUNT = 256


class MalformedFile(ValueError):
    """The input is not in the provider's format.

    A missing field, a changed schema, a number that is not finite or out of range, or
    nesting too deep to read.
    """


def _refuse_constant(name: str) -> float:
    raise MalformedFile(f"not JSON: {name} is not a number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise MalformedFile(f"not a finite number: {text[:40]}")
    return value


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """An object whose keys are unique, or whose repeated keys say the same thing.

    Python's json keeps the last of two equal keys, silently: `{"price": 2.99, "price":
    0.0001}` would be read as 0.0001. A key repeated with a different value is a body that
    contradicts itself, so it is refused; a key repeated with the same value changes nothing.
    """
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found and found[key] != value:
            raise MalformedFile(
                f"duplicated JSON key {key!r} with different values "
                f"({found[key]!r:.40} and {value!r:.40})"
            )
        found[key] = value
    return found


def load_json(content: bytes | str) -> object:
    """Strict JSON: no NaN/Infinity, no number that overflows, no nesting past the stack.

    A key repeated in one object with a different value is refused (`_unique_keys`).

    Raises:
        MalformedFile: The bytes are not such JSON.
    """
    try:
        return json.loads(
            content,
            parse_constant=_refuse_constant,
            parse_float=_finite_float,
            object_pairs_hook=_unique_keys,
        )
    except MalformedFile:
        raise
    except RecursionError as exc:
        raise MalformedFile("not JSON: nested too deeply") from exc
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedFile(f"not JSON: {exc}") from exc
    except ValueError as exc:  # an integer literal past int's digit limit
        raise MalformedFile(f"not JSON: {str(exc)[:80]}") from exc


def check_count(value: object, where: str) -> int:
    """A GPU count: a whole number in 1..MAX_GPU_COUNT.

    Raises:
        MalformedFile: Anything else (NaN, Infinity, 0.5, 1e9, text).
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise MalformedFile(f"{where}: GPU count {value!r:.40} is not a number")
    if not math.isfinite(value) or value != int(value) or not 1 <= value <= MAX_GPU_COUNT:
        raise MalformedFile(f"{where}: GPU count {value!r:.40} is not 1..{MAX_GPU_COUNT}")
    return int(value)


def check_price(value: float, per_gpu: float | None, where: str) -> float:
    """A USD price that is finite, positive and at most MAX_USD_PER_GPU_HOUR per GPU.

    Raises:
        MalformedFile: Anything else.
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MalformedFile(f"{where}: price {value!r:.40} is not a finite number")
    if value <= 0:
        raise MalformedFile(f"{where}: price {value!r} is not positive")
    if per_gpu is not None and per_gpu > MAX_USD_PER_GPU_HOUR:
        raise MalformedFile(
            f"{where}: ${per_gpu:,.2f} per GPU-hour is over ${MAX_USD_PER_GPU_HOUR:.0f}"
        )
    return float(value)


@dataclass(frozen=True)
class CloudOffer:
    """One price for renting GPUs."""

    provider: str  # aws, azure, gcp, lambda, vast, runpod, or the SkyPilot catalog's cloud
    # GCP per-GPU SKUs (GPUs priced apart from the VM): the SKU's GPU name; None where an
    # aggregator or a SkyPilot accelerator row names no instance.
    instance_type: str | None
    region: str | None
    price_type: str  # one of PRICE_TYPES; never averaged across types
    gpu: str | None  # canonical gpu_id, None when the provider's GPU name is unknown
    gpu_name: str  # the provider's own GPU name, kept for the unknown-name report
    gpu_count: int
    usd_per_hour: float  # per instance-hour (per GPU-hour for per-GPU SKUs)
    # The host's reliability score (0..1) where a marketplace states one (vast.ai
    # `reliability2`); None elsewhere.
    reliability: float | None = None

    def __post_init__(self) -> None:
        # Every parser's offers pass here: no NaN, Infinity or 1e308 reaches a table.
        where = f"{self.provider} {self.instance_type or self.gpu_name} {self.region or ''}"
        check_count(self.gpu_count, where)
        check_price(self.usd_per_hour, self.usd_per_hour / self.gpu_count, where)

    @property
    def usd_per_gpu_hour(self) -> float:
        """Price per GPU-hour."""
        return self.usd_per_hour / self.gpu_count

    CLI_FIELDS = (
        "provider",
        "instance_type",
        "region",
        "price_type",
        "gpu",
        "gpu_count",
        "usd_per_hour",
        "usd_per_gpu_hour",
    )

    def to_cli(self) -> dict[str, object]:
        """The JSON object `python -m sources parse <provider>` prints for this offer."""
        return {key: getattr(self, key) for key in self.CLI_FIELDS}


# Aggregators name some clouds differently from our provider ids.
_AGGREGATOR_PROVIDERS = {"lambdalabs": "lambda", "vastai": "vast"}


def provider_id(name: object) -> str:
    """Our provider id for an aggregator's cloud name ('lambdalabs' -> 'lambda')."""
    key = str(name).strip().lower()
    return _AGGREGATOR_PROVIDERS.get(key, key)


@dataclass(frozen=True)
class ReferencePrice:
    """A price from an aggregator (gpuhunt, Prime Intellect): a reference, not an offer.

    Aggregator outputs drop what makes a price an offer (instance type, region, GPU count,
    price type: on-demand and spot are mixed), so these never become `cloud_offers` rows.
    A field the source does not carry is None, never filled in.
    """

    source: str  # the aggregator: gpuhunt, primeintellect
    provider: str | None  # the cloud selling at this price; None for marketplace-wide figures
    instance_type: str | None
    region: str | None
    price_type: str | None  # one of PRICE_TYPES only when the source says which
    gpu: str | None  # canonical gpu_id; None when the name does not pin one catalog GPU
    gpu_name: str  # the aggregator's own GPU name
    gpu_count: int | None
    usd_per_hour: float | None  # per instance-hour, when the source gives it
    usd_per_gpu_hour: float | None
    statistic: str | None = None  # None for one offer; min, p10, median, mean, avg, ...
    offers: int | None = None  # how many offers an aggregate summarises, when stated
    observed_at: str | None = None  # the snapshot's own timestamp, when the file has one

    def __post_init__(self) -> None:
        where = f"{self.source} {self.provider or ''} {self.gpu_name}"
        if self.gpu_count is not None:
            check_count(self.gpu_count, where)
        if self.usd_per_gpu_hour is not None:
            check_price(self.usd_per_gpu_hour, self.usd_per_gpu_hour, where)
        if self.usd_per_hour is not None:
            check_price(self.usd_per_hour, None, where)
        if self.offers is not None and not 0 <= self.offers < 10**9:
            raise MalformedFile(f"{where}: offer count {self.offers!r} out of range")

    def to_cli(self) -> dict[str, object]:
        """The offer keys of `python -m sources parse`, then what makes this a reference."""
        fields = {key: getattr(self, key) for key in CloudOffer.CLI_FIELDS}
        extra = ("source", "gpu_name", "statistic", "offers", "observed_at")
        return fields | {key: getattr(self, key) for key in extra}


def offers_frame(
    offers: list[CloudOffer], observed_at: dt.datetime, citation: str, known: frozenset[str]
) -> tuple[pl.DataFrame, dict[str, int]]:
    """Offers as `cloud_offers` rows, and the provider GPU names not in the catalog.

    Offers whose GPU is unknown (or not in `known`) are not rows, but every such name is
    returned with its count, to be listed in the run's metadata and status.
    """
    rows, unknown = [], {}
    for offer in offers:
        if offer.gpu is None or offer.gpu not in known:
            unknown[offer.gpu_name] = unknown.get(offer.gpu_name, 0) + 1
            continue
        rows.append(
            {
                "observed_at": observed_at,
                "provider": offer.provider,
                "instance_type": offer.instance_type,
                "region": offer.region,
                "price_type": offer.price_type,
                "gpu_id": offer.gpu,
                "gpu_count": offer.gpu_count,
                "usd_per_hour": offer.usd_per_hour,
                "usd_per_gpu_hour": offer.usd_per_gpu_hour,
                "citation": citation,
                "reliability": offer.reliability,
            }
        )
    schema = {
        "observed_at": pl.Datetime("us"),
        "provider": pl.Utf8,
        "instance_type": pl.Utf8,
        "region": pl.Utf8,
        "price_type": pl.Utf8,
        "gpu_id": pl.Utf8,
        "gpu_count": pl.Int64,
        "usd_per_hour": pl.Float64,
        "usd_per_gpu_hour": pl.Float64,
        "citation": pl.Utf8,
        "reliability": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema), unknown
