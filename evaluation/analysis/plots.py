"""Geometry of the per-question difference plot (the paper's Figure 3): questions on x,
ordered by their difference, difference B - A on y, one marker shape per metric.  This
module computes coordinates and labels only; the SVG is written by the template
(``evaluation/compare.html``, partial ``difference-plot``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

# Marker of the k-th metric: a small filled dot first, then hollow shapes that are larger,
# so that equal differences show one marker inside the other instead of hiding it.
SHAPES = ("dot", "square", "triangle", "diamond", "cross")
COLORS = ("#2457c5", "#b3261e", "#1f7a3a", "#7a5b00", "#6b4fa0")


@dataclass(frozen=True)
class Series:
    """One metric: its marker, and its marks left to right as (x, y) strings."""

    metric: str
    label: str
    shape: str
    color: str
    marks: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Point:
    """One question: its link and its hover title, which names the question and its
    differences."""

    qid: str
    href: str
    title: str
    column: str


@dataclass(frozen=True)
class Tick:
    y: str
    label: str


@dataclass(frozen=True)
class Label:
    """A text of the plot: where it is drawn and how it is anchored (``start`` or ``end``,
    or ``rotate`` the angle of a question id turned to fit)."""

    x: str
    y: str
    anchor: str
    text: str
    rotate: int = 0


# the question ids on the x axis: up to this many questions, one id under each column
MAX_ID_TICKS = 30
ID_CHARS = 16  # an id longer than this is cut, with an ellipsis
CHAR_W = 6.5  # the width of a character at font-size 11, a little generous
MARK_R = 10  # the largest marker's half-size: a label closer than this touches it


def _corner_label(
    text: str, *, y: float, left: float, right: float, prefer: str, marks: np.ndarray
) -> Label:
    """``text`` in the plot's left or right corner at baseline ``y``: ``prefer``'s side
    unless a mark lies under it, then the other side if that one is clear (the first
    columns of the plot are its lowest differences, the last its highest).  ``marks``:
    the drawn marks' (x, y), one row each."""
    w = len(text) * 7.0 + 4
    mx, my = marks[:, 0], marks[:, 1]
    level = (y - 14 - MARK_R <= my) & (my <= y + 4 + MARK_R)

    def hits(side: str) -> int:
        x0, x1 = (left + 6, left + 6 + w) if side == "left" else (right - 6 - w, right - 6)
        return int(np.count_nonzero(level & (x0 - MARK_R <= mx) & (mx <= x1 + MARK_R)))

    other = "right" if prefer == "left" else "left"
    side = prefer if hits(prefer) <= hits(other) else other
    if side == "left":
        return Label(_num(left + 6), _num(y), "start", text)
    return Label(_num(right - 6), _num(y), "end", text)


def _id_ticks(
    order: Sequence[str], centres: np.ndarray, *, slot: float, bottom: float
) -> tuple[tuple[Label, ...], int]:
    """The question ids under their columns when there are at most ``MAX_ID_TICKS``:
    level when the longest fits its column, else turned 45 degrees; and the height the
    turned ids add below the axis (0 when level or none)."""
    if not 0 < len(order) <= MAX_ID_TICKS:
        return (), 0
    ids = [q if len(q) <= ID_CHARS else q[: ID_CHARS - 1] + "…" for q in order]
    longest = max(len(q) for q in ids) * CHAR_W
    if longest <= slot - 4:
        return tuple(
            Label(_num(x), _num(bottom + 14), "middle", q)
            for x, q in zip(centres, ids, strict=True)
        ), 0
    ticks = tuple(
        Label(_num(x + 4), _num(bottom + 10), "end", q, rotate=-45)
        for x, q in zip(centres, ids, strict=True)
    )
    return ticks, int(longest * 0.71) + 4


@dataclass(frozen=True)
class DifferencePlot:
    width: int
    height: int
    left: int
    top: int
    right: int
    bottom: int
    inner_w: int
    inner_h: int
    zero: str
    middle_y: str
    middle_x: str
    n: int
    ticks: tuple[Tick, ...]
    series: tuple[Series, ...]
    points: tuple[Point, ...]
    x_label: str
    y_label: str
    # "B better" above, "A better" below: in the corner no mark is under
    better_b: Label
    better_a: Label
    # the question ids under the columns (when there are few questions)
    x_ticks: tuple[Label, ...] = ()
    x_label_y: str = ""


def _num(v: float) -> str:
    return f"{v:.1f}"


def _nums(v: np.ndarray) -> list[str]:
    return [f"{x:.1f}" for x in v.tolist()]


def difference_plot(
    diffs: pd.DataFrame,
    order: Sequence[str],
    *,
    labels: Mapping[str, str],
    texts: Mapping[str, str],
    href: Callable[[str], str],
    name_a: str,
    name_b: str,
    width: int = 960,
    height: int = 340,
) -> DifferencePlot:
    """``diffs``: one row per question (index = question id), one column per metric, the
    difference B - A; ``order``: the question ids left to right.  Returns what the
    template draws: the frame, the zero line, y ticks, axis labels, one series of marks
    per metric (the marks of one question spread sideways when there is room), and per
    question a link (``href(qid)``) with a title naming the question and its differences,
    drawn as a column of the plot's height (column i spans x = i..i+1 of a 0..n box)."""
    n = len(order)
    left, right_pad, top, bottom_pad = 64, 16, 16, 44
    inner_w, inner_h = width - left - right_pad, height - top - bottom_pad
    metrics = list(diffs.columns)
    rows = diffs.loc[list(order), metrics].to_numpy(dtype=float) if n else None
    ymax = max(0.1, float(abs(rows).max())) if n else 0.1
    ymax = min(1.0, round(ymax + 0.05, 1)) if ymax < 1 else 1.0
    slot = inner_w / n if n else inner_w

    def y(v: float) -> float:
        return top + inner_h / 2 - (v / ymax) * (inner_h / 2)

    spread = min(5.0, slot / (2 * len(metrics))) if slot >= 8 and len(metrics) > 1 else 0.0
    centres = left + slot * (np.arange(n) + 0.5)
    series = []
    shown = []  # per metric, each question's difference as the title writes it
    drawn_x: list[str] = []  # every mark's x and y as drawn (written rounded)
    drawn_y: list[str] = []
    for k, m in enumerate(metrics):
        dx = (k - (len(metrics) - 1) / 2) * spread
        xs = _nums(centres + dx)
        ys = _nums(top + inner_h / 2 - (rows[:, k] / ymax) * (inner_h / 2)) if n else []
        drawn_x += xs
        drawn_y += ys
        label = labels.get(m, m)
        series.append(
            Series(
                m,
                label,
                SHAPES[k % len(SHAPES)],
                COLORS[k % len(COLORS)],
                tuple(zip(xs, ys, strict=True)),
            )
        )
        shown.append(
            [f"{label} {v:+.3f}" if v else f"{label} 0" for v in rows[:, k].tolist()] if n else []
        )
    points = []
    for i, (qid, *each) in enumerate(zip(order, *shown, strict=True)):
        parts = ", ".join(each)
        text = texts.get(qid, "")
        title = f"{qid} · {text} — {parts}" if text else f"{qid} — {parts}"
        points.append(Point(qid=qid, href=href(qid), title=title, column=str(i)))
    ticks = tuple(
        Tick(_num(y(t)), f"{t:+.2f}".rstrip("0").rstrip(".") if t else "0")
        for t in (-ymax, -ymax / 2, 0, ymax / 2, ymax)
    )
    first = labels.get(metrics[0], metrics[0]) if metrics else ""
    bottom = height - bottom_pad
    x_ticks, extra = _id_ticks(order, centres, slot=slot, bottom=bottom)
    drawn = np.column_stack([np.array(drawn_x, dtype=float), np.array(drawn_y, dtype=float)])
    corners = {"left": left, "right": width - right_pad, "marks": drawn}
    return DifferencePlot(
        width=width,
        height=height + extra,
        left=left,
        top=top,
        right=width - right_pad,
        bottom=height - bottom_pad,
        inner_w=inner_w,
        inner_h=inner_h,
        zero=_num(y(0)),
        middle_y=_num(top + inner_h / 2),
        middle_x=_num(left + inner_w / 2),
        n=n,
        ticks=ticks,
        series=tuple(series),
        points=tuple(points),
        x_label=f"{n} question{'s' if n != 1 else ''}, ordered by {first} difference",
        y_label=f"{name_b} − {name_a}",
        better_b=_corner_label(f"↑ {name_b} better", y=top + 12, prefer="left", **corners),
        better_a=_corner_label(f"↓ {name_a} better", y=bottom - 6, prefer="right", **corners),
        x_ticks=x_ticks,
        x_label_y=_num(height + extra - 12),
    )
