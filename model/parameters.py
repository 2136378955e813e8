"""The model's parameters, with Dettmers' constants as defaults (see docs/methodology.md).

Every default cites `../shared/seeds/parameters.md` by the line it comes from. All of them
can be overridden from the environment (GPUVALUE_*) or Dagster run config, and each run
stores the parameters it used in `model_runs`.
"""

import json
import os
from dataclasses import asdict, dataclass, field, fields, replace

from model.benchmark_weights import BENCHMARK_CLASSES, default_weights
from model.llm_constants import ARCHITECTURES, BITS_PER_WEIGHT

WORKLOADS = ("training_16bit", "inference_16bit", "inference_8bit")
# How a cloud price is set (cloud_offers.pricing; each has a cloud_freshness_days window).
CLOUD_PRICING_KINDS = ("list", "spot", "marketplace")


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
    # Which debiasing constants drive the results (model/fit.py): 'dettmers' (the
    # two fields above), 'fitted' (fitted from the ingested benchmarks wherever a fit exists)
    # or 'auto': a fitted constant where it is well determined (95 % interval at most
    # `fit_max_ci_width` wide), Dettmers' otherwise. Both sets are stored in model_constants.
    constants: str = "auto"
    fit_max_ci_width: float = 0.10
    # MLPerf results of systems up to this many GPUs (one node) enter the model; larger
    # systems change interconnect, global batch and epochs to converge (methodology §3).
    mlperf_max_gpus: int = 8
    # Figures measured with software from a GPU's first days after its release date are
    # left out (launch-day kernels underrate it; debias.launch_window). 0 keeps them.
    launch_window_days: int = 90
    # Weight of a benchmark table in the relative-performance fit, by benchmark class
    # (model/benchmark_weights.py, where each value has its reason): transformer and LLM
    # tables 1, diffusion 0.5, CNN and RNN 0.1, because the headline workloads describe
    # transformer work (issue 22, step 4). relative_performance.value_all_benchmarks is
    # the same fit with every weight 1.
    benchmark_weights: dict[str, float] = field(default_factory=default_weights)
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
    # Data-center modules (SXM, OAM, superchips) are bought as servers of these sizes only
    # (GUIDE §10), with this host per server (baseboard with NVLink switches, two CPUs,
    # memory, NICs, chassis, power). Default: SemiAnalysis' bill of materials of a DGX H100
    # without its GPUs, $32,010 (May 2023, as tabulated by Epoch AI, epoch-research/
    # training-cost-trends), plus 25 % OEM margin (our assumption) -> $40,000 for 8 GPUs;
    # a 4-GPU board has no NVSwitch and half the GPUs to feed: $25,000 (our assumption).
    server_system_sizes: tuple[int, ...] = (4, 8)
    server_host_cost_usd: dict[int, float] = field(default_factory=lambda: {4: 25000.0, 8: 40000.0})
    # Host power drawn while training. 0 reproduces Dettmers' GPU-only electricity (B578);
    # his cloud example adds a 100 W CPU (B785-817).
    host_watts: float = 0.0
    # Systems of 1, 2, 4 and 8 GPUs are costed (GUIDE §4); each needs a host_cost_usd entry.
    system_sizes: tuple[int, ...] = (1, 2, 4, 8)
    # Utilisations at which buying and renting are compared, 5 % to 100 % (B829-833:
    # personal 5-10 %, PhD desktop < 15 %, PhD slurm > 35 %, company slurm > 60 %).
    cloud_utilizations: tuple[float, ...] = (
        0.05, 0.10, 0.15, 0.20, 0.25, 0.35, 0.50, 0.60, 0.75, 1.0
    )  # fmt: skip
    # Robust daily price: drop observations beyond k scaled MADs of the median.
    price_mad_k: float = 3.0
    # Today's price (model/nowcast.py): a price observed within this many days of
    # the run date is used as observed; an older one is nowcast to the run date with the
    # drift and volatility of its market segment, up to `price_max_age_days`, beyond which
    # the GPU has no price for today. 180 days: half a year is about how long a street
    # price stays within the volatility of one observation (back-test in methodology §5).
    price_freshness_days: int = 180
    price_max_age_days: int = 730
    # An input older than this (days, by kind) is reported `stale` (report and run summary).
    # Retail prices: the freshness window; cloud prices change month to month; benchmark
    # tables lag new GPUs and software by a year or two; spec sheets gain new GPUs yearly.
    stale_after_days: dict[str, int] = field(
        default_factory=lambda: {
            "retail prices": 180,
            "cloud prices": 30,
            "benchmarks": 730,
            "specs": 365,
        }
    )

    # Cloud offers older than this (days, by how the price is set) stay in the tables,
    # flagged, but never enter a verdict, the headline, the recommendations or a rank
    # (model/cloud_freshness.py; methodology "Rent verdicts on live offers"). The kind of
    # each offer is set once, in the provider registry (sources/cloud/providers.py):
    # - list: a price the provider publishes per instance (AWS/Azure/GCP/Lambda/CoreWeave/
    #   Hyperstack on-demand and reserved, CoreWeave's and Hyperstack's rate-card spot,
    #   RunPod secure). These change a few times a year (AWS cut P4/P5 on-demand by up to
    #   45 % in June 2025: the bundled p4d.24xlarge went from $32.77/h to $21.96/h), so
    #   half a year, the retail price_freshness_days;
    # - spot: a spot price the provider's capacity algorithm sets (AWS, Azure, GCP, RunPod):
    #   "can change up to once every 30 days" (GCP), "adjust gradually" and are republished
    #   every 5 minutes (AWS);
    # - marketplace: a host's own price on a marketplace (vast.ai, RunPod community), which
    #   hosts change or withdraw at any time; 30 days, the `cloud prices` stale rule.
    cloud_freshness_days: dict[str, int] = field(
        default_factory=lambda: {"list": 180, "spot": 30, "marketplace": 30}
    )

    # --- cost, uncertainty and decisions (docs/methodology.md §5-9) ---
    # Multiplies every host_cost_usd entry: one knob for cheaper or dearer hosts.
    host_cost_scale: float = 1.0
    # Plausible per-GPU efficiency of an n-GPU system, drawn uniformly per bootstrap
    # replicate: 2 GPUs from 1.6x typical to 1.95x (A474, A503); 8 GPUs from 6.5x typical
    # to 7.9x optimal (A871); 4 GPUs around A11's 3.5x (our assumption: 3.2x..3.8x).
    multi_gpu_efficiency_range: dict[int, tuple[float, float]] = field(
        default_factory=lambda: {1: (1.0, 1.0), 2: (0.80, 0.975), 4: (0.80, 0.95), 8: (0.81, 0.99)}
    )
    # Bootstrap over price observations and benchmark-derived performance: replicate count
    # and seed (fixed, so a rerun on the same inputs gives the same intervals).
    bootstrap_replicates: int = 200
    bootstrap_seed: int = 20260415
    # Price groups with fewer observations than this get a parametric draw with the spread
    # pooled over the better-observed groups (a 1-listing bootstrap has no spread at all).
    bootstrap_min_observations: int = 3
    # Recommendation memory tiers, GB (>= each): Kaggle 8, image generation 12 (B565),
    # 16, transformers 24 (B565), 48, 80 (large-model work).
    memory_tiers_gb: tuple[float, ...] = (8, 12, 16, 24, 48, 80)
    # Sensitivity ranges: each parameter alone over these values, the rest at their settings.
    sensitivity_usd_per_kwh: tuple[float, ...] = (0.10, 0.175, 0.25, 0.30, 0.40)
    sensitivity_utilization: tuple[float, ...] = (0.05, 0.15, 0.35, 0.60, 1.0)
    sensitivity_years: tuple[float, ...] = (2, 3, 5, 7)
    sensitivity_host_cost_scale: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0)

    # --- LLM inference (model/llm.py) ---
    # Model sizes (billions; each has a reference architecture for its KV cache), weight
    # bits, GPU counts and context tokens of the llm_throughput / llm_cost tables; the
    # runtime memory per GPU beyond weights and KV cache (CUDA context, compute buffers:
    # llama.cpp reports ~0.3-0.6 GiB for 8B-70B models).
    llm_model_sizes_b: tuple[int, ...] = (8, 32, 70)
    llm_bits: tuple[int, ...] = (16, 8, 4)
    llm_gpu_counts: tuple[int, ...] = (1, 2, 4, 8)
    llm_context_tokens: int = 8192
    llm_overhead_gib: float = 0.5

    def to_json(self) -> str:
        """Stable JSON for `model_runs.parameters`."""
        return json.dumps(asdict(self), sort_keys=True, default=list)


def _ints(text: str) -> tuple[int, ...]:
    """`"1,2,4,8"` -> (1, 2, 4, 8)."""
    return tuple(int(part) for part in text.split(",") if part.strip())


def _sized_floats(text: str) -> dict[int, float]:
    """`"1=1500,2=2200"` -> {1: 1500.0, 2: 2200.0} (one value per system size)."""
    pairs = [part.split("=") for part in text.split(",") if part.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"expected size=value pairs, got {text!r}")
    return {int(size): float(value) for size, value in pairs}


def _named_ints(text: str) -> dict[str, int]:
    """`"list=180,marketplace=30"` -> {"list": 180, "marketplace": 30}."""
    pairs = [part.split("=") for part in text.split(",") if part.strip()]
    if any(len(pair) != 2 for pair in pairs):
        raise ValueError(f"expected name=days pairs, got {text!r}")
    return {name.strip(): int(days) for name, days in pairs}


# Environment overrides: name -> (field, type).
_ENV = {
    "GPUVALUE_REFERENCE_GPU": ("reference_gpu", str),
    "GPUVALUE_CONSTANTS": ("constants", str),
    "GPUVALUE_FIT_MAX_CI_WIDTH": ("fit_max_ci_width", float),
    "GPUVALUE_ELECTRICITY_USD_PER_KWH": ("electricity_usd_per_kwh", float),
    "GPUVALUE_UTILIZATION": ("utilization", float),
    "GPUVALUE_YEARS": ("years", float),
    "GPUVALUE_HOST_WATTS": ("host_watts", float),
    "GPUVALUE_HOST_COST_SCALE": ("host_cost_scale", float),
    "GPUVALUE_HOST_COST_USD": ("host_cost_usd", _sized_floats),
    "GPUVALUE_SYSTEM_SIZES": ("system_sizes", _ints),
    "GPUVALUE_SERVER_SYSTEM_SIZES": ("server_system_sizes", _ints),
    "GPUVALUE_SERVER_HOST_COST_USD": ("server_host_cost_usd", _sized_floats),
    "GPUVALUE_BOOTSTRAP_REPLICATES": ("bootstrap_replicates", int),
    "GPUVALUE_BOOTSTRAP_SEED": ("bootstrap_seed", int),
    "GPUVALUE_PRICE_FRESHNESS_DAYS": ("price_freshness_days", int),
    "GPUVALUE_PRICE_MAX_AGE_DAYS": ("price_max_age_days", int),
    # Only the kinds named change: "marketplace=14" keeps the other windows.
    "GPUVALUE_CLOUD_FRESHNESS_DAYS": ("cloud_freshness_days", _named_ints),
    "GPUVALUE_LLM_CONTEXT_TOKENS": ("llm_context_tokens", int),
    "GPUVALUE_LLM_MODEL_SIZES_B": ("llm_model_sizes_b", _ints),
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
    return check(replace(base, **_merged(base, changes)))


def with_overrides(base: ModelParameters, overrides: dict[str, str]) -> ModelParameters:
    """Parameters with run-config overrides: {field name: text}, parsed as from_env does.

    Only the fields that have an environment variable can be overridden, so run config and
    environment accept exactly the same settings.
    """
    kinds = {attr: kind for attr, kind in _ENV.values()}
    changes = {}
    for attr, text in overrides.items():
        if attr not in kinds:
            raise ValueError(f"{attr!r} is not an overridable parameter: {sorted(kinds)}")
        try:
            changes[attr] = kinds[attr](text)
        except ValueError as exc:
            raise ValueError(f"{attr}={text!r} is not a valid {kinds[attr].__name__}") from exc
    return check(replace(base, **_merged(base, changes)))


# Dict parameters an override amends rather than replaces (one window changed at a time).
_MERGED = ("cloud_freshness_days",)


def _merged(base: ModelParameters, changes: dict) -> dict:
    return {
        attr: {**getattr(base, attr), **value} if attr in _MERGED else value
        for attr, value in changes.items()
    }


def check(params: ModelParameters) -> ModelParameters:
    """Refuse parameters the cost model cannot use (fail the run, never write wrong rows)."""
    for kind, sizes, hosts, name in (
        ("system", params.system_sizes, params.host_cost_usd, "host_cost_usd"),
        ("server system", params.server_system_sizes, params.server_host_cost_usd,
         "server_host_cost_usd"),
    ):  # fmt: skip
        missing = [n for n in sizes if n not in hosts or n not in params.multi_gpu_efficiency]
        if missing:
            raise ValueError(f"{kind} sizes {missing} need {name} and multi_gpu_efficiency entries")
    if not 0 <= params.price_freshness_days <= params.price_max_age_days:
        raise ValueError("need 0 <= price_freshness_days <= price_max_age_days")
    unknown = [s for s in params.llm_model_sizes_b if s not in ARCHITECTURES]
    if unknown or any(b not in BITS_PER_WEIGHT for b in params.llm_bits):
        raise ValueError(
            f"LLM sizes need a reference architecture {sorted(ARCHITECTURES)} and bits one of "
            f"{sorted(BITS_PER_WEIGHT)}; got sizes {params.llm_model_sizes_b}, "
            f"bits {params.llm_bits}"
        )
    if set(params.benchmark_weights) != set(BENCHMARK_CLASSES) or any(
        w <= 0 for w in params.benchmark_weights.values()
    ):
        raise ValueError(
            f"benchmark_weights needs a positive weight for each of {sorted(BENCHMARK_CLASSES)}; "
            f"got {params.benchmark_weights}"
        )
    windows = params.cloud_freshness_days
    if set(windows) != set(CLOUD_PRICING_KINDS) or any(d < 0 for d in windows.values()):
        raise ValueError(
            f"cloud_freshness_days needs a window of 0 days or more for each of "
            f"{list(CLOUD_PRICING_KINDS)}; got {windows}"
        )
    if params.bootstrap_replicates < 1:
        raise ValueError("bootstrap_replicates must be at least 1")
    return params


def field_names() -> list[str]:
    """Names of all parameters (for docs and tests)."""
    return [f.name for f in fields(ModelParameters)]
