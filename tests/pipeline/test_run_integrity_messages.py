"""What `make run` says about cloud integrity (pipeline/run.py): pure message helpers."""

import polars as pl

from pipeline.run import cloud_failure, quarantine_lines


def test_a_refused_night_says_the_run_will_not_publish():
    line = cloud_failure("runpod", "cloud_offers: integrity: 1 conflicting duplicate offer(s)")
    assert "refused by integrity" in line and "will not publish" in line
    assert "keeps whatever offers" in cloud_failure("aws", "cloud_offers: HTTP 503")


def test_the_summary_lists_each_quarantined_offer_with_its_rule():
    rows = pl.DataFrame(
        {
            "provider": ["runpod"],
            "gpu_id": ["h100-sxm5-80gb"],
            "price_type": ["on_demand"],
            "usd_per_gpu_hour": [0.0001],
            "rule": ["gpu_band"],
            "reason": ["$0.0001/GPU-h is outside h100-sxm5-80gb's plausible band"],
        }
    )
    lines = quarantine_lines(rows)
    assert lines[1] == "Cloud offers quarantined by integrity (kept out of the model): 1"
    assert "runpod" in lines[2] and "$0.0001/GPU-h  gpu_band: $0.0001/GPU-h is outside" in lines[2]
    assert quarantine_lines(rows.clear())[1] == "Cloud offers quarantined by integrity: none."
