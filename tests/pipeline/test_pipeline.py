import duckdb
import polars as pl
import pytest

from pipeline.defs.metadata import PARTITION_ROW_COUNT, ROW_COUNT
from sources.tables import BadInputError
from tests.conftest import NIGHT, build, copy_build
from tests.paths import FIXTURES_ROOT
from warehouse.db import row_counts
from warehouse.export import open_published, parquet_files

FIXTURES = FIXTURES_ROOT / "retail"
PUBLISHED_TABLES = [
    "gpus",
    "price_observations",
    "gpu_prices_daily",
    "cloud_offers",
    "benchmark_results",
    "benchmark_debiased",
    "relative_performance",
    "perf_per_dollar",
    "cloud_vs_buy",
    "model_runs",
]


def published_counts(path) -> dict[str, int]:
    con = open_published(path)
    try:
        return row_counts(con)
    finally:
        con.close()


def test_every_published_table_has_rows(built):
    counts = published_counts(built.published)
    for table in PUBLISHED_TABLES:
        assert counts[table] > 0, table
        # Its Parquet (one file, or one per month) holds the same rows.
        files = parquet_files(built.published, table)
        assert files, table
        assert pl.scan_parquet(files).select(pl.len()).collect().item() == counts[table], table


def test_bundled_snapshot_meets_the_foundation_floor(built):
    con = open_published(built.published)
    try:
        one = lambda q: con.sql(q).fetchall()[0][0]  # noqa: E731
        assert one("SELECT count(*) FROM gpus") >= 30
        assert one("SELECT count(*) FROM benchmark_results WHERE batch_size_per_gpu > 0") >= 100
        assert one("SELECT count(DISTINCT provider) FROM cloud_offers") >= 3
        assert one("SELECT count(DISTINCT gpu_id) FROM gpu_prices_daily WHERE market='new'") > 10
        assert one("SELECT count(DISTINCT gpu_id) FROM gpu_prices_daily WHERE market='used'") > 10
        # Each workload has a ranking, and the reference GPU is exactly 1.
        rows = con.sql(
            "SELECT workload, count(*) FROM perf_per_dollar WHERE system_gpus = 1 "
            "GROUP BY workload ORDER BY workload"
        ).fetchall()
        assert [w for w, _ in rows] == ["inference_16bit", "inference_8bit", "training_16bit"]
        assert (
            one(
                "SELECT count(*) FROM relative_performance WHERE gpu_id = reference_gpu "
                "AND abs(value - 1) > 1e-9"
            )
            == 0
        )
        assert set(con.sql("SELECT DISTINCT system_gpus FROM perf_per_dollar").fetchall()) == {
            (1,),
            (2,),
            (4,),
            (8,),
        }
    finally:
        con.close()


def test_published_warehouse_is_read_only(built):
    con = open_published(built.published)
    with pytest.raises(duckdb.Error):
        con.sql("DELETE FROM gpus")
    con.close()


def test_rerun_leaves_every_row_count_unchanged(rerun):
    # Every bundled day ingested again, the model, report, site and publish run again
    # (the shared `rerun`, tests/conftest.py; its site: tests/reports/test_site_rerun.py).
    assert rerun.build.result.success
    assert published_counts(rerun.build.published) == rerun.before


@pytest.mark.slow(seconds=15)
def test_malformed_row_fails_only_its_source_and_keeps_yesterdays_rows(built, tmp_path, data_copy):
    root = tmp_path / "broken"
    copy_build(built, root)
    before = published_counts(root / "published")
    bench = data_copy / "benchmarks" / "lambda_pytorch.csv"
    lines = bench.read_text(encoding="utf-8").splitlines(keepends=True)
    fields = lines[5].split(",")
    fields[8] = "12O0"  # a letter O where a digit belongs, on file line 6
    lines[5] = ",".join(fields)
    bench.write_text("".join(lines), encoding="utf-8")

    result = build(root, data_copy, days=NIGHT).result
    assert not result.success
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert [e.step_key for e in failures] == ["benchmark_results"]
    error = failures[0].event_specific_data.error
    assert BadInputError.__name__ in error.to_string()
    assert f"{bench}, line 6, field 'throughput'" in error.to_string()
    # Other sources still loaded; nothing was erased; the published snapshot is untouched.
    succeeded = {e.step_key for e in result.all_events if e.event_type_value == "STEP_SUCCESS"}
    # (cloud offers run per provider before the main graph, see test_broken_provider_...)
    assert {"gpus", "price_observations", "gpu_prices_daily"} <= succeeded
    assert "published_warehouse" not in succeeded
    con = duckdb.connect(str(root / "gpuvalue.duckdb"), read_only=True)
    assert row_counts(con)["benchmark_results"] == before["benchmark_results"]
    con.close()
    assert published_counts(root / "published") == before


def test_site_versions(built):
    versions = [p.name for p in built.site.iterdir() if p.is_dir() and not p.name.startswith(".")]
    assert "latest" in versions
    dated = [v for v in versions if v != "latest"]
    assert len(dated) == 1
    for folder in (built.site / dated[0], built.site / "latest"):
        charts = [
            f"charts/{name}{variant}.{ext}"
            for name in ("relative_performance", "perf_per_dollar", "price_history")
            for variant in ("", ".narrow")
            for ext in ("svg", "vl.json")
        ]
        for name in (
            "index.html",
            "report.md",
            "methodology.html",
            "gpus.html",
            "llm.html",
            "tables.html",
            "downloads.html",
            "gpu/rtx-4090.html",
            "charts/gpu/rtx-4090.svg",
            "data/perf_per_dollar.csv",
            "data/perf_per_dollar.parquet",
            *charts,
        ):
            assert (folder / name).stat().st_size > 0, folder / name
    assert f'href="{dated[0]}/index.html"' in (built.site / "index.html").read_text()
    report = (built.site / "latest" / "report.md").read_text()
    assert "## How old each input is" in report
    assert "## Best performance per dollar" in report and "**Buy used (1-GPU system)**" in report


def test_retail_prices_come_through_the_parsers(built):
    con = open_published(built.published)
    try:
        pages = con.sql("SELECT source, outcome, records FROM retail_pages").fetchall()
        assert len(pages) == 2 and {p[1] for p in pages} == {"ok"}
        parsed = con.sql(
            "SELECT source, gpu_id, drop_reason, citation, archive_sha256 "
            "FROM price_observations WHERE archive_sha256 IS NOT NULL"
        ).pl()
        assert parsed.height == 14  # 13 Amazon cards, 1 eBay item
        assert set(parsed["source"]) == {"amazon", "ebay"}
        # Every parsed row carries the citation of the page its figures came from.
        assert all(" " in c and "@" in c for c in parsed["citation"])
        used = parsed.filter(parsed["drop_reason"].is_null())
        assert {"rtx-4090", "rtx-3090", "rtx-5080", "rtx-5090"} <= set(used["gpu_id"])
        reasons = dict(con.sql("SELECT reason, sum(n) FROM price_drops GROUP BY reason").fetchall())
        assert reasons  # the report's table is never silently empty
    finally:
        con.close()
    report = (built.site / "latest" / "report.md").read_text()
    assert "## Retail observations: used and left out" in report


def test_captcha_page_is_counted_and_writes_nothing(built, second_night):
    # One more Amazon search answered with a captcha page on the night's day (conftest).
    parsed = "SELECT count(*) FROM price_observations WHERE source IN ('amazon', 'ebay')"
    con = open_published(built.published)
    try:
        parsed_before = con.sql(parsed).fetchall()
    finally:
        con.close()
    assert second_night.build.result.success
    con = open_published(second_night.build.published)
    try:
        outcomes = con.sql("SELECT outcome, count(*) FROM retail_pages GROUP BY ALL").fetchall()
        assert dict(outcomes) == {"ok": 2, "captcha": 1}
        assert con.sql(parsed).fetchall() == parsed_before
    finally:
        con.close()
    after = published_counts(second_night.build.published)
    # The only new observation is the curated UK sale the same night adds (conftest).
    assert after["price_observations"] == second_night.before["price_observations"] + 1


def test_broken_provider_fails_alone_and_its_offers_show_as_stale(built, second_night):
    # Azure's file changed its schema on line 4 (conftest); in the same night a Lambda fact
    # is mis-mapped (tests/pipeline/test_cloud_replay.py): exactly those two providers may fail.
    con = open_published(built.published)
    azure_before = con.sql("SELECT count(*) FROM cloud_offers WHERE provider = 'azure'").fetchall()
    con.close()

    out = second_night.build
    assert out.result.success  # the main graph and the other providers published
    con = open_published(out.published)
    try:
        assert (
            con.sql("SELECT count(*) FROM cloud_offers WHERE provider = 'azure'").fetchall()
            == azure_before
        )  # yesterday's good offers stay
        latest = dict(
            con.sql(
                "SELECT source, arg_max(status, attempted_at) FROM source_status GROUP BY source"
            ).fetchall()
        )
        assert latest["azure"] == "failed"
        others = ("aws", "coreweave", "gcp", "hyperstack", "runpod", "vast")
        assert {latest[p] for p in others} == {"ok"}
        assert latest["lambda"] == "failed"  # its own fault, tests/pipeline/test_cloud_replay.py
    finally:
        con.close()
    report = (out.site / "latest" / "report.md").read_text()
    # Cloud inputs are listed per provider x pricing kind (its list prices first).
    azure_row = next(
        line for line in report.splitlines() if "| cloud prices | azure (list) |" in line
    )
    assert "| failed |" in azure_row and "last attempt failed" in azure_row
    assert "azure.csv, line 4" in azure_row and "are kept" in azure_row


def test_bundled_run_records_the_retail_sources_as_ok(built):
    con = open_published(built.published)
    try:
        rows = con.sql(
            "SELECT source, status, detail FROM source_status WHERE kind = 'retail' ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    # A bundled run replaces whatever an earlier live night recorded for Amazon and eBay.
    assert rows == [("amazon", "ok", "bundled snapshot"), ("ebay", "ok", "bundled snapshot")]


@pytest.mark.slow(seconds=8)
def test_an_unreadable_warehouse_fails_at_once_and_says_why(tmp_path, capsys):
    root = tmp_path / "damaged"
    root.mkdir()
    (root / "gpuvalue.duckdb").write_bytes(b"not a database\n" * 100)
    result = build(root).result
    assert not result.success
    failures = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    assert failures
    for event in failures:
        assert "not a readable DuckDB database" in event.event_specific_data.error.to_string()
    # Each cloud run says what failed instead of claiming its offers were kept.
    err = capsys.readouterr().err
    assert "not a readable DuckDB database" in err and "last good offers are kept" not in err
    assert (root / "gpuvalue.duckdb").read_bytes() == b"not a database\n" * 100


def test_assets_that_write_rows_report_dagster_row_counts(built):
    """dagster/row_count on every table asset; dagster/partition_row_count per day."""
    metadata = {}
    for event in built.result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization
        values = {k: v.value for k, v in materialization.metadata.items()}
        key = materialization.asset_key.to_user_string()
        metadata.setdefault(key, {})[materialization.partition] = values
    for key, partitions in metadata.items():
        for values in partitions.values():
            if "rows" in values:  # it wrote rows: all of them are in its table
                assert values[ROW_COUNT] >= values["rows"], key
    assert metadata["relative_performance"][None][ROW_COUNT] > 0
    # A range run (one Dagster run for every snapshot day) gives each day its own count.
    daily = metadata["gpu_prices_daily"]
    con = open_published(built.published)
    try:
        stored = dict(
            con.sql(
                "SELECT CAST(day AS VARCHAR), count(*) FROM gpu_prices_daily "
                "WHERE day BETWEEN ? AND ? GROUP BY ALL",
                params=[min(daily), max(daily)],
            ).fetchall()
        )
    finally:
        con.close()
    counts = {day: values[PARTITION_ROW_COUNT] for day, values in daily.items()}
    assert {day: n for day, n in counts.items() if n} == stored
    assert sum(counts.values()) == next(iter(daily.values()))["rows"]
