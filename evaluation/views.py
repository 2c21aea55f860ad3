"""Evaluation pages: runs, scores, comparisons.  Metrics come from the engine through
``evaluation/services.py``; the views only choose, sort and page what to show."""

from __future__ import annotations

import math
from importlib.metadata import version

import pandas as pd
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from annotate.models import Collection, Question, Role
from annotate.permissions import require_role
from annotate.selectors import synset_labels
from evaluation import services
from evaluation.forms import GAIN_CHOICES, RunUploadForm, ScoreConfigForm, metric_label
from evaluation.metrics import InputError
from evaluation.plots import difference_plot, markers_svg
from evaluation.stats import disagreements, paired, rank_correlations

from .exports import csv_response
from .models import Run

APP_VERSION = version("qasynset")


# -- helpers ------------------------------------------------------------------------------
def _score_access(request: HttpRequest, slug: str) -> tuple[Collection, str]:
    """Scores are for organizers and participants; assessors see none (403)."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request.user, collection, Role.ORGANIZER, Role.PARTICIPANT)
    return collection, role


def _visible_run(request: HttpRequest, collection: Collection, run_id: int) -> Run:
    run = Run.objects.visible_to(request.user, collection).filter(pk=run_id).first()
    if run is None:
        if Run.objects.filter(collection=collection, pk=run_id).exists():
            raise PermissionDenied("This run is not visible to you.")
        raise Http404("No such run")
    return run


def _config(request: HttpRequest, collection: Collection,
            default_metrics=services.DEFAULT_METRICS):
    """The score configuration from the query string (invalid parts fall back to the
    defaults, with the form's errors shown)."""
    form = ScoreConfigForm(request.GET or None)
    levels = list(collection.levels.order_by("order").values_list("code", flat=True))
    metrics, gains, beta, rbp_p = list(default_metrics), "default", 1.0, 0.5
    error = None
    if form.is_bound and form.is_valid():
        metrics = form.cleaned_data["metric"] or metrics
        gains = form.gain_spec()
        beta = form.cleaned_data["beta"] if form.cleaned_data["beta"] is not None else 1.0
        rbp_p = form.cleaned_data["rbp_p"] if form.cleaned_data["rbp_p"] is not None else 0.5
    try:
        config = services.check_config(metrics=metrics, gains=gains, beta=beta, rbp_p=rbp_p,
                                       levels=levels)
    except ValueError as e:
        error = str(e)
        config = services.check_config(metrics=default_metrics, gains="default", beta=1.0,
                                       rbp_p=0.5, levels=levels)
    # the form shows what the page was computed with
    shown = {"metric": list(config.metrics), "beta": config.beta, "rbp_p": config.rbp_p,
             "gains": config.gains if config.gains in dict(GAIN_CHOICES) else "custom",
             "custom_gains": "" if config.gains in dict(GAIN_CHOICES) else config.gains}
    if form.is_bound and form.errors:
        return config, form, error
    return config, ScoreConfigForm(initial=shown), error


def _preamble(collection: Collection, config, **extra) -> dict:
    levels = list(collection.levels.order_by("order").values_list("code", "gain"))
    return {
        "collection": collection.slug,
        "gains": config.gains if config.gains != "default" else
        ",".join(f"{c}={g:g}" for c, g in levels),
        "beta": config.beta, "rbp_p": config.rbp_p, "matching": collection.matching_mode,
        "judgments_version": collection.judgment_version,
        "judgments_changed_at": collection.judgments_changed_at.isoformat()
        if collection.judgments_changed_at else "never",
        "app_version": APP_VERSION, **extra,
    }


def _labels(metrics) -> dict[str, str]:
    return {m: metric_label(m) for m in metrics}


def _fmt(v) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.4f}"


# -- runs page ----------------------------------------------------------------------------
@require_GET
def my_runs(request: HttpRequest) -> HttpResponse:
    runs = (Run.objects.visible_to(request.user).select_related("collection", "owner")
            .order_by("collection__name", "name"))
    return TemplateResponse(request, "evaluation/my_runs.html", {"runs": runs})


@require_GET
def run_list(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = _score_access(request, slug)
    config, form, error = _config(request, collection)
    runs = list(Run.objects.visible_to(request.user, collection).select_related("owner")
                .order_by("name"))
    scores = services.score_runs(collection, runs, config) if runs else None
    stats = services.run_answer_stats(runs)
    unjudged = services.unjudged_counts(runs)
    means = scores.means() if scores else pd.DataFrame()
    rows = [{"run": r, "means": [means.loc[r.name, m] for m in config.metrics],
             "questions": stats.get(r.pk, {}).get("questions", 0),
             "unjudged": unjudged.get(r.pk, 0)} for r in runs]
    sort = request.GET.get("sort", "")
    if sort in config.metrics:
        i = config.metrics.index(sort)
        rows.sort(key=lambda row: -row["means"][i])
    elif sort == "name":
        rows.sort(key=lambda row: row["run"].name)
    context = {
        "collection": collection, "role": role, "config": config, "form": form, "error": error,
        "metrics": [(m, metric_label(m)) for m in config.metrics], "rows": rows, "sort": sort,
        "judged_questions": scores.marked.judgments.nq if scores else 0,
        "can_upload": role == Role.ORGANIZER or collection.open_for_submissions,
        "can_compare": len(runs) >= 2,
    }
    return TemplateResponse(request, "evaluation/run_list.html", context)


@require_http_methods(["GET", "POST"])
def run_upload(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role = _score_access(request, slug)
    if role != Role.ORGANIZER and not collection.open_for_submissions:
        raise PermissionDenied("This collection is not open for submissions.")
    template = "evaluation/run_upload.html"
    issues = []
    if request.method == "POST":
        form = RunUploadForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                run = services.run_import(
                    collection=collection, owner=request.user, name=form.cleaned_data["name"],
                    data=upload.read(), filename=upload.name,
                    description=form.cleaned_data["description"],
                    fmt=form.cleaned_data["format"] or None)
            except InputError as e:
                issues = e.issues
            else:
                messages.success(request, f"Run {run.name!r} uploaded: "
                                          f"{run.answers.count()} answers.")
                url = reverse("evaluation:run-detail", args=[collection.slug, run.pk])
                if request.htmx:
                    return HttpResponseClientRedirect(url)
                return redirect(url)
    else:
        form = RunUploadForm()
    if request.htmx:
        template += "#upload-form"
    return TemplateResponse(request, template, {
        "collection": collection, "form": form, "issues": issues,
        "max_mb": settings.RUN_UPLOAD_MAX_MB})


# -- one run ------------------------------------------------------------------------------
def _question_table(collection: Collection, scores, run: Run) -> pd.DataFrame:
    """Per judged question: L (answers of the run), R (synsets) and each metric."""
    pq = scores.per_question[run.name].copy()
    lengths = dict(run.answers.values("question__qid").annotate(n=Count("id"))
                   .values_list("question__qid", "n"))
    synsets = dict(Question.objects.filter(collection=collection).with_counts()
                   .values_list("qid", "n_synsets"))
    pq.insert(0, "R", [synsets.get(q, 0) for q in pq.index])
    pq.insert(0, "L", [lengths.get(q, 0) for q in pq.index])
    return pq


def _marks_by_question(scores, run_name: str, qids, *, collection: Collection
                       ) -> dict[str, list[dict]]:
    """Per question: its marked answers, each with the synset's number and, for an imported
    synset, its id in the file (``label``)."""
    f = scores.marked.frame()
    f = f[(f["run"] == run_name) & (f["question_id"].isin(list(qids)))]
    labels = synset_labels(collection, qids) if len(f) else {}
    out: dict[str, list[dict]] = {}
    for r in f.itertuples():
        out.setdefault(r.question_id, []).append({
            "rank": r.rank, "answer": r.answer, "synset": r.synset, "level": r.level,
            "label": labels.get((r.question_id, str(r.synset)), ""), "status": r.status})
    return out


@require_GET
def run_detail(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection, role = _score_access(request, slug)
    run = _visible_run(request, collection, run_id)
    config, form, error = _config(request, collection)
    scores = services.score_runs(collection, [run], config)
    table = _question_table(collection, scores, run)
    texts = dict(Question.objects.filter(collection=collection).values_list("qid", "text"))
    search = request.GET.get("q", "").strip()
    if search:
        s = search.casefold()
        keep = [q for q in table.index if s in q.casefold() or s in texts.get(q, "").casefold()]
        table = table.loc[keep]
    if request.GET.get("below") in {"1", "on"}:
        table = table[table[config.metrics[0]] < 1.0]
    sort = request.GET.get("sort", "")
    if sort in table.columns:
        table = table.sort_values(sort, ascending=request.GET.get("order") == "asc",
                                  kind="stable")
    page = Paginator(list(table.index), 50).get_page(request.GET.get("page"))
    marks = _marks_by_question(scores, run.name, page.object_list, collection=collection)
    rows = [{"qid": q, "text": texts.get(q, ""), "L": int(table.at[q, "L"]),
             "R": int(table.at[q, "R"]),
             "values": [table.at[q, m] for m in config.metrics], "marks": marks.get(q, [])}
            for q in page.object_list]
    means = scores.means().loc[run.name]
    unjudged = services.unjudged_answers(run)
    context = {
        "collection": collection, "role": role, "run": run, "config": config, "form": form,
        "error": error, "metrics": [(m, metric_label(m)) for m in config.metrics],
        "means": [means[m] for m in config.metrics], "rows": rows, "page": page,
        "judged": len(scores.per_question[run.name]), "shown": len(table),
        "not_judged": scores.unknown[run.name], "unjudged": unjudged,
        "pool": services.pool_counts(unjudged),
        "is_organizer": role == Role.ORGANIZER, "sort": sort, "search": search,
    }
    template = "evaluation/run_detail.html"
    if request.htmx and request.htmx.target == "question-table":
        template += "#question-table"
    return TemplateResponse(request, template, context)


@require_POST
def run_pool(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request.user, collection, Role.ORGANIZER)
    run = get_object_or_404(Run, collection=collection, pk=run_id)
    added = services.run_pool(run=run, by=request.user)
    messages.success(request, f"{added} unjudged answer(s) of {run.name} sent to the "
                              "assessors' pool.")
    return redirect("evaluation:run-detail", collection.slug, run.pk)


@require_GET
def run_scores_csv(request: HttpRequest, slug: str, run_id: int) -> HttpResponse:
    collection, _ = _score_access(request, slug)
    run = _visible_run(request, collection, run_id)
    config, _, _ = _config(request, collection)
    scores = services.score_runs(collection, [run], config)
    table = _question_table(collection, scores, run)
    means = scores.means().loc[run.name]
    rows = [[run.name, q, int(table.at[q, "L"]), int(table.at[q, "R"]),
             *[float(table.at[q, m]) for m in config.metrics]] for q in table.index]
    rows.append([run.name, "all", "", "", *[float(means[m]) for m in config.metrics]])
    return csv_response(f"{collection.slug}-{run.name}-scores.csv",
                        _preamble(collection, config, run=run.name),
                        ["run", "question_id", "L", "R", *config.metrics], rows)


# -- comparison -----------------------------------------------------------------------------
def _comparison(request: HttpRequest, slug: str):
    collection, role = _score_access(request, slug)
    visible = list(Run.objects.visible_to(request.user, collection).order_by("name"))
    by_id = {str(r.pk): r for r in visible}
    a, b = request.GET.get("a"), request.GET.get("b")
    if (a and a not in by_id) or (b and b not in by_id):
        if Run.objects.filter(collection=collection, pk__in=[x for x in (a, b) if x
                                                             and x.isdigit()]).exists():
            raise PermissionDenied("This run is not visible to you.")
        raise Http404("No such run")
    if not a or not b:
        a = a or (str(visible[0].pk) if visible else None)
        b = b or (str(visible[1].pk) if len(visible) > 1 else None)
    config, form, error = _config(request, collection, default_metrics=("q_measure", "rr"))
    run_a, run_b = by_id.get(a), by_id.get(b)
    if run_a is None or run_b is None or run_a == run_b:
        return collection, role, visible, config, form, error, None
    scores = services.score_runs(collection, [run_a, run_b], config)
    pa, pb = scores.per_question[run_a.name], scores.per_question[run_b.name]
    diffs = pb - pa
    tests = [paired(m, pa[m], pb[m]) for m in config.metrics]
    result = {"a": run_a, "b": run_b, "scores": scores, "pa": pa, "pb": pb, "diffs": diffs,
              "tests": tests}
    return collection, role, visible, config, form, error, result


@require_GET
def compare(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role, visible, config, form, error, result = _comparison(request, slug)
    context = {"collection": collection, "role": role, "runs": visible, "config": config,
               "form": form, "error": error, "metrics": [(m, metric_label(m))
                                                         for m in config.metrics]}
    if result:
        diffs, pa, pb = result["diffs"], result["pa"], result["pb"]
        texts = dict(Question.objects.filter(collection=collection).values_list("qid", "text"))
        params = request.GET.copy()

        def href(qid: str) -> str:
            params["question"] = qid
            return f"?{params.urlencode()}#side-{qid}"

        plot = difference_plot(diffs, _labels(config.metrics))
        q_metric = "q_measure" if "q_measure" in config.metrics else config.metrics[0]
        rr_metric = "rr" if "rr" in config.metrics else config.metrics[-1]
        disagree = list(disagreements(diffs[rr_metric], diffs[q_metric])) if (
            q_metric != rr_metric) else []
        focus = request.GET.get("question")
        focus = focus if focus in diffs.index else None
        shown = [*disagree, *([focus] if focus else [])]
        marks_a = _marks_by_question(result["scores"], result["a"].name, shown,
                                     collection=collection)
        marks_b = _marks_by_question(result["scores"], result["b"].name, shown,
                                     collection=collection)

        def side(q):
            return {"qid": q, "text": texts.get(q, ""), "d_q": diffs.at[q, q_metric],
                    "d_rr": diffs.at[q, rr_metric], "marks_a": marks_a.get(q, []),
                    "marks_b": marks_b.get(q, [])}

        context.update({
            "a": result["a"], "b": result["b"],
            "tests": [{"t": t, "label": metric_label(t.metric), "mean_a": _fmt(t.mean_a),
                       "mean_b": _fmt(t.mean_b), "sign_p": _fmt(t.sign_p),
                       "wilcoxon_p": _fmt(t.wilcoxon_p), "t_p": _fmt(t.t_p),
                       "rand_p": _fmt(t.randomization_p), "effect": _fmt(t.effect_size)}
                      for t in result["tests"]],
            "plot": plot, "markers": mark_safe(markers_svg(plot, href)),
            "n_questions": len(diffs),
            "diff_table": _diff_table_html(diffs.index, texts, pa, pb, diffs, config.metrics,
                                           href),
            "disagree": [side(q) for q in disagree],
            "focus": side(focus) if focus and focus not in disagree else None,
            "q_label": metric_label(q_metric), "rr_label": metric_label(rr_metric),
        })
    return TemplateResponse(request, "evaluation/compare.html", context)


def _diff_table_html(qids, texts, pa, pb, diffs, metrics, href) -> str:
    """Rows of the all-questions table (built here: 5,000 questions x 3 cells a metric)."""
    A, B, D = pa[list(metrics)].to_numpy(), pb[list(metrics)].to_numpy(), diffs[
        list(metrics)].to_numpy()
    rows = []
    for i, q in enumerate(qids):
        text = texts.get(q, "")
        text = text if len(text) <= 60 else text[:59] + "…"
        cells = []
        for k in range(len(metrics)):
            d = D[i, k]
            cls = "up" if d > 0 else "down" if d < 0 else ""
            cells.append(f'<td class="num">{A[i, k]:.4f}</td><td class="num">{B[i, k]:.4f}</td>'
                         f'<td class="num {cls}">{d:.4f}</td>')
        rows.append(f'<tr id="cmp-{escape(q)}"><td><span class="qid">{escape(q)}</span> '
                    f'{escape(text)}</td>{"".join(cells)}'
                    f'<td><a href="{escape(href(q))}">both lists</a></td></tr>')
    return mark_safe("".join(rows))


@require_GET
def compare_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _, _, config, _, _, result = _comparison(request, slug)
    if not result:
        raise Http404("Choose two different runs to compare")
    a, b = result["a"].name, result["b"].name
    rows = []
    for t in result["tests"]:
        rows.append(["mean", t.metric, t.mean_a, t.mean_b, t.mean_diff, t.up, t.down, t.tied,
                     t.sign_p, t.wilcoxon_p, t.t_p, t.randomization_p, t.effect_size])
    for q in result["diffs"].index:
        for m in config.metrics:
            rows.append(["question", f"{m}:{q}", result["pa"].at[q, m], result["pb"].at[q, m],
                         result["diffs"].at[q, m], "", "", "", "", "", "", "", ""])
    return csv_response(
        f"{collection.slug}-{a}-vs-{b}.csv", _preamble(collection, config, run_a=a, run_b=b),
        ["row", "metric_or_question", "a", "b", "b_minus_a", "up", "down", "tied", "sign_p",
         "wilcoxon_p", "t_p", "randomization_p", "effect_size"], rows)


# -- system ranking -------------------------------------------------------------------------
def _ranking(request: HttpRequest, slug: str):
    collection, role = _score_access(request, slug)
    config, form, error = _config(request, collection)
    runs = list(Run.objects.visible_to(request.user, collection).order_by("name"))
    means = (services.score_runs(collection, runs, config).means() if runs
             else pd.DataFrame(columns=list(config.metrics)))
    return collection, role, config, form, error, runs, means


@require_GET
def ranking(request: HttpRequest, slug: str) -> HttpResponse:
    collection, role, config, form, error, runs, means = _ranking(request, slug)
    ranks = means.rank(ascending=False, method="min") if len(means) else means
    table = [{"run": r, "values": [(means.at[r.name, m], int(ranks.at[r.name, m]))
                                   for m in config.metrics]} for r in runs]
    primary = config.metrics[0]
    table.sort(key=lambda row: -row["values"][0][0])
    corr = rank_correlations(means[list(config.metrics)]) if len(means) else None
    return TemplateResponse(request, "evaluation/ranking.html", {
        "collection": collection, "role": role, "config": config, "form": form, "error": error,
        "metrics": [(m, metric_label(m)) for m in config.metrics], "table": table,
        "primary": metric_label(primary),
        "corr": [{"a": metric_label(r.metric_a), "b": metric_label(r.metric_b),
                  "tau": _fmt(r.kendall_tau), "rho": _fmt(r.spearman_rho)}
                 for r in corr.itertuples()] if corr is not None else []})


@require_GET
def ranking_csv(request: HttpRequest, slug: str) -> HttpResponse:
    collection, _, config, _, _, runs, means = _ranking(request, slug)
    rows = [[r.name, *[float(means.at[r.name, m]) for m in config.metrics]] for r in runs]
    corr = rank_correlations(means[list(config.metrics)]) if len(means) else None
    if corr is not None:
        rows += [[f"kendall_tau:{c.metric_a}:{c.metric_b}", c.kendall_tau] for c in
                 corr.itertuples()]
        rows += [[f"spearman_rho:{c.metric_a}:{c.metric_b}", c.spearman_rho] for c in
                 corr.itertuples()]
    return csv_response(f"{collection.slug}-ranking.csv", _preamble(collection, config),
                        ["run", *config.metrics], rows)

