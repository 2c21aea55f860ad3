"""Marking (paper Figure 1) and the metric suite (Figure 2 and DESIGN.md section 5).

Everything is vectorized over *groups*: one group per (run, judged question).  Rows of the
marked table are sorted by group, then by rank, so per-group sums are ``np.bincount`` and
running sums are a cumulative sum minus the group's offset.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .accel import fastparse as _fastparse
from .arrays import duplicated, factorize
from .columns import (
    _CUTOFF,
    BASE_METRICS,
    DEFAULT_BETA,
    DEFAULT_METRICS,
    DEFAULT_RBP_P,
    parse_metrics,
)
from .data import ID_MATCH, Judgments, LazyColumn, Ranking
from .gains import GainProfile
from .normalize import NIL_KEY, char_table, normalize_many

if TYPE_CHECKING:
    import pandas as pd

CORRECT, DUPLICATE, INCORRECT, UNJUDGED, NIL_NOT_FIRST = 0, 1, 2, 3, 4
STATUS_NAMES = ("correct", "duplicate", "incorrect", "unjudged", "nil_not_first")


@dataclass(frozen=True, eq=False)
class Marked:
    """The marked answers of one or more runs against one set of judgments.

    Row arrays (sorted by group, then rank): ``group`` (= run * nq + question),
    ``rank`` (1-based position), ``text`` (given as a function when made on first use),
    ``synset`` (-1 if none), ``level`` (-1), ``status`` (see STATUS_NAMES),
    ``explicit_nil`` (the answer is the string NIL).
    ``unknown`` counts, per run, the answers to questions the judgments do not know.
    """

    judgments: Judgments
    runs: tuple[str, ...]
    group: np.ndarray
    rank: np.ndarray
    text: np.ndarray = LazyColumn()  # noqa: RUF009 -- a descriptor, not a default
    synset: np.ndarray
    level: np.ndarray
    status: np.ndarray
    explicit_nil: np.ndarray
    unknown: np.ndarray

    @property
    def ngroups(self) -> int:
        return len(self.runs) * self.judgments.nq

    def group_lengths(self) -> np.ndarray:
        """L: the number of answers of each group."""
        return np.bincount(self.group, minlength=self.ngroups)

    def frame(self) -> pd.DataFrame:
        """Every marked answer as a table: run, question_id, rank, answer, synset, level,
        status -- what a person needs to see why a question got its score."""
        import pandas as pd  # only for the pages that show it: the scorer never needs it

        j = self.judgments
        nq = j.nq
        has_syn = self.synset >= 0
        synset = np.full(len(self.group), None, dtype=object)
        synset[has_syn] = j.syn_label[self.synset[has_syn]]
        level = np.full(len(self.group), None, dtype=object)
        has_lev = self.level >= 0
        level[has_lev] = np.asarray(j.levels, dtype=object)[self.level[has_lev]]
        return pd.DataFrame(
            {
                "run": np.asarray(self.runs, dtype=object)[self.group // nq] if nq else [],
                "question_id": j.questions[self.group % nq] if nq else [],
                "rank": self.rank.astype(np.int64),
                "answer": self.text,
                "synset": synset,
                "level": level,
                "status": np.asarray(STATUS_NAMES, dtype=object)[self.status],
            }
        )


def _encode(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    codes, uniques = factorize(values)
    return codes, np.asarray(uniques, dtype=object)


def _find(jsorted: np.ndarray, jorder: np.ndarray, comb: np.ndarray) -> np.ndarray:
    """Index of the judged string whose (question, key) code is ``comb`` (-1: none)."""
    if not len(jsorted) or not len(comb):
        return np.full(len(comb), -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(jsorted, comb), len(jsorted) - 1)
    return np.where((jsorted[pos] == comb) & (comb >= 0), jorder[pos], -1)


def _keys_and_nil(j: Judgments, strings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Matching keys of distinct answer strings, and which are an explicit NIL."""
    if j.match == ID_MATCH:
        keys = strings
    else:
        keys = np.asarray(normalize_many(strings, j.match), dtype=object)
    if not j.nil_rule or not len(strings):
        nil = np.zeros(len(strings), dtype=bool)
    elif j.match == "normalized":
        nil = keys == NIL_KEY
    else:
        nil = np.asarray(normalize_many(strings), dtype=object) == NIL_KEY
    return keys, nil


def _item_matches(j: Judgments, interned, qmap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each item of the fast reader's tables (a string under one question): the judged
    string it matches (-1: none) and whether it is an explicit NIL."""
    nitems = len(interned.items)
    if j.interned is interned and j.match == ID_MATCH:
        # judgments read with the runs: a judged document is the very same item
        sidx = np.full(nitems, -1, dtype=np.int32)
        sidx[j.key_ids] = np.arange(len(j.key_ids), dtype=np.int32)
        return sidx, np.zeros(nitems, dtype=bool)
    if j.match == "normalized" and _fastparse is not None:
        return _item_matches_c(j, interned, qmap)
    return _matches_of(j, qmap, interned.items.all, interned.item_q)


def _matches_of(
    j: Judgments, qmap: np.ndarray, strings: np.ndarray, item_q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The judged string each of ``strings`` (items under reader questions ``item_q``)
    matches (-1: none) and whether it is an explicit NIL, keyed in Python."""
    key_index, jsorted, jorder = j.lookup
    nk = max(len(key_index), 1)
    keys, nil = _keys_and_nil(j, strings)
    n = len(strings)
    kcode = key_index.get_indexer(keys) if n else np.empty(0, dtype=np.int64)
    iq = qmap[item_q].astype(np.int64) if n else np.empty(0, dtype=np.int64)
    return _find(jsorted, jorder, np.where((kcode >= 0) & (iq >= 0), iq * nk + kcode, -1)), nil


def _item_matches_c(j: Judgments, interned, qmap: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_item_matches`` under ``normalized`` matching with the C accelerator: items are
    keyed in C, character by character (``normalize.char_table``), and looked up among the
    judged keys there; no Python string is made for them, except for the few items with a
    character whose key depends on its neighbours (keyed by ``normalize_many``)."""
    items = interned.items
    points = np.frombuffer(_fastparse.code_points(items.blob), dtype=np.int32)
    table, spaces, edges = char_table(points.tolist())
    found, nil, rest = _fastparse.match_items(
        items.blob,
        items.offsets,
        interned.item_q,
        np.ascontiguousarray(qmap, dtype=np.int32),
        table,
        spaces,
        edges,
        j.str_key.tolist(),
        np.ascontiguousarray(j.str_q, dtype=np.int64),
    )
    sidx = np.frombuffer(found, dtype=np.int32)
    nil = np.frombuffer(nil, dtype=bool)
    rest = np.frombuffer(rest, dtype=np.int64)
    if len(rest):
        sidx, nil = sidx.copy(), nil.copy()
        sidx[rest], nil[rest] = _matches_of(j, qmap, items.take(rest), interned.item_q[rest])
    if not j.nil_rule:
        nil = np.zeros(len(sidx), dtype=bool)
    return sidx, nil


def _row_matches(j: Judgments, q: np.ndarray, text: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per answer row (question ``q``, string ``text``): the judged string it matches
    (-1: none) and whether it is an explicit NIL; each distinct string is keyed once."""
    key_index, jsorted, jorder = j.lookup
    nk = max(len(key_index), 1)
    tcodes, tuniq = _encode(text)
    keys, nil = _keys_and_nil(j, tuniq)
    if not len(text):
        return np.empty(0, dtype=np.int64), np.zeros(0, dtype=bool)
    kcode = key_index.get_indexer(keys)[tcodes]
    comb = np.where(kcode >= 0, q.astype(np.int64) * nk + kcode, -1)
    return _find(jsorted, jorder, comb), nil[tcodes]


def mark(judgments: Judgments, rankings: Sequence[Ranking]) -> Marked:
    """Mark every answer of ``rankings`` (paper, Figure 1).

    An answer matching a string of synset i is marked with that string's own level if i
    has not been credited yet (and then credits i); a later string of a credited synset is
    a duplicate; a matching ``NIL`` is marked only at rank 1.  Unmatched answers are
    ``incorrect`` when an assessor judged that string incorrect, else ``unjudged``.
    """
    j = judgments
    nq = j.nq
    interned = rankings[0].interned if rankings else None
    if interned is None or any(r.interned is not interned for r in rankings):
        interned = None  # no shared string tables: match by the strings themselves
    # row arrays are int32 unless the groups need more (memory is most of the time here)
    itype = np.int64 if len(rankings) * max(nq, 1) >= 2**31 else np.int32
    qmap = j.question_index(interned.qids).astype(itype) if interned is not None else None
    parts_g, parts_text = [], []
    unknown = np.zeros(len(rankings), dtype=np.int64)
    for i, ranking in enumerate(rankings):
        if interned is not None:
            g, text = qmap[ranking.qid_ids], ranking.text_ids
        else:
            g, text = j.question_index(ranking.qid).astype(itype), ranking.text
        known = g >= 0
        unknown[i] = len(g) - int(np.count_nonzero(known))
        if unknown[i]:
            g, text = g[known], text[known]
        if i:
            g += i * nq  # group = run * nq + question
        parts_g.append(g)
        parts_text.append(text)
    if len(parts_g) == 1:
        group, text = parts_g[0], parts_text[0]
    elif parts_g:
        group, text = np.concatenate(parts_g), np.concatenate(parts_text)
    else:
        group = np.empty(0, dtype=itype)
        text = np.empty(0, dtype=np.int32 if interned is not None else object)
    del parts_g, parts_text
    if len(group) > 1 and not (group[1:] >= group[:-1]).all():
        order = np.argsort(group, kind="stable")
        group, text = group[order], text[order]
    n = len(group)
    # rank: a running count that restarts at each group's first row
    rank = np.ones(n, dtype=np.int32)
    if n:
        starts = np.flatnonzero(group[1:] != group[:-1]) + 1
        rank[starts] = 1 - np.diff(starts, prepend=0)
        np.cumsum(rank, out=rank)

    if interned is not None:
        # what each distinct item matches is found once, then looked up per row
        item_sidx, item_nil = _item_matches(j, interned, qmap)
        sidx = item_sidx[text]
        explicit_nil = item_nil[text]
        ids = text
        text = lambda: interned.items.take(ids)  # noqa: E731 -- made only if asked for
    else:
        sidx, explicit_nil = _row_matches(j, group % max(nq, 1), text)

    # per judged string, plus a last entry for "no match" (sidx -1)
    synset = np.append(j.str_synset, -1).astype(np.int32)[sidx]
    level = np.append(j.str_level, -1).astype(np.int32)[sidx]
    status = np.full(n, UNJUDGED, dtype=np.int8)
    status[sidx >= 0] = INCORRECT
    in_syn = synset >= 0
    late_nil = in_syn & np.append(j.str_nil, False)[sidx]
    late_nil &= rank > 1
    status[late_nil] = NIL_NOT_FIRST
    level[late_nil] = -1
    # a synset is credited once per run (its first string); a synset belongs to one
    # question, so (group, synset) pairs are what repeat
    el_idx = np.flatnonzero(in_syn & ~late_nil)
    nsyn = max(len(j.syn_q), 1)
    credit = group[el_idx].astype(np.int64) * nsyn + synset[el_idx]
    status[el_idx] = np.where(duplicated(credit), DUPLICATE, CORRECT)
    return Marked(
        j,
        tuple(r.name for r in rankings),
        group,
        rank,
        text,
        synset,
        level,
        status,
        explicit_nil,
        unknown,
    )


class Scorer:
    """Computes metrics for every group of a ``Marked`` table under one configuration.

    Every metric here sums over the *credited* answers only (the rest earn no gain), so
    the scorer keeps just those rows: ``group``, ``rank`` (``pos`` as float), question
    ``q``, ``level``, ``synset`` and gain ``g`` of each credited answer, in table order.
    """

    def __init__(
        self,
        marked: Marked,
        *,
        gains: GainProfile | None = None,
        beta: float = DEFAULT_BETA,
        rbp_p: float = DEFAULT_RBP_P,
    ):
        if beta < 0:
            raise ValueError("beta must be >= 0")
        if not 0 <= rbp_p < 1:
            raise ValueError("the RBP persistence p must be in [0, 1)")
        self.m = marked
        self.beta = float(beta)
        self.p = float(rbp_p)
        j = marked.judgments
        nq, ng = j.nq, marked.ngroups
        self.nq, self.ng = nq, ng
        profile = gains or GainProfile()
        base = profile.resolve(j.levels, j.gains)
        self.gtop = float(base.max()) if len(base) and base.max() > 0 else 1.0
        self.G = profile.per_question(base, j.syn_q, j.syn_xmax, nq)
        self.nlev = len(j.levels)

        self.gq = np.arange(ng, dtype=np.int64) % max(nq, 1)  # question of each group
        idx = np.flatnonzero(marked.status == CORRECT)
        self.group = marked.group[idx].astype(np.int64)
        self.rank = marked.rank[idx].astype(np.int64)
        self.pos = self.rank.astype(float)
        self.q = self.group % max(nq, 1)
        self.level = marked.level[idx]
        self.synset = marked.synset[idx]
        self.g = self.G[self.q, self.level] if len(idx) else np.zeros(0)
        n = len(idx)
        grp = self.group
        starts = np.flatnonzero(np.r_[True, grp[1:] != grp[:-1]]) if n else np.empty(0, int)
        self.first = np.repeat(starts, np.diff(np.r_[starts, n])) if n else starts

        # Ideal list per question: xmax gains sorted descending (Figure 2).
        syn_gain = (
            self.G[j.syn_q, np.minimum(j.syn_xmax, self.nlev - 1)]
            if len(j.syn_q)
            else (np.zeros(0))
        )
        self.R = np.bincount(j.syn_q, minlength=nq)
        self.ideal = self._ideal(j.syn_q, syn_gain)
        nonnil = ~j.syn_nil
        self.Rt = np.bincount(j.syn_q[nonnil], minlength=nq)
        self.ideal_t = self._ideal(j.syn_q[nonnil], syn_gain[nonnil])
        rigid = j.syn_xmax < self.nlev - 1 if self.nlev > 1 else np.ones(len(j.syn_q), bool)
        self.R_rigid = np.bincount(j.syn_q[rigid], minlength=nq)

    # -- helpers --------------------------------------------------------------------------
    def _ideal(self, syn_q: np.ndarray, gains: np.ndarray):
        order = np.lexsort((-gains, syn_q))
        iq, ig = syn_q[order], gains[order]
        counts = np.bincount(iq, minlength=self.nq)
        offset = np.r_[0, np.cumsum(counts)[:-1]] if self.nq else np.zeros(0, int)
        ipos = np.arange(len(iq)) - offset[iq] + 1 if len(iq) else np.zeros(0, int)
        icum = self._segcum(ig, iq, offset)
        total = np.bincount(iq, weights=ig, minlength=self.nq)
        return {
            "q": iq,
            "gain": ig,
            "pos": ipos,
            "cum": icum,
            "offset": offset,
            "count": counts,
            "total": total,
        }

    @staticmethod
    def _segcum(values: np.ndarray, seg: np.ndarray, offset: np.ndarray) -> np.ndarray:
        if not len(values):
            return np.zeros(0)
        cs = np.cumsum(values, dtype=float)
        first = offset[seg]
        return cs - cs[first] + values[first]

    def _cum(self, values: np.ndarray) -> np.ndarray:
        """Running sum within each group over the credited rows (in rank order)."""
        if not len(values):
            return np.zeros(0)
        cs = np.cumsum(values, dtype=float)
        return cs - cs[self.first] + values[self.first]

    def _sum(self, weights: np.ndarray) -> np.ndarray:
        """Per-group sum over the credited rows."""
        return np.bincount(self.group, weights=weights, minlength=self.ng)

    def _cig(self, ideal, q: np.ndarray, r: np.ndarray) -> np.ndarray:
        """Cumulative ideal gain at rank r (frozen after rank R) for questions q."""
        count = ideal["count"][q]
        if not len(ideal["cum"]):
            return np.zeros(len(q))
        at = ideal["offset"][q] + np.minimum(r, count) - 1
        return np.where(count > 0, ideal["cum"][np.clip(at, 0, None)], 0.0)

    @staticmethod
    def _div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        den = np.asarray(den, dtype=float)
        return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)

    def _by_group(self, per_q: np.ndarray) -> np.ndarray:
        return per_q[self.gq]

    def _upto_R(self) -> np.ndarray:
        """Credited rows at rank R or above (R: the question's number of synsets)."""
        return self.rank <= self.R[self.q]

    # -- Sakai-style metrics --------------------------------------------------------------
    def q_measure(self) -> np.ndarray:
        """Q-measure (paper eq. 5 with beta): (1/R) sum_rel (b*cg(r)+count(r))/(b*cig(r)+r)."""
        cg, count = self._cum(self.g), self._cum(np.ones(len(self.g)))
        cig = self._cig(self.ideal, self.q, self.rank)
        term = self._div(self.beta * cg + count, self.beta * cig + self.pos)
        return self._div(self._sum(term), self._by_group(self.R))

    def r_measure(self) -> np.ndarray:
        """R-measure (paper eq. 6 with beta): (b*cg(R)+count(R))/(b*cig(R)+R)."""
        num = self._sum(np.where(self._upto_R(), self.beta * self.g + 1.0, 0.0))
        R = self._by_group(self.R)
        return self._div(num, self.beta * self._by_group(self.ideal["total"]) + R)

    def _first_rank(self, mask: np.ndarray | None = None) -> np.ndarray:
        """Per group, the rank of the first credited row (of those in ``mask``); 0: none."""
        first = np.zeros(self.ng)
        idx = np.flatnonzero(mask) if mask is not None else np.arange(len(self.group))
        if len(idx):
            grp = self.group[idx]
            keep = np.r_[True, grp[1:] != grp[:-1]]
            first[grp[keep]] = self.rank[idx[keep]]
        return first

    def rr(self) -> np.ndarray:
        """Reciprocal rank of the first marked answer; 0 if none."""
        return self._div(np.ones(self.ng), self._first_rank())

    def ap(self) -> np.ndarray:
        """Relaxed AP (paper eq. 1): any level counts as correct."""
        count = self._cum(np.ones(len(self.g)))
        return self._div(self._sum(count / self.pos), self._by_group(self.R))

    def ap_rigid(self) -> np.ndarray:
        """Rigid AP: only marks above the lowest level count (equals ap with one level)."""
        if self.nlev <= 1:
            return self.ap()
        rel = self.level < self.nlev - 1
        count = self._cum(rel.astype(float))
        return self._div(
            self._sum(np.where(rel, count / self.pos, 0.0)), self._by_group(self.R_rigid)
        )

    def awp(self) -> np.ndarray:
        """Average weighted precision (paper eq. 3): (1/R) sum_rel cg(r)/cig(r)."""
        cg = self._cum(self.g)
        cig = self._cig(self.ideal, self.q, self.rank)
        return self._div(self._sum(self._div(cg, cig)), self._by_group(self.R))

    def rwp(self) -> np.ndarray:
        """R-weighted precision (paper eq. 4): cg(R)/cig(R)."""
        return self._div(
            self._sum(np.where(self._upto_R(), self.g, 0.0)), self._by_group(self.ideal["total"])
        )

    def r_prec(self) -> np.ndarray:
        """R-precision (paper eq. 2): count(R)/R."""
        return self._div(self._sum(self._upto_R().astype(float)), self._by_group(self.R))

    def p_at(self, k: int) -> np.ndarray:
        """Precision at k (relaxed), dividing by k as trec_eval's P_k does."""
        return self._sum((self.rank <= k).astype(float)) / k

    def ndcg_at(self, k: float) -> np.ndarray:
        """nDCG@k with linear gains and 1/log2(r+1) discounts (trec_eval's ndcg_cut)."""
        dcg = self._sum(np.where(self.rank <= k, self.g / np.log2(self.pos + 1), 0.0))
        ip = self.ideal["pos"]
        idcg_q = np.bincount(
            self.ideal["q"],
            minlength=self.nq,
            weights=np.where(ip <= k, self.ideal["gain"] / np.log2(ip + 1.0), 0),
        )
        return self._div(dcg, self._by_group(idcg_q))

    def ndcg(self) -> np.ndarray:
        return self.ndcg_at(np.inf)

    def rbp(self) -> np.ndarray:
        """Rank-biased precision, gains divided by the top gain: (1-p) sum g(r)/gtop p^(r-1)."""
        return (1 - self.p) * self._sum(self.g / self.gtop * self.p ** (self.pos - 1))

    # -- truncation-aware metrics (truncated-rankings-and-nil-answers.txt) --------------------
    def _trunc(self):
        if hasattr(self, "_tcache"):
            return self._tcache
        L = self.m.group_lengths()
        d = L.astype(float).copy()
        nil_rows = np.flatnonzero(self.m.explicit_nil)
        if len(nil_rows):
            grp = self.m.group[nil_rows]
            keep = np.r_[True, grp[1:] != grp[:-1]]
            d[grp[keep]] = self.m.rank[nil_rows[keep]] - 1
        j = self.m.judgments
        # credited before the cut, and not the NIL synset
        rel = (self.rank <= d[self.group]) & ~j.syn_nil[self.synset]
        g = np.where(rel, self.g / self.gtop, 0.0)
        Rt = self._by_group(self.Rt)
        acc_bin = self._sum(rel.astype(float))
        acc_gain = self._sum(g)
        total = self._by_group(self.ideal_t["total"]) / self.gtop
        rt_bin = np.where(Rt == 0, 1.0, np.minimum(1.0, self._div(acc_bin, Rt)))
        rt_gain = np.where(Rt == 0, 1.0, np.minimum(1.0, self._div(acc_gain, total)))
        self._tcache = (d, rel, g, Rt, acc_bin, rt_bin, rt_gain)
        return self._tcache

    def rr_trunc(self) -> np.ndarray:
        """RR': 1/rank of the first correct answer before the cut, else r_t/(d+1)."""
        d, rel, _, _, _, rt_bin, _ = self._trunc()
        first = self._first_rank(rel)
        return np.where(first > 0, self._div(np.ones(self.ng), first), rt_bin / (d + 1))

    def ap_trunc(self) -> np.ndarray:
        """AP': AP of the ranking extended by the terminal item, divided by R+1."""
        d, rel, _, Rt, acc, rt, _ = self._trunc()
        count = self._cum(rel.astype(float))
        s = self._sum(np.where(rel, count / self.pos, 0.0))
        return (s + rt * (acc + rt) / (d + 1)) / (Rt + 1)

    def rbp_trunc(self) -> np.ndarray:
        """RBP': (1-p) sum_{r<=d} g(r) p^(r-1) + p^d r_t, gains divided by the top gain."""
        d, _, g, _, _, _, rt = self._trunc()
        return (1 - self.p) * self._sum(g * self.p ** (self.pos - 1)) + self.p**d * rt

    def ndcg_trunc(self) -> np.ndarray:
        """NDCG': DCG@(d+1) of the answers and the terminal item over the ideal d+1 list
        that holds a terminal 1.0 in its first zero-gain slot (capped at 1)."""
        d, _, g, Rt, _, _, rt = self._trunc()
        dcg = self._sum(g / np.log2(self.pos + 1)) + rt / np.log2(d + 2)
        it = self.ideal_t
        ig = it["gain"] / self.gtop / np.log2(it["pos"] + 1.0)
        # ideal DCG over the first d+1 slots, per group (d differs between runs)
        gq = self.gq
        if len(it["q"]):
            cum = self._segcum(ig, it["q"], it["offset"])
            cnt = it["count"][gq]
            upto = np.minimum(cnt, d + 1).astype(np.int64)
            at = it["offset"][gq] + upto - 1
            idcg = np.where(upto > 0, cum[np.clip(at, 0, None)], 0.0)
        else:
            idcg = np.zeros(self.ng)
        idcg = idcg + np.where(Rt < d + 1, 1.0 / np.log2(Rt + 2.0), 0.0)
        return np.minimum(1.0, self._div(dcg, idcg))

    # -- dispatch ---------------------------------------------------------------------------
    def metric(self, name: str) -> np.ndarray:
        """Per-group values of one metric column name (e.g. ``q_measure``, ``ndcg@5``)."""
        m = _CUTOFF.match(name)
        if m:
            k = int(m.group(2))
            return self.p_at(k) if m.group(1) == "p" else self.ndcg_at(k)
        if name not in BASE_METRICS:
            raise ValueError(f"unknown metric {name!r}")
        return getattr(self, name)()


@dataclass(frozen=True, eq=False)
class Scores:
    """Per-question scores of each run: ``values[run_index, metric_index, question_index]``
    (every judged question, in judgment order); ``per_question[run]`` is the same numbers
    as a DataFrame indexed by question id with one column per metric (made on first use:
    pandas is imported only by callers who want frames)."""

    metrics: tuple[str, ...]
    runs: tuple[str, ...]
    unknown: dict[str, int]
    marked: Marked
    values: np.ndarray

    @property
    def questions(self) -> np.ndarray:
        return self.marked.judgments.questions

    def mean_values(self) -> np.ndarray:
        """Mean of each metric per run over the judged questions: (run, metric)."""
        nr, nm, nq = self.values.shape
        return self.values.mean(axis=2) if nq else np.zeros((nr, nm))

    def unjudged(self) -> np.ndarray:
        """The number of each run's answers to each question that no assessor judged:
        (run, question) integers, the answers the next round of judging should see."""
        m = self.marked
        counts = np.bincount(m.group[m.status == UNJUDGED], minlength=m.ngroups)
        return counts.reshape(len(self.runs), m.judgments.nq)

    @cached_property
    def per_question(self) -> dict[str, pd.DataFrame]:
        import pandas as pd  # only for the callers that ask for DataFrames: qa-score never

        index = pd.Index(self.questions, name=None)
        return {
            run: pd.DataFrame(self.values[i].T, index=index, columns=list(self.metrics))
            for i, run in enumerate(self.runs)
        }

    def means(self) -> pd.DataFrame:
        """Mean of each metric per run over the judged questions (rows: runs)."""
        import pandas as pd  # as in per_question

        return pd.DataFrame(
            self.mean_values(), index=pd.Index(self.runs, dtype=object), columns=list(self.metrics)
        )


def evaluate(
    judgments: Judgments,
    rankings: Sequence[Ranking],
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    gains: GainProfile | None = None,
    beta: float = DEFAULT_BETA,
    rbp_p: float = DEFAULT_RBP_P,
) -> Scores:
    """Mark and score ``rankings``; every judged question is scored for every run (a
    question a run did not answer scores as an empty ranking, like trec_eval -c)."""
    metrics = tuple(parse_metrics(metrics))
    marked = mark(judgments, rankings)
    scorer = Scorer(marked, gains=gains, beta=beta, rbp_p=rbp_p)
    nq = judgments.nq
    values = np.stack([scorer.metric(name) for name in metrics])
    # (metric, run, question) -> (run, metric, question): each run's rows stay contiguous
    table = np.ascontiguousarray(values.reshape(len(metrics), len(rankings), nq).transpose(1, 0, 2))
    return Scores(
        metrics,
        tuple(r.name for r in rankings),
        {r.name: int(marked.unknown[i]) for i, r in enumerate(rankings)},
        marked,
        table,
    )
