"""Time each stage of the pipeline on the bundled snapshot and print the figures.

Run with `make bench`. Prints seconds per stage (best of N repeats for the pure functions,
one full in-process Dagster run for the whole graph). No assertions: targets are read, not
enforced in tests.
"""

import argparse
import datetime as dt
import tempfile
import time
from pathlib import Path

import polars as pl

from model.cost import perf_per_dollar
from model.debias import debias
from model.nowcast_backtest import prices_today
from model.parameters import ModelParameters
from model.performance import relative_performance
from model.prices import daily_prices
from model.sensitivity import sensitivity
from model.uncertainty import perf_per_dollar_replicates
from pipeline.run import build_into
from sources.bundled import (
    DATA_DIR,
    read_benchmark_figures,
    read_cloud_offers,
    read_fx_rates,
    read_gpu_specs,
    read_retail_observations,
    to_usd,
)
from sources.cloud.providers import PROVIDERS
from sources.retail.ebay import parse_ebay
from tests.paths import FIXTURES_ROOT


def two_megabyte_ebay_page() -> bytes:
    """A results page as big as real ones get: 240 cards (_ipg=240) and 2 MB of inline script.

    Built from the test fixture's markup (tests/sources/retail/test_ebay.py checks it parses
    every card; how fast is read here, target well under a second).
    """
    page = (FIXTURES_ROOT / "retail" / "ebay" / "search_scard_sold_com.html").read_text()
    head, rest = page.split('<ul class="srp-results srp-list clearfix">', 1)
    cards, tail = rest.split("</ul>", 1)
    script = '<script>window.SRP = {"state": "' + "x" * 2_000_000 + '"};</script>'
    body = head + '<ul class="srp-results srp-list clearfix">' + cards * 48 + "</ul>"
    return (body + script + tail).encode()


def best_of(repeats: int, fn):
    times = []
    result = None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    n = args.repeats
    rows = []

    t, gpus = best_of(n, lambda: read_gpu_specs(DATA_DIR / "specs" / "gpu_specs.csv"))
    rows.append(("read spec sheet", t, gpus.height))
    ids = frozenset(gpus["gpu_id"])
    files = sorted((DATA_DIR / "benchmarks").glob("*.csv"))
    t, bench = best_of(n, lambda: [read_benchmark_figures(f, ids) for f in files])
    rows.append(("read benchmark files", t, sum(b.height for b in bench)))
    t, retail = best_of(
        n, lambda: read_retail_observations(DATA_DIR / "prices" / "retail_observations.csv", ids)
    )
    rows.append(("read retail observations", t, retail.height))
    cloud_files = sorted((DATA_DIR / "cloud").glob("*.csv"))
    t, cloud = best_of(
        n, lambda: pl.concat([read_cloud_offers(f, ids, PROVIDERS) for f in cloud_files])
    )
    rows.append(("read cloud offers", t, cloud.height))
    big = two_megabyte_ebay_page()
    t, parsed = best_of(n, lambda: parse_ebay(big, "https://www.ebay.com/sch/i.html"))
    rows.append((f"parse a {len(big) / 1e6:.1f} MB eBay results page", t, len(parsed.records)))

    results = pl.concat(bench)
    params = ModelParameters()
    day = dt.date(2026, 5, 20)
    t, debiased = best_of(n, lambda: debias(results, params, day))
    rows.append(("debias", t, debiased.height))
    t, relative = best_of(n, lambda: relative_performance(debiased, gpus, params, day))
    rows.append(("relative performance", t, relative.height))
    retail_path = DATA_DIR / "prices" / "retail_observations.csv"
    rates = read_fx_rates(DATA_DIR / "prices" / "fx_rates.csv")
    retail = to_usd(retail, rates, retail_path)
    latest = prices_today(daily_prices(retail, params.price_mad_k), gpus, params, day)
    t, perf = best_of(n, lambda: perf_per_dollar(relative, latest, gpus, params, day))
    rows.append(("perf per dollar, 1/2/4/8 GPUs x markets", t, perf.height))
    t, boot = best_of(n, lambda: perf_per_dollar_replicates(relative, latest, retail, gpus, params))
    rows.append((f"bootstrap, {params.bootstrap_replicates} replicates", t, boot.height))
    t, sens = best_of(n, lambda: sensitivity(relative, latest, gpus, params, day))
    rows.append(("sensitivity table", t, sens.height))

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        _, result = build_into(Path(tmp), log_level="ERROR")
        rows.append(
            (
                "whole graph, in-process Dagster run",
                time.perf_counter() - start,
                int(result.success),
            )
        )

    print(f"{'stage':<40} {'seconds':>9} {'rows':>7}")
    for name, seconds, count in rows:
        print(f"{name:<40} {seconds:>9.3f} {count:>7}")


if __name__ == "__main__":
    main()
