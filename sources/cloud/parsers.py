"""Provider name -> parser of that provider's response format."""

from collections.abc import Callable

from sources.cloud.aws import parse_aws
from sources.cloud.azure import parse_azure
from sources.cloud.gcp import parse_gcp
from sources.cloud.lambda_cloud import parse_lambda
from sources.cloud.records import CloudOffer
from sources.cloud.runpod import parse_runpod
from sources.cloud.skypilot import parse_skypilot
from sources.cloud.vast import parse_vast

CLOUD_PARSERS: dict[str, Callable[[bytes], list[CloudOffer]]] = {
    "aws": parse_aws,
    "azure": parse_azure,
    "gcp": parse_gcp,
    "lambda": parse_lambda,
    "vast": parse_vast,
    "runpod": parse_runpod,
    "skypilot": parse_skypilot,
}
