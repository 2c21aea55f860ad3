"""An archive read and checked whole before anything is written (``Archive``): format,
every field, every reference and the sizes; every problem found is listed with its member
and line."""

from __future__ import annotations

import codecs
import io
import json
import re
import zipfile
from collections.abc import Callable
from functools import partial
from itertools import islice

from django.utils.translation import gettext

from annotate.models import JUDGE_ROLES, MatchingMode, QuestionStatus, Role, Source
from evaluation.metrics import Issue
from evaluation.metrics.csvio import CsvFormatError, read_csv_lines
from evaluation.metrics.errors import MAX_ISSUES
from evaluation.metrics.gains import MAX_GAIN, check_gain
from evaluation.metrics.normalize import normalize_many
from evaluation.metrics.text_rules import empty_key_message
from evaluation.models import RunFormat
from evaluation.services import run_name_problem

from .answers import Scope, check_answers, columns_message
from .format import (
    COLUMNS,
    FORMAT,
    JSON_MEMBERS,
    LAYER_MEMBERS,
    MAX_JSON_DEPTH,
    MEMBERS,
    READS,
    RUN_EVENTS,
    json_depth,
    max_bytes,
    max_json_bytes,
    max_rows,
)
from .values import (
    _CHUNK,
    _COLLECTION_CHECKS,
    _RUN_KEYS,
    _SHARED,
    _UNREADABLE,
    Row,
    Table,
    _column_index,
    _control,
    _control_text,
    _is_int,
    _is_json_int,
    _is_text_list,
    _is_username,
    _is_when,
    _OverBudget,
    _variants,
    too_deep,
)

# a line ends at LF, CRLF or CR (``evaluation.metrics.sniff``, every reader's count)
_LINE_END = re.compile(r"\r\n|\r|\n")

ANSWERS = "run_answers.csv"


class Archive:
    """An archive read and checked whole; ``issues`` lists every problem found, with its
    member and line.  Members are read as streams, a row at a time, and the rows kept are
    bounded (``max_rows``, ``max_json_bytes``): memory stays within a budget whatever
    the archive's size."""

    def __init__(
        self,
        data: bytes,
        filename: str,
        *,
        defer_answers: bool = False,
        progress: Callable[[int, int | None, str | None], None] | None = None,
    ):
        self.data = data
        self.filename = filename
        self.issues: list[Issue] = []
        self.rows_read = 0
        self.answer_lines = 0  # run_answers.csv's lines (its rows, but for multi-line cells)
        self.answers_checked = not defer_answers
        self._answers_at: int | None = None
        self._progress = progress or (lambda done, total=None, unit=None: None)
        self._shared: dict[str, str] = {}
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as z:
                self._zip = z
                self._read()
        except _OverBudget:
            pass
        except _UNREADABLE as e:
            self.add(None, None, gettext("unreadable archive: %(error)s") % {"error": e})
        finally:
            self._zip = None
            self._shared = {}
        if self.issues and not self.answers_checked and self._answers_at is not None:
            # refused anyway: the run answers' problems join the list, in their place
            found = self.check_answers()
            self.issues[self._answers_at : self._answers_at] = found
            del self.issues[MAX_ISSUES:]

    def _read(self) -> None:
        names = self._member_names(self._zip)
        if self.issues:
            return
        self.sizes = self._measure(names)
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
                gettext("not a %(format)s archive of version %(versions)s (version %(version)s)")
                % {
                    "format": FORMAT,
                    "versions": " or ".join(map(str, READS)),
                    "version": repr(version),
                },
            )
            return
        self.version = m["version"]
        self._check_manifest()
        self.questions = self._table("questions.csv")
        self.synsets = self._table("synsets.csv")
        self.strings = self._table("strings.csv")
        self.runs = self._json("runs.json")
        self.events = self._jsonl("events.jsonl")
        self.layers, self.layer_judgments = Table(), Table()
        if self.version >= 3:
            missing = [name for name in LAYER_MEMBERS if name not in self.sizes]
            for name in missing:
                self.add(None, None, gettext("member %(name)s is missing") % {"name": repr(name)})
            if missing:
                return
            self.layers = self._table("layers.csv")
            self.layer_judgments = self._table("layer_judgments.csv")
        self._check_questions()
        self._check_synsets()
        self._check_strings()
        self._check_runs()
        self._check_answers()
        self._check_layers()
        self._check_layer_judgments()
        self._check_events()

    def add(self, member: str | None, line: int | None, message: str) -> None:
        if len(self.issues) < MAX_ISSUES:
            where = f"{self.filename}:{member}" if member else self.filename
            self.issues.append(Issue(where, line, message))

    # reading
    def _member_names(self, z: zipfile.ZipFile) -> list[str]:
        """The names of the archive's members, a problem added for each one unexpected,
        repeated or missing."""
        infos = z.infolist()
        if len(infos) > 2 * len(MEMBERS + LAYER_MEMBERS):
            self.add(
                None,
                None,
                gettext("%(count)s members; an archive has %(expected)s")
                % {"count": len(infos), "expected": len(MEMBERS)},
            )
            return []
        names = [i.filename for i in infos]
        for name in sorted(set(names)):
            if name not in MEMBERS + LAYER_MEMBERS:
                self.add(None, None, gettext("unexpected member %(name)s") % {"name": repr(name)})
            elif names.count(name) > 1:
                self.add(
                    None,
                    None,
                    gettext("member %(name)s appears %(count)s times")
                    % {"name": repr(name), "count": names.count(name)},
                )
        for name in MEMBERS:
            if name not in names:
                self.add(None, None, gettext("member %(name)s is missing") % {"name": repr(name)})
        return names

    def _measure(self, names: list[str]) -> dict[str, int]:
        """Each member's size once unpacked, read a chunk at a time up to the size limit
        all together (the sizes a zip declares may lie), and checked to be UTF-8 text;
        the JSON members together within their budget.  The lines of run_answers.csv are
        counted on the way (the total of the import's progress)."""
        limit, total, sizes = max_bytes(), 0, {}
        members = MEMBERS + tuple(n for n in LAYER_MEMBERS if n in names)
        for i, name in enumerate(members):
            self._progress(i, len(members), "members read")
            decoder, size, text = codecs.getincrementaldecoder("utf-8")(), 0, True
            with self._zip.open(name) as f:
                while chunk := f.read(min(_CHUNK, limit - total + 1)):
                    total += len(chunk)
                    if total > limit:
                        self.add(
                            None,
                            None,
                            gettext("larger than %(mb)s MB once unpacked (ARCHIVE_MAX_MB)")
                            % {"mb": limit // 1048576},
                        )
                        return {}
                    text = text and self._decoded(name, decoder, chunk, size)
                    size += len(chunk)
                    if name == ANSWERS:
                        self.answer_lines += chunk.count(b"\n")
            if text:
                self._decoded(name, decoder, b"", size, final=True)
            sizes[name] = size
        json_limit = max_json_bytes()
        if sum(sizes[name] for name in JSON_MEMBERS) > json_limit:
            self.add(
                None,
                None,
                gettext(
                    "%(members)s together larger than %(mb)s MB once unpacked (ARCHIVE_JSON_MAX_MB)"
                )
                % {"members": ", ".join(JSON_MEMBERS), "mb": json_limit // 1048576},
            )
        return sizes

    def _decoded(self, name: str, decoder, chunk: bytes, offset: int, final=False) -> bool:
        """Whether ``chunk`` (read at byte ``offset`` of the member) is UTF-8 text, the
        member's problem added when it is not (at the byte counted from the member's
        start)."""
        pending = len(decoder.getstate()[0])  # the bytes of a character cut by the chunk
        try:
            decoder.decode(chunk, final)
        except UnicodeDecodeError as e:
            at = offset - pending + e.start
            self.add(
                name,
                None,
                gettext("not UTF-8 text (%(reason)s at byte %(at)s)")
                % {"reason": e.reason, "at": at},
            )
            return False
        return True

    def _open(self, name: str) -> io.TextIOWrapper:
        """A member as text read a line at a time (lines end at LF only, as written)."""
        return io.TextIOWrapper(self._zip.open(name), encoding="utf-8", newline="\n")

    def _count_row(self, name: str, line: int) -> None:
        self.rows_read += 1
        if not self.rows_read % 10_000:
            self._progress(self.rows_read, None, "rows read")
        if self.rows_read > (limit := max_rows()):
            self.add(
                name,
                line,
                gettext("more than %(limit)s rows, CSV rows and events together (ARCHIVE_MAX_ROWS)")
                % {"limit": limit},
            )
            raise _OverBudget

    def _json(self, name: str):
        text = self._zip.read(name).decode("utf-8")
        if json_depth(text) > MAX_JSON_DEPTH:
            self.add(name, None, too_deep())
            return None
        try:
            value = json.loads(text, parse_constant=self._no_constant)
        except ValueError as e:
            self.add(
                name, getattr(e, "lineno", None), gettext("not JSON: %(error)s") % {"error": e}
            )
            return None
        if problem := _control(value):
            self.add(name, None, problem)
        return value

    @staticmethod
    def _no_constant(name):
        raise ValueError(gettext("%(name)s is not a number here") % {"name": name})

    def _jsonl(self, name: str) -> list[tuple[int, dict]]:
        rows, n = [], 0
        with self._open(name) as f:
            for text in f:
                # a line ends at LF, CRLF or CR, as every reader counts lines (str.splitlines
                # would end one at U+2028, U+0085 and the like too: refused characters,
                # named on their line before the blank line check, as they strip away)
                lines = _LINE_END.split(text)
                for line in lines[:-1] if lines[-1] == "" else lines:
                    n += 1
                    if problem := _control_text(line):
                        self.add(name, n, problem)
                    elif line.strip():
                        self._count_row(name, n)
                        if value := self._jsonl_value(name, n, line):
                            rows.append((n, value))
        return rows

    def _jsonl_value(self, name: str, n: int, line: str) -> dict | None:
        """The JSON object on line ``n``; None, with its problem added, when it is not
        one."""
        if json_depth(line) > MAX_JSON_DEPTH:
            self.add(name, n, too_deep())
            return None
        try:
            value = json.loads(line, parse_constant=self._no_constant)
        except ValueError as e:
            self.add(name, n, gettext("not JSON: %(error)s") % {"error": e})
            return None
        if not isinstance(value, dict):
            self.add(name, n, gettext("not a JSON object"))
        elif problem := _control(value):
            self.add(name, n, problem)
        else:
            return value
        return None

    def _table(self, name: str) -> Table:
        """The rows of a CSV member, read one at a time; an empty table when the member is
        not CSV (its problems found on the way replaced by that one) or has other
        columns."""
        mark, want = len(self.issues), COLUMNS[self.version][name]
        try:
            with self._open(name) as f:
                _, header, records = read_csv_lines(f)
                if sorted(header) != sorted(want):
                    for _ in records:  # a member that is not CSV says so first
                        pass
                    self.add(name, 1, columns_message(header, want))
                    return Table()
                return self._rows(name, header, records)
        except CsvFormatError as e:
            del self.issues[mark:]
            self.add(name, None, gettext("not CSV: %(error)s") % {"error": e})
            return Table()

    def _rows(self, name: str, header: list[str], records) -> Table:
        row_type = type("Row", (Row,), {"__slots__": (), "columns": _column_index(header)})
        shared = [column in _SHARED for column in header]
        table, width, pool = Table(), len(header), self._shared
        for n, record in enumerate(records, start=2):
            self._count_row(name, n)
            if len(record) != width:
                self.add(name, n, gettext("%(width)s fields expected") % {"width": width})
            elif problem := next((m for v in record if (m := _control_text(v))), None):
                self.add(name, n, problem)
            else:
                table.append(
                    n,
                    row_type(
                        pool.setdefault(v, v) if keep else v
                        for v, keep in zip(record, shared, strict=True)
                    ),
                )
        return table

    # checking the manifest
    def _check_manifest(self) -> None:
        m, add = self.manifest, partial(self.add, "manifest.json", None)
        c = m.get("collection")
        if not isinstance(c, dict):
            add(gettext('no "collection" object'))
            c = {}
        for field, ok in _COLLECTION_CHECKS.items():
            if field not in c or not ok(c[field]):
                add(
                    gettext("collection.%(field)s: %(value)s is missing or not allowed")
                    % {"field": field, "value": repr(c.get(field))}
                )
        if not _is_when(c.get("judgments_changed_at", "")):
            add(
                gettext("collection.judgments_changed_at: %(value)s is not a time")
                % {"value": repr(c["judgments_changed_at"])}
            )
        levels = m.get("levels")
        if not isinstance(levels, list) or not levels:
            add(gettext('"levels" must list at least one level'))
            levels = []
        self.level_codes: set[str] = set()
        orders: set = set()
        for i, lv in enumerate(levels, start=1):
            self._check_level(i, lv, orders)
        self._check_members(m.get("members"))

    def _check_level(self, i: int, lv, orders: set) -> None:
        """Level ``i`` of the manifest; its code joins ``level_codes``, its order ``orders``."""
        add = partial(self.add, "manifest.json", None)
        keys = {"code", "label", "gain", "order"} | ({"examples"} if self.version >= 4 else set())
        if not isinstance(lv, dict) or set(lv) != keys:
            add(
                gettext("level %(level)s: needs exactly %(keys)s")
                % {"level": i, "keys": ", ".join(sorted(keys))}
            )
            return
        if "examples" in lv and (not isinstance(lv["examples"], str) or len(lv["examples"]) > 2000):
            add(
                gettext("level %(level)s: examples must be text of at most 2000 characters")
                % {"level": i}
            )
        code, gain = lv["code"], lv["gain"]
        if not isinstance(code, str) or not 0 < len(code.strip()) <= 8:
            add(
                gettext("level %(level)s: code %(code)s must be 1 to 8 characters")
                % {"level": i, "code": repr(code)}
            )
        elif code in self.level_codes:
            add(
                gettext("level %(level)s: code %(code)s appears twice")
                % {"level": i, "code": repr(code)}
            )
        self.level_codes.add(code)
        if not isinstance(lv["label"], str) or len(lv["label"]) > 100:
            add(
                gettext("level %(level)s: label must be text of at most 100 characters")
                % {"level": i}
            )
        if isinstance(gain, bool) or not isinstance(gain, int | float):
            add(
                gettext("level %(level)s: gain %(gain)s must be a number")
                % {"level": i, "gain": repr(gain)}
            )
        else:
            try:
                check_gain(gain)
            except ValueError:
                add(
                    gettext(
                        "level %(level)s: gain %(gain)s is out of range: gains are numbers "
                        "from 0 to %(max)s"
                    )
                    % {"level": i, "gain": repr(gain), "max": f"{MAX_GAIN:g}"}
                )
        if not _is_json_int(lv["order"], 0, 32767) or lv["order"] in orders:
            add(
                gettext("level %(level)s: order %(order)s must be a distinct number 0..32767")
                % {"level": i, "order": repr(lv["order"])}
            )
        orders.add(lv["order"])

    def _check_members(self, members) -> None:
        """The manifest's members: ``roles`` maps each valid username to its role."""
        add = partial(self.add, "manifest.json", None)
        if not isinstance(members, list):
            add(gettext('"members" must be a list'))
            members = []
        self.roles: dict[str, str] = {}
        for i, mem in enumerate(members, start=1):
            if (
                not isinstance(mem, dict)
                or not _is_username(mem.get("username"))
                or mem.get("role") not in Role.values
            ):
                add(
                    gettext("member %(member)s: needs a valid username and a role (%(roles)s)")
                    % {"member": i, "roles": ", ".join(Role.values)}
                )
            elif mem["username"] in self.roles:
                add(
                    gettext("member %(member)s: %(username)s appears twice")
                    % {"member": i, "username": repr(mem["username"])}
                )
            else:
                self.roles[mem["username"]] = mem["role"]

    # checking the tables
    def _check_questions(self) -> None:
        self.qids: set[str] = set()
        for n, q in self.questions:
            add = partial(self.add, "questions.csv", n)
            qid = q["question_id"]
            if not qid.strip() or len(qid) > 100:
                add(gettext("question_id %(qid)s must be 1 to 100 characters") % {"qid": repr(qid)})
            elif qid in self.qids:
                add(gettext("question %(qid)s appears twice") % {"qid": repr(qid)})
            self.qids.add(qid)
            if q["status"] not in QuestionStatus.values:
                add(
                    gettext("status %(status)s is not one of %(allowed)s")
                    % {"status": repr(q["status"]), "allowed": ", ".join(QuestionStatus.values)}
                )
            if q["version"] and not _is_int(q["version"]):
                add(
                    gettext("version %(version)s is not a number >= 0")
                    % {"version": repr(q["version"])}
                )
            for u in q["assessors"].split():
                if not _is_username(u):
                    add(
                        gettext("assessor %(username)s is not a valid username")
                        % {"username": repr(u)}
                    )

    def _check_synsets(self) -> None:
        self.synset_of: dict[int, str] = {}  # archive synset id -> question id
        self.syn_keys: set[tuple[str, int]] = set()
        for n, s in self.synsets:
            add = partial(self.add, "synsets.csv", n)
            if s["question_id"] not in self.qids:
                add(gettext("unknown question %(qid)s") % {"qid": repr(s["question_id"])})
            if not _is_int(s["synset_id"], 1):
                add(
                    gettext("synset_id %(synset)s is not a number >= 1")
                    % {"synset": repr(s["synset_id"])}
                )
            elif (s["question_id"], int(s["synset_id"])) in self.syn_keys:
                add(
                    gettext("synset %(synset)s of %(qid)s appears twice")
                    % {"synset": s["synset_id"], "qid": repr(s["question_id"])}
                )
            else:
                self.syn_keys.add((s["question_id"], int(s["synset_id"])))
            if self.version >= 2:
                if not _is_int(s["id"], 1) or int(s["id"]) in self.synset_of:
                    add(gettext("id %(id)s is not a distinct number >= 1") % {"id": repr(s["id"])})
                else:
                    self.synset_of[int(s["id"])] = s["question_id"]
                if len(s["label"]) > 100:
                    add(gettext("label longer than 100 characters"))

    def _check_strings(self) -> None:
        self.string_of: dict[int, str] = {}  # archive string id -> question id
        keys: set[tuple[str, str]] = set()
        c = self.manifest.get("collection")  # a dict once the manifest passed its checks
        mode = c.get("matching_mode") if isinstance(c, dict) else None
        for n, s in self.strings:
            add = partial(self.add, "strings.csv", n)
            self._check_judgment(s, add)
            if not s["key"]:
                add(empty_key_message(s["question_id"], s["answer"], mode))
            elif (s["question_id"], s["key"]) in keys:
                add(
                    gettext("key %(key)s appears twice in question %(qid)s")
                    % {"key": repr(s["key"]), "qid": repr(s["question_id"])}
                )
            keys.add((s["question_id"], s["key"]))
            if self.version >= 2:
                self._check_string_id(s, add)
        self._check_spelling_keys()

    def _check_spelling_keys(self) -> None:
        """Two strings of a question never share a key by any of their spellings (their
        text and variants, under the collection's matching mode: ``SpellingKey``)."""
        mode = self.manifest["collection"].get("matching_mode")
        if mode not in MatchingMode.values:
            return  # reported with the manifest
        holder: dict[tuple[str, str], tuple[int, bool]] = {}
        rows = iter(self.strings)
        # a batch of rows at a time: their spellings and keys are not all held at once
        while batch := list(islice(rows, 10_000)):
            spellings = []
            for n, s in batch:
                variants = _variants(s.get("variants"))
                if _is_text_list(variants):  # reported above otherwise
                    spellings += [(n, s["question_id"], s["answer"], True)]
                    spellings += [(n, s["question_id"], text, False) for text in variants]
            keys = normalize_many([text for _, _, text, _ in spellings], mode)
            for (n, qid, text, own), key in zip(spellings, keys, strict=True):
                first, first_own = holder.setdefault((qid, key), (n, own)) if key else (n, own)
                # two texts with one key: "appears twice", above
                if first != n and not (own and first_own):
                    self.add(
                        "strings.csv",
                        n,
                        gettext(
                            "%(text)s has the key %(key)s of a spelling of the string on line "
                            "%(line)s (question %(qid)s): two strings never share a key"
                        )
                        % {"text": repr(text), "key": repr(key), "line": first, "qid": repr(qid)},
                    )

    def _check_judgment(self, s: dict, add) -> None:
        """A row of strings.csv: its question, synset, level, source, judge and times."""
        qid, synset, level = s["question_id"], s["synset_id"], s["level"]
        if qid not in self.qids:
            add(gettext("unknown question %(qid)s") % {"qid": repr(qid)})
        if synset and (not _is_int(synset, 1) or (qid, int(synset)) not in self.syn_keys):
            add(
                gettext("unknown synset %(synset)s of question %(qid)s")
                % {"synset": repr(synset), "qid": repr(qid)}
            )
        if level and level not in self.level_codes:
            add(gettext("unknown level %(level)s") % {"level": repr(level)})
        if bool(synset) != bool(level):
            add(gettext("a string in a synset needs a level, and only such a string has one"))
        if synset and not s["judged_at"]:
            add(gettext("a string in a synset needs judged_at"))
        if s["source"] not in Source.values:
            add(
                gettext("source %(source)s is not one of %(allowed)s")
                % {"source": repr(s["source"]), "allowed": ", ".join(Source.values)}
            )
        if s["judged_by"] and not _is_username(s["judged_by"]):
            add(
                gettext("judged_by %(username)s is not a valid username")
                % {"username": repr(s["judged_by"])}
            )
        for field in ("judged_at", "created_at"):
            if not _is_when(s[field]):
                add(
                    gettext("%(field)s %(value)s is not a time")
                    % {"field": field, "value": repr(s[field])}
                )

    def _check_string_id(self, s: dict, add) -> None:
        """A version 2 row of strings.csv: its archive id and its variants."""
        if not _is_int(s["id"], 1) or int(s["id"]) in self.string_of:
            add(gettext("id %(id)s is not a distinct number >= 1") % {"id": repr(s["id"])})
        else:
            self.string_of[int(s["id"])] = s["question_id"]
        if not _is_text_list(_variants(s["variants"])):
            add(
                gettext("variants %(variants)s is not a JSON list of strings")
                % {"variants": repr(s["variants"])}
            )

    def _check_runs(self) -> None:
        add = partial(self.add, "runs.json", None)
        if not isinstance(self.runs, list):
            add(gettext("not a JSON list"))
            self.runs = []
        self.run_names: set[str] = set()
        for i, r in enumerate(self.runs, start=1):
            if not isinstance(r, dict) or set(r) != _RUN_KEYS:
                add(
                    gettext("run %(run)s: needs exactly %(keys)s")
                    % {"run": i, "keys": ", ".join(sorted(_RUN_KEYS))}
                )
                continue
            self._check_run(i, r, add)

    def _check_run(self, i: int, r: dict, add) -> None:
        """Run ``i`` of runs.json; its name joins ``run_names``."""
        if not isinstance(r["name"], str) or not 0 < len(r["name"].strip()) <= 100:
            add(gettext("run %(run)s: name must be 1 to 100 characters") % {"run": i})
        elif problem := run_name_problem(r["name"]):
            add(gettext("run %(run)s: %(problem)s") % {"run": i, "problem": problem})
        elif r["name"] in self.run_names:
            add(
                gettext("run %(run)s: name %(name)s appears twice")
                % {"run": i, "name": repr(r["name"])}
            )
        self.run_names.add(r["name"])
        if not _is_username(r["owner"]):
            add(
                gettext("run %(run)s: owner %(username)s is not a valid username")
                % {"run": i, "username": repr(r["owner"])}
            )
        if r["format"] not in RunFormat.values:
            add(
                gettext("run %(run)s: format %(format)s is not one of %(allowed)s")
                % {"run": i, "format": repr(r["format"]), "allowed": ", ".join(RunFormat.values)}
            )
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
                gettext(
                    "run %(run)s: description, source_name (<= 255), sha256 (<= 64) and "
                    "uploaded_at (a time) must be text"
                )
                % {"run": i}
            )

    def _check_answers(self) -> None:
        """run_answers.csv, read as a stream (``answers.check_answers``); deferred, only
        its place among the problems is kept (the import checks each row as it writes
        it, and lists every problem if it finds one)."""
        if self.answers_checked:
            for issue in self.check_answers():
                self.add("run_answers.csv", issue.line, issue.message)
        else:
            self._answers_at = len(self.issues)

    @property
    def answers_scope(self) -> Scope:
        """The run names and question ids a run answer may name, by their position in
        runs.json and questions.csv."""
        return Scope(
            runs={r.get("name"): i for i, r in enumerate(self.runs) if isinstance(r, dict)},
            questions={q["question_id"]: i for i, (_, q) in enumerate(self.questions)},
        )

    def open_member(self, name: str) -> io.TextIOWrapper:
        """A member as text read a line at a time, once the archive has been read."""
        z = zipfile.ZipFile(io.BytesIO(self.data))
        return io.TextIOWrapper(z.open(name), encoding="utf-8", newline="\n")

    def check_answers(self) -> list[Issue]:
        """Every problem of run_answers.csv (named with this archive's file name)."""
        self._progress(0, self.answer_lines, "run answers checked")
        found = check_answers(
            self.open_member,
            COLUMNS[self.version][ANSWERS],
            self.answers_scope,
            f"{self.filename}:{ANSWERS}",
            lambda n: self._progress(n, self.answer_lines, "run answers checked"),
        )
        self.answers_checked = True
        return found

    def _check_layers(self) -> None:
        self.layer_keys: set[tuple[str, str]] = set()
        judges = {u for u, role in self.roles.items() if role in JUDGE_ROLES}
        for n, la in self.layers:
            add = partial(self.add, "layers.csv", n)
            key = (la["question_id"], la["assessor"])
            if la["question_id"] not in self.qids:
                add(gettext("unknown question %(qid)s") % {"qid": repr(la["question_id"])})
            elif la["assessor"] not in judges:
                add(
                    gettext("%(username)s is not an assessor or organizer of the collection")
                    % {"username": repr(la["assessor"])}
                )
            elif key in self.layer_keys:
                add(
                    gettext("a second layer of %(username)s for %(qid)s")
                    % {"username": repr(la["assessor"]), "qid": repr(la["question_id"])}
                )
            elif not _is_int(la["k"], 1, 99) or not _is_int(la["version"]):
                add(gettext("k (1 to 99) and version are numbers"))
            elif la["adjudicator"] and la["adjudicator"] not in judges:
                add(
                    gettext("adjudicator %(username)s is not an assessor or organizer")
                    % {"username": repr(la["adjudicator"])}
                )
            elif not all(_is_when(la[f]) for f in ("gold_at", "started_at", "done_at")):
                add(gettext("gold_at, started_at and done_at are times (or empty)"))
            else:
                try:
                    float(la["seconds"] or 0)
                except ValueError:
                    add(
                        gettext("seconds %(seconds)s is not a number")
                        % {"seconds": repr(la["seconds"])}
                    )
                    continue
                self.layer_keys.add(key)

    def _check_layer_judgments(self) -> None:
        seen = set()
        for n, j in self.layer_judgments:
            add = partial(self.add, "layer_judgments.csv", n)
            key = (j["question_id"], j["assessor"])
            if key not in self.layer_keys:
                add(
                    gettext("no layer of %(username)s for %(qid)s in layers.csv")
                    % {"username": repr(j["assessor"]), "qid": repr(j["question_id"])}
                )
            elif (
                not _is_int(j["string_id"], 1)
                or self.string_of.get(int(j["string_id"])) != j["question_id"]
            ):
                add(
                    gettext("string %(string)s is not a string of %(qid)s")
                    % {"string": repr(j["string_id"]), "qid": repr(j["question_id"])}
                )
            elif (key, j["string_id"]) in seen:
                add(
                    gettext("string %(string)s judged twice in one layer")
                    % {"string": j["string_id"]}
                )
            elif bool(j["synset_id"]) != bool(j["level"]) or (
                j["synset_id"]
                and (not _is_int(j["synset_id"], 1) or j["level"] not in self.level_codes)
            ):
                add(gettext("a synset number with a known level, or neither"))
            elif not j["judged_at"] or not _is_when(j["judged_at"]):
                add(gettext("judged_at %(value)s is not a time") % {"value": repr(j["judged_at"])})
            else:
                seen.add((key, j["string_id"]))

    # checking the audit trail
    def _check_events(self) -> None:
        self.event_ids: set[int] = set()
        self.dead_strings: dict[int, str | None] = {}  # ids no longer rows -> question
        self.dead_synsets: dict[int, str | None] = {}
        for n, e in self.events:
            add = partial(self.add, "events.jsonl", n)
            if problem := self._event_keys_problem(e):
                add(problem)
                continue
            if e["question_id"] is not None and e["question_id"] not in self.qids:
                add(gettext("unknown question %(qid)s") % {"qid": repr(e["question_id"])})
            if e["user"] is not None and not _is_username(e["user"]):
                add(
                    gettext("user %(username)s is not a valid username")
                    % {"username": repr(e["user"])}
                )
            if not isinstance(e["action"], str) or not 0 < len(e["action"]) <= 40:
                add(gettext("action must be 1 to 40 characters"))
            if not isinstance(e["before"], dict) or not isinstance(e["after"], dict):
                add(gettext("before and after must be JSON objects"))
                continue
            if not isinstance(e["created_at"], str) or not _is_when(e["created_at"]):
                add(
                    gettext("created_at %(value)s is not a time") % {"value": repr(e["created_at"])}
                )
            if self.version >= 2:
                for problem in self._event_references(e):
                    add(problem)
                if not _is_json_int(e["id"], 1) or e["id"] in self.event_ids:
                    add(gettext("id %(id)s is not a distinct number >= 1") % {"id": repr(e["id"])})
                else:
                    self.event_ids.add(e["id"])

    def _event_keys_problem(self, e: dict) -> str | None:
        """What is wrong with an event's keys (those of its version), or the layer it
        names; None when nothing is."""
        want = {"question_id", "user", "action", "before", "after", "created_at"}
        if self.version >= 2:
            want.add("id")
        if self.version >= 3:
            want.add("layer")
            if (
                e.get("layer") is not None
                and (e.get("question_id"), e["layer"]) not in self.layer_keys
            ):
                return gettext(
                    "names the layer of %(username)s, which layers.csv does not have"
                ) % {"username": repr(e["layer"])}
        if set(e) != want:
            return gettext("needs exactly %(keys)s") % {"keys": ", ".join(sorted(want))}
        return None

    def _event_references(self, e: dict):
        """The problems of the archive ids, level codes and usernames an event's snapshots
        name: a string or synset must be one of the event's question (a live one, or one
        no longer there that no other question's events name)."""
        qid = e["question_id"]
        for side in (e["before"], e["after"]):
            if "strings" not in side:  # not a snapshot (a bulk action's counts)
                side = {"undoes": side.get("undoes"), "run": side.get("run")}
            yield from self._snapshot_strings(qid, side.get("strings"))
            yield from self._snapshot_synsets(qid, side.get("synsets"))
            rows = side.get("rows") if e.get("layer") is not None else None
            yield from self._snapshot_rows(qid, rows)
            undoes = side.get("undoes")
            if undoes is not None and (not _is_json_int(undoes, 1) or undoes not in self.event_ids):
                yield gettext("undoes %(event)s, which is not an earlier event") % {
                    "event": repr(undoes)
                }
            if e["action"] in RUN_EVENTS and side.get("run") not in (None, *self.run_names):
                yield gettext("unknown run %(run)s") % {"run": repr(side.get("run"))}

    def _owned(self, kind: str, value, qid) -> str | None:
        """The problem of a string or synset id an event of question ``qid`` names: not an
        id, or one of another question (an id no longer a row belongs to the first
        question whose event names it)."""
        live, dead = (
            (self.string_of, self.dead_strings)
            if kind == "string"
            else (self.synset_of, self.dead_synsets)
        )
        if not _is_int(value, 1) or isinstance(value, bool):
            return (
                gettext("string id %(id)s is not a number >= 1")
                if kind == "string"
                else gettext("synset id %(id)s is not a number >= 1")
            ) % {"id": repr(value)}
        value = int(value)
        owner = live[value] if value in live else dead.setdefault(value, qid)
        if owner != qid:
            return (
                gettext("names string %(id)s of question %(owner)s, not of %(qid)s")
                if kind == "string"
                else gettext("names synset %(id)s of question %(owner)s, not of %(qid)s")
            ) % {"id": value, "owner": repr(owner), "qid": repr(qid)}
        return None

    def _snapshot_strings(self, qid, strings):
        """The problems of a snapshot's strings (id -> the string as it was, or None)."""
        if strings is not None and not isinstance(strings, dict):
            yield gettext("strings must be a JSON object")
            strings = {}
        for key, snap in (strings or {}).items():
            if problem := self._owned("string", key, qid):
                yield problem
            if snap is not None:
                yield from self._snapshot_string(qid, key, snap)

    def _snapshot_string(self, qid, key, snap):
        """The problems of one string as a snapshot recorded it."""
        if (
            not isinstance(snap, dict)
            or not isinstance(snap.get("text"), str)
            or not isinstance(snap.get("key"), str)
            or snap.get("source") not in Source.values
            or not _is_when(snap.get("judged_at"))
        ):
            yield gettext("string %(string)s: text, key, source and judged_at are needed") % {
                "string": key
            }
            return
        if snap.get("synset") is not None and (
            problem := self._owned("synset", snap["synset"], qid)
        ):
            yield problem
        if snap.get("level") is not None and snap["level"] not in self.level_codes:
            yield gettext("string %(string)s: unknown level %(level)s") % {
                "string": key,
                "level": repr(snap["level"]),
            }
        if snap.get("judged_by") is not None and not _is_username(snap["judged_by"]):
            yield gettext("string %(string)s: judged_by %(username)s is not a username") % {
                "string": key,
                "username": repr(snap["judged_by"]),
            }
        if not _is_text_list(snap.get("variants", [])):
            yield gettext("string %(string)s: variants must be a list of strings") % {"string": key}

    def _snapshot_synsets(self, qid, synsets):
        """The problems of a snapshot's synsets ([id, note, label] each)."""
        if synsets is not None and not isinstance(synsets, list):
            yield gettext("synsets must be a JSON list")
            synsets = []
        for row in synsets or []:
            if not isinstance(row, list) or len(row) not in (2, 3) or not _is_text_list(row[1:]):
                yield gettext("each synset must be [id, note, label]")
            elif problem := self._owned("synset", row[0], qid):
                yield problem

    def _snapshot_rows(self, qid, rows):
        """The problems of a layer event's rows (string id -> [synset, level, judged_at])."""
        if rows is not None and not isinstance(rows, dict):
            yield gettext("rows must be a JSON object")
            rows = {}
        for key, row in (rows or {}).items():
            if problem := self._owned("string", key, qid):
                yield problem
            elif row is not None and not (
                isinstance(row, list)
                and len(row) == 3
                and (row[0] is None or _is_json_int(row[0], 1))
                and (row[1] is None or row[1] in self.level_codes)
                and isinstance(row[2], str)
                and _is_when(row[2])
            ):
                yield gettext("row %(string)s: [synset, level, judged_at] expected") % {
                    "string": key
                }
