"""Two assessors writing the same question at once (PostgreSQL: real row locks).

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/annotate/test_concurrency.py"""

import pytest

from annotate import judging
from annotate.models import AnswerString, AnswerSynset, JudgmentEvent, Question
from tests.factories import make_collection, make_question, make_user
from tests.race import race

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]


def test_same_candidate_judged_twice_one_wins_the_other_is_refused():
    c = make_collection()
    q = make_question(collection=c, unjudged=["Kawabata"])
    a, b = make_user(), make_user()
    s = AnswerString.objects.get(question=q)
    v = q.version
    results = race(
        lambda: judging.string_judge(
            question=q.pk, string=s.pk, new_synset=True, by=a, expect="u", version=v
        ),
        lambda: judging.string_judge(question=q.pk, string=s.pk, by=b, expect="u", version=v),
    )
    assert sorted(results) == ["conflict", "ok"]
    q.refresh_from_db()
    assert q.version == v + 1
    assert JudgmentEvent.objects.filter(question=q).count() == 1
    s.refresh_from_db()
    assert s.state == ("correct" if results[0] == "ok" else "incorrect")


def test_two_new_synsets_at_once_both_apply_with_contiguous_ordinals():
    c = make_collection()
    q = make_question(collection=c, unjudged=["one", "two", "three"])
    users = [make_user() for _ in range(3)]
    strings = list(AnswerString.objects.filter(question=q).order_by("id"))
    results = race(
        *[
            (
                lambda s=s, u=u: judging.string_judge(
                    question=q.pk, string=s.pk, new_synset=True, by=u, expect="u", version=0
                )
            )
            for s, u in zip(strings, users, strict=True)
        ]
    )
    assert results == ["ok", "ok", "ok"]  # stale versions, but still meaningful
    assert sorted(AnswerSynset.objects.filter(question=q).values_list("ordinal", flat=True)) == [
        1,
        2,
        3,
    ]
    assert Question.objects.get(pk=q.pk).version == 3
