"""The methodology page and the generated block of docs/methodology.md."""

from pathlib import Path

import polars as pl

from reports.methodology import (
    docs_block,
    load_methodology_data,
    render_validation_markdown,
    sensitivity_summary,
    update_docs,
)
from warehouse.export import open_published

DOCS = Path(__file__).parents[2] / "docs" / "methodology.md"


def _data(built):
    with open_published(built.published) as con:
        run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
        return load_methodology_data(con, run_date)


def test_docs_show_the_figures_the_pipeline_computes(built):
    # The docs' validation figures are generated, never typed in: if the model or the
    # bundled data change, `make run && make docs` refreshes them and this test says so.
    rendered = render_validation_markdown(_data(built))
    assert docs_block(DOCS) == rendered.strip(), (
        "docs/methodology.md is stale: run `make run && make docs`"
    )


def test_validation_block_covers_every_check_the_issue_names(built):
    data = _data(built)
    checks = set(data.validation["check_name"])
    assert {"batch_gain", "multi_gpu_prediction", "spec_estimator_logo", "a100_vs_v100"} <= checks
    block = render_validation_markdown(data)
    for figure in data.validation.filter(pl.col("check_name") == "a100_vs_v100").iter_rows(
        named=True
    ):
        assert figure["subject"] in block
    # Dettmers' constants sit beside the fitted ones.
    assert set(data.constants["parameter_set"]) == {"dettmers", "fitted"}


def test_update_docs_rewrites_only_the_generated_block(tmp_path):
    doc = tmp_path / "m.md"
    text = DOCS.read_text(encoding="utf-8")
    doc.write_text(text, encoding="utf-8")
    assert update_docs(doc, "| new | block |") is True
    new = doc.read_text(encoding="utf-8")
    assert docs_block(doc) == "| new | block |"
    # Everything outside the markers is untouched.
    before, after = text.split("<!-- BEGIN generated")[0], text.split("<!-- END generated")[1]
    assert new.startswith(before) and new.endswith(after)
    assert update_docs(doc, "| new | block |") is False


def test_sensitivity_summary_counts_top3_changes():
    rows = []
    # Two GPUs swap places when electricity costs more; 4 GPUs in all.
    for value, order in ((0.175, ["a", "b", "c", "d"]), (0.4, ["a", "b", "d", "c"])):
        for rank, gpu in enumerate(order, start=1):
            rows.append(
                {
                    "parameter": "electricity_usd_per_kwh",
                    "value": value,
                    "workload": "training_16bit",
                    "market": "new",
                    "system_gpus": 1,
                    "gpu_id": gpu,
                    "rank": rank,
                    "rank_at_default": ["a", "b", "c", "d"].index(gpu) + 1,
                    "rank_change": rank - (["a", "b", "c", "d"].index(gpu) + 1),
                }
            )
    per_parameter, training = sensitivity_summary(pl.DataFrame(rows))
    row = per_parameter.row(0, named=True)
    assert (row["cases"], row["top3_changed"], row["max_rank_change"]) == (2, 1, 1)
    assert training["top3"].to_list() == ["a, b, c", "a, b, d"]
    assert training["changed"].to_list() == ["", "yes"]
