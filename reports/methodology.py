"""The methodology page: the run's parameters, fitted constants, validation and data quality.

Every figure on this page is read from the warehouse, where the pipeline computed it; none
is typed in. The validation block is also kept in `docs/methodology.md` between two marker
comments: `python -m reports.methodology --update-docs` rewrites it from a warehouse, and a
test checks that the docs show what the pipeline computes from the bundled snapshot.
"""

import argparse
import datetime as dt
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import polars as pl

from model.comparison import comparison_table
from model.llm import decode_roofline, leave_one_gpu_out
from model.nowcast import AFTER_MINING_BAND, HORIZON_BANDS, NOWCAST_CHECK
from model.nowcast_backtest import HOLDOUT_CHECK
from reports.content.independent import INDEPENDENT_NOTE, independent_table
from reports.content.mlcommons import (
    BENCHMARK_NOTICE,
    NOTICE,
    SERVING_RETRIEVED,
    benchmarks_retrieved,
    rounds_table,
)
from reports.content.nowcast_holdout import HOLDOUT_COLUMNS, HOLDOUT_NOTE, holdout_table
from reports.content.serving_validation import (
    ENGINE_COLUMNS,
    GPU_COLUMNS,
    SERVING_NOTE,
    serving_engine_table,
    serving_gpu_table,
)
from reports.report import markdown_table
from warehouse.export import open_published
from warehouse.release import default_published_dir

DOCS = Path(__file__).parents[1] / "docs" / "methodology.md"
# Sections of docs/methodology.md the site's methodology page shows as written there, so
# the rules and the known limits are on the site, not only in the repository.
SITE_SECTIONS = ("Headline eligibility and ties", "Known limits")
BEGIN = "<!-- BEGIN generated: validation (python -m reports.methodology --update-docs) -->"
END = "<!-- END generated: validation -->"


@dataclass(frozen=True)
class MethodologyData:
    """What the methodology page shows, for one run date."""

    run_date: dt.date
    reference_gpu: str
    parameters: dict
    constants: pl.DataFrame
    validation: pl.DataFrame
    spec_conflicts: pl.DataFrame
    benchmark_flags: pl.DataFrame
    sensitivity: pl.DataFrame
    comparison: pl.DataFrame
    llm_decode: pl.DataFrame
    independent: pl.DataFrame
    # The SITE_SECTIONS of docs/methodology.md, as Markdown (`docs_sections`).
    from_docs: str = ""
    # llm_serving_validation for the run (the serving model's held-out error per engine).
    serving_validation: pl.DataFrame = field(default_factory=pl.DataFrame)
    # The MLPerf® results the run used (debiased benchmark rows, serving measurements), for
    # the attribution MLCommons requires (reports/content/mlcommons.py).
    mlperf: pl.DataFrame = field(default_factory=pl.DataFrame)


def docs_sections(doc: Path, headings: tuple[str, ...] = SITE_SECTIONS) -> str:
    """The level-2 sections of `doc` whose heading starts with one of `headings`.

    Each runs to the next level-2 heading. A heading that is missing is an error: the
    site would silently lose its rules or its limits.
    """
    parts = ("\n" + doc.read_text(encoding="utf-8")).split("\n## ")
    found = []
    for heading in headings:
        match = [p for p in parts[1:] if p.startswith(heading)]
        if not match:
            raise ValueError(f"{doc}: no section '## {heading}'")
        found.append("## " + match[0].rstrip())
    return "\n\n".join(found)


def load_methodology_data(con: duckdb.DuckDBPyConnection, run_date: dt.date) -> MethodologyData:
    """Read the run's constants, validation figures and the inputs' quality tables."""
    run = con.sql(
        "SELECT reference_gpu, parameters FROM model_runs WHERE run_date = ?", params=[run_date]
    ).fetchall()
    if not run:
        raise ValueError(f"no model run for {run_date}: materialize the model first")

    def for_run(table: str, order: str) -> pl.DataFrame:
        return con.sql(
            f"SELECT * FROM {table} WHERE run_date = ? ORDER BY {order}", params=[run_date]
        ).pl()

    flags = con.sql(
        "SELECT source, flag, count(*) AS rows FROM ("
        " SELECT source, unnest(string_split(flags, ',')) AS flag FROM benchmark_results"
        " WHERE coalesce(flags, '') <> '') GROUP BY source, flag ORDER BY source, flag"
    ).pl()
    return MethodologyData(
        run_date=run_date,
        reference_gpu=run[0][0],
        parameters=json.loads(run[0][1]),
        constants=for_run("model_constants", "name, key, parameter_set"),
        validation=for_run("model_validation", "check_name, subject, metric"),
        spec_conflicts=con.sql("SELECT * FROM spec_conflicts ORDER BY gpu_id, field").pl(),
        benchmark_flags=flags,
        sensitivity=for_run("sensitivity", "parameter, value, workload, rank"),
        comparison=comparison_table(
            for_run("relative_performance", "gpu_id, workload"),
            con.sql("SELECT * FROM benchmark_results").pl(),
        ),
        llm_decode=llm_decode_table(
            con.sql("SELECT * FROM llm_benchmarks ORDER BY ALL").pl(),
            con.sql("SELECT * FROM gpus ORDER BY gpu_id").pl(),
        ),
        independent=for_run("independent_checks", "workload, gpu_a, gpu_b, source, benchmark"),
        from_docs=docs_sections(DOCS),
        serving_validation=for_run("llm_serving_validation", "engine, gpu_id NULLS FIRST"),
        mlperf=con.sql(
            "SELECT DISTINCT source, citation, gpu_id, model, NULL AS scenario FROM"
            " benchmark_debiased WHERE run_date = ? AND source = 'mlperf' UNION ALL"
            " SELECT DISTINCT source, citation, gpu_id, model_id, scenario FROM"
            " llm_serving_benchmarks WHERE source = 'mlperf' ORDER BY ALL",
            params=[run_date],
        ).pl(),
    )


def mlperf_markdown(data: MethodologyData) -> list[str]:
    """The MLPerf® attribution: what derives from which rounds, unverified, the trademark."""
    if data.mlperf.is_empty():
        return []
    table = rounds_table(data.mlperf)
    return [
        "",
        "## MLPerf® results used",
        "",
        BENCHMARK_NOTICE,
        "",
        NOTICE,
        "",
        "The rounds, divisions, benchmarks and scenarios of the MLPerf® results this run's "
        f"figures derive from, retrieved on {benchmarks_retrieved()} (Training, Inference "
        f"benchmark tables) and {SERVING_RETRIEVED} (serving measurements). Each result's "
        "own line (system, GPUs, result ID, commit) is under the benchmark and serving "
        "tables of the GPU page it measured, and on llm.html.",
        "",
        markdown_table(
            table,
            {
                "suite": "suite",
                "version": "version",
                "division": "division",
                "benchmarks": "benchmarks",
                "scenarios": "scenarios",
                "results": "results",
                "retrieved_from": "retrieved from",
            },
        ),
    ]


def llm_decode_table(benchmarks: pl.DataFrame, gpus: pl.DataFrame) -> pl.DataFrame:
    """Measured batch-1 decode vs the decode model fitted without the GPU, per GPU x model."""
    logo = leave_one_gpu_out(decode_roofline(benchmarks, gpus), "llama.cpp")
    if logo.is_empty():
        return logo
    return (
        logo.group_by("gpu_id", "model_params_b", "quant")
        .agg(
            measured=pl.col("measured").median(),
            predicted=pl.col("predicted").median(),
            ape=pl.col("ape").median() * 100,
            n=pl.len(),
        )
        .sort("model_params_b", "quant", "gpu_id")
    )


def _fmt(value: float, digits: int = 3) -> str:
    """Numbers rounded for reading; the warehouse keeps full precision."""
    return f"{value:.{digits}g}"


def _formatted(frame: pl.DataFrame) -> pl.DataFrame:
    """Floats to 3 significant digits, booleans to yes/no, and a dash for missing values."""
    return frame.with_columns(
        (
            pl.col(c).map_elements(_fmt, return_dtype=pl.Utf8)
            if t.is_float()
            else pl.when(pl.col(c)).then(pl.lit("yes")).otherwise(pl.lit("no"))
            if t == pl.Boolean
            else pl.col(c).cast(pl.Utf8)
        ).alias(c)
        for c, t in frame.schema.items()
    ).with_columns(pl.all().fill_null("–"))


BAND_ORDER = {
    name: i
    for i, name in enumerate([*(band for *_, band in HORIZON_BANDS), "all", AFTER_MINING_BAND])
}


def nowcast_backtest_table(validation: pl.DataFrame) -> pl.DataFrame:
    """The back-test rows of model_validation, one row per candidate x horizon band."""
    rows = validation.filter(pl.col("check_name") == NOWCAST_CHECK)
    if rows.is_empty():
        return pl.DataFrame(
            schema={
                "candidate": pl.Utf8,
                "band": pl.Utf8,
                "median_ape_pct": pl.Float64,
                "coverage80_pct": pl.Float64,
                "coverage95_pct": pl.Float64,
                "n": pl.Int32,
                "chosen": pl.Boolean,
            }  # fmt: skip
        )
    parts = pl.col("subject").str.splitn(", ", 2).struct
    return (
        rows.with_columns(
            candidate=parts.field("field_0"),
            band=parts.field("field_1"),
            chosen=pl.col("detail").str.ends_with("chosen"),
        )
        .pivot(on="metric", index=["candidate", "band", "n", "chosen"], values="value")
        .select(
            "candidate", "band", "median_ape_pct", "coverage80_pct", "coverage95_pct", "n", "chosen"
        )  # fmt: skip
        .with_columns(_order=pl.col("band").replace_strict(BAND_ORDER, default=len(BAND_ORDER)))
        .sort(pl.col("chosen").not_(), "candidate", "_order")
        .drop("_order")
    )


def _block(heading: str, table: str, note: str = "") -> list[str]:
    """The lines of one `### heading` block: its note (if any), then its table."""
    return [f"### {heading}", "", *([note, ""] if note else []), table]


def _constants_block(data: MethodologyData) -> list[str]:
    return _block(
        "Constants: Dettmers' and fitted",
        markdown_table(
            _formatted(data.constants),
            {
                "name": "constant",
                "key": "for",
                "parameter_set": "set",
                "value": "value",
                "ci_low": "95 % low",
                "ci_high": "95 % high",
                "n": "n",
                "used": "applied",
                "detail": "detail",
            },
        ),
    )


def _validation_block(data: MethodologyData) -> list[str]:
    return _block(
        "Validation",
        markdown_table(
            _formatted(
                data.validation.filter(~pl.col("check_name").is_in([NOWCAST_CHECK, HOLDOUT_CHECK]))
            ),
            {
                "check_name": "check",
                "subject": "subject",
                "metric": "metric",
                "value": "value",
                "value_low": "95 % low",
                "value_high": "95 % high",
                "reference_value": "compared with",
                "n": "n",
                "detail": "detail",
            },
        ),
    )


def _nowcast_block(data: MethodologyData) -> list[str]:
    return _block(
        "Prices at the as-of date: the nowcast back-test",
        markdown_table(
            _formatted(nowcast_backtest_table(data.validation)),
            {
                "candidate": "candidate",
                "band": "horizon",
                "median_ape_pct": "median error %",
                "coverage80_pct": "in 80 % interval, %",
                "coverage95_pct": "in 95 % interval, %",
                "n": "predictions",
                "chosen": "chosen",
            },
        ),  # fmt: skip
        "Rolling origin (methodology §4): at cut-offs every 6 months, everything later is "
        "hidden, the drift and volatility are refitted on what came before and each series' "
        "last price is carried to its later monthly prices. Median absolute error of the "
        "carried price, and the share of later prices inside the 80 % and 95 % intervals. "
        "Nothing after the cut-off is seen, so the market index can only extrapolate (a "
        "random walk) here; the candidate marked *chosen* prices the run's stale GPUs and is "
        "chosen on the held-out-GPU back-test below.",
    )


def _llm_decode_block(data: MethodologyData) -> list[str]:
    return _block(
        "LLM decode: measured beside the model fitted without the GPU",
        markdown_table(
            _formatted(data.llm_decode),
            {
                "gpu_id": "GPU",
                "model_params_b": "params (B)",
                "quant": "format",
                "measured": "measured tokens/s",
                "predicted": "predicted",
                "ape": "error %",
                "n": "rows",
            },
        ),  # fmt: skip
        "Batch-1 llama.cpp decode tokens/s as published (median of a GPU's rows per model "
        "and format) and as the decode model predicts them when fitted without that GPU "
        "(methodology §11); the error is the median over the rows.",
    )


def llm_stack_table(
    validation: pl.DataFrame, check_name: str = "llm_decode_logo_stack"
) -> pl.DataFrame:
    """An LLM model's leave-one-GPU-out error per vendor x stack, one row each."""
    rows = validation.filter(pl.col("check_name") == check_name)
    if rows.is_empty():
        return pl.DataFrame(schema={"subject": pl.Utf8, "n": pl.Int32})
    return (
        rows.with_columns(pl.col("value") * 100)
        .pivot(on="metric", index=["subject", "n"], values="value")
        .select("subject", "n", "median_ape", "max_ape", "median_error")
        .sort("subject")
    )


# The columns of a per-stack error table (`llm_stack_table`), decode's and prefill's alike.
_STACK_COLUMNS = {
    "subject": "vendor x stack",
    "n": "measured rows",
    "median_ape": "median |error| %",
    "max_ape": "worst |error| %",
    "median_error": "median error % (+ = model too fast)",
}


def _stack_block(data: MethodologyData, title: str, check_name: str, text: str) -> list[str]:
    """One LLM model's leave-one-GPU-out error per vendor x stack, as a block."""
    table = _formatted(llm_stack_table(data.validation, check_name))
    return _block(title, markdown_table(table, _STACK_COLUMNS), text)


def _llm_stack_block(data: MethodologyData) -> list[str]:
    return _stack_block(
        data,
        "LLM decode: the model's error per vendor x stack",
        "llm_decode_logo_stack",
        "Each GPU's batch-1 llama.cpp decode rows predicted by the decode model fitted "
        "without that GPU, at the most specific level with rows on 3 other GPUs (stack x "
        'vendor first; methodology §11, "LLM calibration"). The cost tables price a '
        "measured rate where one matches the configuration and use this model only "
        "otherwise.",
    )


def _llm_prefill_block(data: MethodologyData) -> list[str]:
    return _stack_block(
        data,
        "LLM prefill: the model's error per vendor x stack",
        "llm_prefill_logo_stack",
        "Each GPU's batch-1 llama.cpp prompt-processing rows (empty cache, every prompt "
        "length) predicted by the prefill model fitted without that GPU: the efficiency on "
        "the int8 tensor rate of its architecture x segment, else its architecture, else "
        'the vendor or segment pooled (methodology §11, "Prefill"). A GPU alone in its '
        "architecture (H100 PCIe, RX 7900 XTX) is then predicted from another one, which "
        "is what an unmeasured architecture gets.",
    )


def _comparison_block(data: MethodologyData) -> list[str]:
    return _block(
        "Our ratios beside public evidence",
        markdown_table(
            _formatted(data.comparison),
            {
                "workload": "workload",
                "gpu": "GPU",
                "compared_with": "compared with",
                "ours": "ours",
                "ours_basis": "ours rests on",
                "mlperf": "MLPerf",
                "mlperf_tables": "MLPerf tables",
                "lambda": "Lambda",
                "lambda_tables": "Lambda tables",
                "dettmers": "Dettmers",
            },
        ),
        "GPU / compared-with ratios: ours from `relative_performance` (and what each side "
        "rests on), MLPerf's and Lambda's computed directly from the raw rows where both GPUs "
        "appear in one table (geometric mean over tables; MLPerf single-node systems per GPU, "
        "Lambda 1-GPU fp16), Dettmers' as stated. Raw ratios are at each GPU's own batch "
        "size; ours are batch-debiased (B292), which raises smaller-memory GPUs, and fitted "
        "over every table, so a pair measured side by side in one source can differ "
        "(model/comparison.py).",
    )


def _independent_block(data: MethodologyData) -> list[str]:
    return _block(
        "Independent evidence: published ratios and their tolerance",
        markdown_table(
            _formatted(independent_table(data.independent)),
            {
                "pair": "GPU / compared with",
                "workload": "compared with our",
                "ours": "ours",
                "their_ratio": "theirs",
                "off_pct": "off %",
                "tolerance_pct": "tolerance ±%",
                "verdict": "verdict",
                "independence": "independence",
                "source": "source",
                "benchmark": "benchmark",
                "as_of": "as of",
            },
        ),  # fmt: skip
        INDEPENDENT_NOTE,
    )


def _holdout_block(data: MethodologyData) -> list[str]:
    return _block(
        "Prices at the as-of date: the market index per market group (held-out GPU)",
        markdown_table(_formatted(holdout_table(data.validation)), HOLDOUT_COLUMNS),
        HOLDOUT_NOTE,
    )


def _serving_block(data: MethodologyData) -> list[str]:
    if data.serving_validation.is_empty():
        return _block("LLM serving: held-out error per engine", "No serving fit in this run.")
    rows = data.serving_validation
    engines = markdown_table(_formatted(serving_engine_table(rows)), ENGINE_COLUMNS)
    gpus = markdown_table(_formatted(serving_gpu_table(rows)), GPU_COLUMNS)
    return _block("LLM serving: held-out error per engine", engines + "\n\n" + gpus, SERVING_NOTE)


# The blocks of the validation Markdown, in order.
_VALIDATION_BLOCKS = (
    _constants_block,
    _validation_block,
    _nowcast_block,
    _holdout_block,
    _llm_decode_block,
    _llm_stack_block,
    _llm_prefill_block,
    _serving_block,
    _comparison_block,
    _independent_block,
)


def render_validation_markdown(data: MethodologyData) -> str:
    """The fitted constants and validation figures (the block shared with the docs)."""
    out = [
        f"Computed by the pipeline from the bundled snapshot (run date {data.run_date}; "
        f"reference GPU {data.reference_gpu})."
    ]
    for block in _VALIDATION_BLOCKS:
        out += ["", *block(data)]
    return "\n".join(out)


def _top3(frame: pl.DataFrame, by: list[str]) -> pl.DataFrame:
    """The top-3 GPUs, in rank order, joined into one string per group."""
    return (
        frame.filter(pl.col("rank") <= 3)
        .sort("rank")
        .group_by(by, maintain_order=True)
        .agg(top3=pl.col("gpu_id").str.join(", "))
    )


def sensitivity_summary(sensitivity: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """How the 1-GPU top 3 moves when one cost parameter varies.

    Returns (per parameter: in how many workload x market x value cases the top-3 set
    differs from the default's, and the largest rank change of any GPU; per value of each
    parameter for 16-bit training: the top 3 there and whether it differs).
    """
    # New and used only: the model's 'mean' market is no price anyone pays (not shown).
    one = sensitivity.filter((pl.col("system_gpus") == 1) & pl.col("market").is_in(["new", "used"]))
    keys = ["parameter", "value", "workload", "market"]
    at_value = _top3(one, keys)
    at_default = _top3(one.with_columns(rank=pl.col("rank_at_default")), keys).rename(
        {"top3": "top3_default"}
    )
    both = at_value.join(at_default, on=keys).with_columns(
        changed=pl.col("top3").str.split(", ").list.sort()
        != pl.col("top3_default").str.split(", ").list.sort()
    )
    per_parameter = (
        both.group_by("parameter")
        .agg(
            cases=pl.len(),
            top3_changed=pl.col("changed").sum(),
            values=pl.col("value").unique().sort().cast(pl.Utf8).str.join(", "),
        )
        .join(
            one.group_by("parameter").agg(max_rank_change=pl.col("rank_change").abs().max()),
            on="parameter",
        )
        .sort("parameter")
    )
    training = (
        both.filter(pl.col("workload") == "training_16bit")
        .sort("parameter", "market", "value")
        .with_columns(changed=pl.when(pl.col("changed")).then(pl.lit("yes")).otherwise(pl.lit("")))
        .select("parameter", "market", "value", "top3", "changed")
    )
    return per_parameter, training


def render_methodology_markdown(data: MethodologyData) -> str:
    """The site's methodology page."""
    out = [
        f"# gpuvalue methodology and validation, {data.run_date}",
        "",
        "How the numbers in the report were made and how far to trust them. The method "
        "follows Tim Dettmers' analysis (debias benchmarks, relative performance, cost of "
        "ownership); where gpuvalue fits a constant from data, both values are shown.",
        "",
        data.from_docs,
        "",
        "## Fitted constants and validation",
        "",
        render_validation_markdown(data),
        "",
        "## Spec conflicts",
        "",
    ]
    if data.spec_conflicts.is_empty():
        out.append("The spec sources agree within tolerance for every catalog GPU.")
    else:
        out += [
            "Where two spec sources disagree beyond the tolerance, the higher-precedence "
            "source (the curated, vendor-cited sheet) is used; the other value is listed here.",
            "",
            markdown_table(
                _formatted(data.spec_conflicts),
                {
                    "gpu_id": "GPU",
                    "field": "field",
                    "chosen_value": "used",
                    "chosen_source": "from",
                    "other_value": "other value",
                    "other_source": "other source",
                    "relative_difference": "rel. difference",
                },
            ),
        ]
    out += ["", "## Sensitivity of the ranking to cost parameters", ""]
    if data.sensitivity.is_empty():
        out.append("No sensitivity table was computed for this run.")
    else:
        per_parameter, training = sensitivity_summary(data.sensitivity)
        out += [
            "One parameter at a time is moved over its range, the others stay at this run's "
            "values; 1-GPU systems, each market (new, used) and workload. A case is one "
            "workload x market x value.",
            "",
            markdown_table(
                per_parameter,
                {
                    "parameter": "parameter",
                    "values": "values tried",
                    "cases": "cases",
                    "top3_changed": "cases where the top 3 changes",
                    "max_rank_change": "largest rank move of any GPU",
                },
            ),
            "",
            "16-bit training, top 3 at each value:",
            "",
            markdown_table(
                _formatted(training),
                {
                    "parameter": "parameter",
                    "market": "market",
                    "value": "value",
                    "top3": "top 3",
                    "changed": "differs from this run's top 3",
                },
            ),
        ]
    out += ["", "## Benchmark rows flagged and left out", ""]
    if data.benchmark_flags.is_empty():
        out.append("No benchmark row is flagged.")
    else:
        out += [
            "Flagged rows stay in `benchmark_results` with their reason; the model ignores them.",
            "",
            markdown_table(
                data.benchmark_flags, {"source": "source", "flag": "flag", "rows": "rows"}
            ),
        ]
    out += mlperf_markdown(data)
    out += [
        "",
        "## Parameters of this run",
        "",
        "```json",
        json.dumps(data.parameters, indent=2, sort_keys=True),
        "```",
        "",
    ]
    return "\n".join(out)


def update_docs(doc: Path, block: str) -> bool:
    """Replace the generated block in `doc`; True when the file changed."""
    text = doc.read_text(encoding="utf-8")
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{doc} has no generated block ({BEGIN} ... {END})")
    new = text[: start + len(BEGIN)] + "\n" + block.strip() + "\n" + text[end:]
    if new != text:
        doc.write_text(new, encoding="utf-8")
    return new != text


def docs_block(doc: Path) -> str:
    """The generated block as the docs currently show it."""
    text = doc.read_text(encoding="utf-8")
    return text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()


def main(argv: list[str] | None = None) -> int:
    """`python -m reports.methodology [--warehouse W] [--update-docs]`."""
    parser = argparse.ArgumentParser(prog="python -m reports.methodology")
    parser.add_argument(
        "--warehouse",
        default=str(default_published_dir() / "gpuvalue.duckdb"),
        help="the published DuckDB file (default: GPUVALUE_PUBLISHED_DIR's, %(default)s)",
    )
    parser.add_argument("--docs", default="docs/methodology.md", type=Path)
    parser.add_argument("--update-docs", action="store_true")
    args = parser.parse_args(argv)
    with open_published(Path(args.warehouse).parent) as con:
        run_date = con.sql("SELECT max(run_date) FROM model_runs").fetchall()[0][0]
        data = load_methodology_data(con, run_date)
    block = render_validation_markdown(data)
    if not args.update_docs:
        print(block)
        return 0
    changed = update_docs(args.docs, block)
    print(f"{args.docs}: {'updated' if changed else 'already current'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
