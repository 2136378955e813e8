"""The bundled cloud snapshot (sources/data/cloud/) against its MANIFEST and its own rules."""

import re

import polars as pl
import pytest

from sources.bundled import DATA_DIR, read_cloud_offers
from sources.cloud.aws import instance_gpus
from sources.cloud.providers import PROVIDERS

CLOUD = DATA_DIR / "cloud"
PRICE_COLUMNS = ("on_demand", "spot", "reserved_1y", "reserved_3y")


@pytest.fixture(scope="module")
def offers() -> pl.DataFrame:
    return pl.concat([read_cloud_offers(CLOUD / f"{p}.csv", None, PROVIDERS) for p in PROVIDERS])


def manifest_counts() -> dict[str, dict[str, int]]:
    """The MANIFEST's row-count table, read as written."""
    text = (CLOUD / "MANIFEST.md").read_text(encoding="utf-8")
    section = text.split("## Row counts", 1)[1]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip().strip("*") for c in line.strip().strip("|").split("|")]
        if len(cells) == 7 and re.fullmatch(r"\d+", cells[1]):
            rows[cells[0]] = dict(
                zip((*PRICE_COLUMNS, "total", "gpu_ids"), map(int, cells[1:]), strict=True)
            )
    return rows


def test_manifest_row_counts_match_the_files(offers):
    documented = manifest_counts()
    assert set(documented) == {*PROVIDERS, "all"}
    for provider, expected in documented.items():
        rows = offers if provider == "all" else offers.filter(pl.col("provider") == provider)
        got = {t: rows.filter(pl.col("price_type") == t).height for t in PRICE_COLUMNS}
        got |= {"total": rows.height, "gpu_ids": rows["gpu_id"].n_unique()}
        assert got == expected, provider


def test_spot_where_the_provider_sells_it(offers):
    spot = offers.filter(pl.col("price_type") == "spot")["provider"].unique().to_list()
    # Lambda has no spot product; no dated, citable vast.ai interruptible price was found
    # (MANIFEST "Spot coverage"). Every other provider (8 in all) has spot rows.
    assert sorted(spot) == sorted(set(PROVIDERS) - {"lambda", "vast"})
    assert len(spot) >= 6


def test_aws_rows_follow_the_instance_table_and_price_order(offers):
    aws = offers.filter(pl.col("provider") == "aws")
    for row in aws.iter_rows(named=True):
        gpu, _, count = instance_gpus(row["instance_type"])
        assert (row["gpu_id"], row["gpu_count"]) == (gpu, count), row["instance_type"]
    wide = aws.pivot(
        on="price_type",
        index=["observed_at", "instance_type", "region"],
        values="usd_per_hour",
    )
    assert wide.height == 12
    for row in wide.iter_rows(named=True):
        chain = [row.get(k) for k in ("reserved_3y", "reserved_1y", "on_demand")]
        present = [v for v in chain if v is not None]
        # Longer commitments are cheaper; spot is below on-demand in this snapshot.
        assert present == sorted(present), row
        if row.get("spot") is not None:
            assert row["spot"] < row["on_demand"], row
    newest = aws.filter(pl.col("observed_at") == aws["observed_at"].max())
    assert set(newest["region"]) == {"us-east-1"}
    assert newest.filter(pl.col("price_type") == "spot").height == 11
