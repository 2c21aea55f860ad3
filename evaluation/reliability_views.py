"""The reliability page of a collection (DESIGN.md section 10): curves, the summary of
metrics sorted by discrimination, intervals and all-pairs tests; and its downloads (the
four CSV tables and the samples file), one URL per file.  Organizers only: it is
computed over every run of the collection."""

from __future__ import annotations

import math

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET

from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.downloads import csv_download
from config.htmx import render_page
from evaluation import reliability_report
from evaluation.forms import GAIN_CHOICES, METRIC_CHOICES, metric_label
from evaluation.metrics.reliability.tables import TABLES
from evaluation.reliability_report import ReliabilityConfig

from .exports import csv_precision
from .models import Run

DOWNLOADS = (*TABLES, "samples")


class ReliabilityForm(forms.Form):
    """The page's and the downloads' configuration, read from the query string."""

    metric = forms.ChoiceField(choices=METRIC_CHOICES, required=False)
    gains = forms.ChoiceField(choices=[c for c in GAIN_CHOICES if c[0] != "custom"], required=False)
    trials = forms.IntegerField(
        required=False, min_value=1, max_value=reliability_report.MAX_TRIALS, label="Trials B"
    )
    subset_size = forms.IntegerField(required=False, min_value=1, label="Subset size c")
    seed = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1)

    def config(self, levels: list[str]) -> tuple[ReliabilityConfig, str | None]:
        """The configuration of a valid form for a collection of these level codes, else
        the defaults and why (None: the form has errors of its own, or is empty)."""
        default = ReliabilityConfig()
        if not self.is_bound or not self.is_valid():
            return default, None
        data = self.cleaned_data
        try:
            return reliability_report.check_reliability_config(
                metric=data["metric"] or default.metric,
                gains=data["gains"] or default.gains,
                trials=data["trials"] or default.trials,
                subset_size=data["subset_size"],
                seed=data["seed"] if data["seed"] is not None else default.seed,
                levels=levels,
            ), None
        except ValueError as e:
            return default, str(e)

    def shown(self, config: ReliabilityConfig) -> ReliabilityForm:
        """The form to show: this one as sent, or for an empty query the defaults."""
        if self.is_bound:
            return self
        return ReliabilityForm(
            initial={
                "metric": config.metric,
                "gains": config.gains,
                "trials": config.trials,
                "seed": config.seed,
            }
        )


def _shown(row: dict) -> dict:
    """``row`` with NaN (a figure that does not exist, e.g. no 5%-swap difference) as
    None, which the template shows as a dash."""
    return {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}


def _levels(collection: Collection) -> list[str]:
    return list(collection.levels.order_by("order").values_list("code", flat=True))


@require_GET
def collection_reliability(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, Role.ORGANIZER)
    if request.GET.get("download"):
        return _moved_download(request, collection)
    form = ReliabilityForm(request.GET or None)
    config, error = form.config(_levels(collection))
    runs = list(Run.objects.visible_to(request.user, collection).order_by("name"))
    page = reliability_report.collection_reliability(
        collection=collection, runs=runs, config=config
    )
    return _page(request, collection, role, form.shown(config), config, error, page)


def _moved_download(request: HttpRequest, collection: Collection) -> HttpResponse:
    """The downloads were once this page with ``?download=<kind>``: such a link goes to
    the file's own URL with the rest of its configuration (an unknown kind is refused as
    it was, 400 with the reason)."""
    query = request.GET.copy()
    kind = query.pop("download")[-1]
    if kind not in DOWNLOADS:
        reason = f"download: Select a valid choice. {kind} is not one of the available choices."
        return render(request, "400.html", {"reason": f"Invalid parameters: {reason}"}, status=400)
    target = reverse("evaluation:reliability-download", args=[collection.slug, kind])
    return redirect(target + (f"?{query.urlencode()}" if query else ""))


@require_GET
def collection_reliability_download(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    """One file of the page (a table of ``TABLES`` or the samples file) for the
    configuration of the query string.  An invalid configuration is refused (400) with
    the reason, never a file of the defaults' figures; a file that cannot be computed
    (too few runs or questions, too large a subset) gives the page, which says why."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, Role.ORGANIZER)
    if kind not in DOWNLOADS:
        raise Http404("no such reliability download")
    form = ReliabilityForm(request.GET or None)
    config, error = form.config(_levels(collection))
    if form.errors or error:
        reason = error or "; ".join(
            f"{field}: {m}" for field, messages in form.errors.items() for m in messages
        )
        return render(request, "400.html", {"reason": f"Invalid parameters: {reason}"}, status=400)
    if kind == "samples":
        try:
            pieces = reliability_report.samples_csv(collection=collection, config=config)
        except ValueError:
            pass  # too few questions or too large a subset: the page says why
        else:
            return csv_download(
                pieces, f"{collection.slug}-reliability-samples.csv", streaming=True
            )
    runs = list(Run.objects.visible_to(request.user, collection).order_by("name"))
    page = reliability_report.collection_reliability(
        collection=collection, runs=runs, config=config
    )
    if kind != "samples" and page.report is not None:
        return csv_download(
            TABLES[kind](page.report, precision=csv_precision(request)),
            f"{collection.slug}-reliability-{kind}.csv",
        )
    return _page(request, collection, role, form.shown(config), config, error, page)


def _page(
    request: HttpRequest,
    collection: Collection,
    role: str,
    form: ReliabilityForm,
    config: ReliabilityConfig,
    error: str | None,
    page: reliability_report.Reliability,
) -> HttpResponse:
    """The page (its results alone for htmx) of a computed ``page``."""
    return render_page(
        request,
        "evaluation/reliability.html",
        {
            "collection": collection,
            "role": role,
            "form": form,
            "error": error,
            "config": config,
            "page": page,
            "metric_label": metric_label(config.metric),
            "curves": reliability_report.curves(page.detail) if page.detail else [],
            "summary": [
                _shown({**row, "label": metric_label(row["metric"])}) for row in page.summary
            ],
            "taus": [_shown(t) for t in page.taus],
            "runs": reliability_report.run_rows(page),
            "pairs": [_shown(p) for p in reliability_report.pair_rows(page)],
            "downloads": DOWNLOADS,
        },
        partial="results",
    )
