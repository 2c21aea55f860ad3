"""Does assessor disagreement change the conclusions?  Runs scored against each layer
and gold (evaluation/layer_scores.py); organizers only, since the page shows the layers."""

from __future__ import annotations

import math
from collections.abc import Sequence

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotate.models import Collection, Role
from annotate.permissions import require_role
from evaluation.metrics.agreement import RankingChange

from .exports import csv_precision, csv_response
from .forms import ScoreConfigForm, metric_label
from .layer_scores import GOLD, layer_scores
from .models import Run
from .score_pages import (
    Undefined,
    checked,
    metric_choices,
    refuses_bad_parameters,
    score_preamble,
)


def _layer_scores(
    request: HttpRequest, slug: str
) -> tuple[Collection, ScoreConfigForm, Sequence[Run]]:
    """The collection (organizers only), the score form of the query string and the runs."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    runs = list(Run.objects.active().filter(collection=collection).order_by("name"))
    return collection, ScoreConfigForm.read(request.GET, collection), runs


def _judgments_label(name: str) -> str:
    """A set of judgments as the page names it: ``gold``, ``layer 1``... in the page's
    language (the CSV keeps the names)."""
    if name == GOLD:
        return _("gold")
    position = name.removeprefix("layer ")
    return _("layer %(n)s") % {"n": position} if position.isdigit() else name


def _why_no_ranking(change: RankingChange, why: Undefined) -> str:
    """The footnote letter of why a comparison has no tau or rho (or "" when it has)."""
    if not (math.isnan(change.kendall_tau) or math.isnan(change.spearman_rho)):
        return ""
    if change.n_runs < 2:
        return why.mark(_("fewer than two runs: no ranking to compare"))
    return why.mark(_("one of the judgments gives every run the same mean: no ranking"))


@require_GET
def collection_layer_scores(request: HttpRequest, slug: str) -> HttpResponse:
    collection, form, runs = _layer_scores(request, slug)
    why = Undefined()
    config = form.config
    result = layer_scores(collection, runs, config)
    means = [
        {
            "name": name,
            "label": _judgments_label(name),
            "rows": [
                {"run": run, "values": [result.means[name].at[run, m] for m in config.metrics]}
                for run in result.means[name].index
            ],
        }
        for name in result.names
    ]
    return TemplateResponse(
        request,
        "evaluation/layer_scores.html",
        {
            "collection": collection,
            "config": config,
            "form": form.shown(),
            "metrics": metric_choices(config),
            "result": result,
            "means": means,
            "comparisons": [
                {
                    "metric": metric_label(c.metric),
                    "key": c.metric,
                    "a": c.a,
                    "b": c.b,
                    "a_label": _judgments_label(c.a),
                    "b_label": _judgments_label(c.b),
                    "change": c.change,
                    "why": _why_no_ranking(c.change, why),
                }
                for c in result.comparisons
            ],
            "comparisons_why": why,
        },
    )


@require_GET
@refuses_bad_parameters
def collection_layer_scores_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, form, runs = _layer_scores(request, slug)
    config = checked(form)  # an invalid parameter is refused (400), not replaced
    result = layer_scores(collection, runs, config)
    return csv_response(
        f"{collection.slug}-layer-scores.csv",
        score_preamble(
            collection,
            config,
            questions=result.n_questions,
            left_out_waiting_for_adjudication=result.n_waiting,
            left_out_layers_open=result.n_open,
        ),
        ["judgments", "run", "question_id", *config.metrics],
        result.rows(),
        precision=csv_precision(request),
    )
