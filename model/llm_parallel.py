"""Tensor parallelism: N GPUs split every layer, and pay two all-reduces per layer per step.

Megatron-style tensor parallelism (what vLLM, SGLang and TensorRT-LLM run within a node)
splits each attention and MLP block's matrices across the N GPUs, so each GPU holds and
reads 1/N of the weights and of the KV cache, and does 1/N of the FLOPs: bandwidth and
compute add up. What it costs is communication: the partial outputs of the attention
block and of the MLP block are summed across GPUs, two all-reduces per layer per decode
step, each of the step's activations (batch x hidden_size x 2 bytes, bf16). One all-reduce
(ring) takes

    t = latency(N) + 2 (N - 1) / N x message bytes / link bandwidth (per direction)

The bandwidth term is negligible in decode (a 70B model at batch 1 moves 16 KiB per
all-reduce); the latency is not: at 8-bit, 8 H100 SXM read their eighth of a 70B model in
2.6 ms, while 2 x 80 layers x 18 us (NVLink, 8 GPUs) add 2.9 ms a token; over PCIe
(42 us at 8 GPUs) it is 6.7 ms. So TP decode at batch 1 scales sub-linearly, and far less
over PCIe than over NVLink.

Latency per all-reduce, cited (small messages, NCCL):
- NVLink / NVSwitch / Infinity Fabric: 6 us at 2 GPUs (H100 SXM, NVLS, 128 B-64 KiB;
  NVIDIA/nccl issue #1259, 2024-04-22).
- PCIe: 42 us at 8 GPUs (8x RTX 4090 over PCIe, 8 B message; NVIDIA/nccl issue #1530,
  2024-11).
It grows with the number of GPUs as a tree does, ~ log2(N): latency(N) = cited x
log2(N) / log2(N_cited). Link bandwidth per direction and GPU from the datasheets:
NVLink 5 (Blackwell) 900 GB/s, NVLink 4 (Hopper SXM) 450, NVLink 3 (A100 SXM) 300,
NVLink 2 (V100 SXM) 150, NVLink 1 (P100 SXM) 80, H100 NVL bridge 300, H200 NVL bridge 450,
AMD Infinity Fabric (MI300X/MI325X/MI355X: 7 links, 896 GB/s peak aggregate) 448, MI250 200;
PCIe 5.0 x16 64 GB/s, 4.0 x16 32, 3.0 x16 16.

Layer split (llama.cpp's default, `model/llm.py`) is a different scheme: each GPU holds
whole layers, a token passes them one after the other, and decode runs at one GPU's speed.
"""

import math

import polars as pl

# (interconnect, per-direction GB/s per GPU, latency class) by rule, first match wins.
NVLINK_LATENCY_US = (6.0, 2)  # (us, at N GPUs): NVIDIA/nccl#1259
PCIE_LATENCY_US = (42.0, 8)  # NVIDIA/nccl#1530
_BRIDGED = {"h100-nvl-94gb": ("nvlink-bridge", 300.0), "h200-nvl": ("nvlink-bridge", 450.0)}
_SXM_NVLINK = {
    "blackwell": ("nvlink5", 900.0),
    "hopper": ("nvlink4", 450.0),
    "ampere": ("nvlink3", 300.0),
    "volta": ("nvlink2", 150.0),
    "pascal": ("nvlink1", 80.0),
}
_AMD_FABRIC = {"cdna2": 200.0, "cdna3": 448.0, "cdna4": 448.0}
_PCIE_GEN5 = frozenset({"blackwell", "hopper", "cdna3", "cdna4", "rdna4"})
_PCIE_GEN3 = frozenset({"kepler", "maxwell", "pascal", "volta", "turing", "gcn5"})


def interconnect_of(gpu_id: str, architecture: str, form_factor: str) -> tuple[str, float]:
    """How a GPU's copies talk to each other: (name, GB/s per direction per GPU)."""
    if gpu_id in _BRIDGED:
        return _BRIDGED[gpu_id]
    if form_factor in ("sxm", "superchip") and architecture in _SXM_NVLINK:
        return _SXM_NVLINK[architecture]
    if form_factor in ("oam", "superchip") and architecture in _AMD_FABRIC:
        return "infinity-fabric", _AMD_FABRIC[architecture]
    if architecture in _PCIE_GEN5:
        return "pcie5", 64.0
    if architecture in _PCIE_GEN3:
        return "pcie3", 16.0
    return "pcie4", 32.0


def interconnects(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, interconnect, link_gbs per catalog GPU (`interconnect_of`)."""
    rows = [
        (g, *interconnect_of(g, a or "", f or ""))
        for g, a, f in gpus.select("gpu_id", "architecture", "form_factor").iter_rows()
    ]
    return pl.DataFrame(
        rows, schema={"gpu_id": pl.Utf8, "interconnect": pl.Utf8, "link_gbs": pl.Float64},
        orient="row",
    )  # fmt: skip


def allreduce_latency_s(interconnect: str, n: int) -> float:
    """Seconds of fixed latency of one small all-reduce across `n` GPUs (module docstring)."""
    if n <= 1:
        return 0.0
    cited, at = PCIE_LATENCY_US if interconnect.startswith("pcie") else NVLINK_LATENCY_US
    return cited * 1e-6 * math.log2(n) / math.log2(at)


def allreduce_s(interconnect: str, link_gbs: float, n: int, message_bytes: float) -> float:
    """Seconds of one ring all-reduce of `message_bytes` across `n` GPUs."""
    if n <= 1:
        return 0.0
    return allreduce_latency_s(interconnect, n) + 2 * (n - 1) / n * message_bytes / (link_gbs * 1e9)


def allreduce_step_expr(n: pl.Expr, batch: pl.Expr) -> pl.Expr:
    """Seconds of a decode step's all-reduces: 2 per layer of batch x hidden x 2 bytes.

    Needs columns interconnect, link_gbs, layers, hidden_size; 0 for one GPU.
    """
    n = n.cast(pl.Float64)
    nvlink_us, nvlink_at = NVLINK_LATENCY_US
    pcie_us, pcie_at = PCIE_LATENCY_US
    latency = (
        pl.when(pl.col("interconnect").str.starts_with("pcie"))
        .then(pcie_us / math.log2(pcie_at))
        .otherwise(nvlink_us / math.log2(nvlink_at))
        * 1e-6
        * n.log(2)
    )
    message = batch.cast(pl.Float64) * pl.col("hidden_size") * 2
    one = latency + 2 * (n - 1) / n * message / (pl.col("link_gbs") * 1e9)
    return pl.when(n > 1).then(2 * pl.col("layers") * one).otherwise(0.0)


def tp_decode_tokens_per_s(
    weight_bytes: float,
    kv_bytes: float,
    bandwidth_gbs: float,
    n: int,
    layers: int,
    hidden_size: int,
    interconnect: str,
    link_gbs: float,
    bandwidth_efficiency: float = 1.0,
    step_overhead_s: float = 0.0,
) -> float:
    """Batch-1 decode tokens/s of one stream on `n` tensor-parallel GPUs.

    Each GPU reads 1/n of the weights and KV cache at its own bandwidth (x efficiency),
    then the step pays 2 all-reduces per layer of one token's activations (hidden x 2
    bytes) and a fixed per-step overhead. For model/llm.py's multi-GPU batch-1 rows (the
    engine's efficiency and overhead are the caller's: llama.cpp's layer split is not this).
    """
    read_s = (weight_bytes + kv_bytes) / n / (bandwidth_efficiency * bandwidth_gbs * 1e9)
    comm_s = 2 * layers * allreduce_s(interconnect, link_gbs, n, hidden_size * 2)
    return 1.0 / (read_s + comm_s + step_overhead_s)
