"""Readers for the bundled snapshot in `sources/data/` (the project's own, cited files).

Each reader validates every cell (see `sources.tables`) and returns a Polars frame whose
columns match the warehouse table it feeds. Cross-file rules (every gpu_id must be in the
catalog) are enforced by passing the catalog's ids.

Nothing implausible loads: amounts must be finite and positive, observations may not be
dated in the future, a source or provider must be one the pipeline reads (a row with an
unknown one would otherwise be dropped silently), a price more than `PLAUSIBLE_FACTOR`
times the GPU's launch price or the median of its other rows (or less than a
`PLAUSIBLE_FACTOR`-th of that squared), below `LAUNCH_FLOOR_SHARE` of the launch price or
outside the hard USD band `USD_PRICE_BAND` is refused, a price in a currency without a
bundled exchange rate (on or before its day) is refused, and a row repeated is an error,
never a double weight. Every refusal names file, line and field.
"""

import bisect
import dataclasses
import datetime as dt
import functools
import re
from collections.abc import Collection, Mapping
from pathlib import Path

import polars as pl

from sources.benchmarks.provenance import (
    HOSTS,
    STACKS,
    with_benchmark_provenance,
    with_llm_provenance,
)
from sources.cloud.records import MAX_USD_PER_GPU_HOUR
from sources.fx import add_usd
from sources.gpu_names import Catalog
from sources.specs.plausibility import (
    EARLIEST_RELEASE,
    FIELD_BOUNDS,
    check_sheet,
    launch_price_problems,
)
from sources.tables import BadInputError, Column, https_url, read_table

DATA_DIR = Path(__file__).parent / "data"
SPEC_SHEET = DATA_DIR / "specs" / "gpu_specs.csv"
EIGHT_BIT_RATIOS = DATA_DIR / "specs" / "eight_bit_ratios.csv"
INDEPENDENT_RATIOS = DATA_DIR / "benchmarks" / "independent" / "independent_ratios.csv"

GPU_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MARKETS = frozenset({"new", "used"})
PRICE_TYPES = frozenset({"on_demand", "spot", "reserved_1y", "reserved_3y"})
TASKS = frozenset({"training", "inference"})
# "mixed": the source does not say which (MLPerf Training: AMP/bf16/fp8 by submitter).
PRECISIONS = frozenset({"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "mixed"})
WORKLOAD_CLASSES = frozenset({"cnn", "transformer", "rnn"})
# Retail sources of the bundled price file: pages rendered into the archive (parsed like a
# live night) and curated history loaded as rows (sources/data/prices/MANIFEST.md).
PAGE_SOURCES = ("amazon", "ebay")
# Curated history: one file per source in sources/data/prices/history/, loaded as rows by
# the price_history backfill (sources/data/prices/MANIFEST.md says what each one is).
CURATED_SOURCES = (
    "datacenter-street-price",
    # A data-center reseller's published list price (Delta Computer, DE), EUR excl. VAT.
    "delta-list-price",
    "ebay-auction-median",
    "ebay-sold-dataset",
    "ebay-sold-history",
    "ebay-sold-uk",
    # Greek retail asks (skroutz, bestprice, shopflix, e-shop, snif) as a public tracker recorded
    # them on one day, EUR incl. 24 % VAT: new-card street prices, one row per listing.
    "gpu-prices-gr",
    # The same tracker's daily series: per model (GPU chip + memory), the lowest ask of the
    # day across the five Greek shops, EUR incl. 24 % VAT; one figure per day, biased low
    # against a typical ask (MANIFEST.md says which points are transcribed and why).
    "gpu-prices-gr-daily-min",
    "keepa-amazon",
    "lambda-list-price",
    "newegg-siliconvalueindex",
    # Dated list prices (vendor launch MSRPs, a reseller's published list price) with their
    # source: labelled list by the `-list-price` suffix, like Lambda's, never street prices.
    "published-list-price",
    # Street or used prices quoted, with a date, in articles and price trackers (one page per
    # row; a quoted range is two rows, its low and high end): labelled in each title.
    "quoted-street-price",
    # The same kind of dated, quoted figure from a German page (EUR): its own source, so that
    # each source keeps one country and currency (sources/price_origins.py).
    "quoted-street-price-de",
    "tomshardware-ebay",
)
RETAIL_SOURCES = frozenset({*PAGE_SOURCES, *CURATED_SOURCES})
# Publishers of the bundled benchmark figures (sources/data/benchmarks/MANIFEST.md).
BENCHMARK_SOURCES = frozenset({"lambda", "nvidia-dle", "mlperf"})
# A price more than this many times the GPU's launch price (or the median of its other
# rows) is a transcription error; so is one below median / PLAUSIBLE_FACTOR**2 (used
# cards of old GPUs do sell for a tenth of their launch price).
PLAUSIBLE_FACTOR = 10.0
# A price below this share of the GPU's launch price is not a sale of a working card: the
# cheapest completed sales in the snapshot are 13 % of launch (an RTX 3060 Ti at $60 in
# 2021); what fell below 5 % were in-progress auction bids (sources/data/prices/MANIFEST.md,
# "Plausibility"). The ceiling stays at PLAUSIBLE_FACTOR x launch: 2020 scalper sales of
# the RTX 3080 reached 9.9x its $699 launch price and are real sold listings.
LAUNCH_FLOOR_SHARE = 0.05
# Hard bounds on one GPU's price in USD whatever the GPU (also those without a launch
# price): nothing in the catalog sells for under $10, and the dearest per-GPU figure in
# reach (a GB200 superchip's share of an NVL72 rack, or a B200 server divided by 8) is
# far below $250,000. Other currencies are checked after conversion, in `to_usd`.
USD_PRICE_BAND = (10.0, 250_000.0)
_LINE = "_line"
# No bundled offer rents a GPU for under 2 cents an hour: the cheapest is $0.0525 (vast.ai,
# RTX 3060 12 GB, 2026). A price /1000 of a real one falls below (the ceiling is the live
# parsers' MAX_USD_PER_GPU_HOUR).
MIN_USD_PER_GPU_HOUR = 0.02


_AS_OF = re.compile(r"^as_of:\s*(\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)


def manifest_as_of(folder: str | Path) -> dt.date:
    """The `as_of: YYYY-MM-DD` line of a snapshot folder's MANIFEST.md."""
    manifest = Path(folder) / "MANIFEST.md"
    match = _AS_OF.search(manifest.read_text(encoding="utf-8")) if manifest.exists() else None
    if not match:
        raise BadInputError(manifest, 0, "as_of", "MANIFEST.md needs an 'as_of: YYYY-MM-DD' line")
    return dt.date.fromisoformat(match.group(1))


_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def read_archive_citations(path: str | Path) -> pl.DataFrame:
    """The bundled archive's `CITATIONS.csv`: which public capture each archived page is.

    Every blob named must be in the archive (`<day>/<sha256>.bin` next to the file).

    Raises:
        BadInputError: A bad cell, a repeated page, or a page with no blob.
    """
    path = Path(path)
    columns = [
        Column("sha256", check=lambda v: None if _SHA256.match(str(v)) else "not a sha256"),
        Column("day", "date", not_future=True),
        Column("citation"),
    ]
    frame = read_table(path, columns, unique=("sha256",), line_column="_line")
    for sha, day, _, line in frame.iter_rows():
        if not (path.parent / day.isoformat() / f"{sha}.bin").is_file():
            raise BadInputError(path, line, "sha256", f"no archived page {day}/{sha}.bin")
    return frame.drop("_line")


def _slug(value: object) -> str | None:
    return None if GPU_ID.match(str(value)) else f"not a lowercase slug gpu_id: {value!r}"


def _gpu_column(gpu_ids: frozenset[str] | None, required: bool = True) -> Column:
    if gpu_ids is None:
        return Column("gpu_id", required=required, check=_slug)
    return Column("gpu_id", required=required, choices=gpu_ids)


def _spec_number(name: str, required: bool = False) -> Column:
    low, high, unit = FIELD_BOUNDS[name]
    kind = "int" if name == "devices" else "float"
    return Column(name, kind, required=required, minimum=low, maximum=high, unit=unit)


def spec_sheet_columns() -> list[Column]:
    """The columns of `gpu_specs.csv`, each number bounded (sources/specs/plausibility.py)."""
    return [
        Column("gpu_id", check=_slug),
        Column("name"),
        Column("vendor", choices=frozenset({"nvidia", "amd", "intel", "apple"})),
        Column("architecture"),
        # `system`: a machine sold only whole (DGX Spark, Mac Studio, Ryzen AI Max PCs).
        Column("form_factor", choices=frozenset({"pcie", "sxm", "oam", "superchip", "system"})),
        _spec_number("memory_gb", required=True),
        _spec_number("memory_bandwidth_gbs", required=True),
        _spec_number("fp16_tensor_tflops"),
        _spec_number("fp8_tensor_tflops"),
        _spec_number("int8_tensor_tops"),
        _spec_number("tdp_w"),
        _spec_number("l2_cache_mb"),
        # Not after the run date, not before the first GPU a DL stack runs on.
        Column("release_date", "date", required=False, not_future=True, earliest=EARLIEST_RELEASE),
        _spec_number("launch_price_usd"),
        Column("source"),
        Column("source_url", check=https_url),
        _spec_number("devices", required=True),
    ]


def read_gpu_specs(path: str | Path, line_column: str | None = None) -> pl.DataFrame:
    """The curated spec sheet: one row per canonical GPU.

    Memory and bandwidth are required: every vendor publishes them. Tensor rates are empty
    for GPUs without tensor/matrix units (Pascal, GTX 16, RDNA 2) or without a dense
    vendor figure; TDP, L2 and release date may be left empty for `sources.specs` to fill
    from a cited third-party source (see docs/data.md, "Specs"). `devices` is how many GPUs
    software sees on one board or module (2 for MI250/MI250X and K80, 4 for A16); memory,
    bandwidth and rates are per board.

    Every figure is checked for plausibility (sources/specs/plausibility.py: bounds per
    field, release date, ratios between a row's figures, its architecture's range);
    `line_column` keeps each row's file line under that name.

    Raises:
        BadInputError: The first implausible figure, naming file, line and field.
    """
    frame = read_table(path, spec_sheet_columns(), unique=("gpu_id",), line_column=_LINE)
    check_sheet(frame, path, _LINE)
    return frame.rename({_LINE: line_column}) if line_column else frame.drop(_LINE)


@functools.cache
def bundled_catalog() -> Catalog:
    """The name catalog of the bundled spec sheet (read once).

    For readers of names outside a pipeline run (cloud and benchmark parsers, the command
    line, tests); the ingest builds its catalog from the warehouse's `gpus` table.
    """
    return Catalog.from_specs(read_gpu_specs(SPEC_SHEET))


def _regex(value: object) -> str | None:
    try:
        re.compile(str(value))
    except re.error as exc:
        return f"not a regular expression: {exc}"
    return None


def read_eight_bit_ratios(
    path: str | Path, vendor_of: Mapping[str, str] | None = None
) -> pl.DataFrame:
    """The cited dense 8-bit / fp16 tensor-rate ratio of each architecture (and segment).

    `segment` is `consumer`, `professional` or `any` (one row for both); an architecture may
    not have an `any` row beside a segment row. `vendor_of` (architecture -> vendor, from
    the spec sheet) makes every architecture one the sheet knows, of the vendor it names.
    A ratio below 1 is refused: an architecture whose 8-bit units ran slower than its
    16-bit ones would have no row (sources/data/specs/MANIFEST.md).
    """
    columns = [
        Column("architecture", choices=frozenset(vendor_of) if vendor_of else None),
        Column("segment", choices=frozenset({"consumer", "professional", "any"})),
        Column("vendor", choices=frozenset({"nvidia", "amd", "intel"})),
        Column("ratio", "float", minimum=1),
        Column("basis", choices=frozenset({"int8", "fp8"})),
        Column("name_pattern", required=False, check=_regex),
        Column("citation"),
        Column("source_url", check=https_url),
        Column("as_of", "date", not_future=True),
    ]
    frame = read_table(path, columns, unique=("architecture", "segment"), line_column=_LINE)
    segments: dict[str, set[str]] = {}
    for row in frame.iter_rows(named=True):
        arch, line = row["architecture"], row[_LINE]
        if vendor_of and vendor_of[arch] != row["vendor"]:
            raise BadInputError(
                path, line, "vendor", f"{arch} is {vendor_of[arch]} in the spec sheet"
            )
        seen = segments.setdefault(arch, set())
        if seen and (row["segment"] == "any" or "any" in seen):
            raise BadInputError(
                path, line, "segment", f"{arch} has an 'any' row beside a segment row"
            )
        seen.add(row["segment"])
    return frame.drop(_LINE)


@functools.cache
def bundled_eight_bit_ratios() -> pl.DataFrame:
    """The bundled 8-bit ratio table, checked against the bundled spec sheet (read once)."""
    sheet = read_gpu_specs(SPEC_SHEET)
    vendor_of = dict(sheet.select("architecture", "vendor").unique().iter_rows())
    return read_eight_bit_ratios(EIGHT_BIT_RATIOS, vendor_of)


# What a published pair's ratio is compared with: a relative_performance workload, or the
# LLM table's batch-1 decode / prefill (model/independent_check.py says which rows).
INDEPENDENT_WORKLOADS = frozenset(
    {"training_16bit", "inference_16bit", "inference_8bit", "llm_decode", "llm_prefill"}
)
# in_fit: both figures are rows the model is fitted on; one_side: one of them; independent:
# neither (sources/data/benchmarks/independent/MANIFEST.md).
INDEPENDENCE = frozenset({"in_fit", "one_side", "independent"})


def read_independent_ratios(path: str | Path, gpu_ids: frozenset[str] | None) -> pl.DataFrame:
    """Published GPU-pair ratios with the tolerance our ratio must keep (one row a pair).

    `their_ratio` is gpu_a / gpu_b per GPU, positive and finite; `tolerance` is relative
    (our ratio passes within a factor 1 + tolerance either way) and must be positive;
    `enforced` (true/false) says whether the blocking check fails the run on the pair.
    """
    columns = [
        dataclasses.replace(_gpu_column(gpu_ids), name="gpu_a"),
        dataclasses.replace(_gpu_column(gpu_ids), name="gpu_b"),
        Column("workload", choices=INDEPENDENT_WORKLOADS),
        Column("their_ratio", "float", exclusive_minimum=0),
        Column("benchmark"),
        Column("source"),
        Column("citation"),
        Column("as_of", "date", not_future=True),
        Column("tolerance", "float", exclusive_minimum=0),
        Column("independence", choices=INDEPENDENCE),
        Column("enforced", choices=frozenset({"true", "false"})),
        Column("note", required=False),
    ]
    frame = read_table(
        path, columns, unique=("gpu_a", "gpu_b", "workload", "benchmark", "source"),
        line_column=_LINE,
    )  # fmt: skip
    for row in frame.filter(pl.col("gpu_a") == pl.col("gpu_b")).iter_rows(named=True):
        raise BadInputError(path, row[_LINE], "gpu_b", "a GPU compared with itself")
    return frame.with_columns(enforced=pl.col("enforced") == "true").drop(_LINE)


# Optional trailing columns of the benchmark files: provenance a row's source states but
# the rules of sources/benchmarks/provenance.py cannot derive (a blank cell: not stated).
_PROVENANCE_CELLS = (
    Column("stack", required=False, choices=frozenset(STACKS)),
    Column("host", required=False, choices=frozenset(HOSTS)),
)


# The LLM file may also state how many tokens sat in the KV cache before the test began
# (llama-bench `-d N`, shown as `tg128@dN`); blank: not stated. It comes before the
# provenance cells.
_LLM_CELLS = (Column("context_depth", "int", required=False, minimum=0), *_PROVENANCE_CELLS)


def _provenance_cells(
    path: str | Path, optional: tuple[Column, ...] = _PROVENANCE_CELLS
) -> list[Column]:
    """The optional columns (`stack` / `host`, ...) the file's header ends with (maybe none)."""
    with Path(path).open(encoding="utf-8") as handle:
        header = next((line for line in handle if line.strip() and not line.startswith("#")), "")
    names = [name.strip() for name in header.split(",")]
    return [c for c in optional if c.name in names]


def _with_cells(
    rows: pl.DataFrame, cells: list[Column], optional: tuple[Column, ...] = _PROVENANCE_CELLS
) -> pl.DataFrame:
    """Add the optional cells a file does not have, as unknown."""
    absent = [c for c in optional if c not in cells]
    return rows.with_columns(
        [pl.lit(None, dtype=pl.Int64 if c.kind == "int" else pl.Utf8).alias(c.name) for c in absent]
    )


def read_benchmark_figures(path: str | Path, gpu_ids: frozenset[str] | None) -> pl.DataFrame:
    """Published throughput figures transcribed into our format, one row per measurement.

    The key includes the citation: MLPerf publishes many systems with the same GPU, count
    and batch size in one round, each its own result (sources/data/benchmarks/MANIFEST.md).
    The batch size may be empty where the publisher gives none (MLPerf Inference): such
    rows carry the `no_batch_size` flag, as the adapters set it.
    """
    columns = [
        Column("source", choices=BENCHMARK_SOURCES),
        _gpu_column(gpu_ids),
        Column("model"),
        Column("workload_class", choices=WORKLOAD_CLASSES),
        Column("task", choices=TASKS),
        Column("precision", choices=PRECISIONS),
        Column("num_gpus", "int", minimum=1),
        Column("batch_size_per_gpu", "int", required=False, minimum=1),
        Column("throughput", "float", exclusive_minimum=0),
        Column("unit"),
        Column("software_era"),
        Column("as_of", "date", not_future=True),
        Column("citation"),
    ]
    key = (
        "source",
        "gpu_id",
        "model",
        "task",
        "precision",
        "num_gpus",
        "batch_size_per_gpu",
        "software_era",
        "citation",
    )
    cells = _provenance_cells(path)
    rows = _with_cells(read_table(path, [*columns, *cells], unique=key), cells)
    rows = with_benchmark_provenance(rows)
    no_batch = pl.col("batch_size_per_gpu").is_null()
    return rows.with_columns(
        flags=pl.when(no_batch).then(pl.lit("no_batch_size")).otherwise(pl.lit("")),
        flag_detail=pl.when(no_batch)
        .then(pl.lit("the publisher gives no batch size"))
        .otherwise(pl.lit("")),
    )


LLM_PHASES = frozenset({"decode", "prefill", "serving"})


def read_llm_benchmarks(path: str | Path, gpu_ids: frozenset[str] | None) -> pl.DataFrame:
    """Published LLM inference results, one row per measurement (benchmarks/llm/MANIFEST.md).

    `tokens_per_s` is the total of `num_gpus` GPUs; `bits` the weight bit class (4, 8,
    16) and `quant` the exact format; `phase` decode (generation), prefill (prompt
    processing) or serving (batched throughput). Optional trailing columns:
    `context_depth` (tokens already in the KV cache when the test began), then `stack`
    and `host` (the provenance vocabularies); a bad value is refused naming file and line.
    """
    columns = [
        Column("source"),
        _gpu_column(gpu_ids),
        Column("num_gpus", "int", minimum=1),
        Column("engine"),
        Column("model"),
        Column("model_params_b", "float", exclusive_minimum=0),
        Column("bits", "int", minimum=1),
        Column("quant"),
        Column("phase", choices=LLM_PHASES),
        Column("batch", "int", required=False, minimum=1),
        Column("context_tokens", "int", required=False, minimum=1),
        Column("tokens_per_s", "float", exclusive_minimum=0),
        Column("power_w", "float", required=False, exclusive_minimum=0),
        Column("as_of", "date", not_future=True),
        Column("citation"),
    ]
    cells = _provenance_cells(path, _LLM_CELLS)
    # Two tests of one configuration at different depths are two measurements.
    keyed = [*columns, *(c for c in cells if c.name == "context_depth")]
    key = tuple(c.name for c in keyed if c.name not in ("tokens_per_s", "power_w"))
    rows = _with_cells(read_table(path, [*columns, *cells], unique=key), cells, _LLM_CELLS)
    return with_llm_provenance(rows)


def read_fx_rates(path: str | Path) -> pl.DataFrame:
    """Dated USD value of one unit of each currency."""
    columns = [
        Column("day", "date", not_future=True),
        Column(
            "currency",
            check=lambda v: (
                None if re.fullmatch(r"[A-Z]{3}", str(v)) else f"not an ISO currency code: {v!r}"
            ),
        ),
        # From the Kuwaiti dinar (~3.3 USD) down to the rupiah (~0.00006 USD).
        Column("usd_per_unit", "float", exclusive_minimum=0, check=_fx_range),
        Column("source"),
    ]
    return read_table(path, columns, unique=("day", "currency"))


def _fx_range(value: object) -> str | None:
    return None if 1e-5 <= float(value) <= 10 else f"{value} USD per unit is not a real rate"


def read_retail_observations(
    path: str | Path,
    gpu_ids: frozenset[str] | None,
    launch_prices: Mapping[str, float] | None = None,
    rates: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """Retail price observations (new and used), one row per observed offer or sale.

    Args:
        path: The CSV.
        gpu_ids: The catalog's ids (None: any lowercase slug).
        launch_prices: USD launch price per gpu_id, when known: a price more than
            `PLAUSIBLE_FACTOR` times it, or under `LAUNCH_FLOOR_SHARE` of it, is refused.
        rates: The bundled exchange rates (`read_fx_rates`). Given, a currency other than
            USD must have a rate on or before the row's day, and the launch-price and
            `USD_PRICE_BAND` checks apply to every row in USD; None: to USD rows only.

    Raises:
        BadInputError: A bad cell, an unknown source, a future date, a repeated row, a
            currency without a rate or an implausible price (file, line and field named).
    """
    frame, usd = _read_retail(path, gpu_ids, rates)
    _check_launch_bands(frame, usd, path, launch_prices or {})
    return frame.drop(_LINE)


def _read_retail(
    path: str | Path, gpu_ids: frozenset[str] | None, rates: pl.DataFrame | None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(rows with their line, the rows in USD): every check that needs no launch price."""
    columns = [
        Column("observed_at", "datetime", not_future=True),
        Column("source", choices=RETAIL_SOURCES),
        Column("market", choices=MARKETS),
        _gpu_column(gpu_ids),
        Column("title"),
        Column("price", "float", exclusive_minimum=0),
        Column(
            "currency",
            check=lambda v: (
                None if re.fullmatch(r"[A-Z]{3}", str(v)) else f"not an ISO currency code: {v!r}"
            ),
        ),
        Column("url", check=https_url),
        Column("listing_id", required=False),
        Column("citation"),
    ]
    # Everything but the citation: the same observation cited twice is still one.
    key = tuple(c.name for c in columns if c.name != "citation")
    frame = read_table(path, columns, unique=key, line_column=_LINE)
    usd = _in_usd(frame, path, rates)
    _check_plausible(frame, path, "price", ("gpu_id", "currency"), None, None)
    _check_price_band(usd, path, {})
    return frame, usd


def _check_launch_bands(
    frame: pl.DataFrame, usd: pl.DataFrame, path: str | Path, launch_prices: Mapping[str, float]
) -> None:
    """The checks of each row against its GPU's launch price (none without launch prices)."""
    if launch_prices:
        _check_plausible(frame, path, "price", ("gpu_id", "currency"), launch_prices, "USD")
        _check_price_band(usd, path, launch_prices)


def _in_usd(frame: pl.DataFrame, path: str | Path, rates: pl.DataFrame | None) -> pl.DataFrame:
    """The rows with `price_usd`: all of them when `rates` is given, else the USD rows.

    Raises:
        BadInputError: A row whose currency has no rate on or before its day.
    """
    if rates is None:
        return frame.filter(pl.col("currency") == "USD").with_columns(price_usd=pl.col("price"))
    converted = add_usd(frame, rates)
    for row in converted.filter(pl.col("price_usd").is_null()).iter_rows(named=True):
        known = sorted({"USD", *rates["currency"].unique().to_list()})
        reason = (
            f"no exchange rate for {row['currency']!r} on or before "
            f"{row['observed_at'].date()} in fx_rates.csv (currencies with rates: {known})"
        )
        raise BadInputError(path, row[_LINE], "currency", reason)
    return converted


def _check_price_band(
    usd: pl.DataFrame, path: str | Path, launch_prices: Mapping[str, float]
) -> None:
    """Refuse a USD price outside `USD_PRICE_BAND` or under `LAUNCH_FLOOR_SHARE` of launch.

    Raises:
        BadInputError: The first such row, naming its line and the `price` field.
    """
    low, high = USD_PRICE_BAND
    for row in usd.iter_rows(named=True):
        amount, gpu = row["price_usd"], row["gpu_id"]
        launch = launch_prices.get(gpu)
        if not low <= amount <= high:
            reason = f"${amount:,.2f} for one {gpu} is outside ${low:,.0f}-${high:,.0f}"
        elif launch and amount < launch * LAUNCH_FLOOR_SHARE:
            share = f"{LAUNCH_FLOOR_SHARE:.0%}"
            reason = f"${amount:,.2f} is under {share} of the {gpu} launch price ${launch:,.0f}"
        elif launch and row["currency"] != "USD" and amount > launch * PLAUSIBLE_FACTOR:
            reason = f"${amount:,.2f} is over {PLAUSIBLE_FACTOR:g}x the launch price {launch:g}"
        else:
            continue
        raise BadInputError(path, row[_LINE], "price", reason)


def price_fact_files(prices_dir: str | Path) -> list[Path]:
    """The bundled retail fact files: the page facts, then one history file per source."""
    prices_dir = Path(prices_dir)
    return [prices_dir / "retail_observations.csv", *sorted((prices_dir / "history").glob("*.csv"))]


def read_price_facts(
    prices_dir: str | Path,
    gpu_ids: frozenset[str] | None,
    launch_prices: Mapping[str, float] | None = None,
    spec_sheet: str | Path | None = None,
) -> pl.DataFrame:
    """Every bundled retail fact (read_retail_observations on each file, concatenated).

    The folder's `fx_rates.csv` (when present) is the rate table every non-USD row must
    find a rate in, on or before its day; the plausibility band applies in USD. Before any
    row is compared with its GPU's launch price, each launch price is compared with the
    median of its GPU's rows (plausibility.LAUNCH_TO_MARKET): a launch price typo is blamed on the
    spec sheet (`spec_sheet`, default `../specs/gpu_specs.csv`), not on its GPU's rows.

    Raises:
        BadInputError: A bad row in any file, a source found in two files (its rows
            would be loaded twice; each source has one file), or an implausible launch
            price (naming the spec sheet's line).
    """
    frames, owner = [], {}
    fx_path = Path(prices_dir) / "fx_rates.csv"
    rates = read_fx_rates(fx_path) if fx_path.exists() else None
    for path in price_fact_files(prices_dir):
        if not path.exists():
            continue
        frame, usd = _read_retail(path, gpu_ids, rates)
        for source in frame["source"].unique().sort():
            if source in owner:
                raise BadInputError(
                    path, 0, "source", f"{source!r} also has rows in {owner[source].name}"
                )
            owner[source] = path
        frames.append((path, frame, usd))
    if not frames:
        raise BadInputError(prices_dir, 0, "file", "no retail price facts")
    if launch_prices:
        every = pl.concat([usd.select("gpu_id", "price_usd") for _, _, usd in frames])
        sheet = Path(spec_sheet or Path(prices_dir).parent / "specs" / SPEC_SHEET.name)
        check_launch_prices(every, launch_prices, sheet)
        for path, frame, usd in frames:
            _check_launch_bands(frame, usd, path, launch_prices)
    return pl.concat([frame.drop(_LINE) for _, frame, _ in frames], how="vertical_relaxed")


def check_launch_prices(
    usd: pl.DataFrame, launch_prices: Mapping[str, float], sheet: str | Path
) -> None:
    """Each launch price against the median of its GPU's bundled prices, blamed on `sheet`.

    `usd` has gpu_id and price_usd (every bundled retail row).

    Raises:
        BadInputError: The first GPU whose launch price is out of
            plausibility.LAUNCH_TO_MARKET, naming the sheet's line and `launch_price_usd`.
    """
    for gpu, reason in launch_price_problems(usd, launch_prices)[:1]:
        raise BadInputError(sheet, _sheet_line(Path(sheet), gpu), "launch_price_usd", reason)


def _sheet_line(sheet: Path, gpu_id: str) -> int:
    """The line of `gpu_id`'s row in a spec sheet (0 when the file or row is not there)."""
    if not sheet.exists():
        return 0
    with sheet.open(encoding="utf-8-sig") as handle:
        return next((n for n, text in enumerate(handle, 1) if text.startswith(f"{gpu_id},")), 0)


def _others_median(ordered: list[float], value: float) -> float | None:
    """The median of `ordered` (sorted) without one occurrence of `value`; O(log n)."""
    size = len(ordered) - 1
    if size == 0:
        return None
    skip = bisect.bisect_left(ordered, value)

    def at(i: int) -> float:
        return ordered[i] if i < skip else ordered[i + 1]

    if size % 2:
        return at(size // 2)
    return (at(size // 2 - 1) + at(size // 2)) / 2


def _check_plausible(
    frame: pl.DataFrame,
    path: str | Path,
    value: str,
    group: tuple[str, ...],
    launch_prices: Mapping[str, float] | None,
    launch_currency: str | None,
    field: str | None = None,
) -> None:
    """Refuse a value out of scale with its group's other rows or its GPU's launch price.

    Each row is compared with the median of the *other* rows of its group, so that in a
    small group the bad row is the one named (with the whole group's median, one row x1000
    among two makes the good one look 1/500 of the median). The error names `field`
    (default `value`); in a group of up to four rows it cites the other rows' lines.

    Raises:
        BadInputError: The first such row, naming its line and `field`.
    """
    if frame.is_empty():
        return
    field = field or value
    groups: dict[tuple, list[tuple[float, int]]] = {}
    for row in frame.select(*group, value, _LINE).iter_rows():
        groups.setdefault(row[:-2], []).append((row[-2], row[-1]))
    found = []
    for key, rows in groups.items():
        ordered = sorted(amount for amount, _ in rows)
        for amount, line in rows:
            median = _others_median(ordered, amount)
            problem = _out_of_scale(amount, median)
            if problem:
                others = [str(n) for _, n in rows if n != line]
                cited = f" (line {', '.join(others)})" if len(others) <= 3 else ""
                found.append((line, f"{problem}{cited} of {key[0]}"))
    if found:
        line, reason = min(found)
        raise BadInputError(path, line, field, reason)
    if launch_prices:
        _check_over_launch(frame, path, value, launch_prices, launch_currency, field)


def _out_of_scale(amount: float, median: float | None) -> str | None:
    if median is None:
        return None
    if amount > median * PLAUSIBLE_FACTOR:
        return f"{amount:g} is over {PLAUSIBLE_FACTOR:g}x the median {median:g} of the others"
    if amount < median / PLAUSIBLE_FACTOR**2:
        return (
            f"{amount:g} is under 1/{PLAUSIBLE_FACTOR**2:g} of the median {median:g} of the others"
        )
    return None


def _check_over_launch(
    frame: pl.DataFrame,
    path: str | Path,
    value: str,
    launch_prices: Mapping[str, float],
    launch_currency: str | None,
    field: str,
) -> None:
    for row in frame.iter_rows(named=True):
        amount, where = row[value], f"{row.get('gpu_id')}"
        launch = launch_prices.get(row.get("gpu_id") or "")
        same_currency = launch_currency is None or row.get("currency") == launch_currency
        if launch and same_currency and amount > launch * PLAUSIBLE_FACTOR:
            reason = f"{amount:g} is over {PLAUSIBLE_FACTOR:g}x the launch price {launch:g}"
            raise BadInputError(path, row[_LINE], field, f"{reason} of {where}")


def read_cloud_offers(
    path: str | Path,
    gpu_ids: frozenset[str] | None,
    providers: Collection[str],
    line_column: str | None = None,
) -> pl.DataFrame:
    """Cloud offers, one row per provider x instance type x region x price type.

    Args:
        path: The CSV.
        gpu_ids: The catalog's ids (None: any lowercase slug).
        providers: The providers the pipeline reads (the registry's names, each with a
            bundled offers file; see sources/data/cloud/MANIFEST.md).
        line_column: Keep each row's file line under this name (None: drop it).
    """
    columns = [
        Column("observed_at", "datetime", not_future=True),
        Column("provider", choices=frozenset(providers)),
        Column("instance_type"),
        Column("region", required=False),
        Column("price_type", choices=PRICE_TYPES),
        _gpu_column(gpu_ids),
        Column("gpu_count", "int", minimum=1),
        Column("usd_per_hour", "float", exclusive_minimum=0),
        Column("citation"),
    ]
    key = ("observed_at", "provider", "instance_type", "region", "price_type")
    frame = read_table(path, columns, unique=key, line_column=_LINE)
    frame = frame.with_columns(usd_per_gpu_hour=pl.col("usd_per_hour") / pl.col("gpu_count"))
    per_gpu = pl.col("usd_per_gpu_hour")
    outside = (per_gpu > MAX_USD_PER_GPU_HOUR) | (per_gpu < MIN_USD_PER_GPU_HOUR)
    for row in frame.filter(outside).iter_rows(named=True):
        amount = row["usd_per_gpu_hour"]
        side = "over" if amount > MAX_USD_PER_GPU_HOUR else "under"
        limit = MAX_USD_PER_GPU_HOUR if side == "over" else MIN_USD_PER_GPU_HOUR
        reason = f"${amount:g} per GPU-hour is {side} ${limit:g}"
        raise BadInputError(path, row[_LINE], "usd_per_hour", reason)
    _check_plausible(frame, path, "usd_per_gpu_hour", ("gpu_id",), None, None, "usd_per_hour")
    return frame.rename({_LINE: line_column}) if line_column else frame.drop(_LINE)


def to_usd(observations: pl.DataFrame, rates: pl.DataFrame, path: str | Path) -> pl.DataFrame:
    """Add `price_usd`; in a bundled file a currency without a rate is an error.

    The error names the file and the observation (never a guessed rate).
    """
    converted = add_usd(observations, rates)
    missing = converted.filter(pl.col("price_usd").is_null() & pl.col("price").is_not_null())
    if missing.height:
        first = missing.row(0, named=True)
        raise BadInputError(
            path,
            0,
            "currency",
            f"no exchange rate for {first['currency']} on or before "
            f"{first['observed_at'].date()} (observation {first['title']!r}); "
            "add one to fx_rates.csv",
        )
    return converted
