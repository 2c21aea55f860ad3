"""A collection created from an archive (``collection_import``) in three named steps: the
archive is checked whole (``validation.Archive``, then the slug and the name), the import
is planned (the rows to write and the users they name) and everything is written in one
transaction, with new database ids of the new collection (so that undo works there and no
id of an archive ever names a row outside the collection it creates).  On any problem
nothing is written.

The large tables are written set-based (``rows.insert_rows``: COPY on PostgreSQL, with
ids reserved beforehand where rows name each other), and the run answers, by far the
largest member, are never held: they are checked row by row as they stream from the
archive into the database (``answers.answer_rows``); a problem found there rolls the
transaction back, and the member is read once more to list every problem."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext

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
    Role,
)
from annotate.spellings import string_keys_sync
from config.text import CONTROL_CHARACTERS
from evaluation.metrics import InputError, Issue
from evaluation.models import Run, RunAnswer

from .answers import AnswersProblem, answer_rows
from .format import COLLECTION_FIELDS, COLUMNS, RUN_EVENTS, parse_when
from .rows import insert_rows, reserve_ids, triggers_paused
from .validation import Archive
from .values import Row

# what a long import reports to (a job's progress): done, total (None: not known), unit
Progress = Callable[[int, int | None, str | None], None]


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
    usernames: set[str]
    judges: set[str]

    @property
    def has_ids(self) -> bool:
        """Version 2 on: archive ids in the audit trail (version 1: database ids)."""
        return self.archive.version >= 2


def collection_import(
    *,
    data: bytes,
    slug: str,
    name: str | None = None,
    filename: str = "archive.zip",
    progress: Progress | None = None,
    organizer: AbstractBaseUser | None = None,
) -> Collection:
    """Create a new collection ``slug`` from an archive.  Users missing on this server are
    created without a usable password (an administrator sets one); ``organizer`` (who
    imported it from the page) becomes an organizer of it.  Raises InputError (nothing
    written) for an unreadable, inconsistent or too large archive, or a slug in use, with
    every problem found (member and line).  ``progress(done, total, unit)`` hears how far
    it has come (members and rows read, then rows written)."""
    progress = progress or _no_progress
    archive = archive_checked(data=data, slug=slug, name=name, filename=filename, progress=progress)
    return _write(
        import_plan(archive), slug=slug, name=name, progress=progress, organizer=organizer
    )


def _no_progress(done: int, total: int | None = None, unit: str | None = None) -> None:
    return None


def archive_checked(
    *,
    data: bytes,
    slug: str,
    name: str | None,
    filename: str,
    progress: Progress | None = None,
) -> Archive:
    """The archive read and checked whole (its run answers as they are written: see the
    module's doc), its slug free and its name allowed; InputError with every problem found
    otherwise."""
    archive = Archive(data, filename, defer_answers=True, progress=progress)
    if archive.issues:
        raise InputError(archive.issues)
    if Collection.objects.filter(slug=slug).exists():
        raise InputError(
            [
                Issue(
                    filename,
                    None,
                    gettext("a collection with the slug %(slug)s already exists")
                    % {"slug": repr(slug)},
                )
            ]
        )
    if name is not None and (not 0 < len(name.strip()) <= 200 or CONTROL_CHARACTERS.search(name)):
        raise InputError(
            [
                Issue(
                    filename,
                    None,
                    gettext("the name must be 1 to 200 characters, without control characters"),
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
        usernames=usernames,
        judges={u for u, role in archive.roles.items() if role in JUDGE_ROLES},
    )


def _write(
    plan: ImportPlan,
    *,
    slug: str,
    name: str | None,
    progress: Progress,
    organizer: AbstractBaseUser | None = None,
) -> Collection:
    """Write the plan as the new collection ``slug``, all in one transaction (the run
    answers checked as they stream in: on a problem there, nothing is written and every
    problem of the member is listed)."""
    archive = plan.archive
    written = _Written(
        progress,
        len(plan.strings) + len(plan.events) + len(archive.layer_judgments) + archive.answer_lines,
    )
    step = ""
    try:
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
            if organizer is not None:
                Membership.objects.update_or_create(
                    collection=collection, user=organizer, defaults={"role": Role.ORGANIZER}
                )
            q_of = _questions(collection, plan, users)
            s_objs = _synsets(plan, q_of)
            mode = collection.matching_mode
            string_pks = _strings(plan, q_of, s_objs, level_of, users, mode, written)
            run_of = _runs(collection, plan, users)
            ids = _ids(collection, plan, string_pks, s_objs, level_of, users, run_of)
            layer_of = _import_layers(
                archive, q_of, users, level_of, ids.get("string", {}), written
            )
            _events(collection, plan, ids, q_of, users, layer_of, written)
            step = "answers"
            _answers(plan, q_of, run_of, written)
    except (AnswersProblem, IntegrityError):
        if step != "answers":
            raise
        # nothing was written; the member read once more lists every problem
        issues = archive.check_answers()
        if not issues:
            raise
        raise InputError(issues) from None
    return collection


class _Written:
    """Rows written so far, told to ``progress`` a batch at a time."""

    def __init__(self, progress: Progress, total: int):
        self.progress, self.total, self.done = progress, total, 0
        progress(0, total, "rows written")

    def table(self) -> Callable[[int], None]:
        """The ``written`` callback of one table's ``insert_rows``."""
        base = self.done

        def written(n: int) -> None:
            self.done = base + n
            self.progress(self.done, max(self.total, self.done), "rows written")

        return written


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


@dataclass(frozen=True)
class _Spelled:
    """A written string as ``string_keys_sync`` reads it (no model instance per row)."""

    pk: int
    question_id: int
    text: str
    variants: list


def _strings(
    plan: ImportPlan,
    q_of: dict,
    s_objs: list,
    level_of: dict,
    users: dict,
    mode: str,
    written: _Written,
) -> list[int]:
    """The database ids of the new strings, in the order of strings.csv (reserved first),
    written with their judgments, creation times and spelling keys."""
    syn_of = {(s.question.qid, str(s.ordinal)): s.pk for s in s_objs}
    level_pk = {code: lv.pk for code, lv in level_of.items()}
    user_pk = {u: obj.pk for u, obj in users.items()}
    pks = reserve_ids(AnswerString, len(plan.strings))
    now = timezone.now()
    spelled = []

    def rows():
        for pk, s in zip(pks, plan.strings, strict=True):
            variants = json.loads(s["variants"]) if s.get("variants") else []
            q = q_of[s["question_id"]].pk
            spelled.append(_Spelled(pk, q, s["answer"], variants))
            synset = s["synset_id"]
            yield (
                pk,
                q,
                s["answer"],
                s["key"],
                variants,
                syn_of[(s["question_id"], str(int(synset)))] if synset else None,
                level_pk.get(s["level"]),
                s["source"],
                user_pk.get(s["judged_by"]),
                parse_when(s["judged_at"]),
                parse_when(s["created_at"]) or now,
            )

    insert_rows(
        AnswerString,
        [
            "id",
            "question",
            "text",
            "key",
            "variants",
            "synset",
            "level",
            "source",
            "judged_by",
            "judged_at",
            "created_at",
        ],
        rows(),
        written=written.table(),
    )
    string_keys_sync(strings=spelled, mode=mode)
    return pks


def _runs(collection: Collection, plan: ImportPlan, users: dict) -> dict:
    """run name -> the new run, with its upload time."""
    runs = Run.objects.bulk_create(
        Run(
            collection=collection,
            name=r["name"],
            owner=users[r["owner"]],
            description=r["description"],
            source_name=r["source_name"],
            sha256=r["sha256"],
            format=r["format"],
        )
        for r in plan.runs
    )
    for run, r in zip(runs, plan.runs, strict=True):
        run.uploaded_at = parse_when(r["uploaded_at"])
    Run.objects.bulk_update(runs, ["uploaded_at"], batch_size=500)
    return {run.name: run for run in runs}


def _ids(
    collection: Collection,
    plan: ImportPlan,
    string_pks: list[int],
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
    # ids for the strings and synsets the audit trail names that no longer exist (an undo
    # recreates them under these ids)
    dead_strings = reserve_ids(AnswerString, len(archive.dead_strings))
    dead_synsets = reserve_ids(AnswerSynset, len(archive.dead_synsets))
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
    collection: Collection,
    plan: ImportPlan,
    ids: dict,
    q_of: dict,
    users: dict,
    layer_of: dict,
    written: _Written,
) -> None:
    """The audit trail, with its times, its snapshots naming the new ids (``ids``; version
    1: without ids) and each ``undoes`` named by its new id (reserved for every event
    first)."""
    pks = reserve_ids(JudgmentEvent, len(plan.events))
    event_of = {e["id"]: pk for e, pk in zip(plan.events, pks, strict=True)} if plan.has_ids else {}
    now = timezone.now()

    def rows():
        for pk, e in zip(pks, plan.events, strict=True):
            if plan.has_ids:
                layer = bool(e.get("layer"))
                before = _import_side(e["before"], e["action"], ids, layer=layer)
                after = _import_side(e["after"], e["action"], ids, layer=layer)
                for side in (before, after):
                    if side.get("undoes") is not None:
                        side["undoes"] = event_of[side["undoes"]]
            else:
                before = _strip_ids(e["before"], e["action"])
                after = _strip_ids(e["after"], e["action"])
            q = q_of.get(e["question_id"])
            user = users.get(e["user"]) if e["user"] else None
            layer_obj = layer_of.get((e["question_id"], e.get("layer")))
            yield (
                pk,
                collection.pk,
                q.pk if q else None,
                user.pk if user else None,
                layer_obj.pk if layer_obj else None,
                e["action"],
                before,
                after,
                parse_when(e["created_at"]) or now,
            )

    insert_rows(
        JudgmentEvent,
        [
            "id",
            "collection",
            "question",
            "user",
            "layer",
            "action",
            "before",
            "after",
            "created_at",
        ],
        rows(),
        written=written.table(),
    )


def _answers(plan: ImportPlan, q_of: dict, run_of: dict, written: _Written) -> None:
    """The run answers, checked row by row as they stream from the archive into the
    database (``answer_rows``: ``AnswersProblem`` at the first problem).  Their foreign
    keys name the runs and questions this transaction created; where the database lets
    the import pause its per-row checks (``rows.triggers_paused``), one query checks them
    all instead."""
    archive = plan.archive
    run_ids = [run_of[r["name"]].pk for r in plan.runs]
    with triggers_paused() as paused:
        n = insert_rows(
            RunAnswer,
            ["run", "question", "rank", "text", "key", "score"],
            answer_rows(
                archive.open_member,
                COLUMNS[archive.version]["run_answers.csv"],
                archive.answers_scope,
                run_ids,
                [q_of[q["question_id"]].pk for q in plan.questions],
            ),
            written=written.table(),
        )
    if paused and _answers_with_keys(run_ids) != n:
        raise IntegrityError("a run answer names no run or question of the collection")


def _answers_with_keys(run_ids: list[int]) -> int:
    """The run answers of ``run_ids`` whose question exists: every answer written, once
    the foreign keys hold (the run answers of these new runs are the import's only)."""
    question = Question.objects.filter(pk=OuterRef("question_id"))
    return RunAnswer.objects.filter(Exists(question), run_id__in=run_ids).count()


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


def _import_layers(
    archive: Archive, q_of: dict, users: dict, level_of: dict, string_ids: dict, written: _Written
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
    insert_rows(
        LayerJudgment,
        ["layer", "string", "group", "level", "judged_at"],
        (
            (
                layer_of[j["question_id"], j["assessor"]].pk,
                string_ids[int(j["string_id"])],
                int(j["synset_id"]) if j["synset_id"] else None,
                level_of[j["level"]].pk if j["synset_id"] else None,
                parse_when(j["judged_at"]),
            )
            for _, j in archive.layer_judgments
        ),
        written=written.table(),
    )
    return layer_of
