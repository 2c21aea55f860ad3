"""``run_answers.csv``, the largest member by far (2 million rows at size M), read as a
stream and never held: ``check_answers`` reads it to list every problem (for an archive
refused anyway, or when the write found one), ``answer_rows`` reads it once more for the
write, giving each row as the database stores it and stopping at the first problem.

Memory stays bounded whatever the member's size: a row is dropped once checked, and the
check for a rank given twice keeps 8 bytes a row (a sorted array of packed keys), within
``ARCHIVE_MAX_ANSWERS`` rows."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from django.utils.translation import gettext

from evaluation.metrics import Issue
from evaluation.metrics.csvio import CsvFormatError, read_csv_lines
from evaluation.metrics.errors import MAX_ISSUES

from .format import max_answers
from .values import _INT_MAX, _control_text, _is_int

MEMBER = "run_answers.csv"
# rows checked together for ranks given twice (one sort and merge per block)
BLOCK = 20_000


@dataclass
class Scope:
    """What a run answer may name: the archive's run names and question ids, by their
    position (``run_index``, ``question_index``)."""

    runs: dict[str, int]
    questions: dict[str, int]


class AnswersProblem(Exception):
    """``answer_rows`` met a row it refuses: the caller lists every problem with
    ``check_answers``."""


def _records(open_member, want: list[str]):
    """(header indexes of ``want``, the records with their line numbers), or raise
    CsvFormatError / a ValueError naming the columns."""
    f = open_member(MEMBER)
    _, header, records = read_csv_lines(f)
    if sorted(header) != sorted(want):
        for _ in records:  # a member that is not CSV says so first
            pass
        raise _Columns(header)
    return [header.index(c) for c in want], enumerate(records, start=2), f


class _Columns(Exception):
    def __init__(self, header: list[str]):
        self.header = header


def _rank(text: str) -> int | None:
    """The rank of a cell (a whole number >= 1, as ``_is_int`` reads it), else None."""
    if text.isascii() and text.isdigit():
        n = int(text)
        return n if 1 <= n <= _INT_MAX else None
    return int(text.strip()) if _is_int(text, 1) else None


def _malformed(record: list[str], width: int) -> str | None:
    """Why a record has no fields to check (the wrong number, or a control character in
    one), or None."""
    if len(record) != width:
        return gettext("%(width)s fields expected") % {"width": width}
    return next((m for v in record if (m := _control_text(v))), None)


def columns_message(header: list[str], want: tuple[str, ...] | list[str]) -> str:
    """A CSV member whose header is not the expected one."""
    return gettext("columns %(header)s; expected %(want)s") % {
        "header": ",".join(header),
        "want": ",".join(want),
    }


def _field_problems(record: list[str], at: list[int], scope: Scope) -> list[str]:
    """Every problem of the fields of a well-formed record (empty: the row is good)."""
    run, qid, rank, score = record[at[0]], record[at[1]], record[at[2]], record[at[5]]
    problems = []
    if run not in scope.runs:
        problems.append(gettext("unknown run %(run)s") % {"run": repr(run)})
    if qid not in scope.questions:
        problems.append(gettext("unknown question %(qid)s") % {"qid": repr(qid)})
    if _rank(rank) is None:
        problems.append(gettext("rank %(rank)s is not a number >= 1") % {"rank": repr(rank)})
    if score:
        try:
            float(score)
        except ValueError:
            problems.append(gettext("score %(score)s is not a number") % {"score": repr(score)})
    return problems


class _Seen:
    """The (run, question, rank) keys met so far, as one sorted array of packed integers
    (structured pairs when runs x questions is too large to pack): 8 bytes a row."""

    def __init__(self, scope: Scope):
        self.nq = max(len(scope.questions), 1)
        self.packed = max(len(scope.runs), 1) * self.nq < 2**32
        dtype = np.int64 if self.packed else np.dtype([("p", "<i8"), ("r", "<i8")])
        self.keys = np.empty(0, dtype=dtype)

    def block(self, pairs: list[int], ranks: list[int]) -> np.ndarray:
        """Whether each key of a block (in row order) was met before, in an earlier block
        or earlier in this one; the block's keys join those met."""
        p = np.asarray(pairs, dtype=np.int64)
        r = np.asarray(ranks, dtype=np.int64)
        if self.packed:
            keys = (p << 31) | r
        else:
            keys = np.empty(len(p), dtype=self.keys.dtype)
            keys["p"], keys["r"] = p, r
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        again = np.zeros(len(keys), dtype=bool)
        # a key equal to the one before it in sorted order is a later row's (stable sort)
        again[order[1:]] = ordered[1:] == ordered[:-1]
        if len(self.keys):
            at = np.minimum(np.searchsorted(self.keys, keys), len(self.keys) - 1)
            again |= self.keys[at] == keys
        self.keys = np.sort(np.concatenate([self.keys, ordered]), kind="stable")
        return again


def check_answers(
    open_member, want: list[str], scope: Scope, where: str, progress: Callable[[int], None]
) -> list[Issue]:
    """Every problem of run_answers.csv, in line order (at most MAX_ISSUES: reading stops
    there), each with its line; more rows than ``max_answers`` are refused."""
    try:
        at, records, f = _records(open_member, want)
    except _Columns as e:
        return [Issue(where, 1, columns_message(e.header, want))]
    except CsvFormatError as e:
        return [Issue(where, None, gettext("not CSV: %(error)s") % {"error": e})]
    block = _Block(scope, where)
    limit, width = max_answers(), len(want)
    try:
        with f:
            for n, record in records:
                if n - 1 > limit:
                    block.issues.append(
                        Issue(
                            where,
                            n,
                            gettext("more than %(limit)s run answers (ARCHIVE_MAX_ANSWERS)")
                            % {"limit": limit},
                        )
                    )
                    break
                block.row(n, record, width, at)
                if block.full:
                    block.close()
                    progress(n - 1)
                    if len(block.issues) >= MAX_ISSUES:
                        break
    except CsvFormatError as e:
        return [Issue(where, None, gettext("not CSV: %(error)s") % {"error": e})]
    block.close()
    return block.issues[:MAX_ISSUES]


class _Block:
    """The problems found so far, and the keys of the rows read since the last check for
    a rank given twice (a block of ``BLOCK`` rows is checked at once)."""

    def __init__(self, scope: Scope, where: str):
        self.scope, self.where = scope, where
        self.seen = _Seen(scope)
        self.issues: list[Issue] = []
        self._start()

    def _start(self) -> None:
        self.found: list[Issue] = []
        self.lines: list[int] = []
        self.pairs: list[int] = []
        self.ranks: list[int] = []
        self.shown: list[tuple[str, str, str]] = []

    @property
    def full(self) -> bool:
        return len(self.lines) >= BLOCK

    def row(self, n: int, record: list[str], width: int, at: list[int]) -> None:
        if malformed := _malformed(record, width):
            self.found.append(Issue(self.where, n, malformed))
            return
        self.found += [Issue(self.where, n, p) for p in _field_problems(record, at, self.scope)]
        run, qid, rank = record[at[0]], record[at[1]], _rank(record[at[2]])
        runs, questions = self.scope.runs, self.scope.questions
        if rank is not None and run in runs and qid in questions:
            self.lines.append(n)
            self.pairs.append(runs[run] * self.seen.nq + questions[qid])
            self.ranks.append(rank)
            self.shown.append((record[at[2]], run, qid))

    def close(self) -> None:
        """Check the block's keys against each other and every key before; its problems
        join ``issues`` in line order."""
        if self.lines:
            again = self.seen.block(self.pairs, self.ranks)
            self.found += [
                Issue(
                    self.where,
                    self.lines[i],
                    gettext("rank %(rank)s of %(run)s on %(qid)s appears twice")
                    % {"rank": rank, "run": repr(run), "qid": repr(qid)},
                )
                for i in np.flatnonzero(again).tolist()
                for rank, run, qid in [self.shown[i]]
            ]
        self.found.sort(key=lambda issue: issue.line)
        self.issues += self.found
        self._start()


def answer_rows(
    open_member,
    want: list[str],
    scope: Scope,
    run_ids: list[int],
    question_ids: list[int],
) -> Iterator[tuple]:
    """The rows of run_answers.csv as the database stores them (run id, question id, rank,
    text, key, score), checked one by one; ``AnswersProblem`` at the first row refused
    (and for more than ``max_answers`` rows).  A rank given twice is left to the
    database's unique constraint (the caller then lists every problem)."""
    try:
        at, records, f = _records(open_member, want)
    except (_Columns, CsvFormatError) as e:
        raise AnswersProblem() from e
    i_run, i_q, i_rank, i_text, i_key, i_score = at
    runs, questions, width, limit = scope.runs, scope.questions, len(want), max_answers()
    try:
        with f:
            for n, record in records:
                if n - 1 > limit or len(record) != width:
                    raise AnswersProblem()
                run, qid = runs.get(record[i_run]), questions.get(record[i_q])
                rank, text, key, score = (
                    _rank(record[i_rank]),
                    record[i_text],
                    record[i_key],
                    record[i_score],
                )
                if run is None or qid is None or rank is None or _control_text(text + key + score):
                    raise AnswersProblem()
                try:
                    value = float(score) if score else None
                except ValueError:
                    raise AnswersProblem() from None
                yield run_ids[run], question_ids[qid], rank, text, key, value
    except CsvFormatError as e:
        raise AnswersProblem() from e
