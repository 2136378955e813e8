"""Charts never invent data (issue 25 item 6): lines break at gaps, labels never collide.

Pure tests on synthetic frames (no pipeline build).
"""

import datetime as dt
import itertools

import polars as pl
import pytest

from reports.charts.labels import Plot, label_box, place_labels
from reports.charts.prices import price_history_chart, price_history_data
from reports.charts.sensitivity import sensitivity_data

STEP_DAYS = {"1w": 7}


def gapped_history() -> pl.DataFrame:
    """Daily used prices for 2022 Q1, nothing for two years, then 2024 Q2, then one day."""
    first = [dt.date(2022, 1, 3) + dt.timedelta(days=i) for i in range(90)]
    second = [dt.date(2024, 4, 1) + dt.timedelta(days=i) for i in range(60)]
    days = [*first, *second, dt.date(2024, 12, 2)]
    return pl.DataFrame(
        {
            "gpu_id": "g",
            "market": "used",
            "day": days,
            "price_usd": [900.0 + i for i in range(len(days))],
            "n_observations": 1,
        }
    )


CURRENT = pl.DataFrame(
    {
        "gpu_id": ["g"],
        "market": ["used"],
        "price_usd": [850.0],
        "price_low": [800.0],
        "price_high": [900.0],
        "price_method": ["observed"],
        "age_days": [5],
    }
)


def line_segments(rows: list[dict]) -> list[tuple[dt.date, dt.date]]:
    """The segments a line drawn per (gpu, market, segment) joins: consecutive points."""
    out = []
    key = lambda r: (r["gpu_id"], r["market"], r["segment"])  # noqa: E731
    for _, run in itertools.groupby(sorted(rows, key=lambda r: (*key(r), r["day"])), key=key):
        days = [dt.datetime.fromisoformat(r["day"]).date() for r in run]
        out += list(itertools.pairwise(days))
    return out


def test_a_two_year_gap_breaks_the_price_line():
    data = price_history_data(gapped_history(), CURRENT, ["g"], dt.date(2025, 1, 1))
    history = data.filter(pl.col("kind") == "history")
    assert set(history["step"]) == {"1w"}
    runs = history.group_by("segment").agg(pl.col("day").min(), n=pl.len()).sort("day")
    assert runs["n"].to_list() == [13, 9, 1]  # Q1 2022, Q2 2024, a lone week (a dot)
    # In the spec: no drawn segment spans more than one week, so none spans the gap.
    spec = price_history_chart(gapped_history(), CURRENT, ["g"], dt.date(2025, 1, 1)).to_dict()
    rows = [r for r in next(iter(spec["datasets"].values())) if r["kind"] == "history"]
    spans = [(b - a).days for a, b in line_segments(rows)]
    assert spans and max(spans) == STEP_DAYS["1w"]
    line = next(
        layer for layer in spec["spec"]["layer"] if layer["mark"]["type"] == "line"
    )  # the history line: one per run, straight
    assert line["encoding"]["detail"]["field"] == "segment"
    assert "interpolate" not in line["mark"]
    assert spec["title"] == "Price history: weekly median and price at the as-of date"


def test_the_title_names_a_coarser_step_when_the_history_is_long():
    days = pl.date_range(dt.date(2000, 1, 1), dt.date(2025, 12, 31), eager=True)
    history = pl.DataFrame(
        {
            "gpu_id": [f"g{i}" for i in range(4) for _ in days],
            "market": "new",
            "day": [d for _ in range(4) for d in days],
            "price_usd": 1.0,
            "n_observations": 1,
        }
    )
    gpus = [f"g{i}" for i in range(4)]
    spec = price_history_chart(history, CURRENT.clear(), gpus, dt.date(2026, 1, 1)).to_dict()
    assert "monthly median" in spec["title"]


def test_a_gpu_leaving_the_top_8_breaks_its_sensitivity_line():
    ranks = {0.05: 8, 0.15: 12, 0.35: 6, 0.6: 3}  # a top-3 pick at 60 %, out of the top 8 at 15 %
    rows = [
        {"gpu_id": gpu, "value": v, "rank": r}
        for v, r in ranks.items()
        for gpu, r in (("a", r), ("leader", 1))
    ]
    frame = pl.DataFrame(rows).with_columns(
        workload=pl.lit("training_16bit"),
        system_gpus=1,
        market=pl.lit("used"),
        parameter=pl.lit("utilization"),
    )
    out = sensitivity_data(frame).filter(pl.col("gpu_id") == "a").sort("value")
    assert out["value"].to_list() == [0.05, 0.35, 0.6]
    assert out["segment"].to_list()[0] != out["segment"].to_list()[1]
    assert out["segment"].to_list()[1] == out["segment"].to_list()[2]


def test_labels_never_overlap_each_other():
    # A crowded cluster, as the LLM chart's cheap 8B systems.
    cost = [1600 + 37 * i for i in range(40)] + [5000, 30000, 33000]
    tps = [30 + (i * 7) % 60 for i in range(40)] + [130, 140, 180]
    frame = pl.DataFrame(
        {"cost": cost, "tps": tps, "label": [f"rtx-{i:04d}-super" for i in range(43)]}
    ).with_columns(candidate=pl.lit(True))
    plot = Plot(420, 280, (1200.0, 45000.0), (0.0, 200.0))
    out = place_labels(frame, "cost", "tps", "label", "candidate", plot, limit=8)
    placed = out.filter(pl.col("label_side").is_not_null())
    assert 1 <= placed.height <= 8
    boxes = [
        label_box(*plot.px(r["cost"], r["tps"]), r["label"], r["label_side"])
        for r in placed.iter_rows(named=True)
    ]
    for a, b in itertools.combinations(boxes, 2):
        assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    for box in boxes:
        assert 0 <= box[0] and box[2] <= plot.width  # never past the plot's edge
    # A lone point's label covers no other point (a clear side exists).
    lone = placed.filter(pl.col("cost") >= 5000)
    for r in lone.iter_rows(named=True):
        box = label_box(*plot.px(r["cost"], r["tps"]), r["label"], r["label_side"])
        for c, t in zip(cost, tps, strict=True):
            x, y = plot.px(c, t)
            assert (c, t) == (r["cost"], r["tps"]) or not (
                box[0] < x < box[2] and box[1] < y < box[3]
            )
    # The isolated fast systems are labelled.
    assert {"rtx-0041-super", "rtx-0042-super"} <= set(placed["label"])


@pytest.mark.parametrize("side", ["right", "left"])
def test_label_box_is_on_its_side_of_the_point(side):
    box = label_box(100.0, 50.0, "abc", side)
    assert (box[0] > 100) if side == "right" else (box[2] < 100)
