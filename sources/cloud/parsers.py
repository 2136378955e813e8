"""Provider name -> parser of that provider's response format.

`CLOUD_PARSERS` give offers (`cloud_offers` rows); `REFERENCE_PARSERS` read aggregator files
whose prices lack what an offer needs, so they are inspectable but never loaded as offers.

Every parser here is guarded: whatever a file does to it (nesting past the stack, a number
that overflows, a type where another was expected), the only exception it raises is
`MalformedFile`, the documented bad-input error (`python -m sources parse` exits 2).
"""

import functools
from collections.abc import Callable
from typing import TypeVar

from sources.cloud.aws import parse_aws
from sources.cloud.azure import parse_azure
from sources.cloud.gcp import parse_gcp
from sources.cloud.gpuhunt import parse_gpuhunt
from sources.cloud.lambda_cloud import parse_lambda
from sources.cloud.primeintellect import parse_primeintellect
from sources.cloud.records import CloudOffer, MalformedFile, ReferencePrice
from sources.cloud.runpod import parse_runpod, unpriced_note
from sources.cloud.skypilot import parse_skypilot
from sources.cloud.vast import parse_vast


def parse_nebius(content: bytes) -> list[CloudOffer]:
    """Nebius offers from its SkyPilot catalog vms.csv (inspect command; not loaded)."""
    return parse_skypilot(content, "nebius")


def parse_alicloud(content: bytes) -> list[CloudOffer]:
    """Alibaba Cloud offers from a SkyPilot-format vms.csv (inspect command; not loaded)."""
    return parse_skypilot(content, "alicloud")


_Record = TypeVar("_Record")


def guarded(parse: Callable[[bytes], list[_Record]]) -> Callable[[bytes], list[_Record]]:
    """`parse`, raising nothing but `MalformedFile` on any input.

    The parsers check what they expect; this catches what no check foresaw (RecursionError
    from hostile nesting, OverflowError, a list where a dict was expected) so that bad
    input can never end a run or the CLI with a traceback.
    """

    @functools.wraps(parse)
    def safe(content: bytes) -> list[_Record]:
        try:
            return parse(content)
        except MalformedFile:
            raise
        except Exception as exc:
            raise MalformedFile(f"unreadable: {type(exc).__name__}: {str(exc)[:160]}") from exc

    return safe


CLOUD_PARSERS: dict[str, Callable[[bytes], list[CloudOffer]]] = {
    name: guarded(parse)
    for name, parse in {
        "aws": parse_aws,
        "azure": parse_azure,
        "gcp": parse_gcp,
        "lambda": parse_lambda,
        "vast": parse_vast,
        "runpod": parse_runpod,
        "nebius": parse_nebius,
        "alicloud": parse_alicloud,
        "skypilot": parse_skypilot,
    }.items()
}

REFERENCE_PARSERS: dict[str, Callable[[bytes], list[ReferencePrice]]] = {
    "gpuhunt": guarded(parse_gpuhunt),
    "primeintellect": guarded(parse_primeintellect),
}

# What the inspect command says on stderr about a file beyond its counts.
REFERENCE_NOTES = {
    "gpuhunt": (
        "reference prices, not offers: gpuhunt output has no instance type, region, GPU "
        "count or price type (on-demand and spot are mixed); usd_per_hour is per instance"
    ),
    "primeintellect": (
        "reference prices, not offers: Prime Intellect marketplace aggregates in USD per "
        "GPU-hour over on-demand and spot offers; only a GPU count's min (the tracker's best "
        "deal) names a cloud and a price type"
    ),
}
EMPTY_NOTES: dict[str, Callable[[bytes], str | None]] = {"runpod": unpriced_note}
