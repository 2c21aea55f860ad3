"""Readers of judgments: the judgments CSV (docs/formats.md) and TREC qrels.

Like the other parsers (``parsers``, whose line and CSV readers they share), each takes
the file's bytes (or text) and its name, and returns ``Judgments`` or raises
``InputError`` listing every problem with its line number; ``judgment_rows`` returns the
rows it could read and every problem without raising, for the importer's own checks.
Large qrels also have the optional C reader (``fast.read_inputs``), which builds its
``Judgments`` with ``qrels_judgments``."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from itertools import repeat

import numpy as np

from .arrays import Index, factorize
from .data import DEFAULT_LEVELS, ID_MATCH, Judgments
from .errors import InputError, Issue, IssueList, _, merge_issues
from .normalize import normalize_many
from .parsers import MAX_LINE, _csv_rows, _decoded, _fields, _raise_or, decode
from .sniff import _INT, Data
from .text_rules import CONTROL_CHARACTERS, empty_key_message


@dataclass(frozen=True)
class JudgmentRow:
    line: int
    question_id: str
    synset_id: str
    answer: str
    level: str


def read_judgment_rows(
    data: Data, *, filename: str = "judgments.csv", levels: tuple[str, ...] = DEFAULT_LEVELS
) -> list[JudgmentRow]:
    """Rows of a judgments CSV (``question_id,synset_id,answer,level``), each checked on
    its own: ids and answer present, synset and level both set or both empty, level known.
    Cross-row checks (a string in two synsets) happen when Judgments are built."""
    return _raise_or(judgment_rows(data, filename=filename, levels=levels))


def judgment_rows(
    data: Data, *, filename: str = "judgments.csv", levels: tuple[str, ...] = DEFAULT_LEVELS
) -> tuple[list[JudgmentRow], list[Issue]]:
    """The good rows of a judgments CSV and every problem of the file (never raises)."""
    text, bad = _decoded(data, filename)
    if text is None:
        return [], bad
    issues = IssueList(filename)
    header, rows = _csv_rows(text, issues, ("question_id", "synset_id", "answer", "level"))
    known = set(levels)
    out = []
    for n, row in rows:
        qid = row["question_id"].strip()
        syn = row["synset_id"].strip()
        answer = row["answer"].strip()
        level = row["level"].strip()
        if not qid:
            issues.add(n, _("empty question_id"))
            continue
        if not answer:
            issues.add(n, _("empty answer for question %(qid)s") % {"qid": repr(qid)})
            continue
        if bool(syn) != bool(level):
            issues.add(
                n,
                _(
                    "answer %(answer)s: synset_id and level must both be set (a correct "
                    "answer) or both be empty (judged incorrect)"
                )
                % {"answer": repr(answer)},
            )
            continue
        if level and level not in known:
            issues.add(n, unknown_level_message(level, levels))
            continue
        out.append(JudgmentRow(n, qid, syn, answer, level))
    if header and not rows and not issues:
        issues.add(None, _("no judgments in the file"))
    return out, issues.all()


def unknown_level_message(level: str, levels: Sequence[str]) -> str:
    return _("unknown level %(level)s (expected one of %(levels)s)") % {
        "level": repr(level),
        "levels": ", ".join(levels),
    }


_JUDGMENT_COLUMNS = ("question_id", "synset_id", "answer", "level")
# what str.strip() strips (every whitespace character), and NUL
_SPACE_OR_NUL = "".join(c for c in map(chr, range(0x3001)) if c.isspace()) + "\x00"


def _plain_judgments(
    text: str, levels: tuple[str, ...]
) -> tuple[list[str], list[str], list[str], list[str]] | None:
    """The (stripped) question ids, synset ids, answers and levels of a judgments CSV in
    the plain form most files have -- a header on line 1, then one good row per line, no
    quotes, no cell that starts with a quote (a formula escape), no blank lines -- read
    with whole-text and whole-column operations; None for any other file
    (``judgment_rows`` reads it and explains its problems).  Rows are on lines 2, 3, ...
    (Radon D: a chain of early refusals, each one test over the whole text or a whole
    column, kept whole because it is the fast path of every judgments file: split, each step
    would only hand the same text, cells and columns to the next.)"""
    if '"' in text or "\r" in text or CONTROL_CHARACTERS.search(text):
        return None
    if text.startswith("'") or ",'" in text or "\n'" in text:  # a cell to ``restore``
        return None
    head, _sep, body = text.partition("\n")
    body = body.removesuffix("\n")
    lines = body.split("\n")
    if not body or max(len(head), *map(len, lines)) > MAX_LINE:
        return None
    header = [c.strip().lower() for c in head.split(",")]
    named = [c for c in header if c]
    if len(set(named)) != len(named) or not set(_JUDGMENT_COLUMNS) <= set(header):
        return None
    width = len(header)
    # every cell in one split; a NUL marks each line's first cell: the cells are a grid of
    # ``width`` columns exactly when there is one mark at the start of every row
    cells = body.replace("\n", ",\x00").split(",")
    if (
        len(cells) != width * len(lines)
        or sum(map(str.startswith, cells[width::width], repeat("\x00"))) != len(lines) - 1
    ):
        return None
    qids, syns, answers, levels_of = (
        list(map(str.strip, cells[header.index(name) :: width], repeat(_SPACE_OR_NUL)))
        for name in _JUDGMENT_COLUMNS
    )
    known = set(levels) | {""}
    if not (
        all(qids)
        and all(answers)
        and all(map(operator.eq, map(bool, syns), map(bool, levels_of)))
        and known.issuperset(levels_of)
    ):
        return None
    return qids, syns, answers, levels_of


def _empty_keys(
    file: str, match: str, qids: list[str], answers: list[str], lines: Sequence[int]
) -> list[Issue]:
    """``empty_key_message`` for each row whose answer keys to ""; called when a built
    Judgments holds an empty key (rare), so the keys are computed again only then."""
    keys = normalize_many(answers, match)
    return [
        Issue(file, line, empty_key_message(qid, answer, match))
        for qid, answer, key, line in zip(qids, answers, keys, lines, strict=True)
        if not key
    ]


def _has_empty_key(judgments: Judgments) -> bool:
    return judgments.match != ID_MATCH and bool((judgments.str_key == "").any())


def parse_judgments_csv(
    data: Data,
    *,
    filename: str = "judgments.csv",
    levels: tuple[str, ...] = DEFAULT_LEVELS,
    gains: tuple[float, ...] | None = None,
    match: str = "normalized",
) -> Judgments:
    """Judgments CSV -> Judgments.  A string in two synsets of a question, and an answer
    whose matching key is empty (``empty_key_message``), are errors."""
    text, _bad = _decoded(data, filename)
    plain = _plain_judgments(text, levels) if text is not None else None
    issues: list[Issue] = []
    if plain is not None:  # the common file: every row good, no quotes
        qids, syns, answers, levels_of = plain
        lines: Sequence[int] = range(2, len(qids) + 2)
    else:
        rows, issues = judgment_rows(data, filename=filename, levels=levels)
        qids, answers = [r.question_id for r in rows], [r.answer for r in rows]
        syns, levels_of = [r.synset_id for r in rows], [r.level for r in rows]
        lines = [r.line for r in rows]
    try:  # the good rows' cross-row checks, reported with the rows' own errors
        judgments = Judgments.build(
            qids=qids,
            synsets=[s or None for s in syns],
            texts=answers,
            levels_of=[x or None for x in levels_of],
            levels=levels,
            gains=gains,
            match=match,
            nil_rule=True,
            lines=lines,
            file=filename,
        )
    except InputError as e:
        empty = _empty_keys(filename, match, qids, answers, lines)
        raise InputError(merge_issues(filename, issues, e.issues, empty)) from None
    if _has_empty_key(judgments):
        issues = merge_issues(filename, issues, _empty_keys(filename, match, qids, answers, lines))
    if issues:
        raise InputError(issues)
    return judgments


# -- TREC qrels -----------------------------------------------------------------------------
def parse_qrels(data: Data, *, filename: str = "qrels") -> Judgments:
    """TREC qrels ``qid 0 docno grade``: each docno with grade > 0 is its own synset with
    the grade as its level and gain (as in trec_eval); grade <= 0 is judged incorrect."""
    qid_l, doc_l, grade_l = _slow_qrels(decode(data, filename), filename)
    docno = np.empty(len(doc_l), dtype=object)
    docno[:] = doc_l
    qcode, quniq = factorize(np.asarray(qid_l, dtype=object))
    return qrels_judgments(qcode, quniq, docno, np.asarray(grade_l, dtype=np.int64))


def qrels_judgments(
    qcode: np.ndarray,
    questions: np.ndarray,
    docno: np.ndarray | Callable[[], np.ndarray],
    grade: np.ndarray,
    **extra,
) -> Judgments:
    """Judgments from qrels columns (no (topic, docno) twice): every docno with grade > 0
    is its own synset; levels are the positive grades, highest first, each its own gain.
    ``docno`` may be a function giving the strings when they are first needed."""
    positive = np.unique(grade[grade > 0])[::-1]
    levels = tuple(str(int(g)) for g in positive) or ("1",)
    gains = tuple(float(g) for g in positive) or (1.0,)
    rel = grade > 0
    n = len(grade)
    str_q = qcode.astype(np.int64)
    str_synset = np.where(rel, np.cumsum(rel) - 1, -1).astype(np.int64)
    # level index: position of the grade among the positive grades, highest first
    str_level = np.where(rel, len(positive) - 1 - np.searchsorted(positive[::-1], grade), -1)
    if callable(docno):
        docs = cache(docno)  # str_key and str_text are the same strings, made once
        labels = lambda: docs()[rel]  # noqa: E731
    else:
        docs, labels = docno, docno[rel]
    return Judgments(
        questions=questions,
        levels=levels,
        gains=gains,
        match=ID_MATCH,
        nil_rule=False,
        str_q=str_q,
        str_key=docs,
        str_text=docs,
        str_synset=str_synset,
        str_level=str_level.astype(np.int64),
        str_nil=np.zeros(n, dtype=bool),
        syn_q=str_q[rel],
        syn_label=labels,
        syn_xmax=str_level[rel].astype(np.int64),
        syn_nil=np.zeros(int(rel.sum()), dtype=bool),
        _qindex=Index(questions),
        **extra,
    )


def _slow_qrels(text: str, file: str) -> tuple[list[str], list[str], list[int]]:
    issues = IssueList(file)
    qids, docs, grades = [], [], []
    seen: dict[tuple[str, str], int] = {}
    for n, fields in _fields(text, issues):
        if len(fields) != 4:
            issues.add(
                n,
                _("expected 4 fields 'qid iter docno grade', found %(found)s")
                % {"found": len(fields)},
            )
            continue
        q, _iter, d, g = fields
        if not _INT.fullmatch(g):
            issues.add(n, _("grade %(grade)s is not an integer") % {"grade": repr(g)})
            continue
        if not -(2**63) <= int(g) < 2**63:
            issues.add(n, _("grade %(grade)s is out of range") % {"grade": g})
            continue
        if (q, d) in seen:
            issues.add(
                n,
                _("document %(doc)s of topic %(topic)s is judged twice (line %(line)s)")
                % {"doc": repr(d), "topic": repr(q), "line": seen[q, d]},
            )
            continue
        seen[q, d] = n
        qids.append(q)
        docs.append(d)
        grades.append(int(g))
    if not qids and not issues:
        issues.add(None, _("no judgments in the file"))
    issues.raise_if_any()
    return qids, docs, grades
