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

Each computed flag is one `FlagRule` in `RULES` (its name, when it applies, its reason);
`MEASURES` add the columns the rules read. Adding a flag is adding a rule.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

SUPER_LINEAR_TOLERANCE = 1.05
OUTLIER_FACTOR = 3.0
PARSE_FLAGS = ("missing", "no_batch_size")
TABLE = ["source", "software_era", "_table", "task", "precision"]
# Sources whose citation names one system's result, not a table: their table is the round.
ROUND_IS_TABLE = ("mlperf",)
# The runs of one table, GPU and model compared for scaling.
SCALING_GROUP = TABLE + ["gpu_id", "model"]


@dataclass(frozen=True)
class Limits:
    """How far a figure may stray before it is flagged."""

    super_linear_tolerance: float = SUPER_LINEAR_TOLERANCE
    outlier_factor: float = OUTLIER_FACTOR


@dataclass(frozen=True)
class FlagRule:
    """One computed flag: the rows it applies to and the detail that says why.

    Both are expressions over the rows with the `MEASURES` columns; a null `applies` is
    False. The detail starts with "[name]" so a rerun can tell it from the parse-time ones.
    """

    name: str
    applies: Callable[[Limits], pl.Expr]
    reason: Callable[[Limits], pl.Expr]


def flag_benchmarks(
    rows: pl.DataFrame,
    super_linear_tolerance: float = SUPER_LINEAR_TOLERANCE,
    outlier_factor: float = OUTLIER_FACTOR,
) -> pl.DataFrame:
    """`rows` with `flags` (sorted, comma-separated; '' when clean) and `flag_detail`.

    Parse-time flags already in `flags` (missing, no_batch_size) are kept with their detail;
    every other flag is recomputed from the rows, so running this twice changes nothing.
    The computed flags are `RULES`, their details listed in the rules' order.
    """
    limits = Limits(super_linear_tolerance, outlier_factor)
    rows = _with_flag_columns(rows)
    frame = _prepare(rows)
    for measure in MEASURES:
        frame = measure(frame, limits)
    frame = frame.with_columns(
        rule.applies(limits).fill_null(False).alias(_applies(rule)) for rule in RULES
    )
    empty = pl.lit([], dtype=pl.List(pl.Utf8))
    flags = pl.concat_list(
        pl.col("_parse_flags"),
        *(pl.when(_applies(r)).then(pl.lit([r.name])).otherwise(empty) for r in RULES),
    )
    details = pl.concat_list(
        pl.col("_parse_detail"),
        *(
            pl.when(_applies(r)).then(pl.concat_list(r.reason(limits))).otherwise(empty)
            for r in RULES
        ),
    )
    out = frame.with_columns(
        flags=flags.list.eval(pl.element().filter(pl.element() != ""))
        .list.unique()
        .list.sort()
        .list.join(","),
        flag_detail=details.list.eval(pl.element().filter(pl.element() != "")).list.join("; "),
    )
    return out.sort("_row").select(rows.columns)


def _applies(rule: FlagRule) -> str:
    return f"_is_{rule.name}"


def _with_flag_columns(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with empty `flags` and `flag_detail` when they have none yet."""
    if "flags" not in rows.columns:
        rows = rows.with_columns(flags=pl.lit("", dtype=pl.Utf8))
    if "flag_detail" not in rows.columns:
        rows = rows.with_columns(flag_detail=pl.lit("", dtype=pl.Utf8))
    return rows


def _prepare(rows: pl.DataFrame) -> pl.DataFrame:
    """The rows numbered, with their table, parse-time flags and detail, per-GPU throughput."""
    keep = (
        pl.col("flags")
        .fill_null("")
        .str.split(",")
        .list.eval(pl.element().filter(pl.element().is_in(PARSE_FLAGS)))
    )
    # Computed flags' details start with "[name]"; they are dropped and recomputed.
    detail_keep = (
        pl.col("flag_detail")
        .fill_null("")
        .str.split("; ")
        .list.eval(pl.element().filter(~pl.element().str.starts_with("[")))
    )
    return rows.with_row_index("_row").with_columns(
        _table=pl.when(pl.col("source").is_in(ROUND_IS_TABLE))
        .then(pl.lit(""))
        .otherwise(pl.col("citation")),
        _parse_flags=keep,
        _parse_detail=detail_keep,
        _valid=pl.col("throughput").is_not_null() & (pl.col("throughput") > 0),
        _per_gpu=pl.col("throughput") / pl.col("num_gpus"),
    )


# --- outlier: position of the GPU on this model vs its position on its other models ------


def _outlier_scores(frame: pl.DataFrame, limits: Limits) -> pl.DataFrame:
    """`_dev`: log distance of the GPU from its usual level, with `_n_gpus`, `_n_models`."""
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
    return frame.join(scored, on="_row", how="left")


def _outlier(limits: Limits) -> pl.Expr:
    # >= 3 GPUs and >= 3 models, so a GPU that is simply fast is never an outlier.
    return (
        (pl.col("_n_gpus") >= 3)
        & (pl.col("_n_models") >= 3)
        & (pl.col("_dev").abs() > math.log(limits.outlier_factor))
    )


def _outlier_reason(limits: Limits) -> pl.Expr:
    return pl.format(
        "[outlier] {}x off this GPU's level on its other models in the table",
        pl.col("_dev").exp().round(2),
    )


# --- scaling: n-GPU runs against the smallest run of the same table, GPU and model --------


def _scaling_reference(frame: pl.DataFrame, limits: Limits) -> pl.DataFrame:
    """The smallest run's GPU count, per-GPU throughput and batch sizes, joined to each row.

    At the same per-GPU batch size when the smallest run has one (batch sweeps publish
    several). An outlier never serves as the reference (its siblings would look
    super-linear).
    """
    group = SCALING_GROUP
    valid = frame.filter(pl.col("_valid") & ~_outlier(limits).fill_null(False))
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
    return frame.join(base, on=group, how="left", nulls_equal=True).join(
        same_bs, on=group + ["batch_size_per_gpu"], how="left", nulls_equal=True
    )


def _scaling_ratio() -> pl.Expr:
    return pl.col("_per_gpu") / pl.coalesce("_same_bs_per_gpu", "_base_per_gpu")


def _super_linear(limits: Limits) -> pl.Expr:
    # A run at a bigger per-GPU batch than every smallest run may legitimately do more per
    # GPU (Dettmers: ~13.6 % per doubling), so it is flagged batch_changed, not super_linear.
    bigger_batch = pl.col("_same_bs_per_gpu").is_null() & (
        pl.col("batch_size_per_gpu") > pl.col("_base_bs").list.min()
    )
    return (
        pl.col("_valid")
        & (pl.col("num_gpus") > pl.col("_base_n"))
        & (_scaling_ratio() > limits.super_linear_tolerance)
        & ~bigger_batch.fill_null(False)
    )


def _super_linear_reason(limits: Limits) -> pl.Expr:
    return pl.format(
        "[super_linear] {} GPUs give {}x the per-GPU throughput of the {}-GPU run",
        pl.col("num_gpus"),
        _scaling_ratio().round(2),
        pl.col("_base_n"),
    )


def _batch_changed(limits: Limits) -> pl.Expr:
    return (
        (pl.col("num_gpus") > pl.col("_base_n"))
        & pl.col("batch_size_per_gpu").is_not_null()
        & (pl.col("_base_bs").list.len() > 0)
        & pl.col("_same_bs_per_gpu").is_null()
    )


def _batch_changed_reason(limits: Limits) -> pl.Expr:
    return pl.format(
        "[batch_changed] batch {}/GPU vs {}/GPU on {} GPU(s)",
        pl.col("batch_size_per_gpu"),
        pl.col("_base_bs").cast(pl.List(pl.Utf8)).list.join(" or "),
        pl.col("_base_n"),
    )


# The columns the rules read, added in order (the scaling reference leaves outliers out).
MEASURES: tuple[Callable[[pl.DataFrame, Limits], pl.DataFrame], ...] = (
    _outlier_scores,
    _scaling_reference,
)
# The computed flags; a row's details follow this order.
RULES = (
    FlagRule("super_linear", _super_linear, _super_linear_reason),
    FlagRule("batch_changed", _batch_changed, _batch_changed_reason),
    FlagRule("outlier", _outlier, _outlier_reason),
)


def flag_counts(rows: pl.DataFrame) -> dict[str, int]:
    """Rows per flag name (a row with two flags counts under both)."""
    names = rows.select(pl.col("flags").fill_null("").str.split(",").explode().alias("flag"))
    counts = names.filter(pl.col("flag") != "").group_by("flag").len().sort("flag")
    return dict(counts.iter_rows())
