import datetime as dt

import pytest

from sources.tables import BadInputError, Column, https_url, read_table

COLUMNS = [
    Column("name"),
    Column("price", "float", exclusive_minimum=0),
    Column("day", "date"),
    Column("kind", choices=frozenset({"new", "used"})),
    Column("note", required=False),
]


def write(tmp_path, text):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_reads_typed_columns_and_skips_comments(tmp_path):
    path = write(tmp_path, "# source: us\nname,price,day,kind,note\n\na,1.5,2026-01-02,new,\n")
    frame = read_table(path, COLUMNS)
    assert frame.to_dicts() == [
        {"name": "a", "price": 1.5, "day": dt.date(2026, 1, 2), "kind": "new", "note": None}
    ]


@pytest.mark.parametrize(
    ("row", "field", "reason"),
    [
        ("a,abc,2026-01-02,new,", "price", "not a valid float"),
        ("a,0,2026-01-02,new,", "price", "greater than 0"),
        ("a,nan,2026-01-02,new,", "price", "not a valid float"),
        ("a,1,2026-13-02,new,", "day", "not a valid date"),
        ("a,1,2026-01-02,broken,", "kind", "not one of"),
        (",1,2026-01-02,new,", "name", "missing value"),
        ("a,1,2026-01-02,new", "note", "the row has 4 of 5 fields"),
        ("a,1,2026-01-02,new,,x", "(row)", "expected 5 fields, got 6"),
        ("a,1 USD,2026-01-02,new,", "price", "carries a unit"),
    ],
)
def test_bad_cells_name_file_line_and_field(tmp_path, row, field, reason):
    path = write(tmp_path, f"name,price,day,kind,note\nok,1,2026-01-01,used,\n{row}\n")
    with pytest.raises(BadInputError) as err:
        read_table(path, COLUMNS)
    assert err.value.line == 3
    assert err.value.column == field
    assert reason in str(err.value)
    assert str(path) in str(err.value)


def test_a_line_break_inside_a_quoted_cell_is_refused_at_its_line(tmp_path):
    # No bundled cell spans lines: a quoted line break is a damaged or hand-broken row.
    text = '# c\nname,price,day,kind,note\n"two\nlines",1,2026-01-01,new,\nz,x,2026-01-01,new,\n'
    with pytest.raises(BadInputError, match="line break inside a quoted cell") as err:
        read_table(write(tmp_path, text), COLUMNS)
    assert (err.value.line, err.value.column) == (4, "name")


def test_header_must_match(tmp_path):
    with pytest.raises(BadInputError, match="expected"):
        read_table(write(tmp_path, "name,cost,day,kind,note\n"), COLUMNS)


def test_duplicates_are_rejected(tmp_path):
    text = "name,price,day,kind,note\na,1,2026-01-01,new,\na,2,2026-01-01,new,\n"
    with pytest.raises(BadInputError, match="duplicate of line 2"):
        read_table(write(tmp_path, text), COLUMNS, unique=("name", "day"))


def test_only_https_links():
    assert https_url("https://nvidia.com/x") is None
    assert "not an https URL" in https_url("javascript:alert(1)")
