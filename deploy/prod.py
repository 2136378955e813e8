"""The production profile's processes: Dagster's webserver and daemon on one instance.

`python -m deploy.prod start|stop|status [--home DIR] [--port PORT] [--no-schedules]`

`start` copies deploy/dagster.yaml into DAGSTER_HOME (run, event-log and schedule storage
in PostgreSQL), turns the nightly schedules on (their state is kept in PostgreSQL, so they
stay on across restarts), then starts `dagster-daemon run` (schedules, run queue, run
monitoring) and `dagster-webserver` as background processes in their own process groups,
with their logs and pid files in DAGSTER_HOME. `stop` ends both, by those pid files.

The connection comes from the DAGSTER_PG_* variables; when DAGSTER_PG_HOST is unset, from
the project-local cluster's connection file (`make postgres`, deploy/postgres.py).
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from deploy import postgres

HERE = Path(__file__).parent
INSTANCE_YAML = HERE / "dagster.yaml"
WORKSPACE = HERE / "workspace.yaml"
DEFAULT_HOME = Path(".prod/dagster_home")
DEFAULT_PORT = 3000
# Both nightly schedules: cloud offers per provider at 02:30 UTC, the graph at 03:00 UTC.
SCHEDULES = ("nightly_cloud", "nightly")
PROCESSES = ("daemon", "webserver")


@dataclass(frozen=True)
class Profile:
    """One production instance: its DAGSTER_HOME, the webserver's port, its environment."""

    home: Path
    port: int = DEFAULT_PORT
    host: str = "127.0.0.1"

    @property
    def logs(self) -> Path:
        """The daemon's and webserver's output (not logs/, a folder Dagster empties)."""
        return self.home / "process_logs"

    def pid_file(self, name: str) -> Path:
        """Where the pid of `name` (daemon, webserver) is kept."""
        return self.home / f"{name}.pid"


def _bin(name: str) -> str:
    """A console script of this environment (the .venv `make` created), not one on PATH."""
    return str(Path(sys.executable).parent / name)


def environment(
    profile: Profile, base: Mapping[str, str] | None = None, pg_dir: Path = postgres.DEFAULT_DIR
) -> dict[str, str]:
    """The processes' environment: `base` (default os.environ), DAGSTER_HOME, DAGSTER_PG_*.

    DAGSTER_PG_* already in `base` win (a database elsewhere); otherwise they are read from
    the local cluster in `pg_dir`.
    """
    env = dict(os.environ if base is None else base)
    env["DAGSTER_HOME"] = str(profile.home.absolute())
    if not env.get("DAGSTER_PG_HOST"):
        local = postgres.Cluster(Path(pg_dir).absolute(), 0, Path())
        if not local.env_file.exists():
            raise SystemExit(
                "prod: no DAGSTER_PG_HOST and no local cluster: run `make postgres` first"
            )
        env.update(postgres.connection_env(local))
    return env


def prepare_home(profile: Profile) -> None:
    """DAGSTER_HOME with the production dagster.yaml (replaced on every start)."""
    profile.logs.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(INSTANCE_YAML, profile.home / "dagster.yaml")


def set_pool_limit(env: Mapping[str, str]) -> int:
    """Size the warehouse pool for the warehouse the processes will use; returns the limit.

    One slot for a DuckDB file, more for a DuckLake on PostgreSQL or MotherDuck
    (`warehouse_pool_limit`), set in the instance (kept in PostgreSQL) on every start, so
    changing GPUVALUE_WAREHOUSE and restarting resizes it either way.
    """
    from pipeline.defs.resources import WAREHOUSE_POOL, warehouse_pool_limit

    limit = warehouse_pool_limit(env.get("GPUVALUE_WAREHOUSE"), dict(env))
    done = subprocess.run(
        [_bin("dagster"), "instance", "concurrency", "set", WAREHOUSE_POOL, str(limit)],
        env=dict(env),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"setting the warehouse pool failed: {(done.stdout + done.stderr)[-2000:]}"
        )
    return limit


def start_schedules(env: Mapping[str, str], names: tuple[str, ...] = SCHEDULES) -> None:
    """Turn the schedules on in the instance (idempotent: an already running one stays)."""
    for name in names:
        done = subprocess.run(
            [_bin("dagster"), "schedule", "start", name, "-w", str(WORKSPACE)],
            env=dict(env),
            capture_output=True,
            text=True,
        )
        out = done.stdout + done.stderr
        if done.returncode != 0 and "already running" not in out:
            raise RuntimeError(f"dagster schedule start {name} failed: {out.strip()[-2000:]}")


def spawn(profile: Profile, env: Mapping[str, str], cwd: Path | None = None) -> None:
    """Start the daemon and the webserver in the background, each in its own process group.

    Their working directory (default: this one) is the code server's and the run
    workers', so relative warehouse and site paths resolve there.
    """
    commands = {
        "daemon": [_bin("dagster-daemon"), "run", "-w", str(WORKSPACE)],
        "webserver": [
            _bin("dagster-webserver"),
            "-w",
            str(WORKSPACE),
            "-h",
            profile.host,
            "-p",
            str(profile.port),
        ],
    }
    for name in PROCESSES:
        if _alive(profile, name):
            print(f"prod: {name} already running (pid {_pid(profile, name)})")
            continue
        log = (profile.logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            commands[name],
            env=dict(env),
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            # Its own session: `make prod` returns while they run, and stop() can end each
            # with the code server and run workers it started (the whole group).
            start_new_session=True,
        )
        log.close()
        profile.pid_file(name).write_text(str(proc.pid), encoding="utf-8")


def _pid(profile: Profile, name: str) -> int | None:
    try:
        return int(profile.pid_file(name).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return None


def _alive(profile: Profile, name: str) -> bool:
    pid = _pid(profile, name)
    if pid is None:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _stragglers(profile: Profile) -> list[int]:
    """Processes of this instance left outside the two process groups.

    A code server or run worker orphaned by a crash: their command lines carry the
    instance's DAGSTER_HOME path.
    """
    home = str(profile.home.absolute()).encode()
    # Never this process or those that started it (`make prod-stop` -> `uv run` -> us: the
    # home path is on their command lines too).
    mine, pid = set(), os.getpid()
    while pid > 1:
        mine.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            break
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            if int(proc.name) not in mine and home in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def stop(profile: Profile, timeout: float = 30) -> None:
    """End the daemon and the webserver (their process groups): SIGTERM, then SIGKILL.

    Then any process still carrying this DAGSTER_HOME in its command line, by pid.
    """
    for name in PROCESSES:
        pid = _pid(profile, name)
        if pid is None:
            continue
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            profile.pid_file(name).unlink(missing_ok=True)
            continue
        deadline = time.monotonic() + timeout
        while _alive(profile, name) and time.monotonic() < deadline:
            try:
                # Reaps it when it is our own child (the test); harmless otherwise.
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass
            time.sleep(0.2)
        if _alive(profile, name):
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        profile.pid_file(name).unlink(missing_ok=True)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in _stragglers(profile):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 5
        while _stragglers(profile) and time.monotonic() < deadline:
            time.sleep(0.2)


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--home", type=Path, default=DEFAULT_HOME, help="DAGSTER_HOME")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT, help="the webserver's port")
    parser.add_argument(
        "--pg-dir",
        type=Path,
        default=postgres.DEFAULT_DIR,
        help="the local cluster's folder, read when DAGSTER_PG_HOST is unset",
    )
    parser.add_argument(
        "--no-schedules", action="store_true", help="leave the schedules' state as it is"
    )
    args = parser.parse_args(argv)
    profile = Profile(args.home.absolute(), args.port)
    if args.action == "stop":
        stop(profile)
        print("prod: webserver and daemon stopped")
        return 0
    if args.action == "status":
        states = {name: _alive(profile, name) for name in PROCESSES}
        for name, up in states.items():
            print(f"prod: {name} {'running, pid ' + str(_pid(profile, name)) if up else 'stopped'}")
        return 0 if all(states.values()) else 3
    env = environment(profile, pg_dir=args.pg_dir)
    prepare_home(profile)
    limit = set_pool_limit(env)
    if not args.no_schedules:
        start_schedules(env)
    spawn(profile, env)
    print(
        f"prod: warehouse pool of {limit} slot(s); "
        f"webserver on http://{profile.host}:{profile.port}, daemon running; "
        f"DAGSTER_HOME={profile.home}, logs in {profile.logs}; schedules on: "
        f"{', '.join(SCHEDULES)}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
