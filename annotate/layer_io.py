"""Layers as CSV (DESIGN.md section 6 and 9): the judgments CSV with an ``assessor`` column
naming whose layer a row belongs to.

``question_id,synset_id,answer,level,assessor`` -- one row per string judged in a layer;
``synset_id`` is the layer's synset number, empty with ``level`` for incorrect.  The gold
judgments keep their own file (``imports.export_judgments``): a judgments file without
layer rows changes no layer, and this file changes no gold judgment.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext

from evaluation.metrics.csvio import CsvFormatError, read_records, write_csv
from evaluation.metrics.errors import Issue
from evaluation.metrics.text_rules import control_issues, empty_key_message

from .adjudication import question_layers_to_gold
from .edits import questions_lock
from .layer_state import layers_complete, sealed_questions
from .models import (
    JUDGE_ROLES,
    AnswerString,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
    Level,
    Membership,
    Question,
    Source,
)
from .normalize import normalize_answer
from .spellings import key_owners, string_keys_sync

if TYPE_CHECKING:
    from .edits import AnyUser

HEADER = ["question_id", "synset_id", "answer", "level", "assessor", "done"]


def export_layers(collection: Collection, *, reader: AnyUser | None = None) -> str:
    """Every layer judgment of ``collection`` (one query) but those of the layers
    ``reader`` is blind to (``JudgingLayerQuerySet.blind_to``), in a stable order: by
    question, assessor name, synset number (incorrect last), answer."""
    rows = (
        LayerJudgment.objects.filter(layer__question__collection=collection)
        .exclude(layer__in=JudgingLayer.objects.blind_to(reader).values("pk"))
        .order_by(
            "layer__question_id",
            "layer__assessor__username",
            F("group").asc(nulls_last=True),
            "string__text",
            "string_id",
        )
        .values_list(
            "layer__question__qid",
            "group",
            "string__text",
            "level__code",
            "layer__assessor__username",
            "layer__done_at",
        )
    )
    return write_csv(
        HEADER,
        (
            [qid, group or "", text, level or "", who, "1" if done else ""]
            for qid, group, text, level, who, done in rows.iterator(5000)
        ),
    )


@dataclass
class LayersImported:
    layers: int = 0
    judgments: int = 0
    strings_added: int = 0
    questions_to_gold: int = 0  # questions whose layers are all done: agreed strings to gold
    issues: list[Issue] = field(default_factory=list)


@dataclass
class LayersPlan:
    """A layers file checked against the collection (``layers_plan``): ``issues``, or what
    ``layers_write`` will write -- per (question id, user id) the rows by matching key,
    whether the layer is done, and each new key's first spelling."""

    filename: str
    issues: list[Issue] = field(default_factory=list)
    planned: dict[tuple[int, int], dict[str, tuple]] = field(default_factory=dict)
    done: dict[tuple[int, int], bool] = field(default_factory=dict)
    texts: dict[tuple[int, str], str] = field(default_factory=dict)
    levels: dict[str, Level] = field(default_factory=dict)
    new_strings: list[tuple[int, str]] = field(default_factory=list)  # (question id, key)
    replaced: list[tuple[int, int]] = field(default_factory=list)  # layers that exist already
    names: dict[int, str] = field(default_factory=dict)  # question id -> qid
    users: dict[int, str] = field(default_factory=dict)  # user id -> username
    # the k of the request the import makes for a question that has none: its layers
    k_new: dict[int, int] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.issues

    @property
    def judgments(self) -> int:
        return sum(len(rows) for rows in self.planned.values())


# the ``done`` column, case-insensitive (anything else is refused with its line)
_DONE = {"1": True, "true": True, "yes": True, "0": False, "false": False, "no": False, "": False}
_MAX_GROUP = 999_999_999  # LayerJudgment.group, a PositiveIntegerField
_GROUP = re.compile(r"[1-9][0-9]{0,8}", re.ASCII)


def layers_plan(*, collection: Collection, data: bytes, filename: str) -> LayersPlan:
    """Check the whole layers file against ``collection`` without writing (a few queries):
    every error with its line number, or the plan ``layers_write`` carries out.  In steps,
    each stopping at its errors: read the file, check each row, then the layers as a whole
    (named adjudicators, questions whose gold was derived, no more layers than a question's
    k, done layers that leave strings unjudged).  Planned inside the transaction that
    writes it (``layers_import``, the import page's confirmation), it locks its questions
    before it reads their layers, as ``layers_request`` does: a request for layers on them
    at the same time waits for the import or is waited for, and the one that comes second
    sees the other's layers (and is refused when they would pass k)."""
    plan = LayersPlan(filename)
    records = _read_records(plan, data)
    if records is None:
        return plan
    planned = _plan_rows(plan, collection, records)
    if not plan.issues and transaction.get_connection().in_atomic_block:
        questions_lock(q for q, _ in planned)
    for check in (_refuse_adjudicators, _refuse_sealed, _refuse_over_k):
        if plan.issues:
            return plan
        check(plan, planned)
    if plan.issues:
        return plan
    plan.planned = dict(planned)
    _refuse_unjudged_done(plan, planned)
    if plan.issues:
        plan.planned = {}
        return plan
    have = set(
        JudgingLayer.objects.filter(question_id__in={q for q, _ in planned}).values_list(
            "question_id", "assessor_id"
        )
    )
    plan.replaced = [k for k in planned if k in have]
    return plan


# (question, assessor) -> answer key -> (synset_id, level code, line)
Planned = dict[tuple[int, int], dict[str, tuple]]


def _read_records(plan: LayersPlan, data: bytes) -> list[dict[str, str]] | None:
    """The file's rows, or None with the issues that it is no UTF-8 text, holds a NUL byte
    or is no CSV."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        # the line of the first byte that is not UTF-8 (the decoder says where it is)
        line = bytes(e.object[: e.start]).count(b"\n") + 1
        plan.issues.append(
            Issue(
                plan.filename,
                line,
                gettext("not UTF-8 text: byte 0x%(byte)s (save the file as UTF-8)")
                % {"byte": f"{e.object[e.start]:02x}"},
            )
        )
        return None
    plan.issues = control_issues(text, plan.filename)
    if plan.issues:
        return None
    try:
        return list(read_records(text))
    except CsvFormatError as e:
        plan.issues.append(Issue(plan.filename, e.line, str(e)))
    return None


def _plan_rows(plan: LayersPlan, collection: Collection, records: list[dict[str, str]]) -> Planned:
    """Each row checked on its own and against the rows before it (the same string judged
    twice, one value of done a layer), planned when it passes."""
    filename = plan.filename
    questions = dict(Question.objects.filter(collection=collection).values_list("qid", "pk"))
    levels = plan.levels = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
    judges = dict(
        Membership.objects.filter(collection=collection, role__in=JUDGE_ROLES).values_list(
            "user__username", "user_id"
        )
    )
    mode = collection.matching_mode
    planned: Planned = defaultdict(dict)
    done, texts = plan.done, plan.texts
    done_line: dict[tuple[int, int], int] = {}  # the first line of each layer
    for line, r in enumerate(records, start=2):
        missing = [c for c in HEADER[:5] if c not in r]
        if missing:
            message = gettext("missing column(s) %(columns)s") % {"columns": ", ".join(missing)}
            plan.issues.append(Issue(filename, 1, message))
            break
        qid, syn, answer, level, who = (r[c].strip() for c in HEADER[:5])
        refusal = _row_refusal(qid, syn, level, who, questions, judges, levels)
        key = normalize_answer(answer, mode) if refusal is None else ""
        if refusal is None and not key:
            refusal = empty_key_message(qid, answer, mode)
        if refusal is None:
            q, u = questions[qid], judges[who]
            raw_done = r.get("done", "").strip()
            is_done = _DONE.get(raw_done.lower())
            refusal = _layer_refusal(
                planned[q, u], key, (syn, level), answer, who, raw_done, is_done
            )
        if refusal is None and (q, u) in done_line and done[q, u] != is_done:
            refusal = (
                gettext(
                    "%(who)s's layer of %(qid)s is marked done here but not done on line "
                    "%(line)s: one value of done for all rows of a layer"
                )
                if is_done
                else gettext(
                    "%(who)s's layer of %(qid)s is marked not done here but done on line "
                    "%(line)s: one value of done for all rows of a layer"
                )
            ) % {"who": who, "qid": qid, "line": done_line[q, u]}
        if refusal is not None:
            plan.issues.append(Issue(filename, line, refusal))
            continue
        done[q, u] = is_done
        done_line.setdefault((q, u), line)
        planned[q, u][key] = (syn, level, line)
        texts.setdefault((q, key), answer)
        plan.names[q], plan.users[u] = qid, who
    return planned


def _row_refusal(
    qid: str,
    syn: str,
    level: str,
    who: str,
    questions: dict[str, int],
    judges: dict[str, int],
    levels: dict[str, Level],
) -> str | None:
    """Why a row cannot be read on its own (its question, assessor, synset and level), or
    None."""
    if qid not in questions:
        return gettext("unknown question %(qid)s") % {"qid": repr(qid)}
    if who not in judges:
        return gettext("%(who)s is not an assessor of this collection") % {"who": repr(who)}
    if bool(syn) != bool(level) or (level and level not in levels):
        return gettext(
            "level %(level)s with synset_id %(synset)s: a known level with a synset, or neither"
        ) % {"level": repr(level), "synset": repr(syn)}
    if syn and not _GROUP.fullmatch(syn):
        # ASCII digits only ("²".isdigit() is true but int() refuses it), within the
        # column; 0 would be written back as "no synset" (incorrect) by export_layers
        return gettext("a layer's synset_id is a number from 1 to %(max)s") % {"max": _MAX_GROUP}
    return None


def _layer_refusal(
    rows: dict[str, tuple],
    key: str,
    judged: tuple[str, str],
    answer: str,
    who: str,
    raw_done: str,
    is_done: bool | None,
) -> str | None:
    """Why a row does not fit its layer's rows so far (the same string judged otherwise)
    or has no readable done, or None."""
    if key in rows and rows[key][:2] != judged:
        return gettext("%(answer)s is judged twice by %(who)s in different ways") % {
            "answer": repr(answer),
            "who": who,
        }
    if is_done is None:
        return gettext(
            "done %(done)s: 1, true or yes for a layer marked done; 0, false, no or empty for "
            "one still open"
        ) % {"done": repr(raw_done)}
    return None


def _first_line(rows: dict[str, tuple]) -> int:
    return min(line for _, _, line in rows.values())


def _refuse_adjudicators(plan: LayersPlan, planned: Planned) -> None:
    """A question's named adjudicator judges none of its layers (blindness: the
    adjudication page shows them all), as ``layers_request`` refuses."""
    adjudicators = dict(
        LayerRequest.objects.filter(
            question_id__in={q for q, _ in planned}, adjudicator__isnull=False
        ).values_list("question_id", "adjudicator_id")
    )
    for (q, u), rows in planned.items():
        if adjudicators.get(q) == u:
            plan.issues.append(
                Issue(
                    plan.filename,
                    _first_line(rows),
                    gettext(
                        "%(who)s is the named adjudicator of %(qid)s, so cannot judge it in a layer"
                    )
                    % {"who": plan.users[u], "qid": plan.names[q]},
                )
            )


def _refuse_sealed(plan: LayersPlan, planned: Planned) -> None:
    """Layers gold was derived from stay as they are (``sealed_questions``): replacing one
    would leave gold with the old agreement."""
    first_line: dict[int, int] = {}
    for (q, _), rows in planned.items():
        line = _first_line(rows)
        first_line[q] = min(first_line.get(q, line), line)
    for q in sorted(sealed_questions(list(first_line)), key=first_line.__getitem__):
        plan.issues.append(
            Issue(
                plan.filename,
                first_line[q],
                gettext(
                    "question %(qid)s: gold was already derived from its layers (every layer "
                    "done); its layers can no longer be replaced"
                )
                % {"qid": repr(plan.names[q])},
            )
        )


def _refuse_over_k(plan: LayersPlan, planned: Planned) -> None:
    """A question has at most k layers, as ``layers_request`` gives it: the k of its
    request, or (without one) as many as the file and the layers it has name, which is the
    k of the request the import then makes.  A layer the file replaces is no new one."""
    questions = {q for q, _ in planned}
    ks = dict(
        LayerRequest.objects.filter(question_id__in=questions).values_list("question_id", "k")
    )
    have: dict[int, set[int]] = defaultdict(set)
    for q, u in JudgingLayer.objects.filter(question_id__in=questions).values_list(
        "question_id", "assessor_id"
    ):
        have[q].add(u)
    first: dict[int, int] = {}  # question -> its first line in the file
    new: dict[int, list[tuple[int, int]]] = defaultdict(list)  # question -> (line, user)
    for (q, u), rows in planned.items():
        line = _first_line(rows)
        first[q] = min(first.get(q, line), line)
        if u not in have[q]:
            new[q].append((line, u))
    names = dict(
        get_user_model()
        .objects.filter(pk__in={u for us in have.values() for u in us})
        .values_list("pk", "username")
    )
    for q in sorted(first, key=first.__getitem__):
        k = ks.get(q)
        if k is None:
            plan.k_new[q] = len(have[q]) + len(new[q])
            continue
        over = sorted(new[q])[max(k - len(have[q]), 0) :]
        if not over:
            continue
        line, u = over[0]
        values = {
            "qid": repr(plan.names[q]),
            "k": k,
            "n": len(have[q]),
            "names": ", ".join(sorted(names[a] for a in have[q])),
            "who": plan.users[u],
        }
        message = (
            gettext(
                "question %(qid)s asks for k = %(k)s independent layers and has %(n)s (by "
                "%(names)s): a layer by %(who)s would be one too many; request more layers "
                "for it first (a larger k), or name only the assessors it has"
            )
            if have[q]
            else gettext(
                "question %(qid)s asks for k = %(k)s independent layers and has %(n)s: a "
                "layer by %(who)s would be one too many; request more layers for it first (a "
                "larger k), or name only the assessors it has"
            )
        )
        plan.issues.append(Issue(plan.filename, line, message % values))


def _refuse_unjudged_done(plan: LayersPlan, planned: Planned) -> None:
    """Two spellings of one string judged apart in a layer (``_judged_apart``); then the
    strings the file adds (``plan.new_strings``), and a layer marked done judges every
    string of its question, as ``layer_mark_done`` asks."""
    owners, named, keys_of = _strings_named(planned, plan.texts)
    plan.issues += _judged_apart(planned, plan.texts, named, plan.users, plan.filename)
    if plan.issues:
        return
    plan.new_strings = [k for k in plan.texts if k not in owners]
    for (q, u), rows in planned.items():
        left = keys_of[q] - {named(q, k) for k in rows} if plan.done.get((q, u)) else set()
        if left:
            plan.issues.append(
                Issue(
                    plan.filename,
                    _first_line(rows),
                    gettext(
                        "%(who)s's layer of %(qid)s is marked done but leaves %(n)s string(s) "
                        "of the question unjudged (e.g. a string with the key %(key)s): judge "
                        "them all, or leave done empty"
                    )
                    % {
                        "who": plan.users[u],
                        "qid": plan.names[q],
                        "n": len(left),
                        "key": repr(min(left)),
                    },
                )
            )


def _strings_named(planned: dict, texts: dict) -> tuple[dict, Callable[[int, str], str], dict]:
    """The strings the rows of ``planned`` name: a row names the string holding its key by
    any of its spellings (a spelling keyed apart by a switch of matching mode is still its
    string's).  Returns the key owners (``key_owners``), ``named`` (question id, key) -> the
    key of the named string's text (the row's own key for a new string), and per question
    the strings it will have, by that key."""
    questions = {q for q, _ in planned}
    existing = list(
        AnswerString.objects.filter(question_id__in=questions).values_list(
            "pk", "question_id", "key"
        )
    )
    text_key = {pk: key for pk, _, key in existing}
    owners = key_owners(question_ids=questions)

    def named(q: int, key: str) -> str:
        return text_key[owners[q, key]] if (q, key) in owners else key

    keys_of: dict[int, set[str]] = defaultdict(set)
    for _, q, key in existing:
        keys_of[q].add(key)
    for q, key in texts:
        keys_of[q].add(named(q, key))
    return owners, named, keys_of


def _judged_apart(
    planned: dict, texts: dict, named: Callable[[int, str], str], users: dict, filename: str
) -> list[Issue]:
    """Two rows of one layer naming one string by two of its spellings with different
    judgments: one string has one judgment in a layer."""
    issues = []
    for (q, u), rows in planned.items():
        seen: dict[str, tuple[str, tuple]] = {}
        for key, row in sorted(rows.items(), key=lambda kv: kv[1][2]):
            first = seen.setdefault(named(q, key), (key, row))
            if first[1][:2] != row[:2]:
                issues.append(
                    Issue(
                        filename,
                        row[2],
                        gettext(
                            "%(text)s and %(other)s (line %(line)s) are spellings of one "
                            "string, judged by %(who)s in different ways"
                        )
                        % {
                            "text": repr(texts[q, key]),
                            "other": repr(texts[q, first[0]]),
                            "line": first[1][2],
                            "who": users[u],
                        },
                    )
                )
    return issues


def layers_write(plan: LayersPlan, *, by: AnyUser | None = None) -> LayersImported:
    """Carry out a checked ``plan`` (inside the caller's transaction): replace the layers it
    names (question x assessor) with its rows; strings the question lacks are added
    unjudged to gold.  A question whose layers are then all done goes through the agreement
    step (``question_layers_to_gold``), as when its last layer is marked done on the page."""
    result = LayersImported()
    planned, levels = plan.planned, plan.levels
    # the questions' rows first, as ``layers_request`` locks them: a request for layers on
    # these questions at the same time waits until this import committed and then counts
    # its layers (it would not see them and give each question k layers more)
    questions_lock(q for q, _ in planned)
    existing = key_owners(question_ids={q for q, _ in planned})
    new = [
        AnswerString(question_id=q, text=t, key=k, source=Source.IMPORT)
        for (q, k), t in plan.texts.items()
        if (q, k) not in existing
    ]
    AnswerString.objects.bulk_create(new)
    if new:
        mode = Question.objects.filter(pk=new[0].question_id).values_list(
            "collection__matching_mode", flat=True
        )
        string_keys_sync(strings=new, mode=mode.get())
    result.strings_added = len(new)
    existing.update({(s.question_id, s.key): s.pk for s in new})
    now = timezone.now()
    users = {u.pk: u for u in get_user_model().objects.filter(pk__in={u for _, u in planned})}
    k_of = defaultdict(int)
    for q, _ in planned:
        k_of[q] += 1
    for q, k in k_of.items():
        LayerRequest.objects.get_or_create(question_id=q, defaults={"k": plan.k_new.get(q, k)})
    # the import is the last change of its questions (the dashboard's)
    Question.objects.filter(pk__in=k_of).update(updated_at=now)
    for (q, u), rows in planned.items():
        layer, _ = JudgingLayer.objects.get_or_create(question_id=q, assessor=users[u])
        layer.judgments.all().delete()
        # two spellings of one string judged alike (the plan refused them judged apart)
        marks = {existing[q, key]: (syn, level) for key, (syn, level, _) in rows.items()}
        LayerJudgment.objects.bulk_create(
            LayerJudgment(
                layer=layer,
                string_id=pk,
                group=int(syn) if syn else None,
                level=levels[level] if syn else None,
                judged_at=now,
            )
            for pk, (syn, level) in marks.items()
        )
        layer.done_at = now if plan.done.get((q, u)) else None
        layer.started_at = layer.started_at or now
        layer.version += 1
        layer.save(update_fields=["done_at", "started_at", "version"])
        Question.assessors.through.objects.get_or_create(question_id=q, user_id=u)
        result.layers += 1
        result.judgments += len(marks)
    # as when the last layer is marked done on the page: the strings every layer agrees on
    # go to gold, the rest wait for adjudication
    for q in k_of:
        if layers_complete(q):
            question_layers_to_gold(question=q, by=by)
            result.questions_to_gold += 1
    return result


@transaction.atomic
def layers_import(
    *, collection: Collection, data: bytes, filename: str, by: AnyUser | None
) -> LayersImported:
    """Replace the layers the file names (question x assessor) with its rows; strings the
    question lacks are added unjudged to gold.  The whole file is checked first: on any
    error nothing is written and ``issues`` lists them.  (The import page previews the
    same file as the kind ``layers``: ``annotate.import_plans``.)"""
    plan = layers_plan(collection=collection, data=data, filename=filename)
    if not plan.ok:
        return LayersImported(issues=plan.issues)
    result = layers_write(plan, by=by)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="layers_import",
        after={"file": filename, "layers": result.layers, "judgments": result.judgments},
    )
    return result
