"""Product line of a GPU: consumer card, workstation card or data-center part.

model/segments.py splits consumer from professional (street vs list-priced parts, for the
spec estimator and the nowcast's drift). Two price questions need the finer split:

- how widely listings of one GPU spread on one day (model/price_uncertainty.py pools that
  per product line x market);
- how long a card is sold new after its successor (model/market_consistency.py): consumer
  cards go end-of-life within months of the next generation, while workstation and data-
  center parts are sold new for years beside it (H100 beside B200).

From the catalog name only, like segments.py: consumer = GeForce, Radeon RX, Arc and the
TITANs (sold through the same retail channel and retired like consumer cards);
workstation = Quadro, RTX A/Ada/PRO, Radeon (AI) PRO and Arc Pro boards and the machines
sold whole for local AI (DGX Spark, Mac Studio, Ryzen AI Max PCs); everything else (Tesla, A100,
H100, L40S, B200, Instinct, ...) is data center.
"""

import polars as pl

from model.segments import CONSUMER_NAMES

LINES = ("consumer", "workstation", "data_center")
TITAN = r"(?i)\btitan\b"
WORKSTATION_NAMES = (
    r"(?i)\b(quadro|radeon pro|radeon ai pro|arc pro|rtx a\d+|rtx pro|rtx \d+ ada)\b"
)
# Machines sold whole for local AI (DGX Spark, Mac Studio, Ryzen AI Max mini PCs): sold
# new for years beside their successors and priced like workstations, not retired within
# months like consumer cards.
SYSTEM_NAMES = r"(?i)\b(dgx spark|mac studio|ryzen ai max)"


def product_line_expr(name: str = "name") -> pl.Expr:
    """'consumer', 'workstation' or 'data_center' from the GPU's catalog name."""
    text = pl.col(name).cast(pl.Utf8).fill_null("")
    return (
        pl.when(text.str.contains(SYSTEM_NAMES))
        .then(pl.lit("workstation"))
        .when(text.str.contains(CONSUMER_NAMES) | text.str.contains(TITAN))
        .then(pl.lit("consumer"))
        .when(text.str.contains(WORKSTATION_NAMES))
        .then(pl.lit("workstation"))
        .otherwise(pl.lit("data_center"))
    )


def sold_whole_expr(name: str = "name") -> pl.Expr:
    """True for a machine sold only whole (DGX Spark, Mac Studio, Ryzen AI Max PCs).

    Its price is a system's (memory, storage, CPU, box and margin), set by list prices that
    change a few times a year, so the market index gives it its own segment
    (model/market_index.py) instead of a GPU board index.
    """
    return pl.col(name).cast(pl.Utf8).fill_null("").str.contains(SYSTEM_NAMES)


def product_lines(gpus: pl.DataFrame) -> pl.DataFrame:
    """gpu_id -> line (data_center when the catalog frame has no names, as segments do)."""
    if "name" not in gpus.columns:
        return gpus.select("gpu_id", line=pl.lit("data_center"))
    return gpus.select("gpu_id", line=product_line_expr())
