"""The nightly jobs: cloud offers per provider at 02:30 UTC, then the graph at 03:00 UTC.

The main graph is one run (not one per asset) because every step shares one DuckDB file,
which allows a single writer. Its partition is the day it starts: observations fetched that
night belong to that day. Cloud offers run first, one run per provider partition, so a
provider's failure fails only that run and the main graph uses its last good offers.

Two environment variables serve the production profile (deploy/, docs/deployment.md) and
change nothing when unset: GPUVALUE_EXECUTOR=multiprocess runs the nightly graph's steps in
processes of their own, and GPUVALUE_NIGHTLY_CRON replaces the nightly cron (its test sets
every minute, so a real scheduled tick fires within one).
"""

import os

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


def nightly_executor() -> dg.ExecutorDefinition:
    """In-process by default; the multiprocess executor when GPUVALUE_EXECUTOR=multiprocess.

    In one process, steps run one after another: one DuckDB writer at a time, always. The
    multiprocess executor runs ready steps side by side (two, the machine's cores) while
    the single slot of the `gpuvalue_warehouse` pool keeps warehouse writes serial; but each
    step then loads the code location in a process of its own (seconds per step, ~30 steps),
    and nearly every step touches the one DuckDB file, so it pays only with a warehouse that
    takes concurrent writers (docs/deployment.md).
    """
    executor = os.environ.get("GPUVALUE_EXECUTOR", "in_process")
    if executor == "multiprocess":
        return dg.multiprocess_executor.configured(
            {"max_concurrent": 2, "start_method": {"forkserver": {}}}
        )
    if executor == "k8s":
        # The reference cluster deployment (deploy/k8s): each step a Kubernetes Job. Its
        # image installs dagster-k8s; this environment does not, hence the late import.
        from dagster_k8s import k8s_job_executor

        return k8s_job_executor
    return dg.in_process_executor


nightly_job = dg.define_asset_job(
    name="nightly",
    selection=dg.AssetSelection.all() - CLOUD,
    description="Ingest, model, report, site and publish, for the day's partition.",
    executor_def=nightly_executor(),
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
    cron_schedule=os.environ.get("GPUVALUE_NIGHTLY_CRON") or "0 3 * * *",
    execution_timezone="UTC",
    default_status=dg.DefaultScheduleStatus.STOPPED,
)
def nightly(context: dg.ScheduleEvaluationContext) -> dg.RunRequest:
    """Run the whole graph for today's partition."""
    day = context.scheduled_execution_time.strftime("%Y-%m-%d")
    return dg.RunRequest(run_key=f"nightly-{day}", partition_key=day)
