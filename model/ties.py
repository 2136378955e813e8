"""The tie rule: when the evidence cannot separate the best choices, say so (methodology §9a).

A verdict names one winner only when the bootstrap backs it. Per verdict group (workload x
budget or memory tier x option), with the pick = the candidate of highest point perf per
dollar:

- if the pick's P(best) is at least TIE_MAX_P_BEST (50 %), it is the winner;
- otherwise its tie group is the pick plus every other candidate whose 95 % interval
  overlaps the pick's and whose own P(best) is at least TIE_MIN_P_BEST (5 %, one replicate
  in twenty) or half the pick's, whichever is lower (so a pick at 7 % among thirty
  candidates at 3-6 % is not called a winner): the candidates the data cannot rank below
  the pick. Of those, the
  TIE_MAX_SIZE - 1 with the highest P(best) join the pick (a cell stays readable; a
  fourth is rarely above the bar), ordered by point perf per dollar (the order the tables
  show), then P(best);
- a group of one (nothing else overlaps or wins often enough) is a winner after all.

The verdict then reads "tie: A, B, C" instead of naming A. Candidates here are the
eligible ones only (model/eligibility.py), so a GPU that may not be picked is never in a
tie either.
"""

import polars as pl

TIE_MAX_P_BEST = 0.5
TIE_MIN_P_BEST = 0.05
TIE_MAX_SIZE = 3


def tie_groups(candidates: pl.DataFrame, group: list[str], key: list[str]) -> pl.DataFrame:
    """Per group with a tie: `tie_gpu_ids` and `tie_system_gpus` (comma-joined, ordered).

    `candidates` has the group columns, the candidate `key` (gpu_id, maybe system_gpus),
    `perf_per_dollar` (point), `low`, `high` (its 95 % interval) and `p_best`. Groups
    without a tie have no row.
    """
    ordered = candidates.sort(
        ["perf_per_dollar", "p_best", *key], descending=[True, True] + [False] * len(key)
    ).with_columns(_pos=pl.int_range(1, pl.len() + 1).over(group))
    pick = ordered.filter(pl.col("_pos") == 1).select(
        *group, _pick_p=pl.col("p_best"), _pick_low=pl.col("low"), _pick_high=pl.col("high")
    )
    joined = ordered.join(pick, on=group)
    overlaps = (pl.col("low") <= pl.col("_pick_high")) & (pl.col("high") >= pl.col("_pick_low"))
    others = (
        joined.filter(
            (pl.col("_pos") > 1)
            & (pl.col("_pick_p") < TIE_MAX_P_BEST)
            & overlaps.fill_null(False)
            & (pl.col("p_best") >= pl.min_horizontal(TIE_MIN_P_BEST, pl.col("_pick_p") / 2))
        )
        .sort(["p_best", "_pos"], descending=[True, False])
        .with_columns(_rank=pl.int_range(1, pl.len() + 1).over(group))
        .filter(pl.col("_rank") < TIE_MAX_SIZE)
    )
    members = pl.concat(
        [
            joined.filter((pl.col("_pos") == 1) & (pl.col("_pick_p") < TIE_MAX_P_BEST)),
            others.drop("_rank"),
        ]
    )
    system = pl.col("system_gpus").cast(pl.Utf8) if "system_gpus" in key else pl.lit("1")
    return (
        members.with_columns(_system=system)
        .sort("_pos")
        .group_by(group, maintain_order=True)
        .agg(
            _n=pl.len(),
            tie_gpu_ids=pl.col("gpu_id").str.join(", "),
            tie_system_gpus=pl.col("_system").str.join(", "),
        )
        .filter(pl.col("_n") >= 2)
        .drop("_n")
    )


def tie_label(gpu_ids: str, system_gpus: str | None = None) -> str:
    """'tie: A, 2× B, C' from a verdict's stored tie columns."""
    gpus = gpu_ids.split(", ")
    sizes = (system_gpus or "").split(", ") if system_gpus else ["1"] * len(gpus)
    return "tie: " + ", ".join(
        f"{n}× {g}" if n not in ("", "1") else g for g, n in zip(gpus, sizes, strict=False)
    )
