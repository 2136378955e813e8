"""CSV downloads never carry a spreadsheet formula (issue 26 item 6: CSV injection).

A listing title is scraped text; a cell starting with = + - @ (or a tab or carriage return)
runs as a formula when the CSV is opened in a spreadsheet, so the CSV writes it with a
leading `'`. Numbers keep their sign; the Parquet file keeps the exact text.
"""

import polars as pl

from reports.downloads import FORMULA_START, _write_frame, neutralize_formulas

TITLES = ['=HYPERLINK("http://x","4090")', "+cmd", "-2+3", "@SUM(A1)", "\tx", "RTX 4090", None]


def test_text_that_would_run_as_a_formula_is_written_as_text():
    frame = pl.DataFrame({"title": TITLES, "price": [-1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]})
    out = neutralize_formulas(frame)
    assert out["title"].to_list() == [
        '\'=HYPERLINK("http://x","4090")',
        "'+cmd",
        "'-2+3",
        "'@SUM(A1)",
        "'\tx",
        "RTX 4090",
        None,
    ]
    assert out["price"].to_list() == frame["price"].to_list()  # a negative number stays one


def test_the_csv_is_neutralized_and_the_parquet_keeps_the_text(tmp_path):
    frame = pl.DataFrame({"title": TITLES, "n": list(range(len(TITLES)))})
    name = _write_frame(frame, tmp_path, "observations")
    csv = pl.read_csv(tmp_path / name)
    for cell in csv["title"].drop_nulls():
        assert not cell.startswith(FORMULA_START), cell
    assert pl.read_parquet(tmp_path / "observations.parquet").equals(frame)


def test_no_published_csv_cell_starts_a_formula(built):
    csvs = sorted((built.site / "latest" / "data").glob("*.csv"))
    assert len(csvs) > 20
    for path in csvs:
        frame = pl.read_csv(path, infer_schema=False)  # every cell as the text written
        for column in frame.columns:
            bad = frame.filter(
                pl.col(column).str.starts_with("=") | pl.col(column).str.starts_with("@")
            )
            assert bad.is_empty(), (path.name, column, bad.head(3))
