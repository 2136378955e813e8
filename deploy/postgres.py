"""A project-local PostgreSQL cluster for the production profile's Dagster storage.

`python -m deploy.postgres start|stop|status|env [--dir DIR] [--port PORT]`

Debian's `postgresql` package is used as installed (its binaries under
/usr/lib/postgresql/<version>/bin), but not its system cluster: `initdb` makes a cluster in
a folder of our own (`.prod/postgres` by default; `make clean` leaves it), listening on
127.0.0.1 only, so starting and wiping it never touches /etc/postgresql or
/var/lib/postgresql. PostgreSQL refuses to run as root, so as root every server-side
command runs as the `postgres` user (`runuser`), which then owns the cluster folder.

The cluster holds one role and one database for Dagster (`dagster`/`dagster`), with a
password generated at creation and written, with the rest of the connection, to
`<dir>/connection.env` (mode 0600): the `DAGSTER_PG_*` variables deploy/dagster.yaml reads.
"""

import argparse
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DIR = Path(".prod/postgres")
DEFAULT_PORT = 5433  # not 5432: a system PostgreSQL may already listen there
SERVER_USER = "postgres"  # Debian's package creates it
ROLE = DB = "dagster"


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's binaries are missing, or the server cannot run here."""


@dataclass(frozen=True)
class Cluster:
    """A project-local cluster: its folder, port and the binaries that run it."""

    root: Path
    port: int
    bindir: Path

    @property
    def data(self) -> Path:
        """The data directory (PGDATA)."""
        return self.root / "data"

    @property
    def socket_dir(self) -> Path:
        """The Unix socket's folder: our own, as /var/run/postgresql may be missing or not ours."""
        return self.root / "run"

    @property
    def log(self) -> Path:
        """The server's log file."""
        return self.root / "server.log"

    @property
    def env_file(self) -> Path:
        """The DAGSTER_PG_* connection file (mode 0600)."""
        return self.root / "connection.env"


def find_bindir() -> Path:
    """The newest Debian PostgreSQL bin folder with initdb and pg_ctl (PG_BINDIR overrides)."""
    candidates = [Path(os.environ["PG_BINDIR"])] if os.environ.get("PG_BINDIR") else []
    candidates += sorted(
        Path("/usr/lib/postgresql").glob("*/bin"),
        key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
        reverse=True,
    )
    for bindir in candidates:
        if (bindir / "initdb").is_file() and (bindir / "pg_ctl").is_file():
            return bindir
    raise PostgresUnavailable(
        "no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/*/bin: "
        "install Debian's package with `apt-get install postgresql`"
    )


def _as_server_user(cmd: list[str]) -> list[str]:
    """`cmd` run as the postgres user when we are root (PostgreSQL refuses root)."""
    if os.geteuid() != 0:
        return cmd
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        raise PostgresUnavailable(
            f"running as root and there is no `{SERVER_USER}` user to run PostgreSQL as"
        ) from None
    runuser = shutil.which("runuser")
    if runuser is None:
        raise PostgresUnavailable("running as root and `runuser` is missing")
    return [runuser, "-u", SERVER_USER, "--", *cmd]


def _run(cmd: list[str], **kwargs) -> subprocess.CompletedProcess:
    """Run a server-side command; fail with its own output when it fails."""
    done = subprocess.run(_as_server_user(cmd), capture_output=True, text=True, **kwargs)
    if done.returncode != 0:
        raise PostgresUnavailable(
            f"{Path(cmd[0]).name} failed ({done.returncode}): "
            f"{(done.stderr or done.stdout).strip()[-1500:]}"
        )
    return done


def _give_to_server_user(path: Path) -> None:
    """As root: the postgres user owns the cluster folder (and can reach it)."""
    if os.geteuid() != 0:
        return
    entry = pwd.getpwnam(SERVER_USER)
    for p in (path, *path.rglob("*")):
        os.chown(p, entry.pw_uid, entry.pw_gid)
    # Every folder above must be traversable by the postgres user; say so rather than let
    # initdb fail with "Permission denied" on a home directory with mode 0700.
    for parent in path.resolve().parents:
        if not os.stat(parent).st_mode & 0o001:
            raise PostgresUnavailable(
                f"{parent} is not traversable by the `{SERVER_USER}` user; put the cluster "
                "elsewhere with --dir (e.g. under /tmp or /srv)"
            )


def cluster(root: Path = DEFAULT_DIR, port: int = DEFAULT_PORT) -> Cluster:
    """The cluster in `root` (absolute), with the binaries found on this machine."""
    return Cluster(Path(root).absolute(), port, find_bindir())


def connection_env(c: Cluster) -> dict[str, str]:
    """The DAGSTER_PG_* variables deploy/dagster.yaml reads, from `<dir>/connection.env`."""
    env = {}
    for line in c.env_file.read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key:
            env[key] = value
    return env


def is_running(c: Cluster) -> bool:
    """Whether the cluster's server is up (pg_ctl status)."""
    if not (c.data / "PG_VERSION").exists():
        return False
    done = subprocess.run(
        _as_server_user([str(c.bindir / "pg_ctl"), "status", "-D", str(c.data)]),
        capture_output=True,
    )
    return done.returncode == 0


def start(c: Cluster, timeout: float = 60) -> dict[str, str]:
    """Create the cluster if needed, start it, and return its DAGSTER_PG_* variables."""
    if not (c.data / "PG_VERSION").exists():
        _create(c)
    if not is_running(c):
        _run(
            [
                str(c.bindir / "pg_ctl"),
                "start",
                "--wait",
                f"--timeout={int(timeout)}",
                "-D",
                str(c.data),
                "-l",
                str(c.log),
                # The port is given at each start, so one cluster can move port; TCP on
                # loopback only, the socket in our own folder.
                "-o",
                f"-p {c.port} -k {c.socket_dir} -c listen_addresses=127.0.0.1",
            ]
        )
    env = connection_env(c)
    env["DAGSTER_PG_PORT"] = str(c.port)
    c.env_file.write_text("".join(f"{k}={v}\n" for k, v in env.items()), encoding="utf-8")
    _wait_ready(c, timeout)
    return env


def _create(c: Cluster) -> None:
    """initdb, then the dagster role and database, and the connection file."""
    c.data.mkdir(parents=True, exist_ok=True)
    c.socket_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(c.data, 0o700)
    _give_to_server_user(c.root)
    # Local (socket) connections are trusted: the socket folder belongs to the server
    # user alone. TCP needs the generated password (scram-sha-256).
    _run(
        [
            str(c.bindir / "initdb"),
            "-D",
            str(c.data),
            "--auth-local=trust",
            "--auth-host=scram-sha-256",
            "--encoding=UTF8",
            "--locale=C",
        ]
    )
    password = secrets.token_urlsafe(24)
    _run(
        [
            str(c.bindir / "pg_ctl"),
            "start",
            "--wait",
            "-D",
            str(c.data),
            "-l",
            str(c.log),
            "-o",
            f"-p {c.port} -k {c.socket_dir} -c listen_addresses=127.0.0.1",
        ]
    )
    psql = [str(c.bindir / "psql"), "-h", str(c.socket_dir), "-p", str(c.port)]
    psql += ["-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q"]
    # The role is no superuser: Dagster only needs to own its database's tables.
    _run([*psql, "-c", f"CREATE ROLE {ROLE} LOGIN PASSWORD '{password}'"])
    _run([*psql, "-c", f"CREATE DATABASE {DB} OWNER {ROLE}"])
    c.env_file.touch(mode=0o600)
    c.env_file.write_text(
        f"DAGSTER_PG_HOST=127.0.0.1\nDAGSTER_PG_PORT={c.port}\nDAGSTER_PG_USERNAME={ROLE}\n"
        f"DAGSTER_PG_PASSWORD={password}\nDAGSTER_PG_DB={DB}\n",
        encoding="utf-8",
    )


def create_database(c: Cluster, name: str) -> None:
    """A further database owned by the `dagster` role (e.g. a DuckLake's catalog); idempotent."""
    psql = [str(c.bindir / "psql"), "-h", str(c.socket_dir), "-p", str(c.port)]
    psql += ["-d", "postgres", "-v", "ON_ERROR_STOP=1", "-q", "-At"]
    exists = _run([*psql, "-c", f"SELECT 1 FROM pg_database WHERE datname = '{name}'"])
    if exists.stdout.strip() != "1":
        _run([*psql, "-c", f'CREATE DATABASE "{name}" OWNER {ROLE}'])


def _wait_ready(c: Cluster, timeout: float) -> None:
    """Until the server accepts TCP connections (pg_isready)."""
    deadline = time.monotonic() + timeout
    cmd = [str(c.bindir / "pg_isready"), "-h", "127.0.0.1", "-p", str(c.port), "-q"]
    while subprocess.run(cmd).returncode != 0:
        if time.monotonic() > deadline:
            raise PostgresUnavailable(f"PostgreSQL did not accept connections; see {c.log}")
        time.sleep(0.2)


def stop(c: Cluster) -> None:
    """Stop the server (fast shutdown: open sessions are ended, nothing is lost)."""
    if is_running(c):
        _run([str(c.bindir / "pg_ctl"), "stop", "--wait", "-m", "fast", "-D", str(c.data)])


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["start", "stop", "status", "env"])
    parser.add_argument("--dir", type=Path, default=DEFAULT_DIR, help="cluster folder")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    args = parser.parse_args(argv)
    try:
        c = cluster(args.dir, args.port)
        if args.action == "start":
            start(c)
            print(f"PostgreSQL running on 127.0.0.1:{c.port}, cluster {c.data}, log {c.log}")
            print(f"connection (DAGSTER_PG_*): {c.env_file}")
        elif args.action == "stop":
            stop(c)
            print("PostgreSQL stopped")
        elif args.action == "status":
            up = is_running(c)
            print(f"PostgreSQL {'running' if up else 'not running'} ({c.data})")
            return 0 if up else 3
        else:
            for key, value in connection_env(c).items():
                print(f"export {key}={value}")
    except PostgresUnavailable as exc:
        print(f"postgres: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
