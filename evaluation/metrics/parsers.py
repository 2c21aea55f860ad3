"""Parsers for the file formats of docs/formats.md: the line and CSV readers every parser
shares, the questions CSV, the flat answer list and the runs (TREC and QA); the judgments
CSV and TREC qrels are read by ``judgment_parsers`` over the same line and CSV readers.

Each parser takes the file's bytes (or text) and its name, and returns plain data or
raises ``InputError`` listing every problem with its line number (nothing is returned on
error).  Files are UTF-8 with or without a BOM; LF, CRLF and a lone CR all end a line (every
reader counts lines the same way); blank lines are skipped; TREC files may hold ``#``
comment lines.  The ``*_rows`` readers return the rows they could read with their line
numbers and every problem, without raising, so that an importer can add its own checks and
report everything at once.  These line readers are the only readers of the questions,
answers and judgments files; large TREC and QA runs and qrels also have the optional C
reader (``fast.read_inputs``), which steps aside for anything irregular so that these
readers produce the error list.  No pandas: the command-line scorer starts without it.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np

from .arrays import factorize
from .csvio import restore
from .data import Ranking
from .errors import InputError, Issue, IssueList, _
from .sniff import _LINE_END, _POS_INT, Data, _is_number, _lines, detect_run_format
from .text_rules import (
    CONTROL_CHARACTERS,
    NUL_BYTE,
    control_issues,
    control_message,
    empty_key_message,
)

MAX_LINE = 65536  # characters; longer lines are refused
_LINE_END_B = re.compile(rb"\r\n|\r|\n")
MAX_RANK = 1_000_000_000  # a QA run's ranks are integers from 1 to this
# a run reader given ``progress`` calls it every this many lines: (lines read, lines, "lines")
PROGRESS_LINES = 5000
# ``progress(done, total, unit)``: how a long reader tells its caller how far it has come
ProgressFn = Callable[[int, int | None, str | None], None]


# -- decoding and line iteration ------------------------------------------------------------
def decode(data: Data, file: str) -> str:
    """Decode UTF-8 (BOM optional); raise InputError naming every undecodable line."""
    if isinstance(data, str):
        text = data.removeprefix("\ufeff")
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            issues = IssueList(file)
            for n, raw in enumerate(_LINE_END_B.split(data), start=1):
                try:
                    raw.decode("utf-8-sig" if n == 1 else "utf-8")
                except UnicodeDecodeError as e:
                    issues.add(
                        n,
                        _(
                            "not valid UTF-8 (byte 0x%(byte)s at column %(column)s); "
                            "save the file as UTF-8"
                        )
                        % {"byte": f"{raw[e.start]:02x}", "column": e.start + 1},
                    )
            issues.raise_if_any()
            raise  # pragma: no cover - some line must have failed
    return text


def _line_ok(issues: IssueList, n: int, line: str) -> bool:
    if (message := control_message(line)) is not None:
        issues.add(n, message)
        return False
    if len(line) > MAX_LINE:
        issues.add(
            n,
            _("line is %(length)s characters long (at most %(max)s)")
            % {"length": len(line), "max": MAX_LINE},
        )
        return False
    return True


# -- CSV files with a header ----------------------------------------------------------------
def _csv_rows(
    text: str, issues: IssueList, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Rows of a CSV file with a header naming at least ``required`` (any order, any case).
    Returns (header, [(line, {column: value})]); problems go to ``issues``.  A line with
    a NUL or too long is reported and read as if blank, so the other lines are checked.
    Each value has the product's formula escape undone (``csvio.restore``: a cell of single
    quotes then a formula character loses one quote), so the product's exports read back
    unchanged.  (Radon E: the header and row checks stay inline in the one loop over the
    reader, because every row of every questions, answers, judgments and run file passes
    through it, and a helper call per record would cost on the large run files that
    bench/qa_score_bench.py reads.)"""
    lines = _LINE_END.split(text)
    bad = [n for n, line in enumerate(lines, start=1) if not _line_ok(issues, n, line)]
    if bad:
        for n in bad:
            lines[n - 1] = ""
        text = "\n".join(lines)
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    plain = "'" not in text  # no cell has a formula escape to undo
    header: list[str] = []
    width = -1
    rows: list[tuple[int, dict[str, str]]] = []
    while True:
        n = reader.line_num + 1  # a record's line is the one it starts on
        try:
            record = next(reader)
        except StopIteration:
            break
        except csv.Error as e:  # the reader goes on at the next line
            issues.add(
                n,
                (
                    _(
                        "malformed CSV: %(error)s (in the record that starts on this line "
                        "and ends on line %(end)s)"
                    )
                    if reader.line_num > n
                    else _("malformed CSV: %(error)s")
                )
                % {"error": e, "end": reader.line_num},
            )
            continue
        if not record or (not record[0].strip() and all(not c.strip() for c in record)):
            continue
        if not header:
            header = [c.strip().lower() for c in record]
            missing = [c for c in required if c not in header]
            if missing:
                issues.add(
                    n,
                    (
                        _(
                            "header must name the columns %(required)s (optional: "
                            "%(optional)s); missing %(missing)s in %(header)s"
                        )
                        if optional
                        else _(
                            "header must name the columns %(required)s; missing %(missing)s "
                            "in %(header)s"
                        )
                    )
                    % {
                        "required": ",".join(required),
                        "optional": ",".join(optional),
                        "missing": ", ".join(missing),
                        "header": repr(",".join(record)),
                    },
                )
                return header, []
            dups = {c for c in header if c and header.count(c) > 1}
            if dups:
                issues.add(
                    n,
                    _("header names column(s) %(columns)s twice")
                    % {"columns": ", ".join(sorted(dups))},
                )
                return header, []
            width = len(header)
            continue
        if len(record) > len(header) and any(c.strip() for c in record[len(header) :]):
            issues.add(n, _columns_message(len(header), len(record)))
            continue
        if len(record) < len(header):
            needed = max(header.index(c) for c in required) + 1
            if len(record) < needed:
                issues.add(n, _columns_message(len(header), len(record)))
                continue
        if len(record) == width:  # the usual row: no cell to add, no loop in Python
            rows.append(
                (n, dict(zip(header, record if plain else map(restore, record), strict=False)))
            )
            continue
        rows.append(
            (n, {h: (restore(record[i]) if i < len(record) else "") for i, h in enumerate(header)})
        )
    if not header and not issues:
        issues.add(
            1, _("empty file: expected a header %(header)s") % {"header": ",".join(required)}
        )
    return header, rows


def _columns_message(expected: int, found: int) -> str:
    return _("expected %(expected)s columns as in the header, found %(found)s") % {
        "expected": expected,
        "found": found,
    }


@dataclass(frozen=True)
class QuestionRow:
    line: int
    question_id: str
    text: str
    extra: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class AnswerRow:
    line: int
    question_id: str
    answer: str


def _decoded(data: Data, filename: str) -> tuple[str | None, list[Issue]]:
    """The text of ``data``, or None and the undecodable lines."""
    try:
        return decode(data, filename), []
    except InputError as e:
        return None, e.issues


def _raise_or(rows_and_issues):
    rows, issues = rows_and_issues
    if issues:
        raise InputError(issues)
    return rows


def parse_questions_csv(data: Data, *, filename: str = "questions.csv") -> list[QuestionRow]:
    """Questions CSV: header ``question_id,question`` (+ optional columns, kept in extra)."""
    return _raise_or(question_rows(data, filename=filename))


def question_rows(
    data: Data, *, filename: str = "questions.csv"
) -> tuple[list[QuestionRow], list[Issue]]:
    """The good rows of a questions CSV and every problem of the file (never raises)."""
    text, bad = _decoded(data, filename)
    if text is None:
        return [], bad
    issues = IssueList(filename)
    header, rows = _csv_rows(text, issues, ("question_id", "question"))
    out: list[QuestionRow] = []
    seen: dict[str, int] = {}
    for n, row in rows:
        qid, text = row["question_id"].strip(), row["question"].strip()
        if not qid:
            issues.add(n, _("empty question_id"))
            continue
        if not text:
            issues.add(n, _("question %(qid)s has an empty question text") % {"qid": repr(qid)})
        if qid in seen:
            issues.add(
                n,
                _("question_id %(qid)s repeats line %(line)s")
                % {"qid": repr(qid), "line": seen[qid]},
            )
            continue
        seen[qid] = n
        extra = {k: v for k, v in row.items() if k not in ("question_id", "question") and k}
        out.append(QuestionRow(n, qid, text, extra))
    if header and not rows and not issues:
        issues.add(None, _("no questions in the file"))
    return out, issues.all()


def parse_flat_answers(data: Data, *, filename: str = "answers.csv") -> list[AnswerRow]:
    """Flat answer list (QAC1 style): header ``question_id,answer``, one answer per row."""
    return _raise_or(flat_answer_rows(data, filename=filename))


def flat_answer_rows(
    data: Data, *, filename: str = "answers.csv"
) -> tuple[list[AnswerRow], list[Issue]]:
    """The good rows of a flat answer list and every problem of the file (never raises)."""
    text, bad = _decoded(data, filename)
    if text is None:
        return [], bad
    issues = IssueList(filename)
    header, rows = _csv_rows(text, issues, ("question_id", "answer"))
    out = []
    for n, row in rows:
        qid, answer = row["question_id"].strip(), row["answer"].strip()
        if not qid:
            issues.add(n, _("empty question_id"))
        elif not answer:
            issues.add(n, _("empty answer for question %(qid)s") % {"qid": repr(qid)})
        else:
            out.append(AnswerRow(n, qid, answer))
    if header and not rows and not issues:
        issues.add(None, _("no answers in the file"))
    return out, issues.all()


# -- TREC files (runs; qrels in ``judgment_parsers``) ---------------------------------------
def _fields(text: str, issues: IssueList) -> Iterator[tuple[int, list[str]]]:
    """(line number, whitespace-separated fields) of a TREC file's lines that are not
    blank or ``#`` comments."""
    for n, line in _lines(text):
        if not _line_ok(issues, n, line):
            continue
        fields = line.split()
        if fields and not fields[0].startswith("#"):
            yield n, fields


# -- runs -----------------------------------------------------------------------------------
def parse_run(
    data: Data, *, filename: str = "run", name: str | None = None, fmt: str | None = None
) -> Ranking:
    """Parse a run in either format (``fmt`` = qa, trec, or None to detect it)."""
    fmt = fmt or detect_run_format(data)
    if fmt == "trec":
        return parse_trec_run(data, filename=filename, name=name)
    if fmt == "qa":
        return parse_qa_run(data, filename=filename, name=name)
    raise ValueError(f"unknown run format {fmt!r}")


@dataclass(frozen=True, slots=True)
class RunRow:
    """One answer of a run file as the line reader reads it."""

    line: int
    question_id: str
    answer: str  # a TREC run's docno
    rank: int | None  # QA runs; a TREC run is ordered by its scores
    score: float  # NaN when a QA run gives none
    tag: str = ""  # TREC runs


def run_rows(
    data: Data, *, filename: str = "run", fmt: str | None = None, progress: ProgressFn | None = None
) -> tuple[list[RunRow], list[Issue]]:
    """The good rows of a run file in file order, read line by line, and every problem of
    the file (never raises).  The parsers' fast readers accept exactly the files this
    reader accepts and give the same answers.  ``progress``, if given, is called with
    (lines read, lines in the file, "lines") every PROGRESS_LINES lines and at the end."""
    fmt = fmt or detect_run_format(data)
    if fmt not in ("qa", "trec"):
        raise ValueError(f"unknown run format {fmt!r}")
    text, bad = _decoded(data, filename)
    if text is None:
        return [], bad
    issues = IssueList(filename)
    rows = _trec_rows(text, issues, progress) if fmt == "trec" else _qa_rows(text, issues, progress)
    if not rows and not issues:
        issues.add(None, _("no answers in the run"))
    return rows, issues.all()


def rows_ranking(
    rows: list[RunRow], *, fmt: str, filename: str = "run", name: str | None = None
) -> Ranking:
    """The Ranking of a run's good rows (``run_rows`` without problems), in the order the
    parsers give: a QA run by question and rank, a TREC run as trec_eval orders it."""
    if fmt == "trec":
        qid = np.asarray([r.question_id for r in rows], dtype=object)
        docno = np.asarray([r.answer for r in rows], dtype=object)
        score = np.asarray([r.score for r in rows], dtype=float)
        tag = rows[0].tag if rows else ""
        order = trec_order(factorize(qid)[0], score, docno)
        return Ranking(
            name or tag or _default_name(filename), qid[order], docno[order], score[order]
        )
    if fmt != "qa":
        raise ValueError(f"unknown run format {fmt!r}")
    return _qa_ranking(
        name or _default_name(filename),
        np.asarray([r.question_id for r in rows], dtype=object),
        np.asarray([r.rank for r in rows], dtype=np.int64),
        np.asarray([r.answer for r in rows], dtype=object),
        np.asarray([r.score for r in rows], dtype=float),
    )


def run_answer_lines(data: Data, *, fmt: str, more_than: int = 0) -> int | None:
    """How many records of a run file are answers or problems: every line that is not
    blank (nor, in a TREC run, a ``#`` comment; in a CSV run, the header), each record of
    a CSV run that is not blank.  ``run_rows`` reads each of them as an answer or reports
    it as a problem, so a file with more than a collection's questions x L' of them is
    refused whatever they hold; this count costs a fraction of reading them.  Returns 0
    without counting when the file has at most ``more_than`` lines in all, None when it
    is not UTF-8 or not CSV that can be counted (``run_rows`` then says why)."""
    if isinstance(data, bytes):
        if data.count(b"\n") + data.count(b"\r") < more_than:
            return 0
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            return None
    else:
        text = data.removeprefix("\ufeff")
        if text.count("\n") + text.count("\r") < more_than:
            return 0
    if fmt == "trec":
        return sum(1 for line in _LINE_END.split(text) if line.strip()[:1] not in ("", "#"))
    if fmt != "qa":
        raise ValueError(f"unknown run format {fmt!r}")
    if not _csv_header(text):
        return sum(1 for line in _LINE_END.split(text) if line and not line.isspace())
    try:
        records = sum(
            1 for record in csv.reader(io.StringIO(text, newline="")) if any(map(str.strip, record))
        )
    except csv.Error:
        return None
    return max(records - 1, 0)  # the header


def _default_name(filename: str) -> str:
    base = filename.replace("\\", "/").rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[0] if "." in base else base


def parse_trec_run(data: Data, *, filename: str = "run", name: str | None = None) -> Ranking:
    """TREC run ``qid Q0 docno rank score tag``, ordered as trec_eval orders it: score
    descending, then docno descending (as in trec_eval, the rank column is not used and
    text after the sixth field is ignored).  A docno twice in
    one topic is an error.  The run is named ``name``, else its tag, else the file name."""
    rows = _raise_or(run_rows(data, filename=filename, fmt="trec"))
    return rows_ranking(rows, fmt="trec", filename=filename, name=name)


def trec_order(qcode: np.ndarray, score: np.ndarray, docno: np.ndarray) -> np.ndarray:
    """trec_eval's order: by topic (in file order), score descending, then docno descending.
    Only rows whose score ties with a neighbour are ordered by docno (strings are slow)."""
    if (
        len(qcode) > 1
        and (qcode[1:] >= qcode[:-1]).all()
        and ((qcode[1:] != qcode[:-1]) | (score[1:] <= score[:-1])).all()
    ):
        order = np.arange(len(qcode))  # already in order (the usual case)
    else:
        order = np.lexsort((-score, qcode))
    qs, ss = qcode[order], score[order]
    tie = np.r_[False, (qs[1:] == qs[:-1]) & (ss[1:] == ss[:-1])]
    if tie.any():
        in_block = tie | np.r_[tie[1:], False]
        idx = np.flatnonzero(in_block)
        block = np.cumsum(in_block[idx] & ~tie[idx])
        dcode = np.unique(docno[order[idx]], return_inverse=True)[1].ravel()
        order[idx] = order[idx][np.lexsort((-dcode, block))]
    return order


def _reporting(items, text: str, progress: ProgressFn | None):
    """``items`` (pairs whose first is a line number of ``text``), with ``progress`` told
    every PROGRESS_LINES lines how many of the text's lines were read (and at the end)."""
    if progress is None:
        yield from items
        return
    ends = len(_LINE_END.findall(text))
    total = ends if text.endswith(("\n", "\r")) else ends + 1
    progress(0, total, "lines")
    mark, told = PROGRESS_LINES, 0
    for item in items:
        if item[0] >= mark:
            told = min(item[0], total)
            progress(told, total, "lines")
            mark = item[0] + PROGRESS_LINES
        yield item
    if told != total:
        progress(total, total, "lines")


def _trec_rows(text: str, issues: IssueList, progress: ProgressFn | None = None) -> list[RunRow]:
    rows = []
    seen: dict[tuple[str, str], int] = {}
    for n, fields in _reporting(_fields(text, issues), text, progress):
        if len(fields) < 6:  # like trec_eval, text after the sixth field is ignored
            issues.add(
                n,
                _("expected 6 fields 'qid Q0 docno rank score tag', found %(found)s")
                % {"found": len(fields)},
            )
            continue
        q, d, score, t = fields[0], fields[2], fields[4], fields[5]
        if not _is_number(score):
            issues.add(n, _("score %(score)s is not a number") % {"score": repr(score)})
            continue
        if (q, d) in seen:
            issues.add(
                n,
                _("document %(doc)s appears twice for topic %(topic)s (line %(line)s)")
                % {"doc": repr(d), "topic": repr(q), "line": seen[q, d]},
            )
            continue
        seen[q, d] = n
        rows.append(RunRow(n, q, d, None, float(score), t))
    return rows


def parse_qa_run(data: Data, *, filename: str = "run.tsv", name: str | None = None) -> Ranking:
    """QA run: TSV ``question_id<TAB>rank<TAB>answer[<TAB>score]`` without a header, or
    CSV with the header ``question_id,rank,answer[,score]``.  Ranks are integers from 1
    to MAX_RANK and order the answers; a (question, rank) pair twice is an error."""
    rows = _raise_or(run_rows(data, filename=filename, fmt="qa"))
    return rows_ranking(rows, fmt="qa", filename=filename, name=name)


def _csv_header(text: str) -> bool:
    """A QA run whose first line that is not blank starts with ``question_id`` is CSV."""
    first = next((line for _, line in _lines(text[:65536]) if line.strip()), "")
    return first.strip().lower().startswith("question_id")


def _qa_rows(text: str, issues: IssueList, progress: ProgressFn | None = None) -> list[RunRow]:
    rows: list[RunRow] = []
    seen: dict[tuple[str, int], int] = {}
    if _csv_header(text):
        _header, records = _csv_rows(text, issues, ("question_id", "rank", "answer"), ("score",))
        for n, rec in _reporting(records, text, progress):
            fields = [rec["question_id"], rec["rank"], rec["answer"]]
            if rec.get("score", "").strip():
                fields.append(rec["score"])
            _check_qa_fields(issues, n, fields, seen, rows)
        return rows
    for n, line in _reporting(_lines(text), text, progress):
        if not _line_ok(issues, n, line):
            continue
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) not in (3, 4):
            issues.add(
                n,
                _(
                    "expected 3 or 4 tab-separated fields 'question_id<TAB>rank<TAB>answer"
                    "[<TAB>score]', found %(found)s"
                )
                % {"found": len(fields)},
            )
            continue
        _check_qa_fields(issues, n, fields, seen, rows)
    return rows


def _check_qa_fields(
    issues: IssueList,
    n: int,
    fields: list[str],
    seen: dict[tuple[str, int], int],
    rows: list[RunRow],
) -> None:
    qid, rank, answer = (f.strip() for f in fields[:3])
    score = fields[3].strip() if len(fields) > 3 else ""
    if not qid:
        issues.add(n, _("empty question_id"))
        return
    if not _POS_INT.fullmatch(rank):
        issues.add(n, _("rank %(rank)s is not a positive integer") % {"rank": repr(rank)})
        return
    digits = rank.lstrip("+0")
    if len(digits) > len(str(MAX_RANK)) or int(digits) > MAX_RANK:
        shown = rank if len(rank) <= 30 else rank[:30] + "..."
        issues.add(
            n, _("rank %(rank)s is too large (at most %(max)s)") % {"rank": shown, "max": MAX_RANK}
        )
        return
    r = int(digits)
    if not answer:
        issues.add(
            n,
            _("empty answer for question %(qid)s at rank %(rank)s") % {"qid": repr(qid), "rank": r},
        )
        return
    if score and not _is_number(score):
        issues.add(n, _("score %(score)s is not a number") % {"score": repr(score)})
        return
    if (qid, r) in seen:
        issues.add(
            n,
            _("question %(qid)s has rank %(rank)s twice (line %(line)s)")
            % {"qid": repr(qid), "rank": r, "line": seen[qid, r]},
        )
        return
    seen[qid, r] = n
    rows.append(RunRow(n, qid, answer, r, float(score) if score else math.nan))


def _qa_ranking(
    name: str, qid: np.ndarray, rank: np.ndarray, answer: np.ndarray, score: np.ndarray
) -> Ranking:
    order = np.lexsort((rank, factorize(qid)[0]))
    return Ranking(name, qid[order], answer[order], score[order])


__all__ = [
    "CONTROL_CHARACTERS",
    "MAX_RANK",
    "NUL_BYTE",
    "AnswerRow",
    "InputError",
    "QuestionRow",
    "RunRow",
    "control_issues",
    "control_message",
    "decode",
    "detect_run_format",
    "empty_key_message",
    "flat_answer_rows",
    "parse_flat_answers",
    "parse_qa_run",
    "parse_run",
    "parse_trec_run",
    "question_rows",
    "rows_ranking",
    "run_answer_lines",
    "run_rows",
]
