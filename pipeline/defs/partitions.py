"""Partitions: price observations are stored per observation day.

A backfill re-parses the archive for that day; it never re-scrapes, which would put today's
prices in yesterday's partition. The start covers the oldest bundled observation.
"""

import dagster as dg

from sources.cloud.providers import PROVIDERS

daily = dg.DailyPartitionsDefinition(start_date="2020-01-01", timezone="UTC", end_offset=1)

# Cloud prices are loaded per provider, so one provider failing (a schema change, a 429
# storm) fails only its own partition and the others still publish. The providers are
# the registry's (sources/cloud/providers.py), never a list kept here in step by hand.
CLOUD_PROVIDERS = tuple(sorted(PROVIDERS))
providers = dg.StaticPartitionsDefinition(list(CLOUD_PROVIDERS))
