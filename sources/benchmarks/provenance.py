"""Provenance of a benchmark row: the software stack, the host class and the batch regime.

The three vocabularies below are the only values `benchmark_results` and `llm_benchmarks`
may hold in their `stack`, `host` and `batch_regime` columns (docs/schema.md, "Benchmark
provenance"). A value is set from what the source itself says: the system name or result
path of an MLPerf submission, the framework folder of a DeepLearningExamples README, the
engine and the `[host …]` note of an LLM row, or an explicit `stack` / `host` cell of a
bundled file. Where the source does not say, the value stays NULL: unknown is never
guessed. The rules are tables (first match wins) so that each one can be read against the
source it comes from.
"""

import re

import polars as pl

# Software stacks: the framework or engine that produced the figure, with its GPU backend
# where the framework has several (PyTorch on CUDA or ROCm; llama.cpp's backends).
STACKS: dict[str, str] = {
    "pytorch-cuda": "PyTorch on NVIDIA CUDA (NGC containers, NeMo, DeepSpeed)",
    "pytorch-rocm": "PyTorch on AMD ROCm",
    "tensorflow": "TensorFlow 1 or 2 (DeepLearningExamples, MLPerf TF submissions)",
    "mxnet": "Apache MXNet",
    "paddle": "PaddlePaddle (framework-native)",
    "jax": "JAX / XLA",
    "tensorrt": "NVIDIA TensorRT (MLPerf `_TRT` systems; Paddle-TRT in DeepLearningExamples)",
    "tensorrt-llm": "NVIDIA TensorRT-LLM (MLPerf `_TRT` systems on LLM benchmarks)",
    "tinygrad": "tinygrad (tinycorp's framework, its own kernels on CUDA or AMD)",
    "llama.cpp-cuda": "llama.cpp, CUDA backend",
    "llama.cpp-rocm": "llama.cpp, ROCm backend",
    "llama.cpp-hip": "llama.cpp, HIP backend built without ROCm libraries",
    "llama.cpp-vulkan": "llama.cpp, Vulkan backend",
    "llama.cpp-metal": "llama.cpp, Metal backend",
    "llama.cpp-sycl": "llama.cpp, SYCL backend (Intel)",
    "ollama": "Ollama (llama.cpp-based; backend chosen at run time)",
    "vllm": "vLLM",
    "sglang": "SGLang",
    "mlx": "Apple MLX (mlx-lm and servers built on it)",
    "mango-llmboost": "MangoBoost LLMBoost (built on vLLM)",
}

# Host classes: the machine the GPU sat in. The last four are constrained hosts, whose
# figures are lowered by the host rather than the GPU.
HOSTS: dict[str, str] = {
    "server": "rack or data-center server, cloud instance, DGX/HGX system",
    "desktop": "desktop PC or workstation, GPU in a full PCIe slot",
    "laptop": "laptop (mobile GPU or its power limit)",
    "egpu": "external GPU enclosure (Thunderbolt/OCuLink) on a desktop or laptop",
    "sbc": "single-board computer (e.g. Raspberry Pi) driving the GPU, usually over PCIe x1",
    "external-link": "GPU on a narrow external link (PCIe x1 riser, USB4) of another host",
}

# Batch regimes: how much work the run batched together.
BATCH_REGIMES: dict[str, str] = {
    "batch-1": "one sample or sequence at a time (llama.cpp decode and prefill, batch 1)",
    "fixed-batch": "a stated batch size per GPU (Lambda, DeepLearningExamples, MLPerf Training)",
    "offline": "MLPerf Inference Offline: all samples at once, batched as the system likes",
    "server": "MLPerf Inference Server scenario: Poisson arrivals under a latency bound",
    "max-throughput": "a serving benchmark driven to its peak throughput (e.g. vLLM)",
}

PROVENANCE_COLUMNS = ("stack", "host", "batch_regime")

# The catalog's ids name the vendor (sources/data/specs/gpu_specs.csv): AMD Instinct `mi…`,
# Radeon `rx-…` / `radeon-…`, Intel Arc `arc-…`; everything else is NVIDIA.
_AMD_ID = re.compile(r"^(mi\d|rx-|radeon-)")

# Stack of an MLPerf system by a word in its name or result path (lowercased), first match
# wins. NeMo and DeepSpeed are PyTorch libraries. `{torch}` is pytorch-cuda or -rocm.
_MLPERF_STACK_WORDS: tuple[tuple[str, str], ...] = (
    ("tinybox", "tinygrad"),
    ("vllm", "vllm"),
    ("llmboost", "mango-llmboost"),
    ("_trt", "{trt}"),
    ("tensorrt", "{trt}"),
    ("mxnet", "mxnet"),
    ("paddlepaddle", "paddle"),
    ("tf2.0", "tensorflow"),
    ("tensorflow", "tensorflow"),
    ("nemo", "{torch}"),
    ("deepspeed", "{torch}"),
    ("pytorch", "{torch}"),
)
# NVIDIA's MLPerf LLM benchmarks run TensorRT-LLM (the `Software` field of those
# submissions; sources/data/benchmarks/llm/MANIFEST.md section 3).
_LLM_MODEL = re.compile(r"^(gptj|llama|mixtral|deepseek)")

# DeepLearningExamples: the README's top folder is the framework. The PaddlePaddle rows we
# transcribe are all Paddle-TRT (TensorRT) inference tables (benchmarks/MANIFEST.md §2).
_DLE_FOLDER_STACK: dict[str, str] = {
    "PyTorch": "pytorch-cuda",
    "TensorFlow": "tensorflow",
    "TensorFlow2": "tensorflow",
    "MxNet": "mxnet",
    "PaddlePaddle": "tensorrt",
    "JAX": "jax",
}

# LLM `engine` values (llm/MANIFEST.md "Columns"): `llama.cpp` alone is the CUDA build.
_ENGINE_STACK: dict[str, str] = {
    "llama.cpp": "llama.cpp-cuda",
    "llama.cpp-cuda": "llama.cpp-cuda",
    "llama.cpp-rocm": "llama.cpp-rocm",
    "llama.cpp-hip": "llama.cpp-hip",
    "llama.cpp-vulkan": "llama.cpp-vulkan",
    "llama.cpp-metal": "llama.cpp-metal",
    "llama.cpp-sycl": "llama.cpp-sycl",
    "ollama": "ollama",
    "tensorrt-llm": "tensorrt-llm",
    "vllm": "vllm",
    "sglang": "sglang",
    "mlx": "mlx",
    "mango-llmboost": "mango-llmboost",
}

# The `[host …]` note of an LLM citation, by a word in it (lowercased), first match wins.
_HOST_NOTE_WORDS: tuple[tuple[str, str], ...] = (
    ("raspberry pi", "sbc"),
    ("egpu", "egpu"),
    ("thunderbolt", "egpu"),
    ("pcie x1", "external-link"),
    ("laptop", "laptop"),
    (" pc", "desktop"),  # "Intel 13900K PC", "Ryzen 9 7950X PC"
    ("thelio", "desktop"),  # System76 Thelio Astra: an Arm workstation tower
    ("orion o6", "desktop"),  # Radxa Orion O6: a mini-ITX board with a x16 slot
)
_HOST_NOTE = re.compile(r"\[host ([^\]]*)\]")

# MLPerf systems are servers unless their name says otherwise; a GeForce box submitted
# without a system name (GATEOverflow's RTX 4090 runs) is not known to be one.
_MLPERF_HOST_UNKNOWN = ("gateoverflow",)


def is_amd(gpu_id: str | None) -> bool:
    """Whether a catalog id names an AMD GPU (Instinct or Radeon)."""
    return bool(gpu_id and _AMD_ID.match(gpu_id))


def _first_word(text: str, table: tuple[tuple[str, str], ...]) -> str | None:
    lowered = text.lower()
    return next((value for word, value in table if word in lowered), None)


def mlperf_stack(system: str, model: str, gpu_id: str | None) -> str | None:
    """The stack an MLPerf system name or result path states, or None."""
    stack = _first_word(system, _MLPERF_STACK_WORDS)
    if stack == "{trt}":
        return "tensorrt-llm" if _LLM_MODEL.match(model or "") else "tensorrt"
    if stack == "{torch}":
        return "pytorch-rocm" if is_amd(gpu_id) else "pytorch-cuda"
    return stack


def dle_stack(citation: str) -> str | None:
    """The framework of a DeepLearningExamples row: the README's top folder."""
    parts = citation.split(" ", 1)
    folder = parts[1].split("/", 1)[0] if len(parts) == 2 else ""
    return _DLE_FOLDER_STACK.get(folder)


def benchmark_stack(row: dict) -> str | None:
    """The stack of a `benchmark_results` row from its source's own words, or None."""
    source, citation = row["source"], row.get("citation") or ""
    if source == "lambda":
        # Lambda runs DeepLearningExamples PyTorch recipes in NGC PyTorch containers.
        return "pytorch-cuda"
    if source == "nvidia-dle":
        return dle_stack(citation)
    if source == "mlperf":
        if (row.get("software_era") or "").endswith("-tinygrad"):
            return "tinygrad"
        return mlperf_stack(f"{row.get('system') or ''} {citation}", row["model"], row["gpu_id"])
    return None


def benchmark_host(row: dict) -> str | None:
    """The host class of a `benchmark_results` row where its source states it, or None."""
    if row["source"] == "mlperf":
        text = f"{row.get('system') or ''} {row.get('citation') or ''}".lower()
        return None if any(word in text for word in _MLPERF_HOST_UNKNOWN) else "server"
    if row["source"] == "nvidia-dle":
        # DGX-1, DGX-2 and DGX A100 systems, and the passive data-center T4/A30/A10.
        return "server"
    return None


def benchmark_batch_regime(row: dict) -> str | None:
    """MLPerf Inference rows are Offline; a stated batch is batch-1 or fixed-batch.

    Batch-1 is an inference regime (latency-bound, one sample at a time); a training run
    with one sample per GPU still trains on a fixed global batch.
    """
    if (row.get("software_era") or "").startswith("mlperf-inference"):
        return "offline"
    batch = row.get("batch_size_per_gpu")
    if batch is None:
        return None
    return "batch-1" if batch == 1 and row.get("task") == "inference" else "fixed-batch"


def llm_stack(row: dict) -> str | None:
    """The stack of an `llm_benchmarks` row: its engine in the STACKS vocabulary."""
    return _ENGINE_STACK.get(row["engine"])


def llm_host(row: dict) -> str | None:
    """The host class of an `llm_benchmarks` row, from its source or its `[host …]` note."""
    note = _HOST_NOTE.search(row.get("citation") or "")
    if note:
        return _first_word(note.group(1), _HOST_NOTE_WORDS)
    if row["source"] in ("mlperf", "llamacpp-xiongjiedai"):
        # MLPerf systems are servers; XiongjieDai ran on RunPod cloud machines (llm MANIFEST §1).
        return "server"
    return None


def llm_batch_regime(row: dict) -> str | None:
    """Batch-1 llama.cpp/Ollama rows; MLPerf serving rows are the Offline scenario."""
    if row["source"] == "mlperf" and row["phase"] == "serving":
        return "offline"
    return "batch-1" if row.get("batch") == 1 else None


_BENCHMARK_RULES = {
    "stack": benchmark_stack,
    "host": benchmark_host,
    "batch_regime": benchmark_batch_regime,
}
_LLM_RULES = {"stack": llm_stack, "host": llm_host, "batch_regime": llm_batch_regime}


def _with_rules(frame: pl.DataFrame, rules: dict) -> pl.DataFrame:
    """Fill each provenance column's nulls from its rule; stated values are kept."""
    rows = frame.to_dicts()
    filled = {name: [row.get(name) or rule(row) for row in rows] for name, rule in rules.items()}
    return frame.with_columns(
        [pl.Series(name, values, dtype=pl.Utf8) for name, values in filled.items()]
    )


def with_benchmark_provenance(frame: pl.DataFrame) -> pl.DataFrame:
    """`benchmark_results` rows with `stack`, `host` and `batch_regime` filled where known."""
    return _with_rules(frame, _BENCHMARK_RULES)


def with_llm_provenance(frame: pl.DataFrame) -> pl.DataFrame:
    """`llm_benchmarks` rows with `stack`, `host` and `batch_regime` filled where known."""
    return _with_rules(frame, _LLM_RULES)


# SXM, OAM and superchip modules are only built into servers (HGX/OAM baseboards).
_SERVER_FORM_FACTORS = frozenset({"sxm", "oam", "superchip"})


def host_from_form_factor(frame: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Fill an unknown host with `server` where the GPU exists only as a server module.

    Args:
        frame: Rows with `gpu_id` and `host`.
        gpus: The catalog (`gpu_id`, `form_factor`).
    """
    servers = gpus.filter(pl.col("form_factor").is_in(list(_SERVER_FORM_FACTORS)))["gpu_id"]
    module = pl.col("gpu_id").is_in(servers.implode())
    return frame.with_columns(
        host=pl.when(pl.col("host").is_null() & module)
        .then(pl.lit("server"))
        .otherwise(pl.col("host"))
    )
