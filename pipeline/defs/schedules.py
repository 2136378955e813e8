"""The nightly jobs: cloud offers per provider at 02:30 UTC, then the graph at 03:00 UTC.

The main graph is one run (not one per asset) because every step shares one DuckDB file,
which allows a single writer. Its partition is the day it starts: observations fetched that
night belong to that day. Cloud offers run first, one run per provider partition, so a
provider's failure fails only that run and the main graph uses its last good offers.
"""

import dagster as dg

from pipeline.defs.partitions import CLOUD_PROVIDERS

CLOUD = dg.AssetSelection.assets("cloud_offers")
# The catalog comes along so a first night on an empty warehouse works (cheap, idempotent).
CLOUD_RUN = CLOUD | dg.AssetSelection.assets("gpus")

# Cloud prices load first, one run per provider, so one provider's failure stays its own.
nightly_cloud_job = dg.define_asset_job(
    name="nightly_cloud",
    selection=CLOUD_RUN,
    description="The catalog, then one provider's cloud offers (one run per partition).",
    executor_def=dg.in_process_executor,
)

nightly_job = dg.define_asset_job(
    name="nightly",
    selection=dg.AssetSelection.all() - CLOUD,
    description="Ingest, model, report, site and publish, for the day's partition.",
    # Steps run one after another in one process: one DuckDB writer at a time, always.
    executor_def=dg.in_process_executor,
)


@dg.schedule(
    job=nightly_cloud_job,
    cron_schedule="30 2 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)
def nightly_cloud(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
    """One run per cloud provider, half an hour before the main nightly run."""
    day = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return [
        dg.RunRequest(run_key=f"nightly-cloud-{provider}-{day}", partition_key=provider)
        for provider in CLOUD_PROVIDERS
    ]


@dg.schedule(
    job=nightly_job,
    cron_schedule="0 3 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)
def nightly(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """Run the whole graph for today's partition."""
    day = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return dg.RunRequest(run_key=f"nightly-{day}", partition_key=day)
