"""The input report's cloud quarantine: offers integrity kept out of the model, and why.

The rows are `cloud_quarantine`'s for each provider's newest loaded night on or before the
run date (`Dataset.quarantine`); the rules are sources/cloud/integrity.py's (methodology,
"Cloud offer integrity").
"""

import polars as pl

from reports.content.blocks import Section, frame_table
from reports.dataset import Dataset

_RULES = (
    "`gpu_band`: outside the GPU's plausible band (at least $0.01 and $0.001 per GB of "
    "memory per GPU-hour, at most $1.00 per GB); `discount_above_list`: a spot or reserved "
    "price above the same instance's on-demand price; `instance_history`: over 3.5x from the "
    "same instance's median of the last 90 days; `provider_history`: outside the provider's "
    "own band for the GPU; `cross_provider`: outside the other providers' band for the GPU "
    "and price type."
)


def quarantine_section(ds: Dataset) -> Section:
    """Cloud offers left out by integrity, one row each with its rule and reason."""
    rows = ds.quarantine
    section = Section("quarantine", "Cloud offers: quarantined before publish")
    if rows.is_empty():
        section.paragraphs.append(
            "No cloud offer was quarantined: every offer of each provider's newest night "
            "passed the integrity rules (its own history, the other providers, the GPU's "
            "plausible band; duplicates and spot above on-demand). " + _RULES
        )
        return section
    refused = rows.filter(pl.col("night_refused"))
    section.paragraphs.append(
        f"{rows.height} cloud offer(s) failed an integrity rule and were kept out of every "
        "table, ranking and verdict; each is listed with the first rule it failed and every "
        "reason. " + _RULES
    )
    if refused.height:
        names = ", ".join(sorted(set(refused["provider"])))
        section.paragraphs.append(
            f"The whole night of {names} was refused (too many offers out of bounds): none "
            "of its offers of that night were loaded; its previous offers are used."
        )
    shown = rows.sort("provider", "gpu_id", "price_type", "usd_per_gpu_hour").with_columns(
        day=pl.col("observed_at").cast(pl.Date).cast(pl.Utf8),
        offer=pl.concat_str(
            pl.col("instance_type").fill_null(""),
            pl.col("region").fill_null(""),
            separator=", ",
        ).str.strip_chars(", "),
        price=pl.format("${}", pl.col("usd_per_gpu_hour").round_sig_figs(4)),
    )
    section.tables.append(
        frame_table(
            shown,
            {
                "provider": "provider",
                "day": "night",
                "gpu_id": "GPU",
                "price_type": "price type",
                "offer": "instance, region",
                "price": "USD/GPU-h",
                "rule": "rule",
                "reason": "why",
            },
        )
    )
    return section
