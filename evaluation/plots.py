"""Geometry of the per-question difference plot (the paper's Figure 3), drawn as SVG by
the template: questions on x, difference B - A on y, one marker shape per metric."""

from __future__ import annotations

import pandas as pd

SHAPES = ("circle", "square", "triangle", "diamond", "cross")
COLORS = ("#2457c5", "#b3261e", "#1f7a3a", "#7a5b00", "#6b4fa0")


def difference_plot(diffs: pd.DataFrame, labels: dict[str, str], *, width: int = 960,
                    height: int = 320, pad: int = 40) -> dict:
    """``diffs``: one row per question (index = question id), one column per metric.
    Returns what the template draws: the frame, the zero line, ticks and the points."""
    n = len(diffs)
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    ymax = max(0.1, float(diffs.abs().max().max()) if n else 0.1)
    ymax = min(1.0, round(ymax + 0.05, 1)) if ymax < 1 else 1.0

    def x(i: int) -> float:
        return pad + (inner_w * (i + 0.5) / n if n else inner_w / 2)

    def y(v: float) -> float:
        return pad + inner_h / 2 - (v / ymax) * (inner_h / 2)

    series = []
    for k, metric in enumerate(diffs.columns):
        points = [{"x": round(x(i), 1), "y": round(y(float(v)), 1), "qid": str(qid),
                   "value": float(v)} for i, (qid, v) in enumerate(diffs[metric].items())]
        series.append({"metric": metric, "label": labels.get(metric, metric),
                       "shape": SHAPES[k % len(SHAPES)], "color": COLORS[k % len(COLORS)],
                       "points": points})
    ticks = [{"y": round(y(t), 1), "label": f"{t:+.1f}" if t else "0"}
             for t in (-ymax, -ymax / 2, 0, ymax / 2, ymax)]
    return {"width": width, "height": height, "pad": pad, "zero": round(y(0), 1),
            "right": width - pad, "bottom": height - pad, "ticks": ticks, "series": series,
            "n": n}


def _marker(shape: str, x: float, y: float) -> str:
    if shape == "circle":
        return f'<circle cx="{x}" cy="{y}" r="4" fill-opacity=".75"/>'
    if shape == "square":
        return (f'<rect x="{x - 3.5:.1f}" y="{y - 3.5:.1f}" width="7" height="7" fill="none" '
                'stroke-width="1.5"/>')
    if shape == "triangle":
        return f'<path d="M{x} {y} m0 -5 l4.5 8 l-9 0 z" fill-opacity=".6"/>'
    if shape == "diamond":
        return f'<path d="M{x} {y} m0 -5 l5 5 l-5 5 l-5 -5 z" fill-opacity=".6"/>'
    return f'<path d="M{x} {y} m-4 -4 l8 8 m0 -8 l-8 8" stroke-width="1.5"/>'


def markers_svg(plot: dict, href) -> str:
    """The plot's markers as SVG (built here, not in the template: thousands of points),
    each a link (``href(qid)``) with a hover title; every text is escaped."""
    from django.utils.html import escape
    out = []
    for s in plot["series"]:
        out.append(f'<g class="series" data-metric="{escape(s["metric"])}" '
                   f'fill="{s["color"]}" stroke="{s["color"]}">')
        label = escape(s["label"])
        for p in s["points"]:
            qid = escape(p["qid"])
            out.append(f'<a href="{escape(href(p["qid"]))}" data-qid="{qid}">'
                       f'{_marker(s["shape"], p["x"], p["y"])}'
                       f'<title>{qid} · {label} {p["value"]:.3f}</title></a>')
        out.append("</g>")
    return "".join(out)
