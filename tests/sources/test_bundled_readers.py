"""Bundled readers refuse what cannot be true, naming file, line and field (issue 14)."""

import datetime as dt
import shutil

import pytest

from sources.bundled import (
    CURATED_SOURCES,
    DATA_DIR,
    PAGE_SOURCES,
    read_benchmark_figures,
    read_cloud_offers,
    read_fx_rates,
    read_price_facts,
    read_retail_observations,
)
from sources.cloud.providers import PROVIDERS
from sources.tables import BadInputError

RETAIL_HEADER = "observed_at,source,market,gpu_id,title,price,currency,url,listing_id,citation\n"
CLOUD_HEADER = (
    "observed_at,provider,instance_type,region,price_type,gpu_id,gpu_count,usd_per_hour,citation\n"
)
FUTURE = (dt.date.today() + dt.timedelta(days=30)).isoformat()


def retail_row(price="1500.00", source="keepa-amazon", day="2025-01-02", gpu="rtx-4090", n=1):
    return (
        f"{day},{source},new,{gpu},RTX 4090 card {n},{price},USD,"
        f"https://www.amazon.com/dp/B0BG{n:06d},B0BG{n:06d},cite\n"
    )


def cloud_row(price="2.0", provider="lambda", day="2025-01-02", count="1", n=1):
    return f"{day},{provider},gpu_{n}x,us-east-1,on_demand,h100-sxm,{count},{price},cite\n"


def write(tmp_path, header, rows):
    path = tmp_path / "data.csv"
    path.write_text(header + "".join(rows), encoding="utf-8")
    return path


def valid_retail(extra=()):
    return [retail_row(price=p, n=i) for i, p in enumerate(["1500", "1600", "1700"])] + list(extra)


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        (retail_row(price="1e308", n=9), "price", "over 10x"),
        (retail_row(price="1e-300", n=9), "price", "under 1/100"),
        (retail_row(price="inf", n=9), "price", "not a valid float"),
        (retail_row(price="nan", n=9), "price", "not a valid float"),
        (retail_row(price="-5", n=9), "price", "greater than 0"),
        (retail_row(price="0", n=9), "price", "greater than 0"),
        (retail_row(day=FUTURE, n=9), "observed_at", "in the future"),
        (retail_row(source="mystery-shop", n=9), "source", "is not one of"),
    ],
)
def test_retail_observations_refuse_what_cannot_be(tmp_path, bad, field, reason):
    path = write(tmp_path, RETAIL_HEADER, valid_retail([bad]))
    with pytest.raises(BadInputError) as error:
        read_retail_observations(path, None)
    assert (error.value.line, error.value.column) == (5, field)
    assert reason in error.value.reason
    assert str(path) in str(error.value)


def test_retail_price_over_ten_times_the_launch_price_is_refused(tmp_path):
    path = write(tmp_path, RETAIL_HEADER, [retail_row(price="17000")])
    with pytest.raises(BadInputError, match="launch price 1599"):
        read_retail_observations(path, None, {"rtx-4090": 1599.0})
    assert read_retail_observations(path, None, {"rtx-4090": 1799.0}).height == 1


def test_duplicate_curated_row_is_refused_not_double_weighted(tmp_path):
    rows = valid_retail()
    path = write(tmp_path, RETAIL_HEADER, [*rows, rows[1].replace(",cite\n", ",other cite\n")])
    with pytest.raises(BadInputError, match="duplicate of line 3") as error:
        read_retail_observations(path, None)
    assert error.value.line == 5


@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        (cloud_row(price="1e308", n=9), "usd_per_hour", "per GPU-hour is over"),
        # The file's column is named (usd_per_hour), not the derived per-GPU figure.
        (cloud_row(price="25", n=9), "usd_per_hour", "over 10x the median"),
        (cloud_row(price="0.01", n=9), "usd_per_hour", "per GPU-hour is under $0.02"),
        (cloud_row(price="Infinity", n=9), "usd_per_hour", "not a valid float"),
        (cloud_row(day=FUTURE, n=9), "observed_at", "in the future"),
        (cloud_row(provider="moon-cloud", n=9), "provider", "is not one of"),
    ],
)
def test_cloud_offers_refuse_what_cannot_be(tmp_path, bad, field, reason):
    rows = [cloud_row(price=p, n=i) for i, p in enumerate(["2.0", "2.5", "2.2"])]
    path = write(tmp_path, CLOUD_HEADER, [*rows, bad])
    with pytest.raises(BadInputError) as error:
        read_cloud_offers(path, None, PROVIDERS)
    assert (error.value.line, error.value.column) == (5, field)
    assert reason in error.value.reason


def test_fx_rate_and_benchmark_dates_in_the_future_are_refused(tmp_path):
    path = write(tmp_path, "day,currency,usd_per_unit,source\n", [f"{FUTURE},EUR,1.1,x\n"])
    with pytest.raises(BadInputError, match="in the future"):
        read_fx_rates(path)
    path = write(tmp_path, "day,currency,usd_per_unit,source\n", ["2025-01-01,EUR,1e308,x\n"])
    with pytest.raises(BadInputError, match="not a real rate"):
        read_fx_rates(path)
    bench = DATA_DIR / "benchmarks" / "nvidia_dle.csv"
    copy = tmp_path / "bench.csv"
    shutil.copy(bench, copy)
    lines = copy.read_text(encoding="utf-8").splitlines(keepends=True)
    header = lines[0].strip().split(",")
    cells = next(line for line in lines[1:] if not line.startswith("#")).strip().split(",")
    cells[header.index("as_of")] = FUTURE
    copy.write_text(lines[0] + ",".join(cells) + "\n", encoding="utf-8")
    with pytest.raises(BadInputError, match="in the future"):
        read_benchmark_figures(copy, None)


def test_the_bundled_snapshot_passes_every_check():
    facts = read_price_facts(DATA_DIR / "prices", None)
    assert facts.height >= 10_000
    # Each curated source has its own history file; the page facts keep only page sources.
    pages = read_retail_observations(DATA_DIR / "prices" / "retail_observations.csv", None)
    assert set(pages["source"]) <= set(PAGE_SOURCES)
    assert set(facts["source"]) - set(PAGE_SOURCES) <= set(CURATED_SOURCES)
    for path in sorted((DATA_DIR / "cloud").glob("*.csv")):
        assert read_cloud_offers(path, None, PROVIDERS).height


def test_a_source_in_two_fact_files_is_refused(tmp_path):
    prices = tmp_path / "prices"
    (prices / "history").mkdir(parents=True)
    row = retail_row()
    # (A header-only file is refused: the page facts carry an amazon row of their own.)
    page_row = retail_row(source="amazon", n=2)
    (prices / "retail_observations.csv").write_text(RETAIL_HEADER + page_row, encoding="utf-8")
    (prices / "history" / "a.csv").write_text(RETAIL_HEADER + row, encoding="utf-8")
    assert read_price_facts(prices, None).height == 2
    (prices / "history" / "b.csv").write_text(RETAIL_HEADER + row, encoding="utf-8")
    with pytest.raises(BadInputError, match="also has rows in a.csv"):
        read_price_facts(prices, None)


def test_benchmark_figure_from_an_unknown_publisher_is_refused(tmp_path):
    bench = (DATA_DIR / "benchmarks" / "nvidia_dle.csv").read_text(encoding="utf-8")
    lines = bench.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines[1:], 1) if not line.startswith("#"))
    lines[first] = "some-blog" + lines[first][lines[first].index(",") :]
    path = tmp_path / "bench.csv"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(BadInputError, match="is not one of") as error:
        read_benchmark_figures(path, None)
    assert (error.value.line, error.value.column) == (first + 1, "source")


# Issue 23: every malformed or implausible row of a bundled price file is refused naming
# file and line; the fixtures below are written by the tests (one bad row after 3 good).
@pytest.mark.parametrize(
    ("bad", "field", "reason"),
    [
        (retail_row(day="2025-13-40", n=9), "observed_at", "not a valid datetime"),
        (retail_row(price="1,500", n=9), "(row)", "expected 10 fields"),
        (retail_row(price="cheap", n=9), "price", "not a valid float"),
        (retail_row(gpu="rtx-9999", n=9), "gpu_id", "is not one of"),
        (retail_row(n=9).replace(",new,", ",refurbished,"), "market", "is not one of"),
        (retail_row(n=9).replace(",USD,", ",usd,"), "currency", "not an ISO currency code"),
    ],
)
def test_malformed_price_rows_are_refused_with_file_and_line(tmp_path, bad, field, reason):
    path = write(tmp_path, RETAIL_HEADER, valid_retail([bad]))
    with pytest.raises(BadInputError) as error:
        read_retail_observations(path, frozenset({"rtx-4090"}))
    assert (error.value.line, error.value.column) == (5, field)
    assert reason in error.value.reason
    assert f"{path}, line 5" in str(error.value)


def prices_folder(tmp_path, rows, rates=("2025-01-01,EUR,1.10,fixture",)):
    """A bundled-price folder: one history file and an fx_rates.csv."""
    folder = tmp_path / "prices"
    (folder / "history").mkdir(parents=True)
    (folder / "history" / "keepa-amazon.csv").write_text(RETAIL_HEADER + "".join(rows), "utf-8")
    header = "day,currency,usd_per_unit,source\n"
    (folder / "fx_rates.csv").write_text(header + "".join(f"{r}\n" for r in rates), "utf-8")
    return folder


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        # A currency with no rate at all, and one whose first rate is after the sale.
        (retail_row(n=9).replace(",USD,", ",XYZ,"), "no exchange rate for 'XYZ' on or before"),
        (retail_row(n=9, day="2024-12-31").replace(",USD,", ",EUR,"), "on or before 2024-12-31"),
    ],
)
def test_a_currency_without_a_bundled_rate_is_refused_on_its_line(tmp_path, bad, reason):
    folder = prices_folder(tmp_path, valid_retail([bad]))
    with pytest.raises(BadInputError) as error:
        read_price_facts(folder, None)
    assert (error.value.line, error.value.column) == (5, "currency")
    assert reason in error.value.reason
    assert "keepa-amazon.csv" in str(error.value)


@pytest.mark.parametrize(
    ("bad", "reason"),
    [
        # Under 5 % of the $1,599 launch price (an auction bid, not a sale of a working card).
        (retail_row(price="75", n=9), "under 5% of the rtx-4090 launch price $1,599"),
        # The hard band applies to GPUs without a launch price too.
        (retail_row(price="9.50", gpu="h100-nvl-94gb", n=9), "outside $10-$250,000"),
        (retail_row(price="260000", gpu="b300", n=9), "outside $10-$250,000"),
        # A EUR price is checked in USD: EUR 17,000 x 1.10 is over 10x the launch price.
        (retail_row(price="17000", n=9).replace(",USD,", ",EUR,"), "over 10x the launch price"),
        (retail_row(price="60", n=9).replace(",USD,", ",EUR,"), "under 5% of the rtx-4090"),
    ],
)
def test_an_implausible_price_is_refused_on_its_line(tmp_path, bad, reason):
    folder = prices_folder(tmp_path, valid_retail([bad]))
    with pytest.raises(BadInputError) as error:
        read_price_facts(folder, None, {"rtx-4090": 1599.0})
    assert (error.value.line, error.value.column) == (5, "price")
    assert reason in error.value.reason
    assert "keepa-amazon.csv, line 5" in str(error.value)


def test_plausible_prices_in_any_rated_currency_pass(tmp_path):
    eur = retail_row(price="1450", n=9).replace(",USD,", ",EUR,")
    folder = prices_folder(tmp_path, valid_retail([eur, retail_row(price="80", n=10)]))
    facts = read_price_facts(folder, None, {"rtx-4090": 1599.0})
    assert facts.height == 5
    assert set(facts["currency"]) == {"USD", "EUR"}
