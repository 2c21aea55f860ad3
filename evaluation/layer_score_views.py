"""Does assessor disagreement change the conclusions?  Runs scored against each layer
and gold (evaluation/layer_scores.py); organizers only, since the page shows the layers."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.views.decorators.http import require_GET

from annotate.models import Collection, Role
from annotate.permissions import require_role
from evaluation.forms import metric_label

from .exports import csv_response
from .layer_scores import layer_scores
from .models import Run
from .views import _config, _csv_config, _preamble, refuses_bad_parameters


def _layer_scores(request: HttpRequest, slug: str, *, download: bool = False):
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    if download:  # an invalid parameter is refused (400), not replaced by the default
        config, form, error = _csv_config(request, collection), None, None
    else:
        config, form, error = _config(request, collection)
    runs = list(Run.objects.active().filter(collection=collection).order_by("name"))
    return collection, config, form, error, layer_scores(collection, runs, config)


@require_GET
def collection_layer_scores(request: HttpRequest, slug: str) -> HttpResponse:
    collection, config, form, error, result = _layer_scores(request, slug)
    means = [
        {
            "name": name,
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
            "form": form,
            "error": error,
            "metrics": [(m, metric_label(m)) for m in config.metrics],
            "result": result,
            "means": means,
            "comparisons": [
                {"metric": metric_label(c.metric), "a": c.a, "b": c.b, "change": c.change}
                for c in result.comparisons
            ],
        },
    )


@require_GET
@refuses_bad_parameters
def collection_layer_scores_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, config, _, _, result = _layer_scores(request, slug, download=True)
    return csv_response(
        f"{collection.slug}-layer-scores.csv",
        _preamble(
            collection,
            config,
            questions=result.n_questions,
            left_out_waiting_for_adjudication=result.n_waiting,
            left_out_layers_open=result.n_open,
        ),
        ["judgments", "run", "question_id", *config.metrics],
        result.rows(),
    )
