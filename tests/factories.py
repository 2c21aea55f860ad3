"""Keyword-only factory functions for tests (STYLE.md habit 8)."""

from __future__ import annotations

import itertools

from django.contrib.auth import get_user_model

from annotate.models import AnswerString, AnswerSynset, Collection, Level, Membership, Question
from annotate.normalize import normalize_answer
from annotate.spellings import string_keys_sync
from evaluation.models import Run, RunAnswer

_seq = itertools.count(1)


def make_user(*, username: str | None = None, password: str = "pw-123456", staff: bool = False):
    User = get_user_model()
    user = User.objects.create_user(username=username or f"user{next(_seq)}", password=password)
    if staff:
        user.is_staff = user.is_superuser = True
        user.save()
    return user


def make_collection(
    *,
    slug: str | None = None,
    name: str | None = None,
    levels=(("S", 3.0), ("A", 2.0), ("B", 1.0)),
    **fields,
) -> Collection:
    n = next(_seq)
    c = Collection.objects.create(slug=slug or f"c{n}", name=name or f"Collection {n}", **fields)
    for order, (code, gain) in enumerate(levels):
        Level.objects.create(collection=c, code=code, label=code, gain=gain, order=order)
    return c


def add_member(*, collection: Collection, user, role: str) -> Membership:
    return Membership.objects.create(collection=collection, user=user, role=role)


def make_question(
    *,
    collection: Collection,
    qid: str | None = None,
    text: str = "Q?",
    synsets=(),
    incorrect=(),
    unjudged=(),
) -> Question:
    """``synsets`` is a list of lists of (answer, level code)."""
    from django.utils import timezone

    q = Question.objects.create(collection=collection, qid=qid or f"Q{next(_seq)}", text=text)
    levels = {lv.code: lv for lv in collection.levels.all()}
    now = timezone.now()
    mode = collection.matching_mode
    for ordinal, members in enumerate(synsets, start=1):
        syn = AnswerSynset.objects.create(question=q, ordinal=ordinal)
        for text_, code in members:
            AnswerString.objects.create(
                question=q,
                text=text_,
                key=normalize_answer(text_, mode),
                synset=syn,
                level=levels[code],
                judged_at=now,
            )
    for text_ in incorrect:
        AnswerString.objects.create(
            question=q, text=text_, key=normalize_answer(text_, mode), judged_at=now
        )
    for text_ in unjudged:
        AnswerString.objects.create(
            question=q, text=text_, key=normalize_answer(text_, mode), source="pool"
        )
    string_keys_sync(strings=AnswerString.objects.filter(question=q), mode=mode)
    return q


def make_run(
    *,
    collection: Collection,
    owner,
    name: str | None = None,
    answers: dict[str, list[str]] | None = None,
) -> Run:
    run = Run.objects.create(collection=collection, owner=owner, name=name or f"run{next(_seq)}")
    questions = {q.qid: q for q in collection.questions.all()}
    RunAnswer.objects.bulk_create(
        RunAnswer(
            run=run,
            question=questions[qid],
            rank=r,
            text=a,
            key=normalize_answer(a, collection.matching_mode),
        )
        for qid, texts in (answers or {}).items()
        for r, a in enumerate(texts, start=1)
    )
    return run


def make_big_question(
    *,
    collection: Collection,
    qid: str = "BIG",
    n_synsets: int = 100,
    n_strings: int = 1000,
    n_unjudged: int = 100,
) -> Question:
    """A question with ``n_synsets`` synsets holding ``n_strings - n_unjudged`` strings
    and ``n_unjudged`` pooled candidates (bulk inserts: fast)."""
    from django.utils import timezone

    q = Question.objects.create(collection=collection, qid=qid, text="A big question?")
    levels = list(collection.levels.all())
    synsets = AnswerSynset.objects.bulk_create(
        AnswerSynset(question=q, ordinal=i) for i in range(1, n_synsets + 1)
    )
    now = timezone.now()
    strings = []
    for i in range(n_strings - n_unjudged):
        strings.append(
            AnswerString(
                question=q,
                text=f"answer {i}",
                key=f"answer {i}",
                synset=synsets[i % n_synsets],
                level=levels[i % len(levels)],
                judged_at=now,
            )
        )
    strings += [
        AnswerString(question=q, text=f"candidate {i}", key=f"candidate {i}", source="pool")
        for i in range(n_unjudged)
    ]
    AnswerString.objects.bulk_create(strings)
    string_keys_sync(strings=strings, mode=collection.matching_mode)
    return q


def make_runs_far_apart(*, slug: str, organizer: str) -> tuple[Collection, object]:
    """Twenty questions and three runs of an organizer: right at rank 1 everywhere, right
    at rank 1 or 2 in turn, and right (at rank 3) on four questions only: the best and the
    worst differ beyond any permutation's or bootstrap sample's reach."""
    c = make_collection(slug=slug)
    for i in range(1, 21):
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[(f"a{i}", "S")]])
    org = make_user(username=organizer)
    add_member(collection=c, user=org, role="organizer")
    answers = {
        "top": {f"Q{i:02d}": [f"a{i}"] for i in range(1, 21)},
        "middle": {f"Q{i:02d}": ["x", f"a{i}"] if i % 2 else [f"a{i}"] for i in range(1, 21)},
        "bottom": {f"Q{i:02d}": ["x", "y", f"a{i}"] if i % 5 == 0 else ["x"] for i in range(1, 21)},
    }
    for name, a in answers.items():
        make_run(collection=c, owner=org, name=name, answers=a)
    return c, org
