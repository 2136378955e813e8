"""AWS and GCP GPU price parsers: fixtures written from the documented formats, then realdata.

The realdata tests read `$GPUVALUE_REALDATA/cloud` and skip cleanly without it.
"""

import json
import os
from collections import defaultdict
from pathlib import Path

import pytest

from sources.cloud.aws import INSTANCE_GPUS, parse_aws
from sources.cloud.gcp import LOCATION_REGIONS, gpu_id, parse_gcp
from sources.cloud.records import PRICE_TYPES, CloudOffer, MalformedFile
from tests.paths import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "cloud"
REALDATA = os.environ.get("GPUVALUE_REALDATA")
realdata = pytest.mark.skipif(not REALDATA, reason="GPUVALUE_REALDATA is not set")


def fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def cloud_file(name: str) -> bytes:
    return (Path(os.environ["GPUVALUE_REALDATA"]) / "cloud" / name).read_bytes()


def by_key(offers: list[CloudOffer]) -> dict[tuple, CloudOffer]:
    keyed = {(o.instance_type, o.region, o.price_type): o for o in offers}
    assert len(keyed) == len(offers), "two offers for the same instance, region and type"
    return keyed


# --- AWS offer file ---------------------------------------------------------------------------


def test_aws_offer_file_keeps_linux_shared_gpu_prices():
    offers = by_key(parse_aws(fixture("aws_offer_gpu.json")))
    assert set(offers) == {
        ("p4d.24xlarge", "us-east-1", "on_demand"),
        ("p4d.24xlarge", "us-east-1", "reserved_1y"),
        ("p4d.24xlarge", "us-east-1", "reserved_3y"),
        ("g5.12xlarge", "us-west-2", "on_demand"),
        ("p2.xlarge", "us-east-1", "on_demand"),
    }
    p4d = offers["p4d.24xlarge", "us-east-1", "on_demand"]
    assert p4d == CloudOffer(
        provider="aws",
        instance_type="p4d.24xlarge",
        region="us-east-1",
        price_type="on_demand",
        gpu="a100-sxm4-40gb",
        gpu_name="NVIDIA A100 40GB",
        gpu_count=8,
        usd_per_hour=32.7726,
    )
    assert p4d.usd_per_gpu_hour == pytest.approx(4.096575)


def test_aws_offer_file_reserved_keeps_standard_no_upfront_only():
    offers = by_key(parse_aws(fixture("aws_offer_gpu.json")))
    assert offers["p4d.24xlarge", "us-east-1", "reserved_1y"].usd_per_hour == 20.6467
    assert offers["p4d.24xlarge", "us-east-1", "reserved_3y"].usd_per_hour == 12.7658


def test_aws_offer_file_counts_and_unknown_families():
    offers = by_key(parse_aws(fixture("aws_offer_gpu.json")))
    g5 = offers["g5.12xlarge", "us-west-2", "on_demand"]  # region from the location name
    assert (g5.gpu, g5.gpu_count, g5.usd_per_hour) == ("a10g", 4, 5.672)
    p2 = offers["p2.xlarge", "us-east-1", "on_demand"]
    assert (p2.gpu, p2.gpu_name, p2.gpu_count) == (None, "NVIDIA K80", 1)


def test_aws_offer_file_unknown_gpu_family_uses_the_gpu_attribute():
    data = json.loads(fixture("aws_offer_gpu.json"))
    product = data["products"]["P2XLINUXSKU0001"]
    product["attributes"]["instanceType"] = "p9x.96xlarge"
    product["attributes"]["gpu"] = "16"
    offers = [o for o in parse_aws(json.dumps(data).encode()) if o.instance_type == "p9x.96xlarge"]
    assert [(o.gpu, o.gpu_name, o.gpu_count) for o in offers] == [(None, "unknown (p9x)", 16)]


def test_aws_instance_table():
    assert INSTANCE_GPUS["p4de.24xlarge"][::2] == ("a100-sxm4-80gb", 8)
    assert INSTANCE_GPUS["p5.48xlarge"][::2] == ("h100-sxm5-80gb", 8)
    assert INSTANCE_GPUS["p5en.48xlarge"][::2] == ("h200-sxm", 8)
    assert INSTANCE_GPUS["p6-b200.48xlarge"][::2] == ("b200", 8)
    assert INSTANCE_GPUS["p3.8xlarge"][::2] == ("v100-sxm2-16gb", 4)
    assert INSTANCE_GPUS["p3dn.24xlarge"][::2] == ("v100-sxm2-32gb", 8)
    assert INSTANCE_GPUS["g4dn.metal"][::2] == ("t4", 8)
    assert INSTANCE_GPUS["g4dn.16xlarge"][::2] == ("t4", 1)
    assert INSTANCE_GPUS["g6.48xlarge"][::2] == ("l4", 8)
    assert INSTANCE_GPUS["g6e.12xlarge"][::2] == ("l40s", 4)
    assert INSTANCE_GPUS["g4ad.xlarge"][0] is None
    assert "m5.large" not in INSTANCE_GPUS
    specs = (Path(__file__).parents[3] / "sources" / "data" / "specs" / "gpu_specs.csv").read_text()
    known = {line.split(",")[0] for line in specs.splitlines()[1:]}
    assert {gpu for gpu, _, _ in INSTANCE_GPUS.values() if gpu} <= known


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["products"]["P4DLINUXSKU0001"].pop("attributes"), "missing 'attributes'"),
        (
            lambda d: d["products"]["P4DLINUXSKU0001"]["attributes"].pop("instanceType"),
            "products[sku P4DLINUXSKU0001].attributes: missing 'instanceType'",
        ),
        (
            lambda d: d["products"]["P4DLINUXSKU0001"]["attributes"].pop("operatingSystem"),
            "missing 'operatingSystem'",
        ),
        (
            lambda d: next(iter(d["terms"]["OnDemand"]["P4DLINUXSKU0001"].values())).pop(
                "priceDimensions"
            ),
            "terms.OnDemand[P4DLINUXSKU0001][P4DLINUXSKU0001.JRTCKXETXF]: "
            "missing 'priceDimensions'",
        ),
        (
            lambda d: next(
                iter(
                    next(iter(d["terms"]["OnDemand"]["P4DLINUXSKU0001"].values()))[
                        "priceDimensions"
                    ].values()
                )
            )["pricePerUnit"].update(USD="n/a"),
            "pricePerUnit.USD: not a price",
        ),
    ],
)
def test_aws_offer_file_malformed(mutate, message):
    data = json.loads(fixture("aws_offer_gpu.json"))
    mutate(data)
    with pytest.raises(MalformedFile, match=message.replace("[", r"\[").replace(".", r"\.")):
        parse_aws(json.dumps(data).encode())


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"<html>Access Denied</html>", "not JSON"),
        (b'{"Message": "Forbidden"}', "found keys Message"),
        (b'"a string"', "top level is a str"),
        (b'{"SpotPriceHistory": [{"InstanceType": "p4d.24xlarge"}]}', "AvailabilityZone"),
        (b'[{"instance_type": "p3.2xlarge"}]', r"instances\[p3\.2xlarge\]: missing 'pricing'"),
    ],
)
def test_aws_malformed_documents(content, message):
    with pytest.raises(MalformedFile, match=message):
        parse_aws(content)


# --- AWS spot price history -------------------------------------------------------------------


def test_aws_spot_history_newest_linux_price_per_zone():
    offers = parse_aws(fixture("aws_spot_price_history.json"))
    got = {(o.instance_type, o.region, o.usd_per_hour) for o in offers}
    assert got == {
        ("p4d.24xlarge", "us-east-1", 12.25),  # 1a: 12:00 beats 10:00; the Windows row is out
        ("p4d.24xlarge", "us-east-1", 13.1),  # 1b
        ("g5.12xlarge", "us-west-2", 2.1),
    }
    assert {o.price_type for o in offers} == {"spot"}
    assert {(o.gpu, o.gpu_count) for o in offers} == {("a100-sxm4-40gb", 8), ("a10g", 4)}


# --- ec2instances.info ------------------------------------------------------------------------


def test_aws_instances_json():
    offers = by_key(parse_aws(fixture("aws_ec2instances_info.json")))
    assert {k: o.usd_per_hour for k, o in offers.items()} == {
        ("p3.8xlarge", "us-east-1", "on_demand"): 12.24,
        ("p3.8xlarge", "us-east-1", "reserved_1y"): 8.47,
        ("p3.8xlarge", "us-east-1", "reserved_3y"): 5.81,
        ("p3.8xlarge", "eu-west-1", "on_demand"): 13.22,
        ("g4dn.12xlarge", "us-east-1", "on_demand"): 3.912,
    }
    assert offers["p3.8xlarge", "us-east-1", "on_demand"].gpu_count == 4


def test_aws_instances_json_spot_min():
    data = json.loads(fixture("aws_ec2instances_info.json"))
    linux = data[0]["pricing"]["us-east-1"]["linux"]
    linux.update(spot_min="3.1", spot_max="4.4", spot_avg="3.7", pct_interrupt=">20%")
    data[0]["pricing"]["eu-west-1"]["linux"]["spot_avg"] = "5.0"  # no zone price now
    offers = by_key(parse_aws(json.dumps(data).encode()))
    spot = {k: o.usd_per_hour for k, o in offers.items() if k[2] == "spot"}
    assert spot == {("p3.8xlarge", "us-east-1", "spot"): 3.1}
    linux["spot_min"] = "cheap"
    with pytest.raises(MalformedFile, match="spot_min"):
        parse_aws(json.dumps(data).encode())


# --- GCP --------------------------------------------------------------------------------------


def test_gcp_price_types_regions_and_arithmetic():
    offers = parse_gcp(fixture("gcp_skus.json"))
    got = {(o.gpu_name, o.region, o.price_type): o.usd_per_hour for o in offers}
    americas = ["us-central1", "us-east1", "us-west1"]
    expected = {}
    for price_type, usd in [
        ("on_demand", 2.933908),
        ("spot", 1.1472),
        ("reserved_1y", 1.84836204),
        ("reserved_3y", 1.0268678),
    ]:
        expected |= {("Nvidia Tesla A100", region, price_type): usd for region in americas}
    expected |= {
        ("Nvidia H100 80GB", "asia-northeast1", "on_demand"): 11.06,
        ("Nvidia L4", "asia-northeast1", "spot"): 0.28,
        ("Nvidia Tesla P100", "europe-west1", "on_demand"): 1.46,
        ("Nvidia Tesla A100 80GB", "EMEA", "reserved_3y"): 2.0,
        ("Nvidia Tesla T4", "us-central1", "on_demand"): 0.35,  # the non-zero tier
    }
    assert got == expected  # licensing fee, zero price, Reserved, DWS and RAM are skipped
    # The instance is the SKU's GPU name: H100 80GB and H100 80GB Mega stay two offers.
    assert all(o.instance_type == o.gpu_name and o.gpu_count == 1 for o in offers)
    gpus = {o.gpu_name: o.gpu for o in offers}
    assert gpus == {
        "Nvidia Tesla A100": "a100-sxm4-40gb",
        "Nvidia H100 80GB": "h100-sxm5-80gb",
        "Nvidia L4": "l4",
        "Nvidia Tesla P100": None,
        "Nvidia Tesla A100 80GB": "a100-sxm4-80gb",
        "Nvidia Tesla T4": "t4",
    }


def test_gcp_bare_list_and_older_descriptions():
    skus = json.loads(fixture("gcp_skus.json"))["skus"]
    skus[0]["description"] = "Preemptible Nvidia Tesla K80 GPU running in Americas"
    skus[0]["category"]["usageType"] = "Preemptible"
    skus[2]["description"] = "Commitment v1: Nvidia A100 GPU in Americas for 1 Year"
    offers = parse_gcp(json.dumps(skus).encode())
    k80 = [o for o in offers if o.gpu_name == "Nvidia Tesla K80"]
    assert {(o.price_type, o.gpu) for o in k80} == {("spot", None)}
    assert {o.gpu for o in offers if o.gpu_name == "Nvidia A100"} == {"a100-sxm4-40gb"}


@pytest.mark.parametrize(
    ("name", "gpu"),
    [
        ("Nvidia H100 80GB Mega", "h100-sxm5-80gb"),
        ("Nvidia H100 Mega 80GB", "h100-sxm5-80gb"),
        ("H200 141GB", "h200-sxm"),
        ("Nvidia B200", "b200"),
        ("Nvidia GB200", None),
        ("Nvidia Tesla V100", "v100-sxm2-16gb"),
        ("Nvidia Tesla P4", None),
        ("Nvidia L40", None),
    ],
)
def test_gcp_gpu_names(name, gpu):
    assert gpu_id(name) == gpu


def _gcp_broken(mutate) -> bytes:
    data = json.loads(fixture("gcp_skus.json"))
    mutate(data["skus"][0])
    return json.dumps(data).encode()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not json {", "not JSON"),
        (b'{"error": {"code": 403}}', "missing 'skus'"),
        (_gcp_broken(lambda s: s.pop("pricingInfo")), r"AAAA-0001-A100.*missing 'pricingInfo'"),
        (_gcp_broken(lambda s: s.pop("description")), "missing 'description'"),
        (
            _gcp_broken(lambda s: s["pricingInfo"][0]["pricingExpression"].pop("tieredRates")),
            "missing 'tieredRates'",
        ),
        (
            _gcp_broken(
                lambda s: s["pricingInfo"][0]["pricingExpression"]["tieredRates"][0].pop(
                    "unitPrice"
                )
            ),
            "missing 'unitPrice'",
        ),
        (_gcp_broken(lambda s: s["category"].update(usageType="Commit1Yr")), "contradicts"),
    ],
)
def test_gcp_malformed(content, message):
    with pytest.raises(MalformedFile, match=message):
        parse_gcp(content)


# --- realdata ---------------------------------------------------------------------------------


@realdata
def test_realdata_aws_offer_p4d():
    raw = cloud_file("aws_offer_ec2_us-east-1_p4d_2024-05.json")
    offers = parse_aws(raw)
    assert len(offers) == 1  # the 0.00 Capacity Block SKU is skipped
    (offer,) = offers
    assert (offer.instance_type, offer.region, offer.price_type) == (
        "p4d.24xlarge",
        "us-east-1",
        "on_demand",
    )
    assert (offer.gpu, offer.gpu_count, offer.usd_per_hour) == ("a100-sxm4-40gb", 8, 32.7726)
    assert offer.usd_per_gpu_hour == pytest.approx(4.0966, abs=1e-4)
    # Re-derived: the one Linux RunInstances SKU's on-demand USD price.
    data = json.loads(raw)
    (sku,) = [
        s for s, p in data["products"].items() if p["attributes"]["operation"] == "RunInstances"
    ]
    (term,) = data["terms"]["OnDemand"][sku].values()
    (dimension,) = term["priceDimensions"].values()
    assert offer.usd_per_hour == float(dimension["pricePerUnit"]["USD"])


@realdata
def test_realdata_aws_ec2instances_info():
    raw = cloud_file("aws_ec2instances_info_instances_2017-03.json")
    offers = parse_aws(raw)
    assert {o.instance_type.split(".")[0] for o in offers} == {"p2", "g2", "cg1"}
    assert all(o.gpu is None for o in offers)  # K80, K520, M2050: not in the catalog
    keyed = by_key(offers)
    assert keyed["p2.xlarge", "us-east-1", "on_demand"].usd_per_hour == 0.9
    assert keyed["p2.16xlarge", "us-east-1", "on_demand"].gpu_count == 16
    instances = {i["instance_type"]: i for i in json.loads(raw)}
    keys = {
        "on_demand": ("ondemand",),
        "reserved_1y": ("reserved", "yrTerm1Standard.noUpfront"),
        "reserved_3y": ("reserved", "yrTerm3Standard.noUpfront"),
    }
    for offer in offers:
        value = instances[offer.instance_type]["pricing"][offer.region]["linux"]
        for key in keys[offer.price_type]:
            value = value[key]
        assert offer.usd_per_hour == float(value)


def _gcp_raw_prices(raw: bytes) -> dict[str, list[float]]:
    data = json.loads(raw)
    skus = data["skus"] if isinstance(data, dict) else data
    prices = defaultdict(list)
    for sku in skus:
        price = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][-1]["unitPrice"]
        prices[sku["description"]].append(int(price["units"]) + price["nanos"] / 1e9)
    return prices


def _gcp_descriptions(offer: CloudOffer, locations: list[str]) -> list[str]:
    name = offer.gpu_name
    out = []
    for loc in locations:
        out += {
            "on_demand": [f"{name} GPU running in {loc}"],
            "spot": [f"{name} GPU attached to Spot Preemptible VMs running in {loc}"],
            "reserved_1y": [f"Commitment v1: {name} GPU running in {loc} for 1 Year"],
            "reserved_3y": [
                f"Commitment v1: {name} GPU running in {loc} for 3 Year",
                f"Commitment v1: {name} GPU running in {loc} for 3 Years",
            ],
        }[offer.price_type]
    return out


@realdata
def test_realdata_gcp_2025_every_offer_matches_its_sku():
    raw = cloud_file("gcp_billing_catalog_gpu_skus_2025-06.json")
    offers = parse_gcp(raw)
    assert len(offers) > 1000
    assert {o.price_type for o in offers} == set(PRICE_TYPES)
    raw_prices = _gcp_raw_prices(raw)
    names_of = defaultdict(list)
    for name, region in LOCATION_REGIONS.items():
        names_of[region].append(name)
    for offer in offers:
        locations = names_of.get(offer.region, []) + [offer.region]
        matches = [p for d in _gcp_descriptions(offer, locations) for p in raw_prices.get(d, [])]
        assert matches, offer
        assert any(p == pytest.approx(offer.usd_per_hour, abs=1e-9) for p in matches), offer


@realdata
def test_realdata_gcp_2025_plausible_prices():
    offers = parse_gcp(cloud_file("gcp_billing_catalog_gpu_skus_2025-06.json"))
    price = {(o.gpu_name, o.region, o.price_type): o.usd_per_hour for o in offers}
    assert 2 < price["Nvidia Tesla A100", "Americas", "on_demand"] < 5
    assert 8 < price["Nvidia H100 80GB", "Americas", "on_demand"] < 13
    pairs = 0
    for (name, region, price_type), usd in price.items():
        if price_type != "on_demand":
            continue
        if (name, region, "spot") in price:
            assert price[name, region, "spot"] < usd, (name, region)
            pairs += 1
        if (name, region, "reserved_1y") in price and (name, region, "reserved_3y") in price:
            assert price[name, region, "reserved_3y"] < price[name, region, "reserved_1y"] < usd
    assert pairs > 200
    unknown = {o.gpu_name for o in offers if o.gpu is None}
    assert unknown == {"Nvidia Tesla P4", "Nvidia Tesla P100"}


@realdata
def test_realdata_gcp_2023_a100_americas():
    offers = parse_gcp(cloud_file("gcp_billing_catalog_skus_a100_2023.json"))
    assert {(o.region, o.price_type, o.gpu, o.usd_per_hour) for o in offers} == {
        (region, "on_demand", "a100-sxm4-40gb", 2.933908)
        for region in ("us-central1", "us-east1", "us-west1")
    }
