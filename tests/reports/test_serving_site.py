"""The site's LLM serving pages (issue 24, item 8) on a small hand-made warehouse.

A migrated, otherwise empty warehouse gets hand-made rows for the serving tables (their
contract schemas from reports/serving_schema.py) and two catalog GPUs; the front page,
llm.html and a GPU page are rendered from it and checked for the systems, prices, users and
attribution they must show, and llm.html is opened in Chromium at phone width.
"""

import datetime as dt
import re
import shutil

import duckdb
import polars as pl
import pytest

from model.parameters import ModelParameters
from reports.charts.rendering import render_many
from reports.charts.serving import serving_chart_data, serving_cost_chart
from reports.content.mlcommons import result_line
from reports.content.serving import cost_cell, serving_summary_table
from reports.dataset import prepare_dataset
from reports.figures import serving_chart_jobs
from reports.pages import (
    cell_html,
    gpu_pages,
    md_table,
    render_front_page,
    render_gpu_page,
    render_llm_page,
)
from reports.serving_schema import SERVING_SCHEMAS, empty_serving_table, read_serving_table
from warehouse.db import migrate

RUN = dt.date(2026, 10, 7)
H100, R3090 = "h100-sxm5-80gb", "rtx-3090"
MLPERF_CITATION = (
    "mlcommons/inference_results_v5.1 closed/NVIDIA/results/"
    "NVIDIA_H100-SXM-80GB_x8_TRT/llama2-70b-99/Offline@1a2b3c4d"
)


def cost_row(gpu, n, bits, basis, target, users, per_user, out, low, high, inp, rank=1):
    return {
        "run_date": RUN,
        "gpu_id": gpu,
        "model_id": "llama-3.3-70b",
        "precision_bits": bits,
        "num_gpus": n,
        "basis": basis,
        "min_tokens_per_s_per_user": float(target),
        "concurrency": users,
        "output_tokens_per_s_per_user": per_user,
        "usd_per_million_output_tokens": out,
        "usd_per_million_input_tokens": inp,
        "low": low,
        "high": high,
        "utilization": 0.6,
        "detail": "test row",
        "rank": rank,
    }


COST = [
    # 20 tokens/s per user: the front page's target.
    cost_row(H100, 8, 8, "rent_on_demand", 20, 128, 22.4, 0.62, 0.51, 0.78, 0.16),
    cost_row(H100, 2, 8, "rent_on_demand", 20, 32, 21.0, 0.95, 0.80, 1.20, 0.25, rank=2),
    cost_row(H100, 8, 8, "rent_spot", 20, 128, 22.4, 0.35, 0.28, 0.45, 0.09),
    cost_row(H100, 8, 8, "buy_new", 20, 128, 22.4, 0.41, 0.33, 0.52, 0.10),
    cost_row(R3090, 4, 4, "buy_used", 20, 16, 20.5, 1.10, 0.85, 1.45, 0.30),
    # The same systems at 10 and 50 tokens/s per user.
    cost_row(H100, 8, 8, "rent_on_demand", 10, 256, 11.8, 0.44, 0.36, 0.55, 0.12),
    cost_row(H100, 8, 8, "rent_on_demand", 50, 32, 55.0, 1.90, 1.55, 2.40, 0.48),
    cost_row(H100, 2, 8, "rent_on_demand", 10, 64, 12.5, 0.70, 0.58, 0.86, 0.18),
    cost_row(H100, 8, 8, "buy_new", 10, 256, 11.8, 0.29, 0.23, 0.37, 0.07),
    cost_row(H100, 8, 8, "buy_new", 50, 32, 55.0, 1.25, 1.00, 1.60, 0.31),
]
GPT_OSS = {**COST[0], "model_id": "gpt-oss-120b", "num_gpus": 1, "precision_bits": 4}
API = [
    {"model_id": "llama-3.3-70b", "provider": "provider-a", "usd_per_million_input_tokens": 0.23,
     "usd_per_million_output_tokens": 0.60, "as_of": dt.date(2026, 9, 30),
     "citation": "test row", "url": "https://example.org/a"},
    {"model_id": "llama-3.3-70b", "provider": "provider-b", "usd_per_million_input_tokens": 0.88,
     "usd_per_million_output_tokens": 0.88, "as_of": dt.date(2026, 9, 28),
     "citation": "test row", "url": None},
    # Published after the version's as-of date: never shown in it.
    {"model_id": "llama-3.3-70b", "provider": "provider-c", "usd_per_million_input_tokens": 0.01,
     "usd_per_million_output_tokens": 0.02, "as_of": dt.date(2026, 11, 1),
     "citation": "test row", "url": None},
]  # fmt: skip


def serving_row(bits, users, system, per_user, joules, basis="measured", fits=True):
    return {
        "run_date": RUN,
        "gpu_id": H100,
        "model_id": "llama-3.3-70b",
        "precision_bits": bits,
        "num_gpus": 1,
        "concurrency": users,
        "engine": "tensorrt-llm",
        "fits": fits,
        "kv_capacity_tokens": 90_000,
        "output_tokens_per_s": system,
        "output_tokens_per_s_per_user": per_user,
        "low": None if system is None else system * 0.85,
        "high": None if system is None else system * 1.15,
        "prefill_tokens_per_s": 9000.0,
        "ttft_s": 0.4,
        "joules_per_output_token": joules,
        "energy_basis": basis,
        "interconnect": "NVLink",
        "method": "modelled: decode roofline",
        "evidence": "modelled: fitted to " + MLPERF_CITATION,
    }


SERVING = [
    serving_row(8, 1, 31.0, 31.0, 22.6),
    serving_row(8, 4, 118.0, 29.5, 5.9),
    serving_row(8, 16, 420.0, 26.3, 1.7),
    serving_row(8, 32, None, None, None, fits=False),  # the KV cache no longer fits
    serving_row(4, 1, 52.0, 52.0, 13.5, basis="tdp"),
    serving_row(4, 64, 2150.0, 33.6, 0.33, basis="tdp"),
]
BENCHMARKS = [
    {"source": "mlperf-inference-v5.1", "gpu_id": H100, "num_gpus": 8, "engine": "tensorrt-llm",
     "engine_version": None, "model_id": "llama-2-70b", "precision": "fp8", "precision_bits": 8,
     "scenario": "offline", "concurrency": None, "input_tokens": None, "output_tokens": None,
     "output_tokens_per_s": 24_000.0, "output_tokens_per_s_per_user": None, "ttft_ms": None,
     "tpot_ms": None, "power_w": None, "as_of": dt.date(2025, 9, 9),
     "citation": MLPERF_CITATION},
    {"source": "vllm-sweep", "gpu_id": R3090, "num_gpus": 1, "engine": "vllm",
     "engine_version": "0.6.0", "model_id": "llama-3.1-8b", "precision": "fp16",
     "precision_bits": 16, "scenario": "sweep", "concurrency": 32, "input_tokens": 512,
     "output_tokens": 256, "output_tokens_per_s": 1400.0, "output_tokens_per_s_per_user": 43.0,
     "ttft_ms": 300.0, "tpot_ms": 23.0, "power_w": None, "as_of": dt.date(2025, 1, 1),
     "citation": "example/vllm-sweeps results.md@abcdef0"},
]  # fmt: skip


def put(con: duckdb.DuckDBPyConnection, table: str, rows: list[dict]) -> None:
    """The table as the contract has it (replacing a migration's version, if any)."""
    frame = pl.DataFrame(rows, schema=SERVING_SCHEMAS[table])
    con.sql(f"DROP TABLE IF EXISTS {table}")
    con.register("rows_frame", frame)
    con.sql(f"CREATE TABLE {table} AS SELECT * FROM rows_frame")
    con.unregister("rows_frame")


def warehouse(with_serving: bool = True) -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    migrate(con)
    con.execute(
        "INSERT INTO model_runs VALUES (?, now(), ?, ?)",
        [RUN, R3090, ModelParameters().to_json()],
    )
    for gpu, name, memory in ((H100, "NVIDIA H100 SXM5 80 GB", 80.0), (R3090, "RTX 3090", 24.0)):
        con.execute(
            "INSERT INTO gpus (gpu_id, name, vendor, architecture, form_factor, memory_gb,"
            " memory_bandwidth_gbs, source, as_of) VALUES (?, ?, 'nvidia', 'x', 'pcie', ?,"
            " 1000, 'test', DATE '2026-01-01')",
            [gpu, name, memory],
        )
    if with_serving:
        put(con, "llm_serving_cost", [*COST, GPT_OSS])
        put(con, "llm_api_prices", API)
        put(con, "llm_serving", SERVING)
        put(con, "llm_serving_benchmarks", BENCHMARKS)
    return con


@pytest.fixture(scope="module")
def ds():
    con = warehouse()
    yield prepare_dataset(con, RUN)
    con.close()


def text_of(html: str) -> str:
    """The page's text with tags dropped and spaces collapsed (what a reader sees)."""
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_absent_tables_read_as_empty_frames_with_the_contract_schema():
    con = warehouse(with_serving=False)
    for table in SERVING_SCHEMAS:
        con.sql(f"DROP TABLE IF EXISTS {table}")
    data = prepare_dataset(con, RUN)
    assert data.llm_serving.is_empty() and data.llm_serving_cost.is_empty()
    assert data.llm_api_prices.schema == empty_serving_table("llm_api_prices").schema
    html = text_of(render_front_page(data))
    assert "No LLM results in this version." in html and "Result not verified" not in html
    assert "No serving cost in this version." in text_of(render_llm_page(data, set()))
    con.sql("CREATE TABLE llm_api_prices (model_id VARCHAR, provider VARCHAR)")
    with pytest.raises(ValueError, match="llm_api_prices lacks contract columns"):
        read_serving_table(con, "llm_api_prices", RUN)


def test_a_migrated_table_holds_the_contract_columns():
    """Once the tables' migrations land, each must hold every contract column."""
    con = duckdb.connect()
    migrate(con)
    for table, schema in SERVING_SCHEMAS.items():
        columns = {
            r[0]
            for r in con.sql(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                params=[table],
            ).fetchall()
        }
        assert not columns or set(schema) <= columns, (table, set(schema) - columns)


def test_front_page_shows_the_cheapest_system_per_basis_beside_the_api_band(ds):
    text = text_of(render_front_page(ds))
    assert "Serving many users: the cheapest system at 20 tokens/s per user" in text
    # Rent on-demand: the 8-GPU system beats the 2-GPU one (rank 2) per token.
    assert (
        "8x h100-sxm5-80gb $0.62 per 1M output tokens ($0.51–$0.78) "
        "$0.16 per 1M input tokens 128 users at 22 tokens/s each; 8-bit" in text
    )
    assert "4x rtx-3090 $1.10 per 1M output tokens ($0.85–$1.45)" in text  # buy used
    assert "$0.35 per 1M output tokens" in text  # spot
    # The API band: both providers up to the as-of date, not the one published after it.
    assert "published API prices, for comparison (not an input)" in text
    assert "$0.60–$0.88 per 1M output $0.23–$0.88 per 1M input 2 providers" in text
    assert "$0.02" not in text
    assert "no published API price" in text  # gpt-oss-120b has none
    # Batch 1 stays, retitled and labelled as not the cost of serving.
    assert "One user, on your own machine" in text
    assert "this is not the cost of serving" in text
    assert "Result not verified by MLCommons Association" in text


def test_llm_page_answers_per_model_target_and_basis(ds):
    html = render_llm_page(ds, {"llm_serving_llama-3.3-70b"})
    text = text_of(html)
    assert 'id="model-llama-3.3-70b"' in html and 'href="#model-gpt-oss-120b"' in html
    assert 'src="charts/llm_serving_llama-3.3-70b.svg"' in html
    assert "charts/llm_serving_gpt-oss-120b" not in html  # not rendered: not shown
    # Each target's cheapest system per basis (buy new, buy used: none, rent on-demand),
    # and what 100 and 1,000 users need.
    assert (
        "≥ 10 tokens/s per user 8x h100-sxm5-80gb $0.29 per 1M output tokens ($0.23–$0.37) "
        "$0.07 per 1M input tokens 256 users at 12 tokens/s each; 8-bit "
        "100 users: 1 system, 8 GPUs; 1,000 users: 4 systems, 32 GPUs – "
        "8x h100-sxm5-80gb $0.44 per 1M output tokens ($0.36–$0.55)" in text
    )
    assert "1,000 users: 8 systems, 64 GPUs" in text  # 128 users per system at 20 tok/s
    assert "100 users: 1 system, 1 GPU; 1,000 users: 8 systems, 8 GPUs" in text  # gpt-oss
    assert "$1.90 per 1M output tokens ($1.55–$2.40)" in text  # 50 tokens/s per user
    assert (
        "API list price, provider-a: $0.60 output, $0.23 input per 1M tokens, as of "
        "2026-09-30; test row; https://example.org/a" in text
    )
    # The MLPerf® results behind the model, attributed as MLCommons requires.
    assert "Result not verified by MLCommons Association." in text
    assert "registered and unregistered trademarks of MLCommons Association" in text
    assert (
        "MLPerf® Inference v5.1, Closed division, benchmark llama2-70b-99, scenario Offline, "
        "NVIDIA NVIDIA_H100-SXM-80GB_x8_TRT, 8 GPU(s) (h100-sxm5-80gb); result ID not stated "
        "in the cited file; published 2025-09-09; retrieved 2026-11-26 from "
        "https://github.com/mlcommons/inference_results_v5.1 (commit 1a2b3c4d)." in text
    )
    assert "vllm-sweep" not in text and "example/vllm-sweeps" not in text
    assert "See www.mlcommons.org for more information." in text


def test_result_line_keeps_a_stated_result_id():
    row = {**BENCHMARKS[0], "citation": MLPERF_CITATION.replace("@", " entry 5.1-0042@")}
    assert "result ID 5.1-0042;" in result_line(row)


def test_gpu_page_shows_its_serving_curve_with_energy_and_basis(ds):
    pages = {p.gpu_id: p for p in gpu_pages(ds, set())}
    h100 = text_of(render_gpu_page(ds.version, pages[H100]))
    assert "LLM serving (many users at once)" in h100
    # 8-bit: one GPU holds it up to 16 users (32 no longer fits the KV cache).
    assert (
        "llama-3.3-70b h100-sxm5-80gb, 8-bit tensorrt-llm, NVLink 31 (26–36) 31 per user "
        "118 (100–136) 30 per user 420 (357–483) 26 per user – – 16 users 26 tokens/s each "
        "23 J at 1 → 1.7 J at 16 measured power" in h100
    )
    # 4-bit: 64 users fit; nothing computed at 4 or 16 users is shown as a gap, not invented.
    assert "2,150 (1,828–2,472) 34 per user – 64 users" in h100
    assert "14 J at 1 → 0.33 J at 64 board power (TDP)" in h100
    assert "NVIDIA_H100-SXM-80GB_x8_TRT" in h100 and "Result not verified" in h100
    assert "LLM: one user, on your own machine" in h100
    r3090 = text_of(render_gpu_page(ds.version, pages[R3090]))
    assert "No model fits this GPU for serving" in r3090
    assert "NVIDIA_H100-SXM-80GB_x8_TRT" not in r3090


def test_report_markdown_carries_the_summary(ds):
    md = md_table(serving_summary_table(ds))
    assert md.startswith("| model | buy new | buy used | rent on-demand | rent spot |")
    assert "8x h100-sxm5-80gb; $0.62 per 1M output tokens ($0.51–$0.78)" in md


def test_chart_shows_the_main_systems_and_the_api_band(ds):
    data = serving_chart_data(ds.llm_serving_cost, "llama-3.3-70b", "rent_on_demand")
    assert set(data["system"]) == {"8x h100-sxm5-80gb, 8-bit", "2x h100-sxm5-80gb, 8-bit"}
    spec = serving_cost_chart(ds.llm_serving_cost, ds.llm_api_prices, "llama-3.3-70b").to_dict()
    text = str(spec)
    assert "rect" in text and "0.6" in text and "0.88" in text
    assert "$ per 1M output tokens (log)" in text


def test_cells_escape_data():
    cell = cell_html(cost_cell({**COST[0], "gpu_id": "<b>x</b>"}))
    assert "<b>x</b>" not in cell and "&lt;b&gt;x&lt;/b&gt;" in cell


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian chromium is not installed")
def test_llm_page_and_serving_sections_fit_a_phone(ds, tmp_path):
    from playwright.sync_api import sync_playwright

    from tests.reports.test_site_pages import CHROMIUM_ARGS, horizontal_overflow, loaded_images

    charts = tmp_path / "charts"
    render_many(serving_chart_jobs(ds, charts))
    served = {p.name.removesuffix(".svg") for p in charts.glob("llm_serving_*.svg")}
    models = ("llama-3.3-70b", "gpt-oss-120b")
    assert served == {f"llm_serving_{m}{v}" for m in models for v in ("", ".narrow")}
    (tmp_path / "llm.html").write_text(render_llm_page(ds, served), encoding="utf-8")
    (tmp_path / "index.html").write_text(render_front_page(ds), encoding="utf-8")
    (tmp_path / "gpu").mkdir()
    page = next(p for p in gpu_pages(ds, set()) if p.gpu_id == H100)
    (tmp_path / "gpu" / f"{H100}.html").write_text(
        render_gpu_page(ds.version, page), encoding="utf-8"
    )
    with sync_playwright() as p:
        chrome = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for name in ("llm.html", "index.html", f"gpu/{H100}.html"):
                tab = chrome.new_page(viewport={"width": 390, "height": 900})
                errors = []
                tab.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
                tab.goto((tmp_path / name).as_uri())
                tab.wait_for_load_state("load")
                assert horizontal_overflow(tab) <= 0, name
                # The serving tables become cards: no table box scrolls sideways either.
                wide = tab.evaluate(
                    "[...document.querySelectorAll('table.verdict, table.cards')]"
                    ".filter(t => t.scrollWidth > t.clientWidth + 1).length"
                )
                assert wide == 0, name
                if name == "llm.html":
                    images = loaded_images(tab)
                    assert images and all(i["ok"] for i in images), images
                    assert all(i["src"].endswith(".narrow.svg") for i in images)
                    assert all(i["w"] <= 390 for i in images), images
                assert not errors
                tab.close()
        finally:
            chrome.close()
