"""Scores kept in the database (``evaluation.score_store``, issue 24): the figures are the
engine's on the current judgments after every judgment writer, a view after a judgment
scores only the questions judged since, a new run scores only that run, and each run's
counts (questions answered, unjudged answers) follow the judgments."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotate import judging, organizing
from annotate.imports import collection_import
from annotate.models import AnswerString, Collection, LevelRow, Question
from annotate.spellings import spelling_keys_drift
from bench.campaign_data import Size, build
from evaluation import score_store, selectors, services
from evaluation.analysis.score_config import ScoreConfig
from evaluation.metrics import evaluate
from evaluation.models import Run, RunAnswer, RunScores, ScoreBasis
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

CONFIG = ScoreConfig(metrics=("q_measure", "r_measure", "rr", "ap", "ndcg@5", "ap_trunc"))


def _campaign(questions: int = 30, runs: int = 4, answers: int = 5, seed: int = 3):
    campaign = build(Size(questions, runs, answers), seed, reuse=False)
    collection = Collection.objects.get(pk=campaign.collection_id)
    return collection, list(Run.objects.filter(collection=collection).order_by("name"))


def _reference(collection: Collection, runs: list[Run], config: ScoreConfig = CONFIG):
    """Every run scored from scratch with the engine: what the pages showed before."""
    collection.refresh_from_db()
    return evaluate(
        services.collection_judgments(collection),
        [services.run_ranking(r) for r in runs],
        config.metrics,
        gains=config.profile(),
        beta=config.beta,
        rbp_p=config.rbp_p,
    )


def _assert_same(collection: Collection, runs: list[Run], config: ScoreConfig = CONFIG):
    """The stored scores, their counts and marks are the engine's on the current data."""
    runs = [Run.objects.get(pk=r.pk) for r in runs]
    got = services.score_runs(collection, runs, config)
    want = _reference(collection, runs, config)
    assert list(got.questions) == list(want.questions)
    assert got.runs == want.runs
    np.testing.assert_array_equal(got.values, want.values)  # to the last bit
    assert got.unknown == want.unknown
    np.testing.assert_array_equal(got.unjudged(), want.unjudged())
    stats = selectors.run_answer_stats(runs)
    unjudged = selectors.unjudged_counts(runs)
    for r in runs:
        counts = got.counts[r.name]
        assert counts.questions == stats.get(r.pk, {}).get("questions", 0)
        assert counts.answers == stats.get(r.pk, {}).get("answers", 0)
        assert counts.unjudged == unjudged.get(r.pk, 0)
    some = list(want.questions[:7])
    frame = want.marked.frame()
    frame = frame[frame["question_id"].isin(some)].reset_index(drop=True)
    assert got.marks(list(got.runs), some).reset_index(drop=True).equals(frame)
    return got


def _bumped(collection: Collection, write, *questions: Question) -> None:
    """``write`` bumps the collection's judgment version and each question's version."""
    before = Collection.objects.get(pk=collection.pk).judgment_version
    versions = {q.pk: Question.objects.get(pk=q.pk).version for q in questions}
    write()
    assert Collection.objects.get(pk=collection.pk).judgment_version > before
    for pk, v in versions.items():
        assert Question.objects.get(pk=pk).version > v


def test_the_campaign_builder_makes_valid_data():
    collection, runs = _campaign()
    assert spelling_keys_drift(collection) == []
    assert len(runs) == 4
    assert AnswerString.objects.filter(question__collection=collection, judged_at=None).exists()
    # answers match judged strings, pooled ones and none: every kind is there
    got = _assert_same(collection, runs)
    assert all(got.counts[r.name].unjudged > 0 for r in runs)
    assert got.values[:, 0, :].max() > 0


def test_stored_scores_are_the_engines_and_are_read_back():
    collection, runs = _campaign()
    _assert_same(collection, runs)
    assert RunScores.objects.filter(run__in=runs).count() == len(runs)
    # read back: no run answer is read again
    with CaptureQueriesContext(connection) as ctx:
        _assert_same_stored(collection, runs)
    assert not [q for q in ctx.captured_queries if "evaluation_runanswer" in q["sql"]]


def _assert_same_stored(collection, runs):
    got = services.score_runs(collection, runs, CONFIG)
    assert got.values.shape[0] == len(runs)


def _judge_one(collection: Collection) -> Question:
    """A pooled string of a judged question goes into its first synset: that question's
    scores change, and an answer that was unjudged is judged."""
    s = (
        AnswerString.objects.filter(
            question__collection=collection,
            judged_at=None,
            question__strings__synset__isnull=False,
        )
        .order_by("pk")
        .first()
    )
    synset = s.question.synsets.order_by("ordinal").first()
    _bumped(
        collection,
        lambda: judging.string_judge(
            question=s.question_id, string=s.pk, synset=synset.pk, level="A", by=None
        ),
        s.question,
    )
    return s.question


def test_a_judgment_rescores_only_its_question(monkeypatch):
    collection, runs = _campaign()
    _assert_same(collection, runs)
    q = _judge_one(collection)
    read = []
    original = score_store._answers

    def spy(run_ids, question_ids=None):
        read.append(None if question_ids is None else sorted(question_ids))
        return original(run_ids, question_ids)

    monkeypatch.setattr(score_store, "_answers", spy)
    got = services.score_runs(collection, runs, CONFIG)
    # the runs' answers to the judged question only, then the marks' questions
    assert read == [[q.pk]]
    want = _reference(collection, runs)
    np.testing.assert_array_equal(got.values, want.values)
    _assert_same(collection, runs)


def test_many_judgments_move_the_stored_rows_forward(monkeypatch):
    monkeypatch.setattr(score_store, "MAX_DELTA_ANSWERS", 0)
    collection, runs = _campaign()
    _assert_same(collection, runs)
    first = set(RunScores.objects.filter(run__in=runs).values_list("basis_id", flat=True))
    _judge_one(collection)
    _assert_same(collection, runs)
    now = Collection.objects.get(pk=collection.pk).judgment_version
    bases = ScoreBasis.objects.filter(collection=collection)
    assert [b.judgment_version for b in bases] == [now]  # the old basis is gone
    assert first.isdisjoint(
        RunScores.objects.filter(run__in=runs).values_list("basis_id", flat=True)
    )
    assert RunScores.objects.filter(run__in=runs).count() == len(runs)


def test_a_new_run_scores_that_run_only(monkeypatch):
    collection, runs = _campaign(runs=3)
    old, new = runs[:2], runs[2]
    _assert_same(collection, old)
    read = []
    original = score_store._answers

    def spy(run_ids, question_ids=None):
        read.append(sorted(run_ids))
        return original(run_ids, question_ids)

    monkeypatch.setattr(score_store, "_answers", spy)
    services.score_runs(collection, runs, CONFIG)
    assert read == [[new.pk]]
    monkeypatch.undo()
    _assert_same(collection, runs)


def test_a_replaced_run_is_scored_again():
    collection, runs = _campaign(runs=2)
    _assert_same(collection, runs)
    run = runs[0]
    first = RunAnswer.objects.filter(run=run).order_by("question_id", "rank").first()
    RunAnswer.objects.filter(run=run, question_id=first.question_id).delete()
    Run.objects.filter(pk=run.pk).update(sha256="another file")
    _assert_same(collection, runs)
    # stored for the new file, at the same judgment version: the next view reads it
    assert list(RunScores.objects.filter(run=run).values_list("answers_sha256", flat=True)) == [
        "another file"
    ]


def test_every_judgment_writer_bumps_the_versions_the_scores_go_by():
    """Each write of gold judgments bumps the collection's judgment version and the
    version of each question it changes; the stored scores then follow (they go by those
    versions alone: without the bump a page would show the old scores)."""
    org = make_user()
    c = make_collection()
    add_member(collection=c, user=org, role="organizer")
    q1 = make_question(
        collection=c,
        qid="Q1",
        synsets=[[("Paris", "S"), ("Paris, France", "A")], [("Lyon", "B")]],
        incorrect=["Rome"],
        unjudged=["Marseille", "Nice"],
    )
    q2 = make_question(collection=c, qid="Q2", synsets=[[("Blue", "S")]], unjudged=["Red"])
    runs = [
        make_run(
            collection=c,
            owner=org,
            name="a",
            answers={"Q1": ["Marseille", "Paris", "Lyon", "Rome"], "Q2": ["Red", "Blue"]},
        ),
        make_run(
            collection=c,
            owner=org,
            name="b",
            answers={"Q1": ["Nice", "paris, france", "NIL"], "Q2": ["Blue", "Green"]},
        ),
    ]
    _assert_same(c, runs)

    def string(q, text):
        return AnswerString.objects.get(question=q, text=text)

    def synset(q, text):
        return string(q, text).synset_id

    steps = [
        # (what, the write, the questions it changes)
        (
            "judge into a synset",
            lambda: judging.string_judge(
                question=q1, string=string(q1, "Marseille").pk, synset=synset(q1, "Lyon"), by=org
            ),
            [q1],
        ),
        (
            "judge incorrect",
            lambda: judging.string_judge(question=q1, string=string(q1, "Nice").pk, by=org),
            [q1],
        ),
        (
            "set a level",
            lambda: judging.string_set_level(
                question=q1, string=string(q1, "Paris").pk, level="B", by=org
            ),
            [q1],
        ),
        (
            "send back to the pool",
            lambda: judging.string_unjudge(question=q1, string=string(q1, "Rome").pk, by=org),
            [q1],
        ),
        ("undo", lambda: judging.question_undo(question=q1, by=org), [q1]),
        (
            "type a judged string",
            lambda: judging.string_add(question=q2, text="Green", new_synset=True, by=org),
            [q2],
        ),
        (
            "edit a string",
            lambda: judging.string_edit(
                question=q2, string=string(q2, "Green").pk, text="Green!", by=org
            ),
            [q2],
        ),
        (
            "merge synsets",
            lambda: judging.synset_merge(
                question=q1, synsets=[synset(q1, "Paris"), synset(q1, "Lyon")], by=org
            ),
            [q1],
        ),
        (
            "split a synset",
            lambda: judging.synset_split(question=q1, strings=[string(q1, "Lyon").pk], by=org),
            [q1],
        ),
        (
            "delete a string",
            lambda: judging.string_delete(question=q2, string=string(q2, "Blue").pk, by=org),
            [q2],
        ),
        ("mark NIL", lambda: judging.question_mark_nil(question=q2, by=org), [q2]),
        (
            "import judgments",
            lambda: collection_import(
                collection=c,
                kind="judgments",
                data=b"question_id,synset_id,answer,level\nQ2,1,Red,S\nQ2,,Blue,\n",
                filename="j.csv",
            ),
            [q2],
        ),
        (
            "change the levels' gains",
            lambda: organizing.collection_save(
                collection=Collection.objects.get(pk=c.pk),
                levels=[LevelRow("S", "S", 4.0), LevelRow("A", "A", 2.0), LevelRow("B", "B", 0.5)],
                by=org,
            ),
            [],
        ),
        (
            "change the matching mode",
            lambda: services.collection_matching_mode_change(
                collection=Collection.objects.get(pk=c.pk), mode="exact", by=org
            ),
            [],
        ),
    ]
    for what, write, questions in steps:
        try:
            _bumped(c, write, *questions)
        except AssertionError as e:
            raise AssertionError(f"{what}: {e}") from e
        _assert_same(c, runs)


def test_the_runs_page_counts_follow_the_judgments(client):
    collection, runs = _campaign(runs=2)
    org = make_user()
    add_member(collection=collection, user=org, role="organizer")
    client.force_login(org)

    def rows():
        page = client.get(f"/collections/{collection.slug}/runs/")
        return {
            row["run"].name: (row["questions"], row["unjudged"]) for row in page.context["rows"]
        }

    before = rows()
    assert before == {
        r.name: (
            selectors.run_answer_stats([r])[r.pk]["questions"],
            selectors.unjudged_counts([r])[r.pk],
        )
        for r in runs
    }
    # judge every pooled string some run returned: those answers are judged now
    answered = set(RunAnswer.objects.filter(run__in=runs).values_list("question_id", "key"))
    pooled = [
        s
        for s in AnswerString.objects.filter(question__collection=collection, judged_at=None)
        if (s.question_id, s.key) in answered
    ]
    assert pooled
    for s in pooled:
        judging.string_judge(question=s.question_id, string=s.pk, by=None)
    after = rows()
    for r in runs:
        assert after[r.name][1] == selectors.unjudged_counts([r]).get(r.pk, 0)
    assert sum(u for _, u in after.values()) < sum(u for _, u in before.values())


def test_a_judgment_written_while_scoring_is_not_stored_under_the_old_version(monkeypatch):
    collection, runs = _campaign(runs=2)
    original = score_store.judgments_read
    calls = []

    def judging_meanwhile(*args, **kwargs):
        out = original(*args, **kwargs)
        if not calls:
            calls.append(1)
            _judge_one(collection)  # after the judgments were read, before storing
        return out

    monkeypatch.setattr(score_store, "judgments_read", judging_meanwhile)
    services.score_runs(collection, runs, CONFIG)
    version = Collection.objects.get(pk=collection.pk).judgment_version
    assert set(
        RunScores.objects.filter(run__in=runs).values_list("basis__judgment_version", flat=True)
    ) == {version}
    monkeypatch.undo()
    _assert_same(collection, runs)


def test_no_runs_and_unjudged_collections_score_as_before():
    c = make_collection()
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    make_question(collection=c, qid="Q1", unjudged=["x"])
    run = make_run(collection=c, owner=org, name="a", answers={"Q1": ["x"]})
    got = services.score_runs(c, [], CONFIG)
    assert got.values.shape == (0, len(CONFIG.metrics), 0)
    got = services.score_runs(c, [run], CONFIG)
    assert got.values.shape == (1, len(CONFIG.metrics), 0)
    assert got.unknown == {"a": 1} and got.counts["a"].unjudged == 1
    _assert_same(c, [run])
