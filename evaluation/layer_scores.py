"""Does assessor disagreement change the conclusions? (DESIGN.md section 9; Voorhees 2000.)

Every run is scored against each layer and against gold over the same questions: those
whose layers are all done and whose gold has no unjudged string left (adjudicated, or
agreed throughout).  A question still being judged, or waiting for adjudication, is left
out of every set of judgments -- scoring gold over fewer questions than the layers would
compare rankings of different question sets -- and counted (``LayerQuestions``).  Layer
*i* is the i-th layer (in order of creation) of each question, so with k = 2 there are
"layer 1" and "layer 2" whoever judged them; with questions of different k, only the
positions every scored question has.  The rankings of the runs under each set of
judgments are compared by Kendall's tau and Spearman's rho per metric, with the largest
change of one run's mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pandas as pd
from django.db.models import Count, Q

from annotate.layer_state import LAYERS_DONE
from annotate.models import AnswerString, Collection, JudgingLayer, LayerJudgment
from evaluation.analysis.score_config import ScoreConfig
from evaluation.metrics import Judgments, Scores, evaluate
from evaluation.metrics.agreement import RankingChange, ranking_change
from evaluation.metrics.csvio import READABLE_FLOAT_FORMAT, write_csv

from .models import Run
from .services import run_ranking

GOLD = "gold"


@dataclass(frozen=True)
class LayerQuestions:
    """The layered questions of a collection by where they stand: ``scored`` (question
    id -> its layer ids in creation order: every layer done and nothing left unjudged in
    gold), ``waiting`` (every layer done, gold still has unjudged strings: the
    adjudication queue) and ``open`` (a layer still being judged, or fewer layers than
    the request's k: waiting for a new one)."""

    scored: dict[int, list[int]] = field(default_factory=dict)
    waiting: int = 0
    open: int = 0


def layer_questions(collection: Collection) -> LayerQuestions:
    """Which layered questions of ``collection`` runs are scored on (three queries)."""
    rows: dict[int, list[tuple[int, bool]]] = {}
    for pk, q, done in (
        JudgingLayer.objects.filter(question__collection=collection)
        .order_by("question_id", "id")
        .values_list("pk", "question_id", "done_at")
    ):
        rows.setdefault(q, []).append((pk, done is not None))
    # where each stands: one definition, aware of the request's k (``LayerState``)
    states = dict(
        collection.questions.filter(pk__in=list(rows))
        .with_layer_state()
        .values_list("pk", "layer_state")
    )
    complete = {q: [pk for pk, _ in rs] for q, rs in rows.items() if states[q] in LAYERS_DONE}
    # per complete question: its strings and how many gold has not judged (a question with
    # no string has nothing to score)
    left = dict(
        AnswerString.objects.filter(question_id__in=list(complete))
        .order_by()
        .values("question_id")
        .annotate(n=Count("pk", filter=Q(judged_at__isnull=True)))
        .values_list("question_id", "n")
    )
    return LayerQuestions(
        scored={q: ids for q, ids in complete.items() if left.get(q) == 0},
        waiting=sum(1 for q in complete if left.get(q, 0) > 0),
        open=len(rows) - len(complete),
    )


def _judgment_rows(layers: dict[int, list[int]], k: int) -> dict[str, list[tuple]]:
    """Rows ``(qid, group, spelling, level)`` of ``gold`` and of ``layer 1`` .. ``layer k``
    over the questions of ``layers`` (question pk: its layer pks, in order)."""
    position = {pk: i for ids in layers.values() for i, pk in enumerate(ids[:k], start=1)}
    rows: dict[str, list[tuple]] = {GOLD: []}
    for pos in range(1, k + 1):
        rows[f"layer {pos}"] = []
    # a judgment holds for every spelling of its string (its text and variants), as in the
    # collection's scores (``services.collection_judgments``)
    for layer_id, qid, group, text, level, variants in (
        LayerJudgment.objects.filter(layer__in=list(position))
        .order_by("layer__question_id", "string_id")
        .values_list(
            "layer_id",
            "layer__question__qid",
            "group",
            "string__text",
            "level__code",
            "string__variants",
        )
    ):
        rows[f"layer {position[layer_id]}"] += [
            (qid, str(group) if group is not None else None, spelling, level)
            for spelling in (text, *variants)
        ]
    for qid, ordinal, text, level, variants in (
        AnswerString.objects.filter(question_id__in=list(layers), judged_at__isnull=False)
        .order_by("question_id", "id")
        .values_list("question__qid", "synset__ordinal", "text", "level__code", "variants")
    ):
        rows[GOLD] += [
            (qid, str(ordinal) if ordinal is not None else None, spelling, level)
            for spelling in (text, *variants)
        ]
    return rows


def layer_judgments(
    collection: Collection, questions: LayerQuestions | None = None
) -> dict[str, Judgments]:
    """``gold`` and ``layer 1`` .. ``layer k`` as engine Judgments, every one over the same
    questions: ``questions.scored`` (``layer_questions``), and the layer positions all of
    them have.  Three queries (five without ``questions``)."""
    if questions is None:
        questions = layer_questions(collection)
    layers = questions.scored
    levels = list(collection.levels.order_by("order").values_list("code", "gain"))
    codes, gains = [c for c, _ in levels] or ["S"], [g for _, g in levels] or [1.0]
    k = min((len(ids) for ids in layers.values()), default=0)
    rows = _judgment_rows(layers, k)
    order = list(
        collection.questions.filter(pk__in=list(layers))
        .order_by("id")
        .values_list("qid", flat=True)
    )
    return {
        name: Judgments.build(
            qids=[r[0] for r in rs],
            synsets=[r[1] for r in rs],
            texts=[r[2] for r in rs],
            levels_of=[r[3] for r in rs],
            levels=codes,
            gains=gains,
            match=collection.matching_mode,
            nil_rule=True,
            question_order=order,
            file=f"{collection.slug} {name}",
        )
        for name, rs in rows.items()
    }


@dataclass(frozen=True)
class LayerComparison:
    metric: str
    a: str
    b: str
    change: RankingChange


@dataclass
class LayerScores:
    """Scores of every run under each set of judgments, and how the rankings compare."""

    names: tuple[str, ...]  # gold, layer 1, ...
    scores: dict[str, Scores]
    means: dict[str, pd.DataFrame]  # runs x metrics
    comparisons: list[LayerComparison]
    n_questions: int  # scored: every layer done, gold adjudicated
    n_waiting: int = 0  # left out: every layer done, gold waits for adjudication
    n_open: int = 0  # left out: a layer is still being judged, or fewer than k

    def rows(self) -> list[list]:
        """CSV rows ``judgments,run,question_id,<metrics>`` with mean rows ``all``."""
        out = []
        for name in self.names:
            s = self.scores[name]
            for run in s.runs:
                table = s.per_question[run]
                for qid, values in table.iterrows():
                    out.append([name, run, qid, *values.tolist()])
                out.append([name, run, "all", *self.means[name].loc[run].tolist()])
        return out


def layer_scores(collection: Collection, runs: Sequence[Run], config: ScoreConfig) -> LayerScores:
    """Score ``runs`` against gold and each layer, over the same questions (every layer
    done, gold adjudicated: ``layer_questions``), and compare the system rankings per
    metric: each layer against gold, and the layers against one another."""
    runs = list(runs)
    questions = layer_questions(collection)
    judgments = layer_judgments(collection, questions)
    rankings = [run_ranking(r) for r in runs]
    scores, means = {}, {}
    for name, j in judgments.items():
        scores[name] = evaluate(
            j,
            rankings,
            config.metrics,
            gains=config.profile(),
            beta=config.beta,
            rbp_p=config.rbp_p,
        )
        means[name] = scores[name].means()
    names = tuple(judgments)
    pairs = [(GOLD, n) for n in names if n != GOLD]
    layer_names = [n for n in names if n != GOLD]
    pairs += [(x, y) for i, x in enumerate(layer_names) for y in layer_names[i + 1 :]]
    comparisons = [
        LayerComparison(m, x, y, ranking_change(means[x][m].to_dict(), means[y][m].to_dict()))
        for m in config.metrics
        for x, y in pairs
    ]
    return LayerScores(
        names,
        scores,
        means,
        comparisons,
        judgments[GOLD].nq,
        n_waiting=questions.waiting,
        n_open=questions.open,
    )


def layer_scores_csv(
    result: LayerScores, metrics: Sequence[str], *, precision: str = "readable"
) -> str:
    """The per-layer scores as CSV (``judgments,run,question_id,<metrics>``), written by
    the product's one CSV writer: 6 decimals, or every digit with ``precision="full"``
    (as the download, ``exports.csv_response``)."""
    full = precision == "full"
    return write_csv(
        ["judgments", "run", "question_id", *metrics],
        result.rows(),
        {"questions": result.n_questions} | ({"precision": "full"} if full else {}),
        float_format=None if full else READABLE_FLOAT_FORMAT,
    )
