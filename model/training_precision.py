"""Which MLPerf Training figures are FP8 runs: the precision split of "mixed" tables.

MLPerf Training publishes one precision for every submission, "mixed", and lets each
submitter choose its arithmetic. On transformer and LLM benchmarks the GPUs with FP8 tensor
units that the submitters ship FP8 training code for run their matrix products in FP8
(Transformer Engine on NVIDIA, the FP8 LoRA recipe on AMD), while Ampere and Volta run
FP16/BF16. A table that holds both compares an FP8 run with a 16-bit run, and the
relative-performance fit then carries that gap into the 16-bit training scale: the chain
A100 -> A30 (MLPerf v2.0 BERT) -> A30/H100 (v3.1 BERT, H100 in FP8) set the H100 at about
3.4x an A100, where Lambda's 1-GPU PyTorch fp16 transformer tables measure 1.73x.

So an MLPerf Training table of a transformer-class benchmark (`SPLIT_CLASSES`) is split by
the architecture of each row's GPU: rows of an architecture in `FP8_TRAINING_ARCHITECTURES`
form one table (`mixed-fp8` in the era term) and the others another. FP8 runs are then
compared only with FP8 runs, and the 16-bit bridge between Ampere and Hopper comes from
tables that are 16-bit on both sides (Lambda's and NVIDIA's PyTorch tables, MLPerf CNN
tables). Nothing is dropped; a half table with one GPU only places that GPU through its
other tables.

The split is by architecture, not by card or submission, because the choice is the
vendor's training code for that architecture; this table is the one place that says which
architectures run FP8 there, each with the evidence. CNN, RNN and diffusion tables are not
split: MLPerf's CNN implementations are 16-bit on every GPU, and the bundled diffusion
tables hold Hopper and Blackwell GPUs only. NVFP4 (Blackwell in some MLPerf Training v5.1
LLM results) is not split from FP8: both sides of the v5.1 LLM tables (B200/B300/GB200,
MI355X, H200, MI300X/MI325X) are FP8-or-lower parts, and the submissions' precision per
system is not in the bundled data (docs/methodology.md, "FP8 runs in MLPerf Training").
"""

import polars as pl

from model.benchmark_weights import benchmark_class

# architecture -> the evidence that its MLPerf Training transformer/LLM submissions run FP8.
FP8_TRAINING_ARCHITECTURES: dict[str, str] = {
    "hopper": (
        "NVIDIA's MLPerf Training BERT implementation runs its attention and MLP GEMMs in "
        "FP8 through Transformer Engine (FP8_MHA, fp8_gemm in mlcommons/training_results_v3.1 "
        "NVIDIA/benchmarks/bert/implementations/v30-pytorch/te_layers.py @f33f9444), enabled "
        "by --use_transformer_engine2 in the DGX H100 configs (config_DGXH100_8x8x36x1_pack.sh); "
        "H100/H200 GPT-3 and Llama 2 70B LoRA run FP8 in NeMo (NVIDIA, 'Breaking MLPerf "
        "Training Records with NVIDIA H100 GPUs', developer.nvidia.com, 2023-06)"
    ),
    "blackwell": (
        "B200/GB200/B300 submissions use the same Transformer Engine FP8 code on BERT "
        "(v4.1 b200_preview_pytorch) and FP8 or NVFP4 on the LLM benchmarks (NVIDIA, MLPerf "
        "Training v5.1: first NVFP4 results, 2025-11-12)"
    ),
    "cdna3": (
        "AMD's MI300X/MI325X Llama 2 70B LoRA submissions are FP8 (AMD, 'Accelerating AI "
        "Training ... MLPerf Training v5.1', amd.com/en/blogs/2025/accelerating-ai-training.html, "
        "2025-11-13: 'Llama 2-70B LoRA (FP8)')"
    ),
    "cdna4": "AMD's MI355X/MI350X LoRA and Llama 3.1 8B submissions are FP8 (same AMD post)",
}
# Not listed on purpose: Ada has FP8 tensor units, but the bundled Ada MLPerf Training
# BERT results run NVIDIA's 16-bit path (xFusion's v3.1 L40S config has no
# --use_transformer_engine2: training_results_v3.1
# xFusion/benchmarks/bert/implementations/pytorch/config_G5500V7x8xL40S.sh @f33f9444).

# Benchmark classes (model/benchmark_weights.py) whose MLPerf Training tables are split.
SPLIT_CLASSES = frozenset({"transformer", "llm"})
FP8_SUFFIX = "-fp8"


def fp8_architectures() -> frozenset[str]:
    """The architectures whose MLPerf Training transformer/LLM runs are FP8."""
    return frozenset(FP8_TRAINING_ARCHITECTURES)


def is_fp8_run(architecture: pl.Expr | None = None) -> pl.Expr:
    """True for an MLPerf Training "mixed" row of a transformer/LLM benchmark run in FP8.

    Needs `source`, `task`, `precision`, `model`, `workload_class` and the GPU's
    `architecture` (or the expression given). An unknown architecture is not FP8.
    """
    arch = pl.col("architecture") if architecture is None else architecture
    return (
        (pl.col("source") == "mlperf")
        & (pl.col("task") == "training")
        & (pl.col("precision") == "mixed")
        & benchmark_class().is_in(sorted(SPLIT_CLASSES))
        & arch.is_in(sorted(fp8_architectures()))
    ).fill_null(False)


def table_precision(rows: pl.DataFrame, gpus: pl.DataFrame | None) -> pl.DataFrame:
    """`rows` plus `table_precision`: the precision part of the row's table (era term).

    `precision`, or `mixed-fp8` for an FP8 run (`is_fp8_run`). Without a catalog (or its
    `architecture`) no row is known to be FP8 and the tables stay as published.
    """
    if gpus is None or "architecture" not in gpus.columns:
        return rows.with_columns(table_precision=pl.col("precision"))
    arch = gpus.select("gpu_id", _fp8_arch=pl.col("architecture").str.to_lowercase())
    return (
        rows.join(arch, on="gpu_id", how="left")
        .with_columns(
            table_precision=pl.when(is_fp8_run(pl.col("_fp8_arch")))
            .then(pl.col("precision") + FP8_SUFFIX)
            .otherwise(pl.col("precision"))
        )
        .drop("_fp8_arch")
    )
