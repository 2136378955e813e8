"""Machine access, complete downloads and credit (issue 25 items 7, 9, 10) on the shared build.

Each version folder has feed.atom (Atom 1.0, parsed with lxml), llms.txt (llmstxt.org),
datapackage.json (Frictionless, checked against the files on disk) and one JSON file per
GPU; every download holds what the model read or says why it is empty; the repository has
LICENSE and CITATION.cff; every page showing an MLPerf-derived figure carries MLCommons'
attribution.
"""

import datetime as dt
import gzip
import hashlib
import json
import os
import re
from pathlib import Path

import duckdb
import polars as pl
import pytest
import yaml
from lxml import etree

from reports.changes import Changes
from reports.content.licences import DATA_SOURCES
from reports.content.mlcommons import TRADEMARK, UNVERIFIED, result_line
from reports.downloads import export_tables
from reports.feed import Entry, change_summary, earlier_entries, read_entries, render_feed
from warehouse.export import open_published
from warehouse.reads import read_latest_offers

ROOT = Path(__file__).resolve().parents[2]
ATOM = "{http://www.w3.org/2005/Atom}"
_LINK = re.compile(r"^- \[([^\]]+)\]\(([^)]+)\)")


@pytest.fixture(scope="module")
def version(built) -> Path:
    return built.site / "latest"


@pytest.fixture(scope="module")
def con(built):
    connection = open_published(built.published)
    yield connection
    connection.close()


@pytest.fixture(scope="module")
def run_date(con) -> dt.date:
    return con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]


@pytest.fixture(scope="module")
def package(version) -> dict:
    return json.loads((version / "datapackage.json").read_text(encoding="utf-8"))


def _versions(site: Path) -> list[str]:
    return sorted(
        (p.name for p in site.iterdir() if p.is_dir() and re.match(r"^\d{4}-\d{2}-\d{2}", p.name)),
        reverse=True,
    )


def _check_feed(folder: Path, versions: list[str]) -> None:
    """feed.atom parses as Atom 1.0 with one entry per version, newest first."""
    root = etree.parse(str(folder / "feed.atom")).getroot()
    assert root.tag == f"{ATOM}feed"
    for required in ("id", "title", "updated", "author"):
        assert root.find(f"{ATOM}{required}") is not None, required
    assert root.find(f"{ATOM}author/{ATOM}name").text
    assert root.find(f"{ATOM}link[@rel='self']").get("href") == "feed.atom"
    entries = root.findall(f"{ATOM}entry")
    assert [e.findtext(f"{ATOM}id") for e in entries] == [
        f"urn:gpuvalue:version:{v}" for v in versions
    ]
    assert [e.findtext(f"{ATOM}updated") for e in entries] == [
        f"{v[:10]}T00:00:00Z" for v in versions
    ]
    assert root.findtext(f"{ATOM}updated") == f"{versions[0][:10]}T00:00:00Z"
    for entry in entries:
        assert entry.findtext(f"{ATOM}title")
        content = entry.find(f"{ATOM}content")
        assert content.get("type") == "text" and content.text.strip()
        link = entry.find(f"{ATOM}link[@rel='alternate']").get("href")
        # Resolved as a browser does: lexically (site/latest is a link into the release).
        assert Path(os.path.normpath(folder / link)).is_file(), link


def test_feed_has_one_entry_per_published_version(built, version):
    _check_feed(version, _versions(built.site))


def test_feed_of_a_second_night_adds_its_entry_and_keeps_the_first(second_night):
    site = second_night.build.site
    versions = _versions(site)
    assert len(versions) == 2
    _check_feed(site / versions[0], versions)
    entries = read_entries(site / versions[0] / "feed.atom")
    assert entries[0].summary.startswith(f"What changed since {versions[1]}:")
    assert "rtx-3080-ti" in entries[0].summary  # its used price rose 2.2x on night 2
    assert entries[1].summary.startswith("First published version")


def test_feed_entries_of_versions_without_a_feed_come_from_their_snapshots(tmp_path):
    old = tmp_path / "2026-09-01"
    (old / "data").mkdir(parents=True)
    pl.DataFrame({"gpu_id": ["a"]}).write_parquet(old / "data" / "gpus.parquet")
    newer = tmp_path / "2026-09-08"
    (newer / "data").mkdir(parents=True)
    pl.DataFrame({"gpu_id": ["a", "b"]}).write_parquet(newer / "data" / "gpus.parquet")
    entries = earlier_entries(tmp_path, "2026-09-08")
    assert [e.version for e in entries] == ["2026-09-08", "2026-09-01"]
    assert "b: new in the catalog" in entries[0].summary
    # Once a version has a feed, earlier ones are read from it, not recomputed.
    (newer / "feed.atom").write_text(render_feed([Entry("2026-09-08", "kept")]), "utf-8")
    assert earlier_entries(tmp_path, "2026-09-08") == [Entry("2026-09-08", "kept")]


def test_change_summary_lists_each_kind_of_change():
    empty = pl.DataFrame()
    changes = Changes(
        "2026-09-30",
        verdicts=pl.DataFrame(
            {
                "workload": ["training_16bit"],
                "kind": ["budget"],
                "limit": [2500.0],
                "option": ["buy_new"],
                "before": ["1× rtx-4090"],
                "after": ["1× rtx-5090"],
            }
        ),
        ranks=empty,
        prices=pl.DataFrame(
            {
                "gpu_id": ["rtx-4090"],
                "market": ["used"],
                "before": [1500.0],
                "after": [1700.0],
                "change_pct": [13.3],
            }
        ),
        gpus=empty,
        stale=empty,
    )
    text = change_summary(changes)
    assert text.splitlines()[0] == "What changed since 2026-09-30:"
    assert "1× rtx-4090 -> 1× rtx-5090" in text
    assert "rtx-4090 used: $1,500 -> $1,700 (+13.3 %)" in text


def test_llms_txt_lists_every_page_and_download(version):
    text = (version / "llms.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0].startswith("# gpuvalue ") and lines[2].startswith("> ")
    assert {"## Pages", "## Downloads", "## GPU pages", "## Machine-readable"} <= set(lines)
    links = [_LINK.match(x)[2] for x in lines if _LINK.match(x)]
    assert len(links) == len(set(links))
    for href in links:
        assert (version / href).is_file(), href
    listed = set(links)
    pages = {
        p.relative_to(version).as_posix()
        for p in version.rglob("*.html")
        if not p.relative_to(version).as_posix().startswith("charts/")
    }
    assert pages <= listed, sorted(pages - listed)[:5]
    downloads = {
        p.relative_to(version).as_posix()
        for p in (version / "data").iterdir()
        if p.is_file() and p.name.endswith((".csv", ".csv.gz", ".parquet"))
    }
    assert downloads and downloads <= listed, sorted(downloads - listed)[:5]
    assert {"feed.atom", "datapackage.json", "report.md", "methodology.md"} <= listed


def _csv_header(path: Path) -> list[str]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        return f.readline().rstrip("\n").split(",")


def test_datapackage_matches_the_files_on_disk(version, package):
    for required in ("name", "title", "licenses", "resources", "profile"):
        assert package[required], required
    assert re.match(r"^[a-z0-9._-]+$", package["name"])
    assert all(lic.get("name") or lic.get("path") for lic in package["licenses"])
    assert all(s["title"] for s in package["sources"])
    names = [r["name"] for r in package["resources"]]
    assert len(names) == len(set(names))
    on_disk = {
        f"data/{p.name}"
        for p in (version / "data").iterdir()
        if p.is_file() and p.name.endswith((".csv", ".csv.gz", ".parquet"))
    }
    assert {r["path"] for r in package["resources"]} == on_disk
    types = {"string", "number", "integer", "boolean", "date", "datetime", "time", "object"}
    for r in package["resources"]:
        path = version / r["path"]
        data = path.read_bytes()
        assert r["bytes"] == len(data), r["path"]
        assert r["hash"] == f"sha256:{hashlib.sha256(data).hexdigest()}", r["path"]
        assert re.match(r"^[a-z0-9._-]+$", r["name"]) and r["mediatype"] and r["format"]
        fields = [f["name"] for f in r["schema"]["fields"]]
        assert all(f["type"] in types | {"array"} for f in r["schema"]["fields"]), r["path"]
        if r["format"] == "csv":
            assert fields == _csv_header(path), r["path"]
            assert all(f["type"] in types for f in r["schema"]["fields"])
        else:
            assert fields == duckdb.sql(f"SELECT * FROM '{path}' LIMIT 0").columns
            assert r["rows"] == duckdb.sql(f"SELECT count(*) FROM '{path}'").fetchall()[0][0]
    perf = next(r for r in package["resources"] if r["name"] == "perf_per_dollar")
    kinds = {f["name"]: f["type"] for f in perf["schema"]["fields"]}
    assert kinds["run_date"] == "date" and kinds["rank"] == "integer"
    assert kinds["perf_per_dollar"] == "number" and kinds["gpu_id"] == "string"


def test_no_download_is_empty_without_a_reason(version, package, tmp_path):
    page = (version / "downloads.html").read_text(encoding="utf-8")
    for r in package["resources"]:
        if r["rows"] == 0:
            assert r["empty_reason"], r["name"]
            assert f"Empty:</strong> {r['empty_reason']}" in page, r["name"]
        else:
            assert "empty_reason" not in r
    # A table with no row in the window and nothing behind the run says why.
    con = duckdb.connect()
    con.sql(
        "CREATE TABLE retail_pages (day DATE, source VARCHAR, url VARCHAR, archive_sha256 VARCHAR)"
    )
    con.sql("CREATE TABLE spec_conflicts (gpu_id VARCHAR)")
    con.sql(
        "CREATE TABLE gpu_prices_daily (day DATE, gpu_id VARCHAR, market VARCHAR,"
        " price_usd DOUBLE, n_observations INTEGER, n_dropped INTEGER, price_min_usd DOUBLE,"
        " price_max_usd DOUBLE, sources VARCHAR)"
    )
    con.sql(
        "CREATE TABLE price_observations (observed_at TIMESTAMP, gpu_id VARCHAR, market VARCHAR,"
        " drop_reason VARCHAR, archive_sha256 VARCHAR)"
    )
    con.sql(
        "CREATE TABLE current_prices (run_date DATE, gpu_id VARCHAR, market VARCHAR,"
        " price_day DATE, price_method VARCHAR)"
    )
    out = {d.name: d for d in export_tables(con, dt.date(2026, 10, 7), tmp_path, {})}
    for name in ("retail_pages", "spec_conflicts", "price_observations", "current_prices"):
        assert out[name].rows == 0 and out[name].reason, name
    assert "bundled price history" in out["retail_pages"].reason


def test_cloud_offers_download_holds_every_offer_the_model_read(version, con, run_date):
    read = read_latest_offers(con, run_date)
    got = pl.read_parquet(version / "data" / "cloud_offers.parquet")
    assert got.height == read.height > 300
    key = ["provider", "instance_type", "region", "price_type", "observed_at"]
    assert got.select(key).sort(key).equals(read.select(key).sort(key))
    # Older snapshots than the download window are in it: the model read them.
    assert got["observed_at"].min().date() < run_date - dt.timedelta(days=31)
    # The daily prices behind every current price are in the daily download.
    daily = pl.read_parquet(version / "data" / "gpu_prices_daily.parquet")
    prices = con.sql(
        "SELECT gpu_id, market, price_day AS day FROM current_prices WHERE run_date = ?"
        " AND price_method = 'observed' AND market <> 'mean'",
        params=[run_date],
    ).pl()
    missing = prices.join(daily, on=["gpu_id", "market", "day"], how="anti")
    assert prices.height > 0 and missing.is_empty(), missing


def test_gpu_json_matches_the_tables(version, con, run_date):
    record = json.loads((version / "data" / "gpu" / "rtx-4090.json").read_text("utf-8"))
    assert record["gpu_id"] == "rtx-4090" and record["as_of"] == str(run_date)
    gpu = con.sql("SELECT * FROM gpus WHERE gpu_id = 'rtx-4090'").pl().row(0, named=True)
    assert record["specs"]["memory_gb"]["value"] == gpu["memory_gb"]
    assert record["specs"]["memory_gb"]["source"]
    relative = con.sql(
        "SELECT workload, value, value_low, value_high, method FROM relative_performance"
        " WHERE run_date = ? AND gpu_id = 'rtx-4090' ORDER BY workload",
        params=[run_date],
    ).pl()
    assert [
        (r["workload"], r["value"], r["value_low"], r["value_high"], r["method"])
        for r in record["relative_performance"]
    ] == list(relative.iter_rows())
    prices = con.sql(
        "SELECT market, price_usd, n_observations, age_days, sources FROM current_prices"
        " WHERE run_date = ? AND gpu_id = 'rtx-4090' ORDER BY market",
        params=[run_date],
    ).pl()
    assert [
        (p["market"], p["price_usd"], p["n_observations"], p["age_days"], p["sources"])
        for p in record["prices"]
    ] == list(prices.iter_rows())
    ranks = con.sql(
        "SELECT workload, market, rank FROM perf_per_dollar WHERE run_date = ?"
        " AND gpu_id = 'rtx-4090' AND system_gpus = 1 ORDER BY workload, market",
        params=[run_date],
    ).pl()
    assert [(b["workload"], b["market"], b["rank"]) for b in record["rank"]["buy"]] == list(
        ranks.iter_rows()
    )
    assert all(b["of"] >= b["rank"] for b in record["rank"]["buy"])
    assert record["rank"]["rent"]
    for link in record["links"].values():
        if link:
            assert Path(os.path.normpath(version / "data" / "gpu" / link)).is_file(), link
    assert (
        len(list((version / "data" / "gpu").glob("*.json")))
        == con.sql("SELECT count(*) FROM gpus").fetchall()[0][0]
    )


def test_every_page_with_an_mlperf_figure_carries_the_attribution(version, con, run_date):
    figures = ("MLPerf® Inference v", "MLPerf® Training v", "derived from MLPerf®")
    texts = {
        p.relative_to(version).as_posix(): p.read_text(encoding="utf-8")
        for p in version.rglob("*.html")
    }
    shown = {name for name, text in texts.items() if any(f in text for f in figures)}
    measured = {
        f"gpu/{g}.html"
        for (g,) in con.sql(
            "SELECT DISTINCT gpu_id FROM benchmark_debiased WHERE run_date = ?"
            " AND source = 'mlperf'",
            params=[run_date],
        ).fetchall()
    }
    assert {"index.html", "llm.html", "methodology.html", *measured} <= shown
    # Elsewhere the name appears only where the downloads page credits the source.
    assert {n for n, t in texts.items() if "MLPerf" in t} - shown == {"downloads.html"}
    for name in shown:
        text = texts[name]
        assert UNVERIFIED in text and TRADEMARK in text, name
        assert "are derived from MLPerf®" in text, name
    # A GPU measured by MLPerf Training and Inference lists each result it rests on.
    a100 = texts["gpu/a100-sxm4-40gb.html"]
    assert "MLPerf® Training v2.0, Closed division, benchmark bert" in a100
    assert "nettrix X660 G45_SXM4-40G_pytorch, 8 GPU(s)" in a100  # a system name with a space
    assert "time to train" in a100 and "retrieved 2026-11-21 from" in a100
    assert "MLPerf® results used" in texts["methodology.html"]


def test_result_line_names_suite_version_division_scenario_and_retrieval():
    line = result_line(
        {
            "source": "mlperf",
            "citation": "mlcommons/training_results_v4.1 Dell/results/XE9680x8H100/bert@b87b9e39",
            "num_gpus": 8,
            "gpu_id": "h100-sxm5-80gb",
            "as_of": "2024-11-13",
        },
        dt.date(2026, 11, 21),
    )
    assert line == (
        "MLPerf® Training v4.1, Closed division, benchmark bert, time to train (Training has "
        "no scenarios), Dell XE9680x8H100, 8 GPU(s) (h100-sxm5-80gb); result ID not "
        "transcribed (the system's results folder identifies it); published 2024-11-13; "
        "retrieved 2026-11-21 from https://github.com/mlcommons/training_results_v4.1 "
        "(commit b87b9e39)."
    )


def test_licence_citation_and_data_licences():
    licence = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert licence.startswith("MIT License\n\nCopyright (c) 2026 gpuvalue contributors\n")
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in licence
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert cff["message"] and cff["title"] and cff["license"] == "MIT"
    assert all(a.get("name") or a.get("family-names") for a in cff["authors"])
    for ref in cff.get("references", []):
        assert ref["type"] and ref["title"] and ref["authors"]
    data_md = (ROOT / "docs" / "data.md").read_text(encoding="utf-8")
    section = data_md.split("## Licences of the data sources")[1].split("\n## ")[0]
    for source in DATA_SOURCES:
        assert source.name in section, source.name


def test_downloads_page_names_each_sources_licence(version):
    page = (version / "downloads.html").read_text(encoding="utf-8")
    for source in DATA_SOURCES:
        assert source.licence.replace("'", "&#39;") in page, source.name
    for href in ("datapackage.json", "llms.txt", "feed.atom", "data/gpu/rtx-4090.json"):
        assert f'href="{href}"' in page and (version / href).is_file(), href
