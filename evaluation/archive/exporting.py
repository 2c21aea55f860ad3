"""A collection written to one archive (``collection_export``): the manifest, the CSV and
JSON members, with archive ids instead of database ids (``ArchiveIds``)."""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator
from itertools import chain, islice
from typing import Any, BinaryIO

from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.db.models import QuerySet
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
from evaluation.metrics.csvio import cell, row_text, write_csv
from evaluation.models import Run, RunAnswer

from .format import COLLECTION_FIELDS, COLUMNS, FORMAT, RUN_EVENTS, VERSION, iso

# what a long export reports to (a job's progress): rows written, rows in all, the unit
Progress = Callable[[int, int | None, str | None], None]


class ArchiveIds:
    """Archive ids of database ids: live rows 1..n in export order, then every id the audit
    trail names that is no longer a row of the collection, numbered as first met."""

    def __init__(self, live: Iterable[int]) -> None:
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


def collection_export(*, collection: Collection, progress: Progress | None = None) -> bytes:
    """The archive (zip bytes) of ``collection`` (``collection_export_to`` a buffer)."""
    buf = io.BytesIO()
    collection_export_to(buf, collection=collection, progress=progress)
    return buf.getvalue()


def collection_export_to(
    file: BinaryIO, *, collection: Collection, progress: Progress | None = None
) -> int:
    """Write the archive of ``collection`` to ``file``, member by member and each member a
    chunk of rows at a time (never the whole collection in memory), all read from one
    snapshot of the database; ``progress(rows written, rows in all, "rows")`` is called as
    it goes.  Returns the number of rows written."""
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            # one snapshot for every member: an archive never mixes two states of the data
            # (inside a caller's transaction, its snapshot rules)
            with connection.cursor() as cur:
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _export(file, collection, progress or _no_progress)


def _no_progress(done: int, total: int | None = None, unit: str | None = None) -> None:
    return None


def _export(file: BinaryIO, collection: Collection, progress: Progress) -> int:
    collection.refresh_from_db()  # as of the snapshot
    synsets = AnswerSynset.objects.filter(question__collection=collection)
    strings = AnswerString.objects.filter(question__collection=collection)
    events = JudgmentEvent.objects.filter(collection=collection)
    # withdrawn runs stay out (a withdrawn run may share its name with a later run); their
    # withdraw_run events are in the events
    runs = list(
        Run.objects.active().filter(collection=collection).order_by("id").select_related("owner")
    )
    answers = RunAnswer.objects.filter(run__in=[r.pk for r in runs])
    layer_judgments = LayerJudgment.objects.filter(layer__question__collection=collection)
    counter = _Counter(
        progress,
        collection.questions.count()
        + synsets.count()
        + strings.count()
        + events.count()
        + answers.count()
        + layer_judgments.count(),
    )
    ids = {
        "string": ArchiveIds(strings.order_by("question_id", "id").values_list("pk", flat=True)),
        "synset": ArchiveIds(
            synsets.order_by("question_id", "ordinal").values_list("pk", flat=True)
        ),
        "event": {
            pk: i for i, pk in enumerate(events.order_by("id").values_list("pk", flat=True), 1)
        },
        "level": dict(collection.levels.values_list("pk", "code")),
        "run": {r.pk: r.name for r in runs},
        "user": _Usernames(),
    }
    columns = COLUMNS[VERSION]
    # members in this order: the archive ids of strings and synsets that are no longer
    # rows are numbered as the events, then the layer judgments, first name them
    # deflate's fastest level: a third of the time of the default level for a sixth more bytes
    with zipfile.ZipFile(file, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        z.writestr("manifest.json", json.dumps(_manifest(collection), indent=1, ensure_ascii=False))
        _write_csv(z, "questions.csv", columns, _question_rows(collection), counter)
        _write_csv(z, "synsets.csv", columns, _synset_rows(synsets, ids), counter)
        _write_csv(z, "strings.csv", columns, _string_rows(strings, ids), counter)
        _write_lines(z, "events.jsonl", _event_lines(events, ids), counter)
        z.writestr("runs.json", json.dumps(_run_meta(runs), indent=1, ensure_ascii=False))
        _write_lines(z, "run_answers.csv", _answer_lines(collection, runs, columns), counter)
        _write_csv(z, "layers.csv", columns, _layer_rows(collection), counter)
        _write_csv(
            z, "layer_judgments.csv", columns, _layer_judgment_rows(layer_judgments, ids), counter
        )
    return counter.done


class _Counter:
    """Rows written so far, told to ``progress`` a chunk at a time."""

    def __init__(self, progress: Progress, total: int):
        self.progress, self.total, self.done = progress, total, 0
        progress(0, total, "rows")

    def add(self, n: int) -> None:
        self.done += n
        self.progress(self.done, max(self.total, self.done), "rows")


class _Usernames(dict):
    """user id -> username of the users the audit trail's snapshots name, fetched a chunk
    of events at a time (``want``)."""

    def want(self, pks: Iterable) -> None:
        missing = {pk for pk in pks if pk is not None and pk not in self}
        if missing:
            self.update(
                get_user_model().objects.filter(pk__in=missing).values_list("pk", "username")
            )


# rows per chunk read from the database and written to a member
CHUNK = 5000


def _chunks(rows: Iterable, size: int = CHUNK) -> Iterator[list]:
    it = iter(rows)
    while chunk := list(islice(it, size)):
        yield chunk


def _write_lines(
    z: zipfile.ZipFile, name: str, chunks: Iterable[tuple[str, int]], counter: _Counter
) -> None:
    """A member written from chunks of its text (each with the rows it holds)."""
    with z.open(name, "w", force_zip64=True) as f:
        for text, rows in chunks:
            f.write(text.encode("utf-8"))
            if rows:
                counter.add(rows)


def _write_csv(
    z: zipfile.ZipFile, name: str, columns: dict, rows: Iterable[tuple], counter: _Counter
) -> None:
    """A CSV member as ``write_csv`` writes it (header, then the rows), a chunk at a time."""
    head = ((write_csv(columns[name], []), 0),)
    body = (("".join(map(row_text, chunk)), len(chunk)) for chunk in _chunks(rows))
    _write_lines(z, name, chain(head, body), counter)


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


def _question_rows(collection: Collection) -> Iterator[tuple]:
    """questions.csv: each question with its assessors' usernames (sorted, space separated)."""
    assessors: dict[int, list[str]] = {}
    for qid, username in Question.assessors.through.objects.filter(
        question__collection=collection
    ).values_list("question_id", "user__username"):
        assessors.setdefault(qid, []).append(username)
    for pk, *fields in (
        Question.objects.filter(collection=collection)
        .order_by("id")
        .values_list("pk", "qid", "text", "status", "notes", "version")
        .iterator(chunk_size=CHUNK)
    ):
        yield (*fields, " ".join(sorted(assessors.get(pk, []))))


def _synset_rows(synsets: Iterable[Any], ids: dict) -> Iterator[tuple]:
    """synsets.csv: each synset with its archive id."""
    for pk, q, o, label, note in (
        synsets.order_by("question_id", "ordinal")
        .values_list("pk", "question__qid", "ordinal", "label", "note")
        .iterator(chunk_size=CHUNK)
    ):
        yield (ids["synset"](pk), q, o, label, note)


def _string_rows(strings: Iterable[Any], ids: dict) -> Iterator[tuple]:
    """strings.csv: each string with its archive id, variants as a JSON list."""
    rows = (
        strings.order_by("question_id", "id")
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
        .iterator(chunk_size=CHUNK)
    )
    for pk, q, o, t, v, k, lv, src, by, at, created in rows:
        yield (
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


def _snapshot_users(events: list[tuple]) -> set:
    """The user ids the snapshots of ``events`` name as judges."""
    return {
        snap.get("judged_by")
        for e in events
        for side in e[4:6]
        if isinstance(side, dict) and isinstance(side.get("strings"), dict)
        for snap in side["strings"].values()
        if isinstance(snap, dict)
    }


def _event_lines(events: Iterable[Any], ids: dict) -> Iterator[tuple[str, int]]:
    """events.jsonl: one JSON object per audit event, its snapshots in archive ids (a
    chunk of events at a time)."""
    rows = (
        events.order_by("id")
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
        .iterator(chunk_size=CHUNK)
    )
    for chunk in _chunks(rows):
        ids["user"].want(_snapshot_users(chunk))
        text = "".join(
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
            for pk, q, u, a, b, af, c, layer in chunk
        )
        yield text, len(chunk)


def _layer_rows(collection: Collection) -> Iterator[tuple]:
    """layers.csv: each layer with its question's request (k, adjudicator, gold_at)."""
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
        .iterator(chunk_size=CHUNK)
    ):
        yield (
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


def _layer_judgment_rows(layer_judgments: Iterable[Any], ids: dict) -> Iterator[tuple]:
    """layer_judgments.csv: each string as one layer judged it, by its archive id."""
    for q, who, s, g, lv, at in (
        layer_judgments.order_by("layer__question_id", "layer_id", "string_id")
        .values_list(
            "layer__question__qid",
            "layer__assessor__username",
            "string_id",
            "group",
            "level__code",
            "judged_at",
        )
        .iterator(chunk_size=CHUNK)
    ):
        yield (q, who, ids["string"](s), "" if g is None else g, lv or "", iso(at))


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


# distinct texts whose cells are kept while writing the run answers (run answers repeat the
# same strings run after run); the memo starts again past it, so memory stays bounded
_MEMO = 200_000


def _raw_rows(queryset: QuerySet) -> Iterator[tuple]:
    """The rows of a ``values_list`` queryset as the driver gives them, fetched a chunk at
    a time (on PostgreSQL through a server-side cursor: never the whole result at once),
    without the ORM's per-row work: the run answers are millions of rows."""
    sql, params = queryset.query.sql_with_params()
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        with connection.connection.cursor(name="archive_export") as cur:
            cur.itersize = CHUNK * 4
            cur.execute(sql, params)
            while rows := cur.fetchmany(CHUNK * 4):
                yield from rows
    else:
        with connection.cursor() as cur:
            cur.execute(sql, params)
            while rows := cur.fetchmany(CHUNK * 4):
                yield from rows


def _answer_lines(
    collection: Collection, runs: list[Run], columns: dict
) -> Iterator[tuple[str, int]]:
    """run_answers.csv: the answers of the active runs, by run, question and rank, a chunk
    at a time; each cell as ``write_csv`` writes it (``row_text``: a score is written as
    the text of its ``repr``), the cell of a text seen before taken from a memo."""
    yield write_csv(columns["run_answers.csv"], []), 0
    qids = {
        pk: cell(qid)
        for pk, qid in Question.objects.filter(collection=collection).values_list("pk", "qid")
    }
    memo: dict = {None: ""}
    for run in runs:
        name = cell(run.name)
        rows = _raw_rows(
            RunAnswer.objects.filter(run=run)
            .order_by("question_id", "rank")
            .values_list("question_id", "rank", "text", "key", "score")
        )
        for chunk in _chunks(rows, CHUNK * 4):
            if len(memo) > _MEMO:
                memo = {None: ""}
            texts = {t for row in chunk for t in row[2:4]}
            texts.difference_update(memo)
            memo.update((t, cell(t)) for t in texts)
            scores = {row[4] for row in chunk}
            scores.difference_update(memo)
            memo.update((v, cell(repr(v))) for v in scores)
            yield (
                "".join(
                    [
                        f"{name},{qids[q]},{rank},{memo[t]},{memo[k]},{memo[v]}\n"
                        for q, rank, t, k, v in chunk
                    ]
                ),
                len(chunk),
            )
