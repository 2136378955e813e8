"""Cloud offer integrity in the pipeline: the load's gate and the main run's check.

Every provider's load passes the gate; the main run's check refuses to publish a night
whose cloud inputs failed it.

The rules are pure (sources/cloud/integrity.py); this module reads what they compare with
(bounded windows of `cloud_offers`, and in a bundled run the other providers' bundled
files), writes `cloud_quarantine`, and turns a refused night into a failed run.

What fails a run (exit non-zero, the previous release stays published) and what does not:
- routine: an offer out of bounds is quarantined (kept out of the model, shown in the
  input report) and the run goes on; identical duplicates collapse (counted);
- integrity failure: a provider's night is refused, because of conflicting duplicates
  (one offer at two prices) or because more than a quarter of its offers (and at least
  3) are out of bounds. Its load fails (`source_status` 'rejected', the reason in the
  detail), its offers of that night are not loaded, the other providers load as usual,
  and the main run's blocking check `cloud_offers_pass_integrity` fails, so nothing is
  published until the provider's answer is clean again.
"""

import datetime as dt
from collections.abc import Collection

import dagster as dg
import duckdb
import polars as pl
from dagster_duckdb import DuckDBResource

from pipeline.defs.metadata import KINDS
from pipeline.defs.resources import WAREHOUSE_POOL, GpuvalueSettings, open_warehouse
from sources.bundled import read_cloud_offers
from sources.cloud.integrity import (
    HISTORY_DAYS,
    REFERENCE_DAYS,
    Checked,
    IntegrityError,
    check_offers,
    collapse_duplicates,
)
from sources.cloud.providers import PROVIDERS
from warehouse.db import replace_rows

# What the rules read of a reference offer (its key first).
REFERENCE_COLUMNS = [
    "observed_at",
    "provider",
    "instance_type",
    "region",
    "price_type",
    "gpu_id",
    "gpu_count",
    "usd_per_hour",
    "usd_per_gpu_hour",
]
# The rows of a provider's loaded days, in cloud_offers and cloud_quarantine. The days'
# range is also given on the raw timestamp, so DuckDB skips every row group outside it by
# its min/max (offers arrive in day order) instead of casting every offer ever kept.
PROVIDER_DAYS = (
    "provider = ? AND CAST(observed_at AS DATE) IN (SELECT unnest(?::DATE[]))"
    " AND observed_at >= ? AND observed_at < CAST(? AS DATE) + INTERVAL 1 DAY"
)


def provider_days(provider: str, days: Collection[dt.date]) -> list:
    """PROVIDER_DAYS' parameters.

    No days (a night whose every offer was dropped) match no row: the bounds are NULL.
    """
    return [provider, list(days), min(days, default=None), max(days, default=None)]


def reference_offers(
    con: duckdb.DuckDBPyConnection, provider: str, days: Collection[dt.date]
) -> pl.DataFrame:
    """What `provider`'s offers of `days` are compared with, read in bounded windows.

    The provider's own offers of the `HISTORY_DAYS` before the first day, and each other
    provider's newest snapshot within `REFERENCE_DAYS` of the days (never all history).
    """
    first, last = min(days), max(days)
    return con.sql(
        "WITH near AS (SELECT * FROM cloud_offers WHERE provider <> $provider"
        " AND CAST(observed_at AS DATE) BETWEEN $near_from AND $near_to"
        # The same range on the raw timestamp, for row-group pruning (see PROVIDER_DAYS).
        " AND observed_at >= $near_from AND observed_at < $near_to + INTERVAL 1 DAY)"
        " SELECT * FROM near QUALIFY CAST(observed_at AS DATE) ="
        " max(CAST(observed_at AS DATE)) OVER (PARTITION BY provider)"
        " UNION ALL BY NAME SELECT * FROM cloud_offers WHERE provider = $provider"
        " AND CAST(observed_at AS DATE) >= $own_from AND CAST(observed_at AS DATE) < $own_to"
        " AND observed_at >= $own_from AND observed_at < $own_to",
        params={
            "provider": provider,
            "near_from": first - dt.timedelta(days=REFERENCE_DAYS),
            "near_to": last + dt.timedelta(days=REFERENCE_DAYS),
            "own_from": first - dt.timedelta(days=HISTORY_DAYS),
            "own_to": last,
        },
    ).pl()


def bundled_reference(
    settings: GpuvalueSettings, provider: str, known: frozenset[str]
) -> list[pl.DataFrame]:
    """The other providers' bundled offers: in a bundled run, the snapshot itself.

    So a bundled run checks each provider against all the others whatever the load order.
    A file that cannot be read is left out here: its own load reports it.
    """
    frames = []
    for other in PROVIDERS:
        path = settings.data_path("cloud", f"{other}.csv")
        if other == provider or not path.exists():
            continue
        try:
            frames.append(read_cloud_offers(path, known, PROVIDERS))
        except ValueError:
            continue
    return frames


def gate(
    context: dg.AssetExecutionContext,
    warehouse: DuckDBResource,
    settings: GpuvalueSettings,
    rows: pl.DataFrame,
    known: frozenset[str],
) -> tuple[Checked, int]:
    """One provider's rows through integrity: (kept and quarantined, duplicates collapsed).

    Writes the quarantined rows (`cloud_quarantine`, replaced per provider x day) and logs
    each one with its reason. Does not write `cloud_offers` (the caller does).

    Raises:
        IntegrityError: The night is refused (conflicting duplicates, or too many offers
            out of bounds: then the quarantine rows are written, marked `night_refused`).
    """
    provider = context.partition_key
    rows, duplicates = collapse_duplicates(rows)
    if rows.is_empty():
        return Checked(rows, rows.clear()), duplicates.collapsed
    days = sorted(set(rows["observed_at"].cast(pl.Date).to_list()))
    with open_warehouse(warehouse) as con:
        reference = reference_offers(con, provider, days)
        memory = dict(con.sql("SELECT gpu_id, memory_gb FROM gpus").fetchall())
    if not settings.live:
        extra = bundled_reference(settings, provider, known)
        reference = pl.concat(
            [f.select(REFERENCE_COLUMNS) for f in (reference, *extra)], how="vertical_relaxed"
        ).unique(REFERENCE_COLUMNS[:6], maintain_order=True)
    checked = check_offers(rows, reference, memory)
    refused = checked.rejection()
    quarantined = checked.quarantined.with_columns(night_refused=pl.lit(refused is not None))
    with open_warehouse(warehouse) as con:
        replace_rows(
            con, "cloud_quarantine", quarantined, PROVIDER_DAYS, provider_days(provider, days)
        )
    for row in quarantined.iter_rows(named=True):
        context.log.warning(
            f"cloud_offers[{provider}]: quarantined {row['gpu_id']} {row['price_type']} "
            f"({row['instance_type']}, {row['region']}) ${row['usd_per_gpu_hour']:g}/GPU-h: "
            f"{row['reason']}"
        )
    if refused is not None:
        raise IntegrityError(refused)
    return checked, duplicates.collapsed


@dg.asset(
    group_name="ingest",
    kinds=KINDS,
    pool=WAREHOUSE_POOL,
    deps=["cloud_offers"],
    description=(
        "One row per cloud offer kept out by integrity (cloud_quarantine, written with each "
        "provider's cloud_offers load; sources/cloud/integrity.py): this step counts them "
        "and the providers whose last load was refused, and its blocking check stops the "
        "run before the model when one was."
    ),
)
def cloud_integrity(warehouse: DuckDBResource) -> dg.MaterializeResult:
    """Count what integrity kept out: quarantined offers and refused providers."""
    with open_warehouse(warehouse) as con:
        quarantined = con.sql(
            "SELECT provider, rule, count(*) FROM cloud_quarantine q WHERE NOT night_refused"
            " AND CAST(observed_at AS DATE) = (SELECT max(CAST(observed_at AS DATE))"
            " FROM cloud_quarantine r WHERE r.provider = q.provider) GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        refused = refused_providers(con)
    return dg.MaterializeResult(
        metadata={
            "quarantined": sum(n for _, _, n in quarantined),
            "quarantined_by_rule": ", ".join(f"{p} {r}: {n}" for p, r, n in quarantined),
            "refused_providers": ", ".join(refused) or "none",
        }
    )


def refused_providers(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Providers whose last cloud load was refused by integrity, with the reason."""
    return dict(
        con.sql(
            "SELECT source, coalesce(detail, '') FROM source_status WHERE kind = 'cloud'"
            " AND status = 'rejected' ORDER BY source"
        ).fetchall()
    )


@dg.asset_check(
    pool=WAREHOUSE_POOL,
    asset=cloud_integrity,
    blocking=True,
    description=(
        "No provider's last cloud load was refused by integrity (conflicting duplicates, or "
        "over a quarter of its offers out of bounds); a refusal fails the run before the "
        "model, so the previous release stays published."
    ),
)
def cloud_offers_pass_integrity(warehouse: DuckDBResource) -> dg.AssetCheckResult:
    """Fail when a provider's night was refused (docs/reliability.md)."""
    with open_warehouse(warehouse) as con:
        refused = refused_providers(con)
    problems = [f"{provider}: {reason}" for provider, reason in refused.items()]
    return dg.AssetCheckResult(
        passed=not problems,
        description="; ".join(problems) if problems else "ok",
        metadata={"refused_providers": len(problems)},
    )
