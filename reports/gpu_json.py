"""One small JSON file per catalog GPU: `data/gpu/<gpu_id>.json` (issue 25 item 7).

What a GPU page shows, for programs: the specs with the source each value was taken from,
relative performance per workload with its 95 % interval, the prices at the as-of date with
their evidence (listings, age, sources), where it ranks to buy and to rent, and links to its
page, chart and the version's downloads. Every figure is read from the same prepared
Dataset as the pages, so the file and the page cannot disagree. Links are relative to the
JSON file (`../../gpu/<gpu_id>.html`).
"""

import datetime as dt
import json
import math
from pathlib import Path

import polars as pl

from reports.content.renting import best_rent_offers
from reports.dataset import Dataset
from reports.safety import slug
from reports.site import inside

# The spec columns of `gpus` a file reports, with their unit (as the GPU page's spec table).
SPEC_UNITS = {
    "memory_gb": "GB",
    "memory_bandwidth_gbs": "GB/s",
    "fp16_tensor_tflops": "TFLOPS",
    "fp8_tensor_tflops": "TFLOPS",
    "int8_tensor_tops": "TOPS",
    "tdp_w": "W",
    "l2_cache_mb": "MB",
    "release_date": "date",
    "launch_price_usd": "USD",
}
_PRICE = (
    "market",
    "price_usd",
    "price_low",
    "price_high",
    "price_method",
    "price_day",
    "age_days",
    "n_observations",
    "sources",
    "source_country",
    "source_currency",
    "detail",
)
_BUY = (
    "workload",
    "market",
    "system_gpus",
    "platform",
    "price_usd",
    "total_cost_usd",
    "perf_per_dollar",
    "perf_per_dollar_low",
    "perf_per_dollar_high",
    "rank",
    "of",
    "p_top3",
)
_RENT = (
    "workload",
    "price_type",
    "provider",
    "instance_type",
    "region",
    "usd_per_gpu_hour",
    "offer_day",
    "offer_age_days",
    "fresh",
    "perf_per_dollar",
    "perf_per_dollar_low",
    "perf_per_dollar_high",
    "rank",
    "n",
)


def _plain(value: object) -> object:
    """A JSON value: dates as ISO text, NaN as null."""
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _rows(frame: pl.DataFrame, columns: tuple[str, ...]) -> list[dict]:
    present = [c for c in columns if c in frame.columns]
    return [
        {k: _plain(v) for k, v in r.items()} for r in frame.select(present).iter_rows(named=True)
    ]


def _by_gpu(frame: pl.DataFrame) -> dict[str, pl.DataFrame]:
    if frame.is_empty():
        return {}
    return {k[0]: v for k, v in frame.partition_by("gpu_id", as_dict=True).items()}


def buy_ranks(perf: pl.DataFrame) -> pl.DataFrame:
    """Each GPU's smallest system per workload and market, its rank and of how many."""
    smallest = perf.group_by("gpu_id").agg(_min=pl.col("system_gpus").min())
    counts = perf.group_by("workload", "system_gpus", "market").agg(of=pl.len())
    return (
        perf.join(smallest, on="gpu_id")
        .filter(pl.col("system_gpus") == pl.col("_min"))
        .join(counts, on=["workload", "system_gpus", "market"])
        .sort("gpu_id", "workload", "market")
    )


def _specs(gpu: dict, chosen: pl.DataFrame) -> dict[str, dict]:
    cited = {r["field"]: r for r in chosen.iter_rows(named=True)} if chosen.height else {}
    out = {}
    for column, unit in SPEC_UNITS.items():
        source = cited.get(column)
        out[column] = {
            "value": _plain(gpu.get(column)),
            "unit": unit,
            "source": source["source"] if source else gpu.get(f"{column}_source"),
            "citation": source["citation"] if source else None,
            "source_url": source["source_url"] if source else None,
        }
    return out


def gpu_record(
    ds: Dataset, gpu: dict, parts: dict[str, pl.DataFrame], charted: bool
) -> dict[str, object]:
    """The JSON object of one GPU (`parts`: its rows of each table, by name)."""
    gpu_id = gpu["gpu_id"]
    relative = parts["relative"]
    return {
        "gpu_id": gpu_id,
        "name": gpu.get("name"),
        "vendor": gpu.get("vendor"),
        "architecture": gpu.get("architecture"),
        "version": ds.version,
        "as_of": ds.run_date.isoformat(),
        "specs": _specs(gpu, parts["specs"]),
        "spec_sheet": {"source": gpu.get("source"), "source_url": gpu.get("source_url")},
        "relative_performance": _rows(
            relative.sort("workload") if relative.height else relative,
            (
                "workload",
                "value",
                "value_low",
                "value_high",
                "method",
                "evidence",
                "n_results",
                "interval_method",
                "reference_gpu",
            ),
        ),
        "prices": _rows(parts["prices"], _PRICE),
        "rank": {
            "buy": _rows(parts["buy"], _BUY),
            "rent": _rows(parts["rent"], _RENT),
        },
        "links": {
            "page": f"../../gpu/{gpu_id}.html",
            "price_chart": f"../../charts/gpu/{gpu_id}.svg" if charted else None,
            "downloads": "../../downloads.html",
            "datapackage": "../../datapackage.json",
        },
    }


def write_gpu_files(ds: Dataset, out_dir: Path, charted: set[str]) -> list[str]:
    """Write `<out_dir>/<gpu_id>.json` for every catalog GPU; return their gpu_ids."""
    out_dir.mkdir(parents=True, exist_ok=True)
    chosen = ds.spec_sources.filter(pl.col("chosen")) if ds.spec_sources.height else pl.DataFrame()
    tables = {
        "specs": _by_gpu(chosen),
        "relative": _by_gpu(ds.data.relative),
        "prices": _by_gpu(ds.current_prices.sort("gpu_id", "market")),
        "buy": _by_gpu(buy_ranks(ds.data.perf)),
        "rent": _by_gpu(best_rent_offers(ds.data.cloud_perf).sort("workload", "price_type")),
    }
    empty = pl.DataFrame()
    written = []
    for gpu in ds.data.gpus.sort("gpu_id").iter_rows(named=True):
        gpu_id = slug(gpu["gpu_id"])
        parts = {name: by.get(gpu_id, empty) for name, by in tables.items()}
        record = gpu_record(ds, gpu, parts, gpu_id in charted)
        text = json.dumps(record, indent=1, ensure_ascii=False, allow_nan=False) + "\n"
        inside(out_dir, f"{gpu_id}.json").write_text(text, encoding="utf-8")
        written.append(gpu_id)
    return written
