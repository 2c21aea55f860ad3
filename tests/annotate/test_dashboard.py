"""The organizer's dashboard and the next steps of a new collection."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from annotate import judging
from annotate.imports import collection_import
from annotate.models import AnswerString, JudgmentEvent, Question
from annotate.selectors import collection_dashboard, collection_overview, organizer_next_steps
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import as archive_import
from evaluation.services import run_pool
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    c = make_collection(slug="dash")
    org, a1, a2 = (make_user(username=name) for name in ("d-org", "d-a1", "d-a2"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a1, role="assessor")
    add_member(collection=c, user=a2, role="assessor")
    q1 = make_question(collection=c, qid="D-1", unjudged=["Kawabata", "Mishima", "Oe"])
    q2 = make_question(collection=c, qid="D-2", unjudged=["Paris"])
    make_question(collection=c, qid="D-3", unjudged=["Rome"])
    return c, org, a1, a2, q1, q2


def _judge_all(question, user, when):
    for s in AnswerString.objects.filter(question=question).order_by("id"):
        judging.string_judge(question=question.pk, string=s.pk, by=user, new_synset=True)
    judging.question_set_status(question=question.pk, status="done", by=user)
    # place the events in time: first judgment at ``when``, "done" 90 s later
    events = list(JudgmentEvent.objects.filter(question=question, user=user).order_by("id"))
    for i, e in enumerate(events):
        e.created_at = when + timedelta(seconds=30 * i)
    JudgmentEvent.objects.bulk_update(events, ["created_at"])


def test_throughput_per_assessor_today_and_in_all(world):
    c, _org, a1, _a2, q1, q2 = world
    now = timezone.now()
    _judge_all(q1, a1, now - timedelta(days=3))  # 3 strings, 90 s to done
    _judge_all(q2, a1, timezone.localtime(now).replace(hour=0, minute=1))  # today, 30 s
    board = collection_dashboard(c, now=now)
    rows = {a.username: a for a in board.assessors}
    assert set(rows) == {"d-a1", "d-a2"}
    one = rows["d-a1"]
    assert (one.questions_total, one.strings_total, one.done_total) == (2, 4, 2)
    assert (one.questions_today, one.strings_today) == (1, 1)
    assert one.median_seconds == pytest.approx(60.0)  # median of 90 s and 30 s
    two = rows["d-a2"]
    assert (two.questions_total, two.strings_total, two.median_seconds) == (0, 0, None)
    assert (board.questions, board.done, board.todo) == (3, 2, 1)
    assert board.percent_done == 67


def test_stuck_questions_and_questions_reopened_by_pooling(world):
    c, org, a1, a2, q1, q2 = world
    now = timezone.now()
    s = AnswerString.objects.filter(question=q1).first()
    judging.string_judge(question=q1.pk, string=s.pk, by=a1, new_synset=True)
    # the judgment 30 hours ago: its event, and the question's own write with it
    JudgmentEvent.objects.filter(question=q1).update(created_at=now - timedelta(hours=30))
    Question.objects.filter(pk=q1.pk).update(updated_at=now - timedelta(hours=30))
    assert Question.objects.get(pk=q1.pk).status == "in_progress"
    board = collection_dashboard(c, now=now)
    assert [q["qid"] for q in board.stuck] == ["D-1"]
    assert collection_dashboard(c, now=now, stuck_after=timedelta(hours=31)).stuck == []
    # D-2 done, then a run brings a new answer: pooling reopens it
    _judge_all(q2, a2, now - timedelta(hours=1))
    run = make_run(collection=c, owner=org, name="r1", answers={"D-2": ["Lyon"]})
    run_pool(run=run, by=org)
    board = collection_dashboard(c, now=now)
    assert [e["question__qid"] for e in board.reopened_by_pooling] == ["D-2"]
    assert "r1" in board.reopened_by_pooling[0]["after__reason"]
    assert board.reopened_by_pooling[0]["status_label"] == "In progress"


def test_dashboard_page_for_organizers_only(world, client):
    _c, org, a1, _a2, q1, _q2 = world
    _judge_all(q1, a1, timezone.now())
    client.force_login(org)
    page = client.get("/collections/dash/dashboard/").content.decode()
    assert "<h1>Dashboard</h1>" in page and "d-a1" in page and "1 of 3 questions done" in page
    client.force_login(a1)
    assert client.get("/collections/dash/dashboard/").status_code == 403


def test_dashboard_queries_do_not_grow_with_the_collection(world, django_assert_max_num_queries):
    c, _org, _a1, _a2, _q1, _q2 = world
    for i in range(30):
        make_question(collection=c, qid=f"X-{i}", unjudged=["a", "b"])
    with django_assert_max_num_queries(10):
        collection_dashboard(c)


def test_a_new_collection_guides_its_organizer(client):
    c = make_collection(slug="fresh")
    org = make_user(username="f-org")
    add_member(collection=c, user=org, role="organizer")
    steps = [s["step"] for s in organizer_next_steps(c, collection_overview(c))]
    assert steps == ["import", "members"]
    client.force_login(org)
    page = client.get("/collections/fresh/").content.decode()
    assert "Next steps" in page and "Import the questions" in page
    make_question(collection=c, qid="F-1")
    a = make_user(username="f-a")
    add_member(collection=c, user=a, role="assessor")
    assert [s["step"] for s in organizer_next_steps(c, collection_overview(c))] == ["assign"]
    Question.objects.get(qid="F-1").assessors.add(a)
    assert organizer_next_steps(c, collection_overview(c)) == []
    assert "Next steps" not in client.get("/collections/fresh/").content.decode()


# -- an import is a change; an undone judgment is no judgment --------------------------------
def test_questions_a_judgments_import_put_in_progress_are_not_stuck_at_once(world):
    """They used to be listed as stuck for 24 hours or more with "last change: never": the
    import writes no event per question, and the last change read the events only."""
    c, org, *_ = world
    collection_import(
        collection=c,
        kind="questions",
        data=b"question_id,question\nN-1,New?\nN-2,Newer?\n",
        filename="q.csv",
        by=org,
    )
    collection_import(
        collection=c,
        kind="judgments",
        data=b"question_id,synset_id,answer,level\nN-1,1,Yes,S\nN-2,,No,\n",
        filename="j.csv",
        by=org,
    )
    now = timezone.now()
    assert set(Question.objects.filter(qid__startswith="N-").values_list("status", flat=True)) == {
        "in_progress"
    }
    assert collection_dashboard(c, now=now).stuck == []
    later = collection_dashboard(c, now=now + timedelta(hours=25)).stuck
    assert [q["qid"] for q in later] == ["N-1", "N-2"]
    assert all(now - timedelta(minutes=5) < q["last"] <= now for q in later)


def test_a_judgments_import_is_a_change_of_a_question_judged_long_ago(world):
    c, org, a1, _a2, q1, _q2 = world
    now = timezone.now()
    s = AnswerString.objects.filter(question=q1).first()
    judging.string_judge(question=q1.pk, string=s.pk, by=a1, new_synset=True)
    JudgmentEvent.objects.filter(question=q1).update(created_at=now - timedelta(hours=30))
    Question.objects.filter(pk=q1.pk).update(updated_at=now - timedelta(hours=30))
    assert [q["qid"] for q in collection_dashboard(c, now=now).stuck] == ["D-1"]
    collection_import(
        collection=c,
        kind="judgments",
        data=b"question_id,synset_id,answer,level\nD-1,1,Kawabata,S\n",
        filename="j.csv",
        by=org,
    )
    assert collection_dashboard(c).stuck == []


def test_a_layers_import_is_a_change(world):
    c, org, _a1, _a2, q1, _q2 = world
    now = timezone.now()
    Question.objects.filter(pk=q1.pk).update(
        status="in_progress", updated_at=now - timedelta(hours=30)
    )
    assert [q["qid"] for q in collection_dashboard(c, now=now).stuck] == ["D-1"]
    collection_import(
        collection=c,
        kind="layers",
        data=b"question_id,synset_id,answer,level,assessor,done\nD-1,1,Kawabata,S,d-a1,\n",
        filename="l.csv",
        by=org,
    )
    assert collection_dashboard(c).stuck == []


def test_a_restored_archive_is_a_change(world):
    c, _org, a1, _a2, q1, _q2 = world
    s = AnswerString.objects.filter(question=q1).first()
    judging.string_judge(question=q1.pk, string=s.pk, by=a1, new_synset=True)
    JudgmentEvent.objects.filter(question=q1).update(created_at=timezone.now() - timedelta(days=10))
    copy = archive_import(data=collection_export(collection=c), slug="dash-copy")
    assert Question.objects.get(collection=copy, qid="D-1").status == "in_progress"
    assert collection_dashboard(copy).stuck == []


def test_the_question_list_shows_the_import_as_the_last_change(world, client):
    c, org, *_ = world
    collection_import(
        collection=c,
        kind="questions",
        data=b"question_id,question\nN-1,New?\n",
        filename="q.csv",
        by=org,
    )
    client.force_login(org)
    page = client.get(f"/collections/{c.slug}/questions/", {"q": "N-1"}).content.decode()
    today = timezone.localtime().strftime("%Y-%m-%d")
    assert re.search(rf'<td class="small[^"]*">{today}', page)


def test_an_undone_judgment_is_not_a_string_judged_today(world):
    c, _org, a1, _a2, q1, q2 = world
    s1, s2 = AnswerString.objects.filter(question=q1).order_by("id")[:2]
    judging.string_judge(question=q1.pk, string=s1.pk, by=a1, new_synset=True)
    judging.question_undo(question=q1.pk, by=a1)
    one = {a.username: a for a in collection_dashboard(c).assessors}["d-a1"]
    assert (one.strings_today, one.strings_total) == (0, 0)
    assert (one.questions_today, one.questions_total) == (0, 0)
    judging.string_judge(question=q1.pk, string=s2.pk, by=a1, new_synset=True)
    (p,) = AnswerString.objects.filter(question=q2)
    judging.string_judge(question=q2.pk, string=p.pk, by=a1, new_synset=True)
    one = {a.username: a for a in collection_dashboard(c).assessors}["d-a1"]
    assert (one.strings_today, one.strings_total) == (2, 2)
    assert (one.questions_today, one.questions_total) == (2, 2)


def test_a_flat_answer_list_is_a_change_of_the_questions_it_brings_strings_to(world):
    c, org, _a1, _a2, q1, q2 = world
    now = timezone.now()
    Question.objects.filter(pk__in=[q1.pk, q2.pk]).update(
        status="in_progress", updated_at=now - timedelta(hours=30)
    )
    assert [q["qid"] for q in collection_dashboard(c, now=now).stuck] == ["D-1", "D-2"]
    collection_import(
        collection=c,
        kind="flat",
        data=b"question_id,answer\nD-1,Tanizaki\nD-2,paris\n",  # D-2: a string it has
        filename="a.csv",
        by=org,
    )
    assert [q["qid"] for q in collection_dashboard(c).stuck] == ["D-2"]
