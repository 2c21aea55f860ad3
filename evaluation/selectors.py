"""Reads of the evaluation pages and the API: runs a user may see, per-question counts and
texts (a run's score table with L and R), the marks of a run's answers, unjudged answers.
Each is a fixed number of queries whatever the size of the collection; scores themselves
come from ``evaluation.services``, the one run a user may open from ``evaluation.access``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pandas as pd
from django.db import connection
from django.db.models import Count, Exists, Min, OuterRef, Q, QuerySet

from annotate.models import AnswerSynset, Collection, JudgmentEvent, Question, SpellingKey
from annotate.selectors import synset_labels

from .models import Run, RunAnswer
from .score_store import StoredScores


def level_gains(collection: Collection) -> list[tuple[str, float]]:
    """The collection's levels as (code, gain), highest first."""
    return list(collection.levels.order_by("order").values_list("code", "gain"))


def visible_runs(*, user: Any, collection: Collection | None = None) -> QuerySet[Run]:
    """Runs ``user`` may see (of ``collection``, or of every collection), by name."""
    return (
        Run.objects.visible_to(user, collection)
        .select_related("collection", "owner")
        .order_by("collection__name", "name")
    )


def withdrawn_runs(collection: Collection) -> list[Run]:
    """The collection's withdrawn runs, last withdrawn first (for its organizers)."""
    return list(
        Run.objects.filter(collection=collection, withdrawn_at__isnull=False)
        .select_related("owner", "withdrawn_by")
        .order_by("-withdrawn_at")
    )


def run_history(run: Run) -> list[dict[str, Any]]:
    """The run's file replacements and poolings from the audit trail, newest first: when,
    who, what, and for a replacement the old and new file, digest and answer count."""
    events = (
        JudgmentEvent.objects.filter(collection=run.collection)
        .filter(
            Q(action="replace_run", before__run=run.pk) | Q(action="pool_run", after__run=run.pk)
        )
        .select_related("user")
        .order_by("-id")
    )
    return [
        {
            "at": e.created_at,
            "user": e.user.get_username() if e.user_id else "",
            "action": e.action,
            "before": e.before,
            "after": e.after,
        }
        for e in events
    ]


def question_texts(collection: Collection) -> dict[str, str]:
    """Question id -> question text, for every question of the collection."""
    return dict(Question.objects.filter(collection=collection).values_list("qid", "text"))


def synsets_of(collection: Collection) -> dict[int, int]:
    """Question id (pk) -> number of answer synsets (R), for the collection's questions
    that have one (by the collection, not by a list of its 2,000 question ids: the query
    is the same work for the database and a fifth of the time for the page)."""
    return dict(
        AnswerSynset.objects.filter(question__collection=collection)
        .values("question_id")
        .order_by()
        .annotate(n=Count("id"))
        .values_list("question_id", "n")
    )


def question_table(collection: Collection, scores: StoredScores, run: Run) -> pd.DataFrame:
    """Per question ``run`` is scored on in ``scores``: L (the run's answers to it), R (its
    synsets) and each metric, as the run page, its CSV and the API show them."""
    table = scores.per_question[run.name].copy()
    synsets = synsets_of(collection)
    table.insert(0, "R", [synsets.get(q, 0) for q in scores.question_ids.tolist()])
    table.insert(0, "L", scores.answers_per_question(run.name).tolist())
    return table


def marks_by_question(
    scores: StoredScores, run_name: str, qids: Iterable[str], *, collection: Collection
) -> dict[str, list[dict[str, Any]]]:
    """Per question of ``qids``: the run's marked answers, each with its rank, the synset's
    number and, for an imported synset, its id in the file (``label``)."""
    return marks_of_runs(scores, [run_name], qids, collection=collection)[run_name]


def marks_of_runs(
    scores: StoredScores, run_names: Sequence[str], qids: Iterable[str], *, collection: Collection
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``marks_by_question`` of several runs at once: run name -> question id -> marks
    (marked again on those questions alone: ``StoredScores.marks``)."""
    qids = list(qids)
    out: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name in run_names}
    if not qids:
        return out
    f = scores.marks(list(run_names), qids)
    labels = synset_labels(collection, qids) if len(f) else {}
    for r in f.itertuples():
        out[r.run].setdefault(r.question_id, []).append(
            {
                "rank": r.rank,
                "answer": r.answer,
                "synset": r.synset,
                "level": r.level,
                "label": labels.get((r.question_id, str(r.synset)), ""),
                "status": r.status,
            }
        )
    return out


def run_answer_stats(runs: Sequence[Run]) -> dict[int, dict[str, int]]:
    """Per run id: questions answered and answers in total (one query over every answer
    of the runs: the pages read ``StoredScores.counts`` instead)."""
    rows = (
        RunAnswer.objects.filter(run__in=runs)
        .values("run_id")
        .annotate(answers=Count("id"), questions=Count("question", distinct=True))
    )
    return {r["run_id"]: r for r in rows}


def _judged_string() -> QuerySet[SpellingKey]:
    """The key of a judged string that a run answer matches, by any of the string's
    spellings (an empty key is never stored: it matches nothing)."""
    return SpellingKey.objects.filter(
        question=OuterRef("question"), key=OuterRef("key"), string__judged_at__isnull=False
    )


def unjudged_counts(runs: Sequence[Run]) -> dict[int, int]:
    """Per run id: answers whose string no assessor has judged (one query over every
    answer of the runs: the pages read ``StoredScores.counts``, which count the same)."""
    rows = (
        RunAnswer.objects.filter(run__in=runs)
        .filter(~Exists(_judged_string()))
        .values("run_id")
        .annotate(n=Count("id"))
    )
    return {r["run_id"]: r["n"] for r in rows}


def _unjudged_grouped(run: Run) -> QuerySet[RunAnswer]:
    """The run's distinct unjudged answers (by question and key): best rank, a spelling,
    and whether a string of the question has the key (in the assessors' pool)."""
    strings = SpellingKey.objects.filter(question=OuterRef("question"), key=OuterRef("key"))
    return (
        RunAnswer.objects.filter(run=run)
        .filter(~Exists(_judged_string()))
        .values("question_id", "key")
        .annotate(rank=Min("rank"), text=Min("text"))
        .annotate(pooled=Exists(strings))
    )


def unjudged_answers(run: Run, *, limit: int | None = None) -> list[dict[str, Any]]:
    """The run's distinct unjudged answers (the first ``limit``): question id, answer, best
    rank, and whether it is in the assessors' pool already (``pooled``: a string of its
    question has its key) or could be sent there (``poolable``: not pooled, best rank
    within the collection's L', a key that is not empty), in question order (one
    query)."""
    rows = (
        _unjudged_grouped(run)
        .values("question_id", "question__qid", "key", "rank", "text", "pooled")
        .order_by("question_id", "rank")
    )
    if limit is not None:
        rows = rows[:limit]
    most = run.collection.max_output_size
    return [
        {
            "question_id": r["question__qid"],
            "answer": r["text"],
            "rank": r["rank"],
            "pooled": r["pooled"],
            # an answer with an empty key ("?" under squad matching) matches nothing: it
            # is never pooled
            "poolable": not r["pooled"] and r["rank"] <= most and r["key"] != "",
            "empty_key": r["key"] == "",
        }
        for r in rows
    ]


def pool_counts(run: Run) -> dict[str, int]:
    """Counts of the run's ``unjudged_answers``: not judged, waiting in the pool, not yet
    pooled (that could be), counted in the database (one query: a run of a campaign has
    thousands; the ORM does not aggregate over a grouped query's annotations, hence the
    query around its SQL)."""
    sql, params = _unjudged_grouped(run).order_by().query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*),"
            ' COALESCE(SUM(CASE WHEN g."pooled" THEN 1 ELSE 0 END), 0),'
            ' COALESCE(SUM(CASE WHEN NOT g."pooled" AND g."rank" <= %s AND g."key" <> %s'
            " THEN 1 ELSE 0 END), 0)"
            f" FROM ({sql}) g",
            [run.collection.max_output_size, "", *params],
        )
        unjudged, pooled, to_pool = cursor.fetchone()
    return {"unjudged": unjudged, "pooled": pooled, "to_pool": to_pool}
