"""What each GPU's value rests on, and whether it may be named a pick (methodology §9a).

`evidence_basis` gives, per GPU x workload, the basis of its relative performance
(`measured`, `validated_estimate` or `not_validated`), the software stacks and the number of
independent sources behind it, and one caveat sentence the site shows where the value is
used. Only an `eligible` GPU enters the headline, the top-3 lists, the recommendations and
the verdicts of that workload; every other GPU stays in the tables, flagged.

The rule (docs/methodology.md, "Headline eligibility"):

- measured: the value rests on the GPU's own results, which by `model.evidence` come from
  a mainstream stack on an unconstrained host (tinygrad and eGPU/SBC rows never place);
- a spec estimate (or a set placed through spec estimates) is validated when its vendor x
  architecture has a GPU measured in 16-bit training, the workload the spec estimator is
  fitted and checked on: the leave-one-GPU-out error then describes it. An architecture
  with no measured GPU (RDNA2/3/4 Radeons, Intel Arc, CDNA1/2 Instinct today) has only
  the leave-one-architecture-out range, which nothing checks on that architecture;
- a bridged inference value is validated when its base workload is eligible and its
  vendor's ratio rests on at least MIN_FAMILY_GPUS GPUs measured in that workload;
- Dettmers' rule (inference ranks like training, used when too few ratios exist) is not
  validated.

A GPU whose vendor x architecture has no GPU measured under a mainstream stack in any
workload is flagged "not validated under PyTorch".
"""

import datetime as dt
import re

import polars as pl

BASES = ("measured", "validated_estimate", "not_validated")
# A bridged value's vendor ratio must rest on this many GPUs measured in the workload.
MIN_FAMILY_GPUS = 3
# The workload whose value a bridged workload starts from (model/bridging.py).
BASE_WORKLOAD = {"inference_16bit": "training_16bit", "inference_8bit": "inference_16bit"}
_WORDS = {
    "training_16bit": "16-bit training",
    "inference_16bit": "16-bit inference",
    "inference_8bit": "8-bit inference",
}
NOT_VALIDATED_UNDER_PYTORCH = "not validated under PyTorch"
# How a software-support status reads in a caveat (sources/specs/software_support.py).
SUPPORT_PHRASES = {
    "unsupported": "no current PyTorch wheel has kernels for it",
    "legacy-wheel-only": "current PyTorch has its kernels only in the legacy CUDA 12.6 wheels",
    "unofficial": "not on AMD's ROCm support list",
    "partial": "AMD lists only some cards of its architecture for ROCm",
    "prototype": "PyTorch's Intel GPU backend is a prototype",
    "outside-ranking": (
        "PyTorch runs it only on Apple's MPS backend, which no benchmark behind the ranking "
        "measures: never a pick"
    ),
}
# Statuses that keep a GPU out of every pick (sources/specs/software_support.py
# EXCLUDED_STATUSES; model/ may not import sources/, so the name is repeated here).
EXCLUDED_STATUSES = ("outside-ranking",)
# An MLPerf citation names its submitter: "... closed/Dell/results/..." or
# "training_results_v5.1 Krai/results/...". Other sources publish as one.
_SUBMITTER = re.compile(r"(?:closed/|\s)([^/\s]+)/results/")

COLUMNS = [
    "run_date",
    "gpu_id",
    "workload",
    "evidence",
    "basis",
    "stacks",
    "n_sources",
    "n_results",
    "eligible",
    "caveat",
]


def publisher(source: str, citation: str | None) -> str:
    """The independent publisher of a benchmark row: MLPerf's submitter, else the source."""
    if source == "mlperf" and citation:
        found = _SUBMITTER.search(citation)
        if found:
            return f"mlperf:{found.group(1)}"
    return source


def placing_provenance(debiased: pl.DataFrame, results: pl.DataFrame) -> pl.DataFrame:
    """The rows that placed each GPU, with their stack and publisher.

    `debiased` is the run's benchmark_debiased (the rows the model used); `results` the
    benchmark_results they came from, whose `stack` they lack. Returns gpu_id, workload,
    stack (NULL: the source does not say) and publisher.
    """
    keys = ["source", "software_era", "citation", "gpu_id", "model", "precision", "num_gpus"]
    stacks = results.select(*keys, "stack").unique()
    return (
        debiased.select(*keys, "workload")
        .join(stacks, on=keys, how="left", nulls_equal=True)
        .with_columns(
            publisher=pl.struct("source", "citation").map_elements(
                lambda r: publisher(r["source"], r["citation"]), return_dtype=pl.Utf8
            )
        )
        .select("gpu_id", "workload", "stack", "publisher")
    )


def _own_sources(placing: pl.DataFrame) -> pl.DataFrame:
    """Per GPU x workload: the stacks (sorted, 'unstated' for NULL) and publisher count."""
    return placing.group_by("gpu_id", "workload").agg(
        stacks=pl.col("stack").fill_null("unstated").unique().sort().str.join(", "),
        n_sources=pl.col("publisher").n_unique().cast(pl.Int32),
    )


def _with_sources(rows: pl.DataFrame, placing: pl.DataFrame) -> pl.DataFrame:
    """Stacks and sources of each row: its own results, else those of its base workload.

    A bridged 8-bit value rests on the GPU's 16-bit inference results, or, failing those,
    its training results: the first workload along the bridge with results of its own.
    """
    own = _own_sources(placing)
    out = rows
    chain = {w: [w] for w in rows["workload"].unique()}
    for workload in chain:
        base = BASE_WORKLOAD.get(workload)
        while base:
            chain[workload].append(base)
            base = BASE_WORKLOAD.get(base)
    depth = max(len(c) for c in chain.values()) if chain else 0
    for step in range(depth):
        source = pl.col("workload").replace_strict(
            {w: c[step] if step < len(c) else None for w, c in chain.items()},
            return_dtype=pl.Utf8,
        )
        out = (
            out.with_columns(_source_workload=source)
            .join(
                own.rename({"workload": "_source_workload"}).rename(
                    {c: f"{c}_{step}" for c in ("stacks", "n_sources")}
                ),
                on=["gpu_id", "_source_workload"],
                how="left",
            )
            .drop("_source_workload")
        )
    return out.with_columns(
        stacks=pl.coalesce([f"stacks_{s}" for s in range(depth)]).fill_null(""),
        n_sources=pl.coalesce([f"n_sources_{s}" for s in range(depth)]).fill_null(0),
    ).drop([f"{c}_{s}" for s in range(depth) for c in ("stacks", "n_sources")])


def _measured_families(relative: pl.DataFrame, gpus: pl.DataFrame) -> dict[str, pl.DataFrame]:
    """Architectures and vendors with measured GPUs, for the validation rules."""
    measured = relative.filter(pl.col("evidence") == "measured").join(
        gpus.select("gpu_id", "vendor", "architecture"), on="gpu_id"
    )
    return {
        "arch_training": measured.filter(pl.col("workload") == "training_16bit")
        .select("vendor", "architecture")
        .unique()
        .with_columns(_arch_training=pl.lit(True)),
        "arch_any": measured.select("vendor", "architecture")
        .unique()
        .with_columns(_arch_any=pl.lit(True)),
        "vendor_workload": measured.group_by("vendor", "workload").agg(
            _family=pl.col("gpu_id").n_unique()
        ),
    }


def _basis(rows: pl.DataFrame) -> pl.DataFrame:
    """`basis` for every row; bridged rows after their base workload's (a chain)."""
    spec = pl.col("evidence").is_in(["spec_estimate", "spec_placed"])
    out = rows.with_columns(
        basis=pl.when(pl.col("evidence") == "measured")
        .then(pl.lit("measured"))
        .when(spec & pl.col("_arch_training"))
        .then(pl.lit("validated_estimate"))
        .when(pl.col("evidence") == "bridged")
        .then(pl.lit(None, dtype=pl.Utf8))  # decided below, once its base is
        .otherwise(pl.lit("not_validated"))
    )
    for workload in ("inference_16bit", "inference_8bit"):
        base = out.filter(pl.col("workload") == BASE_WORKLOAD[workload]).select(
            "gpu_id", _base_ok=pl.col("basis") != "not_validated"
        )
        out = (
            out.join(base, on="gpu_id", how="left")
            .with_columns(
                basis=pl.when((pl.col("workload") == workload) & pl.col("basis").is_null())
                .then(
                    pl.when(
                        pl.col("_base_ok").fill_null(False) & (pl.col("_family") >= MIN_FAMILY_GPUS)
                    )
                    .then(pl.lit("validated_estimate"))
                    .otherwise(pl.lit("not_validated"))
                )
                .otherwise(pl.col("basis"))
            )
            .drop("_base_ok")
        )
    return out.with_columns(pl.col("basis").fill_null("not_validated"))


def _support_notes(support: pl.DataFrame | None) -> pl.DataFrame:
    """gpu_id -> one software caveat sentence (statuses other than `supported`), `_excluded`.

    `_excluded` is true where a statement keeps the GPU out of every pick.
    """
    if support is None or support.is_empty():
        return pl.DataFrame(
            schema={"gpu_id": pl.Utf8, "_software": pl.Utf8, "_excluded": pl.Boolean}
        )
    return (
        support.filter(pl.col("status").is_in(list(SUPPORT_PHRASES)))
        .with_columns(
            _software=pl.format(
                "software: {}{}",
                pl.col("status").replace_strict(SUPPORT_PHRASES),
                pl.when(pl.col("since").is_not_null())
                .then(pl.format(" (since {})", pl.col("since")))
                .otherwise(pl.lit("")),
            )
        )
        .group_by("gpu_id")
        .agg(
            pl.col("_software").sort().str.join("; "),
            _excluded=pl.col("status").is_in(list(EXCLUDED_STATUSES)).any(),
        )
    )


def _caveat() -> pl.Expr:
    """The sentence a verdict cell and the GPU page show: what the number rests on."""
    sources = pl.format(
        "{} result(s) from {} independent source(s) ({})",
        pl.col("n_results"),
        pl.col("n_sources"),
        pl.when(pl.col("stacks") == "").then(pl.lit("stack unstated")).otherwise("stacks"),
    )
    arch = pl.format("{} {}", pl.col("vendor"), pl.col("architecture"))
    unvalidated_arch = pl.format(
        "{}: no {} GPU is measured under a mainstream stack (PyTorch, TensorRT, vLLM, ...), "
        "so its estimate has the wider interval of its class and is never a pick",
        pl.lit(NOT_VALIDATED_UNDER_PYTORCH),
        arch,
    )
    based_on = pl.format(
        "estimated: {} × the {} ratio of {} measured GPUs; its own evidence: {} source(s) ({})",
        pl.col("_base_workload"),
        pl.col("vendor"),
        pl.col("_family").fill_null(0),
        pl.col("n_sources"),
        pl.when(pl.col("stacks") == "").then(pl.lit("none")).otherwise("stacks"),
    )
    main = (
        pl.when(pl.col("basis") == "measured")
        .then(pl.format("measured: {}", sources))
        .when(~pl.col("_arch_any").fill_null(False))
        .then(unvalidated_arch)
        .when((pl.col("basis") == "validated_estimate") & (pl.col("evidence") == "bridged"))
        .then(based_on)
        .when(pl.col("basis") == "validated_estimate")
        .then(
            pl.format(
                "estimated from specs, no result of its own; {} GPUs are measured, so the "
                "estimator's leave-one-GPU-out error applies",
                arch,
            )
        )
        .when(pl.col("evidence") == "dettmers_rule")
        .then(pl.lit("not validated: too few measured ratios for a bridge (Dettmers' rule)"))
        .when(pl.col("evidence") == "bridged")
        .then(
            pl.format(
                "not validated: bridged from {}, whose value is not validated or whose {} "
                "ratio rests on fewer than {} measured GPUs",
                pl.col("_base_workload"),
                pl.col("vendor"),
                pl.lit(MIN_FAMILY_GPUS),
            )
        )
        .otherwise(pl.format("not validated: no {} GPU is measured in 16-bit training", arch))
    )
    return (
        pl.when(pl.col("_software").is_not_null())
        .then(pl.format("{}; {}", main, pl.col("_software")))
        .otherwise(main)
    )


def evidence_basis(
    relative: pl.DataFrame,
    placing: pl.DataFrame,
    gpus: pl.DataFrame,
    run_date: dt.date,
    support: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """One row per relative_performance row: its basis, stacks, sources and caveat.

    `relative` is the run's relative_performance; `placing` the rows that placed GPUs
    (`placing_provenance`); `gpus` the catalog (gpu_id, vendor, architecture); `support`
    the software statements per GPU (`sources.specs.software_support.support_per_gpu`).
    """
    families = _measured_families(relative, gpus)
    rows = (
        relative.select("gpu_id", "workload", "evidence", "n_results")
        .join(gpus.select("gpu_id", "vendor", "architecture"), on="gpu_id", how="left")
        .join(families["arch_training"], on=["vendor", "architecture"], how="left")
        .join(families["arch_any"], on=["vendor", "architecture"], how="left")
        .join(families["vendor_workload"], on=["vendor", "workload"], how="left")
        .with_columns(
            pl.col("_arch_training").fill_null(False),
            _base_workload=pl.col("workload").replace_strict(
                {w: _WORDS[b] for w, b in BASE_WORKLOAD.items()}, default=None, return_dtype=pl.Utf8
            ),
        )
    )
    rows = _with_sources(_basis(rows), placing)
    rows = rows.join(_support_notes(support), on="gpu_id", how="left")
    return (
        rows.with_columns(
            run_date=pl.lit(run_date),
            eligible=(pl.col("basis") != "not_validated") & ~pl.col("_excluded").fill_null(False),
            n_results=pl.col("n_results").cast(pl.Int32),
            n_sources=pl.col("n_sources").cast(pl.Int32),
            caveat=_caveat(),
        )
        .select(COLUMNS)
        .sort("workload", "gpu_id")
    )


def eligible_pairs(basis: pl.DataFrame) -> pl.DataFrame:
    """gpu_id, workload of every eligible GPU x workload (what may be picked)."""
    return basis.filter(pl.col("eligible")).select("gpu_id", "workload")


def keep_eligible(frame: pl.DataFrame, eligible: pl.DataFrame | None) -> pl.DataFrame:
    """The rows of `frame` (gpu_id, workload, ...) whose GPU x workload is eligible."""
    if eligible is None:
        return frame
    return frame.join(eligible.select("gpu_id", "workload"), on=["gpu_id", "workload"])
