"""One `nightly_cloud` run for one provider, in its own process (tests/deploy/test_ducklake.py).

`python -m tests.deploy.ducklake_run PROVIDER BARRIER_DIR`

The run is what the 02:30 schedule launches for a provider partition: the `nightly_cloud`
job (the catalog, then that provider's offers), on the instance in DAGSTER_HOME, against
the warehouse GPUVALUE_WAREHOUSE names. The process loads the code, says it is ready
(`BARRIER_DIR/PROVIDER.ready`), and starts its run when the test says go (`BARRIER_DIR/go`),
so two such runs start within milliseconds of each other. Prints one JSON line: the run's
id, whether it succeeded, and the rows each step reported.
"""

import json
import sys
import time
from pathlib import Path

import dagster as dg

from pipeline.definitions import defs


def main(provider: str, barrier: Path) -> int:
    """Run the provider's partition once the barrier opens; exit 0 when the run succeeded."""
    job = defs().resolve_job_def("nightly_cloud")
    (barrier / f"{provider}.ready").touch()
    deadline = time.monotonic() + 300
    while not (barrier / "go").exists():
        if time.monotonic() > deadline:
            print(json.dumps({"provider": provider, "error": "no go within 300 s"}))
            return 2
        time.sleep(0.01)
    with dg.DagsterInstance.get() as instance:
        result = job.execute_in_process(
            partition_key=provider, instance=instance, raise_on_error=False
        )
    rows = {}
    for event in result.get_asset_materialization_events():
        materialization = event.materialization
        if "rows" in materialization.metadata:
            key = materialization.asset_key.to_user_string()
            rows[key] = materialization.metadata["rows"].value
    summary = {"provider": provider, "run_id": result.run_id, "success": result.success}
    print(json.dumps({**summary, "rows": rows}))
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
