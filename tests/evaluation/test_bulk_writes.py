"""The bulk writes made set-based (issue 24 item 5) give what the row-by-row writes gave:
pooling every run at once (``runs_pool``) is pooling each run in turn (``run_pool``), the
run answers re-keyed by one UPDATE have the keys the engine gives each of them, a run is
stored as its file says, and every write is still all or nothing."""

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotate import imports, judgments_plan
from annotate.models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Question,
    QuestionStatus,
    SpellingKey,
)
from annotate.spellings import spelling_keys_drift
from evaluation import services
from evaluation.metrics.normalize import normalize_answer
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

SPELLINGS = {
    "Paris": ["Paris", "paris", "Paris.", " PARIS "],
    "Lyon": ["Lyon", "lyon!", "LYON"],
    "Nice": ["Nice", "nice"],
    "Marseille": ["Marseille", "marseille."],
    "Lille": ["Lille"],
    "Tours": ["Tours", "tours?"],
    "Saint-Malo": ["Saint-Malo", "saint-malo"],  # squad drops the hyphen, normalized not
    "?": ["?", "..."],  # an empty key under normalized: never pooled
}


def campaign(slug: str, *, seed: int = 7, questions: int = 12, runs: int = 4) -> Collection:
    """A collection with judged, incorrect and unjudged strings (some with variants), a
    few questions done, ``runs`` runs (and a withdrawn one) answering with several
    spellings of each answer, more answers than L' = 4.  The same seed, the same data."""
    rng = random.Random(seed)
    c = make_collection(slug=slug, max_output_size=4)
    owner = make_user(username=f"{slug}-owner")
    add_member(collection=c, user=owner, role="organizer")
    names = list(SPELLINGS)
    for i in range(questions):
        q = make_question(
            collection=c,
            qid=f"Q{i:02d}",
            synsets=[[("Paris", "S")]] if i % 3 else [],
            incorrect=["Lyon"] if i % 4 == 0 else [],
            unjudged=["Nice"] if i % 5 == 0 else [],
        )
        if i % 3 == 1:
            AnswerString.objects.filter(question=q, text="Paris").update(variants=["PARIS!"])
        if i % 2 == 0 and not q.strings.filter(judged_at__isnull=True).exists():
            Question.objects.filter(pk=q.pk).update(status=QuestionStatus.DONE)
    for k in range(runs + 1):
        answers = {
            f"Q{i:02d}": [rng.choice(SPELLINGS[n]) for n in rng.sample(names, 6)]
            for i in range(questions)
            if rng.random() < 0.9
        }
        run = make_run(collection=c, owner=owner, name=f"run{k}", answers=answers)
        if k == 2:
            Run.objects.filter(pk=run.pk).update(withdrawn_at=timezone.now())
    return c


def named(after: dict, runs: dict[int, str]) -> dict:
    """An event's ``after`` with the run named rather than numbered."""
    return {**after, "run": runs[after["run"]]} if "run" in after else after


def snapshot(c: Collection) -> dict:
    """What pooling writes, free of the ids of one collection."""
    runs = {r.pk: r.name for r in Run.objects.filter(collection=c)}
    return {
        "strings": [
            (*row, judged is not None)
            for *row, judged in AnswerString.objects.filter(question__collection=c)
            .order_by("id")
            .values_list("question__qid", "text", "key", "variants", "source", "judged_at")
        ],
        "keys": sorted(
            SpellingKey.objects.filter(question__collection=c).values_list(
                "question__qid", "string__text", "key"
            )
        ),
        "questions": list(
            Question.objects.filter(collection=c)
            .order_by("qid")
            .values_list("qid", "status", "version")
        ),
        "events": [
            (e.action, e.question.qid if e.question else None, named(e.after, runs))
            for e in JudgmentEvent.objects.filter(collection=c).order_by("id")
        ],
        "version": Collection.objects.get(pk=c.pk).judgment_version,
    }


def test_pooling_every_run_at_once_is_pooling_each_run_in_turn():
    one_by_one, at_once = campaign("seq"), campaign("all")
    added = [
        services.run_pool(run=r)
        for r in Run.objects.active().filter(collection=one_by_one).order_by("pk")
    ]
    calls = []
    total = services.runs_pool(
        collection=at_once, progress=lambda done, n, unit: calls.append((done, n, unit))
    )
    assert total == sum(added) > 0
    assert snapshot(at_once) == snapshot(one_by_one)
    assert calls[-1] == (4, 4, "runs")
    # what was pooled is not pooled again
    assert services.runs_pool(collection=at_once) == 0
    assert not spelling_keys_drift(at_once)


def test_pooling_reopens_done_questions_once_with_the_first_run_that_adds():
    c = campaign("reopen")
    done = set(
        Question.objects.filter(collection=c, status=QuestionStatus.DONE).values_list(
            "pk", flat=True
        )
    )
    assert done
    services.runs_pool(collection=c)
    reopened = JudgmentEvent.objects.filter(collection=c, action="question_reopen")
    assert sorted(e.question_id for e in reopened) == sorted(done)
    assert all(e.after["reason"].startswith("answers of run run") for e in reopened)


def test_rekeying_run_answers_gives_each_the_engine_key():
    c = campaign("rekey")
    services.runs_pool(collection=c)
    for mode in ("exact", "squad", "normalized"):
        answers = list(RunAnswer.objects.filter(run__collection=c).values_list("pk", "text", "key"))
        expected = {pk: normalize_answer(text, mode) for pk, text, _ in answers}
        changed = sum(expected[pk] != key for pk, _, key in answers)
        assert changed > 0
        assert services.run_answers_rekey(collection=c, mode=mode) == changed
        assert dict(RunAnswer.objects.filter(run__collection=c).values_list("pk", "key")) == (
            expected
        )
    # another collection's answers are left alone
    other = campaign("other", seed=8, runs=1)
    keys = sorted(RunAnswer.objects.filter(run__collection=other).values_list("pk", "key"))
    services.run_answers_rekey(collection=c, mode="exact")
    assert sorted(RunAnswer.objects.filter(run__collection=other).values_list("pk", "key")) == keys


def test_rekeying_writes_only_the_texts_whose_key_changes():
    c = campaign("rekey-none")
    services.run_answers_rekey(collection=c, mode="exact")
    # every answer holds its key already: nothing to write, no UPDATE
    with CaptureQueriesContext(connection) as ctx:
        assert services.run_answers_rekey(collection=c, mode="exact") == 0
    assert not [q for q in ctx.captured_queries if "UPDATE" in q["sql"].upper()]
    # one answer of a text holding a stale key: that answer alone is rewritten
    a = RunAnswer.objects.filter(run__collection=c).order_by("pk").first()
    RunAnswer.objects.filter(pk=a.pk).update(key="stale")
    assert services.run_answers_rekey(collection=c, mode="exact") == 1
    assert RunAnswer.objects.get(pk=a.pk).key == normalize_answer(a.text, "exact")


def test_mode_change_rekeys_strings_spellings_and_answers_and_back():
    c = campaign("modes")
    services.runs_pool(collection=c)
    strings_before = snapshot(c)["strings"]
    for mode in ("exact", "normalized"):
        services.collection_matching_mode_change(collection=c, mode=mode, by=None)
        assert not spelling_keys_drift(c)
        for text, key in AnswerString.objects.filter(question__collection=c).values_list(
            "text", "key"
        ):
            assert key == normalize_answer(text, mode)
        for text, key in RunAnswer.objects.filter(run__collection=c).values_list("text", "key"):
            assert key == normalize_answer(text, mode)
    assert snapshot(c)["strings"] == strings_before  # nothing folded either way


def test_mode_change_statements_do_not_grow_with_the_strings():
    def statements(slug: str, questions: int) -> int:
        c = campaign(slug, questions=questions, runs=2)
        services.runs_pool(collection=c)
        with CaptureQueriesContext(connection) as queries:
            services.collection_matching_mode_change(collection=c, mode="exact", by=None)
        return len(queries)

    assert statements("small", 10) == statements("large", 60)


def test_run_import_stores_the_file_row_by_row():
    c = make_collection(max_output_size=3)
    owner = make_user()
    add_member(collection=c, user=owner, role="organizer")
    for qid in ("Q1", "Q2"):
        make_question(collection=c, qid=qid)
    lines = [
        ("Q1", "1", "Straße", "0.5"),
        ("Q1", "2", 'quote "x"', "0.25"),
        ("Q1", "3", "back\\slash", "-1e3"),
        ("Q2", "7", "ＣＨＩＢＡ", "1"),
        ("Q2", "9", "\\N", "2"),
    ]
    data = "".join("\t".join(line) + "\n" for line in lines).encode()
    run = services.run_import(collection=c, owner=owner, name="r", data=data, filename="r.tsv")
    expected = [
        ("Q1", 1, "Straße", 0.5),
        ("Q1", 2, 'quote "x"', 0.25),
        ("Q1", 3, "back\\slash", -1000.0),
        ("Q2", 1, "ＣＨＩＢＡ", 1.0),
        ("Q2", 2, "\\N", 2.0),
    ]
    assert list(
        run.answers.order_by("question__qid", "rank").values_list(
            "question__qid", "rank", "text", "key", "score"
        )
    ) == [(q, r, t, normalize_answer(t, "normalized"), s) for q, r, t, s in expected]


class Boom(Exception):
    pass


def test_run_import_failing_after_its_answers_leaves_nothing(monkeypatch):
    c = make_collection()
    owner = make_user()
    add_member(collection=c, user=owner, role="organizer")
    make_question(collection=c, qid="Q1")
    real = services.insert_rows

    def insert_then_fail(*args, **kwargs):
        real(*args, **kwargs)
        raise Boom

    monkeypatch.setattr(services, "insert_rows", insert_then_fail)
    with pytest.raises(Boom):
        services.run_import(collection=c, owner=owner, name="r", data=b"Q1\t1\ta\n", filename="f")
    assert not Run.objects.filter(collection=c).exists()
    assert not RunAnswer.objects.filter(question__collection=c).exists()


def test_pooling_failing_at_the_last_run_leaves_nothing(monkeypatch):
    c = campaign("fail-pool")
    before = snapshot(c)
    real = services.edits.collection_judgments_changed
    calls = []

    def fail_at_third(**kwargs):
        calls.append(kwargs)
        if len(calls) == 3:
            raise Boom
        real(**kwargs)

    monkeypatch.setattr(services.edits, "collection_judgments_changed", fail_at_third)
    with pytest.raises(Boom):
        services.runs_pool(collection=c)
    assert snapshot(c) == before


def test_mode_change_failing_at_the_run_answers_leaves_nothing(monkeypatch):
    c = campaign("fail-mode")
    services.runs_pool(collection=c)
    before = snapshot(c)
    answers = sorted(RunAnswer.objects.filter(run__collection=c).values_list("pk", "key"))

    def fail(*args, **kwargs):
        raise Boom

    monkeypatch.setattr(services, "temp_rows", fail)
    with pytest.raises(Boom):
        services.collection_matching_mode_change(collection=c, mode="exact", by=None)
    c.refresh_from_db()
    assert c.matching_mode == "normalized"
    assert snapshot(c) == before
    assert sorted(RunAnswer.objects.filter(run__collection=c).values_list("pk", "key")) == answers


def test_judgments_import_failing_at_its_last_write_leaves_nothing(monkeypatch):
    c = campaign("fail-import", runs=1)
    synsets = sorted(
        AnswerSynset.objects.filter(question__collection=c).values_list("pk", "question_id")
    )
    before = snapshot(c)
    data = b"question_id,synset_id,answer,level\nQ01,a,Paris,S\nQ01,,Lyon,\nQ02,b,Nice,A\n"

    def fail(*args, **kwargs):
        raise Boom

    monkeypatch.setattr(judgments_plan, "spelling_keys_write", fail)
    with pytest.raises(Boom):
        imports.collection_import(collection=c, kind="judgments", data=data, filename="j.csv")
    assert snapshot(c) == before
    assert (
        sorted(AnswerSynset.objects.filter(question__collection=c).values_list("pk", "question_id"))
        == synsets
    )


def test_judgments_reimport_keeps_strings_and_their_ids():
    c = campaign("reimport", runs=1)
    services.runs_pool(collection=c)
    data = (
        b"question_id,synset_id,answer,level\n"
        b"Q01,a,Paris,S\nQ01,a,paris.,S\nQ01,,Lyon,\nQ02,b,Nice,A\nQ03,,Tours,\n"
    )
    imports.collection_import(collection=c, kind="judgments", data=data, filename="j.csv")
    first = snapshot(c)
    ids = sorted(AnswerString.objects.filter(question__collection=c).values_list("pk", flat=True))
    imports.collection_import(collection=c, kind="judgments", data=data, filename="j.csv")
    again = snapshot(c)
    assert (
        sorted(AnswerString.objects.filter(question__collection=c).values_list("pk", flat=True))
        == ids
    )
    assert again["strings"] == first["strings"]
    assert again["keys"] == first["keys"]
    assert not spelling_keys_drift(c)
