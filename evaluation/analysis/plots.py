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


def _num(v: float) -> str:
    return f"{v:.1f}"


def _nums(v: np.ndarray) -> list[str]:
    return np.char.mod("%.1f", v).tolist() if len(v) else []


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
    for k, m in enumerate(metrics):
        dx = (k - (len(metrics) - 1) / 2) * spread
        xs = _nums(centres + dx)
        ys = _nums(top + inner_h / 2 - (rows[:, k] / ymax) * (inner_h / 2)) if n else []
        series.append(
            Series(
                m,
                labels.get(m, m),
                SHAPES[k % len(SHAPES)],
                COLORS[k % len(COLORS)],
                tuple(zip(xs, ys, strict=True)),
            )
        )
        signed = np.char.mod("%+.3f", rows[:, k]).tolist() if n else []
        shown.append(
            [t if v else "0" for t, v in zip(signed, rows[:, k].tolist(), strict=True)] if n else []
        )
    points = []
    for i, qid in enumerate(order):
        parts = ", ".join(f"{s.label} {shown[k][i]}" for k, s in enumerate(series))
        text = texts.get(qid, "")
        title = f"{qid} · {text} — {parts}" if text else f"{qid} — {parts}"
        points.append(Point(qid=qid, href=href(qid), title=title, column=str(i)))
    ticks = tuple(
        Tick(_num(y(t)), f"{t:+.2f}".rstrip("0").rstrip(".") if t else "0")
        for t in (-ymax, -ymax / 2, 0, ymax / 2, ymax)
    )
    first = labels.get(metrics[0], metrics[0]) if metrics else ""
    return DifferencePlot(
        width=width,
        height=height,
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
    )
