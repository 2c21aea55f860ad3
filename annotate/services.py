"""Writes of the annotation app (STYLE.md habit 2).

Every function here is keyword-only, runs in one transaction and writes one
``JudgmentEvent``.  Judging operations lock their question row (``select_for_update``),
compare the version the page was rendered with, check that the edit is still meaningful
(the string is still in the state the assessor saw) and bump ``Question.version``; a stale
edit that is no longer meaningful raises ``Conflict`` and writes nothing.  Every change of a
judgment also bumps the collection's ``judgment_version`` (scores are cached by it).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from evaluation.metrics.gains import check_gain
from evaluation.models import Run, RunAnswer

from .models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Level,
    Question,
    QuestionStatus,
    Source,
)
from .normalize import normalize_answer

NIL = "NIL"


class Conflict(Exception):
    """A write refused because the question changed under the assessor (or the request
    no longer makes sense); nothing was written."""


def collection_judgments_changed(*, collection_id: int) -> None:
    """Bump the collection's judgment version: cached scores of older versions go stale."""
    Collection.objects.filter(pk=collection_id).update(
        judgment_version=F("judgment_version") + 1, judgments_changed_at=timezone.now())


# -- pooling (evaluation calls this) ------------------------------------------------------
@transaction.atomic
def pool_run(*, run: Run, by=None) -> int:
    """Add every distinct normalized answer of ``run`` (ranks up to the collection's L')
    that is not yet a string of its question to the pool, unjudged (source ``pool``).
    Returns the number of strings added; writes one JudgmentEvent."""
    collection = run.collection
    answers = (RunAnswer.objects.filter(run=run, rank__lte=collection.max_output_size)
               .order_by("question_id", "rank").values_list("question_id", "key", "text"))
    rows = list(answers)
    qids = {q for q, _, _ in rows}
    existing = set(AnswerString.objects.filter(question_id__in=qids)
                   .values_list("question_id", "key"))
    new: dict[tuple[int, str], AnswerString] = {}
    for qid, key, text in rows:
        if not key or (qid, key) in existing or (qid, key) in new:
            continue
        new[(qid, key)] = AnswerString(question_id=qid, text=text.strip(), key=key,
                                       source=Source.POOL)
    AnswerString.objects.bulk_create(new.values(), ignore_conflicts=True, batch_size=2000)
    touched = sorted({q for q, _ in new})
    if touched:
        Question.objects.filter(pk__in=touched).update(version=F("version") + 1)
        collection_judgments_changed(collection_id=collection.pk)
    JudgmentEvent.objects.create(
        collection=collection, question=None, user=by, action="pool_run",
        after={"run": run.pk, "run_name": run.name, "added": len(new),
               "questions": len(touched)})
    return len(new)


# -- the judging operations ---------------------------------------------------------------
def string_token(string: AnswerString) -> str:
    """The state of a string as a page shows it: ``u`` unjudged, ``x`` incorrect,
    ``<synset id>/<level id>`` correct.  Pages send it back so a stale edit is detected."""
    if string.synset_id is not None:
        return f"{string.synset_id}/{string.level_id}"
    return "x" if string.judged_at is not None else "u"


def _string_snap(s: AnswerString) -> dict:
    return {"text": s.text, "key": s.key, "synset": s.synset_id, "level": s.level_id,
            "source": s.source, "judged_by": s.judged_by_id,
            "judged_at": s.judged_at.isoformat() if s.judged_at else None,
            "variants": list(s.variants)}


def _judgment_snap(snap: dict) -> dict:
    """A string snapshot without its variants: a spelling added meanwhile (by pooling, say)
    does not block the undo of a judgment."""
    return {k: v for k, v in snap.items() if k != "variants"}


class _Edit:
    """One judging operation on one question: locks the question row, remembers the
    before-state of what it touches, and at the end removes empty synsets, renumbers the
    others 1..R, bumps the versions and writes the JudgmentEvent."""

    def __init__(self, *, question: Question | int, by, version: int | None, action: str):
        pk = question.pk if isinstance(question, Question) else question
        # lock the question row only: locking the joined collection row as well made every
        # edit of a collection wait for the others and deadlock with a run import (which
        # holds key-share locks on the collection and its questions); "no key" still
        # serializes edits of one question without blocking foreign-key checks
        self.question = Question.objects.select_for_update(of=("self",), no_key=True
                                                            ).select_related("collection").get(pk=pk)
        self.stale = version is not None and int(version) != self.question.version
        self.by = by if by is not None and by.is_authenticated else None
        self.action = action
        self.now = timezone.now()
        self.synsets = list(AnswerSynset.objects.filter(question=self.question)
                            .order_by("ordinal"))
        self.before = self._question_snap()
        self.before_strings: dict[int, dict | None] = {}
        self.strings: dict[int, AnswerString] = {}
        self.deleted: set[int] = set()
        self.detail: dict = {}

    # reads under the lock
    def _question_snap(self) -> dict:
        return {"version": self.question.version, "status": self.question.status,
                "notes": self.question.notes,
                "synsets": [[s.pk, s.note, s.label] for s in self.synsets]}

    def string(self, pk, expect: str | None = None) -> AnswerString:
        """The string ``pk`` of this question; with ``expect`` (its token as the page
        showed it) a string whose state has changed since is refused."""
        try:
            s = AnswerString.objects.get(pk=int(pk), question=self.question)
        except (AnswerString.DoesNotExist, ValueError, TypeError):
            raise Conflict("That answer string no longer exists (someone deleted or "
                           "edited it).") from None
        if expect is not None and expect != string_token(s):
            raise Conflict(f"“{s.text}” was changed by someone else since your page was "
                           "loaded; your edit was not applied.")
        self.touch(s)
        return s

    def touch(self, s: AnswerString, *, created: bool = False) -> None:
        if s.pk not in self.before_strings:
            self.before_strings[s.pk] = None if created else _string_snap(s)
        self.strings[s.pk] = s

    def synset(self, pk) -> AnswerSynset:
        for syn in self.synsets:
            if str(syn.pk) == str(pk):
                return syn
        raise Conflict("That synset no longer exists (it was merged or emptied); your edit "
                       "was not applied.")

    def level(self, level: Level | int | str | None) -> Level:
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

    def place(self, s: AnswerString, synset: AnswerSynset | None, level: Level | None,
              *, judged: bool = True) -> None:
        s.synset, s.level = synset, level if synset is not None else None
        s.judged_at = self.now if judged else None
        s.judged_by = self.by if judged else None
        s.save(update_fields=["synset", "level", "judged_at", "judged_by"])

    def finish(self, *, judgments: bool = True) -> JudgmentEvent:
        q = self.question
        used = set(AnswerString.objects.filter(question=q, synset__isnull=False)
                   .values_list("synset_id", flat=True).distinct())
        empty = [s for s in self.synsets if s.pk not in used]
        if empty:
            AnswerSynset.objects.filter(pk__in=[s.pk for s in empty]).delete()
            self.synsets = [s for s in self.synsets if s.pk in used]
        _renumber(q, self.synsets)
        if judgments and self.action != "undo" and q.status == QuestionStatus.TODO:
            q.status = QuestionStatus.IN_PROGRESS
        q.version += 1
        q.save(update_fields=["version", "status", "notes", "updated_at"])
        if judgments:
            collection_judgments_changed(collection_id=q.collection_id)
        after = self._question_snap()
        before = dict(self.before, strings={str(k): v for k, v in self.before_strings.items()})
        after["strings"] = {str(k): (None if k in self.deleted else _string_snap(s))
                            for k, s in self.strings.items()}
        return JudgmentEvent.objects.create(
            collection_id=q.collection_id, question=q, user=self.by, action=self.action,
            before=before, after=dict(after, **self.detail))


def _renumber(question: Question, synsets: Sequence[AnswerSynset]) -> None:
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
def string_judge(*, question: Question | int, string: int, by, synset: int | None = None,
                 new_synset: bool = False, level=None, expect: str | None = None,
                 version: int | None = None) -> JudgmentEvent:
    """Judge ``string``: put it into ``synset`` (or a new synset when ``new_synset``) with
    ``level`` (the collection's highest level when None), or mark it incorrect when
    neither is given.  Also moves a string between synsets."""
    op = _Edit(question=question, by=by, version=version,
               action="string_new_synset" if new_synset else
               "string_add" if synset is not None else "string_incorrect")
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
    op.detail = {"text": s.text}
    return op.finish()


@transaction.atomic
def string_set_level(*, question: Question | int, string: int, level, by,
                     expect: str | None = None, version: int | None = None) -> JudgmentEvent:
    """Change the level of a string that is in a synset."""
    op = _Edit(question=question, by=by, version=version, action="string_level")
    s = op.string(string, expect)
    if s.synset_id is None:
        raise Conflict(f"“{s.text}” is not in a synset, so it has no level.")
    op.place(s, s.synset, op.level(level))
    op.detail = {"text": s.text}
    return op.finish()


@transaction.atomic
def string_unjudge(*, question: Question | int, string: int, by, expect: str | None = None,
                   version: int | None = None) -> JudgmentEvent:
    """Send a judged string back to the pool."""
    op = _Edit(question=question, by=by, version=version, action="string_unjudge")
    s = op.string(string, expect)
    op.place(s, None, None, judged=False)
    op.detail = {"text": s.text}
    return op.finish()


def _key_free(op: _Edit, key: str, *, except_pk: int | None = None) -> None:
    if not key:
        raise Conflict("An answer string cannot be empty (after normalization).")
    clash = (AnswerString.objects.filter(question=op.question, key=key)
             .exclude(pk=except_pk).first())
    if clash is not None:
        raise Conflict(f"“{clash.text}” already has the same matching key; edit that string "
                       "instead.")


@transaction.atomic
def string_add(*, question: Question | int, text: str, by, synset: int | None = None,
               new_synset: bool = False, level=None, version: int | None = None
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
    s.save()
    op.touch(s, created=True)
    op.detail = {"text": text}
    return op.finish(judgments=s.synset_id is not None)


@transaction.atomic
def string_edit(*, question: Question | int, string: int, text: str, by,
                expect: str | None = None, version: int | None = None) -> JudgmentEvent:
    """Correct the text of a string (its key follows); a key that another string of the
    question already has is refused."""
    op = _Edit(question=question, by=by, version=version, action="string_edit")
    s = op.string(string, expect)
    text = text.strip()
    key = normalize_answer(text, op.question.collection.matching_mode)
    _key_free(op, key, except_pk=s.pk)
    op.detail = {"text": text, "old_text": s.text}
    s.text, s.key = text, key
    s.save(update_fields=["text", "key"])
    return op.finish()


@transaction.atomic
def string_delete(*, question: Question | int, string: int, by, expect: str | None = None,
                  version: int | None = None) -> JudgmentEvent:
    """Delete a string (a typo, say); an empty synset left behind disappears."""
    op = _Edit(question=question, by=by, version=version, action="string_delete")
    s = op.string(string, expect)
    op.detail = {"text": s.text}
    pk = s.pk
    s.delete()
    s.pk = pk
    op.deleted.add(pk)
    return op.finish()


@transaction.atomic
def synset_merge(*, question: Question | int, synsets: Sequence[int], by,
                 version: int | None = None) -> JudgmentEvent:
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
def synset_split(*, question: Question | int, strings: Sequence[int], by,
                 expect: Sequence[str] | None = None, version: int | None = None
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
def question_mark_nil(*, question: Question | int, by, level=None,
                      version: int | None = None) -> JudgmentEvent:
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
        nil = AnswerString.objects.create(question=op.question, text=NIL, key=key,
                                          source=Source.ASSESSOR)
        op.touch(nil, created=True)
    target = op.new_synset()
    op.place(nil, target, lv)
    for s in strings:
        if s.pk != nil.pk and (s.synset_id is not None or s.judged_at is None):
            op.place(s, None, None)
    return op.finish()


@transaction.atomic
def question_set_notes(*, question: Question | int, notes: str, by,
                       version: int | None = None) -> JudgmentEvent:
    op = _Edit(question=question, by=by, version=version, action="question_notes")
    op.question.notes = notes.strip()
    return op.finish(judgments=False)


@transaction.atomic
def question_set_status(*, question: Question | int, status: str, by,
                        version: int | None = None) -> JudgmentEvent:
    """Mark a question done (or reopen it)."""
    if status not in QuestionStatus.values:
        raise Conflict(f"Unknown status {status!r}.")
    op = _Edit(question=question, by=by, version=version, action=f"question_{status}")
    if status == QuestionStatus.DONE and AnswerString.objects.filter(
            question=op.question, judged_at__isnull=True).exists():
        raise Conflict("Judge every candidate before marking the question done.")
    op.question.status = status
    return op.finish(judgments=False)


def _undoable(question: Question) -> JudgmentEvent | None:
    """The latest action on ``question`` not undone yet; None when there is none or when
    it was a bulk write (an import) that cannot be undone here."""
    undone: set[int] = set()
    for event in question.events.order_by("-id")[:500]:
        if event.action == "undo":
            undone.add(event.after.get("undoes"))
        elif event.pk not in undone:
            return event if "strings" in event.after else None
    return None


@transaction.atomic
def question_undo(*, question: Question | int, by, any_user: bool = False,
                  version: int | None = None) -> JudgmentEvent:
    """Undo the latest action on the question by restoring its event's before-state.
    Refused when that action was someone else's or when its objects changed since."""
    op = _Edit(question=question, by=by, version=version, action="undo")
    event = _undoable(op.question)
    if event is None:
        raise Conflict("Nothing to undo.")
    if event.user_id != (op.by.pk if op.by else None) and not any_user:
        raise Conflict(f"The last change was made by {event.user or 'someone else'}; only "
                       "they can undo it.")
    before, after = event.before, event.after
    ids = {int(k) for k in before["strings"]}
    current = {s.pk: s for s in AnswerString.objects.filter(question=op.question, pk__in=ids)}
    for k, snap in after["strings"].items():
        s = current.get(int(k))
        if (snap is None) != (s is None) or (
                s is not None and _judgment_snap(_string_snap(s)) != _judgment_snap(snap)):
            raise Conflict("The strings of that action have changed since; it cannot be "
                           "undone.")
    # synsets: recreate deleted ones (with their old id), then restore the old order
    have = {s.pk: s for s in op.synsets}
    order = []
    for pk, note, *label in before["synsets"]:  # events before labels have no label
        syn = have.get(pk)
        if syn is None:
            syn = AnswerSynset.objects.create(pk=pk, question=op.question,
                                              ordinal=10_000_000 + pk, note=note,
                                              label=label[0] if label else "")
        elif syn.note != note:
            syn.note = note
            syn.save(update_fields=["note"])
        order.append(syn)
    kept = {s.pk for s in order}
    extra = [s for s in op.synsets if s.pk not in kept]
    op.synsets = order + extra
    for k, snap in before["strings"].items():
        pk = int(k)
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
        s.text, s.key, s.source = snap["text"], snap["key"], snap["source"]
        s.synset_id, s.level_id, s.judged_by_id = snap["synset"], snap["level"], snap["judged_by"]
        s.judged_at = datetime.fromisoformat(snap["judged_at"]) if snap["judged_at"] else None
        s.save()
    op.question.status = before["status"]
    op.question.notes = before["notes"]
    op.detail = {"undoes": event.pk, "undone_action": event.action}
    return op.finish()


# -- organizer writes -------------------------------------------------------------------------
@transaction.atomic
def questions_assign(*, collection: Collection, questions: Sequence[Question], assessors,
                     by, round_robin: bool = True, replace: bool = True) -> int:
    """Assign ``questions`` to ``assessors`` (members of the collection): round-robin gives
    each question one assessor in turn, otherwise each gets all of them; ``replace`` drops
    the current assignments first.  Returns the number of questions changed."""
    from .models import Membership
    assessors = list(assessors)
    members = set(Membership.objects.filter(collection=collection, role__in=[
        "organizer", "assessor"]).values_list("user_id", flat=True))
    strangers = [u.get_username() for u in assessors if u.pk not in members]
    if strangers:
        raise Conflict(f"Not an assessor of this collection: {', '.join(strangers)}.")
    if not assessors:
        raise Conflict("Choose at least one assessor.")
    questions = [q for q in questions if q.collection_id == collection.pk]
    through = Question.assessors.through
    ids = [q.pk for q in questions]
    if replace:
        through.objects.filter(question_id__in=ids).delete()
    links = []
    for i, q in enumerate(questions):
        chosen = [assessors[i % len(assessors)]] if round_robin else assessors
        links += [through(question_id=q.pk, user_id=u.pk) for u in chosen]
    through.objects.bulk_create(links, ignore_conflicts=True)
    JudgmentEvent.objects.create(
        collection=collection, user=by if by is not None and by.is_authenticated else None,
        action="questions_assign",
        after={"questions": len(ids), "assessors": [u.get_username() for u in assessors],
               "round_robin": round_robin, "replace": replace})
    return len(ids)


DEFAULT_LEVELS = (("S", "Correct and complete", 3.0), ("A", "Correct, less specific", 2.0),
                  ("B", "Partially correct", 1.0))


@transaction.atomic
def collection_save(*, collection: Collection, levels: Sequence[tuple[str, str, float]] | None,
                    by) -> Collection:
    """Create or update ``collection`` (an unsaved or changed instance) and set its levels
    (code, label, gain; highest first).  A new collection gets S/A/B 3/2/1 unless levels are
    given, and its creator becomes an organizer.  A level still used by a string cannot be
    removed (Conflict)."""
    from .models import Membership
    created = collection.pk is None
    collection.save()
    if created and not levels:
        levels = DEFAULT_LEVELS
    if levels is not None:
        if not levels:
            raise Conflict("A collection needs at least one level.")
        for code, _, gain in levels:
            try:
                check_gain(gain, f"the gain of level {code!r}")
            except ValueError as e:
                raise Conflict(str(e)) from e
        existing = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
        keep = {code for code, _, _ in levels}
        gone = [lv for code, lv in existing.items() if code not in keep]
        used = [lv.code for lv in gone if lv.strings.exists()]
        if used:
            raise Conflict(f"Level(s) {', '.join(used)} are used by judged strings; change "
                           "those strings first.")
        Level.objects.filter(pk__in=[lv.pk for lv in gone]).delete()
        Level.objects.filter(collection=collection).update(order=F("order") + 1000)
        for order, (code, label, gain) in enumerate(levels):
            Level.objects.update_or_create(collection=collection, code=code, defaults={
                "label": label, "gain": gain, "order": order})
        collection_judgments_changed(collection_id=collection.pk)
    user = by if by is not None and by.is_authenticated else None
    if created and user is not None and not user.is_staff:
        Membership.objects.get_or_create(collection=collection, user=user,
                                         defaults={"role": "organizer"})
    JudgmentEvent.objects.create(
        collection=collection, user=user,
        action="collection_create" if created else "collection_update",
        after={"name": collection.name, "levels": [list(lv) for lv in levels or ()]})
    return collection


@transaction.atomic
def membership_set(*, collection: Collection, user, role: str | None, by) -> None:
    """Give ``user`` ``role`` in ``collection``; ``role`` None removes the membership."""
    from .models import Membership, Role
    if role is None:
        Membership.objects.filter(collection=collection, user=user).delete()
    else:
        if role not in Role.values:
            raise Conflict(f"Unknown role {role!r}.")
        Membership.objects.update_or_create(collection=collection, user=user,
                                            defaults={"role": role})
    JudgmentEvent.objects.create(
        collection=collection, user=by if by is not None and by.is_authenticated else None,
        action="membership_set", after={"user": user.get_username(), "role": role})
