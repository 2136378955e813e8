"""Machines sold whole and unified memory (issue 24 item 6).

A DGX Spark or Mac Studio is priced as a machine: no host is added and it is costed only
as one machine; its GPU holds only its share of unified memory in the LLM fit; an Apple
GPU (PyTorch on MPS, outside the ranking's stacks) is never a pick, with the reason in its
caveat; titles of such machines (RAM, SSD, "DGX") are read as the machine. Hand-made
tables, plus the bundled spec files where the test is about them.
"""

import datetime as dt

import polars as pl
import pytest

from model.cloud import cloud_vs_buy
from model.cost import perf_per_dollar, systems_frame
from model.eligibility import evidence_basis
from model.llm import memory_fit
from model.parameters import ModelParameters
from sources.bundled import DATA_DIR, bundled_catalog, read_gpu_specs
from sources.catalog import match_title
from sources.specs.unified_memory import read_unified_memory, with_llm_memory
from sources.tables import BadInputError

DAY = dt.date(2026, 5, 20)
PARAMS = ModelParameters()
SPECS = DATA_DIR / "specs"


def catalog() -> pl.DataFrame:
    """A PCIe card and a machine sold whole, both 250 W."""
    return pl.DataFrame(
        {
            "gpu_id": ["card", "box"],
            "tdp_w": [250.0, 250.0],
            "memory_gb": [32.0, 128.0],
            "form_factor": ["pcie", "system"],
        }
    )


def inputs():
    relative = pl.DataFrame({"gpu_id": ["card", "box"], "value": [1.0, 1.0]}).with_columns(
        workload=pl.lit("training_16bit"), method=pl.lit("measured")
    )
    prices = pl.DataFrame(
        {"gpu_id": ["card", "box"], "market": ["new", "new"], "price_usd": [2000.0, 4000.0]}
    ).with_columns(price_day=pl.lit(dt.date(2026, 5, 1)))
    return relative, prices


def test_a_machine_sold_whole_has_no_host_and_only_one_machine():
    relative, prices = inputs()
    out = perf_per_dollar(relative, prices, catalog(), PARAMS, DAY)
    box = out.filter(pl.col("gpu_id") == "box")
    card = out.filter((pl.col("gpu_id") == "card") & (pl.col("system_gpus") == 1)).row(
        0, named=True
    )
    assert box["system_gpus"].to_list() == [1]  # never costed as 2, 4 or 8 linked boxes
    row = box.row(0, named=True)
    assert (row["platform"], row["price_scope"], row["host_cost_usd"]) == ("system", "system", 0.0)
    electricity = PARAMS.years * row["electricity_usd_per_year"]
    assert row["total_cost_usd"] == pytest.approx(4000.0 + electricity)
    # The card pays its workstation host; the box's price already holds one.
    assert card["host_cost_usd"] == pytest.approx(PARAMS.host_cost_usd[1] * PARAMS.host_cost_scale)
    assert card["total_cost_usd"] - 2000.0 > row["total_cost_usd"] - 4000.0


def test_the_systems_frame_has_one_hostless_machine_size():
    systems = systems_frame(PARAMS).filter(pl.col("platform") == "system")
    assert set(systems["system_gpus"]) == {1}
    assert set(systems["host_cost_usd"]) == {0.0}


def test_buying_a_machine_to_compare_with_renting_adds_no_host():
    offers = pl.DataFrame(
        {"gpu_id": ["box"], "provider": ["p"], "price_type": ["on_demand"]}
    ).with_columns(
        usd_per_gpu_hour=pl.lit(1.0),
        instance_type=pl.lit("x"),
        region=pl.lit("r"),
        observed_at=pl.lit(dt.datetime(2026, 5, 20, 6)),
    )
    _, prices = inputs()
    out = cloud_vs_buy(offers, prices, catalog(), PARAMS, DAY).row(0, named=True)
    assert out["platform"] == "system"
    assert out["buy_cost_usd"] == pytest.approx(4000.0)


def test_the_llm_fit_uses_the_gpus_share_of_unified_memory():
    gpus = pl.DataFrame(
        {"gpu_id": ["mac", "card"], "memory_gb": [96.0, 96.0], "llm_memory_gb": [72.0, 96.0]}
    )
    fit = memory_fit(gpus, (70,), (4,), (1,), 4096, 1.0)
    got = dict(fit.select("gpu_id", "available_gb").iter_rows())
    assert got["mac"] == pytest.approx(72 * 2**30 / 1e9)
    assert got["card"] == pytest.approx(96 * 2**30 / 1e9)
    # Without the column (a hand-made catalog), the whole memory is available.
    plain = memory_fit(gpus.drop("llm_memory_gb"), (70,), (4,), (1,), 4096, 1.0)
    assert plain["available_gb"].to_list() == [pytest.approx(96 * 2**30 / 1e9)] * 2


def test_the_bundled_caps_give_three_quarters_of_a_mac_and_96_gb_of_a_ryzen_ai_max():
    sheet = read_gpu_specs(SPECS / "gpu_specs.csv")
    caps = read_unified_memory(SPECS / "unified_memory.csv", sheet)
    gpus = with_llm_memory(sheet, caps)
    got = dict(gpus.select("gpu_id", "llm_memory_gb").iter_rows())
    assert got["m3-ultra-96gb"] == 72 and got["m3-ultra-256gb"] == 192
    assert got["ryzen-ai-max-395-128gb"] == 96
    assert got["dgx-spark"] == 128 and got["rtx-4090"] == 24  # no cap: the whole memory


@pytest.mark.parametrize(
    ("row", "field"),
    [
        ("rtx-4090,20,x,y,https://example.org/a,2026-01-01", "gpu_id"),  # not a machine
        ("m4-max-36gb,40,x,y,https://example.org/a,2026-01-01", "gpu_memory_gb"),  # > 36
        ("m4-max-36gb,27,x,y,http://example.org/a,2026-01-01", "source_url"),
    ],
)
def test_a_bad_unified_memory_row_is_refused_naming_file_and_line(tmp_path, row, field):
    path = tmp_path / "unified_memory.csv"
    path.write_text(
        "gpu_id,gpu_memory_gb,basis,citation,source_url,as_of\n"
        "m3-ultra-96gb,72,x,y,https://example.org/a,2026-01-01\n" + row + "\n"
    )
    with pytest.raises(BadInputError) as err:
        read_unified_memory(path, read_gpu_specs(SPECS / "gpu_specs.csv"))
    assert err.value.line == 3 and err.value.column == field


def test_a_gpu_outside_the_rankings_stacks_is_never_a_pick_and_says_why():
    gpus = pl.DataFrame(
        {"gpu_id": ["m", "mac"], "vendor": ["nvidia", "apple"], "architecture": ["ada", "ada"]}
    )
    relative = pl.DataFrame(
        {
            "gpu_id": ["m", "mac"],
            "workload": ["training_16bit"] * 2,
            "evidence": ["measured", "measured"],
            "n_results": [4, 4],
        }
    )
    placing = pl.DataFrame(
        {
            "gpu_id": ["m", "mac"],
            "workload": ["training_16bit"] * 2,
            "stack": ["pytorch-cuda", "pytorch-cuda"],
            "publisher": ["p", "q"],
        }
    )
    support = pl.DataFrame(
        {"gpu_id": ["mac"], "status": ["outside-ranking"], "since": [None]},
        schema_overrides={"since": pl.Utf8},
    )
    basis = evidence_basis(relative, placing, gpus, DAY, support)
    got = {r["gpu_id"]: r for r in basis.iter_rows(named=True)}
    assert got["m"]["eligible"]
    # Even a measured value is no pick when its stack is not one the ranking measures.
    assert got["mac"]["basis"] == "measured" and not got["mac"]["eligible"]
    assert "MPS" in got["mac"]["caveat"]


@pytest.mark.parametrize(
    ("title", "gpu"),
    [
        ("NVIDIA DGX Spark 4TB Founders Edition", "dgx-spark"),
        ("Apple Mac Studio M3 Ultra 96GB 1TB SSD", "m3-ultra-96gb"),
        ("Framework Desktop Ryzen AI Max+ 395 128GB", "ryzen-ai-max-395-128gb"),
        ("AMD Radeon AI PRO R9700 32GB", "radeon-ai-pro-r9700"),
        ("ASRock Intel Arc Pro B60 Creator 24GB", "arc-pro-b60"),
        # The system rule still refuses servers and PCs sold with a card.
        ("NVIDIA DGX A100 640GB", None),
        ("Gaming PC RTX 4090 i9-13900K 64GB RAM 2TB SSD", None),
        # A configuration the catalog does not list is reported, never read as another.
        ("Mac Studio M3 Ultra 512GB", None),
    ],
)
def test_titles_of_machines_sold_whole_are_read_as_the_machine(title, gpu):
    assert match_title(title, bundled_catalog()).gpu == gpu
