"""The reliability page of a collection (DESIGN.md section 10): curves, the summary of
metrics sorted by discrimination, intervals and all-pairs tests, CSV exports and the
samples file.  Organizers only: it is computed over every run of the collection."""

from __future__ import annotations

import math

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.downloads import csv_download
from config.htmx import render_page
from evaluation import reliability
from evaluation.forms import GAIN_CHOICES, METRIC_CHOICES, metric_label
from evaluation.metrics.reliability.tables import TABLES

from .models import Run

DOWNLOADS = (*TABLES, "samples")


class ReliabilityForm(forms.Form):
    """The page's configuration, read from the query string."""

    metric = forms.ChoiceField(choices=METRIC_CHOICES, required=False)
    gains = forms.ChoiceField(choices=[c for c in GAIN_CHOICES if c[0] != "custom"], required=False)
    trials = forms.IntegerField(
        required=False, min_value=1, max_value=reliability.MAX_TRIALS, label="Trials B"
    )
    subset_size = forms.IntegerField(required=False, min_value=1, label="Subset size c")
    seed = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1)
    download = forms.ChoiceField(choices=[(d, d) for d in DOWNLOADS], required=False)


def _config(form: ReliabilityForm, levels) -> tuple[reliability.ReliabilityConfig, str | None]:
    """The configuration of a valid form, else the defaults and why."""
    default = reliability.ReliabilityConfig()
    if not form.is_bound or not form.is_valid():
        return default, None
    data = form.cleaned_data
    try:
        return reliability.check_reliability_config(
            metric=data["metric"] or default.metric,
            gains=data["gains"] or default.gains,
            trials=data["trials"] or default.trials,
            subset_size=data["subset_size"],
            seed=data["seed"] if data["seed"] is not None else default.seed,
            levels=levels,
        ), None
    except ValueError as e:
        return default, str(e)


def _shown(row: dict) -> dict:
    """``row`` with NaN (a figure that does not exist, e.g. no 5%-swap difference) as
    None, which the template shows as a dash."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}


@require_GET
def collection_reliability(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, Role.ORGANIZER)
    form = ReliabilityForm(request.GET or None)
    levels = list(collection.levels.order_by("order").values_list("code", flat=True))
    config, error = _config(form, levels)
    if request.GET.get("download") and (form.errors or error):
        # a file asked for with an invalid parameter: refused with the reason, never a
        # file of the defaults' figures (the page shows the errors instead)
        reason = error or "; ".join(
            f"{field}: {m}" for field, messages in form.errors.items() for m in messages
        )
        return render(request, "400.html", {"reason": f"Invalid parameters: {reason}"}, status=400)
    runs = list(Run.objects.visible_to(request.user, collection).order_by("name"))
    download = form.cleaned_data.get("download") if form.is_bound and form.is_valid() else ""
    if download == "samples":
        try:
            pieces = reliability.samples_csv(collection=collection, config=config)
        except ValueError:
            pass  # too few questions or too large a subset: the page says why
        else:
            return csv_download(
                pieces, f"{collection.slug}-reliability-samples.csv", streaming=True
            )
    page = reliability.collection_reliability(collection=collection, runs=runs, config=config)
    if download and page.report is not None:
        return csv_download(
            TABLES[download](page.report), f"{collection.slug}-reliability-{download}.csv"
        )
    return render_page(
        request,
        "evaluation/reliability.html",
        {
            "collection": collection,
            "role": role,
            "form": form
            if form.is_bound
            else ReliabilityForm(
                initial={
                    "metric": config.metric,
                    "gains": config.gains,
                    "trials": config.trials,
                    "seed": config.seed,
                }
            ),
            "error": error,
            "config": config,
            "page": page,
            "metric_label": metric_label(config.metric),
            "curves": reliability.curves(page.detail) if page.detail else [],
            "summary": [
                _shown({**row, "label": metric_label(row["metric"])}) for row in page.summary
            ],
            "taus": [_shown(t) for t in page.taus],
            "runs": reliability.run_rows(page),
            "pairs": [_shown(p) for p in reliability.pair_rows(page)],
            "downloads": DOWNLOADS,
        },
        partial="results",
    )
