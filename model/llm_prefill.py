"""LLM prefill (prompt processing): an efficiency per architecture on the rate llama.cpp uses.

Prefill is compute bound: 2 x params FLOPs per prompt token. What rate the kernels reach
depends on the architecture, not on one fp16 figure (docs/methodology.md §11, "Prefill"):

- **Basis.** llama.cpp's quantized matrix multiplication (MMQ) runs int8 arithmetic (int8
  mma on NVIDIA since Turing, dp4a / WMMA IU8 elsewhere) and its F16 path runs fp16 GEMMs
  with fp16 accumulation, which every NVIDIA architecture since Turing does at half its
  int8 rate. So the basis is the GPU's dense int8 tensor rate; where the spec sheet has
  none, its fp16 tensor rate x its architecture's cited 8-bit / fp16 ratio
  (`sources/data/specs/eight_bit_ratios.csv`, the same table as the 8-bit rule); where the
  architecture has no 8-bit units, the fp16 tensor rate. The fp16 figure alone misleads:
  GeForce cards list it at fp32 accumulation (half rate), so on it a 3090 would reach
  0.8 of its roofline and an A100 0.28.
- **Efficiency** = measured tokens/s x 2 x params / basis, fitted at the most specific
  level with rows: stack x architecture x segment (consumer / professional), stack x
  architecture (one GPU is enough: the kernels and tensor units are the architecture's),
  then stack x vendor x segment, stack x vendor, segment, all (3 GPUs each). Each level
  uses its rows of the predicted weight-bit class when it has some (F16 prefill runs
  another code path than Q4), else all its rows. The level's efficiency is the median over
  its GPUs of each GPU's median, so a GPU with many rows does not outweigh one with few.
- **Rows.** One-GPU batch-1 prefill rows of a placing host (model/evidence.py) from an
  empty KV cache (`context_depth` 0 or unstated): a prompt processed after 4096 cached
  tokens measures attention over the cache as well.

Hopper gets its own efficiency (llama.cpp's MMQ does not use Hopper's wgmma, so an H100
reaches half the share of an A100); Ampere and Ada data-center / workstation parts get
theirs (they run below their boost clock at full tensor load).
"""

import polars as pl

from model.evidence import placing_rows
from model.llm_stacks import REFERENCE_STACKS, row_stack
from model.segments import segment_expr
from sources.bundled import bundled_eight_bit_ratios

_GB = 1e9
_MIN_POOLED_GPUS = 3
# (keys, minimum GPUs): the levels tried in order for a GPU's prefill efficiency.
LEVELS: tuple[tuple[tuple[str, ...], int], ...] = (
    (("stack", "architecture", "segment"), 1),
    (("stack", "architecture"), 1),
    (("stack", "vendor", "segment"), _MIN_POOLED_GPUS),
    (("stack", "vendor"), _MIN_POOLED_GPUS),
    (("segment",), _MIN_POOLED_GPUS),
    ((), 1),
)


def prefill_basis(gpus: pl.DataFrame, ratios: pl.DataFrame | None = None) -> pl.DataFrame:
    """Per GPU: the compute rate its llama.cpp prefill is measured against (module docstring).

    `gpus` needs gpu_id, name, vendor, architecture, fp16_tensor_tflops and (optional)
    int8_tensor_tops; `ratios` the 8-bit ratio table (the bundled one by default). Returns
    gpu_id, vendor, architecture, segment, basis_tops (null: no compute spec) and
    basis (which figure it is).
    """
    ratios = bundled_eight_bit_ratios() if ratios is None else ratios
    # A catalog extract without an architecture pools every GPU at the vendor levels.
    if "architecture" not in gpus.columns:
        gpus = gpus.with_columns(architecture=pl.lit(None, dtype=pl.Utf8))
    frame = gpus.with_columns(
        segment=segment_expr() if "name" in gpus.columns else pl.lit("professional"),
        int8=pl.col("int8_tensor_tops").cast(pl.Float64)
        if "int8_tensor_tops" in gpus.columns
        else pl.lit(None, pl.Float64),
        fp16=pl.col("fp16_tensor_tflops").cast(pl.Float64),
    )
    table = ratios.select("architecture", "segment", "ratio")
    exact = table.filter(pl.col("segment") != "any")
    any_segment = table.filter(pl.col("segment") == "any").select("architecture", any_ratio="ratio")
    frame = frame.join(exact, on=["architecture", "segment"], how="left").join(
        any_segment, on="architecture", how="left"
    )
    ratio = pl.coalesce("ratio", "any_ratio")
    return frame.select(
        "gpu_id",
        "vendor",
        "architecture",
        "segment",
        basis_tops=pl.coalesce(pl.col("int8"), pl.col("fp16") * ratio, pl.col("fp16")),
        basis=pl.when(pl.col("int8").is_not_null())
        .then(pl.lit("int8 tensor"))
        .when(pl.col("fp16").is_not_null() & ratio.is_not_null())
        .then(pl.format("fp16 tensor x {} 8-bit ratio {}", "architecture", ratio))
        .when(pl.col("fp16").is_not_null())
        .then(pl.lit("fp16 tensor (no 8-bit units)")),
    )


def prefill_rows(benchmarks: pl.DataFrame, basis: pl.DataFrame) -> pl.DataFrame:
    """The measured rows the prefill model is fitted on, with each row's efficiency.

    One-GPU batch-1 prefill rows of a placing host from an empty cache, on GPUs with a
    basis. Adds vendor, architecture, segment, stack, basis_tops and efficiency.
    """
    rows = placing_rows(benchmarks).filter(
        (pl.col("phase") == "prefill")
        & (pl.col("num_gpus") == 1)
        & (pl.col("batch").fill_null(1) == 1)
    )
    if "context_depth" in rows.columns:
        rows = rows.filter(pl.col("context_depth").fill_null(0) == 0)
    return (
        rows.with_columns(stack=row_stack(rows), bits=pl.col("bits").cast(pl.Int32))
        .join(basis.filter(pl.col("basis_tops").is_not_null()), on="gpu_id")
        .with_columns(
            efficiency=pl.col("tokens_per_s")
            * 2
            * pl.col("model_params_b")
            * _GB
            / (pl.col("basis_tops") * 1e12)
        )
    )


def _level_efficiency(part: pl.DataFrame, bits: int) -> float:
    """Median over GPUs of each GPU's median efficiency, on the bit class's rows if any."""
    same = part.filter(pl.col("bits") == bits)
    use = same if same.height else part
    per_gpu = use.group_by("gpu_id").agg(pl.col("efficiency").median())
    return float(per_gpu["efficiency"].median())


def prefill_model_for(rows: pl.DataFrame, gpu: dict, bits: int) -> tuple[float, str] | None:
    """A GPU's prefill efficiency and the level it comes from (None: no rows at all).

    `gpu` holds the GPU's stack (its vendor's reference stack), vendor, architecture and
    segment; `rows` is `prefill_rows` (without the GPU itself, for leave-one-out).
    """
    for keys, min_gpus in LEVELS:
        part = rows
        if any(gpu[key] is None for key in keys):
            continue
        for key in keys:
            part = part.filter(pl.col(key) == gpu[key])
        if part.is_empty() or part["gpu_id"].n_unique() < min_gpus:
            continue
        label = " x ".join(str(gpu[k]) for k in keys) or "all GPUs"
        bits_note = "" if part.filter(pl.col("bits") == bits).height else ", all bit classes"
        return _level_efficiency(part, bits), f"{label}{bits_note}"
    return None


def prefill_rates(
    basis: pl.DataFrame, rows: pl.DataFrame, bits: tuple[int, ...] | list[int]
) -> pl.DataFrame:
    """gpu_id, bits, prefill_tops (efficiency x basis, TFLOP/s reached) and prefill_level.

    Each catalog GPU with a basis, under its vendor's reference llama.cpp stack. Divide
    `prefill_tops` x 1e12 by 2 x params to get tokens/s.
    """
    out = []
    for gpu in basis.filter(pl.col("basis_tops").is_not_null()).iter_rows(named=True):
        gpu = {**gpu, "stack": REFERENCE_STACKS.get(gpu["vendor"])}
        for b in sorted(set(bits)):
            model = prefill_model_for(rows, gpu, b)
            if model is not None:
                out.append((gpu["gpu_id"], b, model[0] * gpu["basis_tops"], model[1]))
    schema = {"gpu_id": pl.Utf8, "bits": pl.Int32, "prefill_tops": pl.Float64,
              "prefill_level": pl.Utf8}  # fmt: skip
    return pl.DataFrame(out, schema=schema, orient="row")


def prefill_leave_one_gpu_out(rows: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's measured prefill rows predicted by the model fitted without it.

    A GPU's rows of one stack and bit class are predicted at the levels of that stack.
    Returns gpu_id, vendor, stack, architecture, model_params_b, quant, measured,
    predicted, level and ape (absolute error, a fraction) — the columns
    `model.llm_calibration.logo_by_vendor_stack` summarises.
    """
    out = []
    for gpu in sorted(set(rows["gpu_id"])):
        train = rows.filter(pl.col("gpu_id") != gpu)
        test = rows.filter(pl.col("gpu_id") == gpu)
        for (bits, stack), part in test.group_by("bits", "stack", maintain_order=True):
            first = part.row(0, named=True)
            model = prefill_model_for(train, {**first, "stack": stack}, bits)
            if model is None:
                continue
            eff, level = model
            out.append(
                part.select(
                    "gpu_id", "vendor", "stack", "architecture", "model_params_b", "quant",
                    measured="tokens_per_s",
                    predicted=eff * pl.col("basis_tops") * 1e12
                    / (2 * pl.col("model_params_b") * _GB),
                    level=pl.lit(level),
                )
            )  # fmt: skip
    schema = {"gpu_id": pl.Utf8, "vendor": pl.Utf8, "stack": pl.Utf8, "architecture": pl.Utf8,
              "model_params_b": pl.Float64, "quant": pl.Utf8, "measured": pl.Float64,
              "predicted": pl.Float64, "level": pl.Utf8}  # fmt: skip
    if not out:
        return pl.DataFrame(schema=schema).with_columns(ape=pl.lit(None, dtype=pl.Float64))
    return pl.concat(out, how="vertical_relaxed").with_columns(
        ape=(pl.col("predicted") / pl.col("measured") - 1).abs()
    )
