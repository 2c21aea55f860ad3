"""A collection written to one archive (``collection_export``): the manifest, the CSV and
JSON members, with archive ids instead of database ids (``ArchiveIds``)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    Question,
)
from evaluation.metrics.csvio import write_csv
from evaluation.models import Run, RunAnswer

from .format import COLLECTION_FIELDS, COLUMNS, FORMAT, RUN_EVENTS, VERSION, iso


class ArchiveIds:
    """Archive ids of database ids: live rows 1..n in export order, then every id the audit
    trail names that is no longer a row of the collection, numbered as first met."""

    def __init__(self, live: Iterable[int]):
        self.ids = {pk: i for i, pk in enumerate(live, start=1)}

    def __call__(self, pk: int | None) -> int | None:
        if pk is None:
            return None
        pk = int(pk)
        if pk not in self.ids:
            self.ids[pk] = len(self.ids) + 1
        return self.ids[pk]


def _export_side(side: dict, action: str, ids: dict) -> dict:
    """An event's before or after with archive ids, level codes and usernames."""
    if not isinstance(side, dict):
        return side
    side = dict(side)
    if isinstance(side.get("strings"), dict):
        side["strings"] = {
            str(ids["string"](k)): None
            if snap is None
            else dict(
                snap,
                synset=ids["synset"](snap.get("synset")),
                level=ids["level"].get(snap.get("level")),
                judged_by=ids["user"].get(snap.get("judged_by")),
            )
            for k, snap in side["strings"].items()
        }
    if isinstance(side.get("synsets"), list) and "strings" in side:
        side["synsets"] = [[ids["synset"](row[0]), *row[1:]] for row in side["synsets"]]
    if "undoes" in side:
        side["undoes"] = ids["event"].get(side["undoes"])
    if action in RUN_EVENTS and "run" in side:
        side["run"] = ids["run"].get(side["run"])
    if isinstance(side.get("rows"), dict):  # a layer event: [synset, level, judged_at]
        side["rows"] = {
            str(ids["string"](k)): None
            if row is None
            else [row[0], ids["level"].get(row[1]), *row[2:]]
            for k, row in side["rows"].items()
        }
    return side


def collection_export(*, collection: Collection) -> bytes:
    """The archive (zip bytes) of ``collection``."""
    manifest = _manifest(collection)
    q_rows = _question_rows(collection)
    synsets = list(
        AnswerSynset.objects.filter(question__collection=collection)
        .order_by("question_id", "ordinal")
        .values_list("pk", "question__qid", "ordinal", "label", "note")
    )
    strings = list(
        AnswerString.objects.filter(question__collection=collection)
        .order_by("question_id", "id")
        .values_list(
            "pk",
            "question__qid",
            "synset__ordinal",
            "text",
            "variants",
            "key",
            "level__code",
            "source",
            "judged_by__username",
            "judged_at",
            "created_at",
        )
    )
    events = list(
        JudgmentEvent.objects.filter(collection=collection)
        .order_by("id")
        .values_list(
            "pk",
            "question__qid",
            "user__username",
            "action",
            "before",
            "after",
            "created_at",
            "layer__assessor__username",
        )
    )
    # withdrawn runs stay out (a withdrawn run may share its name with a later run); their
    # withdraw_run events are in the events
    runs = list(
        Run.objects.active().filter(collection=collection).order_by("id").select_related("owner")
    )
    ids = _archive_ids(collection, synsets, strings, events, runs)
    # the rows are made in this order: the archive ids of strings and synsets that are no
    # longer rows are numbered as the events, then the layer judgments, first name them
    syn_rows = [(ids["synset"](pk), q, o, label, note) for pk, q, o, label, note in synsets]
    s_rows = _string_rows(strings, ids)
    e_lines = _event_lines(events, ids)
    l_rows = _layer_rows(collection)
    lj_rows = _layer_judgment_rows(collection, ids)
    a_rows = _answer_rows(collection)
    columns = COLUMNS[VERSION]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False))
        z.writestr("questions.csv", write_csv(columns["questions.csv"], q_rows))
        z.writestr("synsets.csv", write_csv(columns["synsets.csv"], syn_rows))
        z.writestr("strings.csv", write_csv(columns["strings.csv"], s_rows))
        z.writestr("events.jsonl", e_lines)
        z.writestr("runs.json", json.dumps(_run_meta(runs), indent=1, ensure_ascii=False))
        z.writestr("run_answers.csv", write_csv(columns["run_answers.csv"], a_rows))
        z.writestr("layers.csv", write_csv(columns["layers.csv"], l_rows))
        z.writestr("layer_judgments.csv", write_csv(columns["layer_judgments.csv"], lj_rows))
    return buf.getvalue()


def _manifest(collection: Collection) -> dict:
    """The manifest: format, version, the collection's fields, levels and members."""
    levels = list(
        collection.levels.order_by("order").values("code", "label", "gain", "order", "examples")
    )
    members = list(
        collection.memberships.order_by("user__username").values_list("user__username", "role")
    )
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": timezone.now().isoformat(),
        "collection": {f: getattr(collection, f) for f in COLLECTION_FIELDS}
        | {"slug": collection.slug, "judgments_changed_at": iso(collection.judgments_changed_at)},
        "levels": levels,
        "members": [{"username": u, "role": r} for u, r in members],
    }


def _question_rows(collection: Collection) -> list[tuple]:
    """questions.csv: each question with its assessors' usernames (sorted, space separated)."""
    assessors: dict[int, list[str]] = {}
    for qid, username in Question.assessors.through.objects.filter(
        question__collection=collection
    ).values_list("question_id", "user__username"):
        assessors.setdefault(qid, []).append(username)
    return [
        (q.qid, q.text, q.status, q.notes, q.version, " ".join(sorted(assessors.get(q.pk, []))))
        for q in Question.objects.filter(collection=collection).order_by("id")
    ]


def _archive_ids(
    collection: Collection,
    synsets: list[tuple],
    strings: list[tuple],
    events: list[tuple],
    runs: list[Run],
) -> dict:
    """The maps from database ids to what the archive names: archive ids of strings,
    synsets and events, level codes, run names, usernames of the users the audit trail's
    snapshots name."""
    snapshot_users = {
        snap.get("judged_by")
        for e in events
        for side in e[4:6]
        if isinstance(side, dict) and isinstance(side.get("strings"), dict)
        for snap in side["strings"].values()
        if isinstance(snap, dict)
    } - {None}
    return {
        "string": ArchiveIds(s[0] for s in strings),
        "synset": ArchiveIds(s[0] for s in synsets),
        "event": {e[0]: i for i, e in enumerate(events, start=1)},
        "level": dict(collection.levels.values_list("pk", "code")),
        "run": {r.pk: r.name for r in runs},
        "user": dict(
            get_user_model().objects.filter(pk__in=snapshot_users).values_list("pk", "username")
        ),
    }


def _string_rows(strings: list[tuple], ids: dict) -> list[tuple]:
    """strings.csv: each string with its archive id, variants as a JSON list."""
    return [
        (
            ids["string"](pk),
            q,
            o or "",
            t,
            json.dumps(v, ensure_ascii=False) if v else "",
            k,
            lv or "",
            src,
            by or "",
            iso(at),
            iso(created),
        )
        for pk, q, o, t, v, k, lv, src, by, at, created in strings
    ]


def _event_lines(events: list[tuple], ids: dict) -> str:
    """events.jsonl: one JSON object per audit event, its snapshots in archive ids."""
    return "".join(
        json.dumps(
            {
                "id": ids["event"][pk],
                "question_id": q,
                "user": u,
                "action": a,
                "before": _export_side(b, a, ids),
                "after": _export_side(af, a, ids),
                "created_at": iso(c),
                "layer": layer,
            },
            ensure_ascii=False,
        )
        + "\n"
        for pk, q, u, a, b, af, c, layer in events
    )


def _layer_rows(collection: Collection) -> list[tuple]:
    """layers.csv: each layer with its question's request (k, adjudicator, gold_at)."""
    return [
        (
            q,
            who,
            k or "",
            adj or "",
            iso(gold),
            version,
            iso(started),
            iso(done),
            "" if secs is None else repr(secs),
        )
        for q, who, k, adj, gold, version, started, done, secs in (
            JudgingLayer.objects.filter(question__collection=collection)
            .order_by("question_id", "id")
            .values_list(
                "question__qid",
                "assessor__username",
                "question__layer_request__k",
                "question__layer_request__adjudicator__username",
                "question__layer_request__gold_at",
                "version",
                "started_at",
                "done_at",
                "seconds",
            )
        )
    ]


def _layer_judgment_rows(collection: Collection, ids: dict) -> list[tuple]:
    """layer_judgments.csv: each string as one layer judged it, by its archive id."""
    return [
        (q, who, ids["string"](s), "" if g is None else g, lv or "", iso(at))
        for q, who, s, g, lv, at in (
            LayerJudgment.objects.filter(layer__question__collection=collection)
            .order_by("layer__question_id", "layer_id", "string_id")
            .values_list(
                "layer__question__qid",
                "layer__assessor__username",
                "string_id",
                "group",
                "level__code",
                "judged_at",
            )
        )
    ]


def _run_meta(runs: list[Run]) -> list[dict]:
    """runs.json: each active run's name, owner and file metadata."""
    return [
        {
            "name": r.name,
            "owner": r.owner.get_username(),
            "description": r.description,
            "uploaded_at": iso(r.uploaded_at),
            "source_name": r.source_name,
            "sha256": r.sha256,
            "format": r.format,
        }
        for r in runs
    ]


def _answer_rows(collection: Collection) -> list[tuple]:
    """run_answers.csv: the answers of the active runs, by run, question and rank."""
    answers = (
        RunAnswer.objects.filter(run__collection=collection, run__withdrawn_at__isnull=True)
        .order_by("run_id", "question_id", "rank")
        .values_list("run__name", "question__qid", "rank", "text", "key", "score")
    )
    return [(r, q, rank, t, k, "" if s is None else repr(s)) for r, q, rank, t, k, s in answers]
