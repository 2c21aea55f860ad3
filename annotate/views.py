"""Annotation pages.  Function views, visible control flow (STYLE.md)."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from config.downloads import content_disposition

from . import layers, services
from .models import (
    Collection,
    Membership,
    Question,
    QuestionStatus,
    Role,
    is_site_staff,
    percent_done,
)
from .permissions import ASSESSOR, ORGANIZER, require_role
from .selectors import (
    attach_assessors,
    collection_overview,
    next_question,
    question_history,
    question_list_queryset,
    question_workspace,
    unassigned_open_count,
)


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    return redirect("annotate:collection-list")


@require_GET
def collection_list(request: HttpRequest) -> HttpResponse:
    collections = Collection.objects.visible_to(request.user).with_counts()
    roles = dict(Membership.objects.filter(user=request.user).values_list("collection_id", "role"))
    staff = is_site_staff(request.user)
    rows = [{"collection": c, "role": Role.ORGANIZER if staff else roles.get(c.pk),
             "percent_done": percent_done(c.n_done, c.n_questions)}
            for c in collections]
    return TemplateResponse(request, "annotate/collection_list.html", {"rows": rows})


@require_GET
def collection_detail(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection)
    context = {
        "collection": collection,
        "role": role,
        "is_organizer": role == ORGANIZER,
        "stats": collection_overview(collection),
        "levels": list(collection.levels.all()),
        "members": list(collection.memberships.select_related("user")) if role == ORGANIZER else [],
    }
    return TemplateResponse(request, "annotate/collection_detail.html", context)


@require_GET
def my_queue(request: HttpRequest) -> HttpResponse:
    """Questions assigned to the user in any collection, open ones first."""
    questions = list(Question.objects.assigned_to(request.user).with_counts().for_queue())
    open_count = sum(q.status != QuestionStatus.DONE for q in questions)
    return TemplateResponse(request, "annotate/my_queue.html", {
        "questions": questions, "open_count": open_count,
        "unassigned_count": unassigned_open_count(request.user)})


# -- the judging workspace -----------------------------------------------------------------
def _judge_access(request, question: Question) -> tuple[str, bool]:
    """(role, may_write): organizers and assessors see the workspace (participants get
    403); assessors write on questions assigned to them and on questions nobody is
    assigned to (their first change claims it)."""
    role = require_role(request, question.collection, ORGANIZER, ASSESSOR)
    if role == ORGANIZER:
        return role, True
    assigned = set(question.assessors.values_list("pk", flat=True))
    return role, not assigned or request.user.pk in assigned


def _workspace_context(request, question: Question, role: str, may_write: bool,
                       notice: str = "", notice_kind: str = "warning") -> dict:
    ws = question_workspace(question)
    act_url = reverse("annotate:question-act", args=[question.pk])
    csrf_input = format_html('<input type="hidden" name="csrfmiddlewaretoken" value="{}">',
                             get_token(request))
    _prerender(ws, may_write, act_url=act_url, csrf_input=csrf_input, version=question.version)
    # the synsets in the order shown: every write names a synset by its number on this page
    ws["page_synsets"] = " ".join(str(s.pk) for s in ws["synsets"])
    edit_pk = _int_or_none(request.GET.get("edit"))
    edit_string = (question.strings.filter(pk=edit_pk).first()
                   if edit_pk and may_write and request.method == "GET" else None)
    claimable = may_write and role != ORGANIZER and not question.assessors.exists()
    return {
        "question": question, "collection": question.collection, "role": role,
        "may_write": may_write, "claimable": claimable, "notice": notice,
        "notice_kind": notice_kind,
        "history": question_history(question), "edit_string": edit_string,
        "act_url": act_url, "csrf_input": csrf_input, **ws,
    }


def _prerender(ws: dict, may_write: bool, *, act_url: str, csrf_input: str,
               version: int) -> None:
    """Render the rows of synset strings and candidates in Python: a question may hold
    1,000 strings, and the template engine costs ~0.2 ms a row (bench/judge_bench.py)."""
    box = ('<input type="checkbox" name="strings" value="{0}" tabindex="-1" '
           'aria-label="tick">') if may_write else ""
    link = ' <a href="?edit={0}" class="edit-link small" tabindex="-1">edit</a>' if may_write \
        else ""
    member = ('<li class="item member" tabindex="0" data-item data-id="{0}" data-token="{1}/{2}" '
              'data-synset="{1}">' + box + ' <span class="badge level-{3}">{4}</span> '
              '<span class="text">{5}</span>{6}' + link + '</li>')
    for syn in ws["synsets"]:
        syn.html = mark_safe("".join(
            member.format(s.pk, s.synset_id, s.level_id, s.level_rank, escape(s.level_obj.code),
                          escape(s.text), _also(s.variants)) for s in syn.members))
    wrong = ('<li class="item wrong" tabindex="0" data-item data-id="{0}" data-token="x">'
             '<span class="text">{1}</span>{2}' + link + '</li>')
    # the synset cards (the template engine would render ~15 nodes per synset)
    actions = ('<p class="small card-actions"><button type="submit" name="op" value="split" '
               'tabindex="-1">Split ticked out</button>\n'
               '            <input type="hidden" name="merge" value="{pk}">\n'
               '            merge into <input type="number" name="ordinal" min="1" '
               'class="ordinal-in" aria-label="merge into synset number" tabindex="-1">\n'
               '            <button type="submit" name="op" value="merge" tabindex="-1">Merge'
               '</button></p>') if may_write else ""
    card = ('<article class="synset card" data-synset="{pk}" data-ordinal="{ordinal}">\n'
            '        <form method="post" action="{url}" hx-post="{url}">\n'
            '          {csrf}<input type="hidden" name="version" value="{version}">\n'
            '          <header><span class="ordinal">{ordinal}</span>{label} <span class="badge '
            'level-{rank}" title="best level (xmax)">{best}</span>\n'
            '            <span class="muted small">{n} string{plural}</span></header>\n'
            '          <ul class="members">{members}</ul>\n'
            '          ' + actions + '\n'
            '        </form>\n'
            '      </article>\n')
    url = escape(act_url)
    ws["synsets_html"] = mark_safe("".join(
        card.format(pk=syn.pk, ordinal=syn.ordinal, label=_synset_label(syn), url=url,
                    csrf=csrf_input, version=version,
                    rank=syn.best_rank if syn.best is not None else "",
                    best=escape(syn.best.code) if syn.best is not None else "",
                    n=len(syn.members), plural="" if len(syn.members) == 1 else "s",
                    members=syn.html)
        for syn in ws["synsets"]))
    ws["incorrect_html"] = mark_safe("".join(
        wrong.format(s.pk, escape(s.text), _also(s.variants)) for s in ws["incorrect"]))
    options = "".join(f'<option value="{escape(lv.code)}">{escape(lv.code)}</option>'
                      for lv in ws["levels"])
    rows = []
    for c in ws["candidates"]:
        row = [f'<li class="item cand" tabindex="0" data-item data-id="{c.pk}" data-token="u">'
               f'<span class="text">{escape(c.text)}</span>{_also(c.variants)}']
        if c.freq:
            row.append(f' <span class="freq small muted" title="number of runs that returned '
                       f'it">×{c.freq}</span>')
        sug = c.suggestion
        if sug is not None:
            score = f" ({c.suggestion_score}%)" if c.suggestion_score < 100 else ""
            row.append(f' <span class="suggest small" title="same or similar string already '
                       f'in synset {sug.ordinal} (a suggestion only)">→ {sug.ordinal}?{score}'
                       '</span>')
        if may_write:
            value = f' value="{sug.ordinal}"' if sug is not None else ""
            row.append(
                f'<form class="row-form" method="post" action="{url}" hx-post="{url}">'
                f'{csrf_input}<input type="hidden" name="version" value="{version}">'
                f'<input type="hidden" name="string" value="{c.pk}">'
                '<input type="hidden" name="expect" value="u">'
                '<input type="number" name="ordinal" min="1" aria-label="synset number" '
                f'placeholder="#" class="ordinal-in"{value}>'
                f'<select name="level" aria-label="level">{options}</select>'
                '<button type="submit" name="op" value="add" tabindex="-1">Add</button>'
                '<button type="submit" name="op" value="new" tabindex="-1">New</button>'
                '<button type="submit" name="op" value="incorrect" tabindex="-1">✗</button>'
                '</form>')
        row.append("</li>")
        rows.append("".join(row))
    ws["candidates_html"] = mark_safe("".join(rows))


def _also(variants) -> str:
    """The other spellings of a string (same matching key), escaped, or ""."""
    if not variants:
        return ""
    return (' <span class="variants small muted" title="other spellings with the same matching '
            'key">also: ' + escape(" · ".join(variants)) + "</span>")


def _synset_label(syn) -> str:
    """The synset id of the file it was imported from, escaped, unless it is the ordinal."""
    if not syn.label or syn.label == str(syn.ordinal):
        return ""
    return (' <span class="synset-label small muted" title="synset id in the imported file">'
            + escape(syn.label) + "</span>")


@require_GET
def question_judge(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The judging workspace of one question (DESIGN.md section 4)."""
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role, may_write = _judge_access(request, question)
    if role != ORGANIZER and layers.layer_for(question=question, user=request.user):
        # judged independently (DESIGN.md section 9): in the assessor's own layer
        return redirect("annotate:question-layer", question.pk)
    template_name = "annotate/question_judge.html"
    if request.htmx and not request.htmx.boosted:
        template_name += "#workspace"
    return TemplateResponse(request, template_name,
                            _workspace_context(request, question, role, may_write))


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value not in (None, "") else None
    except ValueError:
        return None


def _page_synset(p) -> services.PageSynset:
    """A synset given by its number on the page, with the synset that number meant there
    when the page sent its synset list (``page_synsets``: ids in the order shown); the
    service resolves it under the question's lock."""
    ordinal = _int_or_none(p.get("ordinal"))
    if ordinal is None or ordinal < 1:
        raise services.Conflict(f"There is no synset {p.get('ordinal')}.")
    if "page_synsets" not in p:
        return services.PageSynset(ordinal=ordinal)
    shown = [_int_or_none(v) for v in p.get("page_synsets", "").split()]
    if ordinal > len(shown) or shown[ordinal - 1] is None:
        raise services.Conflict(f"There is no synset {ordinal} on your page; nothing was "
                                "changed.")
    return services.PageSynset(ordinal=ordinal, pk=shown[ordinal - 1])


def _apply(request, question: Question, role: str) -> services.JudgmentEvent | None:
    """Dispatch one judging operation posted by the workspace."""
    p = request.POST
    op = p.get("op", "")
    common = {"question": question, "by": request.user, "version": _int_or_none(p.get("version"))}
    string = _int_or_none(p.get("string"))
    expect = p.get("expect") or None
    level = p.get("level") or None
    synset = _int_or_none(p.get("synset"))
    if synset is None and p.get("ordinal"):
        synset = _page_synset(p)
    if op in ("add", "new", "incorrect"):
        if string is None:
            raise services.Conflict("No answer string chosen.")
        return services.string_judge(string=string, synset=synset if op == "add" else None,
                                     new_synset=op == "new", level=level, expect=expect,
                                     **common)
    if op == "level":
        return services.string_set_level(string=string, level=level, expect=expect, **common)
    if op == "unjudge":
        return services.string_unjudge(string=string, expect=expect, **common)
    if op == "edit":
        return services.string_edit(string=string, text=p.get("text", ""), expect=expect,
                                    **common)
    if op == "delete":
        return services.string_delete(string=string, expect=expect, **common)
    if op == "type":
        text = p.get("text", "").strip()
        if not text:
            raise services.Conflict("Type an answer string first.")
        return services.string_add(text=text, synset=synset, level=level,
                                   new_synset=p.get("target") == "new", **common)
    if op == "merge":
        into = synset
        others = [_int_or_none(v) for v in p.getlist("merge")]
        return services.synset_merge(synsets=[into, *others], **common)
    if op == "split":
        strings = [_int_or_none(v) for v in p.getlist("strings")]
        if not strings:
            raise services.Conflict("Tick the strings to split out first.")
        return services.synset_split(strings=strings, **common)
    if op == "nil":
        return services.question_mark_nil(level=level, **common)
    if op == "notes":
        return services.question_set_notes(notes=p.get("notes", ""), **common)
    if op in ("done", "reopen"):
        return services.question_set_status(
            status=QuestionStatus.DONE if op == "done" else QuestionStatus.IN_PROGRESS, **common)
    if op == "undo":
        return services.question_undo(any_user=role == ORGANIZER, **common)
    raise services.Conflict(f"Unknown operation {op!r}.")


@require_POST
def question_act(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """Apply one operation to the question and answer with the refreshed workspace (htmx)
    or a redirect to it; a refused or stale edit comes back with a visible notice."""
    question = get_object_or_404(Question.objects.select_related("collection"), pk=pk)
    role, may_write = _judge_access(request, question)
    if role != ORGANIZER and layers.layer_for(question=question, user=request.user):
        raise PermissionDenied("You judge this question in your own layer.")
    if not may_write:
        if request.htmx:  # e.g. another assessor claimed it since the page was loaded
            context = _workspace_context(request, question, role, may_write, (
                "This question is assigned to another assessor (it may have been taken "
                "since your page was loaded); nothing was changed."))
            return TemplateResponse(request, "annotate/question_judge.html#workspace", context)
        raise PermissionDenied("This question is not assigned to you.")
    notice, kind = "", "warning"
    try:
        with transaction.atomic():
            if role != ORGANIZER:  # an unassigned question: the first change claims it
                services.question_claim(question=question, by=request.user)
            event = _apply(request, question, role)
    except services.Conflict as e:
        notice = f"{e} The workspace has been refreshed."
        event = None
    else:
        posted = _int_or_none(request.POST.get("version"))
        if posted is not None and event.before.get("version") != posted:
            notice, kind = ("Someone else changed this question meanwhile; your edit still "
                            "applied and the workspace now shows their changes too."), "info"
        dropped = event.after.get("dropped_variants")
        if dropped:
            notice = " ".join(filter(None, [notice, (
                f"Spellings that no longer match the new text were dropped: "
                f"{' · '.join(dropped)}. Undo brings them back.")]))
            kind = "info"
    question.refresh_from_db()
    go_next = request.POST.get("op") == "done" and event is not None
    if go_next:
        nxt = next_question(request.user, collection=question.collection, after=question,
                            organizer=role == ORGANIZER)
        url = (reverse("annotate:question-judge", args=[nxt.pk]) if nxt else
               reverse("annotate:question-list", args=[question.collection.slug]))
        if request.htmx:
            return HttpResponse(status=204, headers={"HX-Redirect": url})
        return redirect(url)
    if not request.htmx:
        if notice:
            messages.warning(request, notice)
        return redirect("annotate:question-judge", pk=question.pk)
    context = _workspace_context(request, question, role, may_write, notice, kind)
    return TemplateResponse(request, "annotate/question_judge.html#workspace", context)


@require_GET
def next_to_judge(request: HttpRequest) -> HttpResponse:
    """Redirect to the next question the user should judge (my queue's button; the
    workspace's Enter, which gives ``after``, the question it leaves)."""
    slug = request.GET.get("collection")
    collection = get_object_or_404(Collection, slug=slug) if slug else None
    organizer = bool(collection and require_role(request, collection) == ORGANIZER)
    after_pk = _int_or_none(request.GET.get("after"))
    after = Question.objects.filter(pk=after_pk).first() if after_pk else None
    nxt = next_question(request.user, collection=collection, organizer=organizer, after=after)
    if nxt is None:
        messages.info(request, "Nothing left to judge. Well done!")
        return redirect("annotate:my-queue")
    return redirect("annotate:question-judge", pk=nxt.pk)


# -- question list ---------------------------------------------------------------------------
@require_GET
def question_list(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Questions of a collection with status, assessors, R, strings and unjudged counts;
    filters, search and paging.  Participants get 403."""
    collection = get_object_or_404(Collection, slug=slug)
    role = require_role(request, collection, ORGANIZER, ASSESSOR)
    f = request.GET
    qs = question_list_queryset(collection, status=f.get("status", ""),
                                assessor=f.get("assessor", ""), unjudged=f.get("unjudged", ""),
                                search=f.get("q", "").strip())
    page = Paginator(qs, 50).get_page(f.get("page"))
    questions = list(page.object_list)
    attach_assessors(questions)
    assessors = list(Membership.objects.filter(collection=collection, role__in=[
        ORGANIZER, ASSESSOR]).select_related("user").order_by("user__username"))
    context = {
        "collection": collection, "role": role, "is_organizer": role == ORGANIZER,
        "page": page, "questions": questions, "stats": collection_overview(collection),
        "assessors": assessors, "filters": f, "statuses": QuestionStatus.choices,
    }
    template_name = "annotate/question_list.html"
    if request.htmx and not request.htmx.boosted:
        template_name += "#results"
    return TemplateResponse(request, template_name, context)


@require_POST
def question_assign(request: HttpRequest, slug: str) -> HttpResponse:
    """Bulk assignment of the ticked (or all filtered) questions to assessors."""
    from django.contrib.auth import get_user_model
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, ORGANIZER)
    p = request.POST
    if p.get("scope") == "filtered":
        questions = list(question_list_queryset(
            collection, status=p.get("f_status", ""), assessor=p.get("f_assessor", ""),
            unjudged=p.get("f_unjudged", ""), search=p.get("f_q", "").strip()))
    else:
        ids = [int(v) for v in p.getlist("questions") if v.isdigit()]
        questions = list(Question.objects.filter(collection=collection, pk__in=ids)
                         .order_by("id"))
    users = list(get_user_model().objects.filter(
        pk__in=[int(v) for v in p.getlist("assessors") if v.isdigit()]).order_by("username"))
    try:
        n = services.questions_assign(collection=collection, questions=questions,
                                      assessors=users, by=request.user,
                                      round_robin=p.get("mode", "round_robin") == "round_robin",
                                      replace=p.get("replace") == "1")
    except services.Conflict as e:
        messages.error(request, str(e))
    else:
        messages.success(request, f"Assigned {n} question{'s' if n != 1 else ''}.")
    query = "&".join(f"{k[2:]}={v}" for k, v in p.items() if k.startswith("f_") and v)
    return redirect(reverse("annotate:question-list", args=[slug]) + (f"?{query}" if query else ""))


# -- organizer pages -------------------------------------------------------------------------
def _level_initial(collection: Collection | None) -> list[dict]:
    if collection is None:
        return [{"code": c, "label": label, "gain": g} for c, label, g in services.DEFAULT_LEVELS]
    return [{"code": lv.code, "label": lv.label, "gain": lv.gain}
            for lv in collection.levels.order_by("order")]


def _collection_form_page(request: HttpRequest, collection: Collection | None) -> HttpResponse:
    from .forms import CollectionForm, LevelFormSet
    if request.method == "POST":
        form = CollectionForm(request.POST, instance=collection)
        levels = LevelFormSet(request.POST, prefix="levels")
        if form.is_valid() and levels.is_valid():
            rows = [(f.cleaned_data["code"].strip(), f.cleaned_data.get("label", ""),
                     f.cleaned_data["gain"]) for f in levels.forms
                    if f.cleaned_data and not f.cleaned_data.get("DELETE")]
            try:
                saved = services.collection_save(collection=form.save(commit=False),
                                                 levels=rows, by=request.user)
            except services.Conflict as e:
                levels._non_form_errors = levels.error_class([str(e)])
            else:
                messages.success(request, f"Saved {saved.name}.")
                return redirect("annotate:collection-detail", slug=saved.slug)
    else:
        form = CollectionForm(instance=collection)
        levels = LevelFormSet(prefix="levels", initial=_level_initial(collection))
    return TemplateResponse(request, "annotate/collection_form.html",
                            {"form": form, "levels": levels, "collection": collection})


@require_http_methods(["GET", "POST"])
def collection_create(request: HttpRequest) -> HttpResponse:
    """Any logged-in user may create a collection and becomes its organizer."""
    return _collection_form_page(request, None)


@require_http_methods(["GET", "POST"])
def collection_edit(request: HttpRequest, slug: str) -> HttpResponse:
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, ORGANIZER)
    return _collection_form_page(request, collection)


@require_http_methods(["GET", "POST"])
def collection_members(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Members and their roles: add by username, change a role, remove."""
    from django.contrib.auth import get_user_model

    from .forms import MemberAddForm
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, ORGANIZER)
    form = MemberAddForm()
    error = ""
    if request.method == "POST":
        if request.POST.get("action") == "add":
            form = MemberAddForm(request.POST)
            if form.is_valid():
                try:
                    services.membership_set(collection=collection, user=form.user,
                                            role=form.cleaned_data["role"], by=request.user)
                except services.Conflict as e:
                    form.add_error("role", str(e))
                else:
                    form = MemberAddForm()
        else:
            user = get_object_or_404(get_user_model(), pk=_int_or_none(request.POST.get("user")))
            role = None if request.POST.get("action") == "remove" else request.POST.get("role")
            try:
                services.membership_set(collection=collection, user=user, role=role,
                                        by=request.user)
            except services.Conflict as e:
                error = str(e)
        if not request.htmx and not form.is_bound:
            if error:
                messages.error(request, error)
            return redirect("annotate:collection-members", slug=slug)
    members = list(collection.memberships.select_related("user").order_by("role", "user__username"))
    template_name = "annotate/collection_members.html"
    if request.htmx:
        template_name += "#members"
    return TemplateResponse(request, template_name, {
        "collection": collection, "members": members, "form": form, "roles": Role.choices,
        "error": error})


@require_http_methods(["GET", "POST"])
def collection_import_page(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Upload a file: it is validated completely and previewed (counts, or every error
    with its line number); nothing is written until the confirm step.  The file waits in
    its own table (PendingImport) under the preview's token, not in the session."""
    from .forms import ImportForm
    from .imports import import_plan, pending_import_create
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, ORGANIZER)
    plan, token = None, None
    form = ImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        data = upload.read()
        plan = import_plan(collection=collection, kind=form.cleaned_data["kind"], data=data,
                           filename=upload.name, by=request.user)
        if plan.ok:
            token = pending_import_create(collection=collection, user=request.user,
                                          kind=plan.kind, filename=upload.name,
                                          data=data).token
    template_name = "annotate/collection_import.html"
    if request.htmx:
        template_name += "#preview"
    return TemplateResponse(request, template_name, {
        "collection": collection, "form": form, "plan": plan, "token": token})


@require_POST
def collection_import_confirm(request: HttpRequest, slug: str) -> HttpResponse:
    """Write the previewed file (validated again, all or nothing); if it no longer passes,
    the import page lists every error, as the preview does."""
    from .forms import ImportForm
    from .imports import ImportPlan, ImportRefused, PendingImportRefused, pending_import_confirm
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, ORGANIZER)
    try:
        pending, plan = pending_import_confirm(
            token=request.POST.get("token", ""), collection=collection, user=request.user,
            mark_done=request.POST.get("mark_done") == "1")
    except PendingImportRefused as e:
        messages.error(request, str(e))
        return redirect("annotate:collection-import", slug=slug)
    except ImportRefused as e:
        plan = ImportPlan("", e.issues[0].file if e.issues else "", issues=e.issues)
        return TemplateResponse(request, "annotate/collection_import.html", {
            "collection": collection, "form": ImportForm(), "plan": plan, "token": None})
    summary = ", ".join(f"{k}: {v}" for k, v in plan.counts.items())
    messages.success(request, f"Imported {pending.filename} ({summary}).")
    return redirect("annotate:collection-detail", slug=slug)


@require_GET
def collection_export(request: HttpRequest, slug: str, what: str) -> HttpResponse:
    """CSV downloads for organizers: judgments, questions, audit events."""
    from .imports import export_events, export_judgments, export_questions
    collection = get_object_or_404(Collection, slug=slug)
    require_role(request, collection, ORGANIZER)
    exporters = {"judgments": export_judgments, "questions": export_questions,
                 "events": export_events}
    if what not in exporters:
        raise Http404("unknown export")
    response = HttpResponse(exporters[what](collection), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = content_disposition(f"{slug}-{what}.csv")
    return response
