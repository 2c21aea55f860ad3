"""Imports and exports of a collection (docs/formats.md; issue 4 item 2).

An import is planned first -- the file is parsed by the scoring engine's parsers and checked
against the collection, which gives a preview (counts) or every error with its line number
-- and written only when the plan has no error, in one transaction (all or nothing).
Exports are formula-safe: a cell that a spreadsheet would run as a formula gets a leading
single quote, which the imports take off again, so an export re-imports unchanged.
"""

from __future__ import annotations

import csv
import io
import json
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from evaluation.metrics import InputError, Issue
from evaluation.metrics.parsers import (
    parse_flat_answers,
    parse_questions_csv,
    read_judgment_rows,
)

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
from .services import collection_judgments_changed

KINDS = {"questions": "Questions CSV (question_id,question)",
         "flat": "Flat answer list (question_id,answer)",
         "judgments": "Judgments CSV (question_id,synset_id,answer,level)"}
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def formula_safe(value) -> str:
    """Neutralise a cell a spreadsheet would evaluate (OWASP CSV injection): prefix a
    single quote.  A cell that already starts with a quote before such a character gets a
    second one, so ``unquote`` always gives the original back."""
    s = "" if value is None else str(value)
    if s.startswith(_FORMULA) or (s.startswith("'") and s[1:].startswith(("'", *_FORMULA))):
        return "'" + s
    return s


def unquote(s: str) -> str:
    """Undo ``formula_safe``."""
    if s.startswith("'") and s[1:].startswith(("'", *_FORMULA)):
        return s[1:]
    return s


class ImportRefused(Exception):
    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues[:5]))


@dataclass
class ImportPlan:
    """What an import would do: ``counts`` for the preview, or ``issues``."""

    kind: str
    filename: str
    counts: dict[str, int] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    _write: object = None

    @property
    def ok(self) -> bool:
        return not self.issues


# -- questions --------------------------------------------------------------------------------
def _plan_questions(collection: Collection, data: bytes, filename: str) -> ImportPlan:
    plan = ImportPlan("questions", filename)
    rows = parse_questions_csv(data, filename=filename)
    existing = dict(Question.objects.filter(collection=collection).values_list("qid", "text"))
    create, update = [], []
    for r in rows:
        qid, text = unquote(r.question_id), unquote(r.text)
        if len(qid) > 100:
            plan.issues.append(Issue(filename, r.line, f"question_id {qid[:20]!r}... is longer "
                                     "than 100 characters"))
        elif qid not in existing:
            create.append((qid, text))
        elif existing[qid] != text:
            update.append((qid, text))
    plan.counts = {"questions to create": len(create), "questions to update": len(update),
                   "questions unchanged": len(rows) - len(create) - len(update)}

    def write():
        Question.objects.bulk_create(Question(collection=collection, qid=q, text=t)
                                     for q, t in create)
        for q, t in update:
            Question.objects.filter(collection=collection, qid=q).update(
                text=t, version=F("version") + 1)
    plan._write = write
    return plan


# -- flat answer lists ----------------------------------------------------------------------
def _plan_flat(collection: Collection, data: bytes, filename: str) -> ImportPlan:
    plan = ImportPlan("flat", filename)
    rows = parse_flat_answers(data, filename=filename)
    questions = dict(Question.objects.filter(collection=collection).values_list("qid", "pk"))
    existing = set(AnswerString.objects.filter(question__collection=collection)
                   .values_list("question_id", "key"))
    mode = collection.matching_mode
    new: dict[tuple[int, str], str] = {}
    known = 0
    for r in rows:
        qid, answer = unquote(r.question_id), unquote(r.answer)
        if qid not in questions:
            plan.issues.append(Issue(filename, r.line, f"unknown question {qid!r}"))
            continue
        key = normalize_answer(answer, mode)
        if not key:
            plan.issues.append(Issue(filename, r.line, f"answer {answer!r} is empty once "
                                     "normalized"))
        elif (questions[qid], key) in existing or (questions[qid], key) in new:
            known += 1
        else:
            new[(questions[qid], key)] = answer
    plan.counts = {"candidate strings to add": len(new),
                   "already known (skipped)": known,
                   "questions concerned": len({q for q, _ in new})}

    def write():
        AnswerString.objects.bulk_create(
            (AnswerString(question_id=q, text=t, key=k, source=Source.FLAT)
             for (q, k), t in new.items()), batch_size=2000)
        Question.objects.filter(pk__in={q for q, _ in new}).update(version=F("version") + 1)
    plan._write = write
    return plan


# -- judgments ----------------------------------------------------------------------------------
def _plan_judgments(collection: Collection, data: bytes, filename: str, by) -> ImportPlan:
    plan = ImportPlan("judgments", filename)
    levels = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
    rows = read_judgment_rows(data, filename=filename, levels=tuple(levels))
    questions = dict(Question.objects.filter(collection=collection).values_list("qid", "pk"))
    mode = collection.matching_mode
    # per question: synset id (as in the file) -> [(text, key, level)], and incorrect strings
    synsets: dict[int, dict[str, list]] = defaultdict(dict)
    incorrect: dict[int, list] = defaultdict(list)
    seen: dict[tuple[int, str], tuple[str, int]] = {}  # (question, key) -> (synset, line)
    for r in rows:
        qid, syn, answer = unquote(r.question_id), unquote(r.synset_id), unquote(r.answer)
        if qid not in questions:
            plan.issues.append(Issue(filename, r.line, f"unknown question {qid!r}"))
            continue
        q = questions[qid]
        key = normalize_answer(answer, mode)
        if not key:
            plan.issues.append(Issue(filename, r.line, f"answer {answer!r} is empty once "
                                     "normalized"))
            continue
        if (q, key) in seen:
            other, line = seen[(q, key)]
            where = f"synset {other}" if other else "judged incorrect"
            here = f"synset {syn}" if syn else "judged incorrect"
            plan.issues.append(Issue(filename, r.line, (
                f"answer {answer!r} of question {qid!r} is already on line {line} ({where}); "
                f"a string belongs to at most one synset (here: {here})")))
            continue
        seen[(q, key)] = (syn, r.line)
        if syn:
            synsets[q].setdefault(syn, []).append((answer, key, levels[r.level]))
        else:
            incorrect[q].append((answer, key))
    touched = sorted(set(synsets) | set(incorrect))
    plan.counts = {
        "questions with judgments": len(touched),
        "synsets to create": sum(len(s) for s in synsets.values()),
        "correct strings": sum(len(m) for s in synsets.values() for m in s.values()),
        "incorrect strings": sum(len(v) for v in incorrect.values()),
        "questions whose judgments are replaced": AnswerString.objects.filter(
            question_id__in=touched, judged_at__isnull=False).values("question_id")
        .distinct().count(),
    }

    def write():
        now = timezone.now()
        judge = by if by is not None and by.is_authenticated else None
        file_keys = defaultdict(set)
        for (q, key) in seen:
            file_keys[q].add(key)
        # replace: the judged strings of these questions and the unjudged ones the file judges
        old = AnswerString.objects.filter(question_id__in=touched)
        doomed = [s.pk for s in old.only("pk", "question_id", "key", "judged_at")
                  if s.judged_at is not None or s.key in file_keys[s.question_id]]
        AnswerString.objects.filter(pk__in=doomed).delete()
        AnswerSynset.objects.filter(question_id__in=touched).delete()
        new_synsets = []
        members = []
        for q in touched:
            for ordinal, (_, strings) in enumerate(synsets[q].items(), start=1):
                syn = AnswerSynset(question_id=q, ordinal=ordinal)
                new_synsets.append(syn)
                members.append((syn, strings))
        AnswerSynset.objects.bulk_create(new_synsets, batch_size=2000)
        strings = [AnswerString(question_id=syn.question_id, text=t, key=k, synset=syn, level=lv,
                                source=Source.IMPORT, judged_by=judge, judged_at=now)
                   for syn, ms in members for t, k, lv in ms]
        strings += [AnswerString(question_id=q, text=t, key=k, source=Source.IMPORT,
                                 judged_by=judge, judged_at=now)
                    for q, items in incorrect.items() for t, k in items]
        AnswerString.objects.bulk_create(strings, batch_size=2000)
        Question.objects.filter(pk__in=touched).update(version=F("version") + 1)
        Question.objects.filter(pk__in=touched, status=QuestionStatus.TODO).update(
            status=QuestionStatus.IN_PROGRESS)
        collection_judgments_changed(collection_id=collection.pk)
    plan._write = write
    return plan


def import_plan(*, collection: Collection, kind: str, data: bytes, filename: str,
                by=None) -> ImportPlan:
    """Parse and check ``data`` as a ``kind`` file for ``collection`` without writing:
    the counts to preview, or every error with its line number."""
    try:
        if kind == "questions":
            return _plan_questions(collection, data, filename)
        if kind == "flat":
            return _plan_flat(collection, data, filename)
        if kind == "judgments":
            return _plan_judgments(collection, data, filename, by)
    except InputError as e:
        return ImportPlan(kind, filename, issues=e.issues)
    raise ValueError(f"unknown import kind {kind!r}")


@transaction.atomic
def collection_import(*, collection: Collection, kind: str, data: bytes, filename: str,
                      by=None) -> ImportPlan:
    """Validate the whole file, then write it (all or nothing); raise ImportRefused with
    every error when the file is bad.  Returns the plan that was carried out."""
    Collection.objects.select_for_update().filter(pk=collection.pk).first()
    plan = import_plan(collection=collection, kind=kind, data=data, filename=filename, by=by)
    if not plan.ok:
        raise ImportRefused(plan.issues)
    plan._write()
    JudgmentEvent.objects.create(
        collection=collection, user=by if by is not None and by.is_authenticated else None,
        action=f"{kind}_import", after={"file": filename, **plan.counts})
    return plan


# -- exports ----------------------------------------------------------------------------------
def _csv(header: list[str], rows) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    for row in rows:
        w.writerow([formula_safe(c) for c in row])
    return out.getvalue()


def export_judgments(collection: Collection) -> str:
    """Judgments CSV (DESIGN.md section 6): one row per judged string, synsets by ordinal,
    judged-incorrect strings with empty synset_id and level; extra columns question,
    assessor, updated."""
    strings = (AnswerString.objects.filter(question__collection=collection,
                                           judged_at__isnull=False)
               .select_related("question", "synset", "level", "judged_by")
               .order_by("question_id", F("synset__ordinal").asc(nulls_last=True), "id"))
    rows = ([s.question.qid, s.synset.ordinal if s.synset_id else "", s.text,
             s.level.code if s.level_id else "", s.question.text,
             s.judged_by.get_username() if s.judged_by_id else "",
             s.judged_at.isoformat(timespec="seconds")] for s in strings.iterator(2000))
    return _csv(["question_id", "synset_id", "answer", "level", "question", "assessor",
                 "updated"], rows)


def export_questions(collection: Collection) -> str:
    """Questions CSV: question_id,question plus status and assessors."""
    from .selectors import attach_assessors
    questions = list(Question.objects.filter(collection=collection).order_by("id"))
    attach_assessors(questions)
    return _csv(["question_id", "question", "status", "assessors"],
                ([q.qid, q.text, q.status, " ".join(q.assessor_names)] for q in questions))


def export_events(collection: Collection) -> str:
    """The audit trail: every JudgmentEvent of the collection, oldest first."""
    events = (JudgmentEvent.objects.filter(collection=collection).select_related(
        "user", "question").order_by("id"))
    return _csv(["id", "created_at", "user", "question_id", "action", "before", "after"],
                ([e.pk, e.created_at.isoformat(timespec="seconds"),
                  e.user.get_username() if e.user_id else "",
                  e.question.qid if e.question_id else "", e.action,
                  json.dumps(e.before, ensure_ascii=False),
                  json.dumps(e.after, ensure_ascii=False)] for e in events.iterator(2000)))
