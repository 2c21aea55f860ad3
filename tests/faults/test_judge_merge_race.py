"""A judgment write racing a synset merge (two threads through annotate.judging) leaves a
consistent question; a judgment write during a run import neither waits for it nor
deadlocks with it."""

import threading
import time

import pytest
from django.db import connection, transaction

from annotate import judging
from annotate.models import AnswerString, AnswerSynset, Collection, JudgmentEvent, Question
from evaluation.models import Run, RunAnswer
from tests.factories import make_collection, make_question, make_user
from tests.race import race

pytestmark = [
    pytest.mark.postgres(reason="fault tests need PostgreSQL"),
    pytest.mark.django_db(transaction=True),
]


def assert_consistent(q: Question) -> None:
    synsets = list(AnswerSynset.objects.filter(question=q).order_by("ordinal"))
    assert [s.ordinal for s in synsets] == list(range(1, len(synsets) + 1))
    members = {s.pk: 0 for s in synsets}
    for s in AnswerString.objects.filter(question=q):
        if s.synset_id is not None:
            assert s.synset_id in members  # a synset of this question
            assert s.level_id is not None and s.judged_at is not None
            members[s.synset_id] += 1
    assert all(members.values()), "an empty synset was left behind"


@pytest.mark.parametrize("target", ["kept", "merged away", "other"])
def test_judgment_racing_a_merge_leaves_a_consistent_question(target):
    c = make_collection()
    a, b = make_user(), make_user()
    for _ in range(8):
        q = make_question(
            collection=c,
            synsets=[[("one", "S")], [("two", "A")], [("three", "B")]],
            unjudged=["four", "five"],
        )
        syn = {s.ordinal: s.pk for s in AnswerSynset.objects.filter(question=q)}
        cand = AnswerString.objects.get(question=q, text="four")
        into = {"kept": syn[1], "merged away": syn[2], "other": syn[3]}[target]
        v = q.version
        cv = Collection.objects.get(pk=c.pk).judgment_version
        results = race(
            lambda q=q, cand=cand, into=into, v=v: judging.string_judge(
                question=q.pk, string=cand.pk, synset=into, level="B", by=a, expect="u", version=v
            ),
            lambda q=q, syn=syn, v=v: judging.synset_merge(
                question=q.pk, synsets=[syn[1], syn[2]], by=b, version=v
            ),
        )
        assert results[1] == "ok"  # the merge always applies
        # judging into the merged-away synset after the merge is refused, nothing else is
        assert results[0] == "ok" or target == "merged away"
        applied = results.count("ok")
        assert_consistent(q)
        q.refresh_from_db()
        assert q.version == v + applied
        assert JudgmentEvent.objects.filter(question=q).count() == applied
        assert Collection.objects.get(pk=c.pk).judgment_version == cv + applied
        assert AnswerSynset.objects.filter(question=q).count() == 2
        cand.refresh_from_db()
        one = AnswerString.objects.get(question=q, text="one")
        assert AnswerString.objects.get(question=q, text="two").synset_id == one.synset_id
        if results[0] == "ok":
            expected = AnswerString.objects.get(
                question=q, text="three" if target == "other" else "one"
            ).synset_id
            assert (cand.synset_id, cand.level.code) == (expected, "B")
        else:
            assert cand.state == "unjudged"


def test_a_judgment_during_a_run_import_neither_waits_nor_deadlocks():
    c = make_collection()
    owner, assessor = make_user(), make_user()
    q = make_question(collection=c, unjudged=["alpha"])
    s = AnswerString.objects.get(question=q)
    importing, judged = threading.Event(), threading.Event()
    errors = []

    def run_import():
        # what services.run_import does while it commits: its deferred foreign-key checks
        # take key-share locks on the collection and on each question; made immediate here
        # so that this state can be held open
        try:
            with transaction.atomic():
                with connection.cursor() as cur:
                    cur.execute("SET CONSTRAINTS ALL IMMEDIATE")
                run = Run.objects.create(collection=c, owner=owner, name="slow")
                RunAnswer.objects.create(run=run, question=q, rank=1, text="x", key="x")
                importing.set()
                judged.wait(10)
                RunAnswer.objects.create(run=run, question=q, rank=2, text="y", key="y")
        except Exception as e:  # reported below
            errors.append(e)
        finally:
            connection.close()

    t = threading.Thread(target=run_import)
    t.start()
    assert importing.wait(10)
    start = time.monotonic()
    try:
        judging.string_judge(
            question=q.pk, string=s.pk, new_synset=True, by=assessor, expect="u", version=0
        )
    finally:
        elapsed = time.monotonic() - start
        judged.set()
        t.join(20)
    assert elapsed < 5, f"the judgment waited {elapsed:.1f} s for the import"
    assert not errors
    assert Run.objects.get(name="slow").answers.count() == 2
    s.refresh_from_db()
    assert s.state == "correct"
