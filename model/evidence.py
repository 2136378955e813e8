"""What may place a GPU: the provenance rule every benchmark row passes before the model.

A benchmark row places a GPU on the ranking only if the software stack and the host it was
measured on are the ones people actually run the GPU with (docs/methodology.md, "What may
place a GPU"). Two kinds of evidence never do:

- a non-mainstream stack: tinygrad runs its own kernels, and ran both tinybox GPUs at
  roughly 6-29 % of their PyTorch speed, so a tinygrad ratio says how well tinygrad suits a
  GPU rather than how fast the GPU is under the stacks the ranking is for;
- a constrained host: an eGPU enclosure, a single-board computer or a narrow external link
  (PCIe x1 riser, USB4) lowers the figure by the host, not by the GPU.

Such rows stay in `benchmark_results` and `llm_benchmarks` (with their `stack` and `host`)
but are left out of the relative-performance fit, the inference bridges and the LLM decode
and prefill calibration. A GPU left without other evidence falls back to the spec estimator
and is marked estimated. The rule is data (the two sets below) so it reads against the
provenance vocabulary of `sources/benchmarks/provenance.py`. Unknown (NULL) provenance
places: unknown is never guessed, and most older rows predate the columns' sources.
"""

import polars as pl

# Stacks whose figures never place a GPU (a value of provenance.STACKS).
NON_MAINSTREAM_STACKS: frozenset[str] = frozenset({"tinygrad"})
# Hosts whose figures never place a GPU (values of provenance.HOSTS).
CONSTRAINED_HOSTS: frozenset[str] = frozenset({"egpu", "sbc", "external-link"})


def places_gpu(columns: list[str] | tuple[str, ...]) -> pl.Expr:
    """True for a row whose stack and host may place a GPU (NULL provenance places).

    `columns` are the frame's columns: a frame without `stack` or `host` (an old extract,
    a test's hand-made rows) is read as unknown provenance.
    """
    ok = pl.lit(True)
    if "stack" in columns:
        ok = ok & ~pl.col("stack").is_in(sorted(NON_MAINSTREAM_STACKS)).fill_null(False)
    if "host" in columns:
        ok = ok & ~pl.col("host").is_in(sorted(CONSTRAINED_HOSTS)).fill_null(False)
    return ok


def placing_rows(rows: pl.DataFrame) -> pl.DataFrame:
    """The rows that may place a GPU (`places_gpu`)."""
    return rows.filter(places_gpu(rows.columns))


def not_placing(rows: pl.DataFrame) -> int:
    """How many rows the rule leaves out of the placement."""
    return rows.height - placing_rows(rows).height
