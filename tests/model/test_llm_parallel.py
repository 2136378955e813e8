"""Tensor parallelism: all-reduce cost by interconnect, and sub-linear batch-1 scaling."""

import math

import pytest

from model.llm_parallel import (
    allreduce_latency_s,
    allreduce_s,
    interconnect_of,
    tp_decode_tokens_per_s,
)


def test_interconnect_rules():
    assert interconnect_of("h100-sxm5-80gb", "hopper", "sxm") == ("nvlink4", 450.0)
    assert interconnect_of("h100-nvl-94gb", "hopper", "pcie") == ("nvlink-bridge", 300.0)
    assert interconnect_of("mi300x", "cdna3", "oam") == ("infinity-fabric", 448.0)
    assert interconnect_of("rtx-4090", "ada", "pcie") == ("pcie4", 32.0)
    assert interconnect_of("rtx-5090", "blackwell", "pcie") == ("pcie5", 64.0)


def test_allreduce_latency_and_bandwidth_terms():
    # The cited points: 6 us for 2 NVLink GPUs, 42 us for 8 PCIe GPUs; log2 in between.
    assert allreduce_latency_s("nvlink4", 2) == pytest.approx(6e-6)
    assert allreduce_latency_s("nvlink4", 8) == pytest.approx(18e-6)
    assert allreduce_latency_s("pcie4", 8) == pytest.approx(42e-6)
    assert allreduce_latency_s("pcie4", 2) == pytest.approx(14e-6)
    assert allreduce_latency_s("pcie4", 1) == 0.0
    # 70B batch 1: 8192 x 2 bytes; ring moves 2 (N-1)/N of it: 16384 / 450e9 s at N = 2.
    assert allreduce_s("nvlink4", 450.0, 2, 16_384) == pytest.approx(6e-6 + 16_384 / 450e9)


def test_tp_decode_is_sub_linear_and_worse_over_pcie():
    one = tp_decode_tokens_per_s(69e9, 0.0, 3350, 1, 80, 8192, "nvlink4", 450)
    assert one == pytest.approx(3350e9 / 69e9)  # one GPU: the bandwidth roofline
    eight_nvlink = tp_decode_tokens_per_s(69e9, 0.0, 3350, 8, 80, 8192, "nvlink4", 450)
    eight_pcie = tp_decode_tokens_per_s(69e9, 0.0, 3350, 8, 80, 8192, "pcie5", 64)
    # 8 GPUs read an eighth each (2.575 ms) but pay 160 all-reduces: 18 us (NVLink) ...
    read_s = 69e9 / 8 / 3350e9
    comm = 160 * (18e-6 + 2 * 7 / 8 * 16_384 / 450e9)
    assert eight_nvlink == pytest.approx(1 / (read_s + comm))
    assert one < eight_pcie < eight_nvlink < 8 * one
    assert math.isclose(eight_nvlink / one, 3.77, rel_tol=0.01)
