"""Units in table headers and cells (issue 25 item 11): no benchmark figure without its unit.

A column whose rows share one unit says it in its header; a column of figures in different
units (a GPU's benchmark rows: images/s, tokens/s, trainings/h, ...) says it in each cell.
"""

from reports.charts import WORKLOAD_TITLES


def with_unit(text: str, unit: str | None) -> str:
    """'1234.5 images/s' ('' stays '': no unit without a figure)."""
    return f"{text} {unit}" if text and unit else text


def relative_headers(reference_gpu: str) -> dict[str, str]:
    """Workload column -> header: relative performance is a multiple of the reference GPU."""
    return {w: f"{title} (× {reference_gpu})" for w, title in WORKLOAD_TITLES.items()}
