"""The decision tables in the published warehouse, built from the bundled snapshot."""

import json
import shutil

import dagster as dg
import duckdb
import polars as pl
import pytest
from dagster_duckdb import DuckDBResource

from model.fit import efficiency_table, with_interconnect
from model.parameters import WORKLOADS, ModelParameters
from model.verdicts import BUDGETS_USD, COLUMNS, OPTIONS, verdict_problems
from pipeline.defs.checks import verdicts_complete
from pipeline.defs.model.assets import benchmark_debiased, relative_performance
from pipeline.defs.model.decisions import decisions, sensitivity
from pipeline.defs.resources import GpuvalueSettings
from pipeline.defs.steps import RUN_DATE_TAG
from tests.conftest import rerun_model
from warehouse.export import open_published

DEFAULTS = ModelParameters()


def tables(published, *names: str) -> dict[str, pl.DataFrame]:
    con = open_published(published)
    try:
        return {name: con.sql(f"SELECT * FROM {name}").pl() for name in names}
    finally:
        con.close()


def test_perf_per_dollar_covers_every_system_size_and_market_with_intervals(built):
    perf = tables(built.published, "perf_per_dollar")["perf_per_dollar"]
    assert set(perf["system_gpus"]) == {1, 2, 4, 8}
    assert set(perf["market"]) == {"new", "used", "mean"}
    assert perf.select(
        pl.col("perf_per_dollar_low", "perf_per_dollar_high", "p_top3").null_count().sum()
    ).row(0) == (0, 0, 0)
    assert (perf["perf_per_dollar_low"] <= perf["perf_per_dollar_high"]).all()
    # Exactly three GPUs are in the top 3 of every replicate: probabilities sum to 3.
    groups = perf.group_by("workload", "system_gpus", "market").agg(
        total=pl.col("p_top3").sum(), n=pl.len()
    )
    for row in groups.iter_rows(named=True):
        assert row["total"] == pytest.approx(min(3, row["n"]))


def test_cost_model_uses_the_runs_resolved_multi_gpu_efficiency(built):
    """perf_per_dollar applies the e_n per GPU count x interconnect that benchmark_debiased
    resolved from model_constants, not Dettmers' constants regardless of `constants`."""
    got = tables(built.published, "perf_per_dollar", "model_constants", "benchmark_debiased",
                 "gpus")  # fmt: skip
    runs = json.loads(tables(built.published, "model_runs")["model_runs"]["parameters"].item())
    table = efficiency_table(got["model_constants"], runs["constants"])
    perf = with_interconnect(got["perf_per_dollar"], got["gpus"]).join(
        table.select(
            system_gpus="num_gpus", interconnect="interconnect", expected="efficiency",
            source="source",
        ),
        on=["system_gpus", "interconnect"],
        how="left",
        nulls_equal=True,
    )  # fmt: skip
    assert perf["expected"].null_count() == 0
    assert perf["multi_gpu_efficiency"].to_list() == pytest.approx(perf["expected"].to_list())
    # The debiased rows used the same constants (same source tag per GPU count x link).
    # (Inference rows apply no e_n; interpolated counts are checked in test_model_fit.)
    debiased = (
        got["benchmark_debiased"]
        .select(system_gpus="num_gpus", interconnect="interconnect", source="efficiency_source")
        .filter(~pl.col("source").str.starts_with("inference:"))
        .filter(~pl.col("source").str.starts_with("interpolated:"))
        .unique()
    )
    shared = debiased.join(table.rename({"num_gpus": "system_gpus"}), on=["system_gpus",
                           "interconnect"], nulls_equal=True)  # fmt: skip
    assert shared.height == debiased.height
    assert (shared["source"] == shared["source_right"]).all()
    # One source for every system size (fitted everywhere or Dettmers' everywhere): on the
    # bundled data the 8-GPU NVLink fit is not determined, so every size is Dettmers'.
    assert perf["source"].str.split(":").list.first().n_unique() == 1


def test_recommendations_are_the_best_of_their_tier(built):
    got = tables(built.published, "recommendations", "perf_per_dollar", "gpus", "evidence_basis")
    recs, perf = got["recommendations"], got["perf_per_dollar"]
    memory = got["gpus"].select("gpu_id", "memory_gb")
    # Only GPUs eligible for the workload compete (model/eligibility.py).
    eligible = got["evidence_basis"].filter(pl.col("eligible")).select("gpu_id", "workload")
    perf = perf.join(eligible, on=["gpu_id", "workload"])
    assert set(recs["option"]) == {"buy_new", "buy_used", "rent", "rent_spot"}
    assert set(recs["workload"]) == {"training_16bit", "inference_16bit", "inference_8bit"}
    assert set(recs["memory_tier_gb"]) <= set(DEFAULTS.memory_tiers_gb)
    ones = perf.filter(pl.col("system_gpus") == 1).join(memory, on="gpu_id")
    buys = recs.filter(pl.col("option").str.starts_with("buy"))
    assert buys.height > 0
    for rec in buys.iter_rows(named=True):
        pool = ones.filter(
            (pl.col("market") == rec["option"].removeprefix("buy_"))
            & (pl.col("workload") == rec["workload"])
            & (pl.col("memory_gb") >= rec["memory_tier_gb"])
        ).sort("perf_per_dollar", descending=True)
        assert rec["gpu_id"] == pool["gpu_id"][0]
        assert rec["n_candidates"] == pool.height
        assert rec["perf_per_dollar"] == pytest.approx(pool["perf_per_dollar"][0])
        if pool.height > 1:
            assert rec["runner_up_gpu_id"] == pool["gpu_id"][1]
    rents = recs.filter(pl.col("option").str.starts_with("rent"))
    assert rents["provider"].null_count() == 0 and rents["usd_per_gpu_hour"].min() > 0


def test_cloud_and_sensitivity_tables(built):
    got = tables(built.published, "cloud_vs_buy", "cloud_perf_per_dollar", "sensitivity")
    utilizations = sorted(set(got["cloud_vs_buy"]["utilization"]))
    assert utilizations[0] == 0.05 and utilizations[-1] == 1.0
    cloud = got["cloud_perf_per_dollar"]
    assert cloud.height > 0
    assert {"on_demand", "spot"} <= set(cloud["price_type"])
    # One row per GPU x workload x provider x price type: price types are never mixed.
    keys = ["gpu_id", "workload", "provider", "price_type"]
    assert cloud.select(keys).is_unique().all()
    sens = got["sensitivity"]
    assert set(sens["parameter"]) == {
        "electricity_usd_per_kwh",
        "utilization",
        "years",
        "host_cost_scale",
    }
    # At the run's own setting the rank is unchanged.
    same = sens.filter(pl.col("value") == pl.col("default_value"))
    assert same.height > 0 and (same["rank_change"] == 0).all()


@pytest.mark.slow(seconds=15)
def test_electricity_price_from_environment_and_years_from_run_config(built, tmp_path, monkeypatch):
    """`GPUVALUE_ELECTRICITY_USD_PER_KWH=0.30 make run` (plus a run-config override)."""
    base = tables(built.published, "perf_per_dollar", "model_runs")
    monkeypatch.setenv("GPUVALUE_ELECTRICITY_USD_PER_KWH", "0.30")
    # The model again on a copy of the bundled build, with the new parameters; its tables
    # are read from that copy's warehouse (publishing is tested on its own).
    dear = rerun_model(built, tmp_path / "dear", parameter_overrides={"years": "4"})
    assert dear.result.success
    con = duckdb.connect(str(dear.warehouse), read_only=True)
    try:
        got = {
            name: con.sql(f"SELECT * FROM {name}").pl()
            for name in ("perf_per_dollar", "model_runs", "recommendations")
        }
    finally:
        con.close()
    stored = json.loads(got["model_runs"]["parameters"].item())
    assert stored["electricity_usd_per_kwh"] == 0.30 and stored["years"] == 4.0
    default = json.loads(base["model_runs"]["parameters"].item())
    assert default["electricity_usd_per_kwh"] == 0.175 and default["years"] == 5.0
    keys = ["gpu_id", "workload", "system_gpus", "market"]
    both = base["perf_per_dollar"].join(got["perf_per_dollar"], on=keys, suffix="_dear")
    assert both.height == base["perf_per_dollar"].height
    ratio = both["electricity_usd_per_year_dear"] / both["electricity_usd_per_year"]
    assert ratio.to_list() == pytest.approx([0.30 / 0.175] * both.height)
    expected = (
        both["system_gpus"] * both["price_usd"]
        + both["host_cost_usd"]
        + 4 * both["electricity_usd_per_year_dear"]
        - both["system_gpus"] * both["resale_usd_dear"]  # net of resale (issue 23)
    )
    # Sold after 4 years instead of 5: a younger card, a higher resale.
    assert (both["resale_usd_dear"] > both["resale_usd"]).all()
    assert both["total_cost_usd_dear"].to_list() == pytest.approx(expected.to_list())
    assert (both["perf_per_dollar_dear"] != both["perf_per_dollar"]).all()
    assert got["recommendations"].height > 0


def test_dagster_run_config_sets_model_parameters(built, tmp_path):
    """The settings resource's parameter_overrides, given as run config at launch."""
    db = tmp_path / "copy.duckdb"
    shutil.copy(built.warehouse, db)
    result = dg.materialize(
        [benchmark_debiased, relative_performance, sensitivity],
        resources={
            "settings": GpuvalueSettings.configure_at_launch(),
            "warehouse": DuckDBResource(database=str(db)),
        },
        run_config={
            "resources": {"settings": {"config": {"parameter_overrides": {"utilization": "0.35"}}}}
        },
    )
    assert result.success
    con = duckdb.connect(str(db), read_only=True)
    try:
        defaults = con.sql("SELECT DISTINCT parameter, default_value FROM sensitivity").fetchall()
        stored = json.loads(con.sql("SELECT parameters FROM model_runs").fetchall()[0][0])
    finally:
        con.close()
    assert ("utilization", 0.35) in defaults
    assert ("electricity_usd_per_kwh", 0.175) in defaults
    assert stored["utilization"] == 0.35


def test_a_model_asset_rerun_alone_with_other_parameters_fails_and_changes_nothing(built, tmp_path):
    """model_runs (written by benchmark_debiased) must describe every model table."""
    db = tmp_path / "copy.duckdb"
    shutil.copy(built.warehouse, db)

    def snapshot():
        # Through the resource: the failed step's connection may still be open (the resource
        # does not close it on an exception) and DuckDB refuses a second connection to the
        # file with another configuration.
        with DuckDBResource(database=str(db)).get_connection() as con:
            return (
                con.sql("SELECT parameters FROM model_runs").fetchall(),
                con.sql("SELECT * FROM sensitivity ORDER BY ALL").fetchall(),
            )

    before = snapshot()
    result = dg.materialize(
        [sensitivity],
        resources={
            "settings": GpuvalueSettings.configure_at_launch(),
            "warehouse": DuckDBResource(database=str(db)),
        },
        run_config={
            "resources": {"settings": {"config": {"parameter_overrides": {"utilization": "0.35"}}}}
        },
        raise_on_error=False,
    )
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    message = failure.step_failure_data.error.message
    assert "differ from model_runs" in message and "utilization" in message
    assert snapshot() == before
    # With the stored parameters the same asset reruns fine.
    again = dg.materialize(
        [sensitivity],
        resources={
            "settings": GpuvalueSettings(),
            "warehouse": DuckDBResource(database=str(db)),
        },
    )
    assert again.success


def test_verdicts_are_a_table_with_every_workload_limit_and_option(built):
    """The decisions step writes the site's verdicts beside recommendations, once a night."""
    got = tables(built.published, "verdicts", "recommendations", "model_runs")
    verdicts = got["verdicts"]
    assert verdicts.columns == COLUMNS
    tiers = DEFAULTS.memory_tiers_gb
    # budgets, memory tiers and the headline (any memory), per workload and option
    assert verdicts.height == len(WORKLOADS) * (len(BUDGETS_USD) + len(tiers) + 1) * len(OPTIONS)
    assert set(verdicts["run_date"]) == set(got["model_runs"]["run_date"])
    assert verdict_problems(verdicts, WORKLOADS, tiers) == []
    # The memory verdicts are the recommendations (`rent` is shown as rent_on_demand).
    memory = verdicts.filter(pl.col("kind") == "memory", pl.col("gpu_id").is_not_null())
    assert memory.height == got["recommendations"].height
    # Its blocking check ran in the build and passed; one step wrote both tables.
    checks = {e.check_name: e.passed for e in built.result.get_asset_check_evaluations()}
    assert checks["verdicts_complete"] is True
    steps = {e.step_key for e in built.result.all_events if e.is_step_success}
    assert "decisions" in steps and "recommendations" not in steps


def test_verdict_problems_name_missing_doubled_and_insane_rows(built):
    verdicts = tables(built.published, "verdicts")["verdicts"]
    tiers = DEFAULTS.memory_tiers_gb
    first = verdicts.filter(pl.col("gpu_id").is_not_null()).row(0, named=True)
    key = (pl.col("workload") == first["workload"]) & (pl.col("kind") == first["kind"])
    key &= (pl.col("limit") == first["limit"]) & (pl.col("option") == first["option"])
    where = f"{first['workload']} {first['kind']} {first['limit']:g} {first['option']}"
    assert verdict_problems(verdicts.filter(~key), WORKLOADS, tiers) == [f"{where}: no row"]
    doubled = pl.concat([verdicts, verdicts.filter(key)])
    assert verdict_problems(doubled, WORKLOADS, tiers) == [f"{where}: 2 rows"]
    broken = verdicts.with_columns(
        p_best=pl.when(key).then(1.5).otherwise("p_best"),
        perf_per_dollar_low=pl.when(key)
        .then(pl.col("perf_per_dollar_high") * 2)
        .otherwise("perf_per_dollar_low"),
    )
    assert verdict_problems(broken, WORKLOADS, tiers) == [
        f"{where} {first['gpu_id']}: interval does not bracket the value",
        f"{where} {first['gpu_id']}: P(best) outside [0, 1]",
    ]


def test_verdicts_check_fails_on_a_missing_verdict(built, tmp_path):
    """A night whose verdicts lack a cell stops before charts, site and publish."""
    db = tmp_path / "copy.duckdb"
    shutil.copy(built.warehouse, db)
    with duckdb.connect(str(db)) as con:
        run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
        con.sql(
            "DELETE FROM verdicts WHERE run_date = ? AND workload = 'training_16bit' "
            "AND kind = 'budget' AND \"limit\" = 500 AND option = 'buy_used'",
            params=[run_date],
        )
    instance = dg.DagsterInstance.ephemeral()
    result = dg.materialize(
        [decisions, verdicts_complete],
        selection=dg.AssetSelection.checks(verdicts_complete),
        instance=instance,
        resources={"settings": GpuvalueSettings(), "warehouse": DuckDBResource(database=str(db))},
        raise_on_error=False,
    )
    evaluation = result.get_asset_check_evaluations()[0]
    assert not evaluation.passed
    assert evaluation.description == "training_16bit budget 500 buy_used: no row"
    # The run date was resolved once (the newest observation day) and recorded on the run.
    tags = instance.get_run_by_id(result.run_id).tags
    assert tags[RUN_DATE_TAG] == run_date.isoformat()
    # A date the run's record already holds is the one every step uses.
    recorded = dg.materialize(
        [decisions, verdicts_complete],
        selection=dg.AssetSelection.checks(verdicts_complete),
        instance=instance,
        tags={RUN_DATE_TAG: "2026-01-01"},
        resources={"settings": GpuvalueSettings(), "warehouse": DuckDBResource(database=str(db))},
        raise_on_error=False,
    )
    evaluation = recorded.get_asset_check_evaluations()[0]
    assert evaluation.metadata["run_date"].value == "2026-01-01" and not evaluation.passed
