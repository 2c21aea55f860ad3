"""Plain data the engine works on: judgments (answer synsets with levels) and rankings.

Both are column arrays (numpy), built once and then read by the vectorized marking and
metric code in ``engine.py``.  Nothing here knows about files or the database: the parsers
(``parsers.py``, ``judgment_parsers.py``) and the ORM adapter (``evaluation/services.py``)
build these objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .arrays import Index, factorize, unique
from .errors import InputError, IssueList, _
from .levels import DEFAULT_LEVELS, default_gains
from .normalize import MATCH_MODES, NIL_KEY, normalize_many

ID_MATCH = "id"  # TREC qrels: document ids compared as they are


class StringTable:
    """Distinct strings as the fast reader keeps them: one UTF-8 blob and the offsets of
    each string (string i is ``blob[offsets[i]:offsets[i + 1]]``).  Python strings are
    made only for the ids asked for, so a run's millions of unjudged documents never
    become objects unless someone looks at them."""

    def __init__(
        self,
        blob: bytes,
        offsets: np.ndarray,
        take: Callable[[bytes, np.ndarray, np.ndarray], list[str]],
    ):
        self.blob, self.offsets, self._take = blob, offsets, take

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def take(self, ids: np.ndarray) -> np.ndarray:
        """Object array of the strings ``ids`` names."""
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if len(ids) >= len(self) // 4 or "all" in self.__dict__:
            return self.all[ids]
        out = np.empty(len(ids), dtype=object)
        out[:] = self._take(self.blob, self.offsets, ids)
        return out

    @cached_property
    def all(self) -> np.ndarray:
        out = np.empty(len(self), dtype=object)
        out[:] = self._take(self.blob, self.offsets, np.arange(len(self), dtype=np.int64))
        return out


@dataclass(frozen=True, eq=False)
class Interned:
    """What the fast reader read several files against: the question ids (object array)
    and the items (documents or answers), interned per question: item ``i`` is the string
    ``items.take([i])`` under question ``qids[item_q[i]]``."""

    qids: np.ndarray
    items: StringTable
    item_q: np.ndarray


class LazyColumn:
    """A dataclass field that may be set to a function giving its array: the function is
    called on first read and the array kept.  (A descriptor-typed field with no default:
    ``__get__`` on the class raises AttributeError.)"""

    def __set_name__(self, owner, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj, objtype=None):
        if obj is None:
            raise AttributeError(self.slot[1:])
        value = obj.__dict__[self.slot]
        if callable(value):
            value = obj.__dict__[self.slot] = value()
        return value

    def __set__(self, obj, value) -> None:
        obj.__dict__[self.slot] = value


@dataclass(frozen=True, eq=False)
class Judgments:
    """Answer synsets and judged strings of a set of *judged* questions.

    Question ``q`` is ``questions[q]``.  Strings: ``str_q``, ``str_key`` (matching key),
    ``str_text``, ``str_synset`` (global synset index, -1 = judged incorrect),
    ``str_level`` (index into ``levels``, 0 = highest; -1 = incorrect), ``str_nil``.
    Synsets: ``syn_q``, ``syn_label`` (the synset id as given), ``syn_xmax`` (index of the
    highest level among the synset's strings, the paper's xmax(i)), ``syn_nil``.
    The string columns ``str_key``, ``str_text`` and ``syn_label`` may be given as
    functions returning the array: the fast reader's judged documents become Python
    strings only when someone reads them.
    """

    questions: np.ndarray
    levels: tuple[str, ...]
    gains: tuple[float, ...]
    match: str
    nil_rule: bool
    str_q: np.ndarray
    str_key: np.ndarray = LazyColumn()
    str_text: np.ndarray = LazyColumn()
    str_synset: np.ndarray
    str_level: np.ndarray
    str_nil: np.ndarray
    syn_q: np.ndarray
    syn_label: np.ndarray = LazyColumn()
    syn_xmax: np.ndarray
    syn_nil: np.ndarray
    _qindex: Index = field(repr=False)
    # set by the fast reader: ids of str_key in a table of strings shared with the runs
    key_ids: np.ndarray | None = field(default=None, repr=False)
    interned: Interned | None = field(default=None, repr=False)

    @property
    def nq(self) -> int:
        return len(self.questions)

    def question_index(self, qids: Sequence[str] | np.ndarray) -> np.ndarray:
        """Index of each question id in ``questions``; -1 for ids not judged here."""
        codes, uniques = factorize(np.asarray(qids, dtype=object))
        if not len(codes):
            return codes.astype(np.int64)
        return self._qindex.get_indexer(uniques)[codes].astype(np.int64)

    @cached_property
    def lookup(self) -> tuple[Index, np.ndarray, np.ndarray]:
        """(index of distinct keys, sorted (question, key) codes, string of each code):
        what marking needs to find a run answer among the judged strings.  A string whose
        key is empty ("A" or "the" under ``squad``, "..." under ``normalized``) is left
        out: an empty key matches nothing, not even another empty key."""
        kcodes, kuniq = factorize(self.str_key)
        nk = max(len(kuniq), 1)
        comb = self.str_q * nk + kcodes
        order = np.argsort(comb, kind="stable")
        index = Index(kuniq)
        empty = index.get_indexer([""])[0]
        if empty >= 0:
            order = order[kcodes[order] != empty]
        return index, comb[order], order

    def synset_counts(self) -> np.ndarray:
        """R per question: the number of answer synsets."""
        return np.bincount(self.syn_q, minlength=self.nq)

    @classmethod
    def build(
        cls,
        *,
        qids: Sequence[str],
        synsets: Sequence[str | None],
        texts: Sequence[str],
        levels_of: Sequence[str | None],
        levels: Sequence[str] = DEFAULT_LEVELS,
        gains: Sequence[float] | None = None,
        match: str = "normalized",
        nil_rule: bool = True,
        lines: Sequence[int] | None = None,
        file: str = "<judgments>",
        question_order: Sequence[str] | None = None,
    ) -> Judgments:
        """Build judgments from one row per judged string.

        ``synsets[i]``/``levels_of[i]`` are None (or "") for a string judged incorrect.
        Rows whose answers have one matching key in a question are spellings of one string:
        with the same judgment they fold into the first row; raises InputError, with
        ``lines`` when given, if a level is unknown or if such rows disagree.

        (Radon D: one pass of array steps over the rows, each using the arrays of the steps
        before it, kept whole because every score builds its judgments here: split, the
        steps would hand a dozen arrays along and the per-row loops would gain calls.)
        """
        if match not in MATCH_MODES and match != ID_MATCH:
            raise ValueError(f"unknown matching mode {match!r}")
        levels = tuple(levels)
        gains = tuple(float(g) for g in (gains if gains is not None else default_gains(levels)))
        if len(gains) != len(levels):
            raise ValueError("one gain per level is needed")
        n = len(texts)
        issues = IssueList(file)

        def where(i: int) -> int | None:
            return lines[i] if lines is not None else None

        qid_arr = np.asarray(qids, dtype=object)
        if question_order is not None:
            order = list(dict.fromkeys(list(question_order) + unique(qid_arr).tolist()))
            questions = np.empty(len(order), dtype=object)
            questions[:] = order
            qindex = Index(questions)
            str_q = qindex.get_indexer(qid_arr).astype(np.int64)
        else:
            str_q, questions = factorize(qid_arr)
            qindex = Index(questions)
        text_arr = np.asarray(texts, dtype=object)
        if match == ID_MATCH:
            key_arr = text_arr
        else:
            key_arr = np.asarray(normalize_many(text_arr, match), dtype=object)

        syn_list = list(synsets)
        in_syn = np.fromiter(
            (s is not None and s == s and s != "" for s in syn_list),
            dtype=bool,
            count=len(syn_list),
        )
        syn_raw = np.empty(len(syn_list), dtype=object)
        syn_raw[:] = syn_list
        syn_raw[~in_syn] = None
        position = {code: i for i, code in enumerate(levels)}
        level_pos = np.fromiter((position.get(x, -1) for x in levels_of), dtype=np.int64, count=n)
        unknown = in_syn & (level_pos < 0)
        for i in np.flatnonzero(unknown):
            issues.add(
                where(i),
                _("unknown level %(level)s (expected one of %(levels)s)")
                % {"level": repr(levels_of[i]), "levels": ", ".join(levels)},
            )
        str_level = np.where(in_syn & ~unknown, level_pos, -1).astype(np.int64)

        kcodes, kuniq = factorize(key_arr)
        pair = str_q * max(len(kuniq), 1) + kcodes
        dup = np.zeros(n, dtype=bool)
        if n:
            _uniq, inverse, counts = np.unique(pair, return_inverse=True, return_counts=True)
            dup = counts[inverse.ravel()] > 1
            if "" in kuniq.tolist():  # an empty key matches nothing: no spellings of one
                dup &= key_arr != ""
        if dup.any():
            # spellings of one string (same key): rows with the same judgment fold into the
            # first (DESIGN.md section 4), rows with another judgment are an error
            def judgment(i: int) -> str:
                if syn_raw[i] is None:
                    return _("judged incorrect")
                return _("synset %(synset)s, level %(level)s") % {
                    "synset": syn_raw[i],
                    "level": levels_of[i],
                }

            first_at: dict[tuple[int, str], int] = {}
            folded = np.zeros(n, dtype=bool)
            for i in np.flatnonzero(dup):
                k = (int(str_q[i]), key_arr[i])
                j = first_at.setdefault(k, i)
                if j == i:
                    continue
                if syn_raw[i] == syn_raw[j] and str_level[i] == str_level[j]:
                    folded[i] = True
                    continue
                issues.add(
                    where(i),
                    (
                        _(
                            'question %(qid)s: "%(answer)s" (%(judgment)s) matches "%(kept)s" '
                            "on line %(line)s (%(kept_judgment)s) under %(mode)s matching; "
                            "one string has one judgment"
                        )
                        if lines
                        else _(
                            'question %(qid)s: "%(answer)s" (%(judgment)s) matches "%(kept)s" '
                            "(%(kept_judgment)s) under %(mode)s matching; one string has one "
                            "judgment"
                        )
                    )
                    % {
                        "qid": repr(questions[str_q[i]]),
                        "answer": text_arr[i],
                        "judgment": judgment(i),
                        "kept": text_arr[j],
                        "line": where(j),
                        "kept_judgment": judgment(j),
                        "mode": match,
                    },
                )
            if folded.any():
                keep = ~folded
                str_q, key_arr, text_arr = str_q[keep], key_arr[keep], text_arr[keep]
                in_syn, syn_raw, str_level = in_syn[keep], syn_raw[keep], str_level[keep]
                n = len(text_arr)
        issues.raise_if_any()

        str_synset = np.full(n, -1, dtype=np.int64)
        if in_syn.any():
            # one global index per (question, synset id), in order of first appearance
            str_synset[in_syn] = factorize(
                np.fromiter(
                    zip(str_q[in_syn].tolist(), syn_raw[in_syn].tolist(), strict=True),
                    dtype=object,
                    count=int(in_syn.sum()),
                )
            )[0]
        nsyn = int(str_synset.max()) + 1 if n and in_syn.any() else 0
        if nil_rule and n:
            nil_keys = key_arr if match == "normalized" else normalize_many(text_arr)
            str_nil = np.asarray(nil_keys, dtype=object) == NIL_KEY
        else:
            str_nil = np.zeros(n, dtype=bool)
        syn_q = np.zeros(nsyn, dtype=np.int64)
        syn_label = np.empty(nsyn, dtype=object)
        syn_xmax = np.full(nsyn, len(levels), dtype=np.int64)
        syn_nil = np.zeros(nsyn, dtype=bool)
        idx = np.flatnonzero(in_syn)
        if nsyn:
            s = str_synset[idx]
            syn_q[s] = str_q[idx]
            syn_label[s] = syn_raw[idx]
            np.minimum.at(syn_xmax, s, str_level[idx])
            syn_nil[s[str_nil[idx]]] = True
        return cls(
            questions=questions,
            levels=levels,
            gains=gains,
            match=match,
            nil_rule=nil_rule,
            str_q=str_q,
            str_key=key_arr,
            str_text=text_arr,
            str_synset=str_synset,
            str_level=str_level,
            str_nil=str_nil,
            syn_q=syn_q,
            syn_label=syn_label,
            syn_xmax=syn_xmax,
            syn_nil=syn_nil,
            _qindex=qindex,
        )

    @classmethod
    def from_rows(
        cls, rows: Iterable[tuple[str, str | None, str, str | None]], **kwargs
    ) -> Judgments:
        """Build from ``(question_id, synset_id, answer, level)`` rows (as in the CSV)."""
        rows = list(rows)
        return cls.build(
            qids=[r[0] for r in rows],
            synsets=[r[1] for r in rows],
            texts=[r[2] for r in rows],
            levels_of=[r[3] for r in rows],
            **kwargs,
        )


class Ranking:
    """One run: rows grouped by question, each group in rank order (rank 1 first).

    ``qid`` and ``text`` are object arrays of equal length; ``score`` is optional.  The
    fast reader gives instead ``qid_ids``/``text_ids`` into its ``interned`` tables, and
    ``qid``/``text`` are then made from them when first read.
    """

    def __init__(
        self,
        name: str,
        qid: np.ndarray | None = None,
        text: np.ndarray | None = None,
        score: np.ndarray | None = None,
        *,
        qid_ids: np.ndarray | None = None,
        text_ids: np.ndarray | None = None,
        interned: Interned | None = None,
    ):
        if (qid is None or text is None) and (
            qid_ids is None or text_ids is None or interned is None
        ):
            raise ValueError("a Ranking needs qid and text, or their ids and tables")
        self.name, self.score = name, score
        self.qid_ids, self.text_ids, self.interned = qid_ids, text_ids, interned
        if qid is not None:
            self.__dict__["qid"] = qid
        if text is not None:
            self.__dict__["text"] = text

    @cached_property
    def qid(self) -> np.ndarray:
        return self.interned.qids[self.qid_ids]

    @cached_property
    def text(self) -> np.ndarray:
        return self.interned.items.take(self.text_ids)

    def __len__(self) -> int:
        return len(self.qid_ids) if self.qid_ids is not None else len(self.qid)

    def __repr__(self) -> str:
        return f"Ranking({self.name!r}, {len(self)} rows)"

    @classmethod
    def from_rows(cls, name: str, rows: Iterable[tuple[str, int, str]]) -> Ranking:
        """Build from ``(question_id, rank, answer)`` rows in any order; ranks order answers."""
        rows = list(rows)
        if not rows:
            return cls(name, np.empty(0, dtype=object), np.empty(0, dtype=object))
        qcode = factorize(np.asarray([r[0] for r in rows], dtype=object))[0]
        order = sorted(range(len(rows)), key=lambda i: (qcode[i], rows[i][1]))
        qid = np.empty(len(rows), dtype=object)
        text = np.empty(len(rows), dtype=object)
        qid[:] = [rows[i][0] for i in order]
        text[:] = [rows[i][2] for i in order]
        return cls(name, qid, text)

    @classmethod
    def from_lists(cls, name: str, lists: dict[str, Sequence[str]]) -> Ranking:
        """Build from ``{question_id: [answer at rank 1, answer at rank 2, ...]}``."""
        qid, text = [], []
        for q, answers in lists.items():
            qid.extend([q] * len(answers))
            text.extend(answers)
        return cls(name, np.asarray(qid, dtype=object), np.asarray(text, dtype=object))


def check_unique_names(rankings: Sequence[Ranking]) -> None:
    """Raise InputError when two runs share a name (their rows would mix in reports)."""
    seen: set[str] = set()
    issues = IssueList("<runs>")
    for r in rankings:
        if r.name in seen:
            issues.add(None, _("two runs are named %(name)s") % {"name": repr(r.name)})
        seen.add(r.name)
    issues.raise_if_any()


__all__ = ["DEFAULT_LEVELS", "ID_MATCH", "InputError", "Judgments", "Ranking", "default_gains"]
