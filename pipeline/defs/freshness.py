"""Freshness policies of the price and cloud assets (Dagster 1.13 `FreshnessPolicy`).

Dagster judges an asset by the time since its last materialization, the report by the age
of its data (`stale_after_days`); the windows tie the two together. The nightly jobs
materialize these assets once a day, so Dagster warns once a night has been missed
(36 hours: a day plus a late run's slack) and fails when the asset has not run for as long
as the report allows its kind of input to age before calling it stale (retail prices 180
days, cloud prices 30): by then the site says so too.
"""

import datetime as dt

import dagster as dg

from model.parameters import ModelParameters

# stale_after_days has no GPUVALUE_* override, so the defaults are the run's values.
_STALE_AFTER_DAYS = ModelParameters().stale_after_days
_MISSED_NIGHT = dt.timedelta(hours=36)

RETAIL_PRICES = dg.FreshnessPolicy.time_window(
    fail_window=dt.timedelta(days=_STALE_AFTER_DAYS["retail prices"]), warn_window=_MISSED_NIGHT
)
CLOUD_PRICES = dg.FreshnessPolicy.time_window(
    fail_window=dt.timedelta(days=_STALE_AFTER_DAYS["cloud prices"]), warn_window=_MISSED_NIGHT
)
