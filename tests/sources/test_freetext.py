"""Format checks of free text that reaches the site (sources/freetext.py)."""

import csv

import polars as pl
import pytest

from sources.bundled import DATA_DIR
from sources.freetext import (
    check_listing_titles,
    check_offer_text,
    instance_type_problem,
    region_problem,
    title_problem,
)
from tests.paths import FIXTURES_ROOT
from tests.sources.secret_echo import SECRETS, forms

GOOD_REGIONS = [
    "us-east-1", "westus3", "asia-northeast-1", "europe-west4", "global", "north-america",
    "Sverdlovsk Oblast, RU, EU", ", CA, NA", "Île-de-France, FR, EU", "Côte d'Ivoire, CI, AF",
    "São Paulo, BR, SA", "東京都, JP, AS", "US East (N. Virginia)",
]  # fmt: skip
GOOD_TYPES = [
    "p6-b200.48xlarge", "Standard_ND96isr_MI300X_v5", "a3-ultragpu-8g-nolssd", "HGX H100",
    "rtx-pro-6000-blackwell secure", "1x-RTX_PRO_6000_WS-32-65536", "gpu_8x_a100_80gb_sxm4",
    "1x A100 SXM4 #12", "Standard_NC320lds_xl_RTXPRO6000BSE_v6",
]  # fmt: skip


@pytest.mark.parametrize("value", GOOD_REGIONS)
def test_real_regions_pass(value):
    assert region_problem(value) is None


@pytest.mark.parametrize("value", GOOD_TYPES)
def test_real_instance_types_pass(value):
    assert instance_type_problem(value) is None


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("us-east-1" + "x" * 60, "too_long"),
        ("us-east-1\x00", "control"),
        ("us-\u202eeast-1", "control"),
        ("<script>alert(1)</script>", "charset"),
        ("us-east-1&key=abc", "charset"),
        ("us%2Deast", "charset"),
        ('us-"east"', "charset"),
        ("us-REDACTED-1", "redacted"),
        ("AKIAIOSFODNN7EXAMPLE", "token"),
        ("us-east-1 c0ffee1234567890abcdef12", "token"),
        ("eu-wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY", "token"),
        ("australiasoutheast", None),  # Azure: 18 letters, no digit
        ("australiacentral2", None),  # Azure: a trailing number is not a key
    ],
)
def test_bad_regions_are_refused_with_a_reason(value, reason):
    assert region_problem(value) == reason


def test_every_echo_of_a_credential_in_a_field_is_refused():
    # What a field holds when an echo was not redacted (an unknown credential): each form
    # with a key-shaped run or an encoding character is refused. Forms that are the plain
    # value with separators every few characters are found by value only (redaction).
    cases = refused = 0
    for secret in SECRETS.values():
        for text in forms(secret).values():
            cases += 1
            refused += region_problem(text) is not None and instance_type_problem(text) is not None
    assert refused >= cases * 0.8, (refused, cases)
    print(f"\nfree text: {refused} of {cases} unredacted echo forms refused by format alone")


def test_bundled_values_and_real_titles_all_pass():
    checked = 0
    for path in sorted((DATA_DIR / "cloud").glob("*.csv")):
        frame = pl.read_csv(path, infer_schema_length=0)
        _, counts = check_offer_text(frame)
        assert counts == {}, path.name
        checked += frame.height
    titles = [
        row["title"]
        for path in FIXTURES_ROOT.glob("titles_*.csv")
        for row in csv.DictReader(
            line for line in path.open(encoding="utf-8") if not line.startswith("#")
        )
    ]
    assert titles and all(title_problem(t) is None for t in titles)
    assert checked > 100


def test_bad_regions_become_null_bad_instance_types_drop_the_offer():
    rows = pl.DataFrame(
        {
            "provider": ["vast", "vast", "aws"],
            "region": ["Texas, US, NA", "us-REDACTED", "<b>x</b>"],
            "instance_type": ["1x-H100_SXM-32-65536", "AKIAIOSFODNN7EXAMPLE12", None],
            "usd_per_hour": [2.0, 2.1, 3.0],
        }
    )
    out, counts = check_offer_text(rows)
    # The second offer names no publishable instance type: dropped; the third has none.
    assert out["region"].to_list() == ["Texas, US, NA", None]
    assert out["instance_type"].to_list() == ["1x-H100_SXM-32-65536", None]
    assert out["usd_per_hour"].to_list() == [2.0, 3.0]
    assert counts == {"instance_type:token": 1, "region:charset": 1, "region:redacted": 1}
    same, none = check_offer_text(rows.head(1))
    assert none == {} and same.equals(rows.head(1))


def test_titles_keep_part_numbers_and_lose_keys():
    assert title_problem("Gigabyte GVN4090GAMINGOC24GD RTX 4090 Gaming OC 24GB") is None
    assert title_problem("RTX 4090 wJalrXUtnFEMI0K7MDENGbPx") == "token"
    assert title_problem("RTX 4090 c0ffee1234567890abcdef1234567890") == "token"


def test_bad_titles_drop_the_listing_and_lose_the_title():
    listings = pl.DataFrame(
        {
            "title": ["NVIDIA RTX 4090 24GB", "RTX 3090 key REDACTED", "x" * 500, None],
            "drop_reason": [None, None, None, "no_price"],
        }
    )
    out, counts = check_listing_titles(listings)
    assert out["title"].to_list() == ["NVIDIA RTX 4090 24GB", None, None, None]
    assert out["drop_reason"].to_list() == [
        None,
        "bad_title:redacted",
        "bad_title:too_long",
        "no_price",
    ]
    assert counts == {"title:redacted": 1, "title:too_long": 1}
