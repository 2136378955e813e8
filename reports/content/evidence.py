"""What a GPU's numbers rest on, and what software supports it (its page, issue 22 step 8)."""

import polars as pl

from reports.charts import WORKLOAD_TITLES
from reports.content.blocks import Cell, Section, Table

BASIS_WORDS = {
    "measured": "measured",
    "validated_estimate": "estimated (validated error)",
    "not_validated": "estimated, not validated: never a pick",
}


def evidence_table(rows: pl.DataFrame) -> Table:
    """Per workload: basis, stacks, independent sources, results, eligibility, caveat."""
    records = rows.sort("workload").iter_rows(named=True) if rows.height else []
    return Table(
        (
            "workload",
            "rests on",
            "stacks",
            "independent sources",
            "results",
            "may be a pick",
            "caveat",
        ),
        [
            (
                Cell(WORKLOAD_TITLES.get(r["workload"], r["workload"])),
                Cell(BASIS_WORDS.get(r["basis"], r["basis"]), strong=not r["eligible"]),
                Cell(r["stacks"] or "none"),
                Cell(str(r["n_sources"])),
                Cell(str(r["n_results"])),
                Cell("yes" if r["eligible"] else "no"),
                Cell(r["caveat"]),
            )
            for r in records
        ],
        title="What its numbers rest on",
        empty="No relative performance for this GPU.",
    )


def software_table(rows: pl.DataFrame) -> Table:
    """The cited software-support statements for one GPU (gpu_software_support)."""
    records = rows.sort("stack").iter_rows(named=True) if rows.height else []
    return Table(
        ("stack", "status", "since", "what the source says", "source", "as of"),
        [
            (
                Cell(r["stack"]),
                Cell(r["status"], strong=r["status"] != "supported"),
                Cell(r["since"] or ""),
                Cell(r["detail"]),
                Cell("source", r["source_url"]),
                Cell(str(r["as_of"])),
            )
            for r in records
        ],
        title="Software support",
        empty="No statement on file: the GPU is on its vendor's current PyTorch support list, "
        "or we found no dated statement.",
    )


def evidence_section(basis: pl.DataFrame, support: pl.DataFrame) -> Section:
    """The GPU page's section: the evidence per workload and the software caveats."""
    # In workload order by name (the order listed), so the caveat quoted is the first
    # workload's whatever order the rows came in (docs/methodology.md, Ties).
    flagged = basis.filter(~pl.col("eligible")).sort("workload") if basis.height else basis
    paragraphs = []
    if flagged.height:
        paragraphs.append(
            "**Not a pick** for "
            + ", ".join(WORKLOAD_TITLES.get(w, w) for w in sorted(flagged["workload"]))
            + ": its value there is not validated, so it stays in the tables but never in "
            "the headline, the top-3 lists or a verdict. "
            + flagged["caveat"][0][0].upper()
            + flagged["caveat"][0][1:]
            + "."
        )
    return Section(
        "evidence",
        "What its numbers rest on",
        paragraphs,
        [evidence_table(basis), software_table(support)],
    )
