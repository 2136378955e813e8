"""Least-squares relative performance within connected sets of benchmark tables.

Dettmers takes the geometric mean over models of each GPU's speed relative to a reference
GPU. We fit the equivalent two-way log-linear model
    log t[gpu, table] = p[gpu] + q[table]
by least squares, where a table is one (source, software era, file, model, precision), or
for MLPerf one round x benchmark x precision. With every GPU measured in every table this
is exactly the geometric mean of ratios; with gaps it bridges them through the GPUs two
tables share, and it never compares figures across tables (and so across software eras)
directly. GPUs that share no table with the reference's set are placed on the common
scale through their *measured* anchors only (`place_on_anchor`), keeping their measured
ratios.
"""

import numpy as np
import polars as pl

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
    """Least-squares p[gpu] from rows (gpu_id, table, throughput_per_gpu).

    GPUs that share no table, directly or through other GPUs, cannot be compared: each
    connected set is fitted with its own free constant. Returns gpu_id, log_perf,
    n_results, component (an int) and main (the set holding the reference GPU, or the
    largest set when the reference was not measured). Within a set, differences of
    log_perf are the measured log ratios.
    """
    schema = {
        "gpu_id": pl.Utf8,
        "log_perf": pl.Float64,
        "n_results": pl.Int64,
        "component": pl.Int64,
        "main": pl.Boolean,
        "log_se": pl.Float64,
        "df": pl.Int64,
    }
    if rows.is_empty():
        return pl.DataFrame(schema=schema)
    # A fixed row order: least squares over permuted rows differs in the last bits, and
    # a rerun on the same inputs must store the same figures.
    rows = rows.sort("table", "gpu_id", "throughput_per_gpu")
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
    solution, *_ = np.linalg.lstsq(design, target, rcond=None)
    log_se, df = _contrast_se(design, target, solution, rows.height, gpus, gpu_component)
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

    Cov = s^2 (A'A)^-1 with A the design including the pin rows (which fix each set's free
    constant; a contrast within a set does not depend on how it is pinned). s^2 is the
    residual variance of the data rows. A GPU's contrast is against the reference when they
    share a set, else against its set's mean. Returns (se(gpu, reference), df); se is None
    without residual degrees of freedom.
    """
    rank = np.linalg.matrix_rank(design[:n_rows]) if n_rows else 0
    df = n_rows - rank
    if df <= 0:
        return (lambda g, ref: 0.0 if g == ref else None), df
    resid = target[:n_rows] - design[:n_rows] @ solution
    cov = float(resid @ resid) / df * np.linalg.pinv(design.T @ design)
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

    return se, df


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


def workload_rows(debiased: pl.DataFrame, workload: str) -> pl.DataFrame:
    """gpu_id, throughput_per_gpu and table of one workload's debiased figures.

    The table is the debiasing's era term (source, era, file, model, precision; an
    MLPerf round x benchmark x precision, whose citations name single systems).
    """
    table = pl.col("era_term") if "era_term" in debiased.columns else era_term()
    return debiased.filter(pl.col("workload") == workload).select(
        "gpu_id", "throughput_per_gpu", table=table
    )


def measured_workload(debiased: pl.DataFrame, workload: str, reference: str) -> pl.DataFrame:
    """`fit_log_performance` of one workload's debiased figures."""
    return fit_log_performance(workload_rows(debiased, workload), reference)
