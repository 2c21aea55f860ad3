"""The comparison of two runs question by question (DESIGN.md section 5; the paper's
Table 2 and Figure 3) and its CSV.  The figures come from ``comparing.runs_compare``; the
view formats them, the template holds the markup."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET

from annotate.models import Collection
from config.htmx import render_page
from config.ids import request_id
from evaluation import comparing, selectors
from evaluation.analysis.plots import difference_plot
from evaluation.analysis.score_config import COMPARE_METRICS, ScoreConfig
from evaluation.analysis.stats import (
    EXACT_SIGNS,
    PERMUTATIONS,
    Paired,
    format_p,
    format_resampled_p,
    p_text,
)

from .access import score_access, visible_run
from .exports import csv_precision, csv_response
from .forms import ScoreConfigForm, metric_label
from .models import Run
from .score_pages import (
    Undefined,
    checked,
    fmt,
    metric_choices,
    refuses_bad_parameters,
    score_preamble,
    signed,
)

COMPARE_PAGE_SIZE = 100  # rows of the compare page's question table (the plot shows all)
DISAGREE_SHOWN = 20  # questions shown side by side where Q-measure and RR disagree


# -- comparison -----------------------------------------------------------------------------
def _chosen_runs(
    request: HttpRequest, collection: Collection
) -> tuple[list[Run], Run | None, Run | None]:
    """The runs the user may see, and runs A and B from the query string (by default the
    first two); 403 for a run hidden from the user, 404 for one that does not exist."""
    visible = list(selectors.visible_runs(user=request.user, collection=collection))
    by_id = {str(r.pk): r for r in visible}
    a, b = request.GET.get("a"), request.GET.get("b")
    for x in (a, b):
        if x and x not in by_id:
            visible_run(user=request.user, collection=collection, run_id=request_id(x) or 0)
    if not a:
        a = next((k for k in by_id if k != b), None)
    if not b:
        b = next((k for k in by_id if k != a), None)
    return visible, by_id.get(a or ""), by_id.get(b or "")


def _compare_runs(
    collection: Collection, a: Run | None, b: Run | None, config: ScoreConfig
) -> comparing.Comparison | None:
    """The comparison of two different runs; None until two different runs are chosen."""
    if a is None or b is None or a == b:
        return None
    return comparing.runs_compare(collection=collection, run_a=a, run_b=b, config=config)


def _question_link(request: HttpRequest) -> Callable[[str], str]:
    """``href(qid)``: this page showing both ranked lists of question ``qid``."""
    params = request.GET.copy()
    params.pop("question", None)
    base = f"?{params.urlencode()}&question=" if params else "?question="

    def href(qid: str) -> str:
        q = quote(qid, safe="")
        return f"{base}{q}#side-{q}"

    return href


def _test_row(t: Paired, label: str, why: Undefined) -> dict[str, Any]:
    """One metric's row of the tests table: its figures written out, and ``stats`` the
    p-values and the effect size as (text, footnote letter of why it is undefined)."""
    tied = t.up + t.down == 0
    spread = (
        gettext("fewer than two questions")
        if t.n < 2
        else gettext("the difference is the same on every question: no spread, no t statistic")
    )
    figures = [
        (format_p(t.sign_p), t.sign_p, "tied"),
        (format_p(t.wilcoxon_p), t.wilcoxon_p, "tied"),
        (format_p(t.t_p), t.t_p, "spread"),
        (_randomization_text(t), t.randomization_p, "tied"),
        (fmt(t.effect_size), t.effect_size, "spread"),
    ]
    stats = []
    for text, value, kind in figures:
        mark = ""
        if value is None or math.isnan(value):
            reason = str(TIED) if tied or kind == "tied" else spread
            mark = why.mark(reason)
        stats.append((text, mark))
    return {
        "t": t,
        "label": label,
        "mean_a": fmt(t.mean_a),
        "mean_b": fmt(t.mean_b),
        "diff": signed(t.mean_diff),
        "sign_p": stats[0][0],
        "wilcoxon_p": stats[1][0],
        "t_p": stats[2][0],
        "rand_p": stats[3][0],
        "effect": stats[4][0],
        "stats": stats,
    }


TIED = gettext_lazy("every question is tied: there is no difference to test")


def _randomization_text(t: Paired) -> str:
    """The randomization test's p-value: exact up to 16 non-zero differences, else from
    ``PERMUTATIONS`` seeded permutations, "< 1/B" at their floor (as the bootstrap's)."""
    if t.up + t.down > EXACT_SIGNS:
        return format_resampled_p(t.randomization_p, PERMUTATIONS)
    return format_p(t.randomization_p)


def _compare_context(
    request: HttpRequest, collection: Collection, c: comparing.Comparison
) -> dict[str, Any]:
    """What the comparison part of the page shows (all values formatted here, all markup
    in the template)."""
    texts = selectors.question_texts(collection)
    href = _question_link(request)
    labels = {m: metric_label(m) for m in c.metrics}
    focus = request.GET.get("question")
    focus = focus if focus in c.diffs.index else None
    disagree = c.disagree_largest_first()[:DISAGREE_SHOWN]
    shown = [*disagree, *([focus] if focus else [])]
    marks = selectors.marks_of_runs(c.scores, [c.a.name, c.b.name], shown, collection=collection)
    marks_a, marks_b = marks[c.a.name], marks[c.b.name]

    def side(q: str) -> dict[str, Any]:
        return {
            "qid": q,
            "text": texts.get(q, ""),
            "d_q": c.diffs.at[q, c.q_metric],
            "d_rr": c.diffs.at[q, c.rr_metric],
            "marks_a": marks_a.get(q, []),
            "marks_b": marks_b.get(q, []),
        }

    page = Paginator(c.order, COMPARE_PAGE_SIZE).get_page(request.GET.get("page"))
    order = list(page.object_list)
    a_vals = c.per_question_a.loc[order].to_numpy().tolist() if order else []
    b_vals = c.per_question_b.loc[order].to_numpy().tolist() if order else []
    d_vals = c.diffs.loc[order].to_numpy().tolist() if order else []
    rows = []
    for q, va, vb, vd in zip(order, a_vals, b_vals, d_vals, strict=True):
        text = texts.get(q, "")
        rows.append(
            {
                "qid": q,
                "text": text if len(text) <= 60 else text[:59] + "…",
                "href": href(q),
                "cells": [
                    (f"{x:.4f}", f"{y:.4f}", signed(d), "up" if d > 0 else "down" if d < 0 else "")
                    for x, y, d in zip(va, vb, vd, strict=True)
                ],
            }
        )
    why = Undefined()
    return {
        "tests": [_test_row(t, labels[t.metric], why) for t in c.tests],
        "tests_why": why.notes,
        "plot": difference_plot(
            c.diffs,
            c.order,
            labels=labels,
            texts=texts,
            href=href,
            name_a=c.a.name,
            name_b=c.b.name,
        ),
        "n_questions": len(c.diffs),
        "diff_rows": rows,
        "page": page,
        "disagree": [side(q) for q in disagree],
        "disagree_total": len(c.disagree),
        "focus": side(focus) if focus and focus not in disagree else None,
        "q_label": labels[c.q_metric],
        "rr_label": labels[c.rr_metric],
    }


@require_GET
def compare(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = score_access(request, slug)
    runs, a, b = _chosen_runs(request, collection)
    form = ScoreConfigForm.read(request.GET, collection, default_metrics=COMPARE_METRICS)
    config = form.config
    comparison = _compare_runs(collection, a, b, config)
    context = {
        "collection": collection,
        "role": role,
        "runs": runs,
        "config": config,
        "form": form.shown(),
        "metrics": metric_choices(config),
        "a": a,
        "b": b,
        "same_run": a is not None and a == b,
    }
    if comparison:
        context.update(_compare_context(request, collection, comparison))
    return render_page(request, "evaluation/compare.html", context, partial="diff-table")


@require_GET
@refuses_bad_parameters
def compare_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _ = score_access(request, slug)
    _, a, b = _chosen_runs(request, collection)
    config = checked(ScoreConfigForm.read(request.GET, collection, default_metrics=COMPARE_METRICS))
    c = _compare_runs(collection, a, b, config)
    if c is None:
        raise Http404(gettext("Choose two different runs to compare."))
    rows: list[list[object]] = []
    for t in c.tests:
        rows.append(
            [
                "mean",
                t.metric,
                t.mean_a,
                t.mean_b,
                t.mean_diff,
                t.up,
                t.down,
                t.tied,
                p_text(t.sign_p),
                p_text(t.wilcoxon_p),
                p_text(t.t_p),
                p_text(t.randomization_p),
                t.effect_size,
            ]
        )
    for q in c.diffs.index:
        for m in c.metrics:
            rows.append(
                [
                    "question",
                    f"{m}:{q}",
                    c.per_question_a.at[q, m],
                    c.per_question_b.at[q, m],
                    c.diffs.at[q, m],
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                ]
            )
    return csv_response(
        f"{collection.slug}-{c.a.name}-vs-{c.b.name}.csv",
        score_preamble(collection, config, run_a=c.a.name, run_b=c.b.name),
        [
            "row",
            "metric_or_question",
            "a",
            "b",
            "b_minus_a",
            "up",
            "down",
            "tied",
            "sign_p",
            "wilcoxon_p",
            "t_p",
            "randomization_p",
            "effect_size",
        ],
        rows,
        precision=csv_precision(request),
    )
