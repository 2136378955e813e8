"""Least-squares relative performance within connected sets of benchmark tables.

Dettmers takes the geometric mean over models of each GPU's speed relative to a reference
GPU. We fit the equivalent two-way log-linear model
    log t[gpu, table] = p[gpu] + q[table]
by weighted least squares, where a table is one (source, software era, file, model,
precision), or for MLPerf one round x benchmark x precision. With every GPU measured in
every table and equal weights this is exactly the geometric mean of ratios; with gaps it
bridges them through the GPUs two tables share, and it never compares figures across
tables (and so across software eras) directly. Each row's weight is its table's benchmark
class weight (model/benchmark_weights.py: transformer and LLM tables 1, diffusion 0.5,
CNN and RNN 0.1), so the headline values describe transformer work; without weights every
row counts 1 (the all-benchmarks value).

A GPU measured in one table only (MI300X and MI325X in MLPerf Training v5.1 Llama 2 70B
LoRA) is then placed by its same-table ratio to its *nearest anchor*, the GPU of that
table, measured in other tables too, whose figure there is closest to its own
(`place_single_table`): the fit would otherwise carry it at its ratio to the table's
constant, which the other GPUs of the table set by how they fare across every other
benchmark. GPUs that share no table with the reference's set are placed on the common
scale through their *measured* anchors only (`place_on_anchor`), keeping their measured
ratios.
"""

import numpy as np
import polars as pl

from model.benchmark_weights import with_weight
from model.debias import era_term


def _components(pairs: list[tuple[str, str]]) -> dict[str, str]:
    """Union-find over a bipartite gpu-table graph: node -> component root."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    return {node: find(node) for node in list(parent)}


def fit_log_performance(rows: pl.DataFrame, reference_gpu: str) -> pl.DataFrame:
    """Least-squares p[gpu] from rows (gpu_id, table, throughput_per_gpu[, weight]).

    Rows are weighted by `weight` where the frame has it (module docstring), else all 1.
    GPUs that share no table, directly or through other GPUs, cannot be compared: each
    connected set is fitted with its own free constant. Returns gpu_id, log_perf,
    n_results, component (an int) and main (the set holding the reference GPU, or the
    largest set when the reference was not measured), log_se and df (`_contrast_se`) and
    resid_var (the weighted residual variance: the variance of a row of weight 1; a row of
    weight w has resid_var / w). Within a set, differences of log_perf are the measured
    log ratios.
    """
    schema = {
        "gpu_id": pl.Utf8,
        "log_perf": pl.Float64,
        "n_results": pl.Int64,
        "component": pl.Int64,
        "main": pl.Boolean,
        "log_se": pl.Float64,
        "df": pl.Int64,
        "resid_var": pl.Float64,
    }
    if rows.is_empty():
        return pl.DataFrame(schema=schema)
    # A fixed row order: least squares over permuted rows differs in the last bits, and
    # a rerun on the same inputs must store the same figures.
    rows = rows.sort("table", "gpu_id", "throughput_per_gpu")
    weights = rows["weight"].to_numpy() if "weight" in rows.columns else np.ones(rows.height)
    pairs = list(zip(rows["gpu_id"], ("table:" + rows["table"]), strict=True))
    component = _components(pairs)
    gpus = sorted(rows["gpu_id"].unique().to_list())
    roots = sorted({component[g] for g in gpus})
    gpu_component = {g: roots.index(component[g]) for g in gpus}
    sizes = [sum(1 for g in gpus if gpu_component[g] == k) for k in range(len(roots))]
    main = (
        gpu_component[reference_gpu]
        if reference_gpu in gpu_component
        else max(range(len(roots)), key=lambda k: (sizes[k], -k))
    )

    tables = sorted(rows["table"].unique().to_list())
    g_index = {g: i for i, g in enumerate(gpus)}
    t_index = {t: len(gpus) + i for i, t in enumerate(tables)}
    design = np.zeros((rows.height + len(roots), len(gpus) + len(tables)))
    target = np.zeros(rows.height + len(roots))
    for i, (g, t, y) in enumerate(
        zip(rows["gpu_id"], rows["table"], rows["throughput_per_gpu"], strict=True)
    ):
        design[i, g_index[g]] = 1.0
        design[i, t_index[t]] = 1.0
        target[i] = np.log(y)
    # Pin one GPU per connected set to 0: each set is otherwise free by one constant.
    for k in range(len(roots)):
        first = next(g for g in gpus if gpu_component[g] == k)
        design[rows.height + k, g_index[first]] = 1.0
    # Weighted least squares: each data row scaled by sqrt(weight); the pin rows stay 1
    # (they only fix each set's free constant, which no weight changes).
    scale = np.concatenate([np.sqrt(weights), np.ones(len(roots))])
    design, target = design * scale[:, None], target * scale
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    log_se, df, resid_var = _contrast_se(design, target, solution, rows.height, gpus, gpu_component)
    counts = rows.group_by("gpu_id").len()
    ref = reference_gpu if reference_gpu in gpu_component else None
    return (
        pl.DataFrame(
            {
                "gpu_id": gpus,
                "log_perf": solution[: len(gpus)],
                "component": [gpu_component[g] for g in gpus],
                "main": [gpu_component[g] == main for g in gpus],
                "log_se": [log_se(g, ref) for g in gpus],
                "df": [df] * len(gpus),
                "resid_var": [resid_var] * len(gpus),
            }
        )
        .join(counts.rename({"len": "n_results"}), on="gpu_id")
        .with_columns(
            pl.col("n_results").cast(pl.Int64),
            pl.col("component").cast(pl.Int64),
            pl.col("df").cast(pl.Int64),
        )
        .select(list(schema))
    )


def _contrast_se(design, target, solution, n_rows, gpus, gpu_component):
    """Standard errors of log-performance contrasts from the least-squares covariance.

    `design` and `target` are already scaled by sqrt(weight) per row, so this is the
    weighted least-squares covariance Cov = s^2 (A'WA)^-1, with A the design including the
    pin rows (which fix each set's free constant; a contrast within a set does not depend on
    how it is pinned) and s^2 = sum(w r^2) / df the weighted residual variance of the data
    rows: the variance of a weight-1 row. Multiplying every weight by one constant changes
    neither. A GPU's contrast is against the reference when they share a set, else against
    its set's mean. Returns (se(gpu, reference), df, s^2); se and s^2 are None without
    residual degrees of freedom.
    """
    rank = np.linalg.matrix_rank(design[:n_rows]) if n_rows else 0
    df = n_rows - rank
    if df <= 0:
        return (lambda g, ref: 0.0 if g == ref else None), df, None
    resid = target[:n_rows] - design[:n_rows] @ solution
    resid_var = float(resid @ resid) / df
    cov = resid_var * np.linalg.pinv(design.T @ design)
    index = {g: i for i, g in enumerate(gpus)}

    def se(gpu: str, ref: str | None) -> float:
        c = np.zeros(design.shape[1])
        c[index[gpu]] = 1.0
        if ref is not None and gpu_component[ref] == gpu_component[gpu]:
            c[index[ref]] -= 1.0
        else:
            members = [index[g] for g in gpus if gpu_component[g] == gpu_component[gpu]]
            c[members] -= 1.0 / len(members)
        return float(np.sqrt(max(c @ cov @ c, 0.0)))

    return se, df, resid_var


def place_on_anchor(measured: pl.DataFrame, anchor: pl.DataFrame) -> pl.DataFrame:
    """Every catalog GPU's log performance on one scale.

    `anchor` (gpu_id, anchor_log) is a prior for every GPU: the spec estimate for
    training, the training value for inference. Each connected set of measured GPUs is
    shifted by the median of (measured - anchor) over its GPUs, which keeps its measured
    ratios exact and puts sets that share no table on the anchor's scale. Unmeasured GPUs
    take the anchor. Also returns `main`, `log_se` and `set_size` (the GPUs in its set) of
    measured GPUs, for the intervals.
    """
    placed = measured.join(anchor, on="gpu_id")
    shifts = placed.group_by("component").agg(
        shift=(pl.col("log_perf") - pl.col("anchor_log")).median(), set_size=pl.len()
    )
    extra = [c for c in ("main", "log_se") if c in measured.columns]
    placed = placed.join(shifts, on="component").select(
        "gpu_id", "n_results", *extra, "set_size", log_perf=pl.col("log_perf") - pl.col("shift")
    )
    return anchor.join(placed, on="gpu_id", how="left").with_columns(
        log_perf=pl.coalesce("log_perf", "anchor_log")
    )


def workload_rows(
    debiased: pl.DataFrame, workload: str, weights: dict[str, float] | None = None
) -> pl.DataFrame:
    """gpu_id, throughput_per_gpu, table and weight of one workload's debiased figures.

    The table is the debiasing's era term (source, era, file, model, precision; an
    MLPerf round x benchmark x precision, whose citations name single systems). The weight
    is the table's benchmark-class weight (`weights`, model/benchmark_weights.py), 1
    without weights.
    """
    table = pl.col("era_term") if "era_term" in debiased.columns else era_term()
    rows = with_weight(debiased.filter(pl.col("workload") == workload), weights)
    return rows.select("gpu_id", "throughput_per_gpu", "weight", table=table)


def measured_workload(
    debiased: pl.DataFrame,
    workload: str,
    reference: str,
    weights: dict[str, float] | None = None,
) -> pl.DataFrame:
    """`fit_log_performance` of one workload's debiased figures, `place_single_table` after."""
    rows = workload_rows(debiased, workload, weights)
    return place_single_table(rows, fit_log_performance(rows, reference), reference)


def _cells(rows: pl.DataFrame) -> pl.DataFrame:
    """Per GPU x shared table: the mean log figure, its row count and the GPU's table count.

    Only tables that hold at least two GPUs count: a table measuring one GPU alone (the
    RTX 4090 is the only GPU of the MLPerf Inference v5.1 ResNet-50 and 3D U-Net int8
    tables) carries no ratio, its constant absorbs the figure, and it must not make a GPU
    measured against others in one table only look like a GPU placed by several.
    """
    return (
        rows.group_by("gpu_id", "table")
        .agg(
            cell_log=pl.col("throughput_per_gpu").log().mean(),
            cell_rows=pl.len(),
            cell_weight=pl.col("weight").first() if "weight" in rows.columns else pl.lit(1.0),
        )
        .filter(pl.len().over("table") > 1)
        .with_columns(n_tables=pl.len().over("gpu_id"))
        .sort("table", "gpu_id")
    )


def nearest_anchors(rows: pl.DataFrame, reference: str) -> pl.DataFrame:
    """Each single-table GPU's nearest anchor in its table (module docstring).

    A single-table GPU shares one table only with other GPUs (tables measuring it alone do
    not count, `_cells`; the reference never counts: it defines the scale). Its anchors
    are the GPUs of that table measured in other shared tables too; the nearest is the one
    whose mean log figure there is closest to its own (ties: more rows, then the name).
    Returns gpu_id, table, anchor, log_ratio (GPU over anchor in that table), cell_rows,
    anchor_rows and table_weight; a single-table GPU without an anchor is absent.
    """
    cells = _cells(rows)
    single = cells.filter((pl.col("n_tables") == 1) & (pl.col("gpu_id") != reference))
    anchors = cells.filter(pl.col("n_tables") > 1).select(
        "table", anchor="gpu_id", anchor_log="cell_log", anchor_rows="cell_rows"
    )
    return (
        single.join(anchors, on="table")
        .with_columns(log_ratio=pl.col("cell_log") - pl.col("anchor_log"))
        .sort(
            pl.col("log_ratio").abs(),
            pl.col("anchor_rows"),
            "anchor",
            descending=[False, True, False],
        )
        .group_by("gpu_id", maintain_order=True)
        .first()
        .select(
            "gpu_id",
            "table",
            "anchor",
            "log_ratio",
            "cell_rows",
            "anchor_rows",
            table_weight="cell_weight",
        )
        .sort("gpu_id")
    )


def place_single_table(rows: pl.DataFrame, fitted: pl.DataFrame, reference: str) -> pl.DataFrame:
    """`fitted` with each single-table GPU at its nearest anchor's value x their ratio.

    log_perf = the anchor's log_perf + the same-table log ratio (`nearest_anchors`). Its
    log_se adds the anchor's (a contrast to the reference) and the fit's residual variance
    of a row of the table's weight (resid_var / weight) in quadrature: one table's figure
    departs from a GPU's value across tables by about one row's residual, which the fit
    measures, and a CNN table says less about transformer speed. Adds `placed_by` (the
    anchor, its table and ratio; null for GPUs the fit places) for the interval text.
    """
    out = fitted.with_columns(placed_by=pl.lit(None, dtype=pl.Utf8))
    if fitted.is_empty():
        return out
    near = nearest_anchors(rows, reference)
    if near.is_empty():
        return out
    anchor_fit = fitted.select(
        anchor="gpu_id", anchor_perf="log_perf", anchor_se="log_se", anchor_comp="component"
    )
    near = near.join(anchor_fit, on="anchor").join(
        fitted.select("gpu_id", "component"), on="gpu_id"
    )
    # Same set by construction (they share the table); kept as a guard.
    near = near.filter(pl.col("component") == pl.col("anchor_comp"))
    resid_var = pl.col("resid_var")
    placed = near.join(fitted.select("gpu_id", "resid_var"), on="gpu_id").select(
        "gpu_id",
        new_perf=pl.col("anchor_perf") + pl.col("log_ratio"),
        new_se=(pl.col("anchor_se") ** 2 + resid_var / pl.col("table_weight")).sqrt(),
        placed_by=pl.format(
            "placed by its ratio to {} in {} ({}; {} and {} rows)",
            "anchor",
            "table",
            pl.col("log_ratio").exp().round(3),
            "cell_rows",
            "anchor_rows",
        ),
    )
    return (
        out.drop("placed_by")
        .join(placed, on="gpu_id", how="left")
        .with_columns(
            log_perf=pl.coalesce("new_perf", "log_perf"),
            log_se=pl.when(pl.col("placed_by").is_not_null())
            .then(pl.col("new_se"))
            .otherwise("log_se"),
        )
        .drop("new_perf", "new_se")
    )
