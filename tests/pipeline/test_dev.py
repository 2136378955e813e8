"""`make dev` stops cleanly on SIGTERM (issue 25 item 12), as a supervisor or `kill` stops it.

The real target: `make dev` on a free port with a DAGSTER_HOME of the test's own, until the
webserver answers; then SIGTERM to make alone (not its process group: that is what Ctrl-C
does, and every process gets it then). GNU make passes SIGTERM to its recipe, whose `exec`
makes uv the recipe itself; uv passes it to `dg dev`, which stops the webserver, the daemon
and (dagster.yaml: `code_servers.wait_for_local_processes_on_shutdown`) its code server. No
process of the tree may be left. Nothing leaves 127.0.0.1.
"""

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
READY_S = 420  # the UI loads every definition first: slow on a busy 2-core machine
STOP_S = 30  # ~10 s on an idle machine; 25 s seen with eight test sessions beside it


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def descendants(pid: int) -> list[int]:
    """`pid` and every process below it (from /proc)."""
    found = [pid]
    for parent in found:
        try:
            for task in os.listdir(f"/proc/{parent}/task"):
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    found += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return found


def running(pid: int) -> str | None:
    """The command line of a live (not zombie) process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                return None
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


# What `dg check defs` checks (it used to run as a process of its own in
# tests/pipeline/test_defs.py, ~8 s of CPU loading the same code location again): the code
# location `dg dev` loads, read back from its webserver.
LOCATIONS = """{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus
  locationOrLoadError { __typename ... on PythonError { message stack }
    ... on RepositoryLocation { repositories { jobs { name } } } } } } } }"""


def code_location(port: int, deadline: float) -> dict:
    """The workspace's one code location once it has loaded (or failed to)."""
    while True:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/graphql",
            data=json.dumps({"query": LOCATIONS}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            entries = json.load(response)["data"]["workspaceOrError"]["locationEntries"]
        assert len(entries) == 1, entries
        if entries[0]["loadStatus"] == "LOADED":
            return entries[0]["locationOrLoadError"]
        assert time.monotonic() < deadline, f"the code location did not load: {entries}"
        time.sleep(1)


@pytest.mark.slow(seconds=30)
def test_make_dev_stops_cleanly_on_sigterm(tmp_path):
    port = free_port()
    log = (tmp_path / "dev.log").open("wb")
    make = subprocess.Popen(
        ["make", "--no-print-directory", "dev", f"DEV_PORT={port}", f"DAGSTER_HOME={tmp_path}"],
        cwd=REPO,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own group: the test can clean up whatever is left
    )
    try:
        deadline = time.monotonic() + READY_S
        while True:
            assert make.poll() is None, (tmp_path / "dev.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5):
                    break
            except OSError:
                assert time.monotonic() < deadline, "make dev did not answer in time"
                time.sleep(1)
        # The definitions load in the code location (`dg check defs`): no error, every job.
        location = code_location(port, deadline)
        assert location["__typename"] == "RepositoryLocation", location
        jobs = {job["name"] for repo in location["repositories"] for job in repo["jobs"]}
        assert {"nightly", "nightly_cloud"} <= jobs, jobs
        tree = descendants(make.pid)
        names = " ".join(running(p) or "" for p in tree)
        assert "dagster_webserver" in names and "dagster._daemon" in names
        assert "code-server" in names

        started = time.monotonic()
        os.kill(make.pid, signal.SIGTERM)
        make.wait(timeout=STOP_S)
        took = time.monotonic() - started
        left = {p: running(p) for p in tree if running(p)}
        assert not left, f"left running after make dev stopped ({took:.0f} s): {left}"
        text = (tmp_path / "dev.log").read_text(errors="replace")
        assert "Dagster services shut down." in text
    finally:
        # Whatever this test started and is still there (its own process group) goes.
        for pid in in_group(make.pid):
            os.kill(pid, signal.SIGKILL)
        make.wait(timeout=30)
        log.close()


def in_group(pgid: int) -> list[int]:
    """Live processes of process group `pgid`."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and running(int(entry)):
            try:
                with open(f"/proc/{entry}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[2]) == pgid:
                        found.append(int(entry))
            except (OSError, ValueError):
                continue
    return found
