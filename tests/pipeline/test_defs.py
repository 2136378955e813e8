import datetime as dt
from types import SimpleNamespace

import dagster as dg

from model.parameters import ModelParameters
from pipeline.definitions import defs as load_defs

EXPECTED_ASSETS = {
    "gpus",
    "benchmark_results",
    "price_observations",
    "price_history",
    "gpu_prices_daily",
    "cloud_offers",
    "cloud_integrity",
    "benchmark_debiased",
    "relative_performance",
    "model_validation",
    "independent_checks",
    "current_prices",
    "perf_per_dollar",
    "cloud_vs_buy",
    "cloud_perf_per_dollar",
    "sensitivity",
    "evidence_basis",
    "gpu_software_support",
    "recommendations",
    "verdicts",
    "upgrade_picks",
    "rent_or_buy",
    "rent_or_buy_gpus",
    "llm_benchmarks",
    "llm_serving_benchmarks",
    "llm_inference",
    "llm_models",
    "llm_serving",
    "llm_api_prices",
    "llm_serving_cost",
    "charts",
    "report",
    "site",
    "published_warehouse",
}


def asset_specs():
    defs = load_defs()
    return {spec.key.to_user_string(): spec for a in defs.assets for spec in a.specs}


def test_definitions_load_with_every_stage():
    assert set(asset_specs()) == EXPECTED_ASSETS


def test_every_asset_has_description_kinds_and_group():
    for key, spec in asset_specs().items():
        assert spec.description, key
        # Table assets say what one row is.
        if spec.group_name in {"ingest", "model"}:
            assert spec.description.startswith("One row per"), key
        assert spec.kinds, key
        assert spec.group_name in {"ingest", "model", "report"}, key


def test_price_observations_are_partitioned_daily():
    specs = asset_specs()
    for key in ("price_observations", "gpu_prices_daily"):
        assert isinstance(specs[key].partitions_def, dg.DailyPartitionsDefinition)
    assert specs["cloud_offers"].partitions_def.get_partition_keys() == [
        "aws",
        "azure",
        "coreweave",
        "gcp",
        "hyperstack",
        "lambda",
        "runpod",
        "vast",
    ]
    assert specs["gpus"].partitions_def is None


def test_nightly_schedule_runs_the_whole_graph_at_3_utc():
    defs = load_defs()
    schedule = defs.resolve_schedule_def("nightly")
    assert schedule.cron_schedule == "0 3 * * *"
    assert schedule.execution_timezone == "UTC"
    job = defs.resolve_job_def("nightly")
    selected = {k.to_user_string() for k in job.asset_layer.selected_asset_keys}
    assert selected == EXPECTED_ASSETS - {"cloud_offers"}
    cloud = defs.resolve_job_def("nightly_cloud")
    assert {k.to_user_string() for k in cloud.asset_layer.selected_asset_keys} == {
        "cloud_offers",
        "gpus",
    }
    cloud_schedule = defs.resolve_schedule_def("nightly_cloud")
    assert cloud_schedule.cron_schedule == "30 2 * * *"
    context = dg.build_schedule_context(
        scheduled_execution_time=dt.datetime(2026, 11, 21, 3, 0, tzinfo=dt.UTC),
        repository_def=defs.get_repository_def(),
    )
    request = schedule.evaluate_tick(context).run_requests[0]
    assert request.partition_key == "2026-11-21"


def test_warehouse_writers_share_one_pool():
    # DuckDB allows one writer per file: every step that writes takes the same pool slot.
    writers = {
        "gpus",
        "benchmark_results",
        "price_observations",
        "price_history",
        "gpu_prices_daily",
        "cloud_offers",
        "benchmark_debiased",
        "relative_performance",
        "model_validation",
        "independent_checks",
        "current_prices",
        "perf_per_dollar",
        "cloud_vs_buy",
        "cloud_perf_per_dollar",
        "sensitivity",
        "evidence_basis",
        "gpu_software_support",
        "recommendations",
        "verdicts",
        "upgrade_picks",
        "rent_or_buy",
        "rent_or_buy_gpus",
        "llm_benchmarks",
        "llm_serving_benchmarks",
        "llm_inference",
        "llm_models",
        "llm_serving",
        "llm_api_prices",
        "llm_serving_cost",
        "published_warehouse",
    }
    # The report's assets only read the warehouse, but a reader beside another run's
    # writer would wait on DuckDB's file lock, so they take the slot too.
    # cloud_integrity reads the quarantine and the cloud statuses (its check stops a run).
    readers = {"charts", "report", "site", "cloud_integrity"}
    pools = {
        spec.key.to_user_string(): node.op.pool
        for node in load_defs().assets
        for spec in node.specs
    }
    assert {k for k, pool in pools.items() if pool == "gpuvalue_warehouse"} == writers | readers
    checks = list(load_defs().asset_checks)
    assert checks and all(c.op.pool == "gpuvalue_warehouse" for c in checks)


def test_price_and_cloud_assets_have_freshness_policies_from_stale_after_days():
    """Dagster fails them when unmaterialized as long as the report lets the input age."""
    stale = ModelParameters().stale_after_days
    specs = asset_specs()
    expected = {
        "price_observations": stale["retail prices"],
        "gpu_prices_daily": stale["retail prices"],
        "current_prices": stale["retail prices"],
        "cloud_offers": stale["cloud prices"],
    }
    for key, days in expected.items():
        policy = specs[key].freshness_policy
        assert isinstance(policy, dg.FreshnessPolicy), key
        assert policy.fail_window.to_timedelta() == dt.timedelta(days=days), key
        # A missed night warns long before the input is stale.
        assert policy.warn_window.to_timedelta() < dt.timedelta(days=2), key


def test_only_the_first_cloud_run_brings_the_catalog(monkeypatch):
    """`gpus` is built once a night, not once per provider run (make run, build_into)."""
    from pipeline import run
    from pipeline.defs.partitions import CLOUD_PROVIDERS

    selections = []

    def fake_materialize(assets, selection, partition_key=None, **kwargs):
        selections.append((partition_key, selection))
        return SimpleNamespace(success=True)

    monkeypatch.setattr(run.dg, "materialize", fake_materialize)
    run.run_pipeline(dg.DagsterInstance.ephemeral(), "2026-01-01", "2026-01-01")
    graph = load_defs().resolve_asset_graph()
    with_gpus = [
        key for key, selection in selections if dg.AssetKey("gpus") in selection.resolve(graph)
    ]
    assert [key for key, _ in selections] == [*CLOUD_PROVIDERS, None]
    # The first provider's run (a first night needs the catalog) and the main run.
    assert with_gpus == [CLOUD_PROVIDERS[0], None]
