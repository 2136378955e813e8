"""Every published figure is the same whatever order the rows come in (issue 26 item 6).

Warehouse scans and Polars group-bys return rows in no fixed order, so wherever a page takes
"the first matching row" the tie must be broken by a documented key (docs/methodology.md,
Ties), never by row order. These tests feed the site's renderers the bundled build's data
with every table's rows shuffled and check that every line shown is still shown (the
order of a table's lines is the readers' ORDER BY, which a shuffle undoes on purpose; two
fresh builds compare whole files by hand: docs/reliability.md, Published files). Downloads
and charts are written from shuffled input or after other renders: their bytes must not
move.
"""

import dataclasses
from collections import Counter

import altair as alt
import polars as pl
import pytest
import vl_convert as vlc

from model.verdicts import in_order
from reports import pages
from reports.charts.rendering import canonical_ids, render_chart
from reports.content.gpu_index import gpu_index_table
from reports.content.serving import cheapest
from reports.dataset import prepare_dataset
from reports.downloads import _download
from warehouse.export import open_published

SEEDS = (1, 2, 3)


@pytest.fixture(scope="module")
def dataset(built):
    con = open_published(built.published)
    run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    yield prepare_dataset(con, run_date)
    con.close()


def shuffled_like_a_read(ds, seed: int):
    """`ds` with every table's rows shuffled, then the order its loader guarantees restored
    (the verdicts are read `in_order`; the other tables' order is checked by the double
    build)."""
    mixed = shuffled(ds, seed)
    return dataclasses.replace(mixed, verdicts=in_order(mixed.verdicts))


def lines(pages_: dict[str, str]) -> dict[str, Counter]:
    """Each page as the multiset of its lines (a table row is one line)."""
    return {name: Counter(text.splitlines()) for name, text in pages_.items()}


def shuffled(value, seed: int):
    """`value` with the rows of every DataFrame in it (dataclass fields, nested) shuffled."""
    if isinstance(value, pl.DataFrame):
        return value.sample(fraction=1.0, shuffle=True, seed=seed)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {
            f.name: shuffled(getattr(value, f.name), seed)
            for f in dataclasses.fields(value)
            if f.init
        }
        return dataclasses.replace(value, **changed)
    return value


def rendered(ds) -> dict[str, str]:
    return {
        "report.md": pages.render_report_markdown(ds),
        "index.html": pages.render_front_page(ds),
        "tables.html": pages.render_tables_page(ds),
        "llm.html": pages.render_llm_page(ds, set()),
        "gpus.html": pages.md_table(gpu_index_table(ds)),
        "gpu/*.html": "".join(
            pages.render_gpu_page(ds.version, page) for page in pages.gpu_pages(ds, set())
        ),
    }


@pytest.mark.slow(seconds=30)
def test_the_report_and_the_pages_do_not_depend_on_row_order(dataset, monkeypatch):
    monkeypatch.setattr(pages, "_built_at", lambda: "2026-10-07 00:00 UTC")
    expected = lines(rendered(dataset))
    assert any("tokens/s" in line for line in expected["report.md"])
    for seed in SEEDS:
        got = lines(rendered(shuffled_like_a_read(dataset, seed)))
        for name, shown in expected.items():
            assert got[name] == shown, (
                f"{name} shows other lines with the rows in another order (seed {seed}): "
                f"lost {list((shown - got[name]).elements())[:3]}, "
                f"new {list((got[name] - shown).elements())[:3]}"
            )


def test_a_download_is_written_in_one_row_order(built, tmp_path):
    # llm_throughput's download came out in another row order from each build.
    with open_published(built.published) as con:
        frame = con.sql("SELECT * FROM llm_throughput").pl()
    written = set()
    for seed in (0, *SEEDS):
        out = tmp_path / str(seed)
        out.mkdir()
        _download(frame.sample(fraction=1.0, shuffle=True, seed=seed), out, "llm_throughput", "")
        written.add(((out / "llm_throughput.csv").read_bytes(), (out / "llm_throughput.parquet")
                     .read_bytes()))  # fmt: skip
    assert len(written) == 1


def clipped_chart(n: int) -> alt.Chart:
    frame = pl.DataFrame({"x": list(range(n)), "y": [float(i % 7) for i in range(n)]})
    return (
        alt.Chart(frame)
        .mark_line(clip=True)
        .encode(x="x:Q", y=alt.Y("y:Q", scale=alt.Scale(domain=[0, 5])))
    )


def test_a_chart_has_the_same_bytes_whatever_was_rendered_before_it(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = render_chart(clipped_chart(10), tmp_path / "a", "chart")[1].read_text()
    vlc.vegalite_to_svg(clipped_chart(20).to_dict())  # moves vl-convert's id counter on
    again = render_chart(clipped_chart(10), tmp_path / "b", "chart")[1].read_text()
    assert 'clip-path="url(#clip1)"' in first
    assert again == first


def test_clip_ids_are_numbered_in_order_of_first_use():
    svg = '<clipPath id="clip338"/><g clip-path="url(#clip338)"/><clipPath id="clip12"/>'
    expected = '<clipPath id="clip1"/><g clip-path="url(#clip1)"/><clipPath id="clip2"/>'
    assert canonical_ids(svg) == expected


def test_the_cheapest_serving_system_breaks_a_cost_tie_by_fewer_gpus_then_fewer_bits():
    rows = pl.DataFrame(
        {
            "model_id": ["m"] * 4,
            "min_tokens_per_s_per_user": [20] * 4,
            "basis": ["rent_spot"] * 4,
            "usd_per_million_output_tokens": [0.5, 0.5, 0.5, 0.7],
            "grounded": [True] * 4,
            "gpu_id": ["b200", "b200", "b200", "a100"],
            "num_gpus": [2, 1, 1, 1],
            "precision_bits": [4, 8, 4, 4],
        }
    )
    for seed in SEEDS:
        pick = cheapest(rows.sample(fraction=1.0, shuffle=True, seed=seed), "m", 20, "rent_spot")
        assert (pick["gpu_id"], pick["num_gpus"], pick["precision_bits"]) == ("b200", 1, 4)
