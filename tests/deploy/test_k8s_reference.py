"""The reference Kubernetes deployment (deploy/k8s) holds together, as far as can be checked here.

No cluster, Helm chart or registry is reachable from this project's machines, and kubectl
needs an API server even for a client-side dry run, so nothing here applies a manifest.
What is checked (docs/deployment.md lists it, and what was not):
- every file parses as YAML; the instance file passes Dagster's own instance schema, and,
  where dagster-k8s is installed (deploy/ducklake's environment, in CI), its run launcher
  config passes K8sRunLauncher's schema and GPUVALUE_EXECUTOR=k8s gives the k8s executor;
- the names the files share agree (namespace, ConfigMap, Secrets, volume, instance map);
- the warehouse setting in the ConfigMap is a DuckLake on PostgreSQL with an object-store
  data path, and the pool both instance files set is what `warehouse_pool_limit` gives it;
- no password, key or token is written in any of them.
"""

import os
import re
from pathlib import Path

import pytest
import yaml

from pipeline.defs.resources import warehouse_pool_limit
from warehouse.location import parse

K8S = Path(__file__).resolve().parents[2] / "deploy" / "k8s"
REQUIRED = os.environ.get("GPUVALUE_DUCKLAKE_REQUIRED") == "1"


@pytest.fixture(scope="module")
def files():
    instance = yaml.safe_load((K8S / "dagster.yaml").read_text())
    values = yaml.safe_load((K8S / "values.yaml").read_text())
    docs = [d for d in yaml.safe_load_all((K8S / "manifests.yaml").read_text()) if d]
    manifests = {(d["kind"], d["metadata"]["name"]): d for d in docs}
    return instance, values, manifests


def test_the_instance_file_passes_dagsters_instance_schema(files):
    from dagster._config import validate_config
    from dagster._core.instance.config import dagster_instance_config_schema

    instance, _, _ = files
    result = validate_config(dagster_instance_config_schema(), instance)
    assert result.success, [e.message for e in result.errors]
    assert instance["storage"]["postgres"]["postgres_db"]["password"] == {
        "env": "DAGSTER_PG_PASSWORD"
    }
    assert (instance["run_launcher"]["module"], instance["run_launcher"]["class"]) == (
        "dagster_k8s",
        "K8sRunLauncher",
    )


def test_the_warehouse_is_a_lake_on_postgres_and_the_pool_matches_it(files):
    instance, values, manifests = files
    env = manifests[("ConfigMap", "gpuvalue-env")]["data"]
    lake = parse(env["GPUVALUE_WAREHOUSE"])
    assert (lake.kind, lake.catalog, lake.concurrent_writers) == ("ducklake", "postgres", True)
    assert lake.data_path.startswith("s3://")
    assert any("credential_chain" in s for s in lake.attach)
    limit = warehouse_pool_limit(env["GPUVALUE_WAREHOUSE"], env)
    assert limit > 1
    assert instance["concurrency"]["pools"]["default_limit"] == limit
    assert values["additionalInstanceConfig"]["concurrency"]["pools"]["default_limit"] == limit
    runs = values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"]
    assert instance["concurrency"]["runs"]["max_concurrent_runs"] == runs["maxConcurrentRuns"]
    assert env["GPUVALUE_EXECUTOR"] == "k8s"


def test_the_names_the_files_share_agree(files):
    instance, values, manifests = files
    namespace = manifests[("Namespace", "gpuvalue")]["metadata"]["name"]
    launcher = instance["run_launcher"]["config"]
    helm = values["runLauncher"]["config"]["k8sRunLauncher"]
    assert launcher["job_namespace"] == helm["jobNamespace"] == namespace
    deployment = values["dagster-user-deployments"]["deployments"][0]
    for spec in (deployment, helm):
        assert [m["name"] for m in spec["envConfigMaps"]] == launcher["env_config_maps"]
        assert [s["name"] for s in spec["envSecrets"]] == launcher["env_secrets"]
        claims = [v["persistentVolumeClaim"]["claimName"] for v in spec["volumes"]]
        assert claims == ["gpuvalue-data"] and ("PersistentVolumeClaim", claims[0]) in manifests
        assert spec["volumeMounts"][0]["mountPath"] == "/data"
    for name in launcher["env_config_maps"]:
        assert manifests[("ConfigMap", name)]["metadata"]["namespace"] == namespace
    assert launcher["postgres_password_secret"] == values["global"]["postgresqlSecretName"]
    assert deployment["dagsterApiGrpcArgs"] == ["--module-name", "pipeline.definitions"]
    # The site sync reads the site the releases put on the same volume.
    sync = manifests[("CronJob", "gpuvalue-site-sync")]["spec"]["jobTemplate"]["spec"]
    container = sync["template"]["spec"]["containers"][0]
    env = manifests[("ConfigMap", "gpuvalue-env")]["data"]
    assert container["args"][2].startswith(str(Path(env["GPUVALUE_PUBLISHED_DIR"]).parent))
    assert {"configMapRef": {"name": "gpuvalue-env"}} in container["envFrom"]


def _scalars(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _scalars(value, (*path, str(key)))
    elif isinstance(node, list):
        for value in node:
            yield from _scalars(value, path)
    else:
        yield path, node


def test_no_secret_is_written_in_the_reference(files):
    secretish = re.compile(r"password|secret|token|access_key|api_key", re.IGNORECASE)
    for doc in files:
        for path, value in _scalars(doc):
            if secretish.search(path[-1] if path else "") and isinstance(value, str):
                # Only the names of Secrets, never a value.
                assert value in {"dagster-postgresql-secret", "gpuvalue-secrets"}, (path, value)
    text = "".join((K8S / f).read_text() for f in ("dagster.yaml", "values.yaml", "manifests.yaml"))
    # The comments show how the Secrets are made, with "..." for every value.
    assert not re.search(r"(?i)(password|key|token)=(?!\.\.\.)\S", text)
    # The warehouse setting holds no password either (parse refuses one).
    assert parse(files[2][("ConfigMap", "gpuvalue-env")]["data"]["GPUVALUE_WAREHOUSE"])


def test_the_run_launcher_and_executor_exist_in_dagster_k8s(files, monkeypatch):
    try:
        import dagster_k8s
    except ImportError:
        if REQUIRED:
            pytest.fail("dagster-k8s must be installed in deploy/ducklake's environment")
        pytest.skip("dagster-k8s is not installed here; deploy/ducklake's environment has it")
    from dagster._config import validate_config

    from pipeline.defs.schedules import nightly_executor

    instance, _, _ = files
    schema = dagster_k8s.K8sRunLauncher.config_type()
    result = validate_config(schema, instance["run_launcher"]["config"])
    assert result.success, [e.message for e in result.errors]
    monkeypatch.setenv("GPUVALUE_EXECUTOR", "k8s")
    assert nightly_executor().name == dagster_k8s.k8s_job_executor.name == "k8s"
