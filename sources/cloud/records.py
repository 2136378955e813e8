"""What a cloud price parser returns: one offer per instance x region x price type.

Aggregator files (gpuhunt, Prime Intellect) parse to `ReferencePrice`s instead: prices
without the instance, region or price type that an offer needs.

Parsers are pure functions from a provider's response bytes to offers. Unknown GPU names
are returned (with gpu None) and counted, never dropped silently; a file the parser does
not understand raises `MalformedFile` naming what is wrong.
"""

import datetime as dt
from dataclasses import dataclass

import polars as pl

PRICE_TYPES = ("on_demand", "spot", "reserved_1y", "reserved_3y")


class MalformedFile(ValueError):
    """The input is not in the provider's format (a missing field, a changed schema)."""


@dataclass(frozen=True)
class CloudOffer:
    """One price for renting GPUs."""

    provider: str  # aws, azure, gcp, lambda, vast, runpod, or the SkyPilot catalog's cloud
    instance_type: str | None  # None for GCP per-GPU SKUs (GPUs priced apart from the VM)
    region: str | None
    price_type: str  # one of PRICE_TYPES; never averaged across types
    gpu: str | None  # canonical gpu_id, None when the provider's GPU name is unknown
    gpu_name: str  # the provider's own GPU name, kept for the unknown-name report
    gpu_count: int
    usd_per_hour: float  # per instance-hour (per GPU-hour for per-GPU SKUs)

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
    }
    return pl.DataFrame(rows, schema=schema), unknown
