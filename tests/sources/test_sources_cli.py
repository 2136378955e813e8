import json
import subprocess
import sys

import pytest

from tests.paths import FIXTURES_ROOT

FIXTURES = FIXTURES_ROOT / "retail"
KEYS = [
    "listing_id",
    "title",
    "price",
    "price_high",
    "currency",
    "condition",
    "sold",
    "sold_date",
    "best_offer_accepted",
    "sponsored",
    "url",
]


def run(*args, stdin=None):
    return subprocess.run(
        [sys.executable, "-m", "sources", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("source", ["amazon", "ebay"])
def test_parse_prints_one_json_object_per_record(source):
    pages = sorted((FIXTURES / source).glob("search*.html"))
    assert pages
    out = run("parse", source, str(pages[0]))
    assert out.returncode == 0, out.stderr
    records = [json.loads(line) for line in out.stdout.splitlines()]
    assert records
    for record in records:
        assert list(record) == KEYS
        assert record["price"] is None or record["price"] > 0


@pytest.mark.parametrize(
    ("source", "pattern", "outcome"),
    [("amazon", "captcha*.html", "captcha"), ("ebay", "block*.html", "blocked")],
)
def test_block_pages_exit_3_with_nothing_on_stdout(source, pattern, outcome):
    pages = sorted((FIXTURES / source).glob(pattern))
    assert pages
    for page in pages:
        out = run("parse", source, str(page))
        assert (out.returncode, out.stdout) == (3, "")
        assert out.stderr.startswith(outcome)


def test_unparseable_page_exits_2(tmp_path):
    page = tmp_path / "x.html"
    page.write_text("<html><body><p>hello</p></body></html>")
    out = run("parse", "amazon", str(page))
    assert out.returncode == 2 and out.stdout == "" and "parse_error" in out.stderr


def test_missing_file_exits_2(tmp_path):
    out = run("parse", "ebay", str(tmp_path / "nope.html"))
    assert out.returncode == 2 and "cannot read" in out.stderr


def test_match_one_title_and_stdin():
    out = run("match", "ASUS TUF Gaming GeForce RTX 4090 OC 24GB")
    assert out.returncode == 0
    one = json.loads(out.stdout)
    assert list(one) == ["gpu", "reason"]
    assert one["gpu"] == "rtx-4090" and one["reason"].startswith("matched")
    many = run("match", "-", stdin="RTX 4070 Ti SUPER 16GB\nEK water block RTX 4090\n")
    lines = [json.loads(line) for line in many.stdout.splitlines()]
    assert [line["gpu"] for line in lines] == ["rtx-4070-ti-super", None]
    assert lines[1]["reason"].startswith("accessory")
