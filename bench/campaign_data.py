"""A seeded campaign of a reference size on the configured database (DESIGN.md section 8).

    DJANGO_SETTINGS_MODULE=config.settings DATABASE_URL=postgres://... \\
        .venv/bin/python bench/campaign_data.py --size M --seed 1

Sizes (questions x runs x answers per question): S = 200 x 30 x 5, M = 2,000 x 100 x 10,
L = 5,000 x 200 x 10.  One collection, slug ``campaign-<size>-<seed>`` (levels S, A, B
with gains 3, 2, 1, normalized matching, L' = the answers per question, open for
submissions, leaderboard published), with:

- users ``<slug>-organizer``, ``<slug>-assessor`` and ``<slug>-participant1..3``, each
  with the password ``campaign-password`` (``Campaign.users``); the assessor is assigned
  every question;
- questions ``Q00001``...; 85% are judged: 1-4 answer synsets of 1-3 strings (the first
  of a synset level S, the others A or B; some with a second spelling folded in as a
  variant), 2-6 strings judged incorrect and, on a third of them, 1-2 strings pooled and
  not judged yet; 3% of the judged ones are NIL questions (one synset holding ``NIL``).
  The other 15% have only pooled, unjudged strings.  A judged question with a waiting
  string is in progress, the others done; unjudged ones to do.  Every spelling has its
  ``SpellingKey`` (``annotate.spellings.string_keys_sync``, the table's one writer);
- runs ``run001``... owned by the participants in turn, of growing quality; each answers
  97% of the questions with exactly L' distinct answers drawn from the question's correct,
  incorrect and pooled strings and from strings nobody has seen (so some answers match a
  judged string, some a pooled one, some nothing); on NIL questions a good run answers
  ``NIL`` at rank 1, and 1% of other answers lists are cut by a ``NIL``.

Everything is written in one transaction with bulk inserts (``COPY`` for the run answers
on PostgreSQL, ``executemany`` elsewhere).  ``build`` returns the existing campaign when
its slug is already there (``reuse=True``, the default), else rebuilds it.

API (what ``bench/campaign.py`` and ``bench/pages_bench.py`` use)::

    from bench.campaign_data import SIZES, Size, build
    campaign = build("M", seed=1)          # or build(Size(50, 4, 5), seed=2)
    campaign.slug, campaign.collection_id, campaign.run_ids, campaign.question_ids
    campaign.users["organizer"]            # (username, password); also "assessor",
                                           # "participant" (the first), "participants"
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


class Size(NamedTuple):
    """A campaign's size: questions, runs, answers per question (= the collection's L')."""

    questions: int
    runs: int
    answers: int


SIZES: dict[str, Size] = {
    "S": Size(200, 30, 5),
    "M": Size(2000, 100, 10),
    "L": Size(5000, 200, 10),
}

JUDGED_SHARE = 0.85  # questions with at least one judged string
NIL_SHARE = 0.03  # of the judged questions: a NIL question
WAITING_SHARE = 1 / 3  # of the judged questions: 1-2 pooled strings not judged yet
SKIP_SHARE = 0.03  # of a run's questions: not answered
NOVEL = 12  # strings per question that nobody has judged or pooled
PARTICIPANTS = 3
# every campaign user's password: one hash for all (a hash takes a second or two)
PASSWORD = "campaign-password"


@dataclass(frozen=True)
class Campaign:
    """What a built campaign is: its collection and how to log in.  ``users`` maps
    ``organizer``, ``assessor`` and ``participant`` (the first participant) to
    (username, password), and ``participants`` to the list of all of them."""

    slug: str
    collection_id: int
    size: Size
    seed: int
    run_ids: list[int]
    question_ids: list[int]
    users: dict[str, object] = field(default_factory=dict)
    built: bool = True  # False: found in the database (reused)
    seconds: float = 0.0  # time to build (0 when reused)

    @property
    def answers(self) -> int:
        """Run answers in the campaign (runs x questions answered x L')."""
        from evaluation.models import RunAnswer

        return RunAnswer.objects.filter(run__collection_id=self.collection_id).count()


def slug_of(size: str | Size, seed: int) -> str:
    """The collection slug of ``size`` and ``seed``: ``campaign-m-1``, or
    ``campaign-50x4x5-1`` for a size given by its numbers."""
    name = size if isinstance(size, str) else "x".join(map(str, size))
    return f"campaign-{name.lower()}-{seed}"


def _size(size: str | Size) -> Size:
    if isinstance(size, str):
        try:
            return SIZES[size.upper()]
        except KeyError:
            raise ValueError(f"unknown size {size!r}: one of {', '.join(SIZES)}") from None
    return Size(*size)


def build(
    size: str | Size = "S", seed: int = 1, *, reuse: bool = True, verbose: bool = False
) -> Campaign:
    """The campaign of ``size`` (a name of ``SIZES`` or a ``Size``) and ``seed`` on the
    configured database (Django set up), built in one transaction, or the one already
    there when ``reuse``.  Same size and seed, same content (ids aside)."""
    from annotate.models import Collection

    dims = _size(size)
    slug = slug_of(size, seed)
    users = _users(slug)
    existing = Collection.objects.filter(slug=slug).first()
    if existing is not None and reuse:
        return _campaign(existing, dims, seed, users, built=False, seconds=0.0)
    t0 = time.perf_counter()
    collection = _build(slug, dims, seed, users, verbose=verbose)
    _analyze()
    return _campaign(collection, dims, seed, users, built=True, seconds=time.perf_counter() - t0)


def _campaign(collection, dims: Size, seed: int, users, *, built: bool, seconds: float):
    from evaluation.models import Run

    return Campaign(
        slug=collection.slug,
        collection_id=collection.pk,
        size=dims,
        seed=seed,
        run_ids=list(
            Run.objects.active()
            .filter(collection=collection)
            .order_by("name")
            .values_list("pk", flat=True)
        ),
        question_ids=list(collection.questions.order_by("pk").values_list("pk", flat=True)),
        users={
            "organizer": users["organizer"],
            "assessor": users["assessor"],
            "participant": users["participants"][0],
            "participants": users["participants"],
        },
        built=built,
        seconds=seconds,
    )


def _users(slug: str) -> dict[str, object]:
    return {
        "organizer": (f"{slug}-organizer", PASSWORD),
        "assessor": (f"{slug}-assessor", PASSWORD),
        "participants": [(f"{slug}-participant{i}", PASSWORD) for i in range(1, PARTICIPANTS + 1)],
    }


# -- the content --------------------------------------------------------------------------
_SYLLABLES = (
    "ka ri to mo na se lu vi da pe zo ha ne ku shi ta ro mi ya go "
    "bel mar ton lin dor sav kel per than wis"
).split()


def _words(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` pseudo-words (2-3 syllables, capitalized)."""
    k = rng.integers(2, 4, size=n)
    idx = rng.integers(0, len(_SYLLABLES), size=(n, 3))
    return ["".join(_SYLLABLES[j] for j in idx[i, : k[i]]).capitalize() for i in range(n)]


class _Question(NamedTuple):
    qid: str
    judged: bool
    nil: bool
    synsets: list[list[tuple[str, str, list[str]]]]  # [(text, level code, variants)]
    incorrect: list[str]
    pooled: list[str]
    novel: list[str]


def _content(dims: Size, rng: np.random.Generator) -> list[_Question]:
    out = []
    for i in range(1, dims.questions + 1):
        judged = rng.random() < JUDGED_SHARE
        nil = judged and rng.random() < NIL_SHARE
        names = iter(dict.fromkeys(_words(rng, 60)))  # distinct within the question

        def phrase(names=names) -> str:
            return next(names) if rng.random() < 0.5 else f"{next(names)} {next(names)}"

        synsets: list[list[tuple[str, str, list[str]]]] = []
        if nil:
            synsets.append([("NIL", str(rng.choice(["S", "A", "B"])), [])])
        elif judged:
            for _ in range(int(rng.integers(1, 5))):
                members = []
                for k in range(int(rng.integers(1, 4))):
                    text = phrase()
                    level = "S" if k == 0 else str(rng.choice(["A", "B"]))
                    # a second spelling folded in (same key under normalized matching)
                    variants = [text.upper()] if rng.random() < 0.1 else []
                    members.append((text, level, variants))
                synsets.append(members)
        incorrect = [phrase() for _ in range(int(rng.integers(2, 7)))] if judged else []
        waiting = not judged or rng.random() < WAITING_SHARE
        pooled = [phrase() for _ in range(int(rng.integers(1, 3)) if waiting else 0)]
        if not judged:
            pooled += [phrase() for _ in range(int(rng.integers(2, 6)))]
        novel = [phrase() for _ in range(NOVEL)]
        out.append(_Question(f"Q{i:05d}", judged, nil, synsets, incorrect, pooled, novel))
    return out


def _build(slug: str, dims: Size, seed: int, users: dict, *, verbose: bool):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.db import transaction
    from django.utils import timezone

    from annotate.models import (
        AnswerString,
        AnswerSynset,
        Collection,
        Level,
        Membership,
        Question,
        QuestionStatus,
        Source,
    )
    from annotate.spellings import string_keys_sync
    from evaluation.metrics.normalize import normalize_many
    from evaluation.models import Run, RunAnswer

    rng = np.random.default_rng(seed)
    say = print if verbose else (lambda *a, **k: None)
    t = time.perf_counter()

    def step(what: str) -> None:
        nonlocal t
        now = time.perf_counter()
        say(f"  {what:32} {now - t:6.2f} s", flush=True)
        t = now

    content = _content(dims, rng)
    step("content generated")
    User = get_user_model()
    with transaction.atomic():
        Collection.objects.filter(slug=slug).delete()
        step("old campaign deleted")
        accounts = {}
        hashed = make_password(PASSWORD)
        for role, (username, _) in [
            ("organizer", users["organizer"]),
            ("assessor", users["assessor"]),
            *(("participant", p) for p in users["participants"]),
        ]:
            user, created = User.objects.get_or_create(username=username)
            if created:
                user.password = hashed
                user.save(update_fields=["password"])
            accounts.setdefault(role, []).append(user)
        now = timezone.now()
        collection = Collection.objects.create(
            slug=slug,
            name=f"Campaign {slug[len('campaign-') :].upper()}",
            description=f"bench/campaign_data.py: {dims.questions} questions x {dims.runs} "
            f"runs x {dims.answers} answers, seed {seed}",
            matching_mode="normalized",
            max_output_size=dims.answers,
            open_for_submissions=True,
            leaderboard_published=True,
            judgment_version=1,
            judgments_changed_at=now,
        )
        levels = {
            code: Level.objects.create(
                collection=collection, code=code, label=label, gain=gain, order=i
            )
            for i, (code, label, gain) in enumerate(
                [("S", "Correct", 3.0), ("A", "Less specific", 2.0), ("B", "Partial", 1.0)]
            )
        }
        Membership.objects.bulk_create(
            Membership(collection=collection, user=u, role=role)
            for role, us in accounts.items()
            for u in us
        )
        assessor = accounts["assessor"][0]

        def status(q: _Question) -> str:
            if not q.judged:
                return QuestionStatus.TODO
            return QuestionStatus.IN_PROGRESS if q.pooled else QuestionStatus.DONE

        questions = Question.objects.bulk_create(
            (
                Question(
                    collection=collection, qid=q.qid, text=f"Question {q.qid}?", status=status(q)
                )
                for q in content
            ),
            batch_size=2000,
        )
        Through = Question.assessors.through
        Through.objects.bulk_create(
            (Through(question_id=q.pk, user_id=assessor.pk) for q in questions), batch_size=5000
        )
        step("users, collection, questions")
        synsets = AnswerSynset.objects.bulk_create(
            (
                AnswerSynset(question=qobj, ordinal=k)
                for qobj, q in zip(questions, content, strict=True)
                for k in range(1, len(q.synsets) + 1)
            ),
            batch_size=2000,
        )
        syn_iter = iter(synsets)
        texts = [
            s
            for q in content
            for s in [*(t for m in q.synsets for t, _, _ in m), *q.incorrect, *q.pooled]
        ]
        keys = iter(normalize_many(texts, "normalized"))
        strings = []
        for qobj, q in zip(questions, content, strict=True):
            for members in q.synsets:
                syn = next(syn_iter)
                for text, level, variants in members:
                    strings.append(
                        AnswerString(
                            question=qobj,
                            text=text,
                            key=next(keys),
                            variants=variants,
                            synset=syn,
                            level=levels[level],
                            source=Source.IMPORT,
                            judged_by=assessor,
                            judged_at=now,
                        )
                    )
            for text in q.incorrect:
                strings.append(
                    AnswerString(
                        question=qobj,
                        text=text,
                        key=next(keys),
                        source=Source.IMPORT,
                        judged_by=assessor,
                        judged_at=now,
                    )
                )
            for text in q.pooled:
                strings.append(
                    AnswerString(question=qobj, text=text, key=next(keys), source=Source.POOL)
                )
        strings = AnswerString.objects.bulk_create(strings, batch_size=2000)
        step(f"{len(strings):,} strings")
        string_keys_sync(strings=strings, mode="normalized")
        step("spelling keys")
        runs = Run.objects.bulk_create(
            Run(
                collection=collection,
                owner=accounts["participant"][j % PARTICIPANTS],
                name=f"run{j + 1:03d}",
                description=f"generated, quality {_quality(j, dims.runs):.2f}",
                source_name=f"run{j + 1:03d}.tsv",
                sha256=hashlib.sha256(f"{slug}/{j}".encode()).hexdigest(),
                format="qa",
            )
            for j in range(dims.runs)
        )
        step("runs")
        n = _store_run_answers(
            runs=runs,
            questions=questions,
            content=content,
            dims=dims,
            rng=rng,
            table=RunAnswer._meta.db_table,
        )
        step(f"{n:,} run answers")
    return collection


def _analyze() -> None:
    """Planner statistics (and, on PostgreSQL, the visibility map) of the tables just
    filled, as autovacuum would give them a while later: a bench then measures the plans
    a settled database gets."""
    from django.db import connection

    from annotate.models import AnswerString, Question, SpellingKey
    from evaluation.models import Run, RunAnswer

    tables = [m._meta.db_table for m in (Question, AnswerString, SpellingKey, Run, RunAnswer)]
    with connection.cursor() as cur:
        if connection.vendor == "postgresql" and not connection.in_atomic_block:
            cur.execute(f"VACUUM (ANALYZE) {', '.join(tables)}")
        elif connection.vendor == "postgresql":  # in a transaction (a test): no VACUUM
            cur.execute(f"ANALYZE {', '.join(tables)}")
        else:
            cur.execute("ANALYZE")


def _quality(j: int, nruns: int) -> float:
    """How likely run ``j`` is to return a correct answer at a rank: 0.15 to 0.75."""
    return 0.15 + 0.6 * (j / max(nruns - 1, 1))


def _store_run_answers(*, runs, questions, content, dims: Size, rng, table: str) -> int:
    """Write every run's answers with one bulk path: candidates per question (correct,
    incorrect, pooled, novel strings) drawn without replacement by weight (the Gumbel
    top-k trick, one array per run)."""
    from django.db import connection

    from evaluation.metrics.normalize import normalize_many

    L = dims.answers
    nq = len(questions)
    # candidates per question: text, key, kind (0 correct, 1 incorrect, 2 pooled, 3 novel)
    cand_text: list[list[str]] = []
    cand_kind: list[list[int]] = []
    for q in content:
        correct = [t for m in q.synsets for t, _, _ in m if t != "NIL"]
        correct += [v for m in q.synsets for _, _, vs in m for v in vs]
        texts = [*correct, *q.incorrect, *q.pooled, *q.novel]
        kinds = [0] * len(correct) + [1] * len(q.incorrect) + [2] * len(q.pooled)
        cand_text.append(texts)
        cand_kind.append(kinds + [3] * len(q.novel))
    width = max(len(c) for c in cand_text)
    flat = [t for c in cand_text for t in c]
    key_of = dict(zip(flat, normalize_many(flat, "normalized"), strict=True))
    key_of["NIL"] = normalize_many(["NIL"])[0]
    kind = np.full((nq, width), -1, dtype=np.int8)
    text = np.full((nq, width), None, dtype=object)
    for i, (ks, ts) in enumerate(zip(cand_kind, cand_text, strict=True)):
        kind[i, : len(ks)] = ks
        text[i, : len(ts)] = ts
    nil = np.array([q.nil for q in content])
    qpk = np.array([q.pk for q in questions], dtype=np.int64)
    base_weights = np.array([0.0, 1.0, 0.5, 1.5])  # by kind; correct: the run's quality
    ranks = np.arange(1, L + 1)

    def run_rows(j: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Run ``j``'s answers: question pks, ranks, texts (one row per answer)."""
        p = _quality(j, len(runs))
        w = base_weights.copy()
        w[0] = 6 * p / (1 - p)
        weight = np.where(kind >= 0, w[np.maximum(kind, 0)], 0.0)
        with np.errstate(divide="ignore"):
            score = np.log(weight) - np.log(-np.log(rng.random((nq, width))))
        top = np.argsort(-score, axis=1, kind="stable")[:, :L]
        picks = np.take_along_axis(text, top, axis=1)  # (nq, L); every question has > L
        answered = rng.random(nq) >= SKIP_SHARE
        nil_first = nil & (rng.random(nq) < p + 0.2)
        nil_cut = ~nil & (rng.random(nq) < 0.01)
        cut_at = rng.integers(0, L, size=nq)
        picks[nil_first, 1:] = picks[nil_first, :-1]
        picks[nil_first, 0] = "NIL"
        for i in np.flatnonzero(nil_cut).tolist():
            c = int(cut_at[i])
            picks[i, c + 1 :] = picks[i, c:-1].copy()
            picks[i, c] = "NIL"
        keep = np.flatnonzero(answered)
        return (
            np.repeat(qpk[keep], L),
            np.tile(ranks, len(keep)),
            picks[keep].reshape(-1),
        )

    total = 0
    if connection.vendor == "postgresql":
        cols = "run_id, question_id, rank, text, key"
        with connection.cursor() as cur:
            for j, run in enumerate(runs):
                q, r, t = run_rows(j)
                # generated texts hold no tab, newline or backslash: COPY's text format as is
                data = "".join(
                    f"{run.pk}\t{a}\t{b}\t{c}\t{key_of[c]}\n"
                    for a, b, c in zip(q.tolist(), r.tolist(), t.tolist(), strict=True)
                )
                with cur.cursor.copy(f"COPY {table} ({cols}) FROM STDIN") as copy:
                    copy.write(data)
                total += len(t)
    else:
        sql = (
            f"INSERT INTO {table} (run_id, question_id, rank, text, key) "
            "VALUES (%s, %s, %s, %s, %s)"
        )
        with connection.cursor() as cur:
            for j, run in enumerate(runs):
                q, r, t = run_rows(j)
                cur.executemany(
                    sql,
                    [
                        (run.pk, a, b, c, key_of[c])
                        for a, b, c in zip(q.tolist(), r.tolist(), t.tolist(), strict=True)
                    ],
                )
                total += len(t)
    return total


# -- command line -------------------------------------------------------------------------
def setup_django() -> None:
    """Django with the environment's settings (DJANGO_SETTINGS_MODULE, DATABASE_URL)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="S", help=f"one of {', '.join(SIZES)} or QxRxA (e.g. 50x4x5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rebuild", action="store_true", help="rebuild even if it exists")
    args = ap.parse_args(argv)
    size: str | Size = args.size
    if "x" in args.size.lower():
        size = Size(*(int(x) for x in args.size.lower().split("x")))
    setup_django()
    t, c = time.perf_counter(), time.process_time()
    campaign = build(size, args.seed, reuse=not args.rebuild, verbose=True)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    state = "built" if campaign.built else "reused"
    print(
        f"{campaign.slug}: {state} in {wall:.1f} s wall, {cpu:.1f} s CPU: "
        f"{len(campaign.question_ids):,} questions, {len(campaign.run_ids)} runs, "
        f"{campaign.answers:,} run answers"
    )
    for role in ("organizer", "assessor"):
        print(f"  {role:12} {campaign.users[role][0]} / {campaign.users[role][1]}")
    for username, password in campaign.users["participants"]:
        print(f"  {'participant':12} {username} / {password}")


if __name__ == "__main__":
    main()
