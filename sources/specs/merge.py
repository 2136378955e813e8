"""Merge spec candidates from several sources into one value per GPU x field.

Rules:
- The source earliest in `PRECEDENCE` wins (the curated sheet first).
- A third-party source fills a field only when the field is `fillable` (same definition
  as ours) and the sheet does not mark it `not_published`.
- Every other candidate is compared with the chosen value; a relative difference (days for
  dates) beyond the field's tolerance is a conflict. A third-party figure for a field the
  sheet marks not published is listed too (chosen_value NULL, the reason in `note`).
"""

import datetime as dt
from dataclasses import dataclass

import polars as pl

from sources.specs.fields import CURATED, FIELDS, PRECEDENCE, SpecField

BASE_COLUMNS = (
    "gpu_id",
    "name",
    "vendor",
    "architecture",
    "form_factor",
    "source",
    "source_url",
    "devices",
)
KEY = ["gpu_id", "field"]


@dataclass(frozen=True)
class Merged:
    """The merged catalog, every candidate with its citation, and the disagreements."""

    gpus: pl.DataFrame  # the sheet's columns, chosen values, `<field>_source`, as_of
    sources: pl.DataFrame  # gpu_spec_sources: one row per GPU x field x source
    conflicts: pl.DataFrame  # spec_conflicts

    @property
    def filled(self) -> pl.DataFrame:
        """Values taken from a third-party source because the sheet left them empty."""
        return self.sources.filter(pl.col("chosen") & (pl.col("source") != CURATED))


def _value_text(num: str, date: str) -> pl.Expr:
    """A value as text: numbers without a trailing ".0", dates as ISO."""
    number = pl.col(num).round(4).cast(pl.Utf8).str.replace(r"\.0$", "")
    return pl.coalesce(number, pl.col(date).cast(pl.Utf8))


def merge(
    sheet: pl.DataFrame,
    candidates: pl.DataFrame,
    withheld: pl.DataFrame,
    as_of: dt.date,
    precedence: tuple[str, ...] = PRECEDENCE,
    fields: tuple[SpecField, ...] = FIELDS,
) -> Merged:
    """Pick, record and cross-check; see the module docstring for the rules.

    `sheet` has the curated columns (at least BASE_COLUMNS), `candidates` the
    CANDIDATE_SCHEMA rows of every source, `withheld` gpu_id/field/citation of the fields
    the sheet leaves empty on purpose.
    """
    unknown = set(candidates["source"].unique().to_list()) - set(precedence)
    if unknown:
        raise ValueError(f"candidates from sources without a precedence: {sorted(unknown)}")
    held = withheld.select(*KEY, note="citation")
    cand = _ranked_candidates(candidates, held, precedence, fields)
    chosen = _choose(cand)
    picks = chosen.select(
        *KEY,
        chosen_source="source",
        chosen_num="value_num",
        chosen_date="value_date",
        chosen_value="value",
    )
    return Merged(
        gpus=_gpus(sheet, chosen, fields, as_of),
        sources=_sources(cand, picks, held, sheet, precedence, as_of),
        conflicts=_conflicts(cand, picks, as_of),
    )


def _ranked_candidates(
    candidates: pl.DataFrame,
    held: pl.DataFrame,
    precedence: tuple[str, ...],
    fields: tuple[SpecField, ...],
) -> pl.DataFrame:
    """Every candidate with its field's spec, its source's rank and its value as text.

    The field's kind, tolerance and fillability come from `fields`, the rank from
    `precedence`, and `note` is the sheet's citation when it marks the field not published.
    """
    spec = pl.DataFrame(
        {
            "field": [f.name for f in fields],
            "kind": [f.kind for f in fields],
            "tolerance": [float(f.tolerance) for f in fields],
            "fillable": [f.fillable for f in fields],
        }
    )
    rank = pl.DataFrame({"source": list(precedence), "rank": list(range(len(precedence)))})
    return (
        candidates.join(spec, on="field")
        .join(rank, on="source")
        .join(held, on=KEY, how="left")
        .with_columns(value=_value_text("value_num", "value_date"))
    )


def _choose(cand: pl.DataFrame) -> pl.DataFrame:
    """Per GPU x field, the eligible candidate of the source earliest in the precedence."""
    eligible = cand.filter(
        (pl.col("source") == CURATED) | (pl.col("fillable") & pl.col("note").is_null())
    )
    return eligible.sort([*KEY, "rank"]).unique(KEY, keep="first", maintain_order=True)


def _gpus(
    sheet: pl.DataFrame, chosen: pl.DataFrame, fields: tuple[SpecField, ...], as_of: dt.date
) -> pl.DataFrame:
    """The catalog: the sheet's BASE_COLUMNS, each field's value and `<field>_source`."""
    if "devices" not in sheet.columns:
        sheet = sheet.with_columns(devices=pl.lit(1, dtype=pl.Int64))  # one GPU per board
    gpus = sheet.select(BASE_COLUMNS)
    for field in fields:
        value_column = "value_date" if field.kind == "date" else "value_num"
        picked = chosen.filter(pl.col("field") == field.name).select(
            "gpu_id",
            pl.col(value_column).alias(field.name),
            pl.col("source").alias(f"{field.name}_source"),
        )
        gpus = gpus.join(picked, on="gpu_id", how="left")
    return gpus.with_columns(
        # What one device (as software sees it) holds: an MI250 is two 64 GB GPUs.
        memory_per_device_gb=pl.col("memory_gb") / pl.col("devices"),
        as_of=pl.lit(as_of),
    )


def _sources(
    cand: pl.DataFrame,
    picks: pl.DataFrame,
    held: pl.DataFrame,
    sheet: pl.DataFrame,
    precedence: tuple[str, ...],
    as_of: dt.date,
) -> pl.DataFrame:
    """gpu_spec_sources: every candidate, marked `chosen` or not, and the withheld fields."""
    return (
        pl.concat(
            [
                cand.join(picks, on=KEY, how="left").with_columns(
                    chosen=(pl.col("source") == pl.col("chosen_source")).fill_null(False)
                ),
                # A field left empty on purpose: the sheet's "no value" is the choice.
                held.join(sheet.select("gpu_id", "name"), on="gpu_id").select(
                    *KEY,
                    source=pl.lit(CURATED),
                    source_name="name",
                    citation="note",
                    chosen=pl.lit(True),
                    rank=pl.lit(precedence.index(CURATED)),
                ),
            ],
            how="diagonal_relaxed",
        )
        .sort([*KEY, "rank"])
        .select(
            *KEY,
            "source",
            "source_name",
            "value",
            "value_num",
            "value_date",
            "chosen",
            "citation",
            "source_url",
            "source_as_of",
            as_of=pl.lit(as_of),
        )
    )


_IS_DATE = pl.col("kind") == "date"


def _differences(others: pl.DataFrame) -> pl.DataFrame:
    """`others` with their `difference` from the chosen value and `relative_difference`.

    Dates differ in days and have no relative difference.
    """
    return others.with_columns(
        difference=pl.when(_IS_DATE)
        .then((pl.col("value_date") - pl.col("chosen_date")).dt.total_days().cast(pl.Float64))
        .otherwise(pl.col("value_num") - pl.col("chosen_num")),
        relative_difference=pl.when(_IS_DATE)
        .then(None)
        .otherwise(
            ((pl.col("value_num") - pl.col("chosen_num")).abs() / pl.col("chosen_num").abs())
            # 105 vs 100 is 5 % within a 5 % tolerance, whatever the float rounding says.
            .round(6)
        ),
    )


def _conflicts(cand: pl.DataFrame, picks: pl.DataFrame, as_of: dt.date) -> pl.DataFrame:
    """spec_conflicts: the candidates not chosen that differ beyond the field's tolerance.

    A third-party value for a field the sheet marks not published is listed too.
    """
    others = cand.join(picks, on=KEY, how="left").filter(
        pl.col("chosen_source").is_null() | (pl.col("source") != pl.col("chosen_source"))
    )
    beyond = (
        pl.when(_IS_DATE)
        .then(pl.col("difference").abs() > pl.col("tolerance"))
        .otherwise(pl.col("relative_difference") > pl.col("tolerance"))
    )
    return (
        _differences(others)
        .filter(
            # only third-party values where the field is withheld; else beyond tolerance
            pl.col("note").is_not_null() | beyond.fill_null(False)
        )
        .with_columns(
            chosen_source=pl.coalesce("chosen_source", pl.lit(CURATED)),
            tolerance_unit=pl.when(_IS_DATE).then(pl.lit("days")).otherwise(pl.lit("relative")),
        )
        .sort([*KEY, "rank"])
        .select(
            *KEY,
            "chosen_value",
            "chosen_source",
            other_value="value",
            other_source="source",
            relative_difference="relative_difference",
            difference="difference",
            tolerance="tolerance",
            tolerance_unit="tolerance_unit",
            other_name="source_name",
            other_citation="citation",
            other_url="source_url",
            note="note",
            as_of=pl.lit(as_of),
        )
    )
