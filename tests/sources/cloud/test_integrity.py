"""Cloud offer integrity rules (sources/cloud/integrity.py): pure, on small frames."""

import datetime as dt
import math

import polars as pl
import pytest

from sources.cloud.integrity import (
    CROSS_K_HIGH,
    CROSS_K_LOW,
    MIN_SCALE,
    IntegrityError,
    check_offers,
    collapse_duplicates,
    gpu_band,
    robust_band,
)

NIGHT = dt.datetime(2026, 11, 26, 3, 0)
MEMORY = {"h100-sxm5-80gb": 80.0, "rtx-4090": 24.0, "a100-sxm4-80gb": 80.0}


def offer(provider, gpu, price, kind="on_demand", instance=None, region="r1", count=1, at=NIGHT):
    return {
        "observed_at": at,
        "provider": provider,
        "instance_type": instance or f"{gpu} box",
        "region": region,
        "price_type": kind,
        "gpu_id": gpu,
        "gpu_count": count,
        "usd_per_hour": price * count,
        "usd_per_gpu_hour": price,
        "citation": "test",
    }


def frame(*rows):
    return pl.DataFrame(list(rows), schema_overrides={"observed_at": pl.Datetime("us")})


def market():
    """Four other providers' H100 and RTX 4090 offers on the night."""
    return frame(
        *(
            offer(p, "h100-sxm5-80gb", price)
            for p, price in (("aws", 6.88), ("lambda", 2.99), ("vast", 1.87), ("gcp", 5.38))
        ),
        offer("vast", "rtx-4090", 0.35),
        offer("aws", "h100-sxm5-80gb", 4.0, kind="spot"),
    )


def test_robust_band_scale_never_under_ln2():
    low, high = robust_band([2.0], CROSS_K_LOW, CROSS_K_HIGH)
    assert low == pytest.approx(2.0 / 2**CROSS_K_LOW)
    assert high == pytest.approx(2.0 * 2**CROSS_K_HIGH)
    assert robust_band([], 5) is None
    # A wide reference widens the band: 1.4826 MAD of ln prices.
    prices = [1.0, 2.0, 8.0]
    logs = [math.log(p) for p in prices]
    scale = 1.4826 * sorted(abs(v - logs[1]) for v in logs)[1]
    assert scale > MIN_SCALE
    assert robust_band(prices, 1)[0] == pytest.approx(math.exp(logs[1] - scale))


def test_gpu_band_from_memory():
    assert gpu_band(80.0) == (0.08, 80.0)
    assert gpu_band(6.0) == (0.01, 6.0)  # the absolute floor
    assert gpu_band(None) == (0.01, math.inf)


def test_h1_tiny_price_is_quarantined_with_every_reason():
    rows = frame(
        offer("runpod", "h100-sxm5-80gb", 0.0001),
        offer("runpod", "h100-sxm5-80gb", 1.75, kind="spot"),  # above $0.0001, not the list
        offer("runpod", "rtx-4090", 0.34),
    )
    checked = check_offers(rows, market(), MEMORY)
    assert checked.kept.select("gpu_id", "price_type").rows() == [
        ("h100-sxm5-80gb", "spot"),
        ("rtx-4090", "on_demand"),
    ]
    bad = checked.quarantined.row(0, named=True)
    assert bad["rule"] == "gpu_band"
    assert (
        "$0.0001/GPU-h is outside h100-sxm5-80gb's plausible band $0.0800-$80.00" in (bad["reason"])
    )
    assert "the other providers' on_demand median" in bad["reason"]
    assert "aws $6.88" in bad["reason"] and "vast $1.87" in bad["reason"]
    assert (bad["low_usd_per_gpu_hour"], bad["high_usd_per_gpu_hour"]) == (0.08, 80.0)
    assert checked.summary() == "1 quarantined (gpu_band: 1)"
    assert checked.rejection() is None  # one of three: routine, not a refused night


def test_legitimate_spread_passes_and_a_cheap_outlier_does_not():
    # 16x under the others' median (a marketplace V100 against a hyperscaler) passes; 40x
    # under does not, though it is inside the GPU band.
    ref = frame(offer("azure", "h100-sxm5-80gb", 3.06), offer("aws", "h100-sxm5-80gb", 3.37))
    ok = check_offers(frame(offer("vast", "h100-sxm5-80gb", 0.2)), ref, MEMORY)
    assert ok.quarantined.is_empty()
    bad = check_offers(frame(offer("vast", "h100-sxm5-80gb", 0.09)), ref, MEMORY)
    assert bad.quarantined["rule"].to_list() == ["cross_provider"]
    # Above the others is allowed further (a dear region is never a pick): 35x passes.
    dear = check_offers(
        frame(offer("azure", "h100-sxm5-80gb", 6.73)),
        frame(offer("runpod", "h100-sxm5-80gb", 0.19)),
        MEMORY,
    )
    assert dear.quarantined.is_empty()


def test_history_catches_a_swapped_gpu_count():
    # An 8-GPU instance priced as 1 GPU: 8x its own price of last week; the other
    # providers' band alone would let it through.
    past = offer("aws", "a100-sxm4-80gb", 4.1, instance="p4de", at=NIGHT - dt.timedelta(days=7))
    now = offer("aws", "a100-sxm4-80gb", 32.8, instance="p4de")
    others = offer("gcp", "a100-sxm4-80gb", 3.7)
    checked = check_offers(frame(now), frame(past, others), MEMORY)
    assert checked.quarantined["rule"].to_list() == ["instance_history"]
    assert "8x the same instance's median $4.10" in checked.quarantined["reason"][0]
    # History older than the window is not evidence.
    old = {**past, "observed_at": NIGHT - dt.timedelta(days=120)}
    assert check_offers(frame(now), frame(old, others), MEMORY).quarantined.is_empty()
    # A reload of the same night is not its own history.
    same = {**now, "usd_per_gpu_hour": 4.1}
    assert check_offers(frame(now), frame(same), MEMORY).quarantined.is_empty()


def test_new_instance_is_checked_against_the_providers_own_band():
    past = offer("aws", "a100-sxm4-80gb", 4.1, instance="p4de", at=NIGHT - dt.timedelta(days=3))
    now = offer("aws", "a100-sxm4-80gb", 0.3, instance="p5new")
    checked = check_offers(frame(now), frame(past), MEMORY)
    assert checked.quarantined["rule"].to_list() == ["provider_history"]


def test_spot_above_on_demand_is_quarantined_but_never_refuses_a_night():
    rows = frame(
        *(offer("gcp", "h100-sxm5-80gb", 4.58, instance=f"i{i}") for i in range(4)),
        *(offer("gcp", "h100-sxm5-80gb", 5.13, "spot", instance=f"i{i}") for i in range(4)),
    )
    checked = check_offers(rows, frame(offer("aws", "h100-sxm5-80gb", 6.0)), MEMORY)
    assert checked.quarantined["rule"].unique().to_list() == ["discount_above_list"]
    assert (
        "spot $5.13/GPU-h is above the same instance's on-demand $4.58"
        in (checked.quarantined["reason"][0])
    )
    assert checked.kept.height == 4 and checked.rejection() is None


def test_many_offers_out_of_bounds_refuse_the_night():
    rows = frame(*(offer("runpod", "h100-sxm5-80gb", 0.001, instance=f"i{i}") for i in range(3)))
    rows = pl.concat([rows, frame(offer("runpod", "rtx-4090", 0.34))])
    checked = check_offers(rows, market(), MEMORY)
    assert checked.rejection().startswith("integrity: 3 of 4 offers out of bounds")


def test_identical_duplicates_collapse_counted_and_conflicts_refuse():
    a = offer("skypilot", "rtx-4090", 0.34, instance="1x-RTX4090")
    rows, dups = collapse_duplicates(frame(a, a, a))
    assert (rows.height, dups.collapsed) == (1, 2)
    with pytest.raises(IntegrityError, match=r"1 conflicting duplicate offer.*\$0.34, \$0.4/h"):
        collapse_duplicates(frame(a, {**a, "usd_per_hour": 0.4, "usd_per_gpu_hour": 0.4}))
    # One named instance at two GPU counts is a conflict too.
    with pytest.raises(IntegrityError, match=r"x \[1, 8\] GPUs"):
        collapse_duplicates(frame(a, {**a, "gpu_count": 8}))
    # Other days, regions or price types are other offers.
    other = [{**a, "region": "r2"}, {**a, "observed_at": NIGHT - dt.timedelta(days=1)}]
    assert collapse_duplicates(frame(a, *other))[1].collapsed == 0


def test_bundled_like_night_keeps_everything():
    rows = frame(offer("lambda", "h100-sxm5-80gb", 2.99), offer("lambda", "rtx-4090", 0.5))
    checked = check_offers(rows, market(), MEMORY)
    assert checked.quarantined.is_empty() and checked.summary() == ""
    assert checked.kept.columns == rows.columns
