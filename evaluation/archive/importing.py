"""A collection created from an archive (``collection_import``) in three named steps: the
archive is checked whole (``validation.Archive``, then the slug and the name), the import
is planned (the rows to write and the users they name) and everything is written in one
transaction, with new database ids of the new collection (so that undo works there and no
id of an archive ever names a row outside the collection it creates).  On any problem
nothing is written."""

from __future__ import annotations

import json
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotate.models import (
    JUDGE_ROLES,
    AnswerString,
    AnswerSynset,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
    Level,
    Membership,
    Question,
)
from annotate.spellings import string_keys_sync
from config.text import CONTROL_CHARACTERS
from evaluation.metrics import InputError, Issue
from evaluation.models import Run, RunAnswer

from .format import COLLECTION_FIELDS, RUN_EVENTS, parse_when
from .validation import Archive
from .values import Row


@dataclass(frozen=True)
class ImportPlan:
    """What an import writes: the checked archive's rows, the usernames they name and
    which of them judge (an assignment is kept only for a member who judges)."""

    archive: Archive
    questions: list[Row]
    synsets: list[Row]
    strings: list[Row]
    events: list[dict]
    runs: list[dict]
    answers: list[Row]
    usernames: set[str]
    judges: set[str]

    @property
    def has_ids(self) -> bool:
        """Version 2 on: archive ids in the audit trail (version 1: database ids)."""
        return self.archive.version >= 2


def collection_import(
    *, data: bytes, slug: str, name: str | None = None, filename: str = "archive.zip"
) -> Collection:
    """Create a new collection ``slug`` from an archive.  Users missing on this server are
    created without a usable password (an administrator sets one).  Raises InputError
    (nothing written) for an unreadable, inconsistent or too large archive, or a slug in
    use, with every problem found (member and line)."""
    archive = archive_checked(data=data, slug=slug, name=name, filename=filename)
    return _write(import_plan(archive), slug=slug, name=name)


def archive_checked(*, data: bytes, slug: str, name: str | None, filename: str) -> Archive:
    """The archive read and checked whole, its slug free and its name allowed; InputError
    with every problem found otherwise."""
    archive = Archive(data, filename)
    if archive.issues:
        raise InputError(archive.issues)
    if Collection.objects.filter(slug=slug).exists():
        raise InputError(
            [Issue(filename, None, f"a collection with the slug {slug!r} already exists")]
        )
    if name is not None and (not 0 < len(name.strip()) <= 200 or CONTROL_CHARACTERS.search(name)):
        raise InputError(
            [
                Issue(
                    filename,
                    None,
                    "the name must be 1 to 200 characters, without control characters",
                )
            ]
        )
    return archive


def import_plan(archive: Archive) -> ImportPlan:
    """The rows of a checked archive and every username they name (members, run owners,
    judges, event users, and in version 2 on the judges the snapshots name)."""
    strings = [s for _, s in archive.strings]
    events = [e for _, e in archive.events]
    snapshot_users = {
        snap.get("judged_by")
        for e in events
        for side in (e["before"], e["after"])
        if archive.version >= 2 and isinstance(side.get("strings"), dict)
        for snap in side["strings"].values()
        if snap
    } - {None}
    usernames = (
        set(archive.roles)
        | {r["owner"] for r in archive.runs}
        | {s["judged_by"] for s in strings if s["judged_by"]}
        | {e["user"] for e in events if e["user"]}
        | snapshot_users
    )
    return ImportPlan(
        archive=archive,
        questions=[q for _, q in archive.questions],
        synsets=[s for _, s in archive.synsets],
        strings=strings,
        events=events,
        runs=archive.runs,
        answers=[a for _, a in archive.answers],
        usernames=usernames,
        judges={u for u, role in archive.roles.items() if role in JUDGE_ROLES},
    )


def _write(plan: ImportPlan, *, slug: str, name: str | None) -> Collection:
    """Write the plan as the new collection ``slug``, all in one transaction."""
    archive = plan.archive
    with transaction.atomic():
        users = _users(plan.usernames)
        collection = _collection(archive.manifest["collection"], slug, name)
        level_of = {
            lv["code"]: Level.objects.create(collection=collection, **lv)
            for lv in archive.manifest["levels"]
        }
        Membership.objects.bulk_create(
            Membership(collection=collection, user=users[u], role=role)
            for u, role in archive.roles.items()
        )
        q_of = _questions(collection, plan, users)
        s_objs = _synsets(plan, q_of)
        string_pks = _strings(plan, q_of, s_objs, level_of, users, collection.matching_mode)
        run_of = _runs(collection, plan, users)
        ids = _ids(collection, plan, string_pks, s_objs, level_of, users, run_of)
        layer_of = _import_layers(archive, q_of, users, level_of, ids.get("string", {}))
        _events(collection, plan, ids, q_of, users, layer_of)
        for batch in _batches(
            RunAnswer(
                run=run_of[a["run"]],
                question=q_of[a["question_id"]],
                rank=int(a["rank"]),
                text=a["answer"],
                key=a["key"],
                score=float(a["score"]) if a["score"] else None,
            )
            for a in plan.answers
        ):
            RunAnswer.objects.bulk_create(batch)
    return collection


def _batches(objs: Iterable, size: int = 5000) -> Iterator[list]:
    """``objs`` in lists of ``size``: bulk_create makes a list of all it is given, so the
    largest tables go to it a batch at a time (the import's memory budget)."""
    it = iter(objs)
    while batch := list(islice(it, size)):
        yield batch


def _users(usernames: set[str]) -> dict:
    """username -> user: those of this server, the others created without a usable
    password."""
    User = get_user_model()
    users = {u.get_username(): u for u in User.objects.filter(username__in=usernames)}
    for username in sorted(usernames - set(users)):
        user = User(username=username, is_active=True)
        user.set_unusable_password()
        user.save()
        users[username] = user
    return users


def _collection(c: dict, slug: str, name: str | None) -> Collection:
    """The new collection with the manifest's fields (and ``name`` if given)."""
    collection = Collection.objects.create(
        slug=slug,
        **{f: c[f] for f in COLLECTION_FIELDS},
        judgments_changed_at=parse_when(c.get("judgments_changed_at", "")),
    )
    if name:
        collection.name = name.strip()
        collection.save(update_fields=["name"])
    return collection


def _questions(collection: Collection, plan: ImportPlan, users: dict) -> dict:
    """question id -> the new question, with its assignments."""
    q_objs = Question.objects.bulk_create(
        Question(
            collection=collection,
            qid=q["question_id"],
            text=q["question"],
            status=q["status"],
            notes=q["notes"],
            version=int(q["version"] or 0),
        )
        for q in plan.questions
    )
    q_of = {q.qid: q for q in q_objs}
    # an assignment only for members who judge (as the membership rules keep it)
    Question.assessors.through.objects.bulk_create(
        Question.assessors.through(question_id=q_of[q["question_id"]].pk, user_id=users[u].pk)
        for q in plan.questions
        for u in set(q["assessors"].split())
        if u in plan.judges
    )
    return q_of


def _synsets(plan: ImportPlan, q_of: dict) -> list[AnswerSynset]:
    """The new synsets, in the order of synsets.csv."""
    return AnswerSynset.objects.bulk_create(
        AnswerSynset(
            question=q_of[s["question_id"]],
            ordinal=int(s["synset_id"]),
            label=s.get("label", ""),
            note=s["note"],
        )
        for s in plan.synsets
    )


def _strings(
    plan: ImportPlan, q_of: dict, s_objs: list, level_of: dict, users: dict, mode: str
) -> array:
    """The database ids of the new strings, in the order of strings.csv, written with their
    judgments, creation times and spelling keys a batch at a time (the import's memory
    budget)."""
    syn_of = {(s.question.qid, str(s.ordinal)): s for s in s_objs}
    pks = array("q")
    for batch in _batches(plan.strings):
        objs = AnswerString.objects.bulk_create(
            AnswerString(
                question=q_of[s["question_id"]],
                text=s["answer"],
                key=s["key"],
                variants=json.loads(s["variants"]) if s.get("variants") else [],
                synset=syn_of.get(
                    (s["question_id"], str(int(s["synset_id"]))) if s["synset_id"] else None
                ),
                level=level_of.get(s["level"]),
                source=s["source"],
                judged_by=users.get(s["judged_by"]),
                judged_at=parse_when(s["judged_at"]),
            )
            for s in batch
        )
        for obj, s in zip(objs, batch, strict=True):
            obj.created_at = parse_when(s["created_at"]) or obj.created_at
        AnswerString.objects.bulk_update(objs, ["created_at"], batch_size=2000)
        string_keys_sync(strings=objs, mode=mode)
        pks.extend(obj.pk for obj in objs)
    return pks


def _runs(collection: Collection, plan: ImportPlan, users: dict) -> dict:
    """run name -> the new run, with its upload time."""
    run_of = {}
    for r in plan.runs:
        run = Run.objects.create(
            collection=collection,
            name=r["name"],
            owner=users[r["owner"]],
            description=r["description"],
            source_name=r["source_name"],
            sha256=r["sha256"],
            format=r["format"],
        )
        Run.objects.filter(pk=run.pk).update(uploaded_at=parse_when(r["uploaded_at"]))
        run_of[r["name"]] = run
    return run_of


def _ids(
    collection: Collection,
    plan: ImportPlan,
    string_pks: array,
    s_objs: list,
    level_of: dict,
    users: dict,
    run_of: dict,
) -> dict:
    """The maps from what a version 2 archive names to the new database ids (strings and
    synsets no longer there get reserved ids); empty for version 1."""
    if not plan.has_ids:
        return {}
    archive = plan.archive
    dead_strings, dead_synsets = _reserve_ids(
        collection, len(archive.dead_strings), len(archive.dead_synsets)
    )
    return {
        "string": {int(s["id"]): pk for s, pk in zip(plan.strings, string_pks, strict=True)}
        | dict(zip(archive.dead_strings, dead_strings, strict=True)),
        "synset": {int(s["id"]): o.pk for s, o in zip(plan.synsets, s_objs, strict=True)}
        | dict(zip(archive.dead_synsets, dead_synsets, strict=True)),
        "level": {code: lv.pk for code, lv in level_of.items()},
        "user": {u: obj.pk for u, obj in users.items()},
        "run": {n: run.pk for n, run in run_of.items()},
    }


def _events(
    collection: Collection, plan: ImportPlan, ids: dict, q_of: dict, users: dict, layer_of: dict
) -> None:
    """The audit trail, with its times, its snapshots naming the new ids (``ids``; version
    1: without ids) and each ``undoes`` named by its new id; written a batch at a time (an
    event undoes an earlier one, whose id is known by then)."""
    event_of: dict[int, int] = {}
    for batch in _batches(plan.events):
        sides = [
            (
                _import_side(e["before"], e["action"], ids, layer=bool(e.get("layer"))),
                _import_side(e["after"], e["action"], ids, layer=bool(e.get("layer"))),
            )
            if plan.has_ids
            else (_strip_ids(e["before"], e["action"]), _strip_ids(e["after"], e["action"]))
            for e in batch
        ]
        e_objs = JudgmentEvent.objects.bulk_create(
            JudgmentEvent(
                collection=collection,
                question=q_of.get(e["question_id"]),
                user=users.get(e["user"]) if e["user"] else None,
                action=e["action"],
                before=before,
                after=after,
                layer=layer_of.get((e["question_id"], e.get("layer"))),
            )
            for e, (before, after) in zip(batch, sides, strict=True)
        )
        if plan.has_ids:
            event_of.update((e["id"], obj.pk) for e, obj in zip(batch, e_objs, strict=True))
        for obj, e in zip(e_objs, batch, strict=True):
            obj.created_at = parse_when(e["created_at"]) or obj.created_at
            for side in (obj.before, obj.after):
                if side.get("undoes") is not None:
                    side["undoes"] = event_of[side["undoes"]]
        JudgmentEvent.objects.bulk_update(
            e_objs, ["created_at", "before", "after"], batch_size=2000
        )


def _strip_ids(side: dict, action: str) -> dict:
    """A version 1 event's before or after without the database ids of the exporting
    server: kept as a record, never undone."""
    side = dict(side)
    if isinstance(side.get("strings"), dict):
        side["strings_without_ids"] = [
            {k: v for k, v in snap.items() if k not in ("synset", "level", "judged_by")}
            if isinstance(snap, dict)
            else None
            for snap in side.pop("strings").values()
        ]
    if isinstance(side.get("synsets"), list) and "strings_without_ids" in side:
        side["synsets_without_ids"] = [
            row[1:] if isinstance(row, list) else row for row in side.pop("synsets")
        ]
    side.pop("undoes", None)
    if action in RUN_EVENTS:
        side.pop("run", None)
    return side


def _import_side(side: dict, action: str, ids: dict, *, layer: bool = False) -> dict:
    """An event's before or after with the new collection's database ids (``undoes`` is
    left as an archive id; it is set once every event has its database id)."""
    side = dict(side)
    if isinstance(side.get("strings"), dict):
        side["strings"] = {
            str(ids["string"][int(k)]): None
            if snap is None
            else dict(
                snap,
                synset=ids["synset"].get(snap.get("synset") and int(snap["synset"])),
                level=ids["level"].get(snap.get("level")),
                judged_by=ids["user"].get(snap.get("judged_by")),
            )
            for k, snap in side["strings"].items()
        }
    if isinstance(side.get("synsets"), list) and "strings" in side:
        side["synsets"] = [[ids["synset"][int(row[0])], *row[1:]] for row in side["synsets"]]
    if action in RUN_EVENTS and "run" in side:
        side["run"] = ids["run"].get(side["run"])
    if layer and isinstance(side.get("rows"), dict):
        side["rows"] = {
            str(ids["string"][int(k)]): None
            if row is None
            else [row[0], ids["level"].get(row[1]), row[2]]
            for k, row in side["rows"].items()
        }
    return side


def _reserve_ids(
    collection: Collection, n_strings: int, n_synsets: int
) -> tuple[list[int], list[int]]:
    """Database ids for strings and synsets the audit trail names but that no longer exist
    (an undo recreates them under these ids): taken from the tables' own sequences by
    creating placeholder rows under a scratch question, which is then deleted."""
    if not (n_strings or n_synsets):
        return [], []
    scratch = Question.objects.create(
        collection=collection, qid=f"\u2060reserve {timezone.now()}", text=""
    )
    strings = AnswerString.objects.bulk_create(
        AnswerString(question=scratch, text="", key=f"reserved {i}") for i in range(n_strings)
    )
    synsets = AnswerSynset.objects.bulk_create(
        AnswerSynset(question=scratch, ordinal=i) for i in range(1, n_synsets + 1)
    )
    ids = [s.pk for s in strings], [s.pk for s in synsets]
    scratch.delete()
    return ids


def _import_layers(
    archive: Archive, q_of: dict, users: dict, level_of: dict, string_ids: dict
) -> dict:
    """Create the archive's layer requests, layers and layer judgments; returns
    (question id, assessor) -> layer."""
    layer_of: dict[tuple[str, str], JudgingLayer] = {}
    requests = {}
    for _, la in archive.layers:
        q = q_of[la["question_id"]]
        if q.qid not in requests:
            requests[q.qid] = LayerRequest(
                question=q,
                k=int(la["k"]),
                adjudicator=users.get(la["adjudicator"]) if la["adjudicator"] else None,
                gold_at=parse_when(la["gold_at"]),
            )
        layer_of[la["question_id"], la["assessor"]] = JudgingLayer(
            question=q,
            assessor=users[la["assessor"]],
            version=int(la["version"]),
            started_at=parse_when(la["started_at"]),
            done_at=parse_when(la["done_at"]),
            seconds=float(la["seconds"]) if la["seconds"] else None,
        )
    LayerRequest.objects.bulk_create(requests.values())
    JudgingLayer.objects.bulk_create(layer_of.values())
    for batch in _batches(
        LayerJudgment(
            layer=layer_of[j["question_id"], j["assessor"]],
            string_id=string_ids[int(j["string_id"])],
            group=int(j["synset_id"]) if j["synset_id"] else None,
            level=level_of[j["level"]] if j["synset_id"] else None,
            judged_at=parse_when(j["judged_at"]),
        )
        for _, j in archive.layer_judgments
    ):
        LayerJudgment.objects.bulk_create(batch)
    return layer_of
