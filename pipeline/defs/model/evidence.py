"""The evidence basis of every GPU x workload and the software statements published with it.

One step writes both tables (model/eligibility.py, sources/specs/software_support.py): the
decisions step reads `evidence_basis` to keep GPUs whose value is not validated out of the
picks; the site reads both for its caveats.
"""

from collections.abc import Iterator

import dagster as dg
import polars as pl
from dagster_duckdb import DuckDBResource

from model.eligibility import evidence_basis as compute_evidence_basis
from model.eligibility import placing_provenance
from pipeline.defs.metadata import KINDS
from pipeline.defs.model.common import model_step
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings
from sources.specs.software_support import bundled_software_support, support_per_gpu


@dg.multi_asset(
    pool=WAREHOUSE_POOL,
    specs=[
        dg.AssetSpec(
            "evidence_basis",
            group_name="model",
            kinds=KINDS,
            deps=["relative_performance", "benchmark_debiased", "benchmark_results", "gpus"],
            description=(
                "One row per GPU x workload: what its relative performance rests on "
                "(measured, validated estimate, not validated), the stacks and independent "
                "sources behind it, whether it may be a pick, and the caveat the site shows."
            ),
        ),
        dg.AssetSpec(
            "gpu_software_support",
            group_name="model",
            kinds=KINDS,
            deps=["gpus"],
            description=(
                "One row per GPU with a cited software-support statement (ROCm list for "
                "Radeons, PyTorch CUDA wheels for old NVIDIA architectures, Intel XPU)."
            ),
        ),
    ],
)
def evidence(
    context: dg.AssetExecutionContext, settings: GpuvalueSettings, warehouse: DuckDBResource
) -> Iterator[dg.MaterializeResult]:
    """Evidence basis and software support for the run date."""
    with model_step(context, settings, warehouse) as step:
        gpus = step.read_all("gpus")
        support = support_per_gpu(bundled_software_support(), gpus)
        rows = compute_evidence_basis(
            step.read("relative_performance"),
            placing_provenance(step.read("benchmark_debiased"), step.read_all("benchmark_results")),
            gpus,
            step.run_date,
            support,
        )
        step.write("evidence_basis", rows)
        step.write("gpu_software_support", support.with_columns(run_date=pl.lit(step.run_date)))
    counts = rows.group_by("workload", "basis").len().sort("workload", "basis")
    yield step.result(
        asset="evidence_basis",
        # e.g. "training_16bit measured 41, training_16bit not_validated 32, ..."
        basis=", ".join(f"{w} {b} {n}" for w, b, n in counts.iter_rows()),
        not_eligible=rows.filter(~pl.col("eligible")).height,
    )
    yield step.result(asset="gpu_software_support", gpus=support.height)
