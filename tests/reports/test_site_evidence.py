"""The caveats are where the reader is (issue 22 step 8): verdict cells, the headline, GPU
pages and the methodology page, in a real browser (Debian chromium, as test_site_pages)."""

import polars as pl

from tests.reports.test_site_pages import DESKTOP, browser, open_page  # noqa: F401
from warehouse.export import open_published


def cell_texts(page, selector: str) -> list[str]:
    return page.evaluate(
        f"[...document.querySelectorAll('{selector}')].map(c => c.innerText.trim())"
    )


def test_every_verdict_cell_says_what_its_number_rests_on(built, browser):  # noqa: F811
    page, seen = open_page(browser, built.site / "latest" / "index.html", DESKTOP)
    cells = [c for c in cell_texts(page, "table.verdict tbody td") if not c.startswith(("≤", "≥"))]
    answer = page.evaluate("document.querySelector('#answer').innerText")
    page.close()
    assert not seen["errors"]
    named = [c for c in cells if not c.startswith("—")]
    assert named and all("rests on: " in c for c in named)
    assert any("rests on: measured: " in c and "independent source" in c for c in named)
    assert any("rests on: estimated from specs" in c for c in named)
    # Ties read as such, in the cells and in the one-line answer.
    assert any(c.startswith("tie: ") for c in named)
    assert "tie " in answer and "P(best)" in answer
    # A GPU not validated under PyTorch is never the answer.
    assert "rx-7900-xtx" not in answer


def test_a_gpu_page_flags_a_gpu_not_validated_under_pytorch(built, browser):  # noqa: F811
    page, _ = open_page(browser, built.site / "latest" / "gpu" / "rx-7900-xtx.html", DESKTOP)
    text = page.evaluate("document.querySelector('#evidence').innerText")
    page.close()
    assert "Not a pick" in text and "Not validated under PyTorch" in text
    assert "Software support" in text and "ROCm 5.7" in text


def test_an_old_nvidia_gpu_page_carries_its_pytorch_caveat(built, browser):  # noqa: F811
    page, _ = open_page(browser, built.site / "latest" / "gpu" / "p100-pcie-16gb.html", DESKTOP)
    text = page.evaluate("document.querySelector('#evidence').innerText")
    page.close()
    assert "legacy-wheel-only" in text and "CUDA 12.6" in text
    assert "estimated from specs" in text


def test_the_methodology_page_shows_the_rules_and_the_known_limits(built, browser):  # noqa: F811
    page, _ = open_page(browser, built.site / "latest" / "methodology.html", DESKTOP)
    headings = page.evaluate("[...document.querySelectorAll('h2')].map(h => h.innerText)")
    text = page.evaluate("document.body.innerText")
    page.close()
    assert "Known limits" in headings
    assert any(h.startswith("Headline eligibility and ties") for h in headings)
    assert "not validated under PyTorch" in text and "Most verdicts are ties" in text


def test_the_published_verdicts_carry_basis_caveat_and_ties(built):

    with open_published(built.published) as con:
        verdicts = con.sql("SELECT * FROM verdicts").pl()
        basis = con.sql("SELECT * FROM evidence_basis").pl()
    named = verdicts.filter(pl.col("gpu_id").is_not_null())
    assert named["caveat"].null_count() == 0 and named["basis"].null_count() == 0
    assert set(named["basis"]) <= {"measured", "validated_estimate"}
    ties = named.filter(pl.col("tie_gpu_ids").is_not_null())
    assert ties.height and (ties["p_best"] < 0.5).all()
    ineligible = basis.filter(~pl.col("eligible")).select("gpu_id", "workload")
    assert named.join(ineligible, on=["gpu_id", "workload"]).is_empty()
