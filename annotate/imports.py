"""Imports and exports of a collection (docs/formats.md).

An import is planned first -- the file is parsed by the scoring engine's parsers and checked
against the collection, which gives a preview (counts) or every error with its line number
-- and written only when the plan has no error, in one transaction (all or nothing).
Exports are written by the product's one CSV writer (``evaluation.metrics.csvio``): a cell
with a line break, quote or separator is quoted, and a cell a spreadsheet would run as a
formula gets a leading single quote, which the parsers take off again, so an export
re-imports unchanged.
"""

from __future__ import annotations

import csv
import io
import json
import secrets
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import BooleanField, Count, ExpressionWrapper, F, Q
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, gettext_noop, ngettext

from config.bulk import delete_rows, gc_paused, ids_in, insert_rows, update_rows
from evaluation.metrics import InputError, Issue
from evaluation.metrics.csvio import write_csv
from evaluation.metrics.errors import merge_issues
from evaluation.metrics.normalize import normalize_many
from evaluation.metrics.parsers import (
    flat_answer_rows,
    judgment_rows,
    question_rows,
)
from evaluation.metrics.text_rules import empty_key_message

from . import judging
from .edits import collection_judgments_changed
from .layer_io import layers_plan, layers_write
from .models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    Level,
    PendingImport,
    Question,
    QuestionStatus,
    Source,
)
from .normalize import normalize_answer
from .selectors import attach_assessors
from .spellings import (
    key_owners,
    spelling_keys_write,
    spellings_of,
    spellings_settle,
    strings_claim,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.contrib.auth.models import AbstractBaseUser

    from .edits import AnyUser

KINDS = {
    "questions": gettext_lazy("Questions CSV (question_id,question)"),
    "flat": gettext_lazy("Flat answer list (question_id,answer)"),
    "judgments": gettext_lazy("Judgments CSV (question_id,synset_id,answer,level)"),
    "layers": gettext_lazy("Layers CSV (question_id,synset_id,answer,level,assessor,done)"),
}
# how long a previewed file waits for its confirmation (PendingImport rows)
PENDING_TTL = timedelta(hours=1)


class ImportRefused(Exception):
    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues[:5]))


@dataclass
class PreviewList:
    """One list of the preview: the strings (or questions) an import adds, skips, folds or
    replaces, so the organizer sees what will change and not only how much.  ``title``,
    ``columns`` and ``help`` are English (``gettext_noop``): the page translates them."""

    title: str
    columns: tuple[str, ...]
    rows: list[tuple] = field(default_factory=list)
    help: str = ""
    css_id: str = ""


@dataclass
class ImportPlan:
    """What an import would do: ``counts`` and ``lists`` for the preview, or ``issues``.
    The names of ``counts`` stay English (``gettext_noop``: they are the audit event's keys
    and the jobs' too); the page translates them."""

    kind: str
    filename: str
    counts: dict[str, int] = field(default_factory=dict)
    issues: list[Issue] = field(default_factory=list)
    folds: list[Fold] = field(default_factory=list)  # judgments: rows folded into one string
    fully_judged: list[int] = field(default_factory=list)  # judgments: no string left unjudged
    lists: list[PreviewList] = field(default_factory=list)
    _write: object = None

    @property
    def ok(self) -> bool:
        return not self.issues


# -- questions --------------------------------------------------------------------------------
def _plan_questions(collection: Collection, data: bytes, filename: str) -> ImportPlan:
    plan = ImportPlan("questions", filename)
    rows, parse_issues = question_rows(data, filename=filename)
    existing = dict(Question.objects.filter(collection=collection).values_list("qid", "text"))
    create, update = [], []
    seen: dict[str, int] = {}  # question id without its formula quote -> line
    for r in rows:
        qid, text = r.question_id, r.text
        if len(qid) > 100:
            plan.issues.append(
                Issue(
                    filename,
                    r.line,
                    gettext("question_id %(qid)s... is longer than 100 characters")
                    % {"qid": repr(qid[:20])},
                )
            )
            continue
        if qid in seen:  # the parser saw two ids; without the quote they are one
            plan.issues.append(
                Issue(
                    filename,
                    r.line,
                    gettext(
                        "question_id %(given)s is %(qid)s once its spreadsheet-formula quote "
                        "is taken off, the same question as line %(line)s"
                    )
                    % {"given": repr(r.question_id), "qid": repr(qid), "line": seen[qid]},
                )
            )
            continue
        seen[qid] = r.line
        if qid not in existing:
            create.append((qid, text))
        elif existing[qid] != text:
            update.append((qid, text))
    plan.issues = merge_issues(filename, parse_issues, plan.issues)
    plan.counts = {
        gettext_noop("questions to create"): len(create),
        gettext_noop("questions to update"): len(update),
        gettext_noop("questions unchanged"): len(rows) - len(create) - len(update),
    }
    plan.lists = [
        PreviewList(
            gettext_noop("Questions to create"),
            (gettext_noop("question"), gettext_noop("text")),
            create,
            css_id="preview-create",
        ),
        PreviewList(
            gettext_noop("Questions whose text changes"),
            (gettext_noop("question"), gettext_noop("text now"), gettext_noop("new text")),
            [(q, existing[q], t) for q, t in update],
            css_id="preview-update",
        ),
    ]

    def write():
        Question.objects.bulk_create(
            Question(collection=collection, qid=q, text=t) for q, t in create
        )
        now = timezone.now()
        for q, t in update:
            Question.objects.filter(collection=collection, qid=q).update(
                text=t, version=F("version") + 1, updated_at=now
            )

    plan._write = write
    return plan


# -- flat answer lists ----------------------------------------------------------------------
def _plan_flat(
    collection: Collection, data: bytes, filename: str, by: AnyUser | None = None
) -> ImportPlan:
    plan = ImportPlan("flat", filename)
    rows, parse_issues = flat_answer_rows(data, filename=filename)
    questions = dict(Question.objects.filter(collection=collection).values_list("qid", "pk"))
    mode = collection.matching_mode
    good: list[tuple[int, str, str]] = []
    for r in rows:
        qid, answer = r.question_id, r.answer
        if qid not in questions:
            plan.issues.append(Issue(filename, r.line, _unknown_question(qid)))
            continue
        key = normalize_answer(answer, mode)
        if not key:
            plan.issues.append(Issue(filename, r.line, empty_key_message(qid, answer, mode)))
        else:
            good.append((questions[qid], key, answer))
    # spellings with one key are one string, as in a judgments file; a new spelling of a
    # string already there is kept as its variant
    spellings = {
        s.pk: spellings_of(s)
        for s in AnswerString.objects.filter(question__collection=collection).only(
            "pk", "text", "variants"
        )
    }
    known = {k: spellings[pk] for k, pk in key_owners(question_ids=questions.values()).items()}
    folded = judging.spellings_fold(good, known)
    new = [k for k in folded if k not in known]
    qid_of = {pk: qid for qid, pk in questions.items()}
    added, skipped, variants = [], [], []
    seen: dict[tuple[int, str], list[str]] = {k: list(v) for k, v in known.items()}
    kept_rows = (r for r in rows if r.question_id in questions and normalize_answer(r.answer, mode))
    for r, (q, key, text) in zip(kept_rows, good, strict=True):
        text = text.strip()
        spellings = seen.get((q, key))
        if spellings is None:
            seen[(q, key)] = [text]
            added.append((r.line, qid_of[q], text))
        elif text in spellings:
            where = (
                gettext('"%(text)s" is in the collection')
                if (q, key) in known
                else gettext('"%(text)s" is earlier in the file')
            )
            skipped.append((r.line, qid_of[q], text, where % {"text": spellings[0]}))
        else:
            spellings.append(text)
            why = gettext('a variant of "%(text)s"') % {"text": spellings[0]}
            variants.append((r.line, qid_of[q], text, why))
    c_line, c_question, c_answer, c_why = (
        gettext_noop("line"),
        gettext_noop("question"),
        gettext_noop("answer"),
        gettext_noop("why"),
    )
    plan.lists = [
        PreviewList(
            gettext_noop("Strings to add (unjudged)"),
            (c_line, c_question, c_answer),
            added,
            css_id="preview-add",
        ),
        PreviewList(
            gettext_noop("Spellings kept as variants of a string"),
            (c_line, c_question, c_answer, c_why),
            variants,
            css_id="preview-variants",
        ),
        PreviewList(
            gettext_noop("Rows skipped (the string is there already)"),
            (c_line, c_question, c_answer, c_why),
            skipped,
            css_id="preview-skip",
        ),
    ]
    plan.issues = merge_issues(filename, parse_issues, plan.issues)
    plan.counts = {
        gettext_noop("candidate strings to add"): len(new),
        gettext_noop("rows naming a string already there or earlier in the file"): len(good)
        - len(new),
        gettext_noop("spellings kept as variants"): sum(len(v) for v in folded.values()) - len(new),
        gettext_noop("questions concerned"): len({q for q, _ in new}),
    }

    def write():
        added = judging.strings_add_unjudged(
            rows=good, source=Source.FLAT, by=by, reason=f"flat answer list {filename}"
        )
        # the import is the last change of the questions it brings strings to
        Question.objects.filter(pk__in=added.questions).update(updated_at=timezone.now())

    plan._write = write
    return plan


# -- judgments ----------------------------------------------------------------------------------
@dataclass
class Fold:
    """The rows of a judgments file that name one string (same question and matching key)
    with one judgment: the first spelling is the string's text, the others its variants."""

    qid: str
    text: str
    synset: str  # the file's synset id; "" when judged incorrect
    level: str  # level code; "" when judged incorrect
    lines: list[int] = field(default_factory=list)
    spellings: list[str] = field(default_factory=list)  # the other spellings, first seen first


@dataclass(eq=False, slots=True)
class _String:
    """A string the judgments import writes (a row of AnswerString, without the ORM)."""

    pk: int | None
    question_id: int
    key: str
    text: str
    variants: list[str]
    synset_id: int | None
    level_id: int | None


def _unknown_question(qid: str) -> str:
    return gettext("unknown question %(qid)s") % {"qid": repr(qid)}


def _judgment(synset: str, level: str) -> str:
    if not synset:
        return gettext("judged incorrect")
    return gettext("synset %(synset)s, level %(level)s") % {"synset": synset, "level": level}


def _csv_header(data: bytes | str) -> tuple[list[str], int]:
    """The column names of a CSV file's header (its first non-blank record, read from the
    file's first 64 KiB), stripped and lowercased as the parsers read them, and its line;
    ``([], 1)`` when there is none (the parser then says what is wrong)."""
    head = data[:65536]
    text = head if isinstance(head, str) else head.decode("utf-8-sig", errors="replace")
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    try:
        for record in reader:
            if any(c.strip() for c in record):
                return [c.strip().lower() for c in record], reader.line_num
    except csv.Error:
        pass
    return [], 1


def _plan_judgments(
    collection: Collection, data: bytes, filename: str, by: AnyUser | None
) -> ImportPlan:
    """The plan of a judgments file: its rows folded by matching key, then checked against
    the strings the collection holds.  Still one function (radon E): it was left whole while
    the spelling keys and the empty-answer rule landed in it (issue 23, parts 5 and 6); its
    steps (fold the rows, refuse unnamed strings judged in layers, count, write) are the
    next split."""
    plan = ImportPlan("judgments", filename)
    header, line = _csv_header(data)
    if "assessor" in header and "done" in header:
        # the layers file (``layer_io.HEADER``): its rows are several assessors' judgments of
        # one string, which gold would take as one (or refuse as contradicting each other)
        plan.issues.append(
            Issue(
                filename,
                line,
                gettext(
                    "this is a layers CSV (it has the columns assessor and done): choose the "
                    "kind Layers CSV"
                ),
            )
        )
        return plan
    levels = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
    rows, parse_issues = judgment_rows(data, filename=filename, levels=tuple(levels))
    questions = dict(Question.objects.filter(collection=collection).values_list("qid", "pk"))
    qid_of = {pk: qid for qid, pk in questions.items()}
    mode = collection.matching_mode
    # (question, key) -> the rows naming that string: a real study's file spells one answer
    # several ways; rows that agree fold into one string, rows that disagree are refused
    strings: dict[tuple[int, str], Fold] = {}
    keys = normalize_many([r.answer for r in rows], mode)  # in one pass: the C keyer's
    for r, key in zip(rows, keys, strict=True):
        qid, syn, answer = r.question_id, r.synset_id, r.answer
        if qid not in questions:
            plan.issues.append(Issue(filename, r.line, _unknown_question(qid)))
            continue
        if len(syn) > 100:
            message = gettext("synset_id %(synset)s... is longer than 100 characters")
            plan.issues.append(Issue(filename, r.line, message % {"synset": repr(syn[:20])}))
            continue
        q = questions[qid]
        if not key:
            plan.issues.append(Issue(filename, r.line, empty_key_message(qid, answer, mode)))
            continue
        kept = strings.get((q, key))
        if kept is None:
            strings[(q, key)] = Fold(qid, answer, syn, r.level, [r.line])
        elif (syn, r.level) != (kept.synset, kept.level):
            plan.issues.append(
                Issue(
                    filename,
                    r.line,
                    gettext(
                        'question %(qid)s: "%(answer)s" (%(judgment)s) matches "%(kept)s" on '
                        "line %(line)s (%(kept_judgment)s) under %(mode)s matching; one string "
                        "has one judgment"
                    )
                    % {
                        "qid": repr(qid),
                        "answer": answer,
                        "judgment": _judgment(syn, r.level),
                        "kept": kept.text,
                        "line": kept.lines[0],
                        "kept_judgment": _judgment(kept.synset, kept.level),
                        "mode": mode,
                    },
                )
            )
        else:
            kept.lines.append(r.line)
            if answer != kept.text and answer not in kept.spellings:
                kept.spellings.append(answer)
    plan.folds = [f for f in strings.values() if len(f.lines) > 1]
    synsets: dict[int, dict[str, list]] = defaultdict(dict)  # question -> file id -> keys
    incorrect: dict[int, list[str]] = defaultdict(list)
    for (q, key), f in strings.items():
        if f.synset:
            synsets[q].setdefault(f.synset, []).append(key)
        else:
            incorrect[q].append(key)
    touched = sorted(set(synsets) | set(incorrect))
    # the strings of these questions now: one the file names keeps its row (and its id, so
    # the layers' judgments of it stay); a judged one it does not name is removed -- unless
    # assessors judged it in their layers (DESIGN.md section 9): deleting it would delete
    # their judgments, so such a file is refused
    # a row names the string holding its key by any spelling (``strings_claim``): a spelling
    # keyed apart by a switch of matching mode is still its string's
    current = _current_strings(touched)
    existing = strings_claim(strings, current, key_owners(question_ids=touched))
    claimed = {s.pk for s in existing.values()}
    unnamed = [s for s in current if s.pk not in claimed]
    first_line: dict[int, int] = {}
    for (q, _key), f in strings.items():
        first_line[q] = min(first_line.get(q, f.lines[0]), f.lines[0])
    for s in unnamed:
        q = s.question_id
        if s.judged and s.n_layers:
            plan.issues.append(
                Issue(
                    filename,
                    first_line[q],
                    ngettext(
                        'question %(qid)s: "%(text)s" is judged in %(n)s assessor layer; the '
                        "file does not name it, and removing it would delete those judgments: "
                        "add a row for it (its judgment in gold), or leave this question out "
                        "of the file",
                        'question %(qid)s: "%(text)s" is judged in %(n)s assessor layers; the '
                        "file does not name it, and removing it would delete those judgments: "
                        "add a row for it (its judgment in gold), or leave this question out "
                        "of the file",
                        s.n_layers,
                    )
                    % {"qid": repr(qid_of[q]), "text": s.text, "n": s.n_layers},
                )
            )
    plan.issues = merge_issues(filename, parse_issues, plan.issues)
    left_over = {s.question_id for s in unnamed if not s.judged}
    plan.fully_judged = [q for q in touched if q not in left_over]
    plan.lists = [
        _replaced_list(current, {s.pk: strings[k] for k, s in existing.items()}, qids=qid_of)
    ]
    plan.counts = {
        gettext_noop("questions with judgments"): len(touched),
        gettext_noop("synsets to create"): sum(len(s) for s in synsets.values()),
        gettext_noop("correct strings"): sum(len(m) for s in synsets.values() for m in s.values()),
        gettext_noop("incorrect strings"): sum(len(v) for v in incorrect.values()),
        gettext_noop("spellings folded into another string"): sum(
            len(f.lines) - 1 for f in plan.folds
        ),
        gettext_noop("questions whose judgments are replaced"): len(
            {s.question_id for s in current if s.judged}
        ),
        gettext_noop("questions fully judged by the file"): len(plan.fully_judged),
    }

    def write():
        now = timezone.now()
        judge = by if by is not None and by.is_authenticated else None
        # replace the judgments of these questions: a string the file names is rewritten in
        # place (its old spellings stay as variants), a judged one it does not name goes
        # (the plan refused the file if assessors judged it in a layer), an unjudged one it
        # does not name stays unjudged; the questions' synsets are made anew from the file
        doomed = [s.pk for s in unnamed if s.judged]
        AnswerString.objects.filter(pk__in=doomed).delete()
        # the strings the file names are rewritten below with their new synsets, the judged
        # ones it does not name are gone: no string keeps one of these synsets at the commit
        # (foreign keys are checked there), so one set-based delete, without the ORM's
        # RESTRICT check
        delete_rows(AnswerSynset, "question_id", touched)

        def string(q, key, synset=None):
            f = strings[(q, key)]
            s = existing.get((q, key))
            old = (s.text, *s.variants) if s is not None else ()
            variants = list(dict.fromkeys(v for v in (*f.spellings, *old) if v != f.text))
            level = levels[f.level].pk if synset else None
            return _String(s.pk if s else None, q, key, f.text, variants, synset, level)

        synset_rows, members = [], []
        for q in touched:
            for ordinal, (label, keys) in enumerate(synsets[q].items(), start=1):
                synset_rows.append((q, ordinal, label))
                members.append((q, keys))
        synset_ids = insert_rows(
            AnswerSynset, ["question_id", "ordinal", "label"], synset_rows, ids=True
        )
        rows = [
            string(q, k, syn)
            for syn, (q, keys) in zip(synset_ids, members, strict=True)
            for k in keys
        ]
        rows += [string(q, k) for q, keys in incorrect.items() for k in keys]
        # an old spelling that the file makes a string of its own goes to that string
        spellings_settle(rows, mode)
        # a string taken over by a spelling's key gets the key of its new text, which its
        # old spellings held: no other string of the question has it
        judge_id = judge.pk if judge is not None else None
        update_rows(
            AnswerString,
            ["text", "key", "variants", "synset_id", "level_id", "judged_by_id", "judged_at"],
            (
                (s.pk, s.text, s.key, s.variants, s.synset_id, s.level_id, judge_id, now)
                for s in rows
                if s.pk is not None
            ),
        )
        new = [s for s in rows if s.pk is None]
        new_ids = insert_rows(
            AnswerString,
            [
                "question_id",
                "text",
                "key",
                "variants",
                "source",
                "synset_id",
                "level_id",
                "judged_by_id",
                "judged_at",
            ],
            (
                (
                    s.question_id,
                    s.text,
                    s.key,
                    s.variants,
                    Source.IMPORT,
                    s.synset_id,
                    s.level_id,
                    judge_id,
                    now,
                )
                for s in new
            ),
            ids=True,
        )
        for s, pk in zip(new, new_ids, strict=True):
            s.pk = pk
        spelling_keys_write(rows=((s.pk, s.question_id, spellings_of(s)) for s in rows), mode=mode)
        # ``updated_at`` too: the import is each question's last change (the dashboard's)
        Question.objects.filter(pk__in=ids_in(touched)).update(
            version=F("version") + 1, updated_at=now
        )
        Question.objects.filter(pk__in=ids_in(touched), status=QuestionStatus.TODO).update(
            status=QuestionStatus.IN_PROGRESS
        )
        collection_judgments_changed(collection_id=collection.pk)

    plan._write = write
    return plan


@dataclass(eq=False, slots=True)
class _Current:
    """A string of a question a judgments file touches, as the import plan reads it."""

    pk: int
    question_id: int
    key: str
    text: str
    variants: list[str]
    judged: bool
    synset_id: int | None
    synset: str  # its synset as the preview names it (label, else ordinal)
    level: str | None  # level code
    n_layers: int  # judgments of it in assessors' layers


def _current_strings(touched: list[int]) -> list[_Current]:
    """The strings of the questions ``touched``, by question then id, as plain rows (the
    plan reads tens of thousands of them: no model instances, no time stamps parsed)."""
    ids = ids_in(touched)
    layered = dict(
        LayerJudgment.objects.filter(string__question_id__in=ids)
        .values("string_id")
        .annotate(n=Count("id"))
        .values_list("string_id", "n")
    )
    labels = {
        pk: label or str(ordinal)
        for pk, label, ordinal in AnswerSynset.objects.filter(question_id__in=ids).values_list(
            "pk", "label", "ordinal"
        )
    }
    rows = (
        AnswerString.objects.filter(question_id__in=ids)
        .annotate(judged=ExpressionWrapper(Q(judged_at__isnull=False), BooleanField()))
        .order_by("question_id", "id")
        .values_list(
            "pk", "question_id", "key", "text", "variants", "judged", "synset_id", "level__code"
        )
    )
    return [
        _Current(pk, q, key, text, variants, judged, synset, labels.get(synset, "?"), level, n)
        for pk, q, key, text, variants, judged, synset, level in rows
        for n in (layered.get(pk, 0),)
    ]


def _replaced_list(
    current: list[_Current],
    named: dict[int, Fold],
    qids: dict[int, str],
) -> PreviewList:
    """The strings already judged in the questions a judgments file touches (``current``)
    whose judgment the import changes or removes, and the unjudged strings it judges
    (``named``: string id -> the file's rows that name it)."""
    rows = []
    for s in current:
        if not s.judged:
            now = gettext("unjudged")
        elif s.synset_id is None:
            now = gettext("judged incorrect")
        else:
            now = _judgment(s.synset, s.level or "?")
        f = named.get(s.pk)
        after = (
            _judgment(f.synset, f.level)
            if f
            else (
                gettext("unjudged strings not in the file stay unjudged")
                if not s.judged
                else gettext("removed (not in the file)")
            )
        )
        if f is None and not s.judged:
            continue
        if now != after:
            rows.append((qids[s.question_id], s.text, now, after))
    return PreviewList(
        gettext_noop("Strings whose judgment changes"),
        (
            gettext_noop("question"),
            gettext_noop("answer"),
            gettext_noop("now"),
            gettext_noop("after the import"),
        ),
        rows,
        help=gettext_noop(
            "Judgments of the questions in the file are replaced by the file's; a judged "
            "string the file does not name is removed."
        ),
        css_id="preview-replace",
    )


# -- layers (several assessors per question, DESIGN.md section 9) -------------------------------
def _plan_layers(
    collection: Collection, data: bytes, filename: str, by: AnyUser | None
) -> ImportPlan:
    """The layers CSV (``annotate.layer_io``), previewed like the other kinds: the layers
    it replaces or creates, the strings it adds unjudged to gold."""
    checked = layers_plan(collection=collection, data=data, filename=filename)
    plan = ImportPlan("layers", filename, issues=checked.issues)
    if not checked.ok:
        return plan
    replaced = set(checked.replaced)
    plan.counts = {
        gettext_noop("layers to create"): len(checked.planned) - len(replaced),
        gettext_noop("layers to replace"): len(replaced),
        gettext_noop("layer judgments"): checked.judgments,
        gettext_noop("strings to add unjudged"): len(checked.new_strings),
        gettext_noop("layers marked done"): sum(
            checked.done.get(k, False) for k in checked.planned
        ),
    }
    plan.lists = [
        PreviewList(
            gettext_noop("Layers"),
            (
                gettext_noop("question"),
                gettext_noop("assessor"),
                gettext_noop("judgments"),
                gettext_noop("done"),
                gettext_noop("change"),
            ),
            [
                (
                    checked.names[q],
                    checked.users[u],
                    len(rows),
                    gettext("yes") if checked.done.get((q, u)) else "",
                    gettext("replaced") if (q, u) in replaced else gettext("new"),
                )
                for (q, u), rows in sorted(
                    checked.planned.items(),
                    key=lambda kv: (checked.names[kv[0][0]], checked.users[kv[0][1]]),
                )
            ],
            help=gettext_noop(
                "A layer named in the file is replaced by its rows. When all the layers of a "
                "question are done, the strings they agree on go to gold and the others wait "
                "for adjudication, as when the last layer is marked done on the judging page."
            ),
            css_id="preview-layers",
        ),
        PreviewList(
            gettext_noop("Strings to add unjudged"),
            (gettext_noop("question"), gettext_noop("answer")),
            [(checked.names[q], checked.texts[q, k]) for q, k in checked.new_strings],
            css_id="preview-layer-strings",
        ),
    ]

    def write():
        layers_write(checked, by=by)

    plan._write = write
    return plan


def import_plan(
    *, collection: Collection, kind: str, data: bytes, filename: str, by: AnyUser | None = None
) -> ImportPlan:
    """Parse and check ``data`` as a ``kind`` file for ``collection`` without writing:
    the counts to preview, or every error with its line number."""
    try:
        if kind == "questions":
            return _plan_questions(collection, data, filename)
        if kind == "flat":
            return _plan_flat(collection, data, filename, by)
        if kind == "judgments":
            return _plan_judgments(collection, data, filename, by)
        if kind == "layers":
            return _plan_layers(collection, data, filename, by)
    except InputError as e:
        return ImportPlan(kind, filename, issues=e.issues)
    raise ValueError(f"unknown import kind {kind!r}")


@gc_paused()
@transaction.atomic
def collection_import(
    *,
    collection: Collection,
    kind: str,
    data: bytes,
    filename: str,
    by: AnyUser | None = None,
    mark_done: bool = False,
    progress: Callable[[int, int | None, str], None] | None = None,
) -> ImportPlan:
    """Validate the whole file, then write it (all or nothing); raise ImportRefused with
    every error when the file is bad.  With ``mark_done``, the questions a judgments file
    leaves with no unjudged string are marked done.  ``progress(done, total, unit)`` hears
    the lines read, then the write starting (a background job's bar).  Returns the plan
    that was carried out."""
    # no_key: imports of a collection wait for each other, but not the rows that refer to
    # it (their foreign key checks take a key share lock: a layers request committing its
    # event would wait for this import, which waits for the request's questions: deadlock)
    Collection.objects.select_for_update(no_key=True).filter(pk=collection.pk).first()
    lines = max(data.count(b"\n"), data.count(b"\r")) + (not data.endswith((b"\n", b"\r")))
    if progress is not None:
        progress(0, lines, "lines")
    plan = import_plan(collection=collection, kind=kind, data=data, filename=filename, by=by)
    if not plan.ok:
        raise ImportRefused(plan.issues)
    if progress is not None:
        progress(lines, lines, "lines")
        progress(0, None, "questions")
    plan._write()
    if mark_done and kind == "judgments":
        Question.objects.filter(pk__in=ids_in(plan.fully_judged)).update(status=QuestionStatus.DONE)
        plan.counts[gettext_noop("questions marked done")] = len(plan.fully_judged)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action=f"{kind}_import",
        after={"file": filename, **plan.counts},
    )
    return plan


# -- previews waiting for their confirmation ---------------------------------------------------
class PendingImportRefused(Exception):
    """The confirmation of a preview that is not (or no longer) the user's to confirm."""


def pending_imports_clear(*, now: datetime | None = None) -> int:
    """Delete the previews older than ``PENDING_TTL``; returns how many went."""
    limit = (now or timezone.now()) - PENDING_TTL
    return PendingImport.objects.filter(created_at__lt=limit).delete()[0]


@transaction.atomic
def pending_import_create(
    *, collection: Collection, user: AbstractBaseUser, kind: str, filename: str, data: bytes
) -> PendingImport:
    """Keep a validated file until its confirmation, under a fresh unguessable token.  A
    user has one pending import per collection (a newer preview replaces the older), and
    expired previews of everyone are deleted on the way."""
    pending_imports_clear()
    PendingImport.objects.filter(collection=collection, user=user).delete()
    return PendingImport.objects.create(
        token=secrets.token_hex(16),
        collection=collection,
        user=user,
        kind=kind,
        filename=filename[:255],
        data=data,
    )


def pending_import_confirm(
    *,
    token: str,
    collection: Collection,
    user: AbstractBaseUser,
    mark_done: bool = False,
    progress: Callable[[int, int | None, str], None] | None = None,
) -> tuple[PendingImport, ImportPlan]:
    """Import the file previewed under ``token`` (validated again, all or nothing) and
    consume the token in the same transaction, so it cannot be confirmed twice.  Raises
    PendingImportRefused when the token is unknown, used, replaced, expired, someone
    else's or another collection's; ImportRefused (token consumed) when the file no
    longer passes.  Returns the pending import and the plan carried out."""
    refused = error = None
    with transaction.atomic():
        pending = PendingImport.objects.select_for_update().filter(token=token or "").first()
        expired = pending is not None and pending.created_at < timezone.now() - PENDING_TTL
        if pending is None:
            error = gettext(
                "That preview is no longer pending (it was imported already, replaced "
                "by a newer preview, or it expired); upload the file again."
            )
        elif pending.user_id != user.pk:
            error = gettext("That preview was made by another user; upload the file yourself.")
        elif pending.collection_id != collection.pk:
            error = gettext("That preview is for another collection; upload the file here.")
        elif expired:
            error = gettext(
                "That preview expired (previews are kept for %(minutes)s minutes); upload "
                "the file again."
            ) % {"minutes": int(PENDING_TTL.total_seconds() // 60)}
        if pending is not None and (error is None or expired):
            # the count guards against a concurrent confirmation of the same token
            if not PendingImport.objects.filter(pk=pending.pk).delete()[0] and error is None:
                error = gettext("That preview was confirmed already.")
        pending_imports_clear()
        if error is None:
            try:
                plan = collection_import(
                    collection=collection,
                    kind=pending.kind,
                    data=bytes(pending.data),
                    filename=pending.filename,
                    by=user,
                    mark_done=mark_done,
                    progress=progress,
                )
            except ImportRefused as e:
                refused = e  # the token stays consumed: the preview no longer holds
    if error is not None:
        raise PendingImportRefused(error)
    if refused is not None:
        raise refused
    return pending, plan


# -- exports ----------------------------------------------------------------------------------
def _synset_ids(collection: Collection) -> dict[int, str]:
    """Synset pk -> the synset_id an export writes: its label (the id in the file it was
    imported from), else its ordinal; unique within each question (labels claim theirs
    first, and a clash gets a suffix ``-2``, ``-3``, ...)."""
    by_question: dict[int, list[tuple[int, int, str]]] = defaultdict(list)
    for pk, q, ordinal, label in AnswerSynset.objects.filter(
        question__collection=collection
    ).values_list("pk", "question_id", "ordinal", "label"):
        by_question[q].append((pk, ordinal, label))
    out: dict[int, str] = {}
    for synsets in by_question.values():
        used: set[str] = set()
        for pk, ordinal, label in sorted(synsets, key=lambda s: (not s[2], s[1])):
            base = name = label or str(ordinal)
            n = 1
            while name in used:
                n += 1
                name = f"{base}-{n}"
            used.add(name)
            out[pk] = name
    return out


def export_judgments(collection: Collection) -> str:
    """Judgments CSV (DESIGN.md section 6): one row per spelling of each judged string
    (its text, then its variants, all with the string's judgment), synsets by their label
    or ordinal, judged-incorrect strings with empty synset_id and level; extra columns
    question, assessor, updated.  Re-imported, the rows fold back into the same strings."""
    synset_ids = _synset_ids(collection)
    strings = (
        AnswerString.objects.filter(question__collection=collection, judged_at__isnull=False)
        .select_related("question", "level", "judged_by")
        .order_by("question_id", F("synset__ordinal").asc(nulls_last=True), "id")
    )
    rows = (
        [
            s.question.qid,
            synset_ids[s.synset_id] if s.synset_id else "",
            text,
            s.level.code if s.level_id else "",
            s.question.text,
            s.judged_by.get_username() if s.judged_by_id else "",
            s.judged_at.isoformat(timespec="seconds"),
        ]
        for s in strings.iterator(2000)
        for text in (s.text, *s.variants)
    )
    return write_csv(
        ["question_id", "synset_id", "answer", "level", "question", "assessor", "updated"], rows
    )


def export_questions(collection: Collection) -> str:
    """Questions CSV: question_id,question plus status and assessors."""
    questions = list(Question.objects.filter(collection=collection).order_by("id"))
    attach_assessors(questions)
    return write_csv(
        ["question_id", "question", "status", "assessors"],
        ([q.qid, q.text, q.status, " ".join(q.assessor_names)] for q in questions),
    )


def export_events(collection: Collection, *, reader: AnyUser | None = None) -> str:
    """The audit trail: every JudgmentEvent of the collection, oldest first, but those of
    the layers ``reader`` is blind to (``JudgingLayerQuerySet.blind_to``)."""
    events = (
        JudgmentEvent.objects.filter(collection=collection)
        .exclude(layer__in=JudgingLayer.objects.blind_to(reader).values("pk"))
        .select_related("user", "question")
        .order_by("id")
    )
    return write_csv(
        ["id", "created_at", "user", "question_id", "action", "before", "after"],
        (
            [
                e.pk,
                e.created_at.isoformat(timespec="seconds"),
                e.user.get_username() if e.user_id else "",
                e.question.qid if e.question_id else "",
                e.action,
                json.dumps(e.before, ensure_ascii=False),
                json.dumps(e.after, ensure_ascii=False),
            ]
            for e in events.iterator(2000)
        ),
    )
