"""Format checks for free-text fields that reach the site (pure; no I/O).

A provider's region or instance type and a listing's title are printed on the site and in
the published files. Redaction by value (`sources.redaction`) removes every credential the
project knows; these checks catch what it cannot know: another party's token reflected into
a field, a field stuffed with markup or control characters, or what is left of a field
after redaction (`REDACTED`). A cloud region that fails is replaced by NULL (the offer's
price is kept), an instance type that fails drops the offer, and a listing title that fails
drops the listing, each with a counted reason.

Patterns are conservative, from every value the bundled data and the providers' APIs use
(sources/data/cloud/*.csv, 2026-10-07): regions such as `us-east-1`, `westus3`,
`asia-northeast-1`, vast.ai's `Sverdlovsk Oblast, RU, EU` or `, CA, NA`; instance types
such as `p6-b200.48xlarge`, `Standard_ND96isr_MI300X_v5`, `a3-ultragpu-8g-nolssd`,
`rtx-pro-6000-blackwell secure`, `1x-RTX_PRO_6000_WS-32-65536`.

Reasons:
- `too_long`: over the field's length limit;
- `control`: a control or bidirectional-override character;
- `charset`: a character outside the field's set (markup, `%`, `&`, `=`, quotes...);
- `redacted`: holds `REDACTED`, what redaction left of a credential;
- `token`: a run of letters and digits shaped like a key: 24 characters or more; in a
  region or instance type also 16 or more with a digit followed by a letter
  (`AKIAIOSFODNN7EXAMPLE`), in a title 16 or more mixing digits, upper and lower case
  (`wJalrXUtnFEMI0K7MDENG`; part numbers such as `GVN4090GAMINGOC24GD` are one case).
  Real values: instance-type runs with a digit inside are at most 13 characters
  (`RTXPRO6000BSE`); Azure's region names reach 18 letters (`australiasoutheast`) and end
  in a digit at most (`australiacentral2`). Checked against 4,699 offers parsed from real
  captured provider files and 798 titles of real captured pages: none refused.
"""

import re
from collections import Counter

import polars as pl

from sources.redaction import REDACTED

REGION_MAX = 64
INSTANCE_TYPE_MAX = 64
TITLE_MAX = 400
TOKEN_MAX = 23  # an alphanumeric run longer than this is a key, whatever it mixes
MIXED_TOKEN_MAX = 15  # ... and one longer than this with a digit inside or mixed case

# Letters of any script (vast.ai's geolocation: "Île-de-France, FR, EU"), digits and the
# punctuation region names use.
_REGION = re.compile(r"[^\W_]|[ ,.\-_()'/]")
_INSTANCE_TYPE = re.compile(r"[A-Za-z0-9 ._\-:/+()#]")
_CONTROL = re.compile(
    r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
_RUN = re.compile(r"[A-Za-z0-9]+")
_DIGIT_THEN_LETTER = re.compile(r"[0-9][A-Za-z]")


def _key_shaped(run: str, *, free_text: bool) -> bool:
    if len(run) > TOKEN_MAX:
        return True
    if len(run) <= MIXED_TOKEN_MAX:
        return False
    if free_text:
        return any(c.isdigit() for c in run) and run != run.lower() and run != run.upper()
    # A digit inside the run, not only a trailing number (Azure's "australiacentral2").
    return _DIGIT_THEN_LETTER.search(run) is not None


def _check(value: str | None, limit: int, allowed: re.Pattern[str] | None) -> str | None:
    if value is None:
        return None
    if len(value) > limit:
        return "too_long"
    if _CONTROL.search(value):
        return "control"
    if allowed is not None and allowed.sub("", value):
        return "charset"
    if REDACTED in value:
        return "redacted"
    if any(_key_shaped(run, free_text=allowed is None) for run in _RUN.findall(value)):
        return "token"
    return None


def region_problem(value: str | None) -> str | None:
    """Why a cloud region (or zone) cannot be published, or None when it can (or is None)."""
    return _check(value, REGION_MAX, _REGION)


def instance_type_problem(value: str | None) -> str | None:
    """Why a cloud instance type cannot be published, or None when it can (or is None)."""
    return _check(value, INSTANCE_TYPE_MAX, _INSTANCE_TYPE)


def title_problem(value: str | None) -> str | None:
    """Why a listing title cannot be published, or None when it can (or is None).

    Titles are free text in any script with any punctuation (the site escapes them), so only
    the length, control characters, `REDACTED` and key-shaped tokens are checked.
    """
    return _check(value, TITLE_MAX, None)


# cloud_offers column -> its check. A region (or a zone, when a provider's rows carry one)
# that fails is set to NULL: the offer still says what it costs, and a NULL region is
# ordinary (Lambda, RunPod). An instance type that fails drops the offer: it names what is
# rented, and the model prints it beside every rent price.
NULLED_FIELDS = {"region": region_problem, "zone": region_problem}
DROPPING_FIELDS = {"instance_type": instance_type_problem}


def _problems(rows: pl.DataFrame, checks) -> dict[str, list[str | None]]:  # noqa: ANN001
    found = {}
    for column, check in checks.items():
        if column in rows.columns and rows[column].dtype == pl.Utf8:
            problems = [check(value) for value in rows[column].to_list()]
            if any(problems):
                found[column] = problems
    return found


def check_offer_text(rows: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, int]]:
    """Cloud offers whose free text can be published.

    A region or zone that fails its check is replaced by NULL; an offer whose instance type
    fails is dropped.

    Returns:
        (rows, counts): the rows kept, in order, and how many values were refused per
        "field:reason" (e.g. {"region:redacted": 3, "instance_type:token": 1}).
    """
    counts: Counter[str] = Counter()
    nulled = _problems(rows, NULLED_FIELDS)
    for column, problems in nulled.items():
        counts.update(f"{column}:{problem}" for problem in problems if problem)
        kept = [
            None if problem else value
            for value, problem in zip(rows[column].to_list(), problems, strict=True)
        ]
        rows = rows.with_columns(pl.Series(column, kept, dtype=pl.Utf8))
    for column, problems in _problems(rows, DROPPING_FIELDS).items():
        counts.update(f"{column}:{problem}" for problem in problems if problem)
        rows = rows.filter(pl.Series([problem is None for problem in problems]))
    return rows, dict(sorted(counts.items()))


def check_listing_titles(
    listings: pl.DataFrame, reason_column: str = "drop_reason"
) -> tuple[pl.DataFrame, dict[str, int]]:
    """Listings whose title fails its check: title NULL, `reason_column` "bad_title:<why>".

    Such a listing never feeds a price (it has a drop reason) and its title is not written.

    Returns:
        (listings, counts): the same rows in the same order, and the count per reason.
    """
    if "title" not in listings.columns or listings.is_empty():
        return listings, {}
    problems = [title_problem(title) for title in listings["title"].to_list()]
    if not any(problems):
        return listings, {}
    flags = pl.Series("_bad_title", problems, dtype=pl.Utf8)
    reason = pl.concat_str(pl.lit("bad_title:"), pl.col("_bad_title"))
    out = (
        listings.with_columns(flags)
        .with_columns(
            title=pl.when(pl.col("_bad_title").is_null()).then(pl.col("title")),
            **{
                reason_column: pl.when(pl.col("_bad_title").is_null())
                .then(
                    pl.col(reason_column)
                    if reason_column in listings.columns
                    else pl.lit(None, pl.Utf8)
                )
                .otherwise(reason)
            },
        )
        .drop("_bad_title")
    )
    counts = Counter(f"title:{problem}" for problem in problems if problem)
    return out, dict(sorted(counts.items()))
