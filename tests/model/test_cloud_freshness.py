"""Rent verdicts on live offers (issue 23 step 5): stale offers never rank or win a verdict."""

import datetime as dt
import json

import polars as pl
import pytest

from model.cloud import cheapest_offers, cloud_perf_per_dollar
from model.cloud_freshness import with_freshness
from model.parameters import ModelParameters, from_env
from model.recommendations import recommendations, rent_candidates
from model.verdicts import HEADLINE_KIND, HEADLINE_LIMIT, verdict_problems, verdicts
from reports.content.renting import best_rent_offers, rank_text
from reports.content.verdicts import verdict_cell
from sources.cloud.providers import pricing_kind
from sources.cloud.vast import parse_vast

RUN = dt.date(2026, 9, 20)
WINDOWS = ModelParameters().cloud_freshness_days
OLD, RECENT = dt.datetime(2026, 5, 20), dt.datetime(2026, 9, 10)  # 123 and 10 days old


def offer(gpu, provider, instance, price, observed, pricing, price_type="on_demand", **extra):
    """One cloud_offers row (1 GPU) with its pricing kind, as the ingest writes it."""
    return {
        "observed_at": observed,
        "provider": provider,
        "instance_type": instance,
        "region": extra.get("region"),
        "price_type": price_type,
        "gpu_id": gpu,
        "gpu_count": 1,
        "usd_per_hour": price,
        "usd_per_gpu_hour": price,
        "citation": "test",
        "pricing": pricing,
        "reliability": extra.get("reliability"),
    }


def offers() -> pl.DataFrame:
    """`cheap`: the cheapest, a 123-day-old marketplace offer (stale); `market`: a fresh
    marketplace offer from one host in Denmark; `dear`: a 123-day-old list price (fresh
    under the 180-day list window). Spot: only a stale RunPod community offer."""
    rows = [
        offer("cheap", "vast", "1x cheap #1", 0.10, OLD, "marketplace", region="Japan, JP, AS"),
        offer(
            "market",
            "vast",
            "1x market #7",
            0.30,
            RECENT,
            "marketplace",
            region="Denmark, DK, EU",
            reliability=0.97,
        ),  # fmt: skip
        offer("market", "vast", "1x market #8", 0.35, RECENT, "marketplace", region="Iceland"),
        offer("dear", "lambda", "gpu_1x_dear", 0.50, OLD, "list", region="us-east-1"),
        offer("cheap", "runpod", "cheap community", 0.05, OLD, "marketplace", "spot"),
    ]
    return pl.DataFrame(rows)


def relative() -> pl.DataFrame:
    return pl.DataFrame(
        {"gpu_id": ["cheap", "market", "dear"], "workload": "training_16bit", "value": 1.0,
         "method": "measured"}
    )  # fmt: skip


def cloud() -> pl.DataFrame:
    dated = with_freshness(offers(), WINDOWS, RUN)
    return cloud_perf_per_dollar(dated, relative(), RUN)


def test_windows_depend_on_how_the_price_is_set():
    dated = with_freshness(offers(), WINDOWS, RUN)
    fresh = dict(zip(dated["instance_type"], dated["fresh"], strict=True))
    assert fresh == {
        "1x cheap #1": False,  # marketplace, 123 d > 30
        "1x market #7": True,
        "1x market #8": True,
        "gpu_1x_dear": True,  # list price, 123 d <= 180
        "cheap community": False,
    }
    # A row loaded before its pricing was recorded gets the shortest window.
    unknown = with_freshness(offers().with_columns(pricing=pl.lit(None, pl.Utf8)), WINDOWS, RUN)
    assert not unknown.filter(pl.col("gpu_id") == "dear")["fresh"].item()
    # One window can be changed alone from the environment.
    longer = from_env(env={"GPUVALUE_CLOUD_FRESHNESS_DAYS": "marketplace=200"})
    assert longer.cloud_freshness_days == {"list": 180, "spot": 30, "marketplace": 200}
    with pytest.raises(ValueError, match="cloud_freshness_days"):
        from_env(env={"GPUVALUE_CLOUD_FRESHNESS_DAYS": "list=-1"})


def test_a_cheaper_stale_offer_is_not_ranked_and_a_dearer_fresh_one_is_rank_1():
    rows = cloud().filter(pl.col("price_type") == "on_demand")
    by_gpu = {r["gpu_id"]: r for r in rows.iter_rows(named=True)}
    assert by_gpu["cheap"]["perf_per_dollar"] > by_gpu["market"]["perf_per_dollar"]
    assert (by_gpu["cheap"]["rank"], by_gpu["cheap"]["fresh"]) == (None, False)
    assert by_gpu["cheap"]["offer_age_days"] == 123
    assert (by_gpu["market"]["rank"], by_gpu["dear"]["rank"]) == (1, 2)
    # The market pick: one listing at its price (the other host asks more), in Denmark.
    market = by_gpu["market"]
    assert (market["listings"], market["locations"], market["reliability"]) == (
        1,
        "Denmark, DK, EU",
        0.97,
    )
    # The site's rank column says why a GPU is not ranked.
    best = best_rent_offers(cloud()).filter(pl.col("price_type") == "on_demand")
    cheap = best.filter(pl.col("gpu_id") == "cheap").row(0, named=True)
    assert rank_text(cheap) == "not ranked: offer 123 d old, past its window"
    assert best.filter(pl.col("gpu_id") == "market")["rank"].item() == 1


def test_a_provider_with_fresh_and_stale_offers_is_priced_at_its_fresh_one():
    day = dt.datetime(2026, 7, 22)  # 60 days: past marketplace's 30, within list's 180
    mixed = pl.DataFrame(
        [
            offer("g", "runpod", "g community", 0.20, day, "marketplace"),
            offer("g", "runpod", "g secure", 0.40, day, "list"),
        ]
    )
    pick = cheapest_offers(with_freshness(mixed, WINDOWS, RUN)).row(0, named=True)
    assert (pick["instance_type"], pick["fresh"], pick["pricing"]) == ("g secure", True, "list")


def decide(cloud_perf: pl.DataFrame, budgets=(2500.0,)) -> pl.DataFrame:
    """The verdicts of a run whose only GPUs are the synthetic ones (no buy prices)."""
    gpus = pl.DataFrame({"gpu_id": ["cheap", "market", "dear"], "memory_gb": [8.0, 24.0, 48.0]})
    reps = pl.DataFrame(
        {
            "replicate": [i for i in range(20) for _ in range(3)],
            "gpu_id": ["cheap", "market", "dear"] * 20,
            "workload": "training_16bit",
            "value": [1.0 + 0.01 * (i % 3) for i in range(20) for _ in range(3)],
        }
    )
    rent = rent_candidates(cloud_perf, reps)
    tiers = (8.0,)
    recs = pl.concat(
        [
            recommendations(*rent, gpus, tiers, RUN),
            recommendations(*rent, gpus, (HEADLINE_LIMIT,), RUN),
        ]
    )
    perf = pl.DataFrame(
        schema={"gpu_id": pl.Utf8, "workload": pl.Utf8, "system_gpus": pl.Int32,
                "market": pl.Utf8, "perf_per_dollar": pl.Float64, "total_cost_usd": pl.Float64,
                "price_usd": pl.Float64, "price_method": pl.Utf8, "price_day": pl.Date,
                "relative_performance": pl.Float64, "method": pl.Utf8}
    )  # fmt: skip
    buy_reps = pl.DataFrame(
        schema={"replicate": pl.Int64, "gpu_id": pl.Utf8, "workload": pl.Utf8,
                "system_gpus": pl.Int32, "market": pl.Utf8, "perf_per_dollar": pl.Float64}
    )  # fmt: skip
    params = json.loads(ModelParameters(memory_tiers_gb=tiers).to_json())
    found = verdicts(
        perf, cloud_perf, recs, offers(), buy_reps, reps, params, RUN,
        ["training_16bit"], budgets, gpus=gpus,
    )  # fmt: skip
    assert verdict_problems(found, ["training_16bit"], tiers, budgets) == []
    return found


def cell(found: pl.DataFrame, kind: str, option: str) -> dict:
    return found.filter((pl.col("kind") == kind) & (pl.col("option") == option)).row(0, named=True)


def test_the_stale_offer_never_wins_a_verdict_and_the_fresh_dearer_one_does():
    found = decide(cloud())
    rent = found.filter(pl.col("option") == "rent_on_demand")
    # Every on-demand cell (budget, headline, memory) goes to the fresh offer; "cheap" would
    # win all of them on price.
    assert set(rent["gpu_id"]) == {"market"}
    head = cell(found, HEADLINE_KIND, "rent_on_demand")
    assert (head["provider"], head["age_days"], head["pricing"]) == ("vast", 10, "marketplace")
    # The pick rests on one host's machine, and says so, on the verdict and on the site.
    assert head["offer_caveat"].startswith("rests on a single marketplace listing (vast 1x")
    assert "Denmark, DK, EU" in head["offer_caveat"]
    lines = verdict_cell(head).lines
    assert head["offer_caveat"] in lines
    assert any("marketplace, 1 listing in Denmark, DK, EU" in line for line in lines)
    # A list-price pick has no marketplace caveat.
    listed = decide(cloud().filter(pl.col("gpu_id") != "market"))
    pick = cell(listed, HEADLINE_KIND, "rent_on_demand")
    assert (pick["gpu_id"], pick["offer_caveat"]) == ("dear", None)


def test_a_cell_without_a_fresh_offer_says_so_instead_of_picking_a_stale_one():
    found = decide(cloud())
    for kind in ("budget", HEADLINE_KIND, "memory"):
        spot = cell(found, kind, "rent_spot")
        assert spot["gpu_id"] is None, kind
        assert spot["why"].startswith("no offer observed within its freshness window ("), kind
        assert "marketplace 30 days" in spot["why"]
        assert "1 older offer(s) left out, the newest 123 days old" in spot["why"]
    # No offer at all (a GPU nobody rents): the old reason stands.
    bare = decide(cloud().filter(pl.col("price_type") == "on_demand"))
    why = cell(bare, "budget", "rent_spot")["why"]
    assert why == "no cloud offer is priced for this option yet"


def test_the_offer_kind_is_stated_once_per_provider():
    assert pricing_kind("vast", "4x RTX 4090 #12", "on_demand") == "marketplace"
    assert pricing_kind("runpod", "rtx-4090 community", "spot") == "marketplace"
    assert pricing_kind("runpod", "rtx-4090 secure", "spot") == "spot"
    assert pricing_kind("runpod", "rtx-4090 secure", "on_demand") == "list"
    assert pricing_kind("aws", "p5.48xlarge", "spot") == "spot"
    assert pricing_kind("hyperstack", "H100 PCIe", "spot") == "list"  # a rate-card price
    assert pricing_kind("coreweave", "HGX H100", "on_demand") == "list"
    with pytest.raises(ValueError, match="unknown cloud provider"):
        pricing_kind("nebius", "x", "spot")


def test_vast_offers_keep_their_host_reliability():
    body = {
        "offers": [
            {"id": 1, "machine_id": 7, "gpu_name": "RTX 4090", "num_gpus": 1,
             "gpu_ram": 24564, "dph_total": 0.4, "reliability2": 0.987,
             "geolocation": "Denmark, DK"},
            {"id": 2, "machine_id": 8, "gpu_name": "RTX 4090", "num_gpus": 1,
             "gpu_ram": 24564, "dph_total": 0.3, "reliability2": 0.5},
        ]
    }  # fmt: skip
    got = parse_vast(json.dumps(body).encode())
    assert [(o.instance_type, o.reliability, o.region) for o in got] == [
        ("1x RTX 4090 #7", 0.987, "Denmark, DK")
    ]
