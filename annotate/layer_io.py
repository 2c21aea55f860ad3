"""Layers as CSV (DESIGN.md section 6 and 9): the judgments CSV with an ``assessor`` column
naming whose layer a row belongs to.

``question_id,synset_id,answer,level,assessor`` -- one row per string judged in a layer;
``synset_id`` is the layer's synset number, empty with ``level`` for incorrect.  The gold
judgments keep their own file (``imports.export_judgments``): a judgments file without
layer rows changes no layer, and this file changes no gold judgment.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from evaluation.metrics.csvio import CsvFormatError, read_records, write_csv
from evaluation.metrics.errors import Issue

from .models import (
    AnswerString,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
    Level,
    Membership,
    Question,
    Role,
    Source,
)
from .normalize import normalize_answer

HEADER = ["question_id", "synset_id", "answer", "level", "assessor", "done"]


def export_layers(collection: Collection) -> str:
    """Every layer judgment of ``collection`` (one query)."""
    rows = (
        LayerJudgment.objects.filter(layer__question__collection=collection)
        .order_by(
            "layer__question_id",
            "layer__assessor__username",
            F("group").asc(nulls_last=True),
            "string__text",
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
    issues: list[Issue] = field(default_factory=list)


@transaction.atomic
def layers_import(*, collection: Collection, data: bytes, filename: str, by) -> LayersImported:
    """Replace the layers the file names (question x assessor) with its rows; strings the
    question lacks are added unjudged to gold.  The whole file is checked first: on any
    error nothing is written and ``issues`` lists them."""
    result = LayersImported()
    try:
        records = read_records(data)
    except (CsvFormatError, UnicodeDecodeError) as e:
        result.issues.append(Issue(filename, getattr(e, "line", None), str(e)))
        return result
    questions = dict(Question.objects.filter(collection=collection).values_list("qid", "pk"))
    levels = {lv.code: lv for lv in Level.objects.filter(collection=collection)}
    judges = dict(
        Membership.objects.filter(
            collection=collection, role__in=[Role.ORGANIZER, Role.ASSESSOR]
        ).values_list("user__username", "user_id")
    )
    mode = collection.matching_mode
    planned: dict[tuple[int, int], dict[str, tuple]] = defaultdict(dict)
    done: dict[tuple[int, int], bool] = {}
    texts: dict[tuple[int, str], str] = {}
    for line, r in enumerate(records, start=2):
        missing = [c for c in HEADER[:5] if c not in r]
        if missing:
            result.issues.append(Issue(filename, 1, f"missing column(s) {', '.join(missing)}"))
            break
        qid, syn, answer, level, who = (r[c].strip() for c in HEADER[:5])
        if qid not in questions:
            result.issues.append(Issue(filename, line, f"unknown question {qid!r}"))
            continue
        if who not in judges:
            result.issues.append(
                Issue(filename, line, f"{who!r} is not an assessor of this collection")
            )
            continue
        if bool(syn) != bool(level) or (level and level not in levels):
            result.issues.append(
                Issue(
                    filename,
                    line,
                    f"level {level!r} with synset_id "
                    f"{syn!r}: a known level with a synset, or neither",
                )
            )
            continue
        if syn and not syn.isdigit():
            result.issues.append(Issue(filename, line, "a layer's synset_id is a number"))
            continue
        key = normalize_answer(answer, mode)
        if not key:
            result.issues.append(Issue(filename, line, f"answer {answer!r} is empty"))
            continue
        q, u = questions[qid], judges[who]
        if key in planned[q, u] and planned[q, u][key][:2] != (syn, level):
            result.issues.append(
                Issue(filename, line, f"{answer!r} is judged twice by {who} in different ways")
            )
            continue
        planned[q, u][key] = (syn, level, line)
        texts.setdefault((q, key), answer)
        done[q, u] = done.get((q, u), False) or r.get("done", "").strip() in ("1", "true", "yes")
    if result.issues:
        return result
    existing = {
        (s.question_id, s.key): s.pk
        for s in AnswerString.objects.filter(question_id__in={q for q, _ in planned}).only(
            "pk", "question_id", "key"
        )
    }
    new = [
        AnswerString(question_id=q, text=t, key=k, source=Source.IMPORT)
        for (q, k), t in texts.items()
        if (q, k) not in existing
    ]
    AnswerString.objects.bulk_create(new)
    result.strings_added = len(new)
    existing.update({(s.question_id, s.key): s.pk for s in new})
    now = timezone.now()
    users = {u.pk: u for u in get_user_model().objects.filter(pk__in={u for _, u in planned})}
    k_of = defaultdict(int)
    for q, _ in planned:
        k_of[q] += 1
    for q, k in k_of.items():
        LayerRequest.objects.get_or_create(question_id=q, defaults={"k": k})
    for (q, u), rows in planned.items():
        layer, _ = JudgingLayer.objects.get_or_create(question_id=q, assessor=users[u])
        layer.judgments.all().delete()
        LayerJudgment.objects.bulk_create(
            LayerJudgment(
                layer=layer,
                string_id=existing[q, key],
                group=int(syn) if syn else None,
                level=levels[level] if syn else None,
                judged_at=now,
            )
            for key, (syn, level, _) in rows.items()
        )
        layer.done_at = now if done.get((q, u)) else None
        layer.started_at = layer.started_at or now
        layer.version += 1
        layer.save(update_fields=["done_at", "started_at", "version"])
        Question.assessors.through.objects.get_or_create(question_id=q, user_id=u)
        result.layers += 1
        result.judgments += len(rows)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action="layers_import",
        after={"file": filename, "layers": result.layers, "judgments": result.judgments},
    )
    return result
