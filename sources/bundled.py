"""Readers for the bundled snapshot in `sources/data/` (the project's own, cited files).

Each reader validates every cell (see `sources.tables`) and returns a Polars frame whose
columns match the warehouse table it feeds. Cross-file rules (every gpu_id must be in the
catalog) are enforced by passing the catalog's ids.
"""

import datetime as dt
import re
from pathlib import Path

import polars as pl

from sources.fx import add_usd
from sources.tables import BadInputError, Column, https_url, read_table

DATA_DIR = Path(__file__).parent / "data"

GPU_ID = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MARKETS = frozenset({"new", "used"})
PRICE_TYPES = frozenset({"on_demand", "spot", "reserved_1y", "reserved_3y"})
TASKS = frozenset({"training", "inference"})
# "mixed": the source does not say which (MLPerf Training: AMP/bf16/fp8 by submitter).
PRECISIONS = frozenset({"fp32", "tf32", "fp16", "bf16", "fp8", "int8", "mixed"})
WORKLOAD_CLASSES = frozenset({"cnn", "transformer", "rnn"})


_AS_OF = re.compile(r"^as_of:\s*(\d{4}-\d{2}-\d{2})\s*$", re.MULTILINE)


def manifest_as_of(folder: str | Path) -> dt.date:
    """The `as_of: YYYY-MM-DD` line of a snapshot folder's MANIFEST.md."""
    manifest = Path(folder) / "MANIFEST.md"
    match = _AS_OF.search(manifest.read_text(encoding="utf-8")) if manifest.exists() else None
    if not match:
        raise BadInputError(manifest, 0, "as_of", "MANIFEST.md needs an 'as_of: YYYY-MM-DD' line")
    return dt.date.fromisoformat(match.group(1))


def _slug(value: object) -> str | None:
    return None if GPU_ID.match(str(value)) else f"not a lowercase slug gpu_id: {value!r}"


def _gpu_column(gpu_ids: frozenset[str] | None, required: bool = True) -> Column:
    if gpu_ids is None:
        return Column("gpu_id", required=required, check=_slug)
    return Column("gpu_id", required=required, choices=gpu_ids)


def read_gpu_specs(path: str | Path) -> pl.DataFrame:
    """The curated spec sheet: one row per canonical GPU.

    Memory and bandwidth are required: every vendor publishes them. Tensor rates are empty
    for GPUs without tensor/matrix units (Pascal, GTX 16, RDNA 2) or without a dense
    vendor figure; TDP, L2 and release date may be left empty for `sources.specs` to fill
    from a cited third-party source (see docs/data.md, "Specs"). `devices` is how many GPUs
    software sees on one board or module (2 for MI250/MI250X and K80, 4 for A16); memory,
    bandwidth and rates are per board.
    """
    columns = [
        Column("gpu_id", check=_slug),
        Column("name"),
        Column("vendor", choices=frozenset({"nvidia", "amd", "intel"})),
        Column("architecture"),
        Column("form_factor", choices=frozenset({"pcie", "sxm", "oam", "superchip"})),
        Column("memory_gb", "float", exclusive_minimum=0),
        Column("memory_bandwidth_gbs", "float", exclusive_minimum=0),
        Column("fp16_tensor_tflops", "float", required=False, exclusive_minimum=0),
        Column("fp8_tensor_tflops", "float", required=False, exclusive_minimum=0),
        Column("int8_tensor_tops", "float", required=False, exclusive_minimum=0),
        Column("tdp_w", "float", required=False, exclusive_minimum=0),
        Column("l2_cache_mb", "float", required=False, exclusive_minimum=0),
        Column("release_date", "date", required=False),
        Column("launch_price_usd", "float", required=False, exclusive_minimum=0),
        Column("source"),
        Column("source_url", check=https_url),
        Column("devices", "int", minimum=1),
    ]
    return read_table(path, columns, unique=("gpu_id",))


def read_benchmark_figures(path: str | Path, gpu_ids: frozenset[str] | None) -> pl.DataFrame:
    """Published throughput figures transcribed into our format, one row per measurement.

    The key includes the citation: MLPerf publishes many systems with the same GPU, count
    and batch size in one round, each its own result (sources/data/benchmarks/MANIFEST.md).
    The batch size may be empty where the publisher gives none (MLPerf Inference): such
    rows carry the `no_batch_size` flag, as the adapters set it.
    """
    columns = [
        Column("source"),
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
        Column("as_of", "date"),
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
    rows = read_table(path, columns, unique=key)
    no_batch = pl.col("batch_size_per_gpu").is_null()
    return rows.with_columns(
        flags=pl.when(no_batch).then(pl.lit("no_batch_size")).otherwise(pl.lit("")),
        flag_detail=pl.when(no_batch)
        .then(pl.lit("the publisher gives no batch size"))
        .otherwise(pl.lit("")),
    )


def read_fx_rates(path: str | Path) -> pl.DataFrame:
    """Dated USD value of one unit of each currency."""
    columns = [
        Column("day", "date"),
        Column(
            "currency",
            check=lambda v: (
                None if re.fullmatch(r"[A-Z]{3}", str(v)) else f"not an ISO currency code: {v!r}"
            ),
        ),
        Column("usd_per_unit", "float", exclusive_minimum=0),
        Column("source"),
    ]
    return read_table(path, columns, unique=("day", "currency"))


def read_retail_observations(path: str | Path, gpu_ids: frozenset[str] | None) -> pl.DataFrame:
    """Retail price observations (new and used), one row per observed offer or sale."""
    columns = [
        Column("observed_at", "datetime"),
        Column("source"),
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
    return read_table(path, columns)


def read_cloud_offers(path: str | Path, gpu_ids: frozenset[str] | None) -> pl.DataFrame:
    """Cloud offers, one row per provider x instance type x region x price type."""
    columns = [
        Column("observed_at", "datetime"),
        Column("provider"),
        Column("instance_type"),
        Column("region", required=False),
        Column("price_type", choices=PRICE_TYPES),
        _gpu_column(gpu_ids),
        Column("gpu_count", "int", minimum=1),
        Column("usd_per_hour", "float", exclusive_minimum=0),
        Column("citation"),
    ]
    key = ("observed_at", "provider", "instance_type", "region", "price_type")
    frame = read_table(path, columns, unique=key)
    return frame.with_columns(usd_per_gpu_hour=pl.col("usd_per_hour") / pl.col("gpu_count"))


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
