"""The published answer on the bundled snapshot (issue 10's "done when"), checked on the
real build: no global inference factor, same-die variants together, modules only in
servers, reservations independent of utilisation, one e_n source, and a headline that is
the tables' own top 3."""

import polars as pl
import pytest

from reports.report import HEADLINE_WAYS, headline, load_report_data
from warehouse.export import open_published


@pytest.fixture(scope="module")
def con(built):
    connection = open_published(built.published)
    yield connection
    connection.close()


def run_rows(con, table: str) -> pl.DataFrame:
    return con.sql(
        f"SELECT * FROM {table} WHERE run_date = (SELECT max(run_date) FROM model_runs)"
    ).pl()


def test_no_inference_factor_is_shared_by_more_than_30_percent_of_gpus(con):
    rel = run_rows(con, "relative_performance")
    wide = rel.pivot(on="workload", index="gpu_id", values="value")
    factors = wide.select(factor=(pl.col("inference_16bit") / pl.col("training_16bit")).round(4))
    share = factors.group_by("factor").len()["len"].max() / wide.height
    assert share <= 0.30, share
    evidence = set(rel.filter(pl.col("workload") == "inference_16bit")["evidence"])
    assert {"measured", "bridged"} <= evidence


def test_a100_40gb_is_within_15_percent_of_the_80gb_in_every_workload(con):
    rel = run_rows(con, "relative_performance")
    for workload in ("training_16bit", "inference_16bit", "inference_8bit"):
        part = dict(rel.filter(pl.col("workload") == workload).select("gpu_id", "value").rows())
        assert abs(part["a100-sxm4-40gb"] / part["a100-sxm4-80gb"] - 1) <= 0.15, workload


def test_modern_data_center_order_follows_mlperf(con):
    train = dict(
        run_rows(con, "relative_performance")
        .filter(pl.col("workload") == "training_16bit")
        .select("gpu_id", "value")
        .rows()
    )
    # MLPerf Training v4.1 single-node tables: B200 1.4-3x an H100 per GPU.
    assert train["b200"] / train["h100-sxm5-80gb"] > 1.4
    assert train["h100-sxm5-80gb"] > train["h100-nvl-94gb"] > train["h100-pcie-80gb"]
    assert train["mi300x"] < train["h100-sxm5-80gb"]
    assert 0.28 <= train["a30"] <= 0.47  # MLPerf v2.0/v3.1 A30 vs A100


def test_modules_are_only_in_4_and_8_gpu_servers(con):
    perf = run_rows(con, "perf_per_dollar")
    modules = con.sql(
        "SELECT gpu_id FROM gpus WHERE form_factor IN ('sxm', 'oam', 'superchip')"
    ).pl()["gpu_id"]
    rows = perf.filter(pl.col("gpu_id").is_in(modules.to_list()))
    assert rows.height and set(rows["system_gpus"]) <= {4, 8}
    assert set(rows["platform"]) == {"server"}


def test_reserved_break_even_does_not_move_with_utilisation(con):
    cloud = run_rows(con, "cloud_vs_buy").filter(pl.col("billing") == "whole_term")
    assert cloud.height
    spread = cloud.group_by("gpu_id", "provider", "price_type").agg(
        pl.col("break_even_days").n_unique().alias("n")
    )
    assert spread["n"].max() == 1


def test_efficiency_has_no_jump_between_4_and_8_gpus(con):
    perf = run_rows(con, "perf_per_dollar")
    e = perf.group_by("system_gpus", "platform").agg(pl.col("multi_gpu_efficiency").first())
    for platform in ("workstation", "server"):
        rows = e.filter(pl.col("platform") == platform)
        part = dict(rows.select("system_gpus", "multi_gpu_efficiency").rows())
        assert abs(part[4] - part[8]) <= 0.08


def test_headline_is_the_tables_own_top_3(con, built):
    run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    data = load_report_data(con, run_date)
    heads = headline(data)
    for workload, ways in heads.items():
        for way, top in ways.items():
            table, column, value, _ = HEADLINE_WAYS[way]
            if table == "perf":
                # Only GPUs eligible for the workload (evidence_basis) are listed.
                expected = con.sql(
                    "SELECT gpu_id FROM perf_per_dollar p SEMI JOIN "
                    "(SELECT * FROM evidence_basis WHERE eligible) e USING "
                    "(run_date, gpu_id, workload) WHERE run_date = ? AND "
                    f"workload = ? AND system_gpus = 1 AND {column} = ? ORDER BY rank, gpu_id "
                    "LIMIT 3",
                    params=[run_date, workload, value],
                ).pl()["gpu_id"]
            else:
                expected = con.sql(
                    "SELECT gpu_id FROM cloud_perf_per_dollar SEMI JOIN "
                    "(SELECT * FROM evidence_basis WHERE eligible) e USING "
                    "(run_date, gpu_id, workload) WHERE run_date = ? AND "
                    # Renting lists fresh offers only (model/cloud_freshness.py).
                    f"workload = ? AND {column} = ? AND fresh GROUP BY gpu_id "
                    "ORDER BY max(perf_per_dollar) DESC, gpu_id LIMIT 3",
                    params=[run_date, workload, value],
                ).pl()["gpu_id"]
            assert top["gpu_id"].to_list() == expected.to_list(), (workload, way)
    report = (built.site / str(run_date) / "report.md").read_text(encoding="utf-8")
    first = heads["training_16bit"]["buy_used"]["gpu_id"][0]
    assert f"| 1 | {first} |" in report
    assert "mean" not in report.split("## Best performance per dollar")[1].split("##")[0]


def test_break_even_is_never_published_beyond_the_ownership_period(con):
    """Issue 23 step 6: a break-even later than the ownership period is 'never' (NULL + note)."""
    years = float(
        con.sql("SELECT json_extract(parameters, '$.years') FROM model_runs").fetchall()[0][0]
    )
    cloud = run_rows(con, "cloud_vs_buy")
    assert cloud.height
    assert cloud["break_even_days"].drop_nulls().max() <= years * 365
    never = cloud.filter(pl.col("break_even_days").is_null())
    assert never.height and never["break_even_note"].null_count() == 0
    assert cloud.filter(pl.col("break_even_days").is_not_null())[
        "break_even_note"
    ].null_count() == (cloud.filter(pl.col("break_even_days").is_not_null()).height)
    use = cloud["break_even_utilization"].drop_nulls()
    assert use.len() and use.min() > 0 and use.max() <= 1.0
    perf = run_rows(con, "perf_per_dollar")
    resale = perf.filter(pl.col("resale_usd").is_not_null())
    assert resale.height == perf.height  # every priced GPU has a resale estimate
    assert (resale["resale_low_usd"] <= resale["resale_usd"]).all()
    assert (resale["resale_usd"] <= resale["resale_high_usd"]).all()
    assert (resale["resale_usd"] < resale["price_usd"]).all()
