"""What each page says, as plain objects the templates lay out (issue 13, item 7).

The Markdown report (`templates/report.md.j2`) and the HTML pages (`templates/*.html.j2`)
render the same `Section`/`Table`/`Cell` objects built here from one prepared `Dataset`, so
the report and the site cannot disagree. Cells hold plain text: the HTML templates escape
it (autoescape), the Markdown template keeps pipes and newlines from breaking tables.

One module per page or part of one: `blocks` (cells, tables, sections, number formats),
`asof` (the as-of date, the answer's inputs and their ages), `verdicts`, `changes`, `llm`
(front page and GPU pages), `performance` (a GPU page's two relative-performance values),
`tables` (the "all tables" page) and `front` (the front page's other sections and the
report's order). This package re-exports their public names.
"""

from reports.content.asof import answer_inputs, as_of, first_screen
from reports.content.blocks import (
    Cell,
    Figure,
    Section,
    Table,
    frame_table,
    gpu_href,
    interval,
    money,
    number,
    percent,
)
from reports.content.changes import changes_section
from reports.content.front import (
    charts_section,
    dates,
    freshness_section,
    front_page,
    headline_section,
    intro,
    report_sections,
)
from reports.content.llm import (
    LLM_BASES,
    llm_budget_table,
    llm_cheapest_table,
    llm_gpu_table,
    llm_section,
)
from reports.content.performance import performance_section, performance_table
from reports.content.tables import (
    cloud_section,
    detail_sections,
    method_section,
    relative_section,
    renting_section,
    retail_section,
    unpriced_section,
)
from reports.content.verdicts import short_answer, verdict_cell, verdict_section, verdict_tables

__all__ = [
    "LLM_BASES",
    "Cell",
    "Figure",
    "Section",
    "Table",
    "answer_inputs",
    "as_of",
    "changes_section",
    "charts_section",
    "dates",
    "cloud_section",
    "detail_sections",
    "first_screen",
    "frame_table",
    "freshness_section",
    "front_page",
    "gpu_href",
    "headline_section",
    "interval",
    "intro",
    "llm_budget_table",
    "llm_cheapest_table",
    "llm_gpu_table",
    "llm_section",
    "method_section",
    "money",
    "number",
    "percent",
    "performance_section",
    "performance_table",
    "relative_section",
    "renting_section",
    "report_sections",
    "retail_section",
    "short_answer",
    "unpriced_section",
    "verdict_cell",
    "verdict_section",
    "verdict_tables",
]
