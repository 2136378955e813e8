"""The production profile, for real: PostgreSQL, the daemon and webserver, one scheduled tick.

Debian's PostgreSQL runs a cluster of the test's own (deploy/postgres.py, as `make
postgres` does); the daemon and the webserver run on deploy/dagster.yaml (as `make prod`
does, deploy/prod.py), with the nightly schedule turned on and its cron set to every minute
(GPUVALUE_NIGHTLY_CRON), so the scheduler launches one real `nightly` run for today's
partition within a minute. The test waits for that run, then checks it succeeded through
the instance, through the webserver's GraphQL API, and in PostgreSQL's own tables.

What only this test exercises is that path: the schedule's tick, the queued run, its own
process, the pool and every event in PostgreSQL. The graph itself is the offline build's
(`built`, tests/conftest.py), so the night runs where a deployment's next night would: on a
copy of the bundled build (warehouse, releases, site, and the cloud offers the 02:30
`nightly_cloud` runs would have loaded). Today's partition has no bundled retail
observations, so the run models the same prices again and publishes a new release: the
whole graph, but a small night, and its charts come from the session's chart cache as a
deployment's do from the night before. Skipped when PostgreSQL's server binaries are
missing or it cannot start here. Nothing leaves 127.0.0.1.
"""

import datetime as dt
import json
import os
import shutil
import socket
import tempfile
import time
import urllib.request
from pathlib import Path

import dagster as dg
import psycopg2
import pytest

from deploy import postgres, prod
from tests.conftest import chart_cache, copy_build

# One tick a minute, so the first comes within 60 s of the schedule being turned on; the
# run then takes about a minute on two idle cores. The limit is a hang detector, not a
# timing assertion: at load average ~10 the run took over 300 s (seen twice), so it is
# generous.
RUN_TIMEOUT_S = 900


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def graphql(port: int, query: str) -> dict:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)["data"]


def wait_for_webserver(port: int, deadline: float) -> None:
    while True:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(1)


def stop_schedule(port: int, name: str) -> None:
    """Turn a running schedule off through the webserver's GraphQL API."""
    found = graphql(
        port,
        '{ scheduleOrError(scheduleSelector: {repositoryLocationName: "gpuvalue", '
        f'repositoryName: "__repository__", scheduleName: "{name}"}}) '
        "{ __typename ... on Schedule { id } } }",
    )["scheduleOrError"]
    assert found["__typename"] == "Schedule", found
    stopped = graphql(
        port,
        f'mutation {{ stopRunningSchedule(id: "{found["id"]}") {{ __typename '
        "... on ScheduleStateResult { scheduleState { status } } } }",
    )["stopRunningSchedule"]
    assert stopped == {"__typename": "ScheduleStateResult", "scheduleState": {"status": "STOPPED"}}


def log_tail(profile: prod.Profile) -> str:
    return "\n".join(
        f"--- {p.name}\n" + p.read_text(encoding="utf-8", errors="replace")[-3000:]
        for p in sorted(profile.logs.glob("*.log"))
    )


@pytest.fixture
def cluster(monkeypatch):
    """A PostgreSQL cluster of this test's own on a free port, stopped and removed after."""
    try:
        bindir = postgres.find_bindir()
    except postgres.PostgresUnavailable as exc:
        pytest.skip(str(exc))
    # Not under tmp_path: pytest makes its base folder 0700 for root, and as root the
    # server runs as the postgres user, which must reach the cluster folder.
    root = Path(tempfile.mkdtemp(prefix="gpuvalue-pg-"))
    os.chmod(root, 0o755)
    c = postgres.Cluster(root, free_port(), bindir)
    try:
        try:
            env = postgres.start(c)
        except postgres.PostgresUnavailable as exc:
            pytest.skip(f"PostgreSQL cannot start here: {exc}")
        for key, value in env.items():
            # The test process opens the same instance, whose dagster.yaml reads these.
            monkeypatch.setenv(key, value)
        yield c, env
    finally:
        try:
            postgres.stop(c)
        finally:
            shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow(seconds=150)
def test_a_scheduled_tick_launches_a_nightly_run_that_succeeds(
    built, cluster, tmp_path, monkeypatch
):
    c, pg_env = cluster
    started = time.monotonic()
    # The processes' working directory: site/, .build/ and releases/ are the copy's.
    work = copy_build(built, tmp_path / "prod").root
    release_before = (work / "published").resolve()
    profile = prod.Profile(home=tmp_path / "dagster_home", port=free_port())
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GPUVALUE_", "DAGSTER_"))}
    base.update(
        pg_env,
        GPUVALUE_WAREHOUSE=str(work / "gpuvalue.duckdb"),
        GPUVALUE_PUBLISHED_DIR=str(work / "published"),
        GPUVALUE_NIGHTLY_CRON="* * * * *",
    )
    env = prod.environment(profile, base)
    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
    prod.prepare_home(profile)
    # As `make prod` does: the pool sized for the warehouse, a DuckDB file here (one slot).
    assert prod.set_pool_limit(env) == 1
    # The run renders its charts in a view of the session's chart cache.
    with chart_cache(work / ".build"):
        try:
            prod.spawn(profile, env, cwd=work)
            prod.start_schedules(env, ("nightly",))
            switched_on = dt.datetime.now(dt.UTC)
            deadline = time.monotonic() + RUN_TIMEOUT_S
            with dg.DagsterInstance.get() as instance:
                run, stopped = None, False
                while True:
                    # The first tick's run (newest first). Once it is there the schedule is
                    # turned off, through the webserver, as an operator would: the next
                    # minute's tick would launch a second run (a process of its own, ~5 s of
                    # CPU to start, then the whole graph once the first run frees the pool)
                    # that nothing reads.
                    runs = instance.get_runs(dg.RunsFilter(job_name="nightly"))
                    run = runs[-1] if runs else None
                    if run is not None and not stopped:
                        wait_for_webserver(profile.port, deadline)
                        stop_schedule(profile.port, "nightly")
                        stopped = True
                    if run is not None and run.is_finished:
                        break
                    assert time.monotonic() < deadline, (
                        f"no finished nightly run after {RUN_TIMEOUT_S} s "
                        f"(run: {run and run.status})\n{log_tail(profile)}"
                    )
                    time.sleep(2)
                failures = [
                    f"{e.step_key}: {e.dagster_event.event_specific_data.error.message[:800]}"
                    for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_FAILURE)
                ]
                assert run.status == dg.DagsterRunStatus.SUCCESS, (failures, log_tail(profile))
                # The run is the schedule's, for the partition of its tick's day.
                assert run.tags["dagster/schedule_name"] == "nightly"
                tick_day = run.tags["dagster/partition"]
                assert tick_day in {
                    switched_on.date().isoformat(),
                    dt.datetime.now(dt.UTC).date().isoformat(),
                }
                assert run.tags["dagster/run_key"] == f"nightly-{tick_day}"

            # The webserver answers for the same instance.
            wait_for_webserver(profile.port, deadline)
            data = graphql(
                profile.port,
                f'{{ runOrError(runId: "{run.run_id}") {{ ... on Run {{ status jobName }} }} }}',
            )
            assert data["runOrError"] == {"status": "SUCCESS", "jobName": "nightly"}
        finally:
            prod.stop(profile)

    # The run, its events and the schedule's tick are rows in PostgreSQL, not SQLite files.
    assert not list(profile.home.rglob("*.db"))
    with (
        psycopg2.connect(
            host="127.0.0.1",
            port=c.port,
            user=pg_env["DAGSTER_PG_USERNAME"],
            password=pg_env["DAGSTER_PG_PASSWORD"],
            dbname=pg_env["DAGSTER_PG_DB"],
        ) as con,
        con.cursor() as cur,
    ):
        cur.execute("SELECT status FROM runs WHERE run_id = %s", (run.run_id,))
        assert cur.fetchall() == [("SUCCESS",)]
        cur.execute(
            "SELECT count(DISTINCT asset_key) FROM event_logs "
            "WHERE run_id = %s AND dagster_event_type = 'ASSET_MATERIALIZATION'",
            (run.run_id,),
        )
        assert cur.fetchone()[0] >= 20  # every asset of the nightly job
        cur.execute("SELECT count(*) FROM job_ticks WHERE status = 'SUCCESS'")
        assert cur.fetchone()[0] >= 1
        # The warehouse pool's single slot is kept there too.
        cur.execute('SELECT concurrency_key, "limit" FROM concurrency_limits')
        assert ("gpuvalue_warehouse", 1) in cur.fetchall()
    # And the real job ran: it published a new release, with its site and warehouse.
    assert (work / "published").resolve() != release_before
    assert (work / "published" / "gpuvalue.duckdb").exists()
    assert (work / "site" / "latest" / "index.html").exists()
    print(f"production tick test: {time.monotonic() - started:.0f} s")
