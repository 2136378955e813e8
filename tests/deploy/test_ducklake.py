"""The warehouse on a DuckLake: PostgreSQL catalog, Parquet files, two writers at once.

Runs in the pinned DuckLake environment (deploy/ducklake: DuckDB 1.5.5 with the ducklake and
postgres_scanner extensions from PyPI), which `.ci/run` creates and runs this module in
with GPUVALUE_DUCKLAKE_REQUIRED=1: there, anything that stops it from running fails it. In
the project's own environment (DuckDB 2.0, no DuckLake extension from a package registry)
and where PostgreSQL's server is missing, it is skipped with the reason.

What it shows, against a real PostgreSQL cluster of its own (deploy/postgres.py):
- every migration applies on the lake (through `ducklake_sql`), giving the same tables and
  columns as on a DuckDB file;
- two `nightly_cloud` runs of two providers, started together in two processes on one
  PostgreSQL-backed Dagster instance whose warehouse pool has room for both, both succeed
  and every row each reported lands once (the catalog both load is there once);
- a real conflict: a load whose transaction overlaps another's commit is refused by
  DuckLake at COMMIT and retried on the new snapshot; with retries off it fails loudly.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest

from deploy import postgres
from pipeline.defs.resources import WAREHOUSE_POOL, apply_pool_limit
from warehouse import db
from warehouse.location import close_attached, packaged_extension, parse

ROOT = Path(__file__).resolve().parents[2]
PROVIDERS = ("coreweave", "lambda")  # two small bundled files; one is replayed through its parser
REQUIRED = os.environ.get("GPUVALUE_DUCKLAKE_REQUIRED") == "1"
RUN_TIMEOUT_S = 600


def cannot_run(reason: str):
    """Skip with the reason; in the CI run that must exercise DuckLake, fail instead."""
    if REQUIRED:
        pytest.fail(f"the DuckLake test must run here (GPUVALUE_DUCKLAKE_REQUIRED=1): {reason}")
    pytest.skip(reason)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def catalog():
    """A PostgreSQL cluster with a `lake` database; yields (environment, cluster, root)."""
    if packaged_extension("ducklake") is None:
        cannot_run(
            f"DuckDB {duckdb.__version__} has no DuckLake extension installed from a package "
            "registry; this module runs in deploy/ducklake's environment (.ci/run)"
        )
    try:
        bindir = postgres.find_bindir()
    except postgres.PostgresUnavailable as exc:
        cannot_run(str(exc))
    # Not under pytest's tmp_path: as root the server runs as `postgres`, which must reach it.
    root = Path(tempfile.mkdtemp(prefix="gpuvalue-lake-"))
    os.chmod(root, 0o755)
    cluster = postgres.Cluster(root / "pg", free_port(), bindir)
    (root / "pg").mkdir()
    try:
        try:
            env = postgres.start(cluster)
            postgres.create_database(cluster, "lake")
        except postgres.PostgresUnavailable as exc:
            cannot_run(f"PostgreSQL cannot start here: {exc}")
        # The password reaches libpq through its own variable, never through the setting.
        saved = os.environ.get("PGPASSWORD")
        os.environ["PGPASSWORD"] = env["DAGSTER_PG_PASSWORD"]
        try:
            yield env, cluster, root
        finally:
            close_attached()
            if saved is None:
                os.environ.pop("PGPASSWORD", None)
            else:
                os.environ["PGPASSWORD"] = saved
    finally:
        try:
            postgres.stop(cluster)
        finally:
            shutil.rmtree(root, ignore_errors=True)


def _lake(catalog, name: str) -> tuple:
    env, cluster, root = catalog
    data = root / "data" / name
    setting = (
        f"ducklake:postgres:dbname=lake host=127.0.0.1 port={cluster.port} "
        f"user={env['DAGSTER_PG_USERNAME']} (DATA_PATH '{data}/', METADATA_SCHEMA '{name}')"
    )
    return setting, env, cluster, data


@pytest.fixture(scope="module")
def lake(catalog):
    """One lake for the in-process tests (migrated by the first that opens it)."""
    return _lake(catalog, "shared")


@pytest.fixture
def new_lake(catalog):
    """A lake nobody has opened yet: its first writers also create it and migrate it."""
    return _lake(catalog, "runs")


def columns(con: duckdb.DuckDBPyConnection) -> set[tuple]:
    rows = con.sql(
        "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
        "WHERE table_catalog = current_database() AND table_schema = 'main'"
    ).fetchall()
    return {r for r in rows if r[0] not in db.INTERNAL_TABLES - {"publish_changes"}}


@pytest.mark.slow(seconds=60)
def test_migrations_apply_on_the_lake_as_on_a_duckdb_file(lake, tmp_path):
    setting, *_ = lake
    started = time.monotonic()
    con = db.connect(setting)
    took = time.monotonic() - started
    latest = max(v for v, _, _ in db.migrations())
    assert db.schema_version(con) == latest
    assert db.is_ducklake(con)
    lake_columns = columns(con)
    # The translation's own tables: the counter for publish_changes_seq and the guard.
    tables = {r[0] for r in con.sql("SHOW TABLES").fetchall()}
    assert {"publish_changes_seq", db.WRITE_GUARD} <= tables
    con.close()
    with duckdb.connect(str(tmp_path / "file.duckdb")) as file_con:
        db.migrate(file_con)
        file_columns = columns(file_con)
    # Same tables, columns, types and nullability; the one difference the translation makes
    # (publish_changes.seq has no default there) does not show in these columns.
    assert lake_columns == file_columns
    print(
        f"\nmigrations up to {latest:03d} applied on the lake in {took:.1f} s, {len(tables)} tables"
    )
    # A second open finds them applied and applies nothing.
    with db.connect(setting) as again:
        assert db.migrate(again) == []


def _start_run(provider: str, barrier: Path, env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "tests.deploy.ducklake_run", provider, str(barrier)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=log.open("w"),
        text=True,
    )


def _wait_ready(barrier: Path, procs: dict, logs: dict) -> None:
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while not all((barrier / f"{p}.ready").exists() for p in procs):
        for p, proc in procs.items():
            assert proc.poll() is None, f"{p} exited early:\n{logs[p].read_text()[-3000:]}"
        assert time.monotonic() < deadline, "the run processes did not load in time"
        time.sleep(0.1)


def _step_window(instance: dg.DagsterInstance, run_id: str, step: str) -> tuple[float, float]:
    times = {
        e.dagster_event.event_type: e.timestamp
        for e in instance.all_logs(run_id)
        if e.dagster_event is not None and e.dagster_event.step_key == step
    }
    return times[dg.DagsterEventType.STEP_START], times[dg.DagsterEventType.STEP_SUCCESS]


@pytest.mark.slow(seconds=120)
def test_two_provider_runs_write_the_lake_at_once(new_lake, tmp_path, monkeypatch):
    setting, pg_env, _, data = new_lake
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(ROOT / "deploy" / "dagster.yaml", home / "dagster.yaml")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUVALUE_", "DAGSTER_"))}
    env.update(pg_env, DAGSTER_HOME=str(home), GPUVALUE_WAREHOUSE=setting)
    for key, value in (*pg_env.items(), ("DAGSTER_HOME", str(home))):
        monkeypatch.setenv(key, value)
    with dg.DagsterInstance.get() as instance:
        # What `make prod` does for this warehouse (deploy/prod.py): room for both runs.
        assert apply_pool_limit(instance, setting) >= len(PROVIDERS)
        assert instance.event_log_storage.get_concurrency_info(WAREHOUSE_POOL).slot_count >= 2
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    logs = {p: tmp_path / f"{p}.log" for p in PROVIDERS}
    procs = {p: _start_run(p, barrier, env, logs[p]) for p in PROVIDERS}
    try:
        _wait_ready(barrier, procs, logs)
        (barrier / "go").touch()
        outputs = {p: proc.communicate(timeout=RUN_TIMEOUT_S)[0] for p, proc in procs.items()}
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
    results = {}
    for p, proc in procs.items():
        assert proc.returncode == 0, f"{p}: {outputs[p]}\n{logs[p].read_text()[-4000:]}"
        results[p] = json.loads(outputs[p].strip().splitlines()[-1])
        assert results[p]["success"]
    retries = {p: logs[p].read_text().count("DuckLake write conflict, retry") for p in PROVIDERS}

    con = db.connect(setting, read_only=True)
    per_provider = dict(
        con.sql("SELECT provider, count(*) FROM cloud_offers GROUP BY provider").fetchall()
    )
    # Every row each run reported is there, once, and nothing else.
    assert per_provider == {p: results[p]["rows"]["cloud_offers"] for p in PROVIDERS}
    assert all(n > 0 for n in per_provider.values())
    # Both runs loaded the catalog into the empty lake at the same moment: once, not twice.
    gpus, distinct = con.sql("SELECT count(*), count(DISTINCT gpu_id) FROM gpus").fetchall()[0]
    assert gpus == distinct > 0
    status = dict(
        con.sql("SELECT source, status FROM source_status WHERE kind = 'cloud'").fetchall()
    )
    assert status == dict.fromkeys(PROVIDERS, "ok")
    # The months each load touched are logged for the next publish, numbered without gaps
    # or repeats across the two writers (the counter standing in for the sequence).
    seqs = [s for (s,) in con.sql("SELECT seq FROM publish_changes ORDER BY seq").fetchall()]
    assert seqs == list(range(1, len(seqs) + 1)) and seqs
    parquet = sorted(data.rglob("*.parquet"))
    assert parquet, "the lake's rows are in Parquet files under DATA_PATH"
    with dg.DagsterInstance.get() as instance:
        windows = {
            p: _step_window(instance, results[p]["run_id"], "cloud_offers") for p in PROVIDERS
        }
        runs = {p: instance.get_run_by_id(results[p]["run_id"]) for p in PROVIDERS}
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs.values())
    (a0, a1), (b0, b1) = windows.values()
    overlap = max(0.0, min(a1, b1) - max(a0, b0))
    print(
        f"\nrows: {per_provider}, catalog {gpus} GPUs; DuckLake conflicts retried: {retries}; "
        f"cloud_offers steps overlapped {overlap:.1f} s; {len(parquet)} Parquet files"
    )
    con.close()


class Interleaved:
    """A connection that lets another writer commit just before its first DELETE runs.

    The other writer's commit lands inside this one's transaction, which DuckLake then
    refuses at COMMIT: the conflict replace_rows must retry.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, other) -> None:
        self.con, self.other, self.begins = con, other, 0

    def sql(self, query: str, **kwargs):
        if query.startswith("BEGIN"):
            self.begins += 1
        if query.startswith("DELETE") and self.other is not None:
            other, self.other = self.other, None
            other()
        return self.con.sql(query, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.con, name)


def _second_writer(setting: str) -> duckdb.DuckDBPyConnection:
    """A connection from a second DuckDB instance, as another process would have."""
    location = parse(setting)
    con = duckdb.connect()
    for statement in location.attach:
        con.sql(statement)
    return con


def _offers(provider: str, n: int, price: float) -> pl.DataFrame:
    con = duckdb.connect()
    return con.sql(
        f"SELECT '{provider}' AS provider, 'conflict test' AS citation, 'x' || i AS instance_type, "
        "'r' AS region, 'h100' AS gpu_id, 1 AS gpu_count, 'on_demand' AS price_type, "
        f"{price} AS usd_per_hour, {price} AS usd_per_gpu_hour, "
        "TIMESTAMP '2026-10-07 02:30' AS observed_at FROM range(?) t(i)",
        params=[n],
    ).pl()


@pytest.mark.slow(seconds=30)
def test_a_real_conflict_is_retried_on_the_new_snapshot(lake, monkeypatch):
    setting, *_ = lake
    con = db.connect(setting)
    other = _second_writer(setting)
    assert db.migrate(other) == []
    first, second = (_offers(p, 3, 2.0) for p in ("conflict-a", "conflict-b"))
    where = "provider IN ('conflict-a', 'conflict-b')"
    db.replace_rows(con, "cloud_offers", first, where)  # yesterday's rows, in one data file

    # Two loads replacing the same rows at once: the other commits inside ours.
    ours = Interleaved(con, lambda: db.replace_rows(other, "cloud_offers", second, where))
    doubled = second.with_columns(pl.col("usd_per_hour") * 2)
    deleted, inserted = db.replace_rows(ours, "cloud_offers", doubled, where)
    assert ours.begins == 2, "the first attempt conflicted and was retried"
    # The retry ran on the new snapshot: it replaced the other writer's 3 rows, not the
    # 3 it first saw; the result is one load's rows, not both.
    assert (deleted, inserted) == (3, 3)
    rows = con.sql(
        f"SELECT provider, usd_per_hour, count(*) FROM cloud_offers WHERE {where} GROUP BY ALL"
    ).fetchall()
    assert rows == [("conflict-b", 4.0, 3)]

    # With retries off the same race fails loudly, and leaves the winner's rows intact.
    monkeypatch.setattr(db, "CONFLICT_RETRIES", 0)
    ours = Interleaved(con, lambda: db.replace_rows(other, "cloud_offers", first, where))
    with pytest.raises(duckdb.TransactionException, match="(?i)conflict"):
        db.replace_rows(ours, "cloud_offers", second, where)
    rows = con.sql(
        f"SELECT provider, count(*) FROM cloud_offers WHERE {where} GROUP BY ALL"
    ).fetchall()
    assert rows == [("conflict-a", 3)]
    db.replace_rows(con, "cloud_offers", first.clear(), where)
    other.close()
    con.close()
