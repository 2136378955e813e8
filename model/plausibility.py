"""Plausibility of relative performance: facts about GPUs that any answer must respect.

A failing rule blocks publishing (pipeline/defs/checks.py), so a method change that
breaks one is found before anyone reads the ranking. The rules compare GPUs through
their specs, never through named pairs:

- same die, same clocks: two GPUs of one vendor, architecture and form factor with the
  same fp16 tensor rate (within 2 %) and power (within 10 %) differ only in memory size
  and a bandwidth step of at most 35 % (A100 SXM4 40/80 GB, V100 SXM2 16/32 GB, GH200
  96/144 GB): within SAME_DIE_TOLERANCE of each other in every workload, or within their
  bandwidth step where that is larger (bandwidth-bound inference may gain up to it: the
  GH200 144 GB runs MLPerf's LLM benchmarks 1.16x the 96 GB with 1.22x the bandwidth). A
  new memory generation on the same die (H100 -> H200: 1.43x the bandwidth) is a
  different product, not a variant;
- form factor order: of two GPUs of one vendor, architecture and memory size, the module
  (SXM) has at least the PCIe card's tensor rate and power; it is not slower than the card
  by more than ORDER_TOLERANCE in any workload (H100 PCIe vs SXM5, V100 PCIe vs SXM2);
- inference vs training: a GPU's 16-bit inference value lies within a factor
  INFERENCE_BAND of its 16-bit training value (both are relative to the same reference);
- every row says what it rests on: `method` is measured or estimated, `evidence` is set,
  and only measured evidence is called measured.
"""

import itertools

import polars as pl

SAME_DIE_TOLERANCE = 0.15
ORDER_TOLERANCE = 0.05
INFERENCE_BAND = 3.0
EVIDENCE = ("measured", "bridged", "dettmers_rule", "spec_placed", "spec_estimate")


def _specs(gpus: pl.DataFrame) -> dict[str, dict]:
    cols = ["gpu_id", "vendor", "architecture", "form_factor", "memory_gb"]
    cols += ["fp16_tensor_tflops", "tdp_w", "memory_bandwidth_gbs"]
    present = [c for c in cols if c in gpus.columns]
    return {r["gpu_id"]: r for r in gpus.select(present).iter_rows(named=True)}


def _close(x: dict, y: dict, key: str, tolerance: float) -> bool:
    """Both specs known and their ratio within 1 + tolerance."""
    a, b = x.get(key), y.get(key)
    return bool(a and b) and max(a, b) / min(a, b) <= 1 + tolerance


def same_die_pairs(gpus: pl.DataFrame) -> list[tuple[str, str]]:
    """Pairs of GPUs that share die and clocks and differ in memory only."""
    specs = _specs(gpus)
    pairs = []
    for a, b in itertools.combinations(sorted(specs), 2):
        x, y = specs[a], specs[b]
        keys = ("vendor", "architecture", "form_factor")
        if any(x.get(k) is None or x.get(k) != y.get(k) for k in keys):
            continue
        if x.get("memory_gb") == y.get("memory_gb"):
            continue
        if (
            _close(x, y, "fp16_tensor_tflops", 0.02)
            and _close(x, y, "tdp_w", 0.10)
            and _close(x, y, "memory_bandwidth_gbs", 0.35)
        ):
            pairs.append((a, b))
    return pairs


def form_factor_pairs(gpus: pl.DataFrame) -> list[tuple[str, str]]:
    """(PCIe card, SXM module) pairs of one vendor, architecture and memory size."""
    specs = _specs(gpus)
    pairs = []
    for a, b in itertools.permutations(sorted(specs), 2):
        x, y = specs[a], specs[b]
        if x.get("form_factor") != "pcie" or y.get("form_factor") != "sxm":
            continue
        if any(x.get(k) != y.get(k) for k in ("vendor", "architecture", "memory_gb")):
            continue
        faster = all((y.get(k) or 0) >= (x.get(k) or 0) for k in ("fp16_tensor_tflops", "tdp_w"))
        if faster:
            pairs.append((a, b))
    return pairs


def plausibility_problems(relative: pl.DataFrame, gpus: pl.DataFrame) -> list[str]:
    """Every broken rule (module docstring), one line each; empty when plausible."""
    value = {(r["gpu_id"], r["workload"]): r["value"] for r in relative.iter_rows(named=True)}
    workloads = sorted(set(relative["workload"]))
    problems = []
    specs = _specs(gpus)
    for a, b in same_die_pairs(gpus):
        bw_a, bw_b = specs[a]["memory_bandwidth_gbs"], specs[b]["memory_bandwidth_gbs"]
        tolerance = max(SAME_DIE_TOLERANCE, max(bw_a, bw_b) / min(bw_a, bw_b) - 1)
        for w in workloads:
            va, vb = value.get((a, w)), value.get((b, w))
            if va and vb and max(va, vb) / min(va, vb) - 1 > tolerance:
                problems.append(
                    f"{w}: {a} is {va / vb:.2f}x {b}, same die and clocks (more than "
                    f"{tolerance:.0%} apart)"
                )
    for card, module in form_factor_pairs(gpus):
        for w in workloads:
            vc, vm = value.get((card, w)), value.get((module, w))
            if vc and vm and vc > vm * (1 + ORDER_TOLERANCE):
                problems.append(
                    f"{w}: PCIe {card} is {vc / vm:.2f}x the {module} module with at least "
                    "its tensor rate and power"
                )
    for gpu in sorted({g for g, _ in value}):
        train, infer = value.get((gpu, "training_16bit")), value.get((gpu, "inference_16bit"))
        if train and infer and not 1 / INFERENCE_BAND <= infer / train <= INFERENCE_BAND:
            problems.append(
                f"{gpu}: 16-bit inference is {infer / train:.2f}x its training value "
                f"(outside 1/{INFERENCE_BAND:g}-{INFERENCE_BAND:g}x)"
            )
    unmarked = relative.filter(
        ~pl.col("method").is_in(["measured", "estimated"])
        | pl.col("evidence").is_null()
        | ~pl.col("evidence").is_in(EVIDENCE)
        | ((pl.col("method") == "measured") != (pl.col("evidence") == "measured"))
    )
    if unmarked.height:
        first = unmarked.row(0, named=True)
        problems.append(
            f"{unmarked.height} rows do not say what they rest on (e.g. {first['gpu_id']} "
            f"{first['workload']}: method {first['method']!r}, evidence {first['evidence']!r})"
        )
    return problems
