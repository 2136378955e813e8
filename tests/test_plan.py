from urllib.parse import parse_qs, urlparse

import pytest

from sources.bundled import DATA_DIR, read_gpu_specs
from sources.retail.plan import search_plan, search_query


@pytest.mark.parametrize(
    ("name", "vendor", "query"),
    [
        ("GeForce RTX 3060 12 GB", "nvidia", "RTX 3060 12GB"),
        ("GeForce RTX 4070 Ti SUPER", "nvidia", "RTX 4070 Ti SUPER"),
        ("Tesla V100 SXM2 32 GB", "nvidia", "V100 SXM2 32GB"),
        ("RTX 6000 Ada Generation", "nvidia", "RTX 6000 Ada"),
        ("GH200 Grace Hopper Superchip (H100 GPU 96 GB HBM3)", "nvidia", "GH200"),
        ("Instinct MI300X", "amd", "AMD MI300X"),
        ("Radeon RX 7900 XTX", "amd", "RX 7900 XTX"),
    ],
)
def test_search_query(name, vendor, query):
    assert search_query(name, vendor) == query


def test_plan_covers_every_gpu_on_both_sites_and_respects_the_budget():
    catalog = read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv").to_dicts()
    # Amazon's budget covers page 1 of every catalog GPU and some page 2s.
    budget = {"amazon": len(catalog) + 18, "ebay": 2 * len(catalog) + 10}
    plan = search_plan(catalog, pages_per_query=2, budget=budget)
    amazon = [r for r in plan if r.source == "amazon"]
    ebay = [r for r in plan if r.source == "ebay"]
    assert len(amazon) == len(catalog) + 18  # budget cut
    assert len(ebay) == 2 * len(catalog)
    # Page 1 of every GPU before any page 2: the cut drops depth, not GPUs.
    assert {r.gpu_id for r in amazon if r.page == 1} == {row["gpu_id"] for row in catalog}
    sold = parse_qs(urlparse(ebay[0].url).query)
    assert sold["LH_Sold"] == ["1"] and sold["LH_Complete"] == ["1"]
    assert {r.market for r in amazon} == {"new"} and {r.market for r in ebay} == {"used"}


def test_zero_budget_plans_nothing():
    catalog = [{"gpu_id": "rtx-4090", "name": "GeForce RTX 4090", "vendor": "nvidia"}]
    assert search_plan(catalog, budget={}) == []
