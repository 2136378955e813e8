"""Point labels that never overlap: each label is placed right or left of its point, or not at all.

Vega-Lite has no label placement that avoids collisions, so the chart's scales are fixed
here (explicit domains) and each candidate label's box is estimated in pixels: labels are
accepted greedily, most important first, where the box stays inside the plot and touches
no accepted label, clear of the other points where it can be. A label that fits nowhere is
left out (its point keeps its tooltip in the interactive view).
"""

import math
from dataclasses import dataclass

import polars as pl

CHAR_PX = 5.6  # average width of a character at font size 10 (Helvetica/Arial digits, a-z)
LINE_PX = 11.0  # a label's height at font size 10
POINT_PX = 4.0  # half the width of a size-45 point
DX, DY = 5.0, -6.0  # the text's offset from its point (as the chart's text marks)


def nice_top(value: float) -> float:
    """`value` rounded up to a half power of ten (0.37 -> 0.4, 183 -> 200): an axis' end."""
    if value <= 0:
        return 1.0
    step = 10 ** math.floor(math.log10(value)) / 2
    return math.ceil(value / step) * step


@dataclass(frozen=True)
class Plot:
    """The plot area in pixels and its scales' domains (x on a log scale or linear)."""

    width: float
    height: float
    x_domain: tuple[float, float]
    y_domain: tuple[float, float]
    x_log: bool = True

    def px(self, x: float, y: float) -> tuple[float, float]:
        """The pixel position of a data point (y grows downwards, as in SVG)."""
        lo, hi = self.x_domain
        if self.x_log:
            fx = (math.log(x) - math.log(lo)) / (math.log(hi) - math.log(lo))
        else:
            fx = (x - lo) / (hi - lo)
        ylo, yhi = self.y_domain
        return fx * self.width, self.height - (y - ylo) / (yhi - ylo) * self.height


Box = tuple[float, float, float, float]  # left, top, right, bottom


def _overlaps(a: Box, b: Box) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def label_box(x: float, y: float, text: str, side: str) -> Box:
    """The box of `text` drawn at (DX, DY) right of, or (-DX, DY) left of, pixel (x, y)."""
    width = len(text) * CHAR_PX
    left = x + DX if side == "right" else x - DX - width
    middle = y + DY
    return left, middle - LINE_PX / 2 - 2, left + width, middle + LINE_PX / 2


def place_labels(
    frame: pl.DataFrame, x: str, y: str, label: str, candidate: str, plot: Plot, limit: int = 8
) -> pl.DataFrame:
    """`frame` with `label_side` ('right', 'left' or null) for at most `limit` labels.

    Candidates (`candidate` true) are tried in the frame's order (put the most important
    first); every point of the frame is avoided where a side clear of points exists.
    """
    points = [plot.px(a, b) for a, b in zip(frame[x], frame[y], strict=True)]
    obstacles: list[Box] = [
        (px - POINT_PX, py - POINT_PX, px + POINT_PX, py + POINT_PX) for px, py in points
    ]
    placed: list[Box] = []
    sides: list[str | None] = [None] * frame.height
    for i, (text, wanted) in enumerate(zip(frame[label], frame[candidate], strict=True)):
        if not wanted or len(placed) >= limit:
            continue
        boxes = {side: label_box(*points[i], text, side) for side in ("right", "left")}
        fits = {
            side: box[0] >= 0
            and box[2] <= plot.width
            and box[1] >= -4
            and box[3] <= plot.height
            and not any(_overlaps(box, p) for p in placed)
            for side, box in boxes.items()
        }
        # Clear of every other point where possible; else over points but never over
        # another label (a label over a point is legible, two labels over each other not).
        clear = [
            side
            for side, box in boxes.items()
            if fits[side] and not any(_overlaps(box, o) for j, o in enumerate(obstacles) if j != i)
        ]
        choice = (clear or [side for side in boxes if fits[side]] or [None])[0]
        if choice is not None:
            placed.append(boxes[choice])
            sides[i] = choice
    return frame.with_columns(label_side=pl.Series(sides, dtype=pl.Utf8))
