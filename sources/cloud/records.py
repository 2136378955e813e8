"""What a cloud price parser returns: one offer per instance x region x price type.

Parsers are pure functions from a provider's response bytes to offers. Unknown GPU names
are returned (with gpu None) and counted, never dropped silently; a file the parser does
not understand raises `MalformedFile` naming what is wrong.
"""

from dataclasses import dataclass

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
