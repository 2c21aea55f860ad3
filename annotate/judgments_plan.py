"""The plan of a judgments file (docs/formats.md; ``annotate.imports`` runs it): its rows
folded by matching key, checked against the strings the collection holds, previewed as the
judgments it replaces, and written in place of the judgments of the questions it names."""

from __future__ import annotations

import csv
import io
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import BooleanField, Count, ExpressionWrapper, F, Q
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop, ngettext

from config.bulk import delete_rows, ids_in, insert_rows, update_rows
from evaluation.metrics import Issue
from evaluation.metrics.errors import merge_issues
from evaluation.metrics.judgment_parsers import judgment_rows
from evaluation.metrics.normalize import normalize_many
from evaluation.metrics.text_rules import empty_key_message

from .edits import collection_judgments_changed
from .import_plans import Fold, ImportPlan, PreviewList, judgment_text, unknown_question
from .models import (
    AnswerString,
    AnswerSynset,
    Collection,
    LayerJudgment,
    Level,
    Question,
    QuestionStatus,
    Source,
)
from .spellings import (
    key_owners,
    spelling_keys_write,
    spellings_of,
    spellings_settle,
    strings_claim,
)

if TYPE_CHECKING:
    from .edits import AnyUser


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


def plan_judgments(
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
            plan.issues.append(Issue(filename, r.line, unknown_question(qid)))
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
                        "judgment": judgment_text(syn, r.level),
                        "kept": kept.text,
                        "line": kept.lines[0],
                        "kept_judgment": judgment_text(kept.synset, kept.level),
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
            now = judgment_text(s.synset, s.level or "?")
        f = named.get(s.pk)
        after = (
            judgment_text(f.synset, f.level)
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
