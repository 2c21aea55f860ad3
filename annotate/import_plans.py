"""The plans of the imports (``annotate.imports`` runs them): what a file would change,
for the preview, or every error with its line number, and the write it would do.  The
plan of each kind but judgments (``annotate.judgments_plan``): questions, flat answer
lists, layers; and what every plan shares (``ImportPlan``, ``PreviewList``, ``Fold``, the
messages naming a question or a judgment)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from evaluation.metrics import Issue
from evaluation.metrics.errors import merge_issues
from evaluation.metrics.parsers import flat_answer_rows, question_rows
from evaluation.metrics.text_rules import empty_key_message

from . import judging
from .layer_io import layers_plan, layers_write
from .models import AnswerString, Collection, Question, Source
from .normalize import normalize_answer
from .spellings import key_owners, spellings_of

if TYPE_CHECKING:
    from .edits import AnyUser


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


def unknown_question(qid: str) -> str:
    return gettext("unknown question %(qid)s") % {"qid": repr(qid)}


def judgment_text(synset: str, level: str) -> str:
    if not synset:
        return gettext("judged incorrect")
    return gettext("synset %(synset)s, level %(level)s") % {"synset": synset, "level": level}


# -- questions --------------------------------------------------------------------------------
def plan_questions(collection: Collection, data: bytes, filename: str) -> ImportPlan:
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
def plan_flat(
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
            plan.issues.append(Issue(filename, r.line, unknown_question(qid)))
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


# -- layers (several assessors per question, DESIGN.md section 9) -------------------------------
def plan_layers(
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
