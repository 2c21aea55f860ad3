"""The ORM adapter of the scoring engine, and the writes of the evaluation app.

Reads judgments and runs from the database into the engine's plain arrays
(``evaluation.metrics``), scores them, and caches the result under the collection's
judgment version, so a page always shows scores of the current judgments.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from django.core.cache import caches
from django.db import transaction
from django.db.models import Count, Exists, Max, Min, OuterRef

from annotate import services as annotate_services
from annotate.models import AnswerString, Collection, JudgmentEvent, Question, Source
from evaluation.metrics import (
    DEFAULT_METRICS,
    GainProfile,
    InputError,
    Issue,
    Judgments,
    Ranking,
    Scores,
    evaluate,
    parse_gains,
    parse_metrics,
)
from evaluation.metrics.errors import merge_issues
from evaluation.metrics.gains import check_parameters
from evaluation.metrics.normalize import normalize_many
from evaluation.metrics.parsers import RunRow, detect_run_format, parse_run, run_rows

from .models import Run, RunAnswer


@dataclass(frozen=True)
class ScoreConfig:
    """What a score page is computed with (kept in the URL so a view can be shared)."""

    metrics: tuple[str, ...] = DEFAULT_METRICS
    gains: str = "default"
    beta: float = 1.0
    rbp_p: float = 0.5

    def profile(self) -> GainProfile:
        return parse_gains(None if self.gains == "default" else self.gains)

    def key(self) -> str:
        return f"{','.join(self.metrics)}|{self.gains}|{self.beta!r}|{self.rbp_p!r}"


def check_config(*, metrics: Sequence[str], gains: str, beta: float, rbp_p: float,
                 levels: Sequence[str]) -> ScoreConfig:
    """Validate a configuration against a collection's levels; raise ValueError."""
    names = tuple(parse_metrics(list(metrics)))
    profile = parse_gains(None if gains == "default" else gains)
    profile.resolve(tuple(levels), [1.0] * len(levels))  # raises on a mismatch
    check_parameters(beta=beta, rbp_p=rbp_p)
    return ScoreConfig(names, gains, float(beta), float(rbp_p))


# -- reads --------------------------------------------------------------------------------
def judgment_stamp(collection: Collection) -> tuple:
    """Changes whenever a judgment of the collection changes (the cache key of scores)."""
    agg = AnswerString.objects.filter(question__collection=collection).aggregate(
        n=Count("id"), judged=Count("judged_at"), correct=Count("synset"), last=Max("judged_at"))
    version = (Collection.objects.filter(pk=collection.pk)
               .values_list("judgment_version", "judgments_changed_at").first())
    return (*version, agg["n"], agg["judged"], agg["correct"],
            agg["last"].isoformat() if agg["last"] else None)


def collection_judgments(collection: Collection) -> Judgments:
    """The collection's judged strings as engine Judgments (unjudged strings left out;
    a question counts as judged when at least one of its strings is judged)."""
    levels = list(collection.levels.order_by("order").values_list("code", "gain"))
    rows = list(AnswerString.objects.filter(question__collection=collection,
                                            judged_at__isnull=False)
                .order_by("question_id", "id")
                .values_list("question__qid", "synset__ordinal", "text", "level__code"))
    order = [qid for qid in Question.objects.filter(collection=collection).order_by("id")
             .values_list("qid", flat=True)]
    judged = {r[0] for r in rows}
    return Judgments.build(
        qids=[r[0] for r in rows],
        synsets=[str(r[1]) if r[1] is not None else None for r in rows],
        texts=[r[2] for r in rows], levels_of=[r[3] for r in rows],
        levels=[code for code, _ in levels] or ["S"], gains=[g for _, g in levels] or [1.0],
        match=collection.matching_mode, nil_rule=True,
        question_order=[q for q in order if q in judged], file=f"collection {collection.slug}",
    )


def run_ranking(run: Run) -> Ranking:
    rows = list(RunAnswer.objects.filter(run=run).order_by("question_id", "rank")
                .values_list("question__qid", "text"))
    return Ranking(run.name, np.asarray([r[0] for r in rows], dtype=object),
                   np.asarray([r[1] for r in rows], dtype=object))


def score_runs(collection: Collection, runs: Sequence[Run], config: ScoreConfig) -> Scores:
    """Scores of ``runs`` under ``config`` for the current judgments (cached per judgment
    version, runs and configuration)."""
    runs = list(runs)
    key = "scores:" + hashlib.sha256(repr((
        collection.pk, judgment_stamp(collection), [(r.pk, r.sha256) for r in runs],
        config.key())).encode()).hexdigest()
    cache = caches["scores"]
    scores = cache.get(key)
    if scores is None:
        judgments = collection_judgments(collection)
        scores = evaluate(judgments, [run_ranking(r) for r in runs], config.metrics,
                          gains=config.profile(), beta=config.beta, rbp_p=config.rbp_p)
        cache.set(key, scores, 600)
    return scores


def run_answer_stats(runs: Sequence[Run]) -> dict[int, dict]:
    """Per run: questions answered and answers in total (one query)."""
    rows = (RunAnswer.objects.filter(run__in=runs).values("run_id")
            .annotate(answers=Count("id"), questions=Count("question", distinct=True)))
    return {r["run_id"]: r for r in rows}


def _judged_string():
    return AnswerString.objects.filter(question=OuterRef("question"), key=OuterRef("key"),
                                       judged_at__isnull=False)


def unjudged_counts(runs: Sequence[Run]) -> dict[int, int]:
    """Per run: answers whose string no assessor has judged (one query)."""
    rows = (RunAnswer.objects.filter(run__in=runs).filter(~Exists(_judged_string()))
            .values("run_id").annotate(n=Count("id")))
    return {r["run_id"]: r["n"] for r in rows}


def unjudged_answers(run: Run) -> list[dict]:
    """The run's distinct unjudged answers: question id, answer, best rank, and whether it
    is in the assessors' pool already (``pooled``: a string of its question has its key)
    or could be sent there (``poolable``: not pooled, best rank within the collection's
    L'), in question order (one query)."""
    strings = AnswerString.objects.filter(question=OuterRef("question"), key=OuterRef("key"))
    rows = (RunAnswer.objects.filter(run=run).filter(~Exists(_judged_string()))
            .values("question_id", "question__qid", "key").annotate(rank=Min("rank"),
                                                                    text=Min("text"))
            .annotate(pooled=Exists(strings))
            .order_by("question_id", "rank"))
    limit = run.collection.max_output_size
    return [{"question_id": r["question__qid"], "answer": r["text"], "rank": r["rank"],
             "pooled": r["pooled"], "poolable": not r["pooled"] and r["rank"] <= limit}
            for r in rows]


def pool_counts(unjudged: Sequence[dict]) -> dict[str, int]:
    """Counts of ``unjudged_answers``: not judged, waiting in the pool, not yet pooled."""
    return {"unjudged": len(unjudged),
            "pooled": sum(1 for u in unjudged if u["pooled"]),
            "to_pool": sum(1 for u in unjudged if u["poolable"])}


# -- writes -------------------------------------------------------------------------------
def run_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a run (it ends up in file names and download headers):
    control characters and line breaks are refused; None when it is fine."""
    bad = sorted({c for c in name if unicodedata.category(c) in ("Cc", "Zl", "Zp")})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        return f"the run name must not contain control characters or line breaks ({shown})"
    return None


def run_import(*, collection: Collection, owner, name: str, data: bytes, filename: str,
               description: str = "", fmt: str | None = None) -> Run:
    """Parse, check and store a run, all or nothing.  Raises InputError listing every
    problem at once, sorted by line: a name already used in the collection, the file's own
    errors, answers for question ids the collection does not have, and for each question
    with more answers than the collection's maximum output size L' the line of its first
    answer too many."""
    issues: list[Issue] = []
    name = name.strip()
    if not name:
        issues.append(Issue(filename, None, "the run needs a name"))
    elif problem := run_name_problem(name):
        issues.append(Issue(filename, None, problem))
    elif Run.objects.filter(collection=collection, name=name).exists():
        issues.append(Issue(filename, None, f"a run named {name!r} already exists in this "
                                            "collection; choose another name"))
    fmt = fmt or detect_run_format(data)
    qids = dict(Question.objects.filter(collection=collection).values_list("qid", "id"))
    limit = collection.max_output_size
    try:
        ranking = parse_run(data, filename=filename, name=name or "run", fmt=fmt)
    except InputError:
        ranking = None
    if ranking is None or not _run_fits(ranking, qids, limit):
        # read it again line by line: every error of the file with its line number
        rows, parse_issues = run_rows(data, filename=filename, fmt=fmt)
        raise InputError(merge_issues(filename, issues, parse_issues,
                                      run_row_issues(rows, qids, limit, filename)))
    if issues:
        raise InputError(issues)
    keys = normalize_many(ranking.text.tolist(), collection.matching_mode)
    with transaction.atomic():
        run = Run.objects.create(collection=collection, owner=owner, name=name,
                                 description=description, source_name=filename[:255],
                                 sha256=hashlib.sha256(data).hexdigest(), format=fmt)
        rank = _positions(ranking.qid)
        scores = ranking.score if ranking.score is not None else [None] * len(ranking)
        RunAnswer.objects.bulk_create(
            (RunAnswer(run=run, question_id=qids[q], rank=int(r), text=t, key=k,
                       score=None if s is None or s != s else float(s))
             for q, r, t, k, s in zip(ranking.qid.tolist(), rank, ranking.text.tolist(), keys,
                                      scores, strict=True)),
            batch_size=5000)
    return run


def _run_fits(ranking: Ranking, qids: dict, limit: int) -> bool:
    """Every question of the run is the collection's and has at most ``limit`` answers."""
    counts = pd.Series(ranking.qid, dtype=object).value_counts()
    return bool(counts.index.isin(list(qids)).all() and (counts <= limit).all())


def run_row_issues(rows: Sequence[RunRow], qids, limit: int, filename: str) -> list[Issue]:
    """A run's rows checked against a collection (rows in file order): each answer for a
    question id the collection does not have, and for each question with more than
    ``limit`` answers the line of its first answer too many."""
    total: dict[str, int] = {}
    for r in rows:
        total[r.question_id] = total.get(r.question_id, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for r in rows:
        q = r.question_id
        if q not in qids:
            out.append(Issue(filename, r.line, f"question {q!r} is not in this collection"))
            continue
        seen[q] = seen.get(q, 0) + 1
        if seen[q] == limit + 1:
            out.append(Issue(filename, r.line, (
                f"question {q!r} has more than {limit} answers, the collection's maximum "
                f"output size L' ({total[q]} answers; this line is answer {limit + 1})")))
    return out


def _positions(qid: np.ndarray) -> list[int]:
    """1-based position of each row within its question (rows grouped by question)."""
    out, last, n = [], None, 0
    for q in qid.tolist():
        n = n + 1 if q == last else 1
        last = q
        out.append(n)
    return out


@transaction.atomic
def run_pool(*, run: Run, by=None) -> int:
    """Send the run's answers that nobody has judged to the assessors' pool: every distinct
    normalized answer of ``run`` (ranks up to the collection's L') that is not yet a string
    of its question is added unjudged (source ``pool``), through the annotation app's
    ``strings_add_unjudged``; a question marked done that gains one is reopened.  Returns
    the number of strings added; writes one JudgmentEvent."""
    collection = run.collection
    rows = list(RunAnswer.objects.filter(run=run, rank__lte=collection.max_output_size)
                .order_by("question_id", "rank").values_list("question_id", "key", "text"))
    done = annotate_services.strings_add_unjudged(
        rows=rows, source=Source.POOL, by=by, reason=f"answers of run {run.name} pooled")
    if done.questions:
        annotate_services.collection_judgments_changed(collection_id=collection.pk)
    JudgmentEvent.objects.create(
        collection=collection, question=None, user=by, action="pool_run",
        after={"run": run.pk, "run_name": run.name, "added": done.added,
               "questions": len(done.questions), "spellings": done.spellings,
               "reopened": len(done.reopened)})
    return done.added


@transaction.atomic
def collection_matching_mode_change(*, collection: Collection, mode: str, by) -> int:
    """Change ``collection``'s matching mode (DESIGN.md section 4): its strings are re-keyed
    and agreeing spellings folded by annotate's ``collection_set_matching_mode`` (which
    raises MatchingModeConflict, nothing written, when spellings that become one string
    are judged differently), then every run answer of the collection is re-keyed with the
    same engine function.  Returns the number of strings folded."""
    folded = annotate_services.collection_set_matching_mode(collection=collection, mode=mode,
                                                            by=by)
    answers = list(RunAnswer.objects.filter(run__collection=collection)
                   .values_list("pk", "text", "key"))
    keys = normalize_many([text for _, text, _ in answers], mode)
    RunAnswer.objects.bulk_update(
        [RunAnswer(pk=pk, key=k) for (pk, _, old), k in zip(answers, keys, strict=True)
         if k != old], ["key"], batch_size=5000)
    return folded
