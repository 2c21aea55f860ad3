"""Scores kept in the database per run, judgments and configuration (issue 24; DESIGN.md
section 8), so that the runs, run, compare and ranking pages read them instead of reading
every run answer again and scoring on each view.

A run's scores on a question depend on the run's answers to it (``Run.sha256`` names
them), the question's judgments, the collection's matching mode and levels, and the
configuration.  A ``RunScores`` row holds one run's per-question scores and answer counts
under one configuration against a ``ScoreBasis``: the collection's judgment version then,
and the version of each of its questions.  Every write of a judgment bumps the
collection's judgment version and the version of each question it changed
(``annotate.edits``, ``annotate.judgments_plan``; tests/evaluation/test_score_store.py checks
every writer), so once the collection's version has moved on, the questions whose version
changed are the only ones whose scores may have changed -- unless the matching mode or the
levels changed (the basis's ``signature``): then every question.  A view

- reads the stored rows of its runs and configuration (one query, no run answer);
- scores again only the questions changed since (their judgments and the runs' answers to
  them) and patches them in; once that is more than ``MAX_DELTA_ANSWERS`` answers, or a
  run has no row yet (a new or replaced run, a configuration not asked for before), the
  rows are written again at the current version, patched (so adding a run scores that run
  only);
- scores every answer only of the runs without a row, and of every run after a change of
  matching mode or levels (``FULL_CHUNK_ANSWERS`` answers at a time).

The figures are the engine's to the last bit: a question's scores depend on its own
judgments and answers alone, so the scores of a subset of the questions are the scores of
the whole on them (the tests compare with one ``evaluate`` of everything).  Rows are
stored only when the collection's judgment version and the runs' digests are the same
after the reads as before them (a judgment write bumps the version in its own
transaction): scores are never stored under a version they were not computed from.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
from django.db import transaction
from django.db.models import Exists, Max, OuterRef, TextField
from django.db.models.functions import Cast

from annotate.models import AnswerString, Collection, Level, Question, SpellingKey
from evaluation.analysis.score_config import ScoreConfig
from evaluation.metrics import Judgments, Ranking, evaluate

from .models import Run, RunAnswer, RunScores, ScoreBasis

if TYPE_CHECKING:
    import pandas as pd

# answers a view re-reads to patch stored scores with the questions judged since, before
# it writes the patched rows at the current version instead
MAX_DELTA_ANSWERS = 20_000
# answers scored at once when a run is scored in full (peak memory, not speed)
FULL_CHUNK_ANSWERS = 250_000
# configurations kept per collection (each one row per run); the least recently computed go
MAX_CONFIGS = 16
ATTEMPTS = 3  # a judgment written during a view: read again, then score without storing


class ScoresPending(Exception):
    """Scoring ``collection``'s runs under ``config`` would read more answers (``answers``,
    at least) than the caller's ``budget`` allows: a web request leaves the work to a job
    (``evaluation.score_jobs``) and shows its progress instead of scoring for seconds."""

    def __init__(self, collection: Collection, config: ScoreConfig, answers: int) -> None:
        super().__init__(
            f"scoring {collection.slug} would read {answers:,} run answers; left to a job"
        )
        self.collection, self.config, self.answers = collection, config, answers


def config_digest(config: ScoreConfig) -> str:
    """The ``RunScores.config`` of ``config``."""
    return hashlib.sha256(config.key().encode()).hexdigest()


def _pack(a: np.ndarray) -> bytes:
    # level 1: a run's scores at size M shrink 3.5 times, in a millisecond
    return zlib.compress(np.ascontiguousarray(a).tobytes(), 1)


def _unpack(data: bytes | memoryview, dtype: type) -> np.ndarray:
    return np.frombuffer(zlib.decompress(bytes(data)), dtype=dtype)


# -- what the collection is now ---------------------------------------------------------------
@dataclass(frozen=True)
class _Now:
    version: int
    mode: str
    levels: tuple[tuple[str, float], ...]  # (code, gain), highest first
    signature: str


def _now(collection: Collection) -> _Now:
    version, mode = (
        Collection.objects.filter(pk=collection.pk)
        .values_list("judgment_version", "matching_mode")
        .get()
    )
    levels = tuple(
        Level.objects.filter(collection_id=collection.pk)
        .order_by("order")
        .values_list("code", "gain")
    )
    signature = hashlib.sha256(repr((mode, levels)).encode()).hexdigest()
    return _Now(version, mode, levels, signature)


@dataclass(frozen=True)
class _Stamps:
    """Every question of the collection: id and version (by id), and its question id."""

    pairs: np.ndarray  # int64 (2, questions)
    qid_of: dict[int, str]

    def changed_since(self, basis: ScoreBasis) -> np.ndarray:
        """Ids of the questions whose version is not the basis's (or that are new, or
        gone)."""
        old = _unpack(basis.stamps, np.int64).reshape(2, -1)
        if np.array_equal(old[0], self.pairs[0]):
            return self.pairs[0][old[1] != self.pairs[1]]
        before = set(zip(old[0].tolist(), old[1].tolist(), strict=True))
        now = set(zip(self.pairs[0].tolist(), self.pairs[1].tolist(), strict=True))
        return np.asarray(sorted({q for q, _ in before ^ now}), dtype=np.int64)


def _stamps(collection: Collection) -> _Stamps:
    rows = list(
        Question.objects.filter(collection_id=collection.pk)
        .order_by("pk")
        .values_list("pk", "version", "qid")
    )
    pairs = np.asarray([(r[0], r[1]) for r in rows], dtype=np.int64).reshape(-1, 2).T
    return _Stamps(np.ascontiguousarray(pairs), {r[0]: r[2] for r in rows})


# -- reading judgments and answers ----------------------------------------------------------
def judgments_read(
    collection: Collection, *, question_ids: Iterable[int] | None = None, now: _Now | None = None
) -> tuple[Judgments, np.ndarray]:
    """The collection's judged strings (of ``question_ids`` only, when given) as engine
    Judgments, and the ids of the judged questions in its order (question id order).
    Unjudged strings are left out; a question counts as judged when at least one of its
    strings is judged; one row per spelling, the text then the variants, with the
    string's judgment -- the rows its judgments export holds, so the collection scores as
    ``qa-score`` scores its export.  The engine keys them under the collection's mode as
    ``SpellingKey`` does, so a variant keyed apart by a switch of mode still matches
    (DESIGN.md section 4); spellings of one string that share a key fold there."""
    now = now or _now(collection)
    strings = AnswerString.objects.filter(judged_at__isnull=False)
    if question_ids is None:
        strings = strings.filter(question__collection_id=collection.pk)
    else:
        strings = strings.filter(question_id__in=list(question_ids))
    rows = []
    pk_of: dict[str, int] = {}
    # the variants as their JSON text: most strings have none ("[]"), and decoding each
    # row's list through the field cost more than the rest of the read at size M
    strings = strings.annotate(variants_json=Cast("variants", TextField()))
    fields = ("question_id", "question__qid", "synset__ordinal", "text", "level__code")
    for pk, qid, ordinal, text, level, variants in strings.order_by(
        "question_id", "id"
    ).values_list(*fields, "variants_json"):
        pk_of[qid] = pk
        rows.append((qid, ordinal, text, level))
        if variants and variants != "[]":
            for spelling in json.loads(variants):
                rows.append((qid, ordinal, spelling, level))
    order = list(pk_of)  # question id order: the rows are
    judgments = Judgments.build(
        qids=[r[0] for r in rows],
        synsets=[str(r[1]) if r[1] is not None else None for r in rows],
        texts=[r[2] for r in rows],
        levels_of=[r[3] for r in rows],
        levels=[code for code, _ in now.levels] or ["S"],
        gains=[g for _, g in now.levels] or [1.0],
        match=now.mode,
        nil_rule=True,
        question_order=order,
        file=f"collection {collection.slug}",
    )
    return judgments, np.asarray([pk_of[q] for q in order], dtype=np.int64)


def _judged_keys(
    collection: Collection, question_ids: Iterable[int] | None
) -> set[tuple[int, str]]:
    """(question id, key) of every spelling of a judged string (``SpellingKey``)."""
    keys = SpellingKey.objects.filter(string__judged_at__isnull=False)
    if question_ids is None:
        keys = keys.filter(question__collection_id=collection.pk)
    else:
        keys = keys.filter(question_id__in=list(question_ids))
    return set(keys.values_list("question_id", "key"))


def _answers(run_ids: Sequence[int], question_ids: Iterable[int] | None = None) -> list[tuple]:
    """(run id, question id, text, key) of the runs' answers (of ``question_ids`` only,
    when given), by run, question and rank."""
    rows = RunAnswer.objects.filter(run_id__in=list(run_ids))
    if question_ids is not None:
        rows = rows.filter(question_id__in=list(question_ids))
    return list(
        rows.order_by("run_id", "question_id", "rank").values_list(
            "run_id", "question_id", "text", "key"
        )
    )


def run_ranking(run: Run) -> Ranking:
    """The run's answers as an engine Ranking (question by question, rank order)."""
    rows = list(
        RunAnswer.objects.filter(run=run)
        .order_by("question_id", "rank")
        .values_list("question__qid", "text")
    )
    return Ranking(
        run.name,
        np.asarray([r[0] for r in rows], dtype=object),
        np.asarray([r[1] for r in rows], dtype=object),
    )


# -- one run's figures ------------------------------------------------------------------------
@dataclass(frozen=True)
class RunCounts:
    """A run's answers: in all, questions answered, answers no assessor has judged (their
    string has no judged spelling: ``SpellingKey``), answers to questions nobody judged
    (not scored)."""

    answers: int
    questions: int
    unjudged: int
    unknown: int


class _RunFigures:
    """One run's scores on the judged questions ``axis`` (``values``: metric x question),
    its ``counts``, and per question it answered the answers and the unjudged answers
    (``tallies``: question ids by id, answers, unjudged answers; a stored row's are
    unpacked on first use: the runs page never needs them)."""

    def __init__(
        self,
        axis: np.ndarray,
        values: np.ndarray,
        counts: RunCounts,
        tallies: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        packed: bytes | memoryview | None = None,
    ) -> None:
        self.axis, self.values, self.counts = axis, values, counts
        self._tallies, self._packed = tallies, packed

    @classmethod
    def of_tallies(
        cls,
        axis: np.ndarray,
        values: np.ndarray,
        answered: np.ndarray,
        lengths: np.ndarray,
        unjudged: np.ndarray,
    ) -> _RunFigures:
        counts = RunCounts(
            answers=int(lengths.sum()),
            questions=len(answered),
            unjudged=int(unjudged.sum()),
            unknown=int(lengths[~np.isin(answered, axis)].sum()),
        )
        return cls(axis, values, counts, (answered, lengths, unjudged))

    @classmethod
    def of_row(cls, row: dict[str, Any], axis: np.ndarray, metrics: int) -> _RunFigures:
        values = _unpack(row["values"], np.float64).reshape(metrics, len(axis))
        counts = RunCounts(
            row["answers"], row["questions"], row["unjudged_answers"], row["unknown"]
        )
        return cls(axis, values, counts, packed=row["tallies"])

    @property
    def tallies(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._tallies is None:
            t = _unpack(self._packed, np.int64).reshape(3, -1)
            self._tallies = (t[0], t[1], t[2])
        return self._tallies

    def packed_tallies(self) -> bytes:
        return _pack(np.stack(self.tallies).astype(np.int64))

    def answers_to(self, questions: np.ndarray) -> int:
        """Answers to ``questions`` (the work of scoring them again)."""
        answered, lengths, _ = self.tallies
        return int(lengths[np.isin(answered, questions)].sum())

    def on_axis(self) -> tuple[np.ndarray, np.ndarray]:
        """Answers and unjudged answers per judged question (``axis``)."""
        answered, lengths, unjudged = self.tallies
        n = len(self.axis)
        per, unj = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        if n:
            pos = np.searchsorted(self.axis, answered)
            hit = (pos < n) & (self.axis[np.minimum(pos, n - 1)] == answered)
            per[pos[hit]] = lengths[hit]
            unj[pos[hit]] = unjudged[hit]
        return per, unj

    def patched(self, part: _RunFigures, changed: np.ndarray) -> _RunFigures:
        """These figures with the questions ``changed`` replaced by ``part``'s (scored on
        ``changed`` alone)."""
        keep = ~np.isin(self.axis, changed)
        axis = np.concatenate([self.axis[keep], part.axis])
        order = np.argsort(axis, kind="stable")
        values = np.concatenate([self.values[:, keep], part.values], axis=1)[:, order]
        answered, lengths, unjudged = self.tallies
        p_answered, p_lengths, p_unjudged = part.tallies
        keep_a = ~np.isin(answered, changed)
        answered = np.concatenate([answered[keep_a], p_answered])
        order_a = np.argsort(answered, kind="stable")
        return _RunFigures.of_tallies(
            axis[order],
            values,
            answered[order_a],
            np.concatenate([lengths[keep_a], p_lengths])[order_a],
            np.concatenate([unjudged[keep_a], p_unjudged])[order_a],
        )


def _score(
    judgments: Judgments,
    axis: np.ndarray,
    runs: Sequence[Run],
    config: ScoreConfig,
    answers: list[tuple],
    judged_keys: set[tuple[int, str]],
    qid_of: dict[int, str],
) -> dict[int, _RunFigures]:
    """Score ``runs`` on ``answers`` (theirs, by run, question and rank) against
    ``judgments`` (whose judged questions are ``axis``)."""
    by_run: dict[int, list[tuple]] = {r.pk: [] for r in runs}
    for row in answers:
        by_run[row[0]].append(row)
    rankings, tallies = [], []
    for run in runs:
        rows = by_run[run.pk]
        q = np.fromiter((r[1] for r in rows), dtype=np.int64, count=len(rows))
        rankings.append(
            Ranking(
                run.name,
                np.asarray([qid_of[r[1]] for r in rows], dtype=object),
                np.asarray([r[2] for r in rows], dtype=object),
            )
        )
        answered, index, lengths = np.unique(q, return_inverse=True, return_counts=True)
        unj = np.fromiter(
            ((r[1], r[3]) not in judged_keys for r in rows), dtype=bool, count=len(rows)
        )
        unjudged = np.bincount(index[unj], minlength=len(answered))
        tallies.append((answered, lengths.astype(np.int64), unjudged.astype(np.int64)))
    scores = evaluate(
        judgments,
        rankings,
        config.metrics,
        gains=config.profile(),
        beta=config.beta,
        rbp_p=config.rbp_p,
    )
    return {
        run.pk: _RunFigures.of_tallies(axis, scores.values[i], *t)
        for i, (run, t) in enumerate(zip(runs, tallies, strict=True))
    }


def _score_full(
    collection: Collection, now: _Now, runs: Sequence[Run], config: ScoreConfig, qid_of: dict
) -> tuple[dict[int, _RunFigures], np.ndarray]:
    """Every answer of ``runs`` scored, a chunk of runs at a time; and the judged
    questions' ids."""
    judgments, axis = judgments_read(collection, now=now)
    keys = _judged_keys(collection, None) if runs else set()
    # a run holds at most L' answers a question: that many runs at a time
    most = max(len(qid_of), 1) * max(collection.max_output_size, 1)
    per = max(1, FULL_CHUNK_ANSWERS // most)
    out: dict[int, _RunFigures] = {}
    for i in range(0, len(runs), per):
        chunk = runs[i : i + per]
        answers = _answers([r.pk for r in chunk])
        out.update(_score(judgments, axis, chunk, config, answers, keys, qid_of))
    return out, axis


def _score_part(
    collection: Collection,
    now: _Now,
    runs: Sequence[Run],
    config: ScoreConfig,
    changed: np.ndarray,
    qid_of: dict,
) -> dict[int, _RunFigures]:
    """``runs`` scored on the questions ``changed`` alone."""
    ids = changed.tolist()
    judgments, axis = judgments_read(collection, question_ids=ids, now=now)
    keys = _judged_keys(collection, ids)
    answers = _answers([r.pk for r in runs], ids)
    return _score(judgments, axis, runs, config, answers, keys, qid_of)


# -- the scores a page reads ------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class StoredScores:
    """The scores of ``runs`` under one configuration as the engine's ``Scores`` gives
    them (``values[run, metric, question]`` over the judged questions ``questions``,
    ``per_question``, ``means``, ``unknown``, ``unjudged``), with each run's answer counts
    (``counts``, ``answers_per_question``) and the marks of a few questions on demand
    (``marks``)."""

    metrics: tuple[str, ...]
    runs: tuple[str, ...]
    values: np.ndarray
    questions: np.ndarray
    question_ids: np.ndarray  # the ids (pks) of ``questions``
    collection: Collection
    run_objects: tuple[Run, ...]
    config: ScoreConfig
    figures: dict[str, _RunFigures] = field(repr=False)
    now: _Now = field(repr=False)  # the judgments' version, mode and levels

    @cached_property
    def counts(self) -> dict[str, RunCounts]:
        return {run: self.figures[run].counts for run in self.runs}

    @cached_property
    def unknown(self) -> dict[str, int]:
        """Per run, its answers to questions nobody judged (not scored)."""
        return {run: self.figures[run].counts.unknown for run in self.runs}

    def answers_per_question(self, run: str) -> np.ndarray:
        """The run's answers to each judged question (L), in ``questions`` order."""
        return self.figures[run].on_axis()[0]

    def mean_values(self) -> np.ndarray:
        """Mean of each metric per run over the judged questions: (run, metric)."""
        nr, nm, nq = self.values.shape
        return self.values.mean(axis=2) if nq else np.zeros((nr, nm))

    def unjudged(self) -> np.ndarray:
        """The number of each run's answers to each judged question that no assessor
        judged: (run, question), as the engine's ``Scores.unjudged``."""
        if not self.runs:
            return np.zeros((0, len(self.questions)), dtype=np.int64)
        return np.stack([self.figures[r].on_axis()[1] for r in self.runs])

    @cached_property
    def per_question(self) -> dict[str, pd.DataFrame]:
        import pandas as pd  # the pages that ask for DataFrames: not at start-up

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

    def marks(self, run_names: Sequence[str], qids: Sequence[str]) -> pd.DataFrame:
        """The marked answers of ``run_names`` on the questions ``qids`` (the engine's
        ``Marked.frame()`` rows of those questions): marked again on those questions
        alone, which marks them as the whole does."""
        by_name = {r.name: r for r in self.run_objects}
        runs = [by_name[n] for n in run_names if n in by_name]
        pk_of = dict(zip(self.questions.tolist(), self.question_ids.tolist(), strict=True))
        ids = [pk_of[q] for q in qids if q in pk_of]
        judgments, _ = judgments_read(self.collection, question_ids=ids, now=self.now)
        answers = _answers([r.pk for r in runs], ids)
        qid_of = {pk: q for q, pk in pk_of.items()}
        rankings = []
        for run in runs:
            rows = [a for a in answers if a[0] == run.pk]
            rankings.append(
                Ranking(
                    run.name,
                    np.asarray([qid_of[a[1]] for a in rows], dtype=object),
                    np.asarray([a[2] for a in rows], dtype=object),
                )
            )
        return evaluate(judgments, rankings, self.config.metrics[:1]).marked.frame()


def run_scores(
    *,
    collection: Collection,
    runs: Sequence[Run],
    config: ScoreConfig,
    budget: int | None = None,
) -> StoredScores:
    """The scores of ``runs`` under ``config`` for the current judgments: read from the
    stored rows, patched with the questions judged since, computed and stored where
    missing (see the module's docstring).  With a ``budget``, ``ScoresPending`` is raised
    before any scoring when that would read more run answers than ``budget``."""
    runs = list(runs)
    for _ in range(ATTEMPTS):
        scores = _attempt(collection, runs, config, store=True, budget=budget)
        if scores is not None:
            return scores
    # judgments written all along: every run scored on one read, stored nowhere
    scores = _attempt(collection, runs, config, store=False, budget=budget)
    assert scores is not None
    return scores


def _attempt(
    collection: Collection,
    runs: list[Run],
    config: ScoreConfig,
    *,
    store: bool,
    budget: int | None = None,
) -> StoredScores | None:
    """One try of ``run_scores``; None when the judgments changed under it.  Without
    ``store``, every run is scored in full from one read of the judgments."""
    now = _now(collection)
    digest = config_digest(config)
    rows = _rows(runs, digest) if store else {}
    bases = _bases({r["basis_id"] for r in rows.values()})
    current: dict[int, _RunFigures] = {}  # at the current version
    stale: dict[int, list[tuple[Run, _RunFigures]]] = {}  # by basis: to patch
    missing: list[Run] = []  # to score in full
    for run in runs:
        row = rows.get(run.pk)
        basis = bases.get(row["basis_id"]) if row else None
        if basis is None or basis.signature != now.signature:
            missing.append(run)
            continue
        figures = _RunFigures.of_row(row, _axis(basis), len(config.metrics))
        if basis.judgment_version == now.version:
            current[run.pk] = figures
        else:
            stale.setdefault(basis.pk, []).append((run, figures))
    stamps = _stamps(collection) if (stale or missing or not current) else None
    qid_of = stamps.qid_of if stamps else {}
    # the questions judged since each basis, and how many answers scoring them reads
    changes = {b: stamps.changed_since(_basis_stamps(b)) for b in stale} if stamps else {}
    delta = sum(f.answers_to(changes[b]) for b, pairs in stale.items() for _, f in pairs)
    if budget is not None:
        _within(collection, config, missing, delta, len(qid_of), budget)
    write = store and (bool(missing) or delta > MAX_DELTA_ANSWERS)
    computed: dict[int, _RunFigures] = {}
    axes: set[bytes] = set()
    if missing or not runs:
        figures, axis = _score_full(collection, now, missing, config, qid_of)
        computed.update(figures)
        axes.add(axis.tobytes())
    for b, pairs in stale.items():
        part = _score_part(collection, now, [r for r, _ in pairs], config, changes[b], qid_of)
        for run, figures in pairs:
            computed[run.pk] = figures.patched(part[run.pk], changes[b])
    results = {**current, **computed}
    axes |= {f.axis.tobytes() for f in results.values()}
    if len(axes) != 1:
        return None  # read across a judgment: again
    axis = np.frombuffer(axes.pop(), dtype=np.int64)
    if write:
        if not _unchanged(collection, now, runs):
            return None
        _store(
            collection, now, stamps, axis, digest, runs, computed, moved=bool(stale), new=not rows
        )
    qids = [qid_of[q] for q in axis.tolist()] if stamps else _basis_qids(bases, axis)
    by_name = {r.name: results[r.pk] for r in runs}
    values = np.zeros((len(runs), len(config.metrics), len(axis)))
    for i, run in enumerate(runs):
        values[i] = results[run.pk].values
    return StoredScores(
        metrics=tuple(config.metrics),
        runs=tuple(r.name for r in runs),
        values=values,
        questions=np.asarray(qids, dtype=object),
        question_ids=axis,
        collection=collection,
        run_objects=tuple(runs),
        config=config,
        figures=by_name,
        now=now,
    )


def _within(
    collection: Collection,
    config: ScoreConfig,
    missing: Sequence[Run],
    delta: int,
    questions: int,
    budget: int,
) -> None:
    """Raise ``ScoresPending`` when the answers of the runs ``missing`` (scored in full)
    and the ``delta`` answers (re-scored on the questions judged since) are more than
    ``budget``.  The runs' answers are counted only when their bound (L' a question) is
    over the budget, and then no further than it."""
    work = delta
    if missing and delta <= budget:
        bound = len(missing) * questions * max(collection.max_output_size, 1)
        if delta + bound > budget:
            # no ordering: the model's default one would join and sort in the subquery
            counted = RunAnswer.objects.filter(run_id__in=[r.pk for r in missing]).order_by()
            work += counted.values("pk")[: budget - delta + 1].count()
    if work > budget:
        raise ScoresPending(collection, config, work)


def _rows(runs: Sequence[Run], digest: str) -> dict[int, dict[str, Any]]:
    """Per run, its newest stored row under the configuration ``digest`` if its answers
    are the run's current ones."""
    sha = {r.pk: r.sha256 for r in runs}
    rows = (
        RunScores.objects.filter(run_id__in=list(sha), config=digest)
        .order_by("run_id", "-basis__judgment_version")
        .values(
            "run_id",
            "basis_id",
            "answers_sha256",
            "values",
            "tallies",
            "answers",
            "questions",
            "unjudged_answers",
            "unknown",
        )
    )
    out: dict[int, dict[str, Any]] = {}
    for row in rows:
        if row["run_id"] not in out and row["answers_sha256"] == sha[row["run_id"]]:
            out[row["run_id"]] = row
    return out


def _bases(ids: set[int]) -> dict[int, ScoreBasis]:
    """The bases ``ids`` without their stamps (read only to patch: ``_basis_stamps``)."""
    if not ids:
        return {}
    return {b.pk: b for b in ScoreBasis.objects.filter(pk__in=ids).defer("stamps")}


def _basis_stamps(pk: int) -> ScoreBasis:
    return ScoreBasis.objects.only("stamps").get(pk=pk)


def _axis(basis: ScoreBasis) -> np.ndarray:
    return np.frombuffer(bytes(basis.axis), dtype=np.int64)


def _basis_qids(bases: dict[int, ScoreBasis], axis: np.ndarray) -> list[str]:
    """The question ids of ``axis``, a basis's (every run was at a basis of the current
    version: no stamps were read)."""
    for basis in bases.values():
        if np.array_equal(_axis(basis), axis):
            return list(basis.qids)
    raise AssertionError("an axis of no basis")  # pragma: no cover


def _unchanged(collection: Collection, now: _Now, runs: Sequence[Run]) -> bool:
    """Whether the judgments and the runs' answers are still those read (a change of mode
    or levels bumps the judgment version too)."""
    if not runs:
        version = Collection.objects.filter(pk=collection.pk).values_list("judgment_version")
        return version.get()[0] == now.version
    rows = Run.objects.filter(pk__in=[r.pk for r in runs]).values_list(
        "pk", "sha256", "collection__judgment_version"
    )
    sha = {pk: digest for pk, digest, version in rows if version == now.version}
    return all(sha.get(r.pk) == r.sha256 for r in runs)


def _store(
    collection: Collection,
    now: _Now,
    stamps: _Stamps | None,
    axis: np.ndarray,
    digest: str,
    runs: Sequence[Run],
    computed: dict[int, _RunFigures],
    *,
    moved: bool,
    new: bool,
) -> None:
    """Write the basis of the current version (if new) and the rows ``computed``, and drop
    what they replace: the older rows of those runs and, when rows moved to this version
    (``moved``), the bases no row reads any more; after a configuration new to these runs
    (``new``), the configurations computed longest ago past ``MAX_CONFIGS``."""
    assert stamps is not None  # a run was missing or stale: they were read
    with transaction.atomic():
        # two views may store the same basis at once: the same content, kept once
        ScoreBasis.objects.bulk_create(
            [
                ScoreBasis(
                    collection_id=collection.pk,
                    judgment_version=now.version,
                    signature=now.signature,
                    stamps=_pack(stamps.pairs),
                    axis=axis.astype(np.int64).tobytes(),
                    qids=[stamps.qid_of[q] for q in axis.tolist()],
                )
            ],
            ignore_conflicts=True,
        )
        basis = ScoreBasis.objects.only("pk").get(
            collection_id=collection.pk, judgment_version=now.version
        )
        # the rows these replace: older, or of this version with other answers (a file
        # replaced since); not those a view of a later version may have stored meanwhile
        RunScores.objects.filter(
            run_id__in=list(computed), config=digest, basis__judgment_version__lte=now.version
        ).delete()
        sha = {r.pk: r.sha256 for r in runs}
        RunScores.objects.bulk_create(
            [
                RunScores(
                    run_id=pk,
                    basis=basis,
                    config=digest,
                    answers_sha256=sha[pk],
                    values=_pack(f.values.astype(np.float64)),
                    tallies=f.packed_tallies(),
                    answers=f.counts.answers,
                    questions=f.counts.questions,
                    unjudged_answers=f.counts.unjudged,
                    unknown=f.counts.unknown,
                )
                for pk, f in computed.items()
            ],
            ignore_conflicts=True,
        )
        if moved:
            ScoreBasis.objects.filter(
                collection_id=collection.pk, judgment_version__lt=now.version
            ).exclude(Exists(RunScores.objects.filter(basis=OuterRef("pk")))).delete()
        if new:
            _configs_prune(collection)


def _configs_prune(collection: Collection) -> None:
    """Drop the configurations computed longest ago past ``MAX_CONFIGS`` (a page's query
    string chooses them: without a bound, rows would pile up)."""
    configs = list(
        RunScores.objects.filter(basis__collection_id=collection.pk)
        .values("config")
        .annotate(last=Max("computed_at"))
        .order_by("-last")
        .values_list("config", flat=True)
    )
    if len(configs) > MAX_CONFIGS:
        RunScores.objects.filter(
            basis__collection_id=collection.pk, config__in=configs[MAX_CONFIGS:]
        ).delete()
