"""The reliability page of a collection (DESIGN.md section 10): curves, the summary of
metrics sorted by discrimination, intervals and all-pairs tests; and its downloads (the
four CSV tables and the samples file), one URL per file.  Organizers only: it is
computed over every run of the collection.

A report is computed by a background job (``reliability_jobs``) and kept: the page shows
the one computed for its configuration, the judgments and runs as they stand, or the bar
of the job computing it (every organizer who asks sees the same job), or a "Compute"
button; a small report (a few runs, questions and trials) is computed at once by the same
job function in the request."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from django import forms
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_GET, require_POST

from annotate.models import Collection, Role
from annotate.permissions import require_role
from config.downloads import csv_download
from config.htmx import redirect_to, render_page
from evaluation import reliability_jobs, reliability_report
from evaluation.forms import GAIN_CHOICES, METRIC_CHOICES, metric_label
from evaluation.metrics.reliability.tables import TABLES
from evaluation.reliability_report import ReliabilityConfig
from jobs.models import Conflict, Job, JobStatus
from jobs.services import JobRefused, job_start

from .exports import csv_precision
from .models import Run
from .score_pages import T_NOTE, Undefined

DOWNLOADS = (*TABLES, "samples")
# the download links' words, by file
DOWNLOAD_LABELS = {
    "summary": gettext_lazy("summary (CSV)"),
    "curves": gettext_lazy("curves (CSV)"),
    "pairs": gettext_lazy("pairs (CSV)"),
    "runs": gettext_lazy("runs (CSV)"),
    "samples": gettext_lazy("samples file (CSV)"),
}


class ReliabilityForm(forms.Form):
    """The page's and the downloads' configuration, read from the query string."""

    metric = forms.ChoiceField(choices=METRIC_CHOICES, required=False)
    gains = forms.ChoiceField(choices=[c for c in GAIN_CHOICES if c[0] != "custom"], required=False)
    trials = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=reliability_report.MAX_TRIALS,
        label=gettext_lazy("Trials B"),
    )
    subset_size = forms.IntegerField(
        required=False, min_value=1, label=gettext_lazy("Subset size c")
    )
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


# why a figure of the reliability page does not exist, by its key (the page writes a
# footnote letter beside the dash and the reason under the table)
NOT_COMPUTED = gettext_lazy("not computed")
WHY = {
    "swap_threshold": gettext_lazy("no difference bin keeps the swap rate at or below 5%"),
    "swap_relative": gettext_lazy("no difference bin keeps the swap rate at or below 5%"),
    "bootstrap_difference": gettext_lazy(
        "no run pair is significant by the bootstrap (or B × 5% < 1)"
    ),
    "swap_share": gettext_lazy("no comparison of run pairs"),
    "significant_share": gettext_lazy("no run pair"),
    "ties_at_5pct_minority": gettext_lazy("the minority rate stays above 5% at every fuzziness"),
    "tau": gettext_lazy("a ranking in which every run ties"),
    "p_t": gettext_lazy("the pair's difference is the same on every question: no t statistic"),
    "p_holm": gettext_lazy("the pair's difference is the same on every question: no t statistic"),
    "asl": gettext_lazy("the pair's difference is the same on every question"),
    "p_tukey": NOT_COMPUTED,
}


def _shown(row: dict, why: Undefined | None = None) -> dict:
    """``row`` with NaN (a figure that does not exist, e.g. no 5%-swap difference) as
    None, which the template shows as a dash; with ``why``, ``row["why"]`` the footnote
    letter of each such figure (``WHY``)."""
    out = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
    if why is not None:
        out["why"] = {
            k: why.mark(str(WHY.get(k, NOT_COMPUTED)))
            for k, v in out.items()
            if v is None and k in WHY
        }
    return out


def _levels(collection: Collection) -> list[str]:
    return list(collection.levels.order_by("order").values_list("code", flat=True))


# a report of at most this much work (run pairs x questions x trials) is computed in the
# request (well under a second); a larger one waits for "Compute" and a worker
INLINE_WORK = 2_000_000


@dataclass
class _Report:
    """What the page knows of the report of its configuration: the report itself, or the
    job computing it, or neither (and then whether asking computes it at once)."""

    config: ReliabilityConfig
    runs: list[Run]
    key: str
    page: reliability_report.Reliability | None = None
    job: Job | None = None
    small: bool = False


def _report(
    request: HttpRequest,
    collection: Collection,
    config: ReliabilityConfig,
    *,
    tables: bool = False,
    asked: bool = False,
) -> _Report:
    """The report of ``config``: kept, being computed, or (small) computed now; ``asked``:
    the person asked for it (Compute), so a job started here is in their list of jobs."""
    runs = list(Run.objects.visible_to(request.user, collection).order_by("name"))
    key = reliability_report.reliability_key(collection=collection, runs=runs, config=config)
    work = reliability_report.reliability_work(
        runs=len(runs), questions=collection.questions.count(), config=config
    )
    r = _Report(config, runs, key, small=work <= INLINE_WORK)
    if found := reliability_jobs.finished_report(collection, key, report=tables):
        r.page = found[1]
    else:
        r.job = reliability_jobs.active_report(collection, key)
    if r.page is None and r.job is None and r.small:
        # small enough for the request: the job function, at once
        try:
            job = _start(request, collection, r, listed=asked)
        except JobRefused:
            return r  # the page offers to compute it, and then says why it cannot
        if job.status == JobStatus.SUCCEEDED and (
            found := reliability_jobs.finished_report(collection, job.result["key"], report=tables)
        ):
            r.page = found[1]
    return r


def _start(request: HttpRequest, collection: Collection, r: _Report, *, listed: bool = True) -> Job:
    """The job computing ``r``'s report (``listed`` False: the page computes a small
    report on its own when it is read, and the person's list of jobs does not show it)."""
    return job_start(
        kind=reliability_jobs.KIND,
        label=gettext("Reliability of %(name)s (%(metric)s, gains %(gains)s, B = %(trials)s)")
        % {
            "name": collection.name,
            "metric": metric_label(r.config.metric),
            "gains": r.config.gains,
            "trials": r.config.trials,
        },
        func="evaluation.reliability_jobs.compute_report",
        user=request.user,
        collection_id=collection.pk,
        conflict=Conflict.SHARED,
        params={
            "key": r.key,
            "config": dataclasses.asdict(r.config),
            "runs": [run.pk for run in r.runs],
        },
        inline=r.small,
        listed=listed,
    )


@require_GET
def collection_reliability(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, Role.ORGANIZER)
    if request.GET.get("download"):
        return _moved_download(request, collection)
    form = ReliabilityForm(request.GET or None)
    config, error = form.config(_levels(collection))
    return _page(
        request,
        collection,
        role,
        form.shown(config),
        config,
        error,
        _report(request, collection, config),
    )


@require_POST
def collection_reliability_compute(request: HttpRequest, slug: str) -> HttpResponse:
    """Compute the report of the configuration the form sends, in a job (unless it is
    computed already, or being computed: then the page shows it), and show the page, which
    follows the job."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, Role.ORGANIZER)
    form = ReliabilityForm(request.POST)
    config, error = form.config(_levels(collection))
    if form.errors or error:
        return _page(request, collection, role, form, config, error, None, status=400)
    r = _report(request, collection, config, asked=True)
    refused = ""
    if r.page is None and r.job is None:
        try:
            _start(request, collection, r)
        except JobRefused as e:
            refused = str(e)
    if refused:
        return _page(request, collection, role, form, config, refused, r, status=409)
    target = reverse("evaluation:reliability", args=[collection.slug])
    return redirect_to(request, f"{target}?{reliability_jobs.config_query(config)}")


def _moved_download(request: HttpRequest, collection: Collection) -> HttpResponse:
    """The downloads were once this page with ``?download=<kind>``: such a link goes to
    the file's own URL with the rest of its configuration (an unknown kind is refused as
    it was, 400 with the reason)."""
    query = request.GET.copy()
    kind = query.pop("download")[-1]
    if kind not in DOWNLOADS:
        reason = "download: " + gettext(
            "Select a valid choice. %(value)s is not one of the available choices."
        ) % {"value": kind}
        return _bad_parameters(request, reason)
    target = reverse("evaluation:reliability-download", args=[collection.slug, kind])
    return redirect(target + (f"?{query.urlencode()}" if query else ""))


def _bad_parameters(request: HttpRequest, reason: str) -> HttpResponse:
    text = gettext("Invalid parameters: %(reason)s") % {"reason": reason}
    return render(request, "400.html", {"reason": text}, status=400)


@require_GET
def collection_reliability_download(request: HttpRequest, slug: str, kind: str) -> HttpResponse:
    """One file of the page (a table of ``TABLES`` or the samples file) for the
    configuration of the query string.  An invalid configuration is refused (400) with
    the reason, never a file of the defaults' figures; a file that cannot be computed
    (too few runs or questions, too large a subset) gives the page, which says why."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, Role.ORGANIZER)
    if kind not in DOWNLOADS:
        raise Http404(gettext("No such reliability download."))
    form = ReliabilityForm(request.GET or None)
    config, error = form.config(_levels(collection))
    if form.errors or error:
        reason = error or "; ".join(
            f"{field}: {m}" for field, messages in form.errors.items() for m in messages
        )
        return _bad_parameters(request, reason)
    if kind == "samples":
        try:
            pieces = reliability_report.samples_csv(collection=collection, config=config)
        except ValueError:
            pass  # too few questions or too large a subset: the page says why
        else:
            return csv_download(
                pieces, f"{collection.slug}-reliability-samples.csv", streaming=True
            )
    r = _report(request, collection, config, tables=True)
    if kind != "samples" and r.page is not None and r.page.report is not None:
        return csv_download(
            TABLES[kind](r.page.report, precision=csv_precision(request)),
            f"{collection.slug}-reliability-{kind}.csv",
        )
    # not computed yet (or it cannot be: the page says why)
    return _page(request, collection, role, form.shown(config), config, error, r)


def _page(
    request: HttpRequest,
    collection: Collection,
    role: str,
    form: ReliabilityForm,
    config: ReliabilityConfig,
    error: str | None,
    r: _Report | None,
    *,
    status: int = 200,
) -> HttpResponse:
    """The page (its results alone for htmx): the report of ``r``, or the bar of the job
    computing it, or the button that computes it."""
    page = r.page if r else None
    job = r.job if r else None
    runs = reliability_report.run_rows(page) if page else []
    summary_why, tau_why, pair_why = Undefined(), Undefined(), Undefined()
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
            "job": job,
            "job_mine": job is not None and job.user_id == request.user.pk,
            "query": reliability_jobs.config_query(config),
            "metric_label": metric_label(config.metric),
            "curves": (
                reliability_report.curves(page.detail, trials=page.samples.trials)
                if page and page.detail
                else []
            ),
            "summary": [
                _shown({**row, "label": metric_label(row["metric"])}, summary_why)
                for row in (page.summary if page else [])
            ],
            "summary_why": summary_why,
            "taus": [_shown(t, tau_why) for t in (page.taus if page else [])],
            "taus_why": tau_why,
            "runs": runs,
            "t_note": T_NOTE if any(row["t_passes"] for row in runs) else "",
            "pairs": (
                [_shown(p, pair_why) for p in reliability_report.pair_rows(page)] if page else []
            ),
            "pairs_why": pair_why,
            "downloads": [(d, DOWNLOAD_LABELS.get(d, d)) for d in DOWNLOADS],
        },
        partial="results",
        status=status,
    )
