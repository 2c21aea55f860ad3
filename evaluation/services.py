"""The ORM adapter of the scoring engine, and the writes of the evaluation app.

Reads judgments and runs from the database into the engine's plain arrays
(``evaluation.metrics``) and gives the scores of runs, kept in the database per run,
judgment version and configuration (``evaluation.score_store``), so a page always shows
scores of the current judgments; runs compared and ranked are in
``evaluation.comparing``, the pages' other reads in ``evaluation.selectors``, who may do
what in ``evaluation.access`` (which the writes here enforce).
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Mapping, Sequence

import numpy as np
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Max
from django.utils import timezone
from django.utils.translation import gettext

from annotate import edits, judging, matching
from annotate.models import AnswerString, Collection, JudgmentEvent, Question, Source
from config.bulk import Progress, gc_paused, ids_in, insert_rows, temp_rows
from evaluation.analysis.score_config import ScoreConfig
from evaluation.metrics import (
    InputError,
    Issue,
    Judgments,
    Ranking,
)
from evaluation.metrics.errors import merge_issues
from evaluation.metrics.normalize import normalize_many
from evaluation.metrics.parsers import (
    RunRow,
    detect_run_format,
    rows_ranking,
    run_answer_lines,
    run_rows,
)
from jobs.runner import queue_is_immediate

from . import score_store
from .access import require_may_change, require_may_submit
from .models import Run, RunAnswer

# ``progress(done, total, unit)``: how a long write tells its job how far it has come (a
# job's ``ctx.progress``; it raises to cancel, which rolls the write back)


# -- reads --------------------------------------------------------------------------------
def judgment_stamp(collection: Collection) -> tuple[object, ...]:
    """Changes whenever a judgment of the collection changes (the reliability report's
    cache key): its judgment version, which every write of a judgment bumps
    (tests/evaluation/test_score_store.py checks each writer), and counts over its
    strings, which also catch a write made around the writers (the admin, a shell); 25 ms
    at size M.  The stored scores (``score_store``) go by the versions alone."""
    agg = AnswerString.objects.filter(question__collection=collection).aggregate(
        n=Count("id"), judged=Count("judged_at"), correct=Count("synset"), last=Max("judged_at")
    )
    version = (
        Collection.objects.filter(pk=collection.pk)
        .values_list("judgment_version", "judgments_changed_at")
        .first()
    )
    return (
        *version,
        agg["n"],
        agg["judged"],
        agg["correct"],
        agg["last"].isoformat() if agg["last"] else None,
    )


def collection_judgments(collection: Collection) -> Judgments:
    """The collection's judged strings as engine Judgments (``score_store.judgments_read``:
    unjudged strings left out, one row per spelling, keyed under the collection's mode)."""
    return score_store.judgments_read(collection)[0]


def run_ranking(run: Run) -> Ranking:
    """The run's answers as an engine Ranking (question by question, rank order)."""
    return score_store.run_ranking(run)


# run answers a web request may score (well under a second); more is a job's work
REQUEST_SCORING_ANSWERS = 50_000


def score_runs(
    collection: Collection,
    runs: Sequence[Run],
    config: ScoreConfig,
    *,
    in_request: bool = True,
) -> score_store.StoredScores:
    """Scores of ``runs`` under ``config`` for the current judgments, kept in the database
    per run, judgment version and configuration (``evaluation.score_store``): the engine's
    ``Scores`` figures, with each run's answer counts.  For a request (``in_request``),
    ``score_store.ScoresPending`` when that would score more than
    ``REQUEST_SCORING_ANSWERS`` run answers (after a judgments import, a change of mode or
    levels, an archive import): the page shows the progress of the job that scores them
    (``evaluation.score_jobs``).  Where no worker runs (the immediate task backend: tests,
    a deployment without one) the request scores them itself, as a job would."""
    budget = REQUEST_SCORING_ANSWERS if in_request and not queue_is_immediate() else None
    return score_store.run_scores(collection=collection, runs=runs, config=config, budget=budget)


# -- writes -------------------------------------------------------------------------------
def run_name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a run (it ends up in file names and download headers):
    control characters and line breaks are refused; None when it is fine."""
    bad = sorted({c for c in name if unicodedata.category(c) in ("Cc", "Zl", "Zp")})
    if bad:
        shown = ", ".join(f"U+{ord(c):04X}" for c in bad)
        return gettext(
            "the run name must not contain control characters or line breaks (%(characters)s)"
        ) % {"characters": shown}
    return None


@gc_paused()
def run_import(
    *,
    collection: Collection,
    owner: AbstractBaseUser,
    name: str,
    data: bytes,
    filename: str,
    description: str = "",
    fmt: str | None = None,
    progress: Progress | None = None,
) -> Run:
    """Parse, check and store a run, all or nothing.  Raises InputError listing every
    problem at once, sorted by line: a name already used in the collection, the file's own
    errors, answers for question ids the collection does not have, and for each question
    with more answers than the collection's maximum output size L' the line of its first
    answer too many.  A name taken by another upload after the check (two at once) is
    refused with the check's issue too, not a database error.  The owner submits the run:
    PermissionDenied, before anything is read, unless they may (``access.may_submit``:
    organizers always, participants while the collection is open for submissions), from
    the upload page, the API and ``manage.py import_run`` alike.  ``progress`` hears the
    lines read, then the answers stored."""
    require_may_submit(owner, collection)
    issues: list[Issue] = []
    name = name.strip()
    taken = Issue(
        filename,
        None,
        gettext("a run named %(name)s already exists in this collection; choose another name")
        % {"name": repr(name)},
    )
    if not name:
        issues.append(Issue(filename, None, gettext("the run needs a name")))
    elif problem := run_name_problem(name):
        issues.append(Issue(filename, None, problem))
    elif Run.objects.active().filter(collection=collection, name=name).exists():
        issues.append(taken)
    ranking, fmt, qids = _run_checked(
        collection=collection,
        data=data,
        filename=filename,
        name=name or "run",
        fmt=fmt,
        issues=issues,
        progress=progress,
    )
    try:
        with transaction.atomic():
            run = Run.objects.create(
                collection=collection,
                owner=owner,
                name=name,
                description=description,
                source_name=filename[:255],
                sha256=hashlib.sha256(data).hexdigest(),
                format=fmt,
            )
            _store_answers(run, ranking, qids, progress)
    except IntegrityError:
        # the name was free when checked, and another upload took it since (two uploads
        # of one name at once): the same refusal as the check's
        if Run.objects.active().filter(collection=collection, name=name).exists():
            raise InputError([taken]) from None
        raise
    return run


# a run file with more than questions x L' answer lines is refused before it is read line by
# line when it has more than twice as many, or 1,000 more if that is more
RUN_LINES_MARGIN = 1000


def _run_checked(
    *,
    collection: Collection,
    data: bytes,
    filename: str,
    name: str,
    fmt: str | None,
    issues: Sequence[Issue] = (),
    progress: Progress | None = None,
) -> tuple[Ranking, str, dict[str, int]]:
    """Parse ``data`` as a run of ``collection`` and check it against the collection; raise
    InputError listing ``issues`` and every problem of the file, by line.  Returns the
    ranking, its format and the collection's question id -> pk."""
    fmt = fmt or detect_run_format(data)
    qids = dict(Question.objects.filter(collection=collection).values_list("qid", "id"))
    limit = collection.max_output_size
    # a file with far more answer lines than a run of the collection may hold is refused
    # before it is read: reading 2 million lines only to report the first answer too many
    # takes seconds.  One slightly over still gets every error with its line, below.
    most = len(qids) * limit
    lines = run_answer_lines(data, fmt=fmt, more_than=most + max(most, RUN_LINES_MARGIN))
    if lines is not None and lines > most + max(most, RUN_LINES_MARGIN):
        raise InputError(
            merge_issues(
                filename,
                list(issues),
                [
                    Issue(
                        filename,
                        None,
                        gettext(
                            "the file has %(lines)s answer lines; a run of this collection "
                            "holds at most %(most)s answers (%(questions)s questions x L' = "
                            "%(limit)s): refused without reading further"
                        )
                        % {
                            "lines": f"{lines:,}",
                            "most": f"{most:,}",
                            "questions": f"{len(qids):,}",
                            "limit": limit,
                        },
                    )
                ],
            )
        )
    # read once, line by line: the rows, and every error of the file with its line number
    rows, parse_issues = run_rows(data, filename=filename, fmt=fmt, progress=progress)
    row_issues = run_row_issues(rows, qids, limit, filename)
    if parse_issues or row_issues:
        raise InputError(merge_issues(filename, list(issues), parse_issues, row_issues))
    if issues:
        raise InputError(list(issues))
    return rows_ranking(rows, fmt=fmt, filename=filename, name=name), fmt, qids


def _store_answers(
    run: Run, ranking: Ranking, qids: Mapping[str, int], progress: Progress | None = None
) -> None:
    """Write the answers of ``ranking`` as the run's RunAnswers (keys in the collection's
    matching mode): one COPY on PostgreSQL (``config.bulk.insert_rows``)."""
    if progress is not None:
        progress(0, len(ranking), "answers")
    keys = normalize_many(ranking.text.tolist(), run.collection.matching_mode)
    rank = _positions(ranking.qid)
    scores = ranking.score.tolist() if ranking.score is not None else [None] * len(ranking)
    insert_rows(
        RunAnswer,
        ["run_id", "question_id", "rank", "text", "key", "score"],
        (
            (run.pk, qids[q], r, t, k, None if s is None or s != s else float(s))
            for q, r, t, k, s in zip(
                ranking.qid.tolist(), rank, ranking.text.tolist(), keys, scores, strict=True
            )
        ),
    )
    if progress is not None:
        progress(len(ranking), len(ranking), "answers")


def _run_record(run: Run, answers: int) -> dict[str, object]:
    return {
        "run": run.pk,
        "run_name": run.name,
        "owner": run.owner.get_username(),
        "source_name": run.source_name,
        "sha256": run.sha256,
        "format": run.format,
        "answers": answers,
    }


@transaction.atomic
def run_withdraw(*, run: Run, by: AbstractBaseUser) -> Run:
    """Withdraw ``run`` (a soft delete): it keeps its record and answers but leaves every
    list, ranking, comparison, pooling and API listing, and its name is free again.  Who:
    see ``access.run_may_change`` (PermissionDenied otherwise).  Writes one JudgmentEvent
    ``withdraw_run``; the scores' cache keys name the runs scored, so no cached score of
    the run is read again."""
    run = Run.objects.select_for_update().select_related("collection", "owner").get(pk=run.pk)
    require_may_change(run, by)
    answers = run.answers.count()
    run.withdrawn_at = timezone.now()
    run.withdrawn_by = by
    run.save(update_fields=["withdrawn_at", "withdrawn_by"])
    JudgmentEvent.objects.create(
        collection=run.collection,
        question=None,
        user=by,
        action="withdraw_run",
        before=_run_record(run, answers),
        after={"run": run.pk, "withdrawn_at": run.withdrawn_at.isoformat()},
    )
    return run


@gc_paused()
def run_replace(
    *,
    run: Run,
    data: bytes,
    filename: str,
    by: AbstractBaseUser,
    fmt: str | None = None,
    progress: Progress | None = None,
) -> Run:
    """Replace the answers of ``run`` by the file ``data``, all or nothing: the file goes
    through the checks of an upload (``run_import``) and on any problem InputError lists
    them all by line and nothing changes.  Who: see ``access.run_may_change``.  Writes one
    JudgmentEvent ``replace_run`` with the old and new file's digest, name and answer
    count; the new digest changes the scores' cache key."""
    run = Run.objects.select_related("collection", "owner").get(pk=run.pk)
    require_may_change(run, by)
    ranking, fmt, qids = _run_checked(
        collection=run.collection,
        data=data,
        filename=filename,
        name=run.name,
        fmt=fmt,
        progress=progress,
    )
    with transaction.atomic():
        run = Run.objects.select_for_update().select_related("collection", "owner").get(pk=run.pk)
        require_may_change(run, by)
        before = _run_record(run, run.answers.count())
        run.answers.all().delete()
        run.source_name = filename[:255]
        run.sha256 = hashlib.sha256(data).hexdigest()
        run.format = fmt
        run.save(update_fields=["source_name", "sha256", "format"])
        _store_answers(run, ranking, qids, progress)
        JudgmentEvent.objects.create(
            collection=run.collection,
            question=None,
            user=by,
            action="replace_run",
            before=before,
            after=_run_record(run, len(ranking)),
        )
    return run


def run_row_issues(
    rows: Sequence[RunRow], qids: Mapping[str, int], limit: int, filename: str
) -> list[Issue]:
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
            out.append(
                Issue(
                    filename,
                    r.line,
                    gettext("question %(qid)s is not in this collection") % {"qid": repr(q)},
                )
            )
            continue
        seen[q] = seen.get(q, 0) + 1
        if seen[q] == limit + 1:
            out.append(
                Issue(
                    filename,
                    r.line,
                    gettext(
                        "question %(qid)s has more than %(limit)s answers, the collection's "
                        "maximum output size L' (%(total)s answers; this line is answer "
                        "%(this)s)"
                    )
                    % {"qid": repr(q), "limit": limit, "total": total[q], "this": limit + 1},
                )
            )
    return out


def _positions(qid: np.ndarray) -> list[int]:
    """1-based position of each row within its question (rows grouped by question)."""
    out, last, n = [], None, 0
    for q in qid.tolist():
        n = n + 1 if q == last else 1
        last = q
        out.append(n)
    return out


@gc_paused()
@transaction.atomic
def run_pool(
    *, run: Run, by: AbstractBaseUser | None = None, progress: Progress | None = None
) -> int:
    """Send the run's answers that nobody has judged to the assessors' pool: every distinct
    normalized answer of ``run`` (ranks up to the collection's L') that is not yet a string
    of its question is added unjudged (source ``pool``), through the annotation app's
    ``strings_add_unjudged``; a question marked done that gains one is reopened.  Returns
    the number of strings added; writes one JudgmentEvent.  A withdrawn run is refused
    (PermissionDenied)."""
    if run.withdrawn_at is not None:
        raise PermissionDenied(gettext("This run has been withdrawn; its answers are not pooled."))
    return _runs_pool(collection=run.collection, runs=[run], by=by, progress=progress)[0]


@gc_paused()
@transaction.atomic
def runs_pool(
    *, collection: Collection, by: AbstractBaseUser | None = None, progress: Progress | None = None
) -> int:
    """Pool every run of ``collection`` that is not withdrawn, in upload order: the strings,
    events and reopened questions of ``run_pool`` called on each run in turn (each run
    sees the strings the runs before it added), in one transaction and one pass over the
    answers.  Returns the number of strings added."""
    return sum(
        added for _, added in runs_pool_each(collection=collection, by=by, progress=progress)
    )


@transaction.atomic
def runs_pool_each(
    *, collection: Collection, by: AbstractBaseUser | None = None, progress: Progress | None = None
) -> list[tuple[Run, int]]:
    """``runs_pool``, with each run (in upload order) and the strings it added."""
    runs = list(Run.objects.active().filter(collection=collection).order_by("pk"))
    added = _runs_pool(collection=collection, runs=runs, by=by, progress=progress)
    return list(zip(runs, added, strict=True))


# pooling orders a run's answers by (run, rank) as one number: run position x this + rank
_RANKS = 100_000


def _runs_pool(
    *,
    collection: Collection,
    runs: Sequence[Run],
    by: AbstractBaseUser | None,
    progress: Progress | None,
) -> list[int]:
    """Pool ``runs`` (of ``collection``) one after the other: each distinct (question, key,
    spelling) of their answers up to L' is read once, from the first run (in ``runs``
    order) and rank that has it -- a later row of the same spelling adds nothing -- so the
    batches ``strings_add_unjudged_batches`` takes are each run's answers as ``run_pool``
    of that run would read them, less the spellings an earlier run already gave."""
    limit = collection.max_output_size
    qn = connection.ops.quote_name
    order = " ".join("WHEN %s THEN %s" for _ in runs)
    with connection.cursor() as cur:
        if connection.vendor == "postgresql":
            # the grouping's hash table in memory rather than in batches on disk
            cur.execute("SET LOCAL work_mem = '64MB'")
        # ordered as the batches are read: run, then question, then rank
        cur.execute(
            'SELECT "q", "k", "t", "pos" FROM ('
            f'SELECT a."question_id" AS "q", a."key" AS "k", a."text" AS "t", '
            f'MIN((CASE a."run_id" {order} END) * {_RANKS} + a."rank") AS "pos" '
            f"FROM {qn(RunAnswer._meta.db_table)} a "
            f'WHERE a."run_id" IN ({", ".join(["%s"] * len(runs))}) '
            f"AND a.{qn('rank')} <= %s AND a.{qn('key')} <> '' "
            f'GROUP BY a."question_id", a."key", a."text"'
            f') pooled ORDER BY "pos" / {_RANKS}, "q", "pos" - "pos" / {_RANKS} * {_RANKS}',
            [v for i, r in enumerate(runs) for v in (r.pk, i)] + [r.pk for r in runs] + [limit],
        )
        rows = cur.fetchall()
    batches: list[list[tuple[int, str, str]]] = [[] for _ in runs]
    for q, key, text, first in rows:
        batches[first // _RANKS].append((q, key, text))

    def pooled(i: int, done: judging.StringsAdded) -> None:
        run = runs[i]
        if done.questions:
            edits.collection_judgments_changed(collection_id=collection.pk)
        JudgmentEvent.objects.create(
            collection=collection,
            question=None,
            user=by,
            action="pool_run",
            after={
                "run": run.pk,
                "run_name": run.name,
                "added": done.added,
                "questions": len(done.questions),
                "spellings": done.spellings,
                "reopened": len(done.reopened),
            },
        )
        if progress is not None:
            progress(i + 1, len(runs), "runs")

    added = judging.strings_add_unjudged_batches(
        batches=[
            (rows, f"answers of run {run.name} pooled")
            for rows, run in zip(batches, runs, strict=True)
        ],
        source=Source.POOL,
        by=by,
        after_batch=pooled,
    )
    return [a.added for a in added]


@gc_paused()
@transaction.atomic
def collection_matching_mode_change(
    *,
    collection: Collection,
    mode: str,
    by: AbstractBaseUser | None,
    progress: Callable[[int, int | None, str], None] | None = None,
) -> int:
    """Change ``collection``'s matching mode (DESIGN.md section 4), the one way to change
    it: annotate's ``collection_set_matching_mode`` re-keys every spelling of its strings
    and folds strings that now share a key (MatchingModeConflict, nothing written, when
    they are judged differently), then every run answer is re-keyed, in one transaction.
    ``progress(done, total, unit)`` hears each of the two steps done (a job's bar).
    Returns the number of strings folded."""
    folded = matching.collection_set_matching_mode(collection=collection, mode=mode, by=by)
    if progress is not None:
        progress(1, 2, "steps")
    run_answers_rekey(collection=collection, mode=mode)
    if progress is not None:
        progress(2, 2, "steps")
    return folded


def run_answers_rekey(
    *, collection: Collection, mode: str, progress: Progress | None = None
) -> int:
    """Re-key every run answer of ``collection`` under matching ``mode`` with the engine's
    key function: each distinct answer text keyed once, in Python (a key depends on the
    text and the mode only), and the keys of the texts some answer holds another key of
    written by one ``UPDATE ... FROM`` a temporary table of (text, key), hash-joined on the
    text, to the answers whose key changes only, in the caller's transaction (none: no
    statement).  The join is cheap (3 s of the statement's 10 at 2 million answers); the
    writes are what cost, and no index holds the key and the table keeps room on its pages
    (``RunAnswer``'s docstring), so on PostgreSQL each is a heap-only update, no index
    entry written: bench/mode_change_bench.py.  Returns how many answers changed."""
    run_ids = list(Run.objects.filter(collection=collection).values_list("pk", flat=True))
    answers = RunAnswer.objects.filter(run_id__in=ids_in(run_ids)).order_by()
    held: dict[str, set[str]] = {}
    for text, key in answers.values_list("text", "key").distinct():
        held.setdefault(text, set()).add(key)
    texts = list(held)
    keys = normalize_many(texts, mode)
    if progress is not None:
        progress(len(texts), len(texts), "answer texts keyed")
    rows = [(t, k) for t, k in zip(texts, keys, strict=True) if held[t] != {k}]
    if not rows:
        return 0
    table = connection.ops.quote_name(RunAnswer._meta.db_table)
    # the collection's runs as an array on PostgreSQL: a filter of the scan, where a
    # subquery of the runs was one more hash join of every answer (half a second at M)
    runs, params = (
        ("= ANY(%s::bigint[])", [run_ids])
        if connection.vendor == "postgresql"
        else (f"IN ({', '.join(['%s'] * len(run_ids))})", run_ids)
    )
    with transaction.atomic():
        if connection.vendor == "postgresql":
            # the join's hash table of (text, key) in memory rather than in batches on disk
            with connection.cursor() as cur:
                cur.execute("SET LOCAL work_mem = '64MB'")
        with temp_rows([("text", "text"), ("key", "text")], rows, index=["text"]) as t:
            with connection.cursor() as cur:
                cur.execute(
                    f'UPDATE {table} SET "key" = {t}."key" FROM {t} '
                    f'WHERE {table}."text" = {t}."text" AND {table}."key" <> {t}."key" '
                    f'AND {table}."run_id" {runs}',
                    params,
                )
                return cur.rowcount
