"""Inference relative performance: measured where benchmarked, bridged from a base otherwise.

Inference (16- and 8-bit), `bridge`: measured where a GPU has results (a GPU measured in
one table only is placed by its ratio to its nearest anchor there,
model/performance_fit.py); a set of inference tables without the reference is placed
through its GPUs whose base value (training for 16-bit; 16-bit inference x the 8-bit tensor
speedup for 8-bit) is itself measured. Other GPUs are bridged: base x the inference/base
ratio of their family — for 8-bit the segment (consumer or data-center/professional,
model/segments.py), vendor, then architecture; for 16-bit all GPUs, vendor, then
architecture (INFERENCE_16BIT_LEVELS says why) — each level pooled toward the one above
and the top toward Dettmers' ratio 1 (`pooled_ratio`; never counting the reference's
ratio, 1 by definition), with an interval from the spread of those ratios and how few
support it. A level supported by fewer than MIN_LEVEL_GPUS (2) measured GPUs is skipped:
a vendor ratio resting on one GPU (AMD: the MI300X) is not used, so a consumer Radeon
never inherits a data-center Instinct ratio. With
fewer than three measured ratios in all Dettmers' rule applies to every GPU (inference
ranks like training, ratio 1) and the row says so (`evidence` = `dettmers_rule`).

8-bit tensor speed (`eight_bit_speedup`): the fastest 8-bit tensor rate the GPU has (INT8
from Turing on, FP8 on Ada, Hopper, Blackwell and CDNA3+) over its fp16 tensor rate; 1
(Dettmers: old GPUs run 8-bit at about their 16-bit speed, B536-553) where the
architecture has no 8-bit tensor units. A missing spec is unknown, never "no speed-up":
where the GPU's own fp16 or 8-bit field is empty, the speedup is its architecture's
datasheet ratio (`sources/data/specs/eight_bit_ratios.csv`), flagged estimated, with a
wider interval (ESTIMATED_SPEEDUP_HALF).
"""

import re
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import polars as pl

from model.fit import t975
from model.performance_fit import measured_workload
from model.performance_rows import log_row, reference_text, workload_frame
from model.segments import segment_expr
from model.spec_estimator import spec_features
from sources.bundled import bundled_eight_bit_ratios

# The log half-width (95 %) added to the 8-bit base of a GPU whose speedup is its
# architecture's datasheet ratio rather than its own spec: a factor sqrt(2) either way,
# half the 2x between a half-rate (GeForce) and a full-rate fp16 accumulate, the largest
# way a part of a listed architecture departs from its datasheet ratio.
ESTIMATED_SPEEDUP_HALF = float(np.log(2.0) / 2)
NO_SPEEDUP = "none (8-bit at 16-bit speed)"

# Pseudo-observations at the prior: each level's ratio (segment, vendor, architecture) is
# pooled toward the level above as if that level had been seen this many more times, and
# the top level toward Dettmers' ratio 1 likewise.
POOLING_PSEUDO_GPUS = 2.0
MIN_BRIDGE_RATIOS = 3
# A level below the top (a vendor within a segment, an architecture within that) takes
# part in the pooling only with this many measured GPUs: one GPU's ratio is that GPU's,
# not its vendor's (issue 22: AMD's 16-bit inference/training ratio rested on the MI300X
# alone and was handed to 27 AMD GPUs, consumer Radeons included). The top level (the
# segment) is pooled toward Dettmers' ratio 1 whatever its count, so a segment with one
# measured GPU keeps a third of its ratio (POOLING_PSEUDO_GPUS = 2): skipping it too would
# drop the one measured consumer 8-bit ratio (RTX 4090, 0.63x its spec-sheet base) and rate
# every GeForce card's 8-bit speed at the full 4x INT8/fp16 spec ratio (RTX 5090 0.87x an
# H100, against 0.49x measured for the RTX 4090 in MLPerf Inference v4.1).
MIN_LEVEL_GPUS = 2
# The bridge's hierarchy for both precisions, broadest first. Segment first: a consumer
# card's inference/base ratio comes from consumer cards (GeForce spec sheets give fp16 at
# half rate; consumer and data-center parts run other kernels and batch sizes), never
# from data-center parts alone.
BRIDGE_LEVELS = ("segment", "vendor", "architecture")
# 16-bit inference's hierarchy: all measured GPUs, then vendor, then architecture. Segment
# first would leave every GeForce card at Dettmers' ratio 1, because no consumer card has a
# published 16-bit inference result (the RTX 4090's only MLPerf result is 8-bit), and so
# out of the headline. A GeForce card shares its architecture's SMs, tensor cores and
# kernels with the professional parts that are measured (A10/A30 for Ampere, L4/L40S for
# Ada): the architecture's ratio is the nearest evidence. What issue 22 barred, a consumer
# Radeon inheriting the MI300X's ratio, is the vendor level resting on one GPU, which
# MIN_LEVEL_GPUS skips: an RDNA card takes the all-GPU ratio (RDNA and CDNA are different
# architectures, so the architecture level never crosses them).
INFERENCE_16BIT_LEVELS = ("all", "vendor", "architecture")


def pooled_ratio(ratios: list[tuple[float, tuple[str, ...]]], family: tuple[str, ...]) -> float:
    """A GPU family's log inference/base ratio, partially pooled down a hierarchy.

    `ratios` holds (log ratio, family) of measured GPUs, a family being a tuple of levels
    from the broadest, e.g. (segment, vendor, architecture). Starting from 0 (Dettmers'
    ratio 1), each level's ratios are pooled toward the level above as if the level above
    had been seen POOLING_PSEUDO_GPUS more times; a level below the top with fewer than
    MIN_LEVEL_GPUS measured GPUs is skipped (`supporting_depth`), so one GPU never sets a
    vendor's or an architecture's ratio and a family without enough measured GPUs takes the
    nearest level above that has them; a segment without measured GPUs stays at ratio 1.
    """
    return _pool(ratios, family)[0]


def supporting_depth(ratios: list[tuple[float, tuple[str, ...]]], family: tuple[str, ...]):
    """(depth, GPUs) of the deepest level `pooled_ratio` used for `family`; (0, 0): none."""
    _, depth, n = _pool(ratios, family)
    return depth, n


def _pool(ratios, family) -> tuple[float, int, int]:
    """(pooled log ratio, deepest level used, its measured GPUs); see `pooled_ratio`."""
    k = POOLING_PSEUDO_GPUS
    level, used, n_used = 0.0, 0, 0
    for depth in range(1, len(family) + 1):
        same = [x for x, f in ratios if f[:depth] == family[:depth]]
        if not same or (depth > 1 and len(same) < MIN_LEVEL_GPUS):
            continue
        level = (sum(same) + k * level) / (len(same) + k)
        used, n_used = depth, len(same)
    return level, used, n_used


def bridged_workload(
    debiased: pl.DataFrame,
    workload: str,
    base: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    base_name: str,
    levels: tuple[str, ...] = BRIDGE_LEVELS,
    weights: dict[str, float] | None = None,
) -> pl.DataFrame:
    """A workload measured on few GPUs, bridged from a base workload for the others.

    `base` has gpu_id, base_log (log value relative to the reference), base_half (log
    half-width of its 95 % interval, may be null) and base_measured (whether the base rests
    on the GPU's own measurement). `levels` is the pooling hierarchy of the bridge's
    ratios (`pooled_ratio`); `weights` the benchmark-class weights of the fit
    (model/benchmark_weights.py; None: every table 1). See the module docstring.
    """
    measured = measured_workload(debiased, workload, reference, weights)
    families = spec_features(gpus).select(
        "gpu_id", "segment", "vendor", "architecture", all=pl.lit("all")
    )
    base = base.join(families, on="gpu_id", how="left")
    base_of = {r["gpu_id"]: r for r in base.iter_rows(named=True)}
    ref_measured = measured.filter((pl.col("gpu_id") == reference) & pl.col("main"))
    ref_log = ref_measured["log_perf"][0] if ref_measured.height else None
    df = int(measured["df"].max()) if measured.height else 0
    t = t975(df) if df >= 1 else None

    placed = _place_reference_set(measured, ref_log, t)
    level = _reference_set_level(placed, base_of, reference)
    others = measured.filter(~pl.col("main")) if ref_log is not None else measured
    placed.update(_place_other_sets(others, base_of, level, t))
    bridge = _Bridge.fit(placed, base_of, reference, levels, workload, base_name)
    rows = [
        _measured_row(b["gpu_id"], placed[b["gpu_id"]], df)
        if b["gpu_id"] in placed
        else bridge.row(b)
        for b in base.iter_rows(named=True)
    ]
    return _reference_is_one(
        workload_frame(rows, workload), reference, workload, measured=ref_log is not None
    )


class _Placed(NamedTuple):
    """A measured GPU on the reference's scale: log value, log half-width, its set, count.

    `note` says how a single-table GPU was placed (performance_fit.place_single_table).
    """

    log: float
    half: float | None
    main: bool
    n: int
    note: str | None = None


def _ratio(gpu: str, log: float, base_of: dict[str, dict], reference: str) -> float | None:
    """A measured GPU's log ratio to its base; None where the base is not measured."""
    b = base_of.get(gpu)
    if gpu == reference or b is None or not b["base_measured"]:
        return None  # the reference's ratio is 1 by definition, not evidence
    return log - b["base_log"]


def _place_reference_set(
    measured: pl.DataFrame, ref_log: float | None, t: float | None
) -> dict[str, _Placed]:
    """Step 1, the reference's set: measured ratios to the reference, exact."""
    placed: dict[str, _Placed] = {}
    if ref_log is None:
        return placed
    for r in measured.filter(pl.col("main")).iter_rows(named=True):
        half = t * r["log_se"] if t is not None and r["log_se"] is not None else None
        placed[r["gpu_id"]] = _Placed(
            r["log_perf"] - ref_log, half, True, r["n_results"], r.get("placed_by")
        )
    return placed


def _reference_set_level(
    placed: dict[str, _Placed], base_of: dict[str, dict], reference: str
) -> float:
    """The mean ratio of the reference's set, pooled toward Dettmers' ratio 1 (log 0)."""
    main_ratios = [
        x for g, p in placed.items() if (x := _ratio(g, p.log, base_of, reference)) is not None
    ]
    k = len(main_ratios)
    return float(np.mean(main_ratios)) * k / (k + POOLING_PSEUDO_GPUS) if k else 0.0


def _place_other_sets(
    others: pl.DataFrame, base_of: dict[str, dict], level: float, t: float | None
) -> dict[str, _Placed]:
    """Step 2, the other sets, each shifted by one constant.

    A set is placed so that the median ratio of its GPUs with a measured base equals the
    reference set's pooled ratio `level`; a set without such a GPU is not placed.
    """
    placed: dict[str, _Placed] = {}
    for (_,), part in others.sort("component", "gpu_id").group_by("component", maintain_order=True):
        offsets = [
            r["log_perf"] - base_of[r["gpu_id"]]["base_log"]
            for r in part.iter_rows(named=True)
            if r["gpu_id"] in base_of and base_of[r["gpu_id"]]["base_measured"]
        ]
        if not offsets:
            continue
        shift = level - float(np.median(offsets))
        spread = float(np.std(offsets, ddof=1)) if len(offsets) >= 2 else None
        for r in part.iter_rows(named=True):
            half = _placing_half(r["log_se"], spread, len(offsets), t)
            placed[r["gpu_id"]] = _Placed(
                r["log_perf"] + shift, half, False, r["n_results"], r.get("placed_by")
            )
    return placed


def _placing_half(
    se: float | None, spread: float | None, n_offsets: int, t: float | None
) -> float | None:
    """Half-width of a placed set's GPU: its own error plus the error of the set's shift."""
    if spread is None or se is None:
        return None
    return (t or 1.96) * float(np.sqrt(se**2 + spread**2 / n_offsets))


@dataclass(frozen=True)
class _Bridge:
    """Step 3, the bridge: ratios of measured GPUs with a measured base, pooled down levels."""

    ratios: list[tuple[float, tuple[str, ...]]]  # (log ratio, family) per measured GPU
    sd: float | None  # the ratios' standard deviation, None with fewer than two
    family_of: dict[str, tuple[str, ...]]
    levels: tuple[str, ...]
    workload: str
    base_name: str

    @classmethod
    def fit(
        cls,
        placed: dict[str, _Placed],
        base_of: dict[str, dict],
        reference: str,
        levels: tuple[str, ...],
        workload: str,
        base_name: str,
    ) -> "_Bridge":
        """The bridge of the placed GPUs' ratios, each GPU's family read from `base_of`."""
        family_of = {g: tuple(r[level] for level in levels) for g, r in base_of.items()}
        ratios = [
            (x, family_of[g])
            for g, p in placed.items()
            if (x := _ratio(g, p.log, base_of, reference)) is not None
        ]
        values = np.array([x for x, _ in ratios])
        sd = float(values.std(ddof=1)) if len(ratios) >= 2 else None
        return cls(ratios, sd, family_of, levels, workload, base_name)

    @property
    def rule(self) -> bool:
        """Too few measured ratios: Dettmers' rule (ratio 1) instead of the bridge."""
        return len(self.ratios) < MIN_BRIDGE_RATIOS

    def shift(self, gpu: str) -> tuple[float, float | None, int, int]:
        """(log ratio, log half-width, deepest level used, its GPUs) for an unmeasured GPU."""
        own = self.family_of[gpu]
        if self.rule:
            return 0.0, None, 0, 0
        pooled = pooled_ratio(self.ratios, own)
        depth, n_used = supporting_depth(self.ratios, own)
        half = (
            t975(len(self.ratios) - 1) * self.sd * np.sqrt(1 + 1 / (n_used + POOLING_PSEUDO_GPUS))
        )
        return pooled, float(half), depth, n_used

    def text(self, family: tuple[str, ...], shift: float, depth: int, n_used: int) -> str:
        """How an unmeasured GPU's value and interval were made."""
        n_ratios = len(self.ratios)
        if self.rule:
            return (
                f"Dettmers' rule ({self.workload} ranks like {self.base_name}, ratio 1): only "
                f"{n_ratios} measured ratios; interval of the {self.base_name} value"
            )
        spread = (
            f"t({n_ratios - 1}) x the sd of the {n_ratios} measured ratios ({self.sd:.3f} in logs)"
        )
        if depth == 0:
            return (
                f"Dettmers' rule ({self.workload} ranks like {self.base_name}, ratio 1): no "
                f"measured GPU shares its {self.levels[0]} ({family[0]}), whose ratio is "
                f"not taken from other {self.levels[0]}s; interval widened by {spread}"
            )
        return (
            f"{self.base_name} x the {' / '.join(family[:depth])} ratio ({np.exp(shift):.3f}; "
            f"{n_used} of {n_ratios} measured GPUs share its {' / '.join(self.levels[:depth])}, "
            f"pooled toward the levels above, a level with fewer than {MIN_LEVEL_GPUS} "
            f"skipped), interval with {spread}"
        )

    def row(self, b: dict) -> dict:
        """The output row of an unmeasured GPU (`b`: its base row): base x its ratio."""
        shift, half, depth, n_used = self.shift(b["gpu_id"])
        base_half = b["base_half"]
        total = float(np.sqrt(half**2 + (base_half or 0.0) ** 2)) if half is not None else base_half
        family = self.family_of[b["gpu_id"]]
        text = self.text(family, shift, depth, n_used) if total is not None else None
        if text is not None and b.get("base_note"):
            text = f"{text}; {b['base_note']}"
        low = -total if total is not None else None
        evidence = "dettmers_rule" if self.rule or depth == 0 else "bridged"
        return log_row(
            b["gpu_id"], b["base_log"] + shift, low, total, "estimated", evidence, 0, text
        )


def _measured_row(gpu: str, p: _Placed, df: int) -> dict:
    """The output row of a measured GPU, with its least-squares interval."""
    if p.half is None:
        return log_row(gpu, p.log, None, None, "measured", "measured", p.n, p.note)
    what = (
        f"least-squares standard error, t({df}) 95 %"
        if p.main
        else "least-squares standard error plus the placing error of its set, 95 %"
    )
    if p.note:
        what = f"{p.note}; interval: its anchor's {what} and the fit's residual variance"
    return log_row(gpu, p.log, -p.half, p.half, "measured", "measured", p.n, what)


def _reference_is_one(
    out: pl.DataFrame, reference: str, workload: str, measured: bool
) -> pl.DataFrame:
    """The reference is 1 by definition in every workload, with no interval of its own."""
    ref_value = out.filter(pl.col("gpu_id") == reference)["value"]
    if ref_value.len() and ref_value[0] != 1.0:
        scale = ref_value[0]
        out = out.with_columns(pl.col("value", "value_low", "value_high") / scale)
    if measured:
        return out
    # Not measured: 1 by definition all the same.
    is_ref = pl.col("gpu_id") == reference
    return out.with_columns(
        value_low=pl.when(is_ref).then(1.0).otherwise("value_low"),
        value_high=pl.when(is_ref).then(1.0).otherwise("value_high"),
        interval_method=pl.when(is_ref)
        .then(pl.lit(reference_text(workload)))
        .otherwise("interval_method"),
    )


def inference_16bit(
    debiased: pl.DataFrame,
    training: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    weights: dict[str, float] | None = None,
) -> pl.DataFrame:
    """16-bit inference: measured where benchmarked, else bridged from 16-bit training."""
    base = training.select(
        "gpu_id",
        base_log=pl.col("value").log(),
        base_half=(pl.col("value_high") / pl.col("value_low")).log() / 2,
        base_measured=pl.col("evidence") == "measured",
    )
    # All GPUs, vendor, then architecture (INFERENCE_16BIT_LEVELS): the architecture is
    # the finest level with evidence (an A10 and an A30 share Ampere's tensor cores and
    # kernels), a level with fewer than two measured GPUs is skipped.
    return bridged_workload(
        debiased,
        "inference_16bit",
        base,
        gpus,
        reference,
        "16-bit training",
        levels=INFERENCE_16BIT_LEVELS,
        weights=weights,
    )


def eight_bit_speedup(gpus: pl.DataFrame, ratios: pl.DataFrame | None = None) -> pl.DataFrame:
    """8-bit over 16-bit tensor speed per GPU (module docstring), its basis, estimated or not.

    The GPU's fastest 8-bit tensor rate over its fp16 tensor rate where its architecture
    has 8-bit tensor units (a row of `ratios`, the bundled table by default): INT8 from
    Turing on, FP8 from Ada (and CDNA3) on. Both rates as the spec sheet gives them:
    GeForce cards list fp16 with fp32 accumulate at half rate and INT8 at full rate, so
    their 8-bit gain is 4x against a data-center part's 2x; MLPerf Inference agrees (RTX
    4090 0.5x an H100 in INT8 ResNet-50 against 0.27x in 16-bit training). Where either
    rate is missing, the architecture's (and segment's) datasheet ratio, flagged.
    """
    arch = _architecture_ratios(gpus, bundled_eight_bit_ratios() if ratios is None else ratios)
    gpus = gpus.join(arch, on="gpu_id", how="left")
    fp8 = pl.col("fp8_tensor_tflops") if "fp8_tensor_tflops" in gpus.columns else pl.lit(None)
    int8 = pl.col("int8_tensor_tops") if "int8_tensor_tops" in gpus.columns else pl.lit(None)
    fp16 = pl.col("fp16_tensor_tflops")
    has_units = pl.col("arch_ratio").is_not_null() & (fp16 > 0)
    fp8_rate = pl.when(has_units).then(fp8.cast(pl.Float64))
    int8_rate = pl.when(has_units).then(int8.cast(pl.Float64))
    best = pl.max_horizontal(fp8_rate, int8_rate)
    estimated = best.is_null() & pl.col("arch_ratio").is_not_null()
    estimate_text = pl.format(
        "estimated: {} {}/fp16 ratio (datasheet)", "architecture", "arch_basis"
    )
    return gpus.select(
        "gpu_id",
        speedup=pl.when(best.is_not_null())
        .then(best / fp16)
        .when(estimated)
        .then("arch_ratio")
        .otherwise(1.0)
        .cast(pl.Float64),
        speedup_basis=pl.when(fp8_rate.is_not_null() & (fp8_rate >= int8_rate.fill_null(0)))
        .then(pl.lit("fp8/fp16 tensor"))
        .when(int8_rate.is_not_null())
        .then(pl.lit("int8/fp16 tensor"))
        .when(estimated)
        .then(estimate_text)
        .otherwise(pl.lit(NO_SPEEDUP)),
        speedup_estimated=estimated,
    )


def _architecture_ratios(gpus: pl.DataFrame, ratios: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's datasheet 8-bit ratio and basis (null: its architecture has no 8-bit units).

    A row matches the GPU's architecture and segment (or `any`), and its `name_pattern`
    where it has one (Turing GeForce: RTX only, the GTX 16 cards have no tensor cores).
    """
    by_key = {(r["architecture"], r["segment"]): r for r in ratios.iter_rows(named=True)}
    names = gpus["name"] if "name" in gpus.columns else pl.Series([None] * gpus.height)
    segments = (
        gpus.select(segment=segment_expr())["segment"]
        if "name" in gpus.columns
        else pl.Series(["professional"] * gpus.height)
    )
    out = {"gpu_id": [], "arch_ratio": [], "arch_basis": []}
    rows = zip(gpus["gpu_id"], gpus["architecture"], segments, names, strict=True)
    for gpu, architecture, segment, name in rows:
        row = by_key.get((architecture, segment)) or by_key.get((architecture, "any"))
        if row and row["name_pattern"] and not re.search(row["name_pattern"], name or ""):
            row = None
        out["gpu_id"].append(gpu)
        out["arch_ratio"].append(row["ratio"] if row else None)
        out["arch_basis"].append(row["basis"] if row else None)
    return pl.DataFrame(
        out, schema={"gpu_id": pl.Utf8, "arch_ratio": pl.Float64, "arch_basis": pl.Utf8}
    )


def inference_8bit(
    debiased: pl.DataFrame,
    inference_16bit: pl.DataFrame,
    gpus: pl.DataFrame,
    reference: str,
    training: pl.DataFrame | None = None,
    weights: dict[str, float] | None = None,
) -> pl.DataFrame:
    """8-bit inference: measured (int8/fp8 tables) where benchmarked, else bridged.

    The bridge's base is 16-bit inference x the GPU's 8-bit tensor speedup relative to the
    reference's.
    """
    speed = eight_bit_speedup(gpus)
    ref_speed = speed.filter(pl.col("gpu_id") == reference)["speedup"][0]
    # The base rests on the GPU's own measurement when its 16-bit inference is measured or
    # bridged from its measured training (an RTX 4090 measured in 8 bits only), by its
    # family's ratio or by Dettmers' ratio 1 where its segment has too few measured GPUs.
    trained = (
        training.filter(pl.col("evidence") == "measured")["gpu_id"].to_list()
        if training is not None
        else []
    )
    base = inference_16bit.join(speed, on="gpu_id").select(
        "gpu_id",
        base_log=pl.col("value").log() + (pl.col("speedup") / ref_speed).log(),
        base_half=_widened_half(),
        base_measured=(pl.col("evidence") == "measured")
        | (
            pl.col("evidence").is_in(["bridged", "dettmers_rule"]) & pl.col("gpu_id").is_in(trained)
        ),
        base_note=pl.when("speedup_estimated").then(
            pl.format("8-bit speedup {}, its interval widened", "speedup_basis")
        ),
    )
    # Segment first: the speedup reads the spec sheets, whose fp16 rate is half-rate on
    # GeForce cards, so a measured GeForce 8-bit ratio speaks for the other GeForce cards,
    # not for a data-center part of the same architecture.
    return bridged_workload(
        debiased,
        "inference_8bit",
        base,
        gpus,
        reference,
        "16-bit inference x 8-bit tensor speedup",
        levels=BRIDGE_LEVELS,
        weights=weights,
    )


def _widened_half() -> pl.Expr:
    """The 8-bit base's log half-width, widened where the speedup is estimated.

    The 16-bit one, plus ESTIMATED_SPEEDUP_HALF in quadrature where the speedup is the
    architecture's datasheet ratio.
    """
    half = (pl.col("value_high") / pl.col("value_low")).log() / 2
    widened = (half.fill_null(0.0) ** 2 + ESTIMATED_SPEEDUP_HALF**2).sqrt()
    return pl.when("speedup_estimated").then(widened).otherwise(half)
