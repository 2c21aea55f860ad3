"""Writes of the annotation app (STYLE.md habit 2).

Every function here is keyword-only, runs in one transaction and writes one
``JudgmentEvent``.  Judging operations lock their question row (``select_for_update``),
compare the version the page was rendered with, check that the edit is still meaningful
(the string is still in the state the assessor saw) and bump ``Question.version``; a stale
edit that is no longer meaningful raises ``Conflict`` and writes nothing.  A synset the page
named by its number (``PageSynset``) is resolved under that lock too, and refused when the
number no longer means the synset the page showed.  Every change of a
judgment also bumps the collection's ``judgment_version`` (scores are cached by it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import Exists, F, OuterRef
from django.utils import timezone

from evaluation.metrics.gains import check_gain
from evaluation.metrics.normalize import MATCH_MODES, NIL, normalize_many

from .models import (
    DEFAULT_LEVELS,
    JUDGE_ROLES,
    AnswerString,
    AnswerSynset,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    Level,
    LevelRow,
    Membership,
    Question,
    QuestionStatus,
    Role,
    Source,
    is_site_staff,
    string_token,
)
from .normalize import normalize_answer
from .signals import matching_mode_changed

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    AnyUser = AbstractBaseUser | AnonymousUser
    # a level by instance, id or code; None: the default the operation names
    LevelRef = Level | int | str | None


class Conflict(Exception):
    """A write refused because the question changed under the assessor (or the request
    no longer makes sense); nothing was written."""


@dataclass(frozen=True)
class PageSynset:
    """A synset named by its number on the assessor's page (a digit key, a typed number):
    ``ordinal`` as the page showed it and ``pk``, the synset that number meant there (None
    when the page did not say, as a plain form post without the page's synset list).
    Resolved under the question's lock by ``_Edit.synset``: an edit whose number has
    changed meaning since the page was rendered is refused."""

    ordinal: int
    pk: int | None = None


def collection_judgments_changed(*, collection_id: int) -> None:
    """Bump the collection's judgment version: cached scores of older versions go stale."""
    Collection.objects.filter(pk=collection_id).update(
        judgment_version=F("judgment_version") + 1, judgments_changed_at=timezone.now()
    )


# -- strings that come unjudged: the question is not done ---------------------------------
def questions_reopen(
    *,
    question_ids: Iterable[int],
    by: AnyUser | None = None,
    reason: str,
    record: bool = True,
    source: str = "",
) -> list[int]:
    """The one rule for every writer that adds strings to questions or brings strings back
    unjudged (pooling, a flat answer list, a typed string, an undo, a string sent back to
    the pool): a question that has an unjudged string is not done.  Each of ``question_ids``
    that is done and has an unjudged string goes back to in progress -- and so back into
    its assessors' queues and "next question".  With ``record``, each gets a
    ``question_reopen`` event naming ``reason`` (a judging operation records the change in
    its own event instead); ``source`` (a ``Source``: pool, import) is recorded with it, so
    the organizer's dashboard can count the questions pooling reopened.  Returns the ids
    reopened."""
    unjudged = AnswerString.objects.filter(question=OuterRef("pk"), judged_at__isnull=True)
    rows = list(
        Question.objects.filter(pk__in=list(question_ids), status=QuestionStatus.DONE)
        .filter(Exists(unjudged))
        .values_list("pk", "collection_id")
    )
    if not rows:
        return []
    Question.objects.filter(pk__in=[pk for pk, _ in rows]).update(
        status=QuestionStatus.IN_PROGRESS
    )  # the callers bump the versions
    if record:
        user = by if by is not None and by.is_authenticated else None
        JudgmentEvent.objects.bulk_create(
            JudgmentEvent(
                collection_id=c,
                question_id=pk,
                user=user,
                action="question_reopen",
                before={"status": QuestionStatus.DONE},
                after={
                    "status": QuestionStatus.IN_PROGRESS,
                    "reason": reason,
                    **({"source": source} if source else {}),
                },
            )
            for pk, c in rows
        )
    return [pk for pk, _ in rows]


def spellings_fold(
    rows: Iterable[tuple[int, str, str]], known: dict[tuple[int, str], list[str]] | None = None
) -> dict[tuple[int, str], list[str]]:
    """Spellings with one matching key are one string (DESIGN.md section 4): ``rows`` of
    (question id, key, spelling) -> (question id, key) -> the spellings not yet in
    ``known`` (a string's text and variants), first seen first, each once.  The judgments
    import folds its rows the same way."""
    known = known or {}
    out: dict[tuple[int, str], list[str]] = {}
    for q, key, text in rows:
        text = text.strip()
        if not key or not text or text in known.get((q, key), ()):
            continue
        spellings = out.setdefault((q, key), [])
        if text not in spellings:
            spellings.append(text)
    return out


@dataclass
class StringsAdded:
    """What ``strings_add_unjudged`` did."""

    added: int = 0  # new strings
    spellings: int = 0  # spellings kept as variants (of a new or an existing string)
    questions: list[int] = field(default_factory=list)  # questions that gained a string
    reopened: list[int] = field(default_factory=list)  # done questions back in progress


@transaction.atomic
def strings_add_unjudged(
    *, rows: Iterable[tuple[int, str, str]], source: str, by: AnyUser | None = None, reason: str
) -> StringsAdded:
    """Add unjudged strings from ``rows`` of (question id, key, spelling): pooled run
    answers, a flat answer list.  Spellings with one key fold into one string (the first
    its text, the others its variants); a spelling of a string the question already has
    joins that string's variants (nothing is lost, nothing is judged again).  The
    questions are locked first, so a question cannot be marked done under the new strings;
    a done question that gains a string is reopened (``questions_reopen``)."""
    rows = [(q, key, text) for q, key, text in rows if key]
    qids = sorted({q for q, _, _ in rows})
    result = StringsAdded()
    if not qids:
        return result
    list(
        Question.objects.select_for_update(no_key=True)
        .filter(pk__in=qids)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    existing = {
        (s.question_id, s.key): s
        for s in AnswerString.objects.filter(question_id__in=qids).only(
            "pk", "question_id", "key", "text", "variants"
        )
    }
    known = {k: [s.text, *s.variants] for k, s in existing.items()}
    new, grown = [], []
    for (q, key), spellings in spellings_fold(rows, known).items():
        s = existing.get((q, key))
        if s is None:
            new.append(
                AnswerString(
                    question_id=q, text=spellings[0], key=key, source=source, variants=spellings[1:]
                )
            )
            result.spellings += len(spellings) - 1
        else:
            s.variants = [*s.variants, *spellings]
            grown.append(s)
            result.spellings += len(spellings)
    AnswerString.objects.bulk_create(new, ignore_conflicts=True, batch_size=2000)
    AnswerString.objects.bulk_update(grown, ["variants"], batch_size=2000)
    result.added = len(new)
    result.questions = sorted({s.question_id for s in new})
    if result.questions:
        Question.objects.filter(pk__in=result.questions).update(version=F("version") + 1)
        result.reopened = questions_reopen(
            question_ids=result.questions, by=by, reason=reason, source=source
        )
    return result


# -- the judging operations ---------------------------------------------------------------
def _string_snap(s: AnswerString) -> dict:
    return {
        "text": s.text,
        "key": s.key,
        "synset": s.synset_id,
        "level": s.level_id,
        "source": s.source,
        "judged_by": s.judged_by_id,
        "judged_at": s.judged_at.isoformat() if s.judged_at else None,
        "variants": list(s.variants),
    }


def _judgment_snap(snap: dict) -> dict:
    """A string snapshot without its variants: a spelling added meanwhile (by pooling, say)
    does not block the undo of a judgment."""
    return {k: v for k, v in snap.items() if k != "variants"}


class _Edit:
    """One judging operation on one question: locks the question row, remembers the
    before-state of what it touches, and at the end removes empty synsets, renumbers the
    others 1..R, bumps the versions and writes the JudgmentEvent."""

    def __init__(
        self, *, question: Question | int, by: AnyUser | None, version: int | None, action: str
    ) -> None:
        pk = question.pk if isinstance(question, Question) else question
        # lock the question row only: locking the joined collection row as well made every
        # edit of a collection wait for the others and deadlock with a run import (which
        # holds key-share locks on the collection and its questions); "no key" still
        # serializes edits of one question without blocking foreign-key checks
        self.question = (
            Question.objects.select_for_update(of=("self",), no_key=True)
            .select_related("collection")
            .get(pk=pk)
        )
        self.stale = version is not None and int(version) != self.question.version
        self.by = by if by is not None and by.is_authenticated else None
        self.action = action
        self.now = timezone.now()
        self.synsets = list(AnswerSynset.objects.filter(question=self.question).order_by("ordinal"))
        self.before = self._question_snap()
        self.before_strings: dict[int, dict | None] = {}
        self.strings: dict[int, AnswerString] = {}
        self.deleted: set[int] = set()
        self.detail: dict = {}
        # the synset the operation put strings into: its number after renumbering goes into
        # the event (``ordinal``) for the history's sentence
        self.target: AnswerSynset | None = None

    # reads under the lock
    def _question_snap(self) -> dict:
        return {
            "version": self.question.version,
            "status": self.question.status,
            "notes": self.question.notes,
            "synsets": [[s.pk, s.note, s.label] for s in self.synsets],
        }

    def string(self, pk: int | str, expect: str | None = None) -> AnswerString:
        """The string ``pk`` of this question; with ``expect`` (its token as the page
        showed it) a string whose state has changed since is refused."""
        try:
            s = AnswerString.objects.get(pk=int(pk), question=self.question)
        except (AnswerString.DoesNotExist, ValueError, TypeError):
            raise Conflict(
                "That answer string no longer exists (someone deleted or edited it)."
            ) from None
        if expect is not None and expect != string_token(s):
            raise Conflict(
                f"“{s.text}” was changed by someone else since your page was "
                "loaded; your edit was not applied."
            )
        self.touch(s)
        return s

    def touch(self, s: AnswerString, *, created: bool = False) -> None:
        if s.pk not in self.before_strings:
            self.before_strings[s.pk] = None if created else _string_snap(s)
        self.strings[s.pk] = s

    def synset(self, pk: int | str | PageSynset) -> AnswerSynset:
        """The synset ``pk`` of this question, or the one a page named by its number (read
        under the question's lock, so it cannot change before this edit commits)."""
        if isinstance(pk, PageSynset):
            return self._page_synset(pk)
        for syn in self.synsets:
            if str(syn.pk) == str(pk):
                return syn
        raise Conflict(
            "That synset no longer exists (it was merged or emptied); your edit was not applied."
        )

    def _page_synset(self, ref: PageSynset) -> AnswerSynset:
        n = ref.ordinal
        if ref.pk is None:
            # the page did not say which synset its number meant: trust the number only if
            # nothing changed since the page was rendered
            if self.stale:
                raise Conflict(
                    f"Someone else changed this question since your page was "
                    f"loaded, so synset {n} may no longer be the one you saw; "
                    "your edit was not applied."
                )
            for syn in self.synsets:
                if syn.ordinal == n:
                    return syn
            raise Conflict(f"There is no synset {n}.")
        meant = next((syn for syn in self.synsets if syn.pk == ref.pk), None)
        if meant is None:
            raise Conflict(
                f"Synset {n} of your page no longer exists (someone merged, "
                "emptied or undid it); your edit was not applied."
            )
        if meant.ordinal != n:
            raise Conflict(
                f"The synsets were renumbered since your page was loaded: your "
                f"synset {n} is now synset {meant.ordinal}; your edit was not "
                "applied."
            )
        return meant

    def level(self, level: LevelRef) -> Level:
        levels = list(Level.objects.filter(collection_id=self.question.collection_id))
        if level is None:
            return min(levels, key=lambda lv: lv.order)
        for lv in levels:
            if lv == level or str(lv.pk) == str(level) or lv.code == level:
                return lv
        raise Conflict(f"Unknown level {level!r}.")

    # writes
    def new_synset(self) -> AnswerSynset:
        syn = AnswerSynset.objects.create(question=self.question, ordinal=len(self.synsets) + 1)
        self.synsets.append(syn)
        return syn

    def place(
        self,
        s: AnswerString,
        synset: AnswerSynset | None,
        level: Level | None,
        *,
        judged: bool = True,
    ) -> None:
        s.synset, s.level = synset, level if synset is not None else None
        s.judged_at = self.now if judged else None
        s.judged_by = self.by if judged else None
        s.save(update_fields=["synset", "level", "judged_at", "judged_by"])

    def finish(self, *, judgments: bool = True) -> JudgmentEvent:
        q = self.question
        used = set(
            AnswerString.objects.filter(question=q, synset__isnull=False)
            .values_list("synset_id", flat=True)
            .distinct()
        )
        empty = [s for s in self.synsets if s.pk not in used]
        if empty:
            AnswerSynset.objects.filter(pk__in=[s.pk for s in empty]).delete()
            self.synsets = [s for s in self.synsets if s.pk in used]
        _renumber(self.synsets)
        if judgments and self.action != "undo" and q.status == QuestionStatus.TODO:
            q.status = QuestionStatus.IN_PROGRESS
        q.version += 1
        q.save(update_fields=["version", "status", "notes", "updated_at"])
        if q.status == QuestionStatus.DONE and questions_reopen(
            question_ids=[q.pk], by=self.by, reason=self.action, record=False
        ):
            # a string came (back) unjudged: this event records the reopening
            q.status = QuestionStatus.IN_PROGRESS
            self.detail["reopened"] = True
        if judgments:
            collection_judgments_changed(collection_id=q.collection_id)
        if self.target is not None:
            self.detail["ordinal"] = self.target.ordinal
        after = self._question_snap()
        before = dict(self.before, strings={str(k): v for k, v in self.before_strings.items()})
        after["strings"] = {
            str(k): (None if k in self.deleted else _string_snap(s))
            for k, s in self.strings.items()
        }
        return JudgmentEvent.objects.create(
            collection_id=q.collection_id,
            question=q,
            user=self.by,
            action=self.action,
            before=before,
            after=dict(after, **self.detail),
        )


def _renumber(synsets: Sequence[AnswerSynset]) -> None:
    """Give ``synsets`` (in this order) the ordinals 1..R, in two passes so the unique
    (question, ordinal) constraint holds at every step."""
    wrong = [s for i, s in enumerate(synsets, start=1) if s.ordinal != i]
    if not wrong:
        return
    top = max([s.ordinal for s in synsets] + [len(synsets)]) + 1
    for i, s in enumerate(wrong):
        s.ordinal = top + i
    AnswerSynset.objects.bulk_update(wrong, ["ordinal"])
    for i, s in enumerate(synsets, start=1):
        s.ordinal = i
    AnswerSynset.objects.bulk_update(wrong, ["ordinal"])


@transaction.atomic
def string_judge(
    *,
    question: Question | int,
    string: int,
    by: AnyUser | None,
    synset: int | PageSynset | None = None,
    new_synset: bool = False,
    level: LevelRef = None,
    expect: str | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Judge ``string``: put it into ``synset`` (or a new synset when ``new_synset``) with
    ``level`` (the collection's highest level when None), or mark it incorrect when
    neither is given.  Also moves a string between synsets.  ``synset`` is an id or a
    ``PageSynset`` (a number on the assessor's page)."""
    op = _Edit(
        question=question,
        by=by,
        version=version,
        action="string_new_synset"
        if new_synset
        else "string_add"
        if synset is not None
        else "string_incorrect",
    )
    s = op.string(string, expect)
    if new_synset:
        lv = op.level(level)
        target = op.new_synset()
    elif synset is not None:
        target = op.synset(synset)
        if s.synset_id is not None and s.synset_id != target.pk:
            op.action = "string_move"
        lv = op.level(level if level is not None else s.level_id)
    else:
        target, lv = None, None
    op.place(s, target, lv)
    op.detail = {"text": s.text, **({"level": lv.code} if lv is not None else {})}
    op.target = target
    return op.finish()


@transaction.atomic
def string_set_level(
    *,
    question: Question | int,
    string: int,
    level: LevelRef,
    by: AnyUser | None,
    expect: str | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Change the level of a string that is in a synset."""
    op = _Edit(question=question, by=by, version=version, action="string_level")
    s = op.string(string, expect)
    if s.synset_id is None:
        raise Conflict(f"“{s.text}” is not in a synset, so it has no level.")
    lv = op.level(level)
    op.place(s, s.synset, lv)
    op.detail = {"text": s.text, "level": lv.code}
    op.target = s.synset
    return op.finish()


@transaction.atomic
def string_unjudge(
    *,
    question: Question | int,
    string: int,
    by: AnyUser | None,
    expect: str | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Send a judged string back to the pool."""
    op = _Edit(question=question, by=by, version=version, action="string_unjudge")
    s = op.string(string, expect)
    op.place(s, None, None, judged=False)
    op.detail = {"text": s.text}
    return op.finish()


def _key_free(op: _Edit, key: str, *, except_pk: int | None = None) -> None:
    if not key:
        raise Conflict("An answer string cannot be empty (after normalization).")
    clash = AnswerString.objects.filter(question=op.question, key=key).exclude(pk=except_pk).first()
    if clash is not None:
        raise Conflict(
            f"“{clash.text}” already has the same matching key; edit that string instead."
        )


@transaction.atomic
def string_add(
    *,
    question: Question | int,
    text: str,
    by: AnyUser | None,
    synset: int | PageSynset | None = None,
    new_synset: bool = False,
    level: LevelRef = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Add a string typed by an assessor: to the pool (unjudged), or straight into
    ``synset`` / a new synset with ``level``."""
    op = _Edit(question=question, by=by, version=version, action="string_type")
    text = text.strip()
    key = normalize_answer(text, op.question.collection.matching_mode)
    _key_free(op, key)
    s = AnswerString(question=op.question, text=text, key=key, source=Source.ASSESSOR)
    if new_synset or synset is not None:
        target = op.new_synset() if new_synset else op.synset(synset)
        s.synset, s.level = target, op.level(level)
        s.judged_at, s.judged_by = op.now, op.by
        op.target = target
    s.save()
    op.touch(s, created=True)
    op.detail = {"text": text, **({"level": s.level.code} if s.level is not None else {})}
    return op.finish(judgments=s.synset_id is not None)


@transaction.atomic
def string_edit(
    *,
    question: Question | int,
    string: int,
    text: str,
    by: AnyUser | None,
    expect: str | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Correct the text of a string (its key follows); a key that another string of the
    question already has is refused.  Spellings kept as variants stay only while they still
    match the new key; the others are named in the event (and come back with an undo)."""
    op = _Edit(question=question, by=by, version=version, action="string_edit")
    s = op.string(string, expect)
    text = text.strip()
    mode = op.question.collection.matching_mode
    key = normalize_answer(text, mode)
    _key_free(op, key, except_pk=s.pk)
    # the old text stays as a spelling while it still matches (a capitalisation fix, say)
    spellings = list(dict.fromkeys([s.text, *s.variants]))
    kept = [v for v in spellings if v != text and normalize_answer(v, mode) == key]
    op.detail = {"text": text, "old_text": s.text}
    dropped = [v for v in s.variants if v not in kept and v != text]
    if dropped:
        op.detail["dropped_variants"] = dropped
    s.text, s.key, s.variants = text, key, kept
    s.save(update_fields=["text", "key", "variants"])
    return op.finish()


def _layer_judged(strings: Sequence[AnswerString], what: str) -> None:
    """Conflict when one of ``strings`` is judged in assessors' layers (DESIGN.md section
    9): deleting it would delete those judgments with it, and gold's undo brings back the
    string, not them."""
    counts: dict[int, int] = {}
    for pk in LayerJudgment.objects.filter(string__in=[s.pk for s in strings]).values_list(
        "string_id", flat=True
    ):
        counts[pk] = counts.get(pk, 0) + 1
    judged = [(s, counts[s.pk]) for s in strings if s.pk in counts]
    if judged:
        s, n = judged[0]
        raise Conflict(
            f"“{s.text}” is judged in {n} assessor layer{'s' if n != 1 else ''} of this "
            f"question; it cannot be {what}, which would delete those judgments "
            "(judge it in gold instead)."
        )


@transaction.atomic
def string_delete(
    *,
    question: Question | int,
    string: int,
    by: AnyUser | None,
    expect: str | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Delete a string (a typo, say); an empty synset left behind disappears.  Refused
    when assessors judged it in their layers (``_layer_judged``)."""
    op = _Edit(question=question, by=by, version=version, action="string_delete")
    s = op.string(string, expect)
    _layer_judged([s], "deleted")
    op.detail = {"text": s.text}
    pk = s.pk
    s.delete()
    s.pk = pk
    op.deleted.add(pk)
    return op.finish()


@transaction.atomic
def synset_merge(
    *,
    question: Question | int,
    synsets: Sequence[int | PageSynset],
    by: AnyUser | None,
    version: int | None = None,
) -> JudgmentEvent:
    """Merge ``synsets[1:]`` into ``synsets[0]``; every string keeps its level."""
    op = _Edit(question=question, by=by, version=version, action="synset_merge")
    targets = [op.synset(pk) for pk in synsets]
    if len({t.pk for t in targets}) < 2:
        raise Conflict("Choose at least two different synsets to merge.")
    into, others = targets[0], targets[1:]
    moving = list(AnswerString.objects.filter(synset__in=others))
    for s in moving:
        op.touch(s)
        s.synset = into
    AnswerString.objects.bulk_update(moving, ["synset"])
    op.detail = {"into": into.ordinal, "merged": [t.ordinal for t in others]}
    return op.finish()


@transaction.atomic
def synset_split(
    *,
    question: Question | int,
    strings: Sequence[int],
    by: AnyUser | None,
    expect: Sequence[str] | None = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Move ``strings`` (all in synsets) out into one new synset; levels are kept."""
    op = _Edit(question=question, by=by, version=version, action="synset_split")
    expect = list(expect) if expect else [None] * len(strings)
    picked = [op.string(pk, e) for pk, e in zip(strings, expect, strict=True)]
    if not picked or any(s.synset_id is None for s in picked):
        raise Conflict("Only strings in a synset can be split out.")
    target = op.new_synset()
    for s in picked:
        op.place(s, target, s.level)
    op.detail = {"texts": [s.text for s in picked], "into": target.ordinal}
    return op.finish()


@transaction.atomic
def question_mark_nil(
    *,
    question: Question | int,
    by: AnyUser | None,
    level: LevelRef = None,
    version: int | None = None,
) -> JudgmentEvent:
    """Mark the question as having no answer: one synset holding ``NIL``; every other
    string is judged incorrect (paper, Example 3)."""
    op = _Edit(question=question, by=by, version=version, action="question_nil")
    key = normalize_answer(NIL, op.question.collection.matching_mode)
    lv = op.level(level)
    strings = list(AnswerString.objects.filter(question=op.question))
    nil = next((s for s in strings if s.key == key), None)
    for s in strings:
        op.touch(s)
    if nil is None:
        nil = AnswerString.objects.create(
            question=op.question, text=NIL, key=key, source=Source.ASSESSOR
        )
        op.touch(nil, created=True)
    target = op.new_synset()
    op.place(nil, target, lv)
    for s in strings:
        if s.pk != nil.pk and (s.synset_id is not None or s.judged_at is None):
            op.place(s, None, None)
    return op.finish()


@transaction.atomic
def question_set_notes(
    *, question: Question | int, notes: str, by: AnyUser | None, version: int | None = None
) -> JudgmentEvent:
    op = _Edit(question=question, by=by, version=version, action="question_notes")
    op.question.notes = notes.strip()
    return op.finish(judgments=False)


@transaction.atomic
def question_set_status(
    *, question: Question | int, status: str, by: AnyUser | None, version: int | None = None
) -> JudgmentEvent:
    """Mark a question done (or reopen it)."""
    if status not in QuestionStatus.values:
        raise Conflict(f"Unknown status {status!r}.")
    op = _Edit(question=question, by=by, version=version, action=f"question_{status}")
    if (
        status == QuestionStatus.DONE
        and AnswerString.objects.filter(question=op.question, judged_at__isnull=True).exists()
    ):
        raise Conflict("Judge every candidate before marking the question done.")
    op.question.status = status
    return op.finish(judgments=False)


def _undoable(question: Question) -> JudgmentEvent | None:
    """The latest action on ``question`` not undone yet; None when there is none or when
    it was a bulk write (an import) that cannot be undone here."""
    undone: set[int] = set()
    # an assessor's layer has its own undo (annotate/layers.py): gold undoes gold events
    for event in question.events.filter(layer__isnull=True).order_by("-id")[:500]:
        if event.action in ("question_reopen", "layer_remove"):
            # a consequence of strings added, or of an assessor leaving: no act on gold
            continue
        if event.action == "undo":
            undone.add(event.after.get("undoes"))
        elif event.pk not in undone:
            return event if "strings" in event.after else None
    return None


def _undo_checked(op: _Edit, event: JudgmentEvent) -> tuple[dict, list, dict]:
    """The before-state of ``event`` after checking, before anything is written, that it
    names only rows of the question being undone (or none at all: a deleted string or
    synset is recreated under its old id), levels of its collection, and users that exist;
    and that every string the event touched is still as the event left it.  Returns
    (string snapshots by id, synset rows [id, note, label], current strings by id).
    Raises Conflict otherwise."""
    unreadable = Conflict("The record of that action cannot be read; it cannot be undone.")
    before, after = event.before, event.after
    try:
        snaps = {int(k): v for k, v in before["strings"].items()}
        after_snaps = {int(k): v for k, v in after["strings"].items()}
        synsets = [
            (int(row[0]), str(row[1]), str(row[2]) if len(row) > 2 else "")
            for row in before["synsets"]
        ]
        for snap in list(snaps.values()) + list(after_snaps.values()):
            if snap is not None and not (
                isinstance(snap, dict)
                and isinstance(snap["key"], str)
                and isinstance(snap["text"], str)
            ):
                raise TypeError
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        raise unreadable from None
    ids = set(snaps) | set(after_snaps)
    foreign = Conflict(
        "That action names answer strings or synsets of another question; it cannot be undone."
    )
    if AnswerString.objects.filter(pk__in=ids).exclude(question=op.question).exists():
        raise foreign
    syn_ids = {pk for pk, _, _ in synsets}
    if AnswerSynset.objects.filter(pk__in=syn_ids).exclude(question=op.question).exists():
        raise foreign
    current = {s.pk: s for s in AnswerString.objects.filter(question=op.question, pk__in=ids)}
    for pk, snap in after_snaps.items():
        s = current.get(pk)
        if (snap is None) != (s is None) or (
            s is not None and _judgment_snap(_string_snap(s)) != _judgment_snap(snap)
        ):
            raise Conflict("The strings of that action have changed since; it cannot be undone.")
    levels = set(
        Level.objects.filter(collection_id=op.question.collection_id).values_list("pk", flat=True)
    )
    restored = [snap for snap in snaps.values() if snap is not None]
    for snap in restored:
        synset, level = snap.get("synset"), snap.get("level")
        if synset is not None and synset not in syn_ids:
            raise unreadable
        if level is not None and level not in levels:
            raise Conflict("That action names a level that no longer exists; it cannot be undone.")
        if (synset is None) != (level is None) or (
            synset is not None and not snap.get("judged_at")
        ):
            raise unreadable
        try:
            if snap["judged_at"]:
                datetime.fromisoformat(snap["judged_at"])
        except (KeyError, TypeError, ValueError):
            raise unreadable from None
        if (
            snap.get("source") not in Source.values
            or not isinstance(snap.get("judged_by"), int | None)
            or not isinstance(snap.get("variants", []), list)
        ):
            raise unreadable
    if before.get("status") not in QuestionStatus.values or not isinstance(
        before.get("notes"), str
    ):
        raise unreadable
    # keys: a restored string must not take the key of a string added since (by pooling)
    keys = [snap["key"] for snap in restored]
    others = AnswerString.objects.filter(question=op.question, key__in=keys).exclude(pk__in=ids)
    if len(set(keys)) != len(keys) or others.exists():
        raise Conflict(
            "An answer string of that action has been added again since; it cannot be undone."
        )
    return snaps, synsets, current


@transaction.atomic
def question_undo(
    *,
    question: Question | int,
    by: AnyUser | None,
    any_user: bool = False,
    version: int | None = None,
) -> JudgmentEvent:
    """Undo the latest action on the question by restoring its event's before-state.
    Refused (nothing written) when that action was someone else's, when its objects
    changed since, or when its record names anything outside the question."""
    op = _Edit(question=question, by=by, version=version, action="undo")
    event = _undoable(op.question)
    if event is None:
        raise Conflict("Nothing to undo.")
    if event.user_id != (op.by.pk if op.by else None) and not any_user:
        raise Conflict(
            f"The last change was made by {event.user or 'someone else'}; only they can undo it."
        )
    snaps, synsets, current = _undo_checked(op, event)
    users = set(
        get_user_model()
        .objects.filter(pk__in={snap.get("judged_by") for snap in snaps.values() if snap})
        .values_list("pk", flat=True)
    )
    # synsets: recreate deleted ones (with their old id), then restore the old order
    have = {s.pk: s for s in op.synsets}
    order = []
    for pk, note, label in synsets:
        syn = have.get(pk)
        if syn is None:
            syn = AnswerSynset.objects.create(
                pk=pk, question=op.question, ordinal=10_000_000 + pk, note=note, label=label
            )
        elif syn.note != note:
            syn.note = note
            syn.save(update_fields=["note"])
        order.append(syn)
    kept = {s.pk for s in order}
    extra = [s for s in op.synsets if s.pk not in kept]
    op.synsets = order + extra
    # undoing a string's arrival would delete it, and with it its layer judgments
    _layer_judged(
        [current[pk] for pk, snap in snaps.items() if snap is None and pk in current],
        "removed by the undo",
    )
    for pk, snap in snaps.items():
        s = current.get(pk)
        if snap is None:
            if s is not None:
                op.touch(s)
                s.delete()
                s.pk = pk
                op.deleted.add(pk)
            continue
        if s is None:
            s = AnswerString(pk=pk, question=op.question, variants=snap.get("variants", []))
            op.touch(s, created=True)
        else:
            op.touch(s)
            # spellings an edit dropped come back; spellings added since stay if they match
            mode = op.question.collection.matching_mode
            s.variants = [
                v
                for v in dict.fromkeys([*snap.get("variants", []), *s.variants])
                if v != snap["text"] and normalize_answer(v, mode) == snap["key"]
            ]
        s.text, s.key, s.source = snap["text"], snap["key"], snap["source"]
        s.synset_id, s.level_id = snap.get("synset"), snap.get("level")
        s.judged_by_id = snap["judged_by"] if snap.get("judged_by") in users else None
        s.judged_at = datetime.fromisoformat(snap["judged_at"]) if snap["judged_at"] else None
        s.save(force_insert=pk in op.before_strings and op.before_strings[pk] is None)
    op.question.status = event.before["status"]
    op.question.notes = event.before["notes"]
    op.detail = {"undoes": event.pk, "undone_action": event.action}
    return op.finish()


@transaction.atomic
def question_claim(*, question: Question | int, by: AnyUser | None) -> bool:
    """Assign a question nobody is assigned to to ``by``, the assessor who judges it first
    (such questions are offered to every assessor of the collection; the first change
    claims it, so two assessors do not judge it side by side).  Returns False when ``by``
    is assigned already; Conflict when someone else claimed it meanwhile."""
    pk = question.pk if isinstance(question, Question) else question
    q = Question.objects.select_for_update(of=("self",), no_key=True).get(pk=pk)
    through = Question.assessors.through
    assigned = list(through.objects.filter(question_id=q.pk).values_list("user_id", flat=True))
    if by.pk in assigned:
        return False
    if assigned:
        raise Conflict("Another assessor took this question meanwhile; your edit was not applied.")
    through.objects.create(question_id=q.pk, user_id=by.pk)
    JudgmentEvent.objects.create(
        collection_id=q.collection_id,
        question=q,
        user=by,
        action="question_claim",
        after={"assessor": by.get_username()},
    )
    return True


# -- organizer writes -------------------------------------------------------------------------
@transaction.atomic
def questions_assign(
    *,
    collection: Collection,
    questions: Sequence[Question],
    assessors: Iterable[AbstractBaseUser],
    by: AnyUser | None,
    round_robin: bool = True,
    replace: bool = True,
) -> int:
    """Assign ``questions`` to ``assessors`` (members of the collection): round-robin gives
    each question one assessor in turn, otherwise each gets all of them; ``replace`` drops
    the current assignments first -- but not those of the assessors who judge a question
    in a layer (DESIGN.md section 9): it stays in their queue.  Returns the number of
    questions changed."""
    assessors = list(assessors)
    members = set(
        Membership.objects.filter(collection=collection, role__in=JUDGE_ROLES).values_list(
            "user_id", flat=True
        )
    )
    strangers = [u.get_username() for u in assessors if u.pk not in members]
    if strangers:
        raise Conflict(f"Not an assessor of this collection: {', '.join(strangers)}.")
    if not assessors:
        raise Conflict("Choose at least one assessor.")
    questions = [q for q in questions if q.collection_id == collection.pk]
    through = Question.assessors.through
    ids = [q.pk for q in questions]
    if replace:
        layer = JudgingLayer.objects.filter(
            question_id=OuterRef("question_id"), assessor_id=OuterRef("user_id")
        )
        through.objects.filter(question_id__in=ids).exclude(Exists(layer)).delete()
    links = []
    for i, q in enumerate(questions):
        chosen = [assessors[i % len(assessors)]] if round_robin else assessors
        links += [through(question_id=q.pk, user_id=u.pk) for u in chosen]
    through.objects.bulk_create(links, ignore_conflicts=True)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="questions_assign",
        after={
            "questions": len(ids),
            "assessors": [u.get_username() for u in assessors],
            "round_robin": round_robin,
            "replace": replace,
        },
    )
    return len(ids)


@transaction.atomic
def collection_save(
    *,
    collection: Collection,
    levels: Sequence[LevelRow | tuple[str, str, float]] | None,
    by: AnyUser | None,
) -> Collection:
    """Create or update ``collection`` (an unsaved or changed instance) and set its levels
    (code, label, gain and optional examples; highest first).  A new collection gets S/A/B
    3/2/1 unless levels are given, and its creator becomes an organizer.  A level still used
    by a string cannot be removed (Conflict).  A changed matching mode re-keys the
    collection's strings and run answers first (``collection_set_matching_mode``;
    MatchingModeConflict, nothing written, when strings that would become one are judged
    differently)."""
    created = collection.pk is None
    if not created:
        old_mode = (
            Collection.objects.filter(pk=collection.pk)
            .values_list("matching_mode", flat=True)
            .get()
        )
        if old_mode != collection.matching_mode:
            new_mode, collection.matching_mode = collection.matching_mode, old_mode
            collection_set_matching_mode(collection=collection, mode=new_mode, by=by)
    collection.save()
    if created and not levels:
        levels = DEFAULT_LEVELS
    if levels is not None:
        levels = [LevelRow(*lv) for lv in levels]
        if not levels:
            raise Conflict("A collection needs at least one level.")
        for code, _, gain, _ in levels:
            try:
                check_gain(gain, f"the gain of level {code!r}")
            except ValueError as e:
                raise Conflict(str(e)) from e
        existing = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
        keep = {lv.code for lv in levels}
        gone = [lv for code, lv in existing.items() if code not in keep]
        used = [lv.code for lv in gone if lv.strings.exists() or lv.layer_judgments.exists()]
        if used:
            raise Conflict(
                f"Level(s) {', '.join(used)} are used by judged strings; change "
                "those strings first."
            )
        Level.objects.filter(pk__in=[lv.pk for lv in gone]).delete()
        Level.objects.filter(collection=collection).update(order=F("order") + 1000)
        for order, lv in enumerate(levels):
            Level.objects.update_or_create(
                collection=collection,
                code=lv.code,
                defaults={
                    "label": lv.label,
                    "gain": lv.gain,
                    "examples": lv.examples,
                    "order": order,
                },
            )
        collection_judgments_changed(collection_id=collection.pk)
    user = by if by is not None and by.is_authenticated else None
    if created and user is not None and not is_site_staff(user):
        Membership.objects.get_or_create(
            collection=collection, user=user, defaults={"role": Role.ORGANIZER}
        )
    JudgmentEvent.objects.create(
        collection=collection,
        user=user,
        action="collection_create" if created else "collection_update",
        after={"name": collection.name, "levels": [list(lv) for lv in levels or ()]},
    )
    return collection


@transaction.atomic
def membership_set(
    *, collection: Collection, user: AbstractBaseUser, role: str | None, by: AnyUser | None
) -> None:
    """Give ``user`` ``role`` in ``collection``; ``role`` None removes the membership.

    A collection keeps at least one organizer: the last one can neither leave nor take
    another role (Conflict, nothing written).  A member who is no longer an organizer or
    assessor (removed, or made a participant) loses every question assignment of the
    collection, so their queue no longer lists its questions, and the layers they had not
    marked done (``_open_layers_remove``)."""
    if role is not None and role not in Role.values:
        raise Conflict(f"Unknown role {role!r}.")
    # the organizer rows stay locked until the end: two organizers removing each other at
    # the same moment cannot both succeed and leave the collection without one
    organizers = set(
        Membership.objects.select_for_update()
        .filter(collection=collection, role=Role.ORGANIZER)
        .values_list("user_id", flat=True)
    )
    current = (
        Membership.objects.filter(collection=collection, user=user)
        .values_list("role", flat=True)
        .first()
    )
    if current == Role.ORGANIZER and role != Role.ORGANIZER and organizers == {user.pk}:
        raise Conflict(
            f"{user.get_username()} is the last organizer of “{collection.name}”: "
            "make another member an organizer first."
        )
    if role is None:
        Membership.objects.filter(collection=collection, user=user).delete()
    else:
        Membership.objects.update_or_create(
            collection=collection, user=user, defaults={"role": role}
        )
    dropped, layers_removed = 0, 0
    if role not in JUDGE_ROLES:
        dropped, _ = Question.assessors.through.objects.filter(
            question__collection=collection, user=user
        ).delete()
        layers_removed = _open_layers_remove(collection=collection, user=user, by=by)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="membership_set",
        after={
            "user": user.get_username(),
            "role": role,
            "assignments_dropped": dropped,
            "layers_removed": layers_removed,
        },
    )


def _open_layers_remove(
    *, collection: Collection, user: AbstractBaseUser, by: AnyUser | None
) -> int:
    """Remove the layers ``user`` has not marked done in ``collection`` (they no longer
    judge there: an open layer would keep its question from agreement forever), each with a
    ``layer_remove`` event on its question that records its judgments; their done layers
    stay, as judgments made.  A question whose remaining layers are all done and as many as
    its request's k then goes through the agreement step, as when its last layer is marked
    done (``layers.question_layers_to_gold``); with fewer it waits for another layer.
    Returns the number of layers removed."""
    from .layers import layers_complete, question_layers_to_gold  # layers builds on this

    questions = set(
        JudgingLayer.objects.filter(
            question__collection=collection, assessor=user, done_at__isnull=True
        ).values_list("question_id", flat=True)
    )
    if not questions:
        return 0
    # the questions, then every layer of them, locked in one order (as layer_mark_done
    # does): an assessor marking theirs done meanwhile either commits first (and is seen
    # done below) or waits, then sees these gone
    list(
        Question.objects.select_for_update(no_key=True)
        .filter(pk__in=questions)
        .order_by("pk")
        .values("pk")
    )
    every = list(
        JudgingLayer.objects.select_for_update(of=("self",))
        .filter(question_id__in=questions)
        .order_by("pk")
    )
    name, who = user.get_username(), by if by is not None and by.is_authenticated else None
    removed = [la for la in every if la.assessor_id == user.pk and la.done_at is None]
    for layer in removed:
        rows = {
            str(string): [group, level]
            for string, group, level in layer.judgments.values_list(
                "string_id", "group", "level_id"
            )
        }
        JudgmentEvent.objects.create(
            collection=collection,
            question_id=layer.question_id,
            user=who,
            action="layer_remove",
            before={
                "assessor": name,
                "judgments": len(rows),
                "rows": rows,
                "started_at": layer.started_at.isoformat() if layer.started_at else None,
                "layer_events": layer.events.count(),
            },
            after={
                "assessor": name,
                "judgments": len(rows),
                "reason": "no longer an assessor of the collection",
            },
        )
        layer.delete()
    for q in sorted(questions):
        # fewer layers than asked for wait for another one (``layers_request`` tops the
        # question up): one assessor's layer alone is no independent judgment
        if layers_complete(q):
            question_layers_to_gold(question=q, by=by)
    return len(removed)


# -- accounts for new members -------------------------------------------------------------
@dataclass
class Invitation:
    """A new account and the one-time link on which its owner sets a password."""

    user: object
    uidb64: str
    token: str


@transaction.atomic
def member_invite(
    *, collection: Collection, username: str, role: str, by: AnyUser | None, email: str = ""
) -> Invitation:
    """Create an account for a new member of ``collection`` (no password yet) with
    ``role``, and the token of the link on which they choose their password (Django's
    password-reset token: valid for ``PASSWORD_RESET_TIMEOUT``, and spent once a password is
    set).  Refuses (Conflict) a username that is taken."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.tokens import default_token_generator
    from django.utils.encoding import force_bytes
    from django.utils.http import urlsafe_base64_encode

    User = get_user_model()
    username = username.strip()
    if User.objects.filter(username__iexact=username).exists():
        raise Conflict(
            f"The username {username!r} is taken: add that user as a member "
            "instead, or choose another name."
        )
    user = User(username=username, email=email.strip())
    user.set_unusable_password()
    user.save()
    membership_set(collection=collection, user=user, role=role, by=by)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="member_invite",
        after={"user": username, "role": role},
    )
    return Invitation(
        user=user,
        uidb64=urlsafe_base64_encode(force_bytes(user.pk)),
        token=default_token_generator.make_token(user),
    )


# -- matching mode -----------------------------------------------------------------------------
@dataclass(frozen=True)
class RekeyConflict:
    """Strings of one question that share a key under the new matching mode but are judged
    differently: ``strings`` holds (text, judgment) pairs, first created first."""

    question: str
    key: str
    strings: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        listed = "; ".join(f'"{t}" ({j})' for t, j in self.strings)
        if not self.key:
            return f"question {self.question}: {listed} would have an empty matching key"
        return f"question {self.question}: {listed}"


class MatchingModeConflict(Conflict):
    """The matching mode was not changed: ``conflicts`` lists every group of strings to
    judge alike first, and every string whose key would be empty (key ""), which matches
    nothing: to edit or delete first."""

    def __init__(self, mode: str, conflicts: Sequence[RekeyConflict]):
        self.conflicts = list(conflicts)
        empty = [c for c in self.conflicts if not c.key]
        groups = [c for c in self.conflicts if c.key]
        parts = []
        if empty:
            parts.append(
                f"{len(empty)} string(s) would have an empty matching key and match nothing "
                "(string_add refuses such strings); edit or delete them first: "
                + " | ".join(map(str, empty))
            )
        if groups:
            parts.append(
                f"{len(groups)} group(s) of strings would be one string but are judged "
                "differently; judge them alike first: " + " | ".join(map(str, groups))
            )
        super().__init__(f"Under {mode} matching, " + ". And ".join(parts))


def _judgment_label(synset_ordinal: int | None, level_code: str | None, judged: bool) -> str:
    if synset_ordinal is not None:
        return f"synset {synset_ordinal}, level {level_code}"
    return "judged incorrect" if judged else "unjudged"


def _layer_folds(
    groups: Iterable[tuple[str, str, list[tuple[int, str]]]],
) -> tuple[list[RekeyConflict], dict[int, int], int]:
    """The assessors' layer judgments of strings that fold (``groups``: question qid, new
    key and the (pk, text) of its strings, the kept one first).  In each layer the first
    judgment among a group's strings goes to the kept string, identical ones are dropped
    with their strings, and different ones are conflicts.  Returns the conflicts, the
    judgments to move (pk: the kept string's pk) and how many duplicates go."""
    from .models import LayerJudgment

    groups = list(groups)
    by_string: dict[int, list[tuple]] = {}
    for row in (
        LayerJudgment.objects.filter(
            string_id__in=[pk for _, _, members in groups for pk, _ in members]
        )
        .order_by("layer_id", "id")
        .values_list(
            "pk", "string_id", "layer_id", "layer__assessor__username", "group", "level__code"
        )
    ):
        by_string.setdefault(row[1], []).append(row)
    conflicts: list[RekeyConflict] = []
    moved: dict[int, int] = {}
    dropped = 0
    for qid, key, members in groups:
        layers: dict[int, list[tuple[str, tuple]]] = {}
        for pk, text in members:
            for row in by_string.get(pk, ()):
                layers.setdefault(row[2], []).append((text, row))
        for marks in layers.values():
            if len({(row[4], row[5]) for _, row in marks}) > 1:
                conflicts.append(
                    RekeyConflict(
                        qid,
                        key,
                        tuple(
                            (
                                text,
                                f"{row[3]}'s layer: "
                                + _judgment_label(row[4], row[5], judged=True),
                            )
                            for text, row in marks
                        ),
                    )
                )
                continue
            if marks[0][1][1] != members[0][0]:  # the kept string is unjudged in this layer
                moved[marks[0][1][0]] = members[0][0]
            dropped += len(marks) - 1
    return conflicts, moved, dropped


@transaction.atomic
def collection_set_matching_mode(*, collection: Collection, mode: str, by: AnyUser | None) -> int:
    """Change ``collection``'s matching mode to ``mode`` and re-key its strings with the
    engine's key function (DESIGN.md section 4).  Strings of a question that get one key
    fold into the first created when their judgments agree (same synset and level, or both
    judged incorrect, or both unjudged): its text stays, the others' texts and variants
    join its variants, so nothing typed or imported is lost.  When they disagree ("Radcliffe
    Line" incorrect, "The Radcliffe Line" correct, under ``squad``) nothing is written and
    MatchingModeConflict lists every such group, and every string whose key would be empty
    ("A" or "The" under ``squad``: it would match nothing, and ``string_add`` refuses such a
    string), to edit or delete first.  The assessors' layer judgments of folded
    strings go to the kept string in their layer (an identical one there drops the
    duplicate, a different one is a conflict too), so no layer loses a judgment.  Returns
    the number of strings folded.  Run answers are keyed by the evaluation app, which
    re-keys them after this."""
    if mode not in MATCH_MODES:
        raise Conflict(f"Unknown matching mode {mode!r}.")
    given, collection = collection, Collection.objects.select_for_update().get(pk=collection.pk)
    old = collection.matching_mode
    if mode == old:
        given.matching_mode = mode
        return 0
    rows = list(
        AnswerString.objects.filter(question__collection=collection)
        .order_by("question_id", "created_at", "id")
        .values_list(
            "pk",
            "question_id",
            "question__qid",
            "text",
            "key",
            "variants",
            "synset_id",
            "synset__ordinal",
            "level__code",
            "judged_at",
        )
    )
    keys = normalize_many([r[3] for r in rows], mode)
    # a string whose key would be empty ("A" under squad) would match nothing, and
    # string_add refuses it: a conflict to resolve first (edit or delete it)
    conflicts = [
        RekeyConflict(r[2], "", ((r[3], _judgment_label(r[7], r[8], r[9] is not None)),))
        for i, r in enumerate(rows)
        if not keys[i]
    ]
    groups: dict[tuple[int, str], list[int]] = {}
    for i, r in enumerate(rows):
        if keys[i]:
            groups.setdefault((r[1], keys[i]), []).append(i)
    folded, keepers = [], {}
    for (_, key), members in groups.items():
        if len(members) < 2:
            continue
        judgments = {(rows[i][6], rows[i][8], rows[i][9] is not None) for i in members}
        if len(judgments) > 1:
            conflicts.append(
                RekeyConflict(
                    rows[members[0]][2],
                    key,
                    tuple(
                        (
                            rows[i][3],
                            _judgment_label(rows[i][7], rows[i][8], rows[i][9] is not None),
                        )
                        for i in members
                    ),
                )
            )
            continue
        first = rows[members[0]]
        spellings = [s for i in members for s in (rows[i][3], *rows[i][5])]
        keepers[first[0]] = [s for s in dict.fromkeys(spellings) if s != first[3]]
        folded += [rows[i][0] for i in members[1:]]
    layer_conflicts, moved, dropped = _layer_folds(
        (rows[members[0]][2], key, [(rows[i][0], rows[i][3]) for i in members])
        for (_, key), members in groups.items()
        if len(members) > 1
    )
    conflicts += layer_conflicts
    if conflicts:
        raise MatchingModeConflict(mode, conflicts)
    gone = set(folded)
    if folded:
        from .models import JudgingLayer, LayerJudgment

        # moved before the folded strings go: their deletion cascades to the duplicates
        LayerJudgment.objects.bulk_update(
            [LayerJudgment(pk=pk, string_id=kept) for pk, kept in moved.items()],
            ["string"],
            batch_size=2000,
        )
        # an open layer page of these questions is stale now: its strings changed
        JudgingLayer.objects.filter(question_id__in={r[1] for r in rows if r[0] in gone}).update(
            version=F("version") + 1
        )
    AnswerString.objects.filter(pk__in=folded).delete()
    changed = [
        AnswerString(pk=r[0], key=keys[i])
        for i, r in enumerate(rows)
        if r[0] not in gone and keys[i] != r[4]
    ]
    # two steps: a key may move to a string whose own key moves away (unique per question)
    AnswerString.objects.bulk_update(
        [AnswerString(pk=s.pk, key=f"\u0001rekey {s.pk}") for s in changed],
        ["key"],
        batch_size=2000,
    )
    AnswerString.objects.bulk_update(changed, ["key"], batch_size=2000)
    AnswerString.objects.bulk_update(
        [AnswerString(pk=pk, variants=v) for pk, v in keepers.items()],
        ["variants"],
        batch_size=2000,
    )
    collection.matching_mode = given.matching_mode = mode
    collection.save(update_fields=["matching_mode"])
    user = by if by is not None and by.is_authenticated else None
    JudgmentEvent.objects.create(
        collection=collection,
        user=user,
        action="matching_mode_set",
        before={"matching_mode": old},
        after={
            "matching_mode": mode,
            "folded": len(folded),
            "rekeyed": len(changed),
            "layer_judgments_moved": len(moved),
            "layer_judgments_dropped": dropped,
        },
    )
    collection_judgments_changed(collection_id=collection.pk)
    # the run answers (evaluation's) follow in the same transaction
    matching_mode_changed.send(sender=Collection, collection=collection, mode=mode)
    return len(folded)
