"""Gold judging writes (DESIGN.md section 4): strings judged, moved, typed, edited and
deleted, synsets merged and split, a question marked NIL, noted, done; its undo; the
strings pooling and imports add unjudged.  Each goes through ``edits.Edit``: one
transaction, one ``JudgmentEvent``, a stale page refused.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils.translation import gettext, gettext_noop, ngettext

from config.bulk import ids_in, insert_rows, update_rows
from evaluation.metrics.normalize import NIL, normalize_many

from .edits import (
    Conflict,
    Edit,
    PageSynset,
    questions_reopen,
    string_snap,
)
from .models import (
    AnswerString,
    AnswerSynset,
    JudgmentEvent,
    LayerJudgment,
    Level,
    Question,
    QuestionStatus,
    Source,
    SpellingKey,
)
from .normalize import normalize_answer
from .spellings import key_owners, spelling_keys_write, spellings_of

if TYPE_CHECKING:
    from .edits import AnyUser, LevelRef


def spellings_fold(
    rows: Iterable[tuple[int, str, str]], known: dict[tuple[int, str], list[str]] | None = None
) -> dict[tuple[int, str], list[str]]:
    """Spellings with one matching key are one string (DESIGN.md section 4): ``rows`` of
    (question id, key, spelling) -> (question id, key) -> the spellings not yet in
    ``known`` (the spellings of the string holding that key: its text and variants), first
    seen first, each once.  The judgments import folds its rows the same way."""
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
    joins that string's variants (nothing is lost, nothing is judged again): the string
    holding its key, by the key of any of its spellings (``key_owners``), so a spelling
    folded under an earlier matching mode is not pooled again.  The questions are locked
    first, so a question cannot be marked done under the new strings; a done question that
    gains a string is reopened (``questions_reopen``)."""
    return strings_add_unjudged_batches(batches=[(rows, reason)], source=source, by=by)[0]


@dataclass(eq=False, slots=True)
class _Pooled:
    """A string pooling adds or grows (a row of AnswerString, without the ORM)."""

    pk: int | None
    question_id: int
    text: str
    key: str
    variants: list[str]
    spelled: set[str]  # the text and the variants


@transaction.atomic
def strings_add_unjudged_batches(
    *,
    batches: Sequence[tuple[Iterable[tuple[int, str, str]], str]],
    source: str,
    by: AnyUser | None = None,
    after_batch: Callable[[int, StringsAdded], None] | None = None,
) -> list[StringsAdded]:
    """``strings_add_unjudged`` of each of ``batches`` ((rows, reason): the answers of one
    run each), with the result of calling it once per batch, one batch after the other --
    each batch sees the strings the batches before it added -- but in one pass: the
    strings of all batches are read once and written at once.  Then, batch by batch, the
    done questions a batch gives a string are reopened with its reason, and
    ``after_batch(i, added)`` runs (the caller's event for batch ``i``), so the audit trail
    reads as if the batches had been added one by one.  Returns each batch's
    ``StringsAdded``."""
    batches = [([(q, k, t) for q, k, t in rows if k], reason) for rows, reason in batches]
    results = [StringsAdded() for _ in batches]
    qids = sorted({q for rows, _ in batches for q, _, _ in rows})
    if not qids:
        for i, result in enumerate(results):
            if after_batch is not None:
                after_batch(i, result)
        return results
    locked = dict(
        Question.objects.select_for_update(no_key=True)
        .filter(pk__in=ids_in(qids))
        .order_by("pk")
        .values_list("pk", "status")
    )
    existing = {
        pk: _Pooled(pk, q, text, key, variants, {text, *variants})
        for pk, q, text, key, variants in AnswerString.objects.filter(
            question_id__in=ids_in(qids)
        ).values_list("pk", "question_id", "text", "key", "variants")
    }
    owner: dict[tuple[int, str], _Pooled] = {}
    held: dict[int, set[str]] = defaultdict(set)  # string id -> its keys
    for k, pk in key_owners(question_ids=qids).items():
        owner[k] = existing[pk]
        held[pk].add(k[1])
    new: list[_Pooled] = []
    grown: dict[int, _Pooled] = {}
    for (rows, _), result in zip(batches, results, strict=True):
        # the spellings of the strings holding the batch's keys, as the batch starts (the
        # batch's own join them after the fold)
        known = {k: owner[k].spelled for k in {(q, key) for q, key, _ in rows} if k in owner}
        questions = set()
        for (q, key), spellings in spellings_fold(rows, known).items():
            s = owner.get((q, key))
            if s is None:
                s = _Pooled(None, q, spellings[0], key, spellings[1:], set(spellings))
                owner[(q, key)] = s
                new.append(s)
                questions.add(q)
                result.added += 1
                result.spellings += len(spellings) - 1
            else:
                s.variants.extend(spellings)
                s.spelled.update(spellings)
                if s.pk is not None:
                    grown[s.pk] = s
                result.spellings += len(spellings)
        result.questions = sorted(questions)
    ids = insert_rows(
        AnswerString,
        ["question_id", "text", "key", "source", "variants"],
        ((s.question_id, s.text, s.key, source, s.variants) for s in new),
        ids=True,
    )
    for s, pk in zip(new, ids, strict=True):
        s.pk = pk
    update_rows(AnswerString, ["variants"], ((s.pk, s.variants) for s in grown.values()))
    modes = dict(
        Question.objects.filter(pk__in=ids_in(qids)).values_list("pk", "collection__matching_mode")
    )
    for mode in sorted({modes[q] for q in qids}):
        # a new string has no keys yet; a grown one is written again only when a new
        # spelling brought a key it does not hold (not when, as a pooled answer's key
        # is the string's, its keys stay)
        spelling_keys_write(
            rows=(
                (s.pk, s.question_id, spellings_of(s)) for s in new if modes[s.question_id] == mode
            ),
            mode=mode,
            replace=False,
        )
        regrown = [s for s in grown.values() if modes[s.question_id] == mode]
        spelled = [(s.pk, sp) for s in regrown for sp in spellings_of(s)]
        keys: dict[int, set[str]] = defaultdict(set)
        new_keys = normalize_many([sp for _, sp in spelled], mode)
        for (pk, _), key in zip(spelled, new_keys, strict=True):
            if key:
                keys[pk].add(key)
        spelling_keys_write(
            rows=(
                (s.pk, s.question_id, spellings_of(s)) for s in regrown if keys[s.pk] != held[s.pk]
            ),
            mode=mode,
        )
    # one version more for each batch that gave the question a string
    gained = Counter(q for result in results for q in result.questions)
    versions = Question.objects.filter(pk__in=ids_in(gained)).values_list("pk", "version")
    update_rows(Question, ["version"], ((q, v + gained[q]) for q, v in versions))
    done = {q for q, status in locked.items() if status == QuestionStatus.DONE}
    for i, ((_, reason), result) in enumerate(zip(batches, results, strict=True)):
        if reopen := [q for q in result.questions if q in done]:
            result.reopened = questions_reopen(
                question_ids=reopen, by=by, reason=reason, source=source
            )
            done.difference_update(result.reopened)
        if after_batch is not None:
            after_batch(i, result)
    return results


def _judgment_snap(snap: dict) -> dict:
    """A string snapshot without its variants: a spelling added meanwhile (by pooling, say)
    does not block the undo of a judgment."""
    return {k: v for k, v in snap.items() if k != "variants"}


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
    op = Edit(
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
    op = Edit(question=question, by=by, version=version, action="string_level")
    s = op.string(string, expect)
    if s.synset_id is None:
        raise Conflict(
            gettext("“%(text)s” is not in a synset, so it has no level.") % {"text": s.text}
        )
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
    op = Edit(question=question, by=by, version=version, action="string_unjudge")
    s = op.string(string, expect)
    op.place(s, None, None, judged=False)
    op.detail = {"text": s.text}
    return op.finish()


def _key_free(op: Edit, key: str, *, except_pk: int | None = None) -> None:
    if not key:
        raise Conflict(gettext("An answer string cannot be empty (after normalization)."))
    clash = (
        AnswerString.objects.filter(spelling_keys__question=op.question, spelling_keys__key=key)
        .exclude(pk=except_pk)
        .first()
    )
    if clash is not None:
        raise Conflict(
            gettext("“%(text)s” already has the same matching key; edit that string instead.")
            % {"text": clash.text}
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
    op = Edit(question=question, by=by, version=version, action="string_type")
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
    op = Edit(question=question, by=by, version=version, action="string_edit")
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


def _layer_judged(strings: Sequence[AnswerString], what: Callable[[int], str]) -> None:
    """Conflict when one of ``strings`` is judged in assessors' layers (DESIGN.md section
    9): deleting it would delete those judgments with it, and gold's undo brings back the
    string, not them.  ``what(n)`` is the refusal with ``%(text)s`` and ``%(n)d``."""
    counts: dict[int, int] = {}
    for pk in LayerJudgment.objects.filter(string__in=[s.pk for s in strings]).values_list(
        "string_id", flat=True
    ):
        counts[pk] = counts.get(pk, 0) + 1
    judged = [(s, counts[s.pk]) for s in strings if s.pk in counts]
    if judged:
        s, n = judged[0]
        raise Conflict(what(n) % {"text": s.text, "n": n})


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
    op = Edit(question=question, by=by, version=version, action="string_delete")
    s = op.string(string, expect)
    _layer_judged(
        [s],
        lambda n: ngettext(
            "“%(text)s” is judged in %(n)d assessor layer of this question; it cannot be "
            "deleted, which would delete those judgments (judge it in gold instead).",
            "“%(text)s” is judged in %(n)d assessor layers of this question; it cannot be "
            "deleted, which would delete those judgments (judge it in gold instead).",
            n,
        ),
    )
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
    op = Edit(question=question, by=by, version=version, action="synset_merge")
    targets = [op.synset(pk) for pk in synsets]
    if len({t.pk for t in targets}) < 2:
        raise Conflict(gettext("Choose at least two different synsets to merge."))
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
    op = Edit(question=question, by=by, version=version, action="synset_split")
    expect = list(expect) if expect else [None] * len(strings)
    picked = [op.string(pk, e) for pk, e in zip(strings, expect, strict=True)]
    if not picked or any(s.synset_id is None for s in picked):
        raise Conflict(gettext("Only strings in a synset can be split out."))
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
    op = Edit(question=question, by=by, version=version, action="question_nil")
    key = normalize_answer(NIL, op.question.collection.matching_mode)
    lv = op.level(level)
    strings = list(AnswerString.objects.filter(question=op.question))
    holder = set(
        SpellingKey.objects.filter(question=op.question, key=key).values_list(
            "string_id", flat=True
        )
    )
    nil = next((s for s in strings if s.pk in holder), None)
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
    op = Edit(question=question, by=by, version=version, action="question_notes")
    op.question.notes = notes.strip()
    return op.finish(judgments=False)


@transaction.atomic
def question_set_status(
    *, question: Question | int, status: str, by: AnyUser | None, version: int | None = None
) -> JudgmentEvent:
    """Mark a question done (or reopen it)."""
    if status not in QuestionStatus.values:
        raise Conflict(gettext("Unknown status %(status)r.") % {"status": status})
    op = Edit(question=question, by=by, version=version, action=f"question_{status}")
    if (
        status == QuestionStatus.DONE
        and AnswerString.objects.filter(question=op.question, judged_at__isnull=True).exists()
    ):
        raise Conflict(gettext("Judge every candidate before marking the question done."))
    op.question.status = status
    return op.finish(judgments=False)


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
        raise Conflict(
            gettext("Another assessor took this question meanwhile; your edit was not applied.")
        )
    through.objects.create(question_id=q.pk, user_id=by.pk)
    JudgmentEvent.objects.create(
        collection_id=q.collection_id,
        question=q,
        user=by,
        action="question_claim",
        after={"assessor": by.get_username()},
    )
    return True


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


UNREADABLE = gettext_noop("The record of that action cannot be read; it cannot be undone.")


def _undo_record(event: JudgmentEvent) -> tuple[dict, dict, list]:
    """``event``'s string snapshots before and after (by id) and its synset rows before
    (id, note, label); Conflict when its record cannot be read."""
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
        raise Conflict(gettext(UNREADABLE)) from None
    return snaps, after_snaps, synsets


def _undo_restorable(snap: dict, syn_ids: set[int], levels: set[int]) -> None:
    """Conflict unless the string snapshot ``snap`` can be restored: its synset one the
    event recorded, its level one of the collection, its judgment, source, user and
    variants well formed."""
    synset, level = snap.get("synset"), snap.get("level")
    if synset is not None and synset not in syn_ids:
        raise Conflict(gettext(UNREADABLE))
    if level is not None and level not in levels:
        raise Conflict(
            gettext("That action names a level that no longer exists; it cannot be undone.")
        )
    if (synset is None) != (level is None) or (synset is not None and not snap.get("judged_at")):
        raise Conflict(gettext(UNREADABLE))
    try:
        if snap["judged_at"]:
            datetime.fromisoformat(snap["judged_at"])
    except (KeyError, TypeError, ValueError):
        raise Conflict(gettext(UNREADABLE)) from None
    if (
        snap.get("source") not in Source.values
        or not isinstance(snap.get("judged_by"), int | None)
        or not isinstance(snap.get("variants", []), list)
    ):
        raise Conflict(gettext(UNREADABLE))


def _undo_checked(op: Edit, event: JudgmentEvent) -> tuple[dict, list, dict]:
    """The before-state of ``event`` after checking, before anything is written, that it
    names only rows of the question being undone (or none at all: a deleted string or
    synset is recreated under its old id), levels of its collection, and users that exist;
    and that every string the event touched is still as the event left it.  Returns
    (string snapshots by id, synset rows [id, note, label], current strings by id).
    Raises Conflict otherwise."""
    snaps, after_snaps, synsets = _undo_record(event)
    ids = set(snaps) | set(after_snaps)
    foreign = Conflict(
        gettext(
            "That action names answer strings or synsets of another question; it cannot be undone."
        )
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
            s is not None and _judgment_snap(string_snap(s)) != _judgment_snap(snap)
        ):
            raise Conflict(
                gettext("The strings of that action have changed since; it cannot be undone.")
            )
    levels = set(
        Level.objects.filter(collection_id=op.question.collection_id).values_list("pk", flat=True)
    )
    restored = [snap for snap in snaps.values() if snap is not None]
    for snap in restored:
        _undo_restorable(snap, syn_ids, levels)
    before = event.before
    if before.get("status") not in QuestionStatus.values or not isinstance(
        before.get("notes"), str
    ):
        raise Conflict(gettext(UNREADABLE))
    # keys: a restored string must not take a key of a string added since (by pooling), by
    # its text or by one of its variants
    mode = op.question.collection.matching_mode
    keys = [set(_snap_keys(snap, mode)) for snap in restored]
    every = [k for ks in keys for k in ks]
    others = SpellingKey.objects.filter(question=op.question, key__in=every).exclude(
        string_id__in=ids
    )
    if len(set(every)) != len(every) or others.exists():
        raise Conflict(
            gettext(
                "An answer string of that action has been added again since; it cannot be undone."
            )
        )
    return snaps, synsets, current


def _snap_keys(snap: dict, mode: str) -> list[str]:
    """The distinct non-empty keys of the spellings of a string snapshot under ``mode``."""
    keys = normalize_many([snap["text"], *snap.get("variants", [])], mode)
    return [k for k in dict.fromkeys(keys) if k]


def _undo_synsets(op: Edit, synsets: list) -> None:
    """Recreate the synsets the undone action deleted (with their old id), then put the
    synsets back in their old order (``op.synsets``; ``Edit.finish`` renumbers)."""
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


def _undo_strings(op: Edit, snaps: dict, current: dict) -> None:
    """Put every string of the undone action back as its snapshot has it: the ones it
    created go, the ones it deleted come back under their old id."""
    users = set(
        get_user_model()
        .objects.filter(pk__in={snap.get("judged_by") for snap in snaps.values() if snap})
        .values_list("pk", flat=True)
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
            # one of the restored spellings (a spelling keyed apart by a switch of matching
            # mode stays a spelling of its string)
            mode = op.question.collection.matching_mode
            keys = set(_snap_keys(snap, mode))
            s.variants = [
                v
                for v in dict.fromkeys([*snap.get("variants", []), *s.variants])
                if v != snap["text"]
                and (v in snap.get("variants", []) or normalize_answer(v, mode) in keys)
            ]
        s.text, s.key, s.source = snap["text"], snap["key"], snap["source"]
        s.synset_id, s.level_id = snap.get("synset"), snap.get("level")
        s.judged_by_id = snap["judged_by"] if snap.get("judged_by") in users else None
        s.judged_at = datetime.fromisoformat(snap["judged_at"]) if snap["judged_at"] else None
        s.save(force_insert=pk in op.before_strings and op.before_strings[pk] is None)


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
    op = Edit(question=question, by=by, version=version, action="undo")
    event = _undoable(op.question)
    if event is None:
        raise Conflict(gettext("Nothing to undo."))
    if event.user_id != (op.by.pk if op.by else None) and not any_user:
        raise Conflict(
            gettext("The last change was made by %(user)s; only they can undo it.")
            % {"user": event.user or gettext("someone else")}
        )
    snaps, synsets, current = _undo_checked(op, event)
    _undo_synsets(op, synsets)
    # undoing a string's arrival would delete it, and with it its layer judgments
    _layer_judged(
        [current[pk] for pk, snap in snaps.items() if snap is None and pk in current],
        lambda n: ngettext(
            "“%(text)s” is judged in %(n)d assessor layer of this question; it cannot be "
            "removed by the undo, which would delete those judgments (judge it in gold "
            "instead).",
            "“%(text)s” is judged in %(n)d assessor layers of this question; it cannot be "
            "removed by the undo, which would delete those judgments (judge it in gold "
            "instead).",
            n,
        ),
    )
    _undo_strings(op, snaps, current)
    op.question.status = event.before["status"]
    op.question.notes = event.before["notes"]
    op.detail = {"undoes": event.pk, "undone_action": event.action}
    return op.finish()
