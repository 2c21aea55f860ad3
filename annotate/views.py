"""Annotation pages.  Function views, visible control flow (STYLE.md): reads come from
``selectors``, writes go through the write modules (``judging``, ``organizing``; the
judging workspace's operations through ``operations``), and every page answers htmx with
its fragment through ``render_page``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy, ngettext
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.downloads import csv_download
from config.htmx import HtmxHttpRequest, redirect_to, render_page
from config.ids import request_id, request_ids
from jobs.models import JobStatus
from jobs.services import JobRefused
from jobs.views import job_started

from . import (
    edits,
    forms,
    import_jobs,
    judging,
    layer_selectors,
    layer_views,
    operations,
    organizing,
)
from .exports import export_events, export_judgments, export_questions
from .import_plans import ImportPlan
from .imports import import_plan, pending_import_create
from .judge_page import judge_page
from .models import JUDGE_ROLES, Collection, JudgmentEvent, Question, QuestionStatus, Role
from .permissions import can_create_collection, gold_closed, judge_access, require_role
from .selectors import (
    attach_assessors,
    collection_dashboard,
    collection_judges,
    collection_levels_initial,
    collection_members_list,
    collection_overview,
    collection_rows,
    next_question,
    organizer_next_steps,
    question_by_pk,
    question_list_queryset,
    questions_by_ids,
    unassigned_open_count,
    users_by_ids,
)


@require_GET
def collection_list(request: HtmxHttpRequest) -> HttpResponse:
    return render_page(
        request, "annotate/collection_list.html", {"rows": collection_rows(request.user)}
    )


@require_GET
def collection_detail(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection)
    organizer = role == Role.ORGANIZER
    stats = collection_overview(collection)
    return render_page(
        request,
        "annotate/collection_detail.html",
        {
            "collection": collection,
            "role": role,
            "is_organizer": organizer,
            "judges": role != Role.PARTICIPANT,
            "sees_runs": role != Role.ASSESSOR,
            "stats": stats,
            "levels": list(collection.levels.all()),
            "next_steps": organizer_next_steps(collection, stats) if organizer else [],
            "members": collection_members_list(collection) if organizer else [],
        },
    )


@require_GET
def my_queue(request: HtmxHttpRequest) -> HttpResponse:
    """Questions assigned to the user in any collection, open ones first."""
    questions = layer_selectors.my_queue(request.user)
    return render_page(
        request,
        "annotate/my_queue.html",
        {
            "questions": questions,
            "open_count": sum(q.status != QuestionStatus.DONE for q in questions),
            "unassigned_count": unassigned_open_count(request.user),
        },
    )


# -- the judging workspace -----------------------------------------------------------------
def _workspace_context(
    request: HtmxHttpRequest,
    question: Question,
    role: Role,
    may_write: bool,
    notice: str = "",
    notice_kind: str = "warning",
) -> dict[str, Any]:
    return judge_page(
        request, question, role, may_write=may_write, notice=notice, notice_kind=notice_kind
    ).context()


GOLD_CLOSED = gettext_lazy(
    "This question is judged independently by several assessors, each in a layer of their "
    "own; its judgments are written by the organizers and by adjudication. Nothing was "
    "changed."
)


@require_GET
def question_judge(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The judging workspace of one question (DESIGN.md section 4)."""
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role, may_write = judge_access(request, question)
    layer = layer_views.workspace_layer(request, question, role)
    if layer is not None:
        # judged independently (DESIGN.md section 9): the same page on the assessor's layer
        return layer_views.layer_workspace_page(request, layer, role)
    if gold_closed(question, role):
        if layer_selectors.can_adjudicate(request.user, question, role):
            return redirect_to(request, "annotate:question-adjudicate", question.pk)
        raise PermissionDenied(str(GOLD_CLOSED))
    return render_page(
        request,
        "annotate/question_judge.html",
        _workspace_context(request, question, role, may_write),
        partial="workspace",
    )


def _applied_notice(event: JudgmentEvent, posted_version: str | None) -> tuple[str, str]:
    """(notice, kind) for an edit that applied: someone else's change seen meanwhile, and
    spellings an edit dropped."""
    notice, kind = "", "warning"
    if posted_version and event.before.get("version") != request_id(posted_version):
        notice, kind = (
            gettext(
                "Someone else changed this question meanwhile; your edit still "
                "applied and the workspace now shows their changes too."
            ),
            "info",
        )
    dropped = event.after.get("dropped_variants")
    if dropped:
        notice = " ".join(
            filter(
                None,
                [
                    notice,
                    gettext(
                        "Spellings that no longer match the new text were dropped: "
                        "%(spellings)s. Undo brings them back."
                    )
                    % {"spellings": " · ".join(dropped)},
                ],
            )
        )
        kind = "info"
    return notice, kind


@require_POST
def question_act(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Apply one operation (``OPERATIONS``) to the question and answer with the refreshed
    workspace (htmx) or a redirect to it; a refused or stale edit comes back with a
    visible notice.  ``done`` goes on to the next question."""
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role, may_write = judge_access(request, question)
    if role != Role.ORGANIZER and layer_selectors.layer_for(question=question, user=request.user):
        raise PermissionDenied(gettext("You judge this question in your own layer."))
    if gold_closed(question, role):
        if request.htmx:  # the page loaded before the request: the judging page says why
            return redirect_to(request, "annotate:question-judge", question.pk)
        raise PermissionDenied(str(GOLD_CLOSED))
    if not may_write:
        if request.htmx:  # e.g. another assessor claimed it since the page was loaded
            context = _workspace_context(
                request,
                question,
                role,
                may_write,
                gettext(
                    "This question is assigned to another assessor (it may have been taken "
                    "since your page was loaded); nothing was changed."
                ),
            )
            return render_page(
                request, "annotate/question_judge.html", context, partial="workspace"
            )
        raise PermissionDenied(gettext("This question is not assigned to you."))
    try:
        with transaction.atomic():
            if role != Role.ORGANIZER:  # an unassigned question: the first change claims it
                judging.question_claim(question=question, by=request.user)
            event = operations.apply_to_gold(request, question, role)
    except edits.Conflict as e:
        notice = gettext("%(problem)s The workspace has been refreshed.") % {"problem": e}
        event, kind = None, "warning"
    else:
        notice, kind = _applied_notice(event, request.POST.get("version"))
    if request.POST.get("op") == "done" and event is not None:
        nxt = next_question(
            request.user,
            collection=question.collection,
            after=question,
            organizer=role == Role.ORGANIZER,
        )
        if nxt is None:
            return redirect_to(request, "annotate:question-list", question.collection.slug)
        return redirect_to(request, "annotate:question-judge", nxt.pk)
    if not request.htmx:
        if notice:
            messages.warning(request, notice)
        return redirect_to(request, "annotate:question-judge", question.pk)
    # what an operation changes on the question (version, status, notes) is read again by
    # question_workspace, with what it shows; a whole refresh would also drop the
    # collection read with the question (one more query)
    context = _workspace_context(request, question, role, may_write, notice, kind)
    return render_page(request, "annotate/question_judge.html", context, partial="workspace")


@require_GET
def next_to_judge(request: HtmxHttpRequest) -> HttpResponse:
    """Redirect to the next question the user should judge (my queue's button; the
    workspace's Enter, which gives ``after``, the question it leaves)."""
    slug = request.GET.get("collection")
    collection = get_object_or_404(Collection, slug=slug) if slug else None
    organizer = bool(collection and require_role(request, collection) == Role.ORGANIZER)
    after = question_by_pk(request_id(request.GET.get("after")))
    nxt = next_question(request.user, collection=collection, organizer=organizer, after=after)
    if nxt is None:
        messages.info(request, gettext("Nothing left to judge. Well done!"))
        return redirect_to(request, "annotate:my-queue")
    return redirect_to(request, "annotate:question-judge", nxt.pk)


# -- question list ---------------------------------------------------------------------------
@require_GET
def question_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Questions of a collection with status, assessors, R, strings and unjudged counts;
    filters, search and paging.  Participants get 403."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, *JUDGE_ROLES)
    f = request.GET
    blind = role != Role.ORGANIZER
    qs = question_list_queryset(
        collection,
        status="" if blind else f.get("status", ""),
        assessor=f.get("assessor", ""),
        unjudged="" if blind else f.get("unjudged", ""),
        search=f.get("q", "").strip(),
        reader=request.user,
    )
    if not blind:
        qs = qs.with_layer_state()  # where a question judged in layers stands
    if blind:
        # status and unjudged of a question judged in the user's layer are the layer's
        qs = layer_selectors.filter_as_seen_by(
            qs, request.user, status=f.get("status", ""), unjudged=f.get("unjudged", "")
        )
    if blind and f.get("assessor", "") not in ("", "none", str(request.user.pk)):
        # who else judges a question the user judges in a layer is not told (DESIGN.md
        # section 9): filtering by another assessor does not find it
        qs = qs.exclude(layers__assessor=request.user)
    page = Paginator(qs, 50).get_page(f.get("page"))
    questions = list(page.object_list)
    attach_assessors(questions)
    if not blind:
        layer_selectors.label_layer_states(questions)
    if blind:
        # a question judged in the user's layer shows the layer's status and counts, and
        # the user alone as its assessor: nothing of gold or of the other layers
        layer_selectors.my_layers(questions, request.user)
        for q in questions:
            if q.my_layer is not None:
                q.assessor_names = [request.user.get_username()]
    return render_page(
        request,
        "annotate/question_list.html",
        {
            "collection": collection,
            "role": role,
            "is_organizer": role == Role.ORGANIZER,
            "page": page,
            "questions": questions,
            "stats": collection_overview(collection),
            "assessors": collection_judges(collection),
            "filters": f,
            "statuses": QuestionStatus.choices,
        },
        partial="results",
    )


@require_POST
def question_assign(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Bulk assignment of the ticked (or all filtered) questions to assessors."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    p = request.POST
    if p.get("scope") == "filtered":
        questions = list(
            question_list_queryset(
                collection,
                status=p.get("f_status", ""),
                assessor=p.get("f_assessor", ""),
                unjudged=p.get("f_unjudged", ""),
                search=p.get("f_q", "").strip(),
            )
        )
    else:
        questions = questions_by_ids(collection, _ids(p.getlist("questions")))
    try:
        n = organizing.questions_assign(
            collection=collection,
            questions=questions,
            assessors=users_by_ids(_ids(p.getlist("assessors"))),
            by=request.user,
            round_robin=p.get("mode", "round_robin") == "round_robin",
            replace=p.get("replace") == "1",
        )
    except edits.Conflict as e:
        messages.error(request, str(e))
    else:
        messages.success(
            request,
            ngettext("Assigned %(n)s question.", "Assigned %(n)s questions.", n) % {"n": n},
        )
    query = urlencode([(k[2:], v) for k, v in p.items() if k.startswith("f_") and v])
    return redirect_to(
        request, reverse("annotate:question-list", args=[slug]) + (f"?{query}" if query else "")
    )


def _ids(values: list[str]) -> list[int]:
    return request_ids(values)


# -- organizer pages -------------------------------------------------------------------------
def _collection_form_page(request: HtmxHttpRequest, collection: Collection | None) -> HttpResponse:
    if request.method == "POST":
        form = forms.CollectionForm(request.POST, instance=collection)
        levels = forms.LevelFormSet(request.POST, prefix="levels")
        if form.is_valid() and levels.is_valid():
            try:
                saved = organizing.collection_save(
                    collection=form.save(commit=False), levels=levels.rows(), by=request.user
                )
            except edits.Conflict as e:
                levels._non_form_errors = levels.error_class([str(e)])
            else:
                messages.success(request, gettext("Saved %(name)s.") % {"name": saved.name})
                return redirect_to(request, "annotate:collection-detail", saved.slug)
    else:
        form = forms.CollectionForm(instance=collection)
        levels = forms.LevelFormSet(prefix="levels", initial=collection_levels_initial(collection))
    return render_page(
        request,
        "annotate/collection_form.html",
        {"form": form, "levels": levels, "collection": collection},
    )


@require_http_methods(["GET", "POST"])
def collection_create(request: HtmxHttpRequest) -> HttpResponse:
    """Staff, organizers and users granted ``annotate.add_collection`` may create a
    collection; its creator becomes its organizer."""
    if not can_create_collection(request.user):
        raise PermissionDenied(
            gettext(
                "Only organizers may create collections. Ask an administrator for the right "
                "to create one."
            )
        )
    return _collection_form_page(request, None)


@require_http_methods(["GET", "POST"])
def collection_edit(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    return _collection_form_page(request, collection)


@dataclass
class _MembersOutcome:
    """What one action of the members page shows: its two forms (bound when refused, so
    the errors stand beside the fields), a refusal or a notice, an invitation's link."""

    form: forms.MemberAddForm = field(default_factory=forms.MemberAddForm)
    invite: forms.MemberInviteForm = field(default_factory=forms.MemberInviteForm)
    error: str = ""
    notice: str = ""
    link: str = ""

    @property
    def stays(self) -> bool:
        """A plain form's POST answers with the page itself (not a redirect) to show a
        refused form's errors beside its fields, or the link."""
        return self.form.is_bound or self.invite.is_bound or bool(self.link)


def _member_add(request: HtmxHttpRequest, collection: Collection) -> _MembersOutcome:
    """``action=add``: an existing user joins the collection with a role."""
    form = forms.MemberAddForm(request.POST)
    if not form.is_valid():
        return _MembersOutcome(form=form)
    role = form.cleaned_data["role"]
    try:
        organizing.membership_set(collection=collection, user=form.user, role=role, by=request.user)
    except edits.Conflict as e:
        form.add_error("role", str(e))
        return _MembersOutcome(form=form)
    notice = gettext("%(name)s is now a member: %(role)s.")
    return _MembersOutcome(
        notice=notice % {"name": form.user.get_username(), "role": Role(role).label}
    )


def _member_invite(request: HtmxHttpRequest, collection: Collection) -> _MembersOutcome:
    """``action=invite``: the account of someone new, who sets its password on a one-time
    link."""
    invite = forms.MemberInviteForm(request.POST)
    if not invite.is_valid():
        return _MembersOutcome(invite=invite)
    d = invite.cleaned_data
    try:
        made = organizing.member_invite(
            collection=collection,
            username=d["username"],
            email=d["email"],
            role=d["role"],
            by=request.user,
        )
    except edits.Conflict as e:
        invite.add_error("username", str(e))
        return _MembersOutcome(invite=invite)
    return _MembersOutcome(
        notice=gettext(
            "Account %(name)s created (%(role)s). Send them this link to choose their "
            "password; it works once."
        )
        % {"name": made.user.get_username(), "role": Role(d["role"]).label},
        link=request.build_absolute_uri(reverse("set-password", args=[made.uidb64, made.token])),
    )


def _member_change(request: HtmxHttpRequest, collection: Collection) -> _MembersOutcome:
    """``action=role`` (a member's new role) or ``action=remove``; an unknown user is a 404."""
    change = forms.MemberChangeForm(request.POST)
    if not change.is_valid():
        raise Http404(gettext("No such user."))
    user = change.cleaned_data["user"]
    role = None if request.POST.get("action") == "remove" else change.cleaned_data["role"]
    try:
        organizing.membership_set(collection=collection, user=user, role=role, by=request.user)
    except edits.Conflict as e:
        return _MembersOutcome(error=str(e))
    name = user.get_username()
    return _MembersOutcome(
        notice=gettext("%(name)s removed from the collection.") % {"name": name}
        if role is None
        else gettext("%(name)s is now %(role)s.") % {"name": name, "role": Role(role).label.lower()}
    )


# action -> its form's handler; any other action (none, say) changes a role, as "role" does
_MEMBER_ACTIONS = {
    "add": _member_add,
    "invite": _member_invite,
    "role": _member_change,
    "remove": _member_change,
}


@require_http_methods(["GET", "POST"])
def collection_members(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Members and their roles: add by username, change a role, remove, or create the
    account of someone new (who sets its password on a one-time link); one form and one
    handler per action (``_MEMBER_ACTIONS``)."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    done = _MembersOutcome()
    if request.method == "POST":
        act = _MEMBER_ACTIONS.get(request.POST.get("action", ""), _member_change)
        done = act(request, collection)
        if (
            not request.htmx
            and not done.form.is_bound
            and not done.invite.is_bound
            and not done.link
        ):
            if done.error:
                messages.error(request, done.error)
            elif done.notice:
                messages.success(request, done.notice)
            return redirect_to(request, "annotate:collection-members", slug)
    return render_page(
        request,
        "annotate/collection_members.html",
        {
            "collection": collection,
            "members": collection_members_list(collection),
            "form": done.form,
            "invite": done.invite,
            "roles": forms.MEMBER_ROLE_CHOICES,
            "error": done.error,
            "notice": done.notice,
            "link": done.link,
        },
        partial="members",
    )


@require_http_methods(["GET", "POST"])
def collection_import_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Upload a file: it is validated completely and previewed (counts, or every error
    with its line number); nothing is written until the confirm step.  The file waits in
    its own table (PendingImport) under the preview's token, not in the session."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    plan, token = None, None
    form = forms.ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        data = upload.read()
        plan = import_plan(
            collection=collection,
            kind=form.cleaned_data["kind"],
            data=data,
            filename=upload.name,
            by=request.user,
        )
        if plan.ok:
            token = pending_import_create(
                collection=collection,
                user=request.user,
                kind=plan.kind,
                filename=upload.name,
                data=data,
            ).token
    return render_page(
        request,
        "annotate/collection_import.html",
        {"collection": collection, "form": form, "plan": plan, "token": token},
        partial="preview",
    )


@require_POST
def collection_import_confirm(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Write the previewed file (validated again, all or nothing) as a job: a small file
    at once, a large one on a worker while the page shows its bar (``import_jobs``).  If the
    file no longer passes, the import page lists every error, as the preview does; while a
    job that excludes imports (a matching-mode change) runs, nothing is written and the
    page says so."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    token, mark_done = request.POST.get("token", ""), request.POST.get("mark_done") == "1"
    try:
        job = import_jobs.import_confirm_start(
            collection=collection, user=request.user, token=token, mark_done=mark_done
        )
    except JobRefused as e:
        context = {"collection": collection, "form": forms.ImportForm(), "plan": None}
        context |= {"token": token, "mark_done": mark_done, "refused": str(e)}
        return render_page(request, "annotate/collection_import.html", context, partial="preview")
    if job.active:
        return job_started(request, job)
    if job.status == JobStatus.SUCCEEDED:
        messages.success(request, job.message)
        return redirect_to(request, "annotate:collection-detail", slug)
    if not job.errors:  # the preview is no longer pending (or the job stopped)
        messages.error(request, job.message)
        return redirect_to(request, "annotate:collection-import", slug)
    issues = import_jobs.issues_of(job)
    return render_page(
        request,
        "annotate/collection_import.html",
        {
            "collection": collection,
            "form": forms.ImportForm(),
            "plan": ImportPlan("", issues[0].file, issues=issues),
            "token": None,
        },
        partial="preview",
    )


EXPORTS = {"judgments": export_judgments, "questions": export_questions, "events": export_events}


@require_GET
def collection_export(request: HtmxHttpRequest, slug: str, what: str) -> HttpResponse:
    """CSV downloads for organizers: judgments, questions, audit events."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    if what not in EXPORTS:
        raise Http404(gettext("unknown export"))
    if what == "events":  # not the events of the layers the organizer is blind to
        return csv_download(export_events(collection, reader=request.user), f"{slug}-events.csv")
    return csv_download(EXPORTS[what](collection), f"{slug}-{what}.csv")


@require_GET
def collection_dashboard_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The organizer's view of the campaign: progress, assessors' throughput, questions
    stuck in progress or reopened by pooling."""
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, Role.ORGANIZER)
    return render_page(
        request,
        "annotate/dashboard.html",
        {"collection": collection, "board": collection_dashboard(collection, reader=request.user)},
    )
