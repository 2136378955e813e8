"""The LLM serving tables the site reads (issue 24): their contract schemas, in one place.

`llm_serving` (throughput per GPU x model x precision x GPU count x concurrency),
`llm_serving_cost` (cost per million tokens at interactivity targets), `llm_api_prices`
(published API list prices, shown for comparison only) and `llm_serving_benchmarks` (the
published measurements behind the model, read here for the MLCommons attribution) are
written by the model and source floors. `read_serving_table` returns a table's rows for a
run with these column types; a table the warehouse does not hold yet reads as an empty
frame of the same schema, so the site builds before and after the tables exist.
"""

import datetime as dt

import duckdb
import polars as pl

SERVING_SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "llm_serving": {
        "run_date": pl.Date(),
        "gpu_id": pl.Utf8(),
        "model_id": pl.Utf8(),
        "precision_bits": pl.Int32(),
        "num_gpus": pl.Int32(),
        "concurrency": pl.Int32(),
        "engine": pl.Utf8(),
        "fits": pl.Boolean(),
        "kv_capacity_tokens": pl.Int64(),
        "output_tokens_per_s": pl.Float64(),
        "output_tokens_per_s_per_user": pl.Float64(),
        "low": pl.Float64(),
        "high": pl.Float64(),
        "prefill_tokens_per_s": pl.Float64(),
        "ttft_s": pl.Float64(),
        "joules_per_output_token": pl.Float64(),
        "energy_basis": pl.Utf8(),
        "interconnect": pl.Utf8(),
        "method": pl.Utf8(),
        "evidence": pl.Utf8(),
    },
    "llm_serving_cost": {
        "run_date": pl.Date(),
        "gpu_id": pl.Utf8(),
        "model_id": pl.Utf8(),
        "precision_bits": pl.Int32(),
        "num_gpus": pl.Int32(),
        "basis": pl.Utf8(),
        "min_tokens_per_s_per_user": pl.Float64(),
        "concurrency": pl.Int32(),
        "output_tokens_per_s_per_user": pl.Float64(),
        "usd_per_million_output_tokens": pl.Float64(),
        "usd_per_million_input_tokens": pl.Float64(),
        "low": pl.Float64(),
        "high": pl.Float64(),
        "utilization": pl.Float64(),
        "detail": pl.Utf8(),
        "rank": pl.Int32(),
        "grounded": pl.Boolean(),
    },
    "llm_api_prices": {
        "model_id": pl.Utf8(),
        "provider": pl.Utf8(),
        "usd_per_million_input_tokens": pl.Float64(),
        "usd_per_million_output_tokens": pl.Float64(),
        "as_of": pl.Date(),
        "citation": pl.Utf8(),
        "url": pl.Utf8(),
    },
    "llm_serving_benchmarks": {
        "source": pl.Utf8(),
        "gpu_id": pl.Utf8(),
        "num_gpus": pl.Int32(),
        "engine": pl.Utf8(),
        "engine_version": pl.Utf8(),
        "model_id": pl.Utf8(),
        "precision": pl.Utf8(),
        "precision_bits": pl.Int32(),
        "scenario": pl.Utf8(),
        "concurrency": pl.Int32(),
        "input_tokens": pl.Int64(),
        "output_tokens": pl.Int64(),
        "output_tokens_per_s": pl.Float64(),
        "output_tokens_per_s_per_user": pl.Float64(),
        "ttft_ms": pl.Float64(),
        "tpot_ms": pl.Float64(),
        "power_w": pl.Float64(),
        "as_of": pl.Date(),
        "citation": pl.Utf8(),
    },
}

# How each table is cut to one version: model tables by run, dated inputs up to the as-of
# date (a version never shows a price or a result published after it), with a stable order.
_WHERE = {
    "llm_serving": "run_date = ?",
    "llm_serving_cost": "run_date = ?",
    "llm_api_prices": "as_of <= ?",
    "llm_serving_benchmarks": "as_of <= ?",
}
_ORDER = {
    "llm_serving": "gpu_id, model_id, precision_bits, num_gpus, concurrency",
    "llm_serving_cost": (
        "model_id, min_tokens_per_s_per_user, basis, usd_per_million_output_tokens, gpu_id"
    ),
    "llm_api_prices": "model_id, usd_per_million_output_tokens, provider",
    "llm_serving_benchmarks": "model_id, gpu_id, num_gpus, scenario, concurrency",
}


def empty_serving_table(table: str) -> pl.DataFrame:
    """No rows, with the table's contract schema."""
    return pl.DataFrame(schema=SERVING_SCHEMAS[table])


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    """The table's columns (none when the warehouse does not hold it)."""
    return [
        name
        for (name,) in con.sql(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_schema = 'main' AND table_name = ? ORDER BY ordinal_position",
            params=[table],
        ).fetchall()
    ]


def read_serving_table(
    con: duckdb.DuckDBPyConnection, table: str, run_date: dt.date
) -> pl.DataFrame:
    """The table's rows for the version of `run_date`, cast to the contract schema.

    Columns beyond the contract are kept. A column the contract names but the table lacks
    is an error naming both: the site would otherwise show blanks where numbers belong.
    """
    schema = SERVING_SCHEMAS[table]
    columns = _columns(con, table)
    if not columns:
        return empty_serving_table(table)
    missing = [c for c in schema if c not in columns]
    if missing:
        raise ValueError(f"warehouse table {table} lacks contract columns {missing}")
    frame = con.sql(
        f"SELECT * FROM {table} WHERE {_WHERE[table]} ORDER BY {_ORDER[table]}",
        params=[run_date],
    ).pl()
    return frame.with_columns(pl.col(c).cast(t) for c, t in schema.items())
