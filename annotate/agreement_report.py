"""The Agreement page's figures (DESIGN.md section 9): agreement of a collection's layers
per assessor pair, pooled and per question, and per-assessor throughput, read from the
database into arrays for the engine (``evaluation.metrics.agreement``).
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    Q,
    Value,
)
from django.db.models.functions import Coalesce

from evaluation.metrics.agreement import (
    Mark,
    PairAgreement,
    QuestionFigures,
    alpha_nominal,
    alpha_ordinal,
    group_sizes,
    pair_agreement_arrays,
    question_figures,
    question_figures_two,
)

from .layer_selectors import level_values
from .layer_state import LAYERS_DONE
from .models import (
    Collection,
    JudgingLayer,
    LayerJudgment,
    LayerRequest,
    Level,
    Question,
)

if TYPE_CHECKING:
    pass


# -- the agreement page -----------------------------------------------------------------------
@dataclass
class PairRow:
    """Pooled agreement of two assessors over the questions both judged (layers done)."""

    a: str
    b: str
    questions: int
    figures: PairAgreement


@dataclass
class QuestionRow:
    pk: int
    qid: str
    assessors: list[str]
    figures: QuestionFigures
    unjudged_in_gold: int


@dataclass
class ThroughputRow:
    assessor: str
    layers: int
    done: int
    strings: int
    median_seconds: float | None


@dataclass
class AgreementReport:
    """Everything the agreement page shows (``collection_agreement``)."""

    requested: int  # questions with a layer request
    complete: int  # of which every one of the k layers is done (``LayerState``)
    overall: PairAgreement | None  # every pair of layers of every complete question
    alpha_nominal: float  # all layers as coders (any k)
    alpha_ordinal: float
    pairs: list[PairRow]
    questions: list[QuestionRow]  # lowest agreement first
    throughput: list[ThroughputRow]
    level_names: list[str]  # value 0..n: incorrect, lowest level, ..., highest
    # questions ``overall`` is over: a string judged by both layers of a pair (as ``pairs``)
    overall_questions: int = 0


def _layer_table(
    collection: Collection,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The collection's layer judgments as arrays (layer id, string id, group or -1,
    value) -- one query, no model instances."""
    values = level_values(collection.pk)
    rows = list(
        LayerJudgment.objects.filter(layer__question__collection=collection).values_list(
            "layer_id", "string_id", Coalesce("group", Value(-1)), Coalesce("level_id", Value(0))
        )
    )
    if not rows:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty
    table = np.array(rows, dtype=np.int64)
    lookup = np.zeros(max(values, default=0) + 1, dtype=np.int64)
    for pk, v in values.items():
        lookup[pk] = v
    g = table[:, 2]
    return table[:, 0], table[:, 1], g, np.where(g >= 0, lookup[table[:, 3]], 0)


@dataclass
class _Grid:
    """The layer judgments of the complete questions (every layer done) as a grid: a
    column per unit (a string of a question), a row per position of a layer in its
    question (its layers by assessor name); -2 in ``g`` where that layer did not judge the
    string."""

    order: list[int]  # the complete questions' ids; a question's index here is its ``qi``
    names: dict[int, list[str]]  # qi -> the assessors of its layers, by name
    k_of: np.ndarray  # qi -> its number of layers
    kmax: int
    unit_q: np.ndarray  # unit -> qi
    g: np.ndarray  # position x unit -> synset number, -1 incorrect, -2 not judged
    v: np.ndarray  # position x unit -> value (0 incorrect)
    n: np.ndarray  # position x unit -> size of the string's synset in its whole layer


def _layers_of(collection: Collection) -> list[tuple]:
    """The collection's layers (id, question id, assessor name, open), each question's by
    assessor name: pooled pairs put the same assessor first whichever layer was created
    first (a layers CSV round trip recreates them in name order), as the per-pair rows do."""
    return list(
        JudgingLayer.objects.filter(question__collection=collection)
        .order_by("question_id", "assessor__username")
        .annotate(open=ExpressionWrapper(Q(done_at__isnull=True), output_field=BooleanField()))
        .values_list("pk", "question_id", "assessor__username", "open")
    )


def _grid(collection: Collection, layers: list[tuple]) -> tuple[_Grid, Counter]:
    """The grid of the complete questions' judgments (``_Grid``), and how many strings each
    layer (of a complete question or not) judged."""
    by_q: dict[int, list[tuple]] = {}
    for row in layers:
        by_q.setdefault(row[1], []).append(row)
    # complete: every one of the request's k layers done (``LayerState``); a question
    # short of its k (an assessor left) waits for a new layer and is no agreement yet
    done = set(
        Question.objects.filter(collection=collection)
        .in_layer_state(*LAYERS_DONE)
        .values_list("pk", flat=True)
    )
    complete = {q: ls for q, ls in by_q.items() if q in done}
    order = sorted(complete)
    qindex = {q: i for i, q in enumerate(order)}
    L_, S_, G_, V_ = _layer_table(collection)
    judged = Counter(L_.tolist())
    # position of each layer in its question (-1: question not complete), question index
    top = int(max([r[0] for r in layers], default=0)) + 1
    pos_of = np.full(top, -1, dtype=np.int64)
    q_of = np.full(top, -1, dtype=np.int64)
    k_of = np.zeros(max(len(order), 1), dtype=np.int64)
    for q in order:
        for i, r in enumerate(complete[q]):
            pos_of[r[0]], q_of[r[0]] = i, qindex[q]
        k_of[qindex[q]] = len(complete[q])
    names = {qindex[q]: [r[2] for r in complete[q]] for q in order}
    keep = pos_of[L_] >= 0 if len(L_) else np.zeros(0, dtype=bool)
    L_, S_, G_, V_ = L_[keep], S_[keep], G_[keep], V_[keep]
    P_, Q_ = pos_of[L_], q_of[L_]
    # units judged in positions i and j of their question, for every pair of positions
    kmax = int(k_of.max()) if len(order) else 0
    sort = np.lexsort((P_, S_, Q_))
    Q_, S_, P_, G_, V_ = Q_[sort], S_[sort], P_[sort], G_[sort], V_[sort]
    unit_start = (
        np.flatnonzero(np.r_[True, (Q_[1:] != Q_[:-1]) | (S_[1:] != S_[:-1])])
        if len(Q_)
        else np.zeros(0, dtype=np.int64)
    )
    unit_of = (
        np.cumsum(np.r_[False, (Q_[1:] != Q_[:-1]) | (S_[1:] != S_[:-1])])
        if len(Q_)
        else np.zeros(0, dtype=np.int64)
    )
    n_units = len(unit_start)
    grid_g = np.full((max(kmax, 1), n_units), -2, dtype=np.int64)  # -2: not judged
    grid_v = np.zeros((max(kmax, 1), n_units), dtype=np.int64)
    grid_g[P_, unit_of], grid_v[P_, unit_of] = G_, V_
    unit_q = Q_[unit_start] if n_units else np.zeros(0, dtype=np.int64)
    # the size of each string's synset in the whole of each layer (``alike``)
    grid_n = np.vstack([group_sizes(unit_q, grid_g[p]) for p in range(max(kmax, 1))])
    return _Grid(order, names, k_of, kmax, unit_q, grid_g, grid_v, grid_n), judged


def _pooled(grid: _Grid, n_values: int) -> tuple[list[PairRow], PairAgreement | None, int]:
    """Agreement per assessor pair, and pooled over every pair of layers of every complete
    question (with the number of questions it is over: those with a string judged by both
    layers of some pair, as the pair rows)."""
    unit_q, grid_g, grid_v, grid_n, kmax = grid.unit_q, grid.g, grid.v, grid.n, grid.kmax
    per_pair: dict[tuple[str, str], list[np.ndarray]] = {}
    overall: list[list[np.ndarray]] = [[] for _ in range(7)]
    overall_q: list[np.ndarray] = []
    for i in range(kmax):
        for j in range(i + 1, kmax):
            m = (grid_g[i] > -2) & (grid_g[j] > -2)
            if not m.any():
                continue
            uq = unit_q[m]
            # positions follow the assessors' names: names[qi][i] < names[qi][j]
            cols = (uq, grid_g[i][m], grid_v[i][m], grid_g[j][m], grid_v[j][m])
            sizes = (grid_n[i][m], grid_n[j][m])
            # pooled over the pairs of positions, a question's units of two pairs are
            # distinct units (and its synsets distinct synsets)
            offset = (i * kmax + j) * (len(grid.order) + 1)
            for part, arr in zip(overall, (uq + offset, *cols[1:], *sizes), strict=True):
                part.append(arr)
            overall_q.append(uq)
            # per assessor pair: names of positions i and j of each question
            codes: dict[tuple[str, str], int] = {}
            keys = np.array(
                [
                    codes.setdefault((grid.names[qi][i], grid.names[qi][j]), len(codes))
                    for qi in uq.tolist()
                ],
                dtype=np.int64,
            )
            for pair, key in codes.items():
                sel = keys == key
                have = per_pair.setdefault(pair, [np.zeros(0, dtype=np.int64)] * 7)
                per_pair[pair] = [
                    np.concatenate([h, c[sel]]) for h, c in zip(have, (*cols, *sizes), strict=True)
                ]
    pairs = [
        PairRow(
            a,
            b,
            len(np.unique(arr[0])),
            pair_agreement_arrays(*arr[:5], size_a=arr[5], size_b=arr[6], n_values=n_values),
        )
        for (a, b), arr in sorted(per_pair.items())
    ]
    if not overall[0]:
        return pairs, None, 0
    arr = [np.concatenate(p) for p in overall]
    overall_fig = pair_agreement_arrays(*arr[:5], size_a=arr[5], size_b=arr[6], n_values=n_values)
    return pairs, overall_fig, len(np.unique(np.concatenate(overall_q)))


def _question_figures(grid: _Grid) -> dict[int, QuestionFigures]:
    """qi -> the figures of each complete question: questions with two layers in one
    vectorized pass, the others one by one."""
    unit_q, grid_g, grid_v, grid_n, k_of = grid.unit_q, grid.g, grid.v, grid.n, grid.k_of
    n_questions = len(grid.order)
    figures: dict[int, QuestionFigures] = {}
    if grid.kmax >= 2:
        two = (k_of[unit_q] == 2) & (grid_g[0] > -2) & (grid_g[1] > -2)
        t = question_figures_two(
            unit_q[two],
            grid_g[0][two],
            grid_v[0][two],
            grid_g[1][two],
            grid_v[1][two],
            n_questions,
            size_a=grid_n[0][two],
            size_b=grid_n[1][two],
        )
        for qi in np.flatnonzero(k_of[:n_questions] == 2).tolist():
            figures[qi] = QuestionFigures(
                int(t.n_strings[qi]),
                int(t.n_agree[qi]),
                float(t.kappa[qi]),
                float(t.alpha_nominal[qi]),
                float(t.alpha_ordinal[qi]),
                float(t.pair_f1[qi]),
                float(t.ari[qi]),
                float(t.bcubed_f1[qi]),
            )
    for qi in range(n_questions):
        if qi in figures:
            continue
        cols = np.flatnonzero(unit_q == qi)
        marks = [
            {
                int(u): Mark(int(grid_g[p, u]) if grid_g[p, u] >= 0 else None, int(grid_v[p, u]))
                for u in cols
                if grid_g[p, u] > -2
            }
            for p in range(int(k_of[qi]))
        ]
        figures[qi] = question_figures(marks)
    return figures


def _throughput(
    collection: Collection, layers: list[tuple], judged: Counter
) -> list[ThroughputRow]:
    """Per assessor: layers and strings judged, median time from first edit to done."""
    through: dict[str, ThroughputRow] = {}
    for pk, _, name, open_ in layers:
        t_ = through.setdefault(name, ThroughputRow(name, 0, 0, 0, None))
        t_.layers += 1
        t_.strings += judged[pk]
        t_.done += not open_
    spans: dict[str, list[float]] = {}
    for name, span in JudgingLayer.objects.filter(
        question__collection=collection, seconds__isnull=False
    ).values_list("assessor__username", "seconds"):
        spans.setdefault(name, []).append(span)
    for name, ts in spans.items():
        through[name].median_seconds = statistics.median(ts)
    return sorted(through.values(), key=lambda t: t.assessor)


def collection_agreement(collection: Collection) -> AgreementReport:
    """Agreement of the collection's layers (DESIGN.md section 9), per assessor pair,
    pooled, and per question; per-assessor throughput.  A fixed number of queries; the
    figures are computed on arrays (questions with two layers in one vectorized pass,
    others one by one)."""
    values = level_values(collection.pk)
    levels = dict(Level.objects.filter(collection=collection).values_list("pk", "code"))
    level_names = ["incorrect"] + [
        levels[pk] for pk, _ in sorted(values.items(), key=lambda kv: kv[1])
    ]
    layers = _layers_of(collection)
    grid, judged = _grid(collection, layers)
    info = {
        pk: (qid, n)
        for pk, qid, n in Question.objects.filter(collection=collection, layers__isnull=False)
        .distinct()
        .annotate(n=Count("strings", filter=Q(strings__judged_at__isnull=True), distinct=True))
        .values_list("pk", "qid", "n")
    }
    requested = LayerRequest.objects.filter(question__collection=collection).count()
    pairs, overall_fig, overall_questions = _pooled(grid, len(level_names))
    if grid.unit_q.size and grid.kmax >= 2:
        a_nom = alpha_nominal(np.where(grid.g > -2, (grid.g >= 0).astype(float), np.nan))
        a_ord = alpha_ordinal(np.where(grid.g > -2, grid.v.astype(float), np.nan))
    else:
        a_nom = a_ord = float("nan")
    figures = _question_figures(grid)
    rows = [
        QuestionRow(
            q, info.get(q, ("?", 0))[0], grid.names[qi], figures[qi], info.get(q, ("?", 0))[1]
        )
        for qi, q in enumerate(grid.order)
    ]
    rows.sort(
        key=lambda r: (_sortable(r.figures.percent_agree), _sortable(r.figures.alpha_ordinal), r.pk)
    )
    return AgreementReport(
        requested,
        len(grid.order),
        overall_fig,
        a_nom,
        a_ord,
        pairs,
        rows,
        _throughput(collection, layers, judged),
        level_names,
        overall_questions,
    )


def _sortable(x: float) -> float:
    return -1.0 if x != x else x  # nan (nothing to compare) first: it needs a look
