"""The cloud providers gpuvalue loads: one registry entry each (name, fetch, parse, keys).

Everything that lists providers is built from `PROVIDERS`: the Dagster partitions
(`pipeline.defs.partitions`), the nightly schedule, `python -m sources parse` choices, the
live fetch dispatch (`fetch_provider`), and the bundled reader's provider check. Adding a
provider is one entry here (and its bundled `sources/data/cloud/<name>.csv`).

CoreWeave and Hyperstack have no price API we read: their entry has no fetcher, so a live
night skips them without a request and their bundled offers stay.

How each provider sets its prices is stated here too, once (`pricing_kind`, stored as
`cloud_offers.pricing`): the model's freshness window depends on it
(`ModelParameters.cloud_freshness_days`).
"""

import functools
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import polars as pl

from sources.cloud import fetch
from sources.cloud.azure import API_URL as AZURE_API_URL
from sources.cloud.fetch import Fetcher, FetchReport, Run
from sources.cloud.parsers import CLOUD_PARSERS, guarded
from sources.cloud.records import CloudOffer
from sources.cloud.skypilot import parse_skypilot
from sources.http import PoliteClient

log = logging.getLogger("gpuvalue.cloud.fetch")


@dataclass(frozen=True)
class Provider:
    """One cloud provider.

    Attributes:
        name: Our provider id (partition key, `cloud_offers.provider`, CLI name).
        parse: Its live response body (or bundled rendering) -> offers; raises only
            `MalformedFile`.
        fetch: Its live fetcher, None when it has no price API we read.
        endpoint: The API URL the fetcher starts from (overridable per run in settings).
        credentials: Environment variables the fetcher reads (required or optional).
        no_api: Why there is no fetcher, for the "skipped" status.
        marketplace: A pattern searched in the instance type of the offers whose price a
            marketplace host sets (hosts reprice or withdraw them at any time); "" for
            every offer, None for none.
        dynamic_spot: True when its spot price is set by the provider's capacity algorithm
            and changes without notice (AWS, Azure, GCP, RunPod); False when its spot price
            is a published rate (CoreWeave, Hyperstack) or it sells no spot.
    """

    name: str
    parse: Callable[[bytes], list[CloudOffer]]
    fetch: Fetcher | None = None
    endpoint: str | None = None
    credentials: tuple[str, ...] = ()
    no_api: str | None = None
    marketplace: str | None = None
    dynamic_spot: bool = False


def _skypilot(provider: str) -> Callable[[bytes], list[CloudOffer]]:
    """The SkyPilot vms.csv parser for a provider whose bundled facts are rendered so."""
    return guarded(functools.partial(parse_skypilot, provider=provider))


_ENTRIES = (
    Provider(
        "aws",
        CLOUD_PARSERS["aws"],
        fetch.fetch_aws,
        "https://api.pricing.us-east-1.amazonaws.com/",
        (fetch.ENV_AWS_ACCESS_KEY, fetch.ENV_AWS_SECRET_KEY, fetch.ENV_AWS_SESSION_TOKEN),
        dynamic_spot=True,
    ),
    Provider(
        "azure",
        CLOUD_PARSERS["azure"],
        fetch.fetch_azure_prices,
        AZURE_API_URL,
        dynamic_spot=True,
    ),
    Provider(
        "gcp",
        CLOUD_PARSERS["gcp"],
        fetch.fetch_gcp,
        "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus",
        (fetch.ENV_GCP_KEY,),
        dynamic_spot=True,
    ),
    Provider(
        "lambda",
        CLOUD_PARSERS["lambda"],
        fetch.fetch_lambda,
        "https://cloud.lambdalabs.com/api/v1/instance-types",
        (fetch.ENV_LAMBDA_KEY,),
    ),
    Provider(
        "vast",
        CLOUD_PARSERS["vast"],
        fetch.fetch_vast,
        "https://console.vast.ai/api/v0/bundles/",
        (fetch.ENV_VAST_KEY,),
        # Every vast.ai offer is one host's machine at the host's price.
        marketplace="",
    ),
    Provider(
        "runpod",
        CLOUD_PARSERS["runpod"],
        fetch.fetch_runpod,
        "https://api.runpod.io/graphql",
        (fetch.ENV_RUNPOD_KEY,),
        # Community Cloud is RunPod's marketplace of vetted hosts; Secure Cloud is priced by
        # RunPod itself. Its spot prices are bids that move with demand.
        marketplace=r" community$",
        dynamic_spot=True,
    ),
    Provider(
        "coreweave",
        _skypilot("coreweave"),
        no_api="no public price API (prices are published on coreweave.com/pricing only)",
    ),
    Provider(
        "hyperstack",
        _skypilot("hyperstack"),
        no_api="Pricebook API not implemented (needs an account key)",
    ),
)
PROVIDERS: dict[str, Provider] = {entry.name: entry for entry in _ENTRIES}
# Endpoints per provider; settings' `cloud_base_urls` override them (tests, mirrors).
DEFAULT_BASE_URLS: dict[str, str] = {
    name: entry.endpoint for name, entry in PROVIDERS.items() if entry.endpoint
}
NO_PRICE_API: dict[str, str] = {
    name: entry.no_api for name, entry in PROVIDERS.items() if entry.no_api
}


def pricing_kind(provider: str, instance_type: str | None, price_type: str) -> str:
    """How an offer's price is set: 'marketplace', 'spot' (dynamic) or 'list'.

    Raises:
        ValueError: `provider` is not in the registry.
    """
    entry = PROVIDERS.get(provider)
    if entry is None:
        raise ValueError(f"unknown cloud provider {provider!r}; known: {', '.join(PROVIDERS)}")
    if entry.marketplace is not None and re.search(entry.marketplace, instance_type or ""):
        return "marketplace"
    if price_type == "spot" and entry.dynamic_spot:
        return "spot"
    return "list"


def with_pricing(rows: pl.DataFrame) -> pl.DataFrame:
    """`cloud_offers` rows with `pricing` (pricing_kind) and `reliability` (NULL if absent)."""
    if "reliability" not in rows.columns:
        rows = rows.with_columns(reliability=pl.lit(None, dtype=pl.Float64))
    return rows.with_columns(
        pricing=pl.struct("provider", "instance_type", "price_type").map_elements(
            lambda r: pricing_kind(r["provider"], r["instance_type"], r["price_type"]),
            return_dtype=pl.Utf8,
        )
    )


def fetch_provider(
    provider: str,
    client: PoliteClient,
    env: Mapping[str, str],
    *,
    base_urls: Mapping[str, str] | None = None,
    max_pages: int = 50,
) -> FetchReport:
    """Fetch one provider's current GPU prices.

    Args:
        provider: A name in `PROVIDERS`.
        client: The run's polite client (retries, rate limits, archive).
        env: Where credentials are read from (e.g. `os.environ`).
        base_urls: Endpoint per provider, overriding `DEFAULT_BASE_URLS` (tests).
        max_pages: Most pages requested per paged query (per region for AWS).

    Returns:
        The report; network and HTTP problems are statuses, not exceptions.

    Raises:
        ValueError: `provider` is unknown.
    """
    entry = PROVIDERS.get(provider)
    if entry is None:
        raise ValueError(f"unknown cloud provider {provider!r}; known: {', '.join(PROVIDERS)}")
    if entry.fetch is None:
        return FetchReport(provider, f"skipped: {entry.no_api}; bundled offers only", ())
    url = (base_urls or {}).get(provider) or entry.endpoint or ""
    run = Run(provider, client, entry.parse)
    status = entry.fetch(run, url, env, max(1, int(max_pages)))
    report = FetchReport(provider, status, tuple(run.results))
    log.info("%s: %s (%d requests)", provider, status, len(report.results))
    return report
