"""Quality flags over a whole set of benchmark rows (recomputed on every load).

Suspect figures are kept and flagged, never dropped; the model ignores flagged rows. Flags:

- `missing`: the source published no figure (Lambda's 0, an MLPerf run that did not
  converge). Set by the adapters; throughput is NULL.
- `no_batch_size`: the per-GPU batch size is unknown (MLPerf Inference, Lambda cells with
  no or an indivisible global batch). Set by the adapters.
- `super_linear`: an n-GPU run whose per-GPU throughput exceeds the smallest run of the same
  table, GPU and model (at the same per-GPU batch size when there is one) by more than
  `SUPER_LINEAR_TOLERANCE`: n GPUs doing more than n times the work, a measurement or
  configuration error (e.g. Lambda's BERT/SQuAD rows). Not set when the n-GPU run used a
  bigger per-GPU batch than every smallest run (that is `batch_changed`).
- `batch_changed`: an n-GPU run measured at a per-GPU batch size the smallest run of the
  same table, GPU and model did not use (its scaling is confounded by the batch size).
- `outlier`: a figure far outside the same GPU's other results in the same table: relative
  to the other GPUs, the GPU sits more than `OUTLIER_FACTOR` times higher or lower on this
  model than on its other models (its median). Needs >= 3 models for the GPU and >= 3 GPUs
  for the model, so a GPU that is simply fast is never an outlier.

A "table" is one source x era x citation x task x precision: the figures measured the
same way. MLPerf cites each system's result separately, so there the table is the round
(source x era x task x precision): systems of one round are compared with each other.
"""

import math

import polars as pl

SUPER_LINEAR_TOLERANCE = 1.05
OUTLIER_FACTOR = 3.0
PARSE_FLAGS = ("missing", "no_batch_size")
TABLE = ["source", "software_era", "_table", "task", "precision"]
# Sources whose citation names one system's result, not a table: their table is the round.
ROUND_IS_TABLE = ("mlperf",)


def _nonempty(expr: pl.Expr) -> pl.Expr:
    return pl.when(expr.is_not_null() & (expr != "")).then(expr)


def flag_benchmarks(
    rows: pl.DataFrame,
    super_linear_tolerance: float = SUPER_LINEAR_TOLERANCE,
    outlier_factor: float = OUTLIER_FACTOR,
) -> pl.DataFrame:
    """`rows` with `flags` (sorted, comma-separated; '' when clean) and `flag_detail`.

    Parse-time flags already in `flags` (missing, no_batch_size) are kept with their detail;
    every other flag is recomputed from the rows, so running this twice changes nothing.
    """
    if "flags" not in rows.columns:
        rows = rows.with_columns(flags=pl.lit("", dtype=pl.Utf8))
    if "flag_detail" not in rows.columns:
        rows = rows.with_columns(flag_detail=pl.lit("", dtype=pl.Utf8))
    keep = (
        pl.col("flags")
        .fill_null("")
        .str.split(",")
        .list.eval(pl.element().filter(pl.element().is_in(PARSE_FLAGS)))
    )
    detail_keep = (
        pl.col("flag_detail")
        .fill_null("")
        .str.split("; ")
        .list.eval(pl.element().filter(~pl.element().str.starts_with("[")))
    )
    frame = rows.with_row_index("_row").with_columns(
        _table=pl.when(pl.col("source").is_in(ROUND_IS_TABLE))
        .then(pl.lit(""))
        .otherwise(pl.col("citation")),
        _parse_flags=keep,
        _parse_detail=detail_keep,
        _valid=pl.col("throughput").is_not_null() & (pl.col("throughput") > 0),
        _per_gpu=pl.col("throughput") / pl.col("num_gpus"),
    )
    # Outliers: position of the GPU on this model vs its position on its other models.
    workload = (
        pl.when(pl.col("task") == "inference")
        .then(
            pl.concat_str(
                pl.col("model"),
                pl.col("batch_size_per_gpu").cast(pl.Utf8).fill_null("?"),
                separator="@",
            )
        )
        .otherwise(pl.col("model"))
    )
    scored = (
        frame.filter("_valid")
        .with_columns(_workload=workload, _log=pl.col("throughput").log())
        .with_columns(
            _rel=pl.col("_log") - pl.col("_log").median().over(TABLE + ["num_gpus", "_workload"]),
            _n_gpus=pl.col("gpu_id").n_unique().over(TABLE + ["num_gpus", "_workload"]),
        )
        .with_columns(
            _level=pl.col("_rel").median().over(TABLE + ["num_gpus", "gpu_id"]),
            _n_models=pl.col("_workload").n_unique().over(TABLE + ["num_gpus", "gpu_id"]),
        )
        .with_columns(_dev=pl.col("_rel") - pl.col("_level"))
        .select("_row", "_dev", "_n_gpus", "_n_models")
    )
    frame = frame.join(scored, on="_row", how="left")
    frame = frame.with_columns(
        _out=(
            (pl.col("_n_gpus") >= 3)
            & (pl.col("_n_models") >= 3)
            & (pl.col("_dev").abs() > math.log(outlier_factor))
        ).fill_null(False)
    )

    # Scaling: n-GPU runs against the smallest run of the same table, GPU and model, at the
    # same per-GPU batch size when the smallest run has one (batch sweeps publish several).
    # An outlier never serves as the reference (its siblings would look super-linear).
    group = TABLE + ["gpu_id", "model"]
    valid = frame.filter(pl.col("_valid") & ~pl.col("_out"))
    smallest = valid.with_columns(_base_n=pl.col("num_gpus").min().over(group)).filter(
        pl.col("num_gpus") == pl.col("_base_n")
    )
    base = smallest.group_by(group).agg(
        pl.col("_base_n").first(),
        _base_per_gpu=pl.col("_per_gpu").median(),
        _base_bs=pl.col("batch_size_per_gpu").drop_nulls().unique().sort(),
    )
    same_bs = (
        smallest.filter(pl.col("batch_size_per_gpu").is_not_null())
        .group_by(group + ["batch_size_per_gpu"])
        .agg(_same_bs_per_gpu=pl.col("_per_gpu").median())
    )
    frame = frame.join(base, on=group, how="left", nulls_equal=True).join(
        same_bs, on=group + ["batch_size_per_gpu"], how="left", nulls_equal=True
    )
    ratio = pl.col("_per_gpu") / pl.coalesce("_same_bs_per_gpu", "_base_per_gpu")
    # A run at a bigger per-GPU batch than every smallest run may legitimately do more per
    # GPU (Dettmers: ~13.6 % per doubling), so it is flagged batch_changed, not super_linear.
    bigger_batch = pl.col("_same_bs_per_gpu").is_null() & (
        pl.col("batch_size_per_gpu") > pl.col("_base_bs").list.min()
    )
    super_linear = (
        pl.col("_valid")
        & (pl.col("num_gpus") > pl.col("_base_n"))
        & (ratio > super_linear_tolerance)
        & ~bigger_batch.fill_null(False)
    ).fill_null(False)
    batch_changed = (
        (pl.col("num_gpus") > pl.col("_base_n"))
        & pl.col("batch_size_per_gpu").is_not_null()
        & (pl.col("_base_bs").list.len() > 0)
        & pl.col("_same_bs_per_gpu").is_null()
    ).fill_null(False)

    frame = frame.with_columns(_sl=super_linear, _bc=batch_changed)
    empty = pl.lit([], dtype=pl.List(pl.Utf8))
    computed_flags = pl.concat_list(
        pl.when("_sl").then(pl.lit(["super_linear"])).otherwise(empty),
        pl.when("_bc").then(pl.lit(["batch_changed"])).otherwise(empty),
        pl.when("_out").then(pl.lit(["outlier"])).otherwise(empty),
    )
    sl_text = pl.format(
        "[super_linear] {} GPUs give {}x the per-GPU throughput of the {}-GPU run",
        pl.col("num_gpus"),
        ratio.round(2),
        pl.col("_base_n"),
    )
    bc_text = pl.format(
        "[batch_changed] batch {}/GPU vs {}/GPU on {} GPU(s)",
        pl.col("batch_size_per_gpu"),
        pl.col("_base_bs").cast(pl.List(pl.Utf8)).list.join(" or "),
        pl.col("_base_n"),
    )
    out_text = pl.format(
        "[outlier] {}x off this GPU's level on its other models in the table",
        pl.col("_dev").exp().round(2),
    )
    details = pl.concat_list(
        pl.col("_parse_detail"),
        pl.when("_sl").then(pl.concat_list(sl_text)).otherwise(empty),
        pl.when("_bc").then(pl.concat_list(bc_text)).otherwise(empty),
        pl.when("_out").then(pl.concat_list(out_text)).otherwise(empty),
    )
    out = frame.with_columns(
        flags=pl.concat_list(pl.col("_parse_flags"), computed_flags)
        .list.eval(pl.element().filter(pl.element() != ""))
        .list.unique()
        .list.sort()
        .list.join(","),
        flag_detail=details.list.eval(pl.element().filter(pl.element() != "")).list.join("; "),
    )
    return out.sort("_row").select(rows.columns)


def flag_counts(rows: pl.DataFrame) -> dict[str, int]:
    """Rows per flag name (a row with two flags counts under both)."""
    names = rows.select(pl.col("flags").fill_null("").str.split(",").explode().alias("flag"))
    counts = names.filter(pl.col("flag") != "").group_by("flag").len().sort("flag")
    return dict(counts.iter_rows())
