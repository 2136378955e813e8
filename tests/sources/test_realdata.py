"""Traceability: transcribed figures must match the third-party captures they cite.

Reads the captures through GPUVALUE_REALDATA (set by .ci/run when ../shared/realdata
exists) and skips cleanly without it.
"""

import csv
import json
import os
from pathlib import Path

import polars as pl
import pytest

from sources.bundled import (
    DATA_DIR,
    read_benchmark_figures,
    read_cloud_offers,
    read_retail_observations,
)
from sources.cloud.providers import PROVIDERS

REALDATA = os.environ.get("GPUVALUE_REALDATA")
pytestmark = pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")


def realdata(*parts: str) -> Path:
    path = Path(REALDATA).joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} is not in this copy of realdata")
    return path


def test_every_lambda_figure_is_in_the_cited_lambda_table():
    # Precision families as the Lambda tables name them.
    family = {"fp16": "fp16_amp", "tf32": "fp32_or_tf32", "fp32": "fp32_or_tf32"}
    published = set()
    with realdata("benchmarks", "lambda_tidy_derived.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            if row["missing"] == "True" or not row["batch_size_per_gpu"]:
                continue
            published.add(
                (
                    row["source_commit"][:8],
                    row["model"].replace("_", ""),
                    row["precision"],
                    int(row["num_gpu"]),
                    round(float(row["batch_size_per_gpu"])),
                    round(float(row["throughput"]), 6),
                )
            )
    published |= _lambda_v0_rows_by_normalised_name()
    ours = read_benchmark_figures(DATA_DIR / "benchmarks" / "lambda_pytorch.csv", None)
    missing = [
        r
        for r in ours.iter_rows(named=True)
        if (
            r["citation"].rsplit("@", 1)[1][:8],
            r["model"].replace("_", ""),
            family[r["precision"]],
            r["num_gpus"],
            r["batch_size_per_gpu"],
            round(r["throughput"], 6),
        )
        not in published
    ]
    assert not missing, f"{len(missing)} figures not found, e.g. {missing[:3]}"
    # The manifest's check number: Lambda v1 fp16 ResNet-50 on 1x H100 SXM5.
    h100 = ours.filter(
        (pl.col("gpu_id") == "h100-sxm5-80gb")
        & (pl.col("model") == "resnet50")
        & (pl.col("precision") == "fp16")
        & (pl.col("num_gpus") == 1)
        & (pl.col("software_era") == "lambda-v1")
    )
    assert h100.select("throughput", "batch_size_per_gpu").row(0) == (2616.0, 1280)


def _lambda_v0_rows_by_normalised_name() -> set[tuple]:
    """Lambda v0 figures joined to their batch sizes from the raw wide tables.

    The v0 throughput tables spell some systems "Nx RTX Quadro 8000" and the batch-size
    tables "Nx Quadro RTX 8000"; the derived tidy file loses those batch sizes, so we
    join the raw tables on the normalised name to check the recovered figures.
    """
    folder = realdata("benchmarks", "lambda_pytorch", "v0_67a9bb51_2022-07")
    family = {"fp16": "fp16_amp", "fp32": "fp32_or_tf32"}
    rows = set()
    for precision, label in family.items():

        def table(kind: str, precision: str = precision) -> dict[tuple, dict]:
            path = folder / f"pytorch-train-{kind}-{precision}.csv"
            with path.open(newline="") as handle:
                return {
                    (r["name_gpu"].replace("RTX Quadro", "Quadro RTX"), int(float(r["num_gpu"]))): r
                    for r in csv.DictReader(handle)
                }

        throughput, batch = table("throughput"), table("bs")
        for key, row in throughput.items():
            if key not in batch:
                continue
            for model, value in row.items():
                if model in {"name_gpu", "num_gpu", "watt", "price"} or not value:
                    continue
                global_bs = float(batch[key].get(model) or 0)
                if float(value) > 0 and global_bs > 0:
                    rows.add(
                        (
                            "67a9bb51",
                            model.replace("_", ""),
                            label,
                            key[1],
                            round(global_bs / key[1]),
                            round(float(value), 6),
                        )
                    )
    return rows


def test_every_keepa_price_is_in_the_cited_history():
    rows = read_retail_observations(DATA_DIR / "prices" / "history" / "keepa-amazon.csv", None)
    checked = 0
    for row in rows.iter_rows(named=True):
        name = Path(row["citation"].split(" ", 1)[1].rsplit("@", 1)[0]).name
        local = realdata("history", "keepa_amazon", name)
        if not local.exists():  # only 11 of the tracker's files are captured locally
            continue
        history = json.loads(local.read_text())["prices"]
        stamp = row["observed_at"].isoformat()
        assert history.get(stamp) == row["price"] or row["price"] in [
            p for ts, p in history.items() if ts.startswith(stamp)
        ], (name, stamp, row["price"])
        checked += 1
    assert checked >= 5000


@pytest.mark.parametrize(
    ("provider", "capture"),
    [
        ("azure", "azure_gpu_vms_skypilot_format_2026-05.csv"),
        ("lambda", "lambda_vms_skypilot_format_2026-05.csv"),
        ("vast", "vast_vms_skypilot_format_2026-05.csv"),
    ],
)
def test_every_catalog_price_is_in_the_cited_catalog(provider, capture):
    published = set()
    with realdata("cloud", capture).open(newline="") as handle:
        for row in csv.DictReader(handle):
            for price_type, column in (("on_demand", "Price"), ("spot", "SpotPrice")):
                if row[column]:
                    published.add(
                        (
                            row["InstanceType"],
                            row["Region"],
                            price_type,
                            round(float(row[column]), 6),
                        )
                    )
    ours = read_cloud_offers(DATA_DIR / "cloud" / f"{provider}.csv", None, PROVIDERS).filter(
        pl.col("provider") == provider
    )
    assert ours.height > 0
    missing = [
        r
        for r in ours.iter_rows(named=True)
        if (r["instance_type"], r["region"], r["price_type"], round(r["usd_per_hour"], 6))
        not in published
    ]
    assert not missing, missing[:3]
