"""The model's parameters, with Dettmers' constants as defaults (see docs/methodology.md).

Every default cites `../shared/seeds/parameters.md` by the line it comes from. All of them
can be overridden from the environment (GPUVALUE_*) or Dagster run config, and each run
stores the parameters it used in `model_runs`.
"""

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace

WORKLOADS = ("training_16bit", "inference_16bit", "inference_8bit")


@dataclass(frozen=True)
class ModelParameters:
    """Everything the model assumes, in one place."""

    # Relative performance is normalised to this GPU (value 1.0). A100 SXM4 80GB is measured
    # by every bundled benchmark source, so no workload depends on an estimate for it.
    reference_gpu: str = "a100-sxm4-80gb"
    # Throughput gain per doubling of the batch size (B292: +13.6 % CNN, +13.5 % transformer).
    batch_gain_per_doubling: dict[str, float] = field(
        default_factory=lambda: {"cnn": 0.136, "transformer": 0.135, "rnn": 0.135}
    )
    # Per-GPU efficiency of an n-GPU run (2014 post A11: 1.9x/3.5x for 2/4 GPUs;
    # B296: 8x V100 6.67x, 8x A100 7.00x -> 0.86 as their midpoint for 8).
    multi_gpu_efficiency: dict[int, float] = field(
        default_factory=lambda: {1: 1.0, 2: 0.95, 4: 0.875, 8: 0.86}
    )
    # Electricity (B578): 5 years, $0.175/kWh, 15 % utilisation; RTX 4090 ~ $100/year.
    electricity_usd_per_kwh: float = 0.175
    utilization: float = 0.15
    years: float = 5.0
    # Host system cost per system size, excluding GPUs. Dettmers normalised by "desktop cost
    # + GPU price" without stating the desktop's price (B578); these are our assumptions for
    # a deep-learning host (CPU, board, RAM, PSU, case, SSD) and are configurable.
    host_cost_usd: dict[int, float] = field(
        default_factory=lambda: {1: 1500.0, 2: 2200.0, 4: 5000.0, 8: 15000.0}
    )
    # Host power drawn while training. 0 reproduces Dettmers' GPU-only electricity (B578);
    # his cloud example adds a 100 W CPU (B785-817).
    host_watts: float = 0.0
    system_sizes: tuple[int, ...] = (1, 2)
    # Utilisations at which buying and renting are compared (B829-833: 5 % .. 60 %+).
    cloud_utilizations: tuple[float, ...] = (0.05, 0.10, 0.15, 0.25, 0.50, 0.75, 1.0)
    # Robust daily price: drop observations beyond k scaled MADs of the median.
    price_mad_k: float = 3.0

    def to_json(self) -> str:
        """Stable JSON for `model_runs.parameters`."""
        return json.dumps(asdict(self), sort_keys=True, default=list)


# Environment overrides: name -> (field, type).
_ENV = {
    "GPUVALUE_REFERENCE_GPU": ("reference_gpu", str),
    "GPUVALUE_ELECTRICITY_USD_PER_KWH": ("electricity_usd_per_kwh", float),
    "GPUVALUE_UTILIZATION": ("utilization", float),
    "GPUVALUE_YEARS": ("years", float),
    "GPUVALUE_HOST_WATTS": ("host_watts", float),
}


def from_env(base: ModelParameters | None = None, env: dict[str, str] | None = None):
    """Parameters with any GPUVALUE_* environment overrides applied."""
    base = base or ModelParameters()
    env = os.environ if env is None else env
    changes = {}
    for name, (attr, kind) in _ENV.items():
        if env.get(name, "").strip():
            try:
                changes[attr] = kind(env[name])
            except ValueError as exc:
                raise ValueError(f"{name}={env[name]!r} is not a valid {kind.__name__}") from exc
    return replace(base, **changes)


def field_names() -> list[str]:
    """Names of all parameters (for docs and tests)."""
    return [f.name for f in fields(ModelParameters)]
