"""A whole collection in one zip archive and back (levels, members, questions, synsets,
strings with their judgments, audit events, runs with their answers).

Users are referred to by username and levels by code.  Synsets, strings and events carry
archive ids (1, 2, ... in export order) instead of database ids, and the snapshots of the
audit trail name them by these ids; an import gives them new database ids of the new
collection, so that undo works there and no id of an archive ever names a row outside the
collection it creates.  Importing validates the whole archive first (format, every field,
every reference, sizes) and then writes everything in one transaction; a round trip gives
identical judgments, audit trail and scores for every run.  Version 1 archives (database
ids in the audit trail) are still read; their snapshots are kept without ids, so the
actions they record cannot be undone.  Version 3 adds the assessors' independent layers
(``layers.csv``, ``layer_judgments.csv``; DESIGN.md section 9) and names the layer of each
layer event; version 1 and 2 archives have no layers.  Version 4 adds each level's
``examples`` (earlier archives' levels have none).
"""

from __future__ import annotations

import io
import json
import re
import zipfile
import zlib
from datetime import UTC, datetime
from functools import partial

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
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
    MatchingMode,
    Membership,
    Question,
    QuestionStatus,
    Role,
    Source,
)
from config.text import CONTROL_CHARACTERS
from evaluation.metrics import InputError, Issue
from evaluation.metrics.csvio import read_csv, write_csv
from evaluation.metrics.errors import MAX_ISSUES
from evaluation.metrics.gains import check_gain
from evaluation.metrics.parsers import empty_key_message

from .models import Run, RunAnswer, RunFormat
from .services import run_name_problem

FORMAT = "qasynset-collection"
VERSION = 4
READS = (1, 2, 3, 4)  # versions collection_import reads
COLLECTION_FIELDS = (
    "name",
    "description",
    "guidelines",
    "matching_mode",
    "max_output_size",
    "open_for_submissions",
    "leaderboard_published",
    "judgment_version",
)
MEMBERS = (
    "manifest.json",
    "questions.csv",
    "synsets.csv",
    "strings.csv",
    "events.jsonl",
    "runs.json",
    "run_answers.csv",
)
LAYER_MEMBERS = ("layers.csv", "layer_judgments.csv")  # version 3 on
COLUMNS = {  # the CSV members' columns, by version
    1: {
        "questions.csv": ["question_id", "question", "status", "notes", "version", "assessors"],
        "synsets.csv": ["question_id", "synset_id", "note"],
        "strings.csv": [
            "question_id",
            "synset_id",
            "answer",
            "key",
            "level",
            "source",
            "judged_by",
            "judged_at",
            "created_at",
        ],
        "run_answers.csv": ["run", "question_id", "rank", "answer", "key", "score"],
    },
}
COLUMNS[2] = dict(
    COLUMNS[1],
    **{
        "synsets.csv": ["id", "question_id", "synset_id", "label", "note"],
        "strings.csv": [
            "id",
            "question_id",
            "synset_id",
            "answer",
            "variants",
            "key",
            "level",
            "source",
            "judged_by",
            "judged_at",
            "created_at",
        ],
    },
)
COLUMNS[3] = dict(
    COLUMNS[2],
    **{
        "layers.csv": [
            "question_id",
            "assessor",
            "k",
            "adjudicator",
            "gold_at",
            "version",
            "started_at",
            "done_at",
            "seconds",
        ],
        "layer_judgments.csv": [
            "question_id",
            "assessor",
            "string_id",
            "synset_id",
            "level",
            "judged_at",
        ],
    },
)
COLUMNS[4] = COLUMNS[3]  # version 4 changes the manifest only (levels' examples)


def _max_bytes() -> int:
    """The most an archive may hold once unpacked (all members together)."""
    return settings.ARCHIVE_MAX_MB * 1024 * 1024


def _read_csv(text: str) -> tuple[list[str], list[dict]]:
    """(header, rows as dicts) of a member ``write_csv`` wrote (its formula escape undone); a row
    with too few or too many fields has None in it.  Raises ValueError (CsvFormatError) for
    text that is not CSV."""
    _, header, rows = read_csv(text)
    return header, [
        dict(zip(header, row, strict=True)) if len(row) == len(header) else {None: None}
        for row in rows
    ]


def _iso(dt) -> str:
    return dt.isoformat() if dt else ""


# audit events naming a run by its database id (mapped to the run's name in an archive; a
# withdrawn run is not in the archive, so its events keep only its name)
RUN_EVENTS = ("pool_run", "withdraw_run", "replace_run")


# -- export ------------------------------------------------------------------------------------
class _ArchiveIds:
    """Archive ids of database ids: live rows 1..n in export order, then every id the audit
    trail names that is no longer a row of the collection, numbered as first met."""

    def __init__(self, live):
        self.ids = {pk: i for i, pk in enumerate(live, start=1)}

    def __call__(self, pk):
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
    levels = list(
        collection.levels.order_by("order").values("code", "label", "gain", "order", "examples")
    )
    members = list(
        collection.memberships.order_by("user__username").values_list("user__username", "role")
    )
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": timezone.now().isoformat(),
        "collection": {f: getattr(collection, f) for f in COLLECTION_FIELDS}
        | {"slug": collection.slug, "judgments_changed_at": _iso(collection.judgments_changed_at)},
        "levels": levels,
        "members": [{"username": u, "role": r} for u, r in members],
    }
    questions = Question.objects.filter(collection=collection).order_by("id")
    assessors: dict[int, list[str]] = {}
    for qid, username in Question.assessors.through.objects.filter(
        question__collection=collection
    ).values_list("question_id", "user__username"):
        assessors.setdefault(qid, []).append(username)
    q_rows = [
        (q.qid, q.text, q.status, q.notes, q.version, " ".join(sorted(assessors.get(q.pk, []))))
        for q in questions
    ]
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
    ids = {
        "string": _ArchiveIds(s[0] for s in strings),
        "synset": _ArchiveIds(s[0] for s in synsets),
        "event": {e[0]: i for i, e in enumerate(events, start=1)},
        "level": dict(collection.levels.values_list("pk", "code")),
        "run": {r.pk: r.name for r in runs},
        "user": dict(
            get_user_model()
            .objects.filter(
                pk__in={
                    snap.get("judged_by")
                    for e in events
                    for side in e[4:6]
                    if isinstance(side, dict) and isinstance(side.get("strings"), dict)
                    for snap in side["strings"].values()
                    if isinstance(snap, dict)
                }
                - {None}
            )
            .values_list("pk", "username")
        ),
    }
    syn_rows = [(ids["synset"](pk), q, o, label, note) for pk, q, o, label, note in synsets]
    s_rows = [
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
            _iso(at),
            _iso(created),
        )
        for pk, q, o, t, v, k, lv, src, by, at, created in strings
    ]
    e_lines = "".join(
        json.dumps(
            {
                "id": ids["event"][pk],
                "question_id": q,
                "user": u,
                "action": a,
                "before": _export_side(b, a, ids),
                "after": _export_side(af, a, ids),
                "created_at": _iso(c),
                "layer": layer,
            },
            ensure_ascii=False,
        )
        + "\n"
        for pk, q, u, a, b, af, c, layer in events
    )
    l_rows = [
        (
            q,
            who,
            k or "",
            adj or "",
            _iso(gold),
            version,
            _iso(started),
            _iso(done),
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
    lj_rows = [
        (q, who, ids["string"](s), "" if g is None else g, lv or "", _iso(at))
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
    r_meta = [
        {
            "name": r.name,
            "owner": r.owner.get_username(),
            "description": r.description,
            "uploaded_at": _iso(r.uploaded_at),
            "source_name": r.source_name,
            "sha256": r.sha256,
            "format": r.format,
        }
        for r in runs
    ]
    answers = (
        RunAnswer.objects.filter(run__collection=collection, run__withdrawn_at__isnull=True)
        .order_by("run_id", "question_id", "rank")
        .values_list("run__name", "question__qid", "rank", "text", "key", "score")
    )
    a_rows = [(r, q, rank, t, k, "" if s is None else repr(s)) for r, q, rank, t, k, s in answers]
    columns = COLUMNS[VERSION]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("manifest.json", json.dumps(manifest, indent=1, ensure_ascii=False))
        z.writestr("questions.csv", write_csv(columns["questions.csv"], q_rows))
        z.writestr("synsets.csv", write_csv(columns["synsets.csv"], syn_rows))
        z.writestr("strings.csv", write_csv(columns["strings.csv"], s_rows))
        z.writestr("events.jsonl", e_lines)
        z.writestr("runs.json", json.dumps(r_meta, indent=1, ensure_ascii=False))
        z.writestr("run_answers.csv", write_csv(columns["run_answers.csv"], a_rows))
        z.writestr("layers.csv", write_csv(columns["layers.csv"], l_rows))
        z.writestr("layer_judgments.csv", write_csv(columns["layer_judgments.csv"], lj_rows))
    return buf.getvalue()


# -- import ------------------------------------------------------------------------------------
_INT_MAX = 2**31 - 1
_username = UnicodeUsernameValidator()


def _dt(value: str):
    if not value:
        return None
    dt = datetime.fromisoformat(value)
    return dt if timezone.is_aware(dt) else timezone.make_aware(dt, UTC)


_INT_TEXT = re.compile(r"-?[0-9]{1,30}", re.ASCII)


def _is_int(value, lo: int = 0, hi: int = _INT_MAX) -> bool:
    if isinstance(value, str):
        value = value.strip()
        # ASCII digits: "²".isdigit() is true, but int() refuses it
        if not _INT_TEXT.fullmatch(value):
            return False
        value = int(value)
    return isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi


def _is_when(value) -> bool:
    if value in ("", None):
        return True
    try:
        _dt(value)
    except (TypeError, ValueError):
        return False
    return True


def _is_username(value) -> bool:
    if not isinstance(value, str) or not 0 < len(value) <= 150:
        return False
    try:
        _username(value)
    except ValidationError:
        return False
    return True


# The data of an archive may hold every character the collection's own files could bring in
# (a run answer with a form feed, say), so that any collection can be restored; only NUL,
# which no database text column can store, is refused.
NUL = "\x00"


def _control(value) -> bool:
    """True when a JSON value holds a NUL anywhere (keys too)."""
    if isinstance(value, str):
        return NUL in value
    if isinstance(value, dict):
        return any(_control(k) or _control(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_control(v) for v in value)
    return False


class _Archive:
    """An archive read and checked whole; ``issues`` lists every problem found, with its
    member and line."""

    def __init__(self, data: bytes, filename: str):
        self.filename = filename
        self.issues: list[Issue] = []
        self.texts = self._unpack(data)
        if self.issues:
            return
        self.manifest = self._json("manifest.json")
        if self.issues:
            return
        m = self.manifest
        if not isinstance(m, dict) or m.get("format") != FORMAT or m.get("version") not in READS:
            version = m.get("version") if isinstance(m, dict) else None
            self.add(
                "manifest.json",
                None,
                f"not a {FORMAT} archive of version "
                f"{' or '.join(map(str, READS))} (version {version!r})",
            )
            return
        self.version = m["version"]
        self._check_manifest()
        self.questions = self._table("questions.csv")
        self.synsets = self._table("synsets.csv")
        self.strings = self._table("strings.csv")
        self.answers = self._table("run_answers.csv")
        self.runs = self._json("runs.json")
        self.events = self._jsonl("events.jsonl")
        self.layers, self.layer_judgments = [], []
        if self.version >= 3:
            missing = [name for name in LAYER_MEMBERS if name not in self.texts]
            for name in missing:
                self.add(None, None, f"member {name!r} is missing")
            if missing:
                return
            self.layers = self._table("layers.csv")
            self.layer_judgments = self._table("layer_judgments.csv")
        self._check_questions()
        self._check_synsets_strings()
        self._check_runs()
        self._check_layers()
        self._check_events()

    def add(self, member: str | None, line: int | None, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            where = f"{self.filename}:{member}" if member else self.filename
            self.issues.append(Issue(where, line, message))

    # reading
    def _unpack(self, data: bytes) -> dict[str, str]:
        limit, total, texts = _max_bytes(), 0, {}
        try:
            z = zipfile.ZipFile(io.BytesIO(data))
            infos = z.infolist()
            if len(infos) > 2 * len(MEMBERS + LAYER_MEMBERS):
                self.add(None, None, f"{len(infos)} members; an archive has {len(MEMBERS)}")
                return {}
            names = [i.filename for i in infos]
            for name in sorted(set(names)):
                if name not in MEMBERS + LAYER_MEMBERS:
                    self.add(None, None, f"unexpected member {name!r}")
                elif names.count(name) > 1:
                    self.add(None, None, f"member {name!r} appears {names.count(name)} times")
            for name in MEMBERS:
                if name not in names:
                    self.add(None, None, f"member {name!r} is missing")
            if self.issues:
                return {}
            for name in MEMBERS + tuple(n for n in LAYER_MEMBERS if n in names):
                # the sizes a zip declares may lie: read at most what is left of the limit
                with z.open(name) as f:
                    body = f.read(limit - total + 1)
                total += len(body)
                if total > limit:
                    self.add(
                        None,
                        None,
                        f"larger than {limit // 1048576} MB once unpacked (ARCHIVE_MAX_MB)",
                    )
                    return {}
                try:
                    texts[name] = body.decode("utf-8")
                except UnicodeDecodeError as e:
                    self.add(name, None, f"not UTF-8 text ({e.reason} at byte {e.start})")
        except (
            zipfile.BadZipFile,
            zipfile.LargeZipFile,
            NotImplementedError,
            RuntimeError,
            EOFError,
            OSError,
            ValueError,
            zlib.error,
        ) as e:
            self.add(None, None, f"unreadable archive: {e}")
        return texts

    def _json(self, name: str):
        try:
            value = json.loads(self.texts[name], parse_constant=self._no_constant)
        except ValueError as e:
            self.add(name, getattr(e, "lineno", None), f"not JSON: {e}")
            return None
        if _control(value):
            self.add(name, None, "holds a NUL byte")
        return value

    @staticmethod
    def _no_constant(name):
        raise ValueError(f"{name} is not a number here")

    def _jsonl(self, name: str) -> list[tuple[int, dict]]:
        rows = []
        for n, line in enumerate(self.texts[name].splitlines(), start=1):
            if not line.strip():
                continue
            try:
                value = json.loads(line, parse_constant=self._no_constant)
            except ValueError as e:
                self.add(name, n, f"not JSON: {e}")
                continue
            if not isinstance(value, dict):
                self.add(name, n, "not a JSON object")
            elif _control(value):
                self.add(name, n, "holds a NUL byte")
            else:
                rows.append((n, value))
        return rows

    def _table(self, name: str) -> list[tuple[int, dict]]:
        try:
            header, rows = _read_csv(self.texts[name])
        except ValueError as e:
            self.add(name, None, f"not CSV: {e}")
            return []
        want = COLUMNS[self.version][name]
        if sorted(header) != sorted(want):
            self.add(name, 1, f"columns {','.join(header)}; expected {','.join(want)}")
            return []
        out = []
        for n, row in enumerate(rows, start=2):
            if None in row or None in row.values():
                self.add(name, n, f"{len(want)} fields expected")
            elif any(NUL in v for v in row.values()):
                self.add(name, n, "holds a NUL byte")
            else:
                out.append((n, row))
        return out

    # checking
    def _check_manifest(self) -> None:
        m, add = self.manifest, partial(self.add, "manifest.json", None)
        c = m.get("collection")
        if not isinstance(c, dict):
            add('no "collection" object')
            c = {}
        checks = {
            "name": lambda v: isinstance(v, str) and 0 < len(v.strip()) and len(v) <= 200,
            "description": lambda v: isinstance(v, str),
            "guidelines": lambda v: isinstance(v, str),
            "matching_mode": lambda v: v in MatchingMode.values,
            "max_output_size": lambda v: _is_int(v, 1, 32767) and not isinstance(v, str),
            "open_for_submissions": lambda v: isinstance(v, bool),
            "leaderboard_published": lambda v: isinstance(v, bool),
            "judgment_version": lambda v: _is_int(v) and not isinstance(v, str),
        }
        for field, ok in checks.items():
            if field not in c or not ok(c[field]):
                add(f"collection.{field}: {c.get(field)!r} is missing or not allowed")
        if not _is_when(c.get("judgments_changed_at", "")):
            add(f"collection.judgments_changed_at: {c['judgments_changed_at']!r} is not a time")
        levels = m.get("levels")
        if not isinstance(levels, list) or not levels:
            add('"levels" must list at least one level')
            levels = []
        self.level_codes = set()
        orders = set()
        for i, lv in enumerate(levels, start=1):
            keys = {"code", "label", "gain", "order"} | (
                {"examples"} if self.version >= 4 else set()
            )
            if not isinstance(lv, dict) or set(lv) != keys:
                add(f"level {i}: needs exactly {', '.join(sorted(keys))}")
                continue
            if "examples" in lv and (
                not isinstance(lv["examples"], str) or len(lv["examples"]) > 2000
            ):
                add(f"level {i}: examples must be text of at most 2000 characters")
            code, gain = lv["code"], lv["gain"]
            if not isinstance(code, str) or not 0 < len(code.strip()) <= 8:
                add(f"level {i}: code {code!r} must be 1 to 8 characters")
            elif code in self.level_codes:
                add(f"level {i}: code {code!r} appears twice")
            self.level_codes.add(code)
            if not isinstance(lv["label"], str) or len(lv["label"]) > 100:
                add(f"level {i}: label must be text of at most 100 characters")
            if isinstance(gain, bool) or not isinstance(gain, int | float):
                add(f"level {i}: gain {gain!r} must be a number")
            else:
                try:
                    check_gain(gain, f"level {i}: gain")
                except ValueError as e:
                    add(str(e))
            if (
                not _is_int(lv["order"], 0, 32767)
                or isinstance(lv["order"], str)
                or lv["order"] in orders
            ):
                add(f"level {i}: order {lv['order']!r} must be a distinct number 0..32767")
            orders.add(lv["order"])
        members = m.get("members")
        if not isinstance(members, list):
            add('"members" must be a list')
            members = []
        self.roles: dict[str, str] = {}
        for i, mem in enumerate(members, start=1):
            if (
                not isinstance(mem, dict)
                or not _is_username(mem.get("username"))
                or mem.get("role") not in Role.values
            ):
                add(f"member {i}: needs a valid username and a role ({', '.join(Role.values)})")
            elif mem["username"] in self.roles:
                add(f"member {i}: {mem['username']!r} appears twice")
            else:
                self.roles[mem["username"]] = mem["role"]

    def _check_questions(self) -> None:
        self.qids: set[str] = set()
        for n, q in self.questions:
            add = partial(self.add, "questions.csv", n)
            qid = q["question_id"]
            if not qid.strip() or len(qid) > 100:
                add(f"question_id {qid!r} must be 1 to 100 characters")
            elif qid in self.qids:
                add(f"question {qid!r} appears twice")
            self.qids.add(qid)
            if q["status"] not in QuestionStatus.values:
                add(f"status {q['status']!r} is not one of {', '.join(QuestionStatus.values)}")
            if q["version"] and not _is_int(q["version"]):
                add(f"version {q['version']!r} is not a number >= 0")
            for u in q["assessors"].split():
                if not _is_username(u):
                    add(f"assessor {u!r} is not a valid username")

    def _check_synsets_strings(self) -> None:
        v2 = self.version >= 2
        self.synset_of: dict[int, str] = {}  # archive synset id -> question id
        self.string_of: dict[int, str] = {}
        syn_keys = set()
        for n, s in self.synsets:
            add = partial(self.add, "synsets.csv", n)
            if s["question_id"] not in self.qids:
                add(f"unknown question {s['question_id']!r}")
            if not _is_int(s["synset_id"], 1):
                add(f"synset_id {s['synset_id']!r} is not a number >= 1")
            elif (s["question_id"], int(s["synset_id"])) in syn_keys:
                add(f"synset {s['synset_id']} of {s['question_id']!r} appears twice")
            else:
                syn_keys.add((s["question_id"], int(s["synset_id"])))
            if v2:
                if not _is_int(s["id"], 1) or int(s["id"]) in self.synset_of:
                    add(f"id {s['id']!r} is not a distinct number >= 1")
                else:
                    self.synset_of[int(s["id"])] = s["question_id"]
                if len(s["label"]) > 100:
                    add("label longer than 100 characters")
        keys = set()
        c = self.manifest.get("collection")  # a dict once the manifest passed its checks
        mode = c.get("matching_mode") if isinstance(c, dict) else None
        for n, s in self.strings:
            add = partial(self.add, "strings.csv", n)
            qid, synset, level = s["question_id"], s["synset_id"], s["level"]
            if qid not in self.qids:
                add(f"unknown question {qid!r}")
            if synset and (not _is_int(synset, 1) or (qid, int(synset)) not in syn_keys):
                add(f"unknown synset {synset!r} of question {qid!r}")
            if level and level not in self.level_codes:
                add(f"unknown level {level!r}")
            if bool(synset) != bool(level):
                add("a string in a synset needs a level, and only such a string has one")
            if synset and not s["judged_at"]:
                add("a string in a synset needs judged_at")
            if s["source"] not in Source.values:
                add(f"source {s['source']!r} is not one of {', '.join(Source.values)}")
            if s["judged_by"] and not _is_username(s["judged_by"]):
                add(f"judged_by {s['judged_by']!r} is not a valid username")
            for field in ("judged_at", "created_at"):
                if not _is_when(s[field]):
                    add(f"{field} {s[field]!r} is not a time")
            if not s["key"]:
                add(empty_key_message(qid, s["answer"], mode))
            elif (qid, s["key"]) in keys:
                add(f"key {s['key']!r} appears twice in question {qid!r}")
            keys.add((qid, s["key"]))
            if v2:
                if not _is_int(s["id"], 1) or int(s["id"]) in self.string_of:
                    add(f"id {s['id']!r} is not a distinct number >= 1")
                else:
                    self.string_of[int(s["id"])] = qid
                try:
                    variants = json.loads(s["variants"]) if s["variants"] else []
                except ValueError:
                    variants = None
                if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
                    add(f"variants {s['variants']!r} is not a JSON list of strings")

    def _check_runs(self) -> None:
        add = partial(self.add, "runs.json", None)
        if not isinstance(self.runs, list):
            add("not a JSON list")
            self.runs = []
        self.run_names = set()
        want = {"name", "owner", "description", "uploaded_at", "source_name", "sha256", "format"}
        for i, r in enumerate(self.runs, start=1):
            if not isinstance(r, dict) or set(r) != want:
                add(f"run {i}: needs exactly {', '.join(sorted(want))}")
                continue
            if not isinstance(r["name"], str) or not 0 < len(r["name"].strip()) <= 100:
                add(f"run {i}: name must be 1 to 100 characters")
            elif problem := run_name_problem(r["name"]):
                add(f"run {i}: {problem}")
            elif r["name"] in self.run_names:
                add(f"run {i}: name {r['name']!r} appears twice")
            self.run_names.add(r["name"])
            if not _is_username(r["owner"]):
                add(f"run {i}: owner {r['owner']!r} is not a valid username")
            if r["format"] not in RunFormat.values:
                add(f"run {i}: format {r['format']!r} is not one of {', '.join(RunFormat.values)}")
            if (
                not isinstance(r["description"], str)
                or not isinstance(r["source_name"], str)
                or len(r["source_name"]) > 255
                or not isinstance(r["sha256"], str)
                or len(r["sha256"]) > 64
                or not isinstance(r["uploaded_at"], str)
                or not _is_when(r["uploaded_at"])
            ):
                add(
                    f"run {i}: description, source_name (<= 255), sha256 (<= 64) and "
                    "uploaded_at (a time) must be text"
                )
        seen = set()
        for n, a in self.answers:
            add_a = partial(self.add, "run_answers.csv", n)
            if a["run"] not in self.run_names:
                add_a(f"unknown run {a['run']!r}")
            if a["question_id"] not in self.qids:
                add_a(f"unknown question {a['question_id']!r}")
            if not _is_int(a["rank"], 1):
                add_a(f"rank {a['rank']!r} is not a number >= 1")
            elif (a["run"], a["question_id"], int(a["rank"])) in seen:
                add_a(f"rank {a['rank']} of {a['run']!r} on {a['question_id']!r} appears twice")
            else:
                seen.add((a["run"], a["question_id"], int(a["rank"])))
            if a["score"]:
                try:
                    float(a["score"])
                except ValueError:
                    add_a(f"score {a['score']!r} is not a number")

    def _check_layers(self) -> None:
        self.layer_keys: set[tuple[str, str]] = set()
        judges = {u for u, role in self.roles.items() if role in JUDGE_ROLES}
        for n, la in self.layers:
            add = partial(self.add, "layers.csv", n)
            key = (la["question_id"], la["assessor"])
            if la["question_id"] not in self.qids:
                add(f"unknown question {la['question_id']!r}")
            elif la["assessor"] not in judges:
                add(f"{la['assessor']!r} is not an assessor or organizer of the collection")
            elif key in self.layer_keys:
                add(f"a second layer of {la['assessor']!r} for {la['question_id']!r}")
            elif not _is_int(la["k"], 1, 99) or not _is_int(la["version"]):
                add("k (1 to 99) and version are numbers")
            elif la["adjudicator"] and la["adjudicator"] not in judges:
                add(f"adjudicator {la['adjudicator']!r} is not an assessor or organizer")
            elif not all(_is_when(la[f]) for f in ("gold_at", "started_at", "done_at")):
                add("gold_at, started_at and done_at are times (or empty)")
            else:
                try:
                    float(la["seconds"] or 0)
                except ValueError:
                    add(f"seconds {la['seconds']!r} is not a number")
                    continue
                self.layer_keys.add(key)
        seen = set()
        for n, j in self.layer_judgments:
            add = partial(self.add, "layer_judgments.csv", n)
            key = (j["question_id"], j["assessor"])
            if key not in self.layer_keys:
                add(f"no layer of {j['assessor']!r} for {j['question_id']!r} in layers.csv")
            elif (
                not _is_int(j["string_id"], 1)
                or self.string_of.get(int(j["string_id"])) != j["question_id"]
            ):
                add(f"string {j['string_id']!r} is not a string of {j['question_id']!r}")
            elif (key, j["string_id"]) in seen:
                add(f"string {j['string_id']} judged twice in one layer")
            elif bool(j["synset_id"]) != bool(j["level"]) or (
                j["synset_id"]
                and (not _is_int(j["synset_id"], 1) or j["level"] not in self.level_codes)
            ):
                add("a synset number with a known level, or neither")
            elif not j["judged_at"] or not _is_when(j["judged_at"]):
                add(f"judged_at {j['judged_at']!r} is not a time")
            else:
                seen.add((key, j["string_id"]))

    def _check_events(self) -> None:
        self.event_ids: set[int] = set()
        self.dead_strings: dict[int, str | None] = {}  # ids no longer rows -> question
        self.dead_synsets: dict[int, str | None] = {}
        for n, e in self.events:
            add = partial(self.add, "events.jsonl", n)
            want = {"question_id", "user", "action", "before", "after", "created_at"}
            if self.version >= 2:
                want.add("id")
            if self.version >= 3:
                want.add("layer")
                if (
                    e.get("layer") is not None
                    and (e.get("question_id"), e["layer"]) not in self.layer_keys
                ):
                    add(f"names the layer of {e['layer']!r}, which layers.csv does not have")
                    continue
            if set(e) != want:
                add(f"needs exactly {', '.join(sorted(want))}")
                continue
            if e["question_id"] is not None and e["question_id"] not in self.qids:
                add(f"unknown question {e['question_id']!r}")
            if e["user"] is not None and not _is_username(e["user"]):
                add(f"user {e['user']!r} is not a valid username")
            if not isinstance(e["action"], str) or not 0 < len(e["action"]) <= 40:
                add("action must be 1 to 40 characters")
            if not isinstance(e["before"], dict) or not isinstance(e["after"], dict):
                add("before and after must be JSON objects")
                continue
            if not isinstance(e["created_at"], str) or not _is_when(e["created_at"]):
                add(f"created_at {e['created_at']!r} is not a time")
            if self.version >= 2:
                for problem in self._event_references(e):
                    add(problem)
                if not _is_int(e["id"], 1) or e["id"] in self.event_ids or isinstance(e["id"], str):
                    add(f"id {e['id']!r} is not a distinct number >= 1")
                else:
                    self.event_ids.add(e["id"])

    def _event_references(self, e: dict):
        """The problems of the archive ids, level codes and usernames an event's snapshots
        name: a string or synset must be one of the event's question (a live one, or one
        no longer there that no other question's events name)."""
        qid = e["question_id"]

        def owned(kind: str, value, live: dict, dead: dict):
            if not _is_int(value, 1) or isinstance(value, bool):
                return f"{kind} id {value!r} is not a number >= 1"
            value = int(value)
            owner = live[value] if value in live else dead.setdefault(value, qid)
            if owner != qid:
                return f"names {kind} {value} of question {owner!r}, not of {qid!r}"
            return None

        for side in (e["before"], e["after"]):
            if "strings" not in side:  # not a snapshot (a bulk action's counts)
                side = {"undoes": side.get("undoes"), "run": side.get("run")}
            strings, synsets = side.get("strings"), side.get("synsets")
            if strings is not None and not isinstance(strings, dict):
                yield "strings must be a JSON object"
                strings = {}
            for key, snap in (strings or {}).items():
                if problem := owned("string", key, self.string_of, self.dead_strings):
                    yield problem
                if snap is None:
                    continue
                if (
                    not isinstance(snap, dict)
                    or not isinstance(snap.get("text"), str)
                    or not isinstance(snap.get("key"), str)
                    or snap.get("source") not in Source.values
                    or not _is_when(snap.get("judged_at"))
                ):
                    yield f"string {key}: text, key, source and judged_at are needed"
                    continue
                if snap.get("synset") is not None and (
                    problem := owned("synset", snap["synset"], self.synset_of, self.dead_synsets)
                ):
                    yield problem
                if snap.get("level") is not None and snap["level"] not in self.level_codes:
                    yield f"string {key}: unknown level {snap['level']!r}"
                if snap.get("judged_by") is not None and not _is_username(snap["judged_by"]):
                    yield f"string {key}: judged_by {snap['judged_by']!r} is not a username"
                variants = snap.get("variants", [])
                if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
                    yield f"string {key}: variants must be a list of strings"
            if synsets is not None and not isinstance(synsets, list):
                yield "synsets must be a JSON list"
                synsets = []
            for row in synsets or []:
                if (
                    not isinstance(row, list)
                    or len(row) not in (2, 3)
                    or not all(isinstance(v, str) for v in row[1:])
                ):
                    yield "each synset must be [id, note, label]"
                elif problem := owned("synset", row[0], self.synset_of, self.dead_synsets):
                    yield problem
            rows = side.get("rows") if e.get("layer") is not None else None
            if rows is not None and not isinstance(rows, dict):
                yield "rows must be a JSON object"
                rows = {}
            for key, row in (rows or {}).items():
                if problem := owned("string", key, self.string_of, self.dead_strings):
                    yield problem
                elif row is not None and not (
                    isinstance(row, list)
                    and len(row) == 3
                    and (row[0] is None or _is_int(row[0], 1))
                    and not isinstance(row[0], str)
                    and (row[1] is None or row[1] in self.level_codes)
                    and isinstance(row[2], str)
                    and _is_when(row[2])
                ):
                    yield f"row {key}: [synset, level, judged_at] expected"
            undoes = side.get("undoes")
            if undoes is not None and (
                not _is_int(undoes, 1) or isinstance(undoes, str) or undoes not in self.event_ids
            ):
                yield f"undoes {undoes!r}, which is not an earlier event"
            if e["action"] in RUN_EVENTS and side.get("run") not in (None, *self.run_names):
                yield f"unknown run {side.get('run')!r}"


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


def _reserve_ids(collection: Collection, n_strings: int, n_synsets: int):
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


def collection_import(
    *, data: bytes, slug: str, name: str | None = None, filename: str = "archive.zip"
) -> Collection:
    """Create a new collection ``slug`` from an archive.  Users missing on this server are
    created without a usable password (an administrator sets one).  Raises InputError
    (nothing written) for an unreadable, inconsistent or too large archive, or a slug in
    use, with every problem found (member and line)."""
    archive = _Archive(data, filename)
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
    manifest, v2 = archive.manifest, archive.version >= 2
    questions = [q for _, q in archive.questions]
    synsets = [s for _, s in archive.synsets]
    strings = [s for _, s in archive.strings]
    events = [e for _, e in archive.events]
    runs, answers = archive.runs, [a for _, a in archive.answers]

    User = get_user_model()
    judges = {u for u, role in archive.roles.items() if role in JUDGE_ROLES}
    snapshot_users = {
        snap.get("judged_by")
        for e in events
        for side in (e["before"], e["after"])
        if v2 and isinstance(side.get("strings"), dict)
        for snap in side["strings"].values()
        if snap
    } - {None}
    usernames = (
        set(archive.roles)
        | {r["owner"] for r in runs}
        | {s["judged_by"] for s in strings if s["judged_by"]}
        | {e["user"] for e in events if e["user"]}
        | snapshot_users
    )
    with transaction.atomic():
        users = {u.get_username(): u for u in User.objects.filter(username__in=usernames)}
        for username in sorted(usernames - set(users)):
            user = User(username=username, is_active=True)
            user.set_unusable_password()
            user.save()
            users[username] = user
        c = manifest["collection"]
        collection = Collection.objects.create(
            slug=slug,
            **{f: c[f] for f in COLLECTION_FIELDS},
            judgments_changed_at=_dt(c.get("judgments_changed_at", "")),
        )
        if name:
            collection.name = name.strip()
            collection.save(update_fields=["name"])
        level_of = {
            lv["code"]: Level.objects.create(collection=collection, **lv)
            for lv in manifest["levels"]
        }
        Membership.objects.bulk_create(
            Membership(collection=collection, user=users[u], role=role)
            for u, role in archive.roles.items()
        )
        q_objs = Question.objects.bulk_create(
            Question(
                collection=collection,
                qid=q["question_id"],
                text=q["question"],
                status=q["status"],
                notes=q["notes"],
                version=int(q["version"] or 0),
            )
            for q in questions
        )
        q_of = {q.qid: q for q in q_objs}
        # an assignment only for members who judge (as the membership rules keep it)
        Question.assessors.through.objects.bulk_create(
            Question.assessors.through(question_id=q_of[q["question_id"]].pk, user_id=users[u].pk)
            for q in questions
            for u in set(q["assessors"].split())
            if u in judges
        )
        s_objs = AnswerSynset.objects.bulk_create(
            AnswerSynset(
                question=q_of[s["question_id"]],
                ordinal=int(s["synset_id"]),
                label=s.get("label", ""),
                note=s["note"],
            )
            for s in synsets
        )
        syn_of = {(s.question.qid, str(s.ordinal)): s for s in s_objs}
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
                judged_at=_dt(s["judged_at"]),
            )
            for s in strings
        )
        for obj, s in zip(objs, strings, strict=True):
            obj.created_at = _dt(s["created_at"]) or obj.created_at
        AnswerString.objects.bulk_update(objs, ["created_at"], batch_size=2000)
        run_of = {}
        for r in runs:
            run = Run.objects.create(
                collection=collection,
                name=r["name"],
                owner=users[r["owner"]],
                description=r["description"],
                source_name=r["source_name"],
                sha256=r["sha256"],
                format=r["format"],
            )
            Run.objects.filter(pk=run.pk).update(uploaded_at=_dt(r["uploaded_at"]))
            run_of[r["name"]] = run
        if v2:
            dead_strings, dead_synsets = _reserve_ids(
                collection, len(archive.dead_strings), len(archive.dead_synsets)
            )
            ids = {
                "string": {int(s["id"]): o.pk for s, o in zip(strings, objs, strict=True)}
                | dict(zip(archive.dead_strings, dead_strings, strict=True)),
                "synset": {int(s["id"]): o.pk for s, o in zip(synsets, s_objs, strict=True)}
                | dict(zip(archive.dead_synsets, dead_synsets, strict=True)),
                "level": {code: lv.pk for code, lv in level_of.items()},
                "user": {u: obj.pk for u, obj in users.items()},
                "run": {n: run.pk for n, run in run_of.items()},
            }
            sides = [
                (
                    _import_side(e["before"], e["action"], ids, layer=bool(e.get("layer"))),
                    _import_side(e["after"], e["action"], ids, layer=bool(e.get("layer"))),
                )
                for e in events
            ]
        else:
            sides = [
                (_strip_ids(e["before"], e["action"]), _strip_ids(e["after"], e["action"]))
                for e in events
            ]
        layer_of = _import_layers(archive, q_of, users, level_of, ids["string"] if v2 else {})
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
            for e, (before, after) in zip(events, sides, strict=True)
        )
        event_of = {e["id"]: obj.pk for e, obj in zip(events, e_objs, strict=True)} if v2 else {}
        for obj, e in zip(e_objs, events, strict=True):
            obj.created_at = _dt(e["created_at"]) or obj.created_at
            for side in (obj.before, obj.after):
                if side.get("undoes") is not None:
                    side["undoes"] = event_of[side["undoes"]]
        JudgmentEvent.objects.bulk_update(
            e_objs, ["created_at", "before", "after"], batch_size=2000
        )
        RunAnswer.objects.bulk_create(
            (
                RunAnswer(
                    run=run_of[a["run"]],
                    question=q_of[a["question_id"]],
                    rank=int(a["rank"]),
                    text=a["answer"],
                    key=a["key"],
                    score=float(a["score"]) if a["score"] else None,
                )
                for a in answers
            ),
            batch_size=5000,
        )
    return collection


def _import_layers(
    archive: _Archive, q_of: dict, users: dict, level_of: dict, string_ids: dict
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
                gold_at=_dt(la["gold_at"]),
            )
        layer_of[la["question_id"], la["assessor"]] = JudgingLayer(
            question=q,
            assessor=users[la["assessor"]],
            version=int(la["version"]),
            started_at=_dt(la["started_at"]),
            done_at=_dt(la["done_at"]),
            seconds=float(la["seconds"]) if la["seconds"] else None,
        )
    LayerRequest.objects.bulk_create(requests.values())
    JudgingLayer.objects.bulk_create(layer_of.values())
    LayerJudgment.objects.bulk_create(
        (
            LayerJudgment(
                layer=layer_of[j["question_id"], j["assessor"]],
                string_id=string_ids[int(j["string_id"])],
                group=int(j["synset_id"]) if j["synset_id"] else None,
                level=level_of[j["level"]] if j["synset_id"] else None,
                judged_at=_dt(j["judged_at"]),
            )
            for _, j in archive.layer_judgments
        ),
        batch_size=5000,
    )
    return layer_of
