"""Aggregator files (gpuhunt, Prime Intellect): parsed as reference prices, never offers."""

import json

import pytest

from sources.__main__ import main
from sources.cloud.gpu_names import aggregator_gpu
from sources.cloud.gpuhunt import parse_gpuhunt
from sources.cloud.parsers import CLOUD_PARSERS, REFERENCE_PARSERS
from sources.cloud.primeintellect import parse_primeintellect
from sources.cloud.records import MalformedFile
from tests.paths import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "cloud"
OFFER_KEYS = {
    "provider",
    "instance_type",
    "region",
    "price_type",
    "gpu",
    "gpu_count",
    "usd_per_hour",
    "usd_per_gpu_hour",
}


@pytest.mark.parametrize(
    ("name", "memory", "expected"),
    [
        ("A100", None, None),  # 40 or 80 GB, SXM4 or PCIe: not stated
        ("H100", None, None),  # SXM, PCIe or NVL
        ("H200 141GB", 141, None),  # SXM or NVL
        ("A100 80GB PCIe", 80, "a100-pcie-80gb"),
        ("A100 SXM4", None, None),  # memory not stated
        ("H100 80GB SXM5", 80, "h100-sxm5-80gb"),
        ("H100 SXM", None, "h100-sxm5-80gb"),
        ("MI300X", None, "mi300x"),
        ("GH200 96GB", 96, "gh200-96gb"),
        ("L4", None, "l4"),
    ],
)
def test_aggregator_gpu(name, memory, expected):
    assert aggregator_gpu(name, memory) == expected


def test_parse_gpuhunt():
    prices = parse_gpuhunt((FIXTURES / "gpuhunt_output.json").read_bytes())
    got = [(p.provider, p.gpu_name, p.gpu, p.usd_per_hour) for p in prices]
    assert got == [
        ("runpod", "MI300X", "mi300x", 2.49),
        ("lambda", "A100", None, 1.10),
        ("aws", "H100", None, 98.32),
        ("vast", "H100 SXM", "h100-sxm5-80gb", 3.35),
        ("gcp", "L4", "l4", 0.71),
    ]
    # What the format does not carry stays empty, for every item.
    for p in prices:
        assert (p.instance_type, p.region, p.price_type, p.gpu_count) == (None, None, None, None)
        assert p.usd_per_gpu_hour is None and p.source == "gpuhunt"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ((FIXTURES / "gpuhunt_bad_price.json").read_bytes(), r"\[1\]\.price: 'call us'"),
        (b'{"offers": []}', "not a list"),
        (b'[{"gpuModel": "A100", "price": "$1"}]', r"\[0\]: missing 'provider'"),
        (b'[{"gpuModel": "A100", "price": "$0", "provider": "x"}]', "not positive"),
        (b"<html>", "not JSON"),
    ],
)
def test_parse_gpuhunt_malformed(content, message):
    with pytest.raises(MalformedFile, match=message):
        parse_gpuhunt(content)


def test_parse_primeintellect():
    prices = parse_primeintellect((FIXTURES / "primeintellect_summary.jsonl").read_bytes())
    first = [p for p in prices if p.observed_at == "2025-10-20T08:00:00+00:00"]
    # 8 statistics + 2 clouds x (min, avg) + 2 GPU counts x (min, avg).
    assert len(first) == 8 + 4 + 4
    assert {p.gpu for p in first} == {"h100-sxm5-80gb"}
    stats = {p.statistic: p for p in first if p.provider is None and p.gpu_count is None}
    assert stats["median"].usd_per_gpu_hour == 2.2 and stats["median"].offers == 5
    assert {p.price_type for p in stats.values()} == {None}
    clouds = {(p.provider, p.statistic): p.usd_per_gpu_hour for p in first if p.provider}
    assert clouds[("lambda", "avg")] == 3.14  # lambdalabs written as our provider name
    assert clouds[("datacrunch", "min")] == 1.5
    configs = {(p.gpu_count, p.statistic): p for p in first if p.gpu_count}
    one = configs[(1, "min")]
    assert (one.provider, one.region, one.price_type, one.usd_per_hour) == (
        "datacrunch",
        "FI",
        "on_demand",
        2.2,
    )
    eight = configs[(8, "min")]
    assert (eight.region, eight.price_type, eight.usd_per_hour, eight.usd_per_gpu_hour) == (
        None,  # location "N/A"
        "spot",
        12.0,
        1.5,
    )
    average = configs[(8, "avg")]
    assert (average.provider, average.price_type, average.usd_per_hour) == (None, None, 16.8)
    # The H200 line: SXM or NVL not stated, no best_deal, no availability.
    h200 = [p for p in prices if p.gpu_name == "H200_141GB"]
    assert len(h200) == 8 + 2 + 2 and {p.gpu for p in h200} == {None}
    h200_min = next(p for p in h200 if p.gpu_count == 8 and p.statistic == "min")
    assert (h200_min.provider, h200_min.price_type, h200_min.usd_per_hour) == (None, None, 20.0)
    assert {p.offers for p in h200 if p.gpu_count is None and p.provider is None} == {None}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            (FIXTURES / "primeintellect_missing_total.jsonl").read_bytes(),
            r"line 2\.by_config\.8x\.min_total: None is not a number",
        ),
        (b'{"timestamp": "2025-10-20T08:00:00+00:00"}\n', "line 1: missing 'gpu_type'"),
        (b'{"timestamp": "yesterday", "gpu_type": "H100_80GB"}', "is not a time"),
        (b"\n\n", "no snapshot lines"),
        (b"[1, 2]\n", "line 1: not an object"),
    ],
)
def test_parse_primeintellect_malformed(content, message):
    with pytest.raises(MalformedFile, match=message):
        parse_primeintellect(content)


def test_aggregators_are_not_offer_parsers():
    # cloud_offers and the live fetchers use CLOUD_PARSERS only.
    assert not set(REFERENCE_PARSERS) & set(CLOUD_PARSERS)


def test_cli_gpuhunt(capsys):
    assert main(["parse", "gpuhunt", str(FIXTURES / "gpuhunt_output.json")]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert len(rows) == 5 and all(OFFER_KEYS <= set(row) for row in rows)
    assert rows[0]["usd_per_hour"] == 2.49 and rows[0]["price_type"] is None
    assert "5 reference prices" in err and "not offers" in err
    assert "GPU not pinned to one catalog GPU: A100, H100" in err


def test_cli_primeintellect_malformed(capsys):
    path = FIXTURES / "primeintellect_missing_total.jsonl"
    assert main(["parse", "primeintellect", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "not a valid primeintellect price file" in err and "min_total" in err


def test_cli_runpod_name_list(capsys):
    path = FIXTURES / "runpod_gpu_types_no_prices.json"
    assert main(["parse", "runpod", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == ""
    assert "ok: 0 offers" in err and "not a price list" in err
    # A priced file says nothing of the kind.
    assert main(["parse", "runpod", str(FIXTURES / "runpod_gpu_types.json")]) == 0
    assert "not a price list" not in capsys.readouterr().err
