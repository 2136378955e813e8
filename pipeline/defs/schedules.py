"""The nightly job: the whole graph, as one run, at 03:00 UTC.

One run (not one per asset) because every step shares one DuckDB file, which allows a
single writer. The run's partition is the day it starts: observations fetched that night
belong to that day.
"""

import dagster as dg

nightly_job = dg.define_asset_job(
    name="nightly",
    selection=dg.AssetSelection.all(),
    description="Ingest, model, report, site and publish, for the day's partition.",
    # Steps run one after another in one process: one DuckDB writer at a time, always.
    executor_def=dg.in_process_executor,
)


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
