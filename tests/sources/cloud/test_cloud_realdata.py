"""Every captured cloud file in $GPUVALUE_REALDATA/cloud goes through the inspect command.

The per-format re-derivations of offers live next to their parsers (test_cloud_parsers.py:
Azure retail, SkyPilot catalogs, RunPod; test_cloud_aws_gcp.py: AWS, GCP). This file checks
that no captured file is left without a parser, runs `python -m sources parse` on each, and
re-derives the aggregator files (gpuhunt, Prime Intellect) from their source rows.
"""

import json
import math
import os
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest

from sources.__main__ import main
from sources.cloud.gpuhunt import parse_gpuhunt
from sources.cloud.primeintellect import parse_primeintellect
from sources.cloud.records import PRICE_TYPES

REALDATA = os.environ.get("GPUVALUE_REALDATA")
pytestmark = pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")

# Captured file -> the parser the inspect command is given for it.
FILES = {
    "aws_ec2instances_info_instances_2017-03.json": "aws",
    "aws_offer_ec2_us-east-1_p4d_2024-05.json": "aws",
    "azure_gpu_vms_skypilot_format_2026-05.csv": "skypilot",
    "azure_retail_prices_items_2026-08.json": "azure",
    "gcp_billing_catalog_gpu_skus_2025-06.json": "gcp",
    "gcp_billing_catalog_skus_a100_2023.json": "gcp",
    "gcp_gpu_vms_skypilot_format_2026-05.csv": "skypilot",
    "gpuhunt_output_a100_h100_mi300x_2024-09.json": "gpuhunt",
    "lambda_vms_skypilot_format_2026-05.csv": "skypilot",
    "primeintellect_gh200_summary_2025-10_to_11.jsonl": "primeintellect",
    "primeintellect_h100_sxm5_summary_2025-10_to_11.jsonl": "primeintellect",
    "runpod_gpu_types_no_prices.json": "runpod",
    "runpod_gpu_types_with_prices_2025-06-21.json": "runpod",
    "vast_vms_skypilot_format_2026-05.csv": "skypilot",
}
REFERENCES = {"gpuhunt", "primeintellect"}
OFFER_KEYS = (
    "provider",
    "instance_type",
    "region",
    "price_type",
    "gpu",
    "gpu_count",
    "usd_per_hour",
    "usd_per_gpu_hour",
)


def cloud_dir() -> Path:
    return Path(REALDATA or ".") / "cloud"


def test_every_captured_file_has_a_parser():
    on_disk = {p.name for p in cloud_dir().iterdir() if p.is_file()}
    assert on_disk == set(FILES), f"not covered: {sorted(on_disk - set(FILES))}"


@pytest.mark.parametrize("name", sorted(FILES))
def test_inspect_command_on_every_file(name, capsys):
    parser = FILES[name]
    assert main(["parse", parser, str(cloud_dir() / name)]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    print(f"{name}: {len(rows)} rows; {err.strip()[:300]}")
    if name == "runpod_gpu_types_no_prices.json":
        # A name list: nothing to print, and stderr says why rather than "no offers".
        assert rows == [] and "ok: 0 offers" in err and "not a price list" in err
        assert "35 GPU types" in err  # the capture lists 35 GPU types
        return
    assert rows, err
    for row in rows:
        assert tuple(row)[: len(OFFER_KEYS)] == OFFER_KEYS
        if row["price_type"] is not None:
            assert row["price_type"] in PRICE_TYPES
        if row["usd_per_hour"] is not None and row["gpu_count"]:
            assert row["usd_per_gpu_hour"] == pytest.approx(
                row["usd_per_hour"] / row["gpu_count"], abs=0.006 * row["gpu_count"]
            )
    if parser in REFERENCES:
        assert "reference prices, not offers" in err
        assert {row["source"] for row in rows} == {parser}
        assert {row["instance_type"] for row in rows} == {None}
    else:
        assert f"ok: {len(rows)} offers" in err
        assert all(row["price_type"] in PRICE_TYPES and row["gpu_count"] >= 1 for row in rows)


def test_gpuhunt_matches_source_rows():
    content = (cloud_dir() / "gpuhunt_output_a100_h100_mi300x_2024-09.json").read_bytes()
    items = json.loads(content)
    # Provider counts as the realdata MANIFEST lists them.
    assert Counter(i["provider"] for i in items) == {
        "gcp": 368,
        "runpod": 312,
        "azure": 220,
        "oci": 117,
        "lambdalabs": 112,
        "datacrunch": 78,
        "aws": 38,
        "tensordock": 26,
        "vastai": 24,
    }
    prices = parse_gpuhunt(content)
    renamed = {"lambdalabs": "lambda", "vastai": "vast"}
    expected = [
        (renamed.get(i["provider"], i["provider"]), i["gpuModel"], float(i["price"].lstrip("$")))
        for i in items
    ]
    assert [(p.provider, p.gpu_name, p.usd_per_hour) for p in prices] == expected
    assert {p.gpu_name: p.gpu for p in prices} == {"A100": None, "H100": None, "MI300X": "mi300x"}
    assert {(p.instance_type, p.region, p.price_type, p.gpu_count) for p in prices} == {
        (None, None, None, None)
    }


PRIMEINTELLECT = {
    "primeintellect_h100_sxm5_summary_2025-10_to_11.jsonl": ("h100-sxm5-80gb", 957),
    "primeintellect_gh200_summary_2025-10_to_11.jsonl": ("gh200-96gb", 752),
}


def _expected_rows(snapshot: dict) -> list[tuple]:
    """(provider, gpu_count, statistic, price_type, region, usd/h, usd/GPU-h) from one line."""
    rows = [
        (None, None, key, None, None, None, value) for key, value in snapshot["price_stats"].items()
    ]
    for cloud, figures in snapshot["by_provider"].items():
        cloud = "lambda" if cloud == "lambdalabs" else cloud
        rows += [(cloud, None, s, None, None, None, figures[s]) for s in ("min", "avg")]
    for config, figures in snapshot["by_config"].items():
        count = int(config.rstrip("x"))
        deal = figures.get("best_deal") or {}
        price_type = {True: "spot", False: "on_demand"}.get(deal.get("spot"))
        cloud = {"lambdalabs": "lambda"}.get(deal.get("provider"), deal.get("provider"))
        region = deal.get("location") if deal.get("location") != "N/A" else None
        rows.append(
            (cloud, count, "min", price_type, region, figures["min_total"], figures["min_per_gpu"])
        )
        rows.append((None, count, "avg", None, None, figures["avg_total"], figures["avg_per_gpu"]))
    return rows


@pytest.mark.parametrize("name", sorted(PRIMEINTELLECT))
def test_primeintellect_matches_source_rows(name):
    gpu, lines = PRIMEINTELLECT[name]
    content = (cloud_dir() / name).read_bytes()
    snapshots = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
    assert len(snapshots) == lines
    prices = parse_primeintellect(content)
    assert {p.gpu for p in prices} == {gpu}
    by_time: dict[str, list[tuple]] = {}
    for p in prices:
        by_time.setdefault(p.observed_at, []).append(
            (
                p.provider,
                p.gpu_count,
                p.statistic,
                p.price_type,
                p.region,
                p.usd_per_hour,
                p.usd_per_gpu_hour,
            )
        )
    assert len(by_time) == len(snapshots)
    spot_deals = 0
    for snapshot in snapshots:
        expected = _expected_rows(snapshot)
        assert sorted(by_time[snapshot["timestamp"]], key=repr) == sorted(expected, key=repr)
        stats = snapshot["price_stats"]
        ordered = [stats[k] for k in ("min", "p10", "p25", "median", "p75", "p90", "max")]
        assert ordered == sorted(ordered)
        for config, figures in snapshot["by_config"].items():
            # min_total is the cheapest offer's instance price: min_per_gpu x count, rounded.
            count = int(config.rstrip("x"))
            assert math.isclose(
                figures["min_total"], figures["min_per_gpu"] * count, abs_tol=0.01 * count
            )
            spot_deals += bool((figures.get("best_deal") or {}).get("spot"))
    times = sorted(datetime.fromisoformat(s["timestamp"]) for s in snapshots)
    assert times[0].date().isoformat() == "2025-10-19"
    assert times[-1].date().isoformat() == "2025-11-16"
    print(f"{name}: {len(prices)} reference prices, {spot_deals} spot best deals")
