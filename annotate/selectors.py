"""Reads for the annotation pages: each returns what one page needs in a fixed number of
queries."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from statistics import median
from typing import TYPE_CHECKING, Any

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import (
    BooleanField,
    Case,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    When,
)
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop, ngettext

from config.ids import request_id

from .models import (
    DEFAULT_LEVELS,
    JUDGE_ROLES,
    AnswerString,
    AnswerSynset,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    Membership,
    Question,
    QuestionStatus,
    Role,
    Source,
    is_site_staff,
    percent_done,
)

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    AnyUser = AbstractBaseUser | AnonymousUser


def collection_rows(user: AnyUser) -> list[dict[str, Any]]:
    """The collections ``user`` sees, each with their role in it and its progress."""
    collections = Collection.objects.visible_to(user).with_counts()
    roles = {
        pk: Role(role)
        for pk, role in Membership.objects.filter(user=user).values_list("collection_id", "role")
    }
    staff = is_site_staff(user)
    return [
        {
            "collection": c,
            "role": Role.ORGANIZER if staff else roles.get(c.pk),
            "percent_done": percent_done(c.n_done, c.n_questions),
        }
        for c in collections
    ]


def collection_overview(collection: Collection) -> dict[str, int]:
    """Counts shown on a collection's overview page and above its question list."""
    q = (
        Collection.objects.filter(pk=collection.pk)
        .with_counts()
        .values("n_questions", "n_done", "n_in_progress")
        .get()
    )
    s = AnswerString.objects.filter(question__collection=collection).aggregate(
        strings=Count("id"),
        correct=Count("id", filter=Q(synset__isnull=False)),
        incorrect=Count("id", filter=Q(synset__isnull=True, judged_at__isnull=False)),
        unjudged=Count("id", filter=Q(judged_at__isnull=True)),
    )
    synsets = AnswerSynset.objects.filter(question__collection=collection).count()
    runs = collection.runs.filter(withdrawn_at__isnull=True).count()  # withdrawn: not counted
    return {
        "questions": q["n_questions"],
        "done": q["n_done"],
        "in_progress": q["n_in_progress"],
        **s,
        "synsets": synsets,
        "runs": runs,
        "judged": s["correct"] + s["incorrect"],
        "percent_done": percent_done(q["n_done"], q["n_questions"]),
    }


def collection_members_list(collection: Collection) -> list[Membership]:
    """The members of ``collection`` with their users, by role then username."""
    return list(collection.memberships.select_related("user").order_by("role", "user__username"))


def collection_judges(collection: Collection) -> list[Membership]:
    """The members who may judge (organizers and assessors), by username."""
    return list(
        Membership.objects.filter(collection=collection, role__in=JUDGE_ROLES)
        .select_related("user")
        .order_by("user__username")
    )


def collection_levels_initial(collection: Collection | None) -> list[dict[str, Any]]:
    """The levels of ``collection`` (the defaults for a new one) as the level forms' initial
    data."""
    if collection is None:
        return [lv._asdict() for lv in DEFAULT_LEVELS]
    return [
        {"code": lv.code, "label": lv.label, "gain": lv.gain, "examples": lv.examples}
        for lv in collection.levels.order_by("order")
    ]


def my_queue_questions(user: AnyUser) -> list[Question]:
    """The questions assigned to ``user`` in any collection, with their counts, open ones
    first."""
    return list(Question.objects.assigned_to(user).with_counts().for_queue())


def question_by_pk(pk: int | None) -> Question | None:
    return Question.objects.filter(pk=pk).first() if pk is not None else None


def questions_by_ids(collection: Collection, ids: Sequence[int]) -> list[Question]:
    """The questions of ``collection`` among ``ids``, by id."""
    return list(Question.objects.filter(collection=collection, pk__in=ids).order_by("id"))


def users_by_ids(ids: Sequence[int]) -> list[AbstractBaseUser]:
    """The users among ``ids``, by username."""
    return list(get_user_model().objects.filter(pk__in=ids).order_by("username"))


def question_is_unassigned(question: Question) -> bool:
    """True when nobody is assigned to ``question`` (it is offered to every assessor)."""
    return not question.assessors.exists()


def workspace_edit_string(question: Question, pk: str) -> AnswerString | None:
    """The string of ``question`` the workspace's edit form shows (``?edit=<id>``), if any."""
    n = request_id(pk)
    return question.strings.filter(pk=n).first() if n is not None else None


@contextmanager
def consistent_read() -> Iterator[None]:
    """Run several reads against one state of the database, so that a write committed
    between two of them cannot show half of itself (a string in a synset the page has not
    read, say): one REPEATABLE READ, read-only transaction on PostgreSQL; one transaction on
    SQLite (which begins IMMEDIATE there: the reads wait for a writer to commit).  Inside a
    transaction already begun, that transaction decides what the reads see."""
    if connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield


def synset_labels(collection: Collection, qids: Iterable[str]) -> dict[tuple[str, str], str]:
    """(question id, synset ordinal as text) -> the synset's label (its id in the judgments
    file it was imported from), for the labelled synsets of ``qids`` (one query)."""
    rows = (
        AnswerSynset.objects.filter(question__collection=collection, question__qid__in=list(qids))
        .exclude(label="")
        .values_list("question__qid", "ordinal", "label")
    )
    return {(qid, str(ordinal)): label for qid, ordinal, label in rows if label != str(ordinal)}


def question_history(question: Question, limit: int = 30) -> list[dict[str, Any]]:
    """The latest events of a question, newest first: when, who (``user_name``), the
    action and, in words, what happened (``sentence``, see ``history_sentence``) -- the
    few fields it needs read out of the event's JSON by the database, so the snapshots
    themselves are not loaded."""
    # gold events only: an assessor's layer is not shown to the others (blindness)
    rows = list(
        JudgmentEvent.objects.filter(question=question, layer__isnull=True)
        .order_by("-id")
        .values(
            "created_at",
            "action",
            user_name=F("user__username"),
            text=KT("after__text"),
            undone_action=KT("after__undone_action"),
            level=KT("after__level"),
            ordinal=KT("after__ordinal"),
            old_text=KT("after__old_text"),
            into=KT("after__into"),
            merged=F("after__merged"),
            texts=F("after__texts"),
            source=KT("after__source"),
            assessor=KT("after__assessor"),
            judgments=KT("after__judgments"),
        )[:limit]
    )
    for row in rows:
        row["sentence"] = history_sentence(row)
    return rows


_REOPEN_WORDS = {
    Source.POOL: gettext_noop("answers of a run were pooled"),
    Source.FLAT: gettext_noop("a list of answers was imported"),
    Source.ASSESSOR: gettext_noop("a string was typed"),
}


def _quoted(text: object) -> str:
    return gettext("“%(text)s”") % {"text": text}


# action -> what happened, in the page's language; {who} is the user, {text} the string
# (quoted)
_HISTORY_WORDS = {
    "string_new_synset": gettext_noop("{who} put {text} in new {syn}{level}"),
    "string_add": gettext_noop("{who} put {text} in {syn}{level}"),
    "string_move": gettext_noop("{who} moved {text} to {syn}{level}"),
    "string_incorrect": gettext_noop("{who} judged {text} incorrect"),
    "string_level": gettext_noop("{who} gave {text}{where_of} level {level_code}"),
    "string_unjudge": gettext_noop("{who} returned {text} to the candidates"),
    "string_type": gettext_noop("{who} added the string {text}{where_to}{level}"),
    "string_edit": gettext_noop("{who} corrected {old} to {text}"),
    "string_delete": gettext_noop("{who} deleted the string {text}"),
    "question_nil": gettext_noop("{who} marked the question as having no answer (NIL)"),
    "question_notes": gettext_noop("{who} edited the notes"),
    "question_done": gettext_noop("{who} marked the question done"),
    "question_in_progress": gettext_noop("{who} reopened the question"),
    "question_todo": gettext_noop("{who} set the question back to to-do"),
    "question_claim": gettext_noop("{who} took the question"),
}
_UNDONE_WORDS = {
    "string_new_synset": gettext_noop("a new synset"),
    "string_add": gettext_noop("a string put in a synset"),
    "string_move": gettext_noop("a move"),
    "string_incorrect": gettext_noop("an incorrect judgment"),
    "string_level": gettext_noop("a level change"),
    "string_unjudge": gettext_noop("a return to the candidates"),
    "string_type": gettext_noop("a typed string"),
    "string_edit": gettext_noop("a correction"),
    "string_delete": gettext_noop("a deletion"),
    "synset_merge": gettext_noop("a merge"),
    "synset_split": gettext_noop("a split"),
    "question_nil": gettext_noop("the NIL mark"),
    "question_notes": gettext_noop("a notes edit"),
    "question_done": gettext_noop("the done mark"),
    "question_in_progress": gettext_noop("a reopening"),
}


def _merge_sentence(who: str, ev: dict[str, Any]) -> str:
    merged = ev.get("merged") or []
    if not merged:
        return gettext("%(who)s merged synsets") % {"who": who}
    return ngettext(
        "%(who)s merged synset %(numbers)s into synset %(into)s",
        "%(who)s merged synsets %(numbers)s into synset %(into)s",
        len(merged),
    ) % {"who": who, "numbers": ", ".join(str(m) for m in merged), "into": ev.get("into")}


def _split_sentence(who: str, ev: dict[str, Any]) -> str:
    strings = ", ".join(_quoted(t) for t in ev.get("texts") or []) or gettext("strings")
    return gettext("%(who)s split %(strings)s out into synset %(into)s") % {
        "who": who,
        "strings": strings,
        "into": ev.get("into"),
    }


def _undo_sentence(who: str, ev: dict[str, Any]) -> str:
    what = _UNDONE_WORDS.get(ev.get("undone_action") or "", gettext_noop("the last change"))
    return gettext("%(who)s undid %(what)s") % {"who": who, "what": gettext(what)}


def _reopen_sentence(who: str, ev: dict[str, Any]) -> str:
    # never the event's free-text reason: it names the pooled run, and run names never
    # reach assessors
    why = _REOPEN_WORDS.get(ev.get("source") or "", gettext_noop("new unjudged strings arrived"))
    return gettext("the question was reopened (%(why)s)") % {"why": gettext(why)}


def _layer_remove_sentence(who: str, ev: dict[str, Any]) -> str:
    n = ev.get("judgments") or "0"
    return ngettext(
        "%(who)s removed the layer %(assessor)s had not marked done (%(n)s judgment): they "
        "no longer judge in this collection",
        "%(who)s removed the layer %(assessor)s had not marked done (%(n)s judgments): they "
        "no longer judge in this collection",
        1 if str(n) == "1" else 2,
    ) % {"who": who, "assessor": ev.get("assessor") or gettext("an assessor"), "n": n}


# actions whose sentence is not one of _HISTORY_WORDS' patterns
_SENTENCES = {
    "synset_merge": _merge_sentence,
    "synset_split": _split_sentence,
    "undo": _undo_sentence,
    "question_reopen": _reopen_sentence,
    "layer_remove": _layer_remove_sentence,
}


def history_sentence(ev: dict[str, Any]) -> str:
    """One history line in words, e.g. ``assessor1 put “Kawabata” in synset 2 (level A)``,
    in the page's language, from the event's action and the details its JSON holds (plain
    text: the template escapes it).  An action this does not know is named by its code."""
    who = ev.get("user_name") or gettext("system")
    action = ev.get("action") or ""
    if action in _SENTENCES:
        return _SENTENCES[action](who, ev)
    text = _quoted(ev["text"]) if ev.get("text") else gettext("a string")
    words = _HISTORY_WORDS.get(action)
    if words is None:
        return f"{who}: {action.replace('_', ' ')}" + (f" {text}" if ev.get("text") else "")
    level, ordinal = ev.get("level"), ev.get("ordinal")
    return gettext(words).format(
        who=who,
        text=text,
        old=_quoted(ev.get("old_text") or "?"),
        syn=gettext("synset %(n)s") % {"n": ordinal}
        if ordinal is not None
        else gettext("a synset"),
        where_of=gettext(" (synset %(n)s)") % {"n": ordinal} if ordinal is not None else "",
        where_to=gettext(" to synset %(n)s") % {"n": ordinal}
        if ordinal is not None
        else gettext(" to the candidates"),
        level=gettext(" (level %(level)s)") % {"level": level} if level else "",
        level_code=level or "?",
    )


def queue_position(user: AnyUser, question: Question) -> tuple[int, int] | None:
    """(position, count) of ``question`` among ``user``'s open (not done) questions assigned
    to them in its collection, in the order of their queue ("question 3 of 7"); None when
    it is not one of them (one query)."""
    if not user.is_authenticated:
        return None
    pks = list(
        Question.objects.assigned_to(user)
        .filter(collection_id=question.collection_id)
        .exclude(status=QuestionStatus.DONE)
        .without_layers_done_by(user)
        .for_queue()
        .values_list("pk", flat=True)
    )
    if question.pk not in pks:
        return None
    return pks.index(question.pk) + 1, len(pks)


def _open_to(user: AnyUser, qs: QuerySet[Question]) -> QuerySet[Question]:
    """``qs`` narrowed to the questions ``user`` may judge as an assessor, in collections
    where they still judge (assessor or organizer): those assigned to them, and those nobody
    is assigned to -- offered to every assessor until one of them claims it by judging (an
    assignment left over from an earlier role counts for nothing); never a question judged in
    layers they have no layer of (``judgeable_by``).  Annotated with ``mine``."""
    through = Question.assessors.through
    mine = Exists(through.objects.filter(question_id=OuterRef("pk"), user_id=user.pk))
    anyone = Exists(through.objects.filter(question_id=OuterRef("pk")))
    member = Exists(
        Membership.objects.filter(
            collection_id=OuterRef("collection_id"),
            user_id=user.pk,
            role__in=JUDGE_ROLES,
        )
    )
    return qs.annotate(mine=mine).filter(member & (Q(mine=True) | ~anyone)).judgeable_by(user)


def unassigned_open_count(user: AnyUser) -> int:
    """Questions not done that nobody is assigned to, in the collections where ``user`` is
    an assessor: "next question" offers them to every assessor (my queue shows the count)."""
    if not user.is_authenticated:
        return 0
    open_questions = Question.objects.exclude(status=QuestionStatus.DONE)
    return _open_to(user, open_questions).filter(mine=False).count()


def _has_unjudged(user: AnyUser) -> Q:
    """Whether a question still has a string ``user`` has not judged: in their layer when
    they judge it in one (a string without their layer judgment), else in gold (a string
    with no ``judged_at``)."""
    my_layer = JudgingLayer.objects.filter(question=OuterRef("pk"), assessor_id=user.pk)
    judged_in_layer = LayerJudgment.objects.filter(
        string=OuterRef("pk"), layer__assessor_id=user.pk
    )
    left_in_layer = AnswerString.objects.filter(question=OuterRef("pk")).exclude(
        Exists(judged_in_layer)
    )
    left_in_gold = AnswerString.objects.filter(question=OuterRef("pk"), judged_at__isnull=True)
    return (Exists(my_layer) & Exists(left_in_layer)) | (~Exists(my_layer) & Exists(left_in_gold))


def next_question(
    user: AnyUser,
    *,
    collection: Collection | None = None,
    after: Question | None = None,
    organizer: bool = False,
) -> Question | None:
    """The next question for ``user`` to judge, not done: one assigned to them, else one
    nobody is assigned to in a collection where they are an assessor (any question of
    ``collection`` for an organizer); in progress first, then by id; the one after
    ``after`` when given (wrapping round).  A question with no strings at all has nothing
    to judge and is skipped.  One whose strings are all judged (in the user's layer, when
    they judge it in one) but which is not done yet comes only after every question that
    still has an unjudged string: it stays reachable, to be marked done, but "next" never
    lands there while something is left to judge elsewhere."""
    has_strings = Exists(AnswerString.objects.filter(question_id=OuterRef("pk")))
    qs = Question.objects.exclude(status=QuestionStatus.DONE).filter(has_strings)
    qs = qs.without_layers_done_by(user)  # nothing left there for them (DESIGN.md section 9)
    if collection is not None:
        qs = qs.filter(collection=collection)
    if organizer:
        rank = Case(When(status=QuestionStatus.IN_PROGRESS, then=0), default=1)
    else:
        qs = _open_to(user, qs)
        rank = Case(
            When(mine=True, status=QuestionStatus.IN_PROGRESS, then=0),
            When(mine=True, then=1),
            When(status=QuestionStatus.IN_PROGRESS, then=2),
            default=3,
        )
    if after is not None:
        qs = qs.exclude(pk=after.pk)
    qs = qs.annotate(left=ExpressionWrapper(_has_unjudged(user), output_field=BooleanField()))
    # those with something left to judge first (in SQL too: the cap keeps them), the fully
    # judged ones only when none is
    order = (F("left").desc(), "collection__name", rank, "id")
    rows = list(qs.order_by(*order).values_list("pk", "left")[:500])
    ordered = [pk for pk, left in rows if left] or [pk for pk, _ in rows]
    if not ordered:
        return None
    if after is not None:
        later = [pk for pk in ordered if pk > after.pk]
        pick = later[0] if later else ordered[0]
    else:
        pick = ordered[0]
    return Question.objects.select_related("collection").get(pk=pick)


def question_last_change(reader: AnyUser | None = None) -> Greatest:
    """A question's last change, as an annotation: its latest audit event or, when later,
    the last write of its own row (``updated_at``).  An import writes one event for the
    whole file, none per question, and stamps the questions it creates or changes: a
    question just imported changed then, not "never".  Never an event of a layer
    ``reader`` is blind to (``JudgingLayerQuerySet.blind_to``)."""
    latest_event = (
        JudgmentEvent.objects.filter(question=OuterRef("pk"))
        .exclude(layer__in=JudgingLayer.objects.blind_to(reader).values("pk"))
        .order_by()
        .values("question")
        .annotate(m=Max("created_at"))
        .values("m")
    )
    return Greatest(Coalesce(Subquery(latest_event), F("updated_at")), F("updated_at"))


def question_list_queryset(
    collection: Collection,
    *,
    status: str = "",
    assessor: str = "",
    unjudged: str = "",
    search: str = "",
    reader: AnyUser | None = None,
) -> QuerySet[Question]:
    """Questions of ``collection`` for the question list, with their counts and last
    change (``question_last_change``: not a change in a layer ``reader`` is blind to),
    filtered by status, assessor (user id or ``none``), has-unjudged and a search in qid
    and text."""
    qs = (
        Question.objects.filter(collection=collection)
        .with_counts()
        .annotate(last_change=question_last_change(reader))
        .order_by("id")
    )
    if status:
        qs = qs.filter(status=status)
    if assessor == "none":
        qs = qs.filter(assessors__isnull=True)
    elif request_id(assessor) is not None:
        qs = qs.filter(assessors=request_id(assessor))
    if unjudged == "1":
        qs = qs.filter(n_unjudged__gt=0)
    elif unjudged == "0":
        qs = qs.filter(n_unjudged=0)
    if search:
        qs = qs.filter(Q(qid__icontains=search) | Q(text__icontains=search))
    return qs


def attach_assessors(questions: list[Question]) -> None:
    """Set ``q.assessor_names`` on each question with one query."""
    through = Question.assessors.through
    names: dict[int, list[str]] = {q.pk: [] for q in questions}
    for qid, username in (
        through.objects.filter(question_id__in=names)
        .values_list("question_id", "user__username")
        .order_by("user__username")
    ):
        names[qid].append(username)
    for q in questions:
        q.assessor_names = names[q.pk]


# -- the organizer's dashboard ------------------------------------------------------------
STRING_JUDGING_ACTIONS = ("string_new_synset", "string_add", "string_incorrect")


@dataclass
class AssessorActivity:
    user_id: int
    username: str
    is_assessor: bool  # an assessor member (organizers who judge are listed too)
    questions_today: int = 0  # questions with a judgment of theirs since midnight
    questions_total: int = 0
    strings_today: int = 0  # strings they judged (into a synset, or incorrect)
    strings_total: int = 0
    done_total: int = 0  # questions they marked done
    median_seconds: float | None = None  # first judgment to "done", per question


@dataclass
class Dashboard:
    questions: int
    done: int
    in_progress: int
    todo: int
    percent_done: int
    strings: int
    unjudged: int
    assessors: list[AssessorActivity]
    stuck: list[dict]  # in progress, no change for ``stuck_after``, oldest first
    reopened_by_pooling: list[dict]  # reopened because a run's answers were pooled
    stuck_after: timedelta
    since: datetime  # "today" starts here (local midnight)

    @property
    def stuck_hours(self) -> int:
        return round(self.stuck_after.total_seconds() / 3600)


def collection_dashboard(
    collection: Collection,
    *,
    now: datetime | None = None,
    stuck_after: timedelta = timedelta(hours=24),
    limit: int = 50,
    reader: AnyUser | None = None,
) -> Dashboard:
    """What an organizer needs to steer a campaign, in a fixed number of queries: progress,
    per assessor the questions and strings judged today and in all with the median time
    from a question's first judgment to its "done", the questions stuck in progress (by
    their last change, not one in a layer ``reader`` is blind to), and the questions that
    pooling reopened."""
    now = now or timezone.now()
    since = timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    overview = collection_overview(collection)
    events = JudgmentEvent.objects.filter(collection=collection, user__isnull=False)
    # a judgment that was undone is no judgment: not a string judged, today or ever
    undone = set(
        JudgmentEvent.objects.filter(collection=collection, action="undo").values_list(
            "after__undoes", flat=True
        )
    )
    rows = list(
        events.filter(Q(action__in=STRING_JUDGING_ACTIONS) | Q(action="question_done"))
        .order_by("id")
        .values_list("pk", "user_id", "question_id", "action", "created_at")
    )
    activity: dict[int, dict] = {}
    for pk, user_id, question_id, action, at in rows:
        if pk in undone:
            continue
        a = activity.setdefault(
            user_id,
            {
                "q": set(),
                "q_today": set(),
                "s": 0,
                "s_today": 0,
                "first": {},
                "spans": [],
                "done": 0,
            },
        )
        if action == "question_done":
            a["done"] += 1
            first = a["first"].pop(question_id, None)
            if first is not None:
                a["spans"].append((at - first).total_seconds())
            continue
        a["q"].add(question_id)
        a["s"] += 1
        a["first"].setdefault(question_id, at)
        if at >= since:
            a["q_today"].add(question_id)
            a["s_today"] += 1
    assessors = set(
        Membership.objects.filter(collection=collection, role=Role.ASSESSOR).values_list(
            "user_id", flat=True
        )
    )
    names = dict(
        get_user_model()
        .objects.filter(pk__in=assessors | activity.keys())
        .values_list("pk", "username")
    )
    people = []
    for user_id in sorted(names, key=lambda pk: names[pk].lower()):
        a = activity.get(user_id)
        row = AssessorActivity(
            user_id=user_id, username=names[user_id], is_assessor=user_id in assessors
        )
        if a is not None:
            row.questions_today, row.questions_total = len(a["q_today"]), len(a["q"])
            row.strings_today, row.strings_total = a["s_today"], a["s"]
            row.done_total = a["done"]
            row.median_seconds = median(a["spans"]) if a["spans"] else None
        people.append(row)
    last_change = (
        Question.objects.filter(collection=collection, status=QuestionStatus.IN_PROGRESS)
        .annotate(last=question_last_change(reader))
        .filter(last__lt=now - stuck_after)
    )
    stuck = list(last_change.order_by("last", "qid").values("pk", "qid", "last")[:limit])
    attach = {q["pk"]: q for q in stuck}
    for q in Question.objects.filter(pk__in=attach).prefetch_related("assessors"):
        attach[q.pk]["assessors"] = sorted(u.username for u in q.assessors.all())
    reopened = list(
        JudgmentEvent.objects.filter(
            collection=collection,
            action="question_reopen",
            after__source=Source.POOL,
            question__isnull=False,
        )
        .order_by("-id")
        .values("question_id", "question__qid", "question__status", "after__reason", "created_at")[
            :limit
        ]
    )
    for e in reopened:
        e["status_label"] = QuestionStatus(e["question__status"]).label
    return Dashboard(
        questions=overview["questions"],
        done=overview["done"],
        in_progress=overview["in_progress"],
        todo=overview["questions"] - overview["done"] - overview["in_progress"],
        percent_done=overview["percent_done"],
        strings=overview["strings"],
        unjudged=overview["unjudged"],
        assessors=people,
        stuck=stuck,
        reopened_by_pooling=reopened,
        stuck_after=stuck_after,
        since=since,
    )


def organizer_next_steps(collection: Collection, stats: dict) -> list[dict]:
    """The steps that remain before a collection can be judged, for its organizer: import
    questions, add assessors, assign the questions nobody is assigned to.  Empty once the
    collection is set up."""
    steps = []
    if not stats["questions"]:
        steps.append(
            {
                "step": "import",
                "text": gettext(
                    "Import the questions (a CSV or TSV of id and text), then the answers to "
                    "judge or a judgments file."
                ),
            }
        )
    has_assessors = Membership.objects.filter(collection=collection, role=Role.ASSESSOR).exists()
    if not has_assessors:
        text = gettext("Add assessors (and participants) as members.")
        steps.append({"step": "members", "text": text})
    if stats["questions"] and has_assessors:
        unassigned = Question.objects.filter(collection=collection, assessors=None).count()
        if unassigned == stats["questions"]:
            steps.append(
                {
                    "step": "assign",
                    "text": gettext(
                        "Assign the %(n)s questions to assessors (unassigned ones are offered "
                        "to every assessor)."
                    )
                    % {"n": unassigned},
                }
            )
    return steps
