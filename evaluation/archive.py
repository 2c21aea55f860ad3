"""A whole collection in one zip archive and back (levels, members, questions, synsets,
strings with their judgments, audit events, runs with their answers).

Users are referred to by username.  Importing validates the whole archive first and then
writes everything in one transaction; a round trip gives identical judgments and identical
scores for every run.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from datetime import datetime

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from annotate.models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Level,
    Membership,
    Question,
)
from evaluation.metrics import InputError, Issue
from evaluation.metrics.gains import check_gain

from .models import Run, RunAnswer
from .services import run_name_problem

FORMAT = "qasynset-collection"
VERSION = 1
COLLECTION_FIELDS = ("name", "description", "guidelines", "matching_mode", "max_output_size",
                     "open_for_submissions", "leaderboard_published", "judgment_version")


def _csv(rows, header) -> str:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    return out.getvalue()


def _iso(dt) -> str:
    return dt.isoformat() if dt else ""


def collection_export(*, collection: Collection) -> bytes:
    """The archive (zip bytes) of ``collection``."""
    levels = list(collection.levels.order_by("order").values("code", "label", "gain", "order"))
    members = list(collection.memberships.order_by("user__username")
                   .values_list("user__username", "role"))
    manifest = {
        "format": FORMAT, "version": VERSION, "exported_at": timezone.now().isoformat(),
        "collection": {f: getattr(collection, f) for f in COLLECTION_FIELDS}
        | {"slug": collection.slug,
           "judgments_changed_at": _iso(collection.judgments_changed_at)},
        "levels": levels, "members": [{"username": u, "role": r} for u, r in members],
    }
    questions = Question.objects.filter(collection=collection).order_by("id")
    assessors: dict[int, list[str]] = {}
    for qid, username in (Question.assessors.through.objects
                          .filter(question__collection=collection)
                          .values_list("question_id", "user__username")):
        assessors.setdefault(qid, []).append(username)
    q_rows = [(q.qid, q.text, q.status, q.notes, q.version, " ".join(sorted(assessors.get(
        q.pk, [])))) for q in questions]
    synsets = (AnswerSynset.objects.filter(question__collection=collection)
               .order_by("question_id", "ordinal").values_list("question__qid", "ordinal", "note"))
    strings = (AnswerString.objects.filter(question__collection=collection)
               .order_by("question_id", "id")
               .values_list("question__qid", "synset__ordinal", "text", "key", "level__code",
                            "source", "judged_by__username", "judged_at", "created_at"))
    s_rows = [(q, o or "", t, k, lv or "", src, by or "", _iso(at), _iso(created))
              for q, o, t, k, lv, src, by, at, created in strings]
    events = JudgmentEvent.objects.filter(collection=collection).order_by("id").values_list(
        "question__qid", "user__username", "action", "before", "after", "created_at")
    e_lines = "".join(json.dumps({"question_id": q, "user": u, "action": a, "before": b,
                                  "after": af, "created_at": _iso(c)}, ensure_ascii=False) + "\n"
                      for q, u, a, b, af, c in events)
    runs = Run.objects.filter(collection=collection).order_by("id").select_related("owner")
    r_meta = [{"name": r.name, "owner": r.owner.get_username(), "description": r.description,
               "uploaded_at": _iso(r.uploaded_at), "source_name": r.source_name,
               "sha256": r.sha256, "format": r.format} for r in runs]
    answers = (RunAnswer.objects.filter(run__collection=collection)
               .order_by("run_id", "question_id", "rank")
               .values_list("run__name", "question__qid", "rank", "text", "key", "score"))
    a_rows = [(r, q, rank, t, k, "" if s is None else repr(s)) for r, q, rank, t, k, s in answers]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False))
        z.writestr("questions.csv", _csv(q_rows, ["question_id", "question", "status", "notes",
                                                  "version", "assessors"]))
        z.writestr("synsets.csv", _csv(synsets, ["question_id", "synset_id", "note"]))
        z.writestr("strings.csv", _csv(s_rows, ["question_id", "synset_id", "answer", "key",
                                                "level", "source", "judged_by", "judged_at",
                                                "created_at"]))
        z.writestr("events.jsonl", e_lines)
        z.writestr("runs.json", json.dumps(r_meta, indent=1, ensure_ascii=False))
        z.writestr("run_answers.csv", _csv(a_rows, ["run", "question_id", "rank", "answer",
                                                    "key", "score"]))
    return buf.getvalue()


def _read_csv(z: zipfile.ZipFile, name: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(z.read(name).decode("utf-8"))))


def _dt(value: str):
    return datetime.fromisoformat(value) if value else None


def collection_import(*, data: bytes, slug: str, name: str | None = None,
                      filename: str = "archive.zip") -> Collection:
    """Create a new collection ``slug`` from an archive.  Users missing on this server are
    created without a usable password (an administrator sets one).  Raises InputError
    (nothing written) for an unreadable or inconsistent archive or a slug in use."""
    def fail(msg):
        raise InputError([Issue(filename, None, msg)])

    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        manifest = json.loads(z.read("manifest.json"))
        if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
            fail(f"not a {FORMAT} archive of version {VERSION}")
        questions = _read_csv(z, "questions.csv")
        synsets = _read_csv(z, "synsets.csv")
        strings = _read_csv(z, "strings.csv")
        events = [json.loads(line) for line in z.read("events.jsonl").decode().splitlines()
                  if line.strip()]
        runs = json.loads(z.read("runs.json"))
        answers = _read_csv(z, "run_answers.csv")
    except (zipfile.BadZipFile, KeyError, ValueError, UnicodeDecodeError) as e:
        fail(f"unreadable archive: {e}")
    if Collection.objects.filter(slug=slug).exists():
        fail(f"a collection with the slug {slug!r} already exists")
    qids = {q["question_id"] for q in questions}
    levels = {lv["code"] for lv in manifest["levels"]}
    syn_keys = {(s["question_id"], s["synset_id"]) for s in synsets}
    issues = []
    for lv in manifest["levels"]:
        try:
            check_gain(lv["gain"], f"the gain of level {lv['code']!r}")
        except (TypeError, ValueError) as e:
            issues.append(Issue(f"{filename}:manifest.json", None, str(e)))
    for r in runs:
        if problem := run_name_problem(str(r["name"])):
            issues.append(Issue(f"{filename}:runs.json", None, f"run {r['name']!r}: {problem}"))
    for i, s in enumerate(strings, start=2):
        if s["question_id"] not in qids:
            issues.append(Issue(f"{filename}:strings.csv", i, f"unknown question "
                                f"{s['question_id']!r}"))
        if s["synset_id"] and (s["question_id"], s["synset_id"]) not in syn_keys:
            issues.append(Issue(f"{filename}:strings.csv", i, "unknown synset"))
        if s["level"] and s["level"] not in levels:
            issues.append(Issue(f"{filename}:strings.csv", i, f"unknown level {s['level']!r}"))
    run_names = {r["name"] for r in runs}
    for i, a in enumerate(answers, start=2):
        if a["run"] not in run_names or a["question_id"] not in qids:
            issues.append(Issue(f"{filename}:run_answers.csv", i, "unknown run or question"))
    if issues:
        raise InputError(issues)

    User = get_user_model()
    usernames = ({m["username"] for m in manifest["members"]} | {r["owner"] for r in runs}
                 | {s["judged_by"] for s in strings if s["judged_by"]}
                 | {e["user"] for e in events if e["user"]}
                 | {u for q in questions for u in q["assessors"].split()})
    with transaction.atomic():
        users = {u.get_username(): u for u in User.objects.filter(username__in=usernames)}
        for username in sorted(usernames - set(users)):
            user = User(username=username, is_active=True)
            user.set_unusable_password()
            user.save()
            users[username] = user
        c = manifest["collection"]
        collection = Collection.objects.create(
            slug=slug, **{f: c[f] for f in COLLECTION_FIELDS},
            judgments_changed_at=_dt(c.get("judgments_changed_at", "")))
        if name:
            collection.name = name
            collection.save(update_fields=["name"])
        level_of = {lv["code"]: Level.objects.create(collection=collection, **lv)
                    for lv in manifest["levels"]}
        Membership.objects.bulk_create(Membership(collection=collection, user=users[m[
            "username"]], role=m["role"]) for m in manifest["members"])
        q_objs = Question.objects.bulk_create(
            Question(collection=collection, qid=q["question_id"], text=q["question"],
                     status=q["status"], notes=q["notes"], version=int(q["version"] or 0))
            for q in questions)
        q_of = {q.qid: q for q in q_objs}
        Question.assessors.through.objects.bulk_create(
            Question.assessors.through(question_id=q_of[q["question_id"]].pk,
                                       user_id=users[u].pk)
            for q in questions for u in q["assessors"].split())
        s_objs = AnswerSynset.objects.bulk_create(
            AnswerSynset(question=q_of[s["question_id"]], ordinal=int(s["synset_id"]),
                         note=s["note"]) for s in synsets)
        syn_of = {(s.question.qid, str(s.ordinal)): s for s in s_objs}
        objs = AnswerString.objects.bulk_create(
            AnswerString(question=q_of[s["question_id"]], text=s["answer"], key=s["key"],
                         synset=syn_of.get((s["question_id"], s["synset_id"])),
                         level=level_of.get(s["level"]), source=s["source"],
                         judged_by=users.get(s["judged_by"]), judged_at=_dt(s["judged_at"]))
            for s in strings)
        for obj, s in zip(objs, strings, strict=True):
            obj.created_at = _dt(s["created_at"]) or obj.created_at
        AnswerString.objects.bulk_update(objs, ["created_at"], batch_size=2000)
        e_objs = JudgmentEvent.objects.bulk_create(
            JudgmentEvent(collection=collection, question=q_of.get(e["question_id"]),
                          user=users.get(e["user"]) if e["user"] else None, action=e["action"],
                          before=e["before"], after=e["after"]) for e in events)
        for obj, e in zip(e_objs, events, strict=True):
            obj.created_at = _dt(e["created_at"]) or obj.created_at
        JudgmentEvent.objects.bulk_update(e_objs, ["created_at"], batch_size=2000)
        run_of = {}
        for r in runs:
            run = Run.objects.create(collection=collection, name=r["name"],
                                     owner=users[r["owner"]], description=r["description"],
                                     source_name=r["source_name"], sha256=r["sha256"],
                                     format=r["format"])
            Run.objects.filter(pk=run.pk).update(uploaded_at=_dt(r["uploaded_at"]))
            run_of[r["name"]] = run
        RunAnswer.objects.bulk_create(
            (RunAnswer(run=run_of[a["run"]], question=q_of[a["question_id"]],
                       rank=int(a["rank"]), text=a["answer"], key=a["key"],
                       score=float(a["score"]) if a["score"] else None) for a in answers),
            batch_size=5000)
    return collection
