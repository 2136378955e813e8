"""How one nightly partition scales with the history: `make bench-history YEARS=N`.

1. Builds the bundled snapshot (`make run`'s graph) into a work folder, untimed.
2. Copies it twice. One copy stays as it is (the bundled history). The other gets N years
   of synthetic nightly history, written by DuckDB SQL in one-month chunks (memory stays
   bounded; see `synthesize`), then one untimed full publish.
   Then the nowcast back-tests of the night before run on both (untimed, `warm_backtests`):
   a steady night finds the origins the nights before it stored.
3. Times the same night on both: partition day NIGHT (the last day of a month, so the
   month's Parquet partitions are as large as they get) with one Amazon search page (new)
   and one eBay sold page (used) per catalog GPU, LISTINGS listings each, rendered in the
   sites' markup into an archive and ingested through the parsers as a live night is; the
   cloud runs replay the bundled cloud files, as every offline night does. The night runs
   in a fresh process (`python -m pipeline.run`'s code path: eight cloud runs, then one run
   of the rest) with a thread sampling its RSS every 10 ms.
4. Prints wall time, CPU time and peak RSS per stage (ingest, model, report, publish,
   Dagster's own time between steps) and for its slowest steps, the bytes the publish wrote,
   the ratios (wall and CPU) to the bundled night, the machine's load average, and
   p50/p95 of three ad hoc queries on the published snapshot, each on a fresh read-only
   connection (as `make query` opens one).

The synthetic history, per day: 200 GPU ids (the catalog's plus retired ids not in the
catalog any more) x 2 markets x LISTINGS listings (34: 13,600 observations a day, ~5 M a
year), their daily prices, ~1,700 cloud offers (the bundled offers' latest prices in five
synthetic regions each), one retail page per GPU x market, one model run (the bundled run's
rows of every run-keyed table, re-dated) and one site version (hard links to the bundled
version's files). Days on which the bundled snapshot has a daily price or a cloud offer are
left to the snapshot. No assertions: targets are read, not enforced in tests.
"""

import argparse
import datetime as dt
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlencode

import duckdb

REPO = Path(__file__).resolve().parents[1]
NIGHT = dt.date(2026, 9, 30)
SYNTHETIC = "synthetic history (bench/history_bench.py)"
GPU_IDS = 200
CLOUD_OFFERS_PER_DAY = 1700
QUERIES = {
    "latest price per GPU": (
        "SELECT gpu_id, market, max(day) AS day, arg_max(price_usd, day) AS price_usd "
        "FROM gpu_prices_daily GROUP BY ALL"
    ),
    "one GPU's whole history (monthly)": (
        "SELECT market, date_trunc('month', day) AS month, median(price_usd) AS usd, "
        "sum(n_observations) AS n FROM gpu_price_history WHERE gpu_id = 'rtx-4090' "
        "GROUP BY ALL ORDER BY month, market"
    ),
    "cheapest cloud offer per GPU today": (
        "SELECT gpu_id, min(usd_per_gpu_hour) AS usd_per_gpu_hour, "
        "arg_min(provider, usd_per_gpu_hour) AS provider FROM cloud_offers "
        "WHERE observed_at >= (SELECT CAST(max(observed_at) AS DATE) FROM cloud_offers) "
        "GROUP BY gpu_id"
    ),
}
STAGES = ("ingest", "model", "report", "publish")
# Loads of whole inputs that a steady night skips (their files and code unchanged).
RELOADS = ("price_history", "gpus")


# --- setup -------------------------------------------------------------------------------


def build_bundled(root: Path) -> None:
    from pipeline.run import build_into

    _, result = build_into(root, log_level="ERROR")
    if not result.success:
        raise SystemExit("the bundled build failed")


def copy_tree(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True)


def linked_copy(source: Path, target: Path) -> None:
    """`target` as a copy of `source` sharing every file but the writable DuckDB warehouse.

    Hard links cost nothing at 10 years (one site version per day); a night only adds files
    (publish stages new ones, then renames) except the pipeline warehouse, which it writes
    in place and so gets a real copy.
    """
    subprocess.run(["cp", "-al", str(source), str(target)], check=True)
    for name in ("gpuvalue.duckdb", "gpuvalue.duckdb.wal"):
        if (target / name).exists():
            (target / name).unlink()
            shutil.copy2(source / name, target / name)


def _months(first: dt.date, last: dt.date):
    """[start, end) day ranges, one per calendar month, covering first..last."""
    from pipeline.defs.ingest.daily import month_chunks

    for start, end in month_chunks(first, last):
        yield start, end + dt.timedelta(days=1)


def synthesize(root: Path, years: int, listings: int) -> dict[str, int]:
    """Add `years` of synthetic nightly history before NIGHT to `root`'s warehouse."""
    first = NIGHT - dt.timedelta(days=round(365.25 * years))
    last = NIGHT - dt.timedelta(days=1)
    con = duckdb.connect(str(root / "gpuvalue.duckdb"))
    con.sql("SET memory_limit = '2GB'")
    con.sql("SET preserve_insertion_order = true")
    run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
    con.sql(
        f"""CREATE TEMP TABLE bench_gpus AS
        WITH catalog AS (
            SELECT gpu_id, coalesce(launch_price_usd, 1000) AS base FROM gpus
        ), retired AS (
            SELECT 'retired-gpu-' || lpad(CAST(i AS VARCHAR), 3, '0') AS gpu_id, 300 + 7 * i AS base
            FROM range(greatest({GPU_IDS} - (SELECT count(*) FROM catalog), 0)) t(i)
        )
        SELECT gpu_id, base, row_number() OVER (ORDER BY gpu_id) AS idx
        FROM (SELECT * FROM catalog UNION ALL SELECT * FROM retired)"""
    )
    con.sql(
        "CREATE TEMP TABLE bundled_days AS SELECT DISTINCT gpu_id, market, day "
        "FROM gpu_prices_daily"
    )
    con.sql(
        "CREATE TEMP TABLE bundled_cloud_days AS SELECT DISTINCT provider, "
        "CAST(observed_at AS DATE) AS day FROM cloud_offers"
    )
    con.sql(
        f"""CREATE TEMP TABLE cloud_templates AS
        SELECT * EXCLUDE (observed_at, rn), k AS replica FROM (
            SELECT *, row_number() OVER (
                PARTITION BY provider, instance_type, region, price_type
                ORDER BY observed_at DESC) AS rn
            FROM cloud_offers)
        CROSS JOIN range(CAST(ceil({CLOUD_OFFERS_PER_DAY} / (
            SELECT count(DISTINCT (provider, instance_type, region, price_type))
            FROM cloud_offers)) AS BIGINT)) t(k)
        WHERE rn = 1"""
    )
    run_tables = [
        name
        for (name,) in con.sql(
            "SELECT table_name FROM information_schema.columns WHERE column_name = 'run_date' "
            "AND table_schema = 'main' ORDER BY table_name"
        ).fetchall()
    ]
    for table in run_tables:
        con.sql(
            f'CREATE TEMP TABLE "tpl_{table}" AS SELECT * FROM "{table}" WHERE run_date = ?',
            params=[run_date],
        )
    for start, end in _months(first, last):
        days = (
            f"(SELECT CAST(d AS DATE) AS day FROM generate_series(DATE '{start}', "
            f"DATE '{end}' - INTERVAL 1 DAY, INTERVAL 1 DAY) t(d)) dd"
        )
        con.sql("BEGIN TRANSACTION")
        con.sql(
            f"""INSERT INTO price_observations BY NAME
            SELECT day + INTERVAL 13 HOUR + i * INTERVAL 1 MINUTE AS observed_at,
                source, market, gpu_id,
                gpu_id || ' synthetic ' || market || ' listing ' || i AS title,
                round(base * (CASE market WHEN 'new' THEN 1.0 ELSE 0.7 END)
                    * (1 + 0.1 * sin(epoch(day) / 86400 / 45 + idx))
                    * (0.9 + (hash(day, gpu_id, market, i) % 1000) / 5000.0), 2) AS price,
                'USD' AS currency, price AS price_usd,
                'https://www.example.com/' || source || '/' || gpu_id || '/' || day || '/' || i
                    AS url,
                strftime(day, '%Y%m%d') || '-' || idx || '-' || i AS listing_id,
                '{SYNTHETIC}' AS citation,
                CASE market WHEN 'new' THEN 'New' ELSE 'Pre-Owned' END AS condition,
                false AS sponsored, market = 'used' AS sold,
                CASE market WHEN 'used' THEN day END AS sold_date,
                false AS best_offer_accepted, 'synthetic' AS match_reason
            FROM {days}
            CROSS JOIN bench_gpus
            CROSS JOIN (VALUES ('new', 'amazon'), ('used', 'ebay')) m(market, source)
            CROSS JOIN range({listings}) k(i)
            ANTI JOIN bundled_days USING (gpu_id, market, day)
            ORDER BY day, gpu_id, market, i"""
        )
        con.sql(
            f"""INSERT INTO gpu_prices_daily
            SELECT CAST(observed_at AS DATE) AS day, gpu_id, market,
                median(price_usd), count(*), 0, min(price_usd), max(price_usd), any_value(source)
            FROM price_observations
            WHERE observed_at >= DATE '{start}' AND observed_at < DATE '{end}'
                AND citation = '{SYNTHETIC}'
            GROUP BY ALL ORDER BY 1, 2, 3"""
        )
        con.sql(
            f"""INSERT INTO cloud_offers BY NAME
            SELECT day + INTERVAL 2 HOUR AS observed_at, provider, instance_type,
                CASE WHEN replica = 0 THEN region ELSE region || '-s' || replica END AS region,
                price_type, gpu_id, gpu_count,
                round(usd_per_hour * (1 + 0.05 * sin(epoch(day) / 86400 / 30 + replica)), 4)
                    AS usd_per_hour,
                round(usd_per_hour * (1 + 0.05 * sin(epoch(day) / 86400 / 30 + replica))
                    / gpu_count, 4) AS usd_per_gpu_hour,
                '{SYNTHETIC}' AS citation
            FROM {days} CROSS JOIN cloud_templates
            ANTI JOIN bundled_cloud_days USING (provider, day)
            ORDER BY day, provider"""
        )
        con.sql(
            f"""INSERT INTO retail_pages
            SELECT day, day + INTERVAL 13 HOUR, source,
                'https://www.example.com/' || source || '?q=' || gpu_id, 200, 'ok',
                CASE source WHEN 'amazon' THEN 'search' ELSE 'sold' END, {listings},
                NULL, NULL, NULL
            FROM {days} CROSS JOIN bench_gpus
            CROSS JOIN (VALUES ('amazon'), ('ebay')) s(source)
            ORDER BY day"""
        )
        con.sql(
            f"""INSERT INTO price_drops
            SELECT day, source, 'outlier', 3 FROM {days}
            CROSS JOIN (VALUES ('amazon'), ('ebay')) s(source)"""
        )
        for table in run_tables:
            con.sql(
                f"""INSERT INTO "{table}"
                SELECT tpl.* REPLACE (dd.day AS run_date) FROM {days} CROSS JOIN "tpl_{table}" tpl
                WHERE dd.day <> DATE '{run_date}'"""
            )
        con.sql("COMMIT")
    counts = {
        t: con.sql(f'SELECT count(*) FROM "{t}"').fetchall()[0][0]
        for t in ("price_observations", "gpu_prices_daily", "cloud_offers", "sensitivity")
    }
    con.close()
    _synthesize_site(root, first, last, run_date)
    return counts


def _synthesize_site(root: Path, first: dt.date, last: dt.date, run_date: dt.date) -> None:
    """One site version per synthetic run date: hard links to the bundled version's files."""
    releases = root / "releases"
    current = releases / os.readlink(releases / "current")
    bundled = (current / "site" / run_date.isoformat()).resolve()
    day = first
    while day <= last:
        if day != run_date:
            target = f"{day.isoformat()}.synthetic"
            for folder, _dirs, files in os.walk(bundled):
                out = releases / "site-versions" / target / Path(folder).relative_to(bundled)
                out.mkdir(parents=True, exist_ok=True)
                for name in files:
                    os.link(Path(folder) / name, out / name)
            os.symlink(f"../../site-versions/{target}", current / "site" / day.isoformat())
        day += dt.timedelta(days=1)


def full_publish(root: Path) -> float:
    from warehouse.publish import publish

    start = time.perf_counter()
    con = duckdb.connect(str(root / "gpuvalue.duckdb"))
    # DuckDB's default limit is 80 % of the machine: exporting 10 years of every table
    # reached 19 GB of RSS on a shared 23 GB machine. 4 GB is enough and spills the rest.
    con.sql("SET memory_limit = '4GB'")
    try:
        publish(con, root / "published", site_dir=root / "site", full=True)
    finally:
        con.close()
    return time.perf_counter() - start


def warm_backtests(root: Path, day: dt.date, skip: bool = False) -> dict[str, int]:
    """Run the nowcast back-tests of `day` into `root`'s store, as the night before did.

    A steady night finds the back-tests' origins stored by the nights before it
    (model/backtest_window.py); the setup has no such nights, so this computes them once,
    untimed, in the store the timed night uses (`<root>/.build/backtest-cache`, kept in
    the setup for --reuse). A no-op when they are stored already.
    """
    from model.parameters import ModelParameters
    from pipeline.defs.model.prices import CATALOG_SQL, backtest_store, nowcast_choice
    from warehouse.reads import read_monthly_series

    con = duckdb.connect(str(root / "gpuvalue.duckdb"), read_only=True)
    try:
        gpus = con.sql(CATALOG_SQL).pl()
        monthly = read_monthly_series(con, day)
    finally:
        con.close()
    store = backtest_store(root / ".build")
    *_, counts = nowcast_choice(monthly, gpus, ModelParameters().price_max_age_days, day, store)
    return counts


def night_archive(source_root: Path, out: Path, listings: int) -> int:
    """The bundled archive plus tonight's pages: one Amazon search (new) and one eBay sold
    page (used) per catalog GPU, `listings` cards each, titled with the GPU's name."""
    from sources.archive import Archive
    from sources.bundled import DATA_DIR
    from sources.retail.snapshot import render_amazon_search, render_ebay_sold

    shutil.copytree(DATA_DIR / "archive", out)
    con = duckdb.connect(str(source_root / "gpuvalue.duckdb"), read_only=True)
    gpus = con.sql(
        "SELECT gpu_id, name, memory_gb, coalesce(launch_price_usd, 1000) FROM gpus ORDER BY 1"
    ).fetchall()
    con.close()
    archive = Archive(out)
    fetched = dt.datetime.combine(NIGHT, dt.time(13, 0), tzinfo=dt.UTC)
    pages = 0
    for n, (_gpu_id, name, memory, price) in enumerate(gpus):
        title = f"{name} {int(memory)}GB"
        rows = [
            {
                "title": f"{title} Graphics Card variant {i}",
                "listing_id": f"B{n:04d}{i:05d}",
                "price": round(price * (0.95 + i / 400), 2),
                "currency": "USD",
                "observed_at": fetched.replace(tzinfo=None),
            }
            for i in range(listings)
        ]
        query = title
        archive.store(
            url=f"https://www.amazon.com/s?{urlencode({'k': query})}",
            status=200,
            content=render_amazon_search(query, rows, fetched.replace(tzinfo=None)),
            fetched_at=fetched,
            source="amazon",
        )
        used = [{**r, "price": round(r["price"] * 0.7, 2)} for r in rows]
        archive.store(
            url=f"https://www.ebay.com/sch/i.html?{urlencode({'_nkw': query, 'LH_Sold': 1})}",
            status=200,
            content=render_ebay_sold(query, used),
            fetched_at=fetched,
            source="ebay",
        )
        pages += 2
    return pages


# --- the timed night (runs in its own process) ---------------------------------------------


class Sampler(threading.Thread):
    """RSS, bytes written and CPU seconds of this process, every 10 ms.

    CPU is user + system time of every thread (DuckDB's and Polars' pools included) plus
    that of waited-for children: on a machine shared with other work, wall time measures
    the load as much as the night, CPU time measures the night.
    """

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.samples: list[tuple[float, int, int, float]] = []
        self.stop = threading.Event()
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.tick = os.sysconf("SC_CLK_TCK")

    def read(self) -> tuple[float, int, int, float]:
        with open("/proc/self/statm") as statm:
            rss = int(statm.read().split()[1]) * self.page
        wchar = 0
        with open("/proc/self/io") as io:
            for line in io:
                if line.startswith("wchar:"):
                    wchar = int(line.split()[1])
        with open("/proc/self/stat") as stat:
            # Fields after the command name (which may hold spaces): utime, stime,
            # cutime, cstime are the 14th-17th fields of the whole line.
            fields = stat.read().rsplit(")", 1)[1].split()
        cpu = sum(int(f) for f in fields[11:15]) / self.tick
        return time.time(), rss, wchar, cpu

    def run(self) -> None:
        while not self.stop.is_set():
            self.samples.append(self.read())
            time.sleep(0.01)


def _stage_of(step: str, groups: dict[str, str]) -> str:
    asset = max((a for a in groups if step == a or step.startswith(a + "_")), key=len, default="")
    group = groups.get(asset, "")
    if asset == "published_warehouse":
        return "publish"
    return group if group in STAGES else "ingest"


def run_night(root: Path, archive: Path, out: Path) -> None:
    """Run NIGHT's partition on `root` and write the figures to `out` (JSON)."""
    import dagster as dg
    from dagster_duckdb import DuckDBResource

    from pipeline.definitions import defs
    from pipeline.defs.resources import GpuvalueSettings
    from pipeline.run import run_pipeline

    graph = (defs() if callable(defs) else defs).resolve_asset_graph()
    groups = {key.path[-1]: graph.get(key).group_name for key in graph.get_all_asset_keys()}
    sampler = Sampler()
    sampler.start()
    instance = dg.DagsterInstance.ephemeral()
    settings = GpuvalueSettings(
        build_dir=str(root / ".build"),
        site_dir=str(root / "site"),
        published_dir=str(root / "published"),
        archive_dir=str(archive),
    )
    start = time.time()
    result = run_pipeline(
        instance,
        NIGHT.isoformat(),
        NIGHT.isoformat(),
        resources={
            "settings": settings,
            "warehouse": DuckDBResource(database=str(root / "gpuvalue.duckdb")),
        },
        log_level="ERROR",
    )
    end = time.time()
    sampler.stop.set()
    sampler.join()
    samples = sampler.samples
    steps = []
    published = {}
    reloaded: dict[str, str] = {}
    for run in instance.get_runs():
        began = {}
        for record in instance.all_logs(run.run_id):
            event = record.dagster_event
            if event is None:
                continue
            if event.event_type_value == "STEP_START":
                began[event.step_key] = record.timestamp
            elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE"):
                steps.append((event.step_key, began[event.step_key], record.timestamp))
            elif event.event_type_value == "ASSET_MATERIALIZATION":
                materialization = event.event_specific_data.materialization
                name = materialization.asset_key.path[-1]
                if name == "published_warehouse":
                    published = {k: v.value for k, v in materialization.metadata.items()}
                elif name in RELOADS and "status" in materialization.metadata:
                    reloaded[name] = materialization.metadata["status"].value
    stages = {
        s: {"seconds": 0.0, "cpu_seconds": 0.0, "peak_rss": 0, "steps": []}
        for s in (*STAGES, "dagster")
    }
    in_steps = in_steps_cpu = 0.0
    for step, t0, t1 in steps:
        stage = stages[_stage_of(step, groups)]
        window = [s for s in samples if t0 <= s[0] <= t1]
        window = window or [min(samples, key=lambda s: abs(s[0] - t1))]
        cpu = window[-1][3] - window[0][3]
        stage["seconds"] += t1 - t0
        stage["cpu_seconds"] += cpu
        stage["steps"].append([step, round(t1 - t0, 3), round(cpu, 2), max(s[1] for s in window)])
        in_steps += t1 - t0
        in_steps_cpu += cpu
        stage["peak_rss"] = max(stage["peak_rss"], max(s[1] for s in window))
        if step == "published_warehouse":
            stage["wchar"] = window[-1][2] - window[0][2]
    cpu_seconds = samples[-1][3] - samples[0][3]
    stages["dagster"]["seconds"] = (end - start) - in_steps
    stages["dagster"]["cpu_seconds"] = cpu_seconds - in_steps_cpu
    stages["dagster"]["peak_rss"] = max(s[1] for s in samples)
    figures = {
        "success": result.success,
        "wall_seconds": end - start,
        "cpu_seconds": cpu_seconds,
        "peak_rss": max(s[1] for s in samples),
        "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "stages": stages,
        # 'loaded' where a whole-input load ran again (its files or code changed since the
        # last night): that night is no steady night; time it again.
        "reloads": reloaded,
        "publish": {
            k: published.get(k)
            for k in ("release", "bytes_written", "files_written", "files_linked")
        },
    }
    out.write_text(json.dumps(figures, indent=1), encoding="utf-8")


def timed_night(root: Path, archive: Path, work: Path, name: str) -> dict:
    out = work / f"{name}.json"
    if out.exists():  # an earlier timing of this night: kept beside the new one
        out.rename(work / f"{name}.{int(out.stat().st_mtime)}.json")
    subprocess.run(
        [sys.executable, __file__, "--night", str(root), str(archive), str(out)],
        check=True,
        cwd=REPO,
    )
    return json.loads(out.read_text(encoding="utf-8"))


# --- queries -------------------------------------------------------------------------------


def query_times(published: Path, repeats: int) -> dict[str, dict[str, float]]:
    """p50/p95 (ms) of each query, each repetition on a fresh read-only connection."""
    from warehouse.export import open_published

    figures = {}
    for name, sql in QUERIES.items():
        times = []
        rows = 0
        for _ in range(repeats):
            start = time.perf_counter()
            con = open_published(published)  # as `make query` opens it
            rows = len(con.sql(sql).fetchall())
            con.close()
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        figures[name] = {
            "p50": statistics.median(times),
            "p95": times[min(len(times) - 1, round(0.95 * (len(times) - 1)))],
            "rows": rows,
        }
    return figures


def disk_usage(path: Path) -> int:
    if path.is_file():
        return path.stat().st_blocks * 512
    total, seen = 0, set()
    for folder, _dirs, files in os.walk(path):
        for name in files:
            st = os.lstat(os.path.join(folder, name))
            if st.st_ino not in seen:
                seen.add(st.st_ino)
                total += st.st_blocks * 512
    return total


# --- report --------------------------------------------------------------------------------


def mb(n: float | None) -> str:
    return "-" if n is None else f"{n / 1e6:,.1f} MB"


def print_night(label: str, night: dict, base: dict | None, steps: int = 4) -> None:
    ratio = ""
    if base:
        ratio = (
            f"  ({night['wall_seconds'] / base['wall_seconds']:.2f}x the bundled night's wall, "
            f"{night['cpu_seconds'] / base['cpu_seconds']:.2f}x its CPU)"
        )
    failed = "" if night["success"] else "  RUN FAILED"
    loaded = [k for k, v in night.get("reloads", {}).items() if v == "loaded"]
    if loaded:
        failed += f"  NOT STEADY: {', '.join(loaded)} loaded again (time it again)"
    peak = mb(night["peak_rss"])
    print(
        f"\n{label}: {night['wall_seconds']:.1f} s wall, {night['cpu_seconds']:.1f} s CPU"
        f"{ratio}, peak RSS {peak}{failed}"
    )
    print(f"  {'stage':<10} {'wall s':>7} {'CPU s':>7} {'peak RSS':>11}  slowest steps (wall/CPU)")
    for stage, fig in night["stages"].items():
        slow = sorted(fig["steps"], key=lambda s: -s[2])[:steps]
        names = ", ".join(f"{s[0]} {s[1]:.1f}/{s[2]:.1f}s" for s in slow)
        print(
            f"  {stage:<10} {fig['seconds']:>7.1f} {fig['cpu_seconds']:>7.1f} "
            f"{mb(fig['peak_rss']):>11}  {names}"
        )
    pub = night["publish"]
    print(
        f"  publish wrote {mb(pub['bytes_written'])} in {pub['files_written']} new files "
        f"({pub['files_linked']} linked from the previous release); "
        f"write() calls of the publish step: {mb(night['stages']['publish'].get('wchar'))}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--years", type=float, default=1)
    parser.add_argument("--listings", type=int, default=34, help="per GPU x market x day")
    parser.add_argument("--repeats", type=int, default=20, help="runs of each ad hoc query")
    parser.add_argument("--work", type=Path, default=REPO / ".build" / "bench-history")
    parser.add_argument("--keep", action="store_true", help="keep the work folder and setup")
    parser.add_argument(
        "--reuse", action="store_true", help="time the nights again on a kept setup"
    )
    parser.add_argument(
        "--again",
        action="store_true",
        help="time the nights again in place on the work folder's copies (no copy of the "
        "warehouse: the night reruns its partition, each load replacing its day's rows)",
    )
    parser.add_argument(
        "--no-warm",
        action="store_true",
        help="skip warm_backtests (to time code from before the back-tests' store)",
    )
    parser.add_argument("--steps", type=int, default=4, help="slowest steps shown per stage")
    parser.add_argument("--night", nargs=3, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.night:
        run_night(*args.night)
        return

    work = args.work
    archive = work / "archive"
    setup = work / "setup"
    if args.again and (work / "history").is_dir():
        # A 10-year pipeline warehouse is ~30 GB: where there is no room for the copy
        # --keep/--reuse make, the nights run again where they are. A rerun of the night
        # deletes and rewrites the rows the first run wrote (every load replaces its day),
        # and publishes a new release and site version, so it does the same work.
        for name in ("bundled", "history"):
            t = time.perf_counter()
            counts = warm_backtests(work / name, NIGHT - dt.timedelta(days=1), args.no_warm)
            print(f"back-tests of the night before, {name} (untimed): "
                  f"{time.perf_counter() - t:.0f} s; {counts}", flush=True)  # fmt: skip
        pages = int((work / "pages.txt").read_text(encoding="utf-8"))
        print(f"timing the nights again in place in {work} (--again)", flush=True)
    elif args.reuse and (setup / "history").is_dir():
        # Time the night again on the kept setup (after a code change): the setup stays
        # pristine but for the back-tests' stored origins (a cache of its data), the nights
        # run on linked copies with their own warehouse files.
        for name in ("bundled", "history"):
            t = time.perf_counter()
            counts = warm_backtests(setup / name, NIGHT - dt.timedelta(days=1), args.no_warm)
            print(f"back-tests of the night before, {name} (untimed): "
                  f"{time.perf_counter() - t:.0f} s; {counts}", flush=True)  # fmt: skip
            shutil.rmtree(work / name, ignore_errors=True)
            linked_copy(setup / name, work / name)
        pages = int((work / "pages.txt").read_text(encoding="utf-8"))
        print(f"reusing the setup in {setup} (--reuse)", flush=True)
    else:
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir(parents=True)
        t = time.perf_counter()
        build_bundled(work / "base")
        print(f"bundled build (setup, untimed): {time.perf_counter() - t:.0f} s", flush=True)
        pages = night_archive(work / "base", archive, args.listings)
        (work / "pages.txt").write_text(str(pages), encoding="utf-8")
        copy_tree(work / "base", work / "bundled")
        copy_tree(work / "base", work / "history")
        shutil.rmtree(work / "base")

        t = time.perf_counter()
        counts = synthesize(work / "history", args.years, args.listings)
        synth = time.perf_counter() - t
        seconds = full_publish(work / "history")
        print(
            f"synthetic history, {args.years:g} years (setup): {synth:.0f} s to generate, "
            f"{seconds:.0f} s to publish in full; "
            + ", ".join(f"{t} {n:,}" for t, n in counts.items()),
            flush=True,
        )
        for name in ("bundled", "history"):
            t = time.perf_counter()
            counts = warm_backtests(work / name, NIGHT - dt.timedelta(days=1), args.no_warm)
            print(f"back-tests of the night before, {name} (untimed): "
                  f"{time.perf_counter() - t:.0f} s; {counts}", flush=True)  # fmt: skip
        if args.keep:
            setup.mkdir()
            for name in ("bundled", "history"):
                (work / name).rename(setup / name)
                linked_copy(setup / name, work / name)
    print(
        f"night {NIGHT}: {pages} pages, {args.listings} listings each, through the parsers",
        flush=True,
    )
    load = [os.getloadavg()[0]]
    bundled = timed_night(work / "bundled", archive, work, "bundled")
    load.append(os.getloadavg()[0])
    history = timed_night(work / "history", archive, work, "history")
    load.append(os.getloadavg()[0])

    machine = f"{os.cpu_count()} cores, {os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GiB RAM"  # noqa: E501
    print(
        f"\nmachine: {machine}; 1-minute load average before, between and after the nights: "
        + " / ".join(f"{x:.1f}" for x in load)
    )
    print_night("bundled night", bundled, None, args.steps)
    print_night(f"night over {args.years:g} years", history, bundled, args.steps)
    for label, root in (("bundled", work / "bundled"), (f"{args.years:g} years", work / "history")):
        print(
            f"\nad hoc queries on the published snapshot, {label} "
            f"(pipeline warehouse {mb(disk_usage(root / 'gpuvalue.duckdb'))}, "
            f"published {mb(disk_usage(root / 'releases' / 'current' / 'published'))}); "
            f"ms over {args.repeats} runs, each on a fresh connection:"
        )
        for name, fig in query_times(root / "published", args.repeats).items():
            print(
                f"  {name:<36} p50 {fig['p50']:7.1f}  p95 {fig['p95']:7.1f}  ({fig['rows']} rows)"
            )
    if not (args.keep or args.reuse or args.again):
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
