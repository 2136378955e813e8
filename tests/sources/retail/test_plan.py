import datetime as dt
import math
from urllib.parse import parse_qs, urlparse

import pytest

from sources.bundled import DATA_DIR, read_gpu_specs
from sources.retail.plan import default_budget, search_plan, search_query, unsearched


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


def catalog_rows():
    return read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv").to_dicts()


def test_the_default_budget_covers_the_whole_catalog_at_full_depth():
    catalog = catalog_rows()
    for pages in (1, 2):
        plan = search_plan(catalog, pages_per_query=pages)
        for source in ("amazon", "ebay"):
            requests = [r for r in plan if r.source == source]
            assert len(requests) == default_budget(len(catalog), pages) == pages * len(catalog)
            assert {(r.gpu_id, r.page) for r in requests} == {
                (row["gpu_id"], page) for row in catalog for page in range(1, pages + 1)
            }
        assert unsearched(catalog, plan) == {"amazon": [], "ebay": []}
    # A source set to None is derived too; a missing source gets nothing.
    plan = search_plan(catalog, pages_per_query=1, budget={"amazon": None})
    assert {r.source for r in plan} == {"amazon"} and len(plan) == len(catalog)


def test_a_budget_below_the_catalog_rotates_whole_gpus_by_night_and_reports_them():
    catalog = catalog_rows()
    n, budget = len(catalog), 60
    night = dt.date(2026, 5, 1)
    seen: set[str] = set()
    nights = math.ceil(n / budget)
    for offset in range(nights):
        day = night + dt.timedelta(days=offset)
        plan = search_plan(catalog, pages_per_query=2, budget={"amazon": budget}, day=day)
        assert search_plan(catalog, 2, {"amazon": budget}, day=day) == plan  # a rerun agrees
        assert len(plan) == budget
        assert {r.page for r in plan} == {1}  # no depth while any GPU is left out
        searched = {r.gpu_id for r in plan}
        assert len(searched) == budget
        skipped = unsearched(catalog, plan)
        assert sorted(searched | set(skipped["amazon"])) == sorted(r["gpu_id"] for r in catalog)
        assert not searched & set(skipped["amazon"])
        assert skipped["ebay"] == sorted(r["gpu_id"] for r in catalog)  # budget 0
        seen |= searched
    # Every GPU within ceil(N / B) nights.
    assert seen == {r["gpu_id"] for r in catalog}
    # The window is gpu_ids in sorted order, wrapping around (the documented rule).
    ids = sorted(r["gpu_id"] for r in catalog)
    start = (night.toordinal() * budget) % n
    plan = search_plan(catalog, 1, {"amazon": budget}, day=night)
    assert {r.gpu_id for r in plan} == {ids[(start + i) % n] for i in range(budget)}
