"""The end of a question and its return: the "all strings judged" state of the workspace,
next question, questions reopened when they gain unjudged strings, and unassigned
questions offered to every assessor."""

import pytest

from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def url(q, what="judge"):
    return f"/questions/{q.pk}/{what}/"


@pytest.fixture
def world():
    c = make_collection(slug="w")
    q1 = make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]], unjudged=["Lyon"])
    q2 = make_question(collection=c, qid="Q2", synsets=[[("Tokyo", "S")]])
    ass = make_user(username="ass")
    add_member(collection=c, user=ass, role="assessor")
    q1.assessors.add(ass)
    q2.assessors.add(ass)
    return c, q1, q2, ass


def test_workspace_says_when_every_string_is_judged(client, world):
    _c, q1, q2, ass = world
    client.force_login(ass)
    html = client.get(url(q1)).content.decode()
    assert 'id="all-judged"' not in html  # a candidate is left
    html = client.get(url(q2)).content.decode()
    assert 'id="all-judged"' in html and "All strings judged" in html
    assert f"/queue/next/?collection=w&amp;after={q2.pk}" in html


def test_next_question_after_the_one_left(client, world):
    _c, q1, q2, ass = world
    client.force_login(ass)
    r = client.get(f"/queue/next/?collection=w&after={q2.pk}")
    assert r.status_code == 302 and r.headers["Location"] == url(q1)
    r = client.get(f"/queue/next/?collection=w&after={q1.pk}")
    assert r.headers["Location"] == url(q2)


# -- a question that gains an unjudged string is not done --------------------------------------
def _done(q):
    from annotate.models import Question

    Question.objects.filter(pk=q.pk).update(status="done")
    q.refresh_from_db()
    return q


def test_pooling_reopens_done_questions_and_folds_spellings(world):
    from annotate.models import AnswerString, JudgmentEvent
    from annotate.selectors import next_question
    from evaluation.services import run_pool
    from tests.factories import make_run

    c, q1, q2, ass = world
    _done(q2)
    assert (
        next_question(ass, collection=c, after=q1) is None
        or next_question(ass, collection=c, after=q1).pk != q2.pk
    )
    run = make_run(collection=c, owner=ass, answers={"Q2": ["Kyoto", "kyoto", "KYOTO", "tokyo"]})
    assert run_pool(run=run, by=ass) == 1
    q2.refresh_from_db()
    assert q2.status == "in_progress"
    kyoto = AnswerString.objects.get(question=q2, key="kyoto")
    assert (kyoto.text, kyoto.variants, kyoto.judged_at) == ("Kyoto", ["kyoto", "KYOTO"], None)
    assert AnswerString.objects.get(question=q2, key="tokyo").variants == ["tokyo"]
    event = JudgmentEvent.objects.get(question=q2, action="question_reopen")
    assert event.after["status"] == "in_progress" and "run" in event.after["reason"]
    assert JudgmentEvent.objects.get(action="pool_run").after["reopened"] == 1
    # back in the assessor's queue and "next question"
    assert next_question(ass, collection=c, after=q1).pk == q2.pk
    assert run_pool(run=run, by=ass) == 0  # nothing new: nothing reopened again
    assert JudgmentEvent.objects.filter(action="question_reopen").count() == 1


def test_flat_answers_reopen_done_questions(world):
    from annotate.imports import collection_import

    c, _q1, q2, _ass = world
    _done(q2)
    plan = collection_import(
        collection=c,
        kind="flat",
        filename="a.csv",
        data=b"question_id,answer\nQ2,Osaka\nQ2,osaka\nQ2,Tokyo\n",
    )
    assert plan.counts["candidate strings to add"] == 1
    q2.refresh_from_db()
    assert q2.status == "in_progress"
    assert q2.strings.get(key="osaka").variants == ["osaka"]


def test_typed_or_unjudged_string_reopens_a_done_question(world):
    from annotate import judging

    _c, _q1, q2, ass = world
    _done(q2)
    event = judging.string_add(question=q2, text="Edo", by=ass)
    q2.refresh_from_db()
    assert q2.status == "in_progress" and event.after["reopened"] is True
    assert (event.before["status"], event.after["status"]) == ("done", "in_progress")
    judging.question_undo(question=q2, by=ass)  # the typed string goes: done again
    q2.refresh_from_db()
    assert q2.status == "done" and not q2.strings.filter(text="Edo").exists()
    tokyo = q2.strings.get(text="Tokyo")
    judging.string_unjudge(question=q2, string=tokyo.pk, by=ass)
    q2.refresh_from_db()
    assert q2.status == "in_progress"


def test_undo_never_leaves_a_done_question_with_an_unjudged_string(world):
    from annotate import judging
    from evaluation.services import run_pool
    from tests.factories import make_run

    c, _q1, q2, ass = world
    _done(q2)
    tokyo = q2.strings.get(text="Tokyo")
    judging.string_set_level(question=q2, string=tokyo.pk, level="A", by=ass)  # while done
    run_pool(run=make_run(collection=c, owner=ass, answers={"Q2": ["Kyoto"]}))
    q2.refresh_from_db()
    assert q2.status == "in_progress"
    judging.question_undo(question=q2, by=ass)  # undoes the level change, not the reopening
    q2.refresh_from_db()
    tokyo.refresh_from_db()
    assert tokyo.level.code == "S"
    assert q2.status == "in_progress"  # Kyoto waits unjudged


# -- questions nobody is assigned to -------------------------------------------------------------
def test_unassigned_question_is_offered_to_every_assessor_and_claimed_by_the_first(client):
    from annotate.models import AnswerString, JudgmentEvent
    from annotate.selectors import next_question
    from evaluation.services import run_pool
    from tests.factories import make_run

    c = make_collection(slug="u")
    q = make_question(collection=c, qid="U1", synsets=[[("Paris", "S")]])
    q.status = "done"
    q.save()
    a1, a2, part, stranger = (make_user(username=n) for n in ("a1", "a2", "part", "stranger"))
    add_member(collection=c, user=a1, role="assessor")
    add_member(collection=c, user=a2, role="assessor")
    add_member(collection=c, user=part, role="participant")
    add_member(collection=make_collection(slug="elsewhere"), user=stranger, role="assessor")
    client.force_login(a1)
    r = client.get("/queue/next/", follow=True)
    assert "Nothing left to judge" in r.content.decode()  # done: nothing to offer

    run_pool(run=make_run(collection=c, owner=part, answers={"U1": ["Lyon"]}))
    q.refresh_from_db()
    assert q.status == "in_progress"
    for user in (a1, a2):
        assert next_question(user).pk == q.pk
        assert next_question(user, collection=c).pk == q.pk
    assert next_question(part) is None and next_question(stranger) is None
    r = client.get("/queue/")
    assert r.context["unassigned_count"] == 1 and 'id="unassigned-count"' in r.content.decode()
    r = client.get("/queue/next/")
    assert r.status_code == 302 and r.headers["Location"] == url(q)
    r = client.get(url(q))
    html = r.content.decode()
    assert r.context["may_write"] and "Read only" not in html and "your first change" in html

    lyon = AnswerString.objects.get(question=q, text="Lyon")
    r = client.post(
        url(q, "act"),
        {"op": "incorrect", "string": lyon.pk, "expect": "u", "version": q.version},
        headers={"HX-Request": "true"},
    )
    assert r.status_code == 200 and "notice" not in r.content.decode()
    assert list(q.assessors.all()) == [a1]  # claimed by the first judgment
    assert JudgmentEvent.objects.filter(question=q, action="question_claim", user=a1).exists()
    assert next_question(a2) is None  # no longer offered to the others

    client.force_login(a2)
    assert "Read only" in client.get(url(q)).content.decode()
    r = client.post(
        url(q, "act"),
        {"op": "unjudge", "string": lyon.pk, "expect": "x"},
        headers={"HX-Request": "true"},
    )
    assert r.status_code == 200 and "assigned to another assessor" in r.content.decode()
    assert client.post(url(q, "act"), {"op": "unjudge", "string": lyon.pk}).status_code == 403
    lyon.refresh_from_db()
    assert lyon.state == "incorrect"


def test_next_question_skips_questions_with_nothing_to_judge(client, world):
    """A question with no strings at all is never offered; one fully judged but not done
    still is (it waits for its "done"), a done one never."""
    from annotate.selectors import next_question

    c, q1, q2, ass = world
    empty = make_question(collection=c, qid="Q3")
    empty.assessors.add(ass)
    q4 = make_question(collection=c, qid="Q4", unjudged=["Rome"])
    q4.assessors.add(ass)
    assert next_question(ass, collection=c, after=q2).pk == q4.pk  # Q3 skipped
    assert next_question(ass, collection=c, after=q4).pk == q1.pk  # wrapping round
    client.force_login(ass)
    r = client.get(f"/queue/next/?collection=w&after={q2.pk}")
    assert r.headers["Location"] == url(q4)
    _done(q1)
    _done(q2)
    _done(q4)
    assert next_question(ass, collection=c) is None  # only the empty one is left


def test_next_question_puts_fully_judged_questions_last(client, world):
    """A question whose strings are all judged but which is not done is offered only when
    no question with an unjudged string is left: "next" never lands on nothing to judge."""
    from django.utils import timezone

    from annotate import layer_selectors, layers
    from annotate.models import AnswerString, LayerJudgment, Question
    from annotate.selectors import next_question

    c, q1, q2, ass = world  # Q1 has "Lyon" unjudged, Q2 is fully judged (not done)
    Question.objects.filter(pk=q2.pk).update(status="in_progress")  # ranked first before
    q3 = make_question(collection=c, qid="Q3", unjudged=["Rome"])
    q3.assessors.add(ass)
    assert next_question(ass, collection=c).pk == q1.pk
    assert next_question(ass).pk == q1.pk
    assert next_question(ass, collection=c, after=q1).pk == q3.pk  # not Q2 (pk between)
    assert next_question(ass, collection=c, after=q3).pk == q1.pk  # wrapping round, past Q2
    client.force_login(ass)
    r = client.get(f"/queue/next/?collection=w&after={q1.pk}")
    assert r.headers["Location"] == url(q3)
    # judged in the assessor's own layer: what counts is what is left in their layer
    org, other = make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=other, role="assessor")
    q4 = make_question(collection=c, qid="Q4", unjudged=["Oslo", "Bergen"])
    layers.layers_request(collection=c, questions=[q4], assessors=[ass, other], by=org)
    layer = layer_selectors.layer_for(question=q4, user=ass)
    assert next_question(ass, collection=c, after=q3).pk == q4.pk  # gold and layer unjudged
    for s in q4.strings.all():
        LayerJudgment.objects.create(layer=layer, string=s, judged_at=timezone.now())
    assert next_question(ass, collection=c, after=q3).pk == q1.pk  # all judged in the layer
    # when nothing is left to judge anywhere, the fully judged ones are still reachable
    AnswerString.objects.filter(question__in=[q1, q3]).update(judged_at=timezone.now())
    assert next_question(ass, collection=c).pk == q2.pk
    assert next_question(ass, collection=c, after=q2).pk == q3.pk
    r = client.get(f"/queue/next/?collection=w&after={q3.pk}")
    assert r.headers["Location"] == url(q4)


def test_workspace_shows_queue_position_and_strings_left(client, world):
    c, q1, q2, ass = world
    q3 = make_question(collection=c, qid="Q3", unjudged=["Rome", "Milan"])
    q3.assessors.add(ass)
    _done(q2)
    client.force_login(ass)
    html = client.get(url(q3)).content.decode()
    assert "question 2 of 2" in html and "2 strings left" in html
    html = client.get(url(q1)).content.decode()
    assert "question 1 of 2" in html and "1 string left" in html
    html = client.get(url(q2)).content.decode()  # done: not in the open queue
    assert "of 2</span>" not in html and "0 strings left" in html


def test_history_says_why_a_question_reopened_without_naming_the_run(client):
    """Pooling reopens a done question; its history line says so in words, and the run's
    name (which assessors never see) is not in it."""
    from annotate.selectors import question_history
    from evaluation.services import run_pool
    from tests.factories import add_member, make_collection, make_question, make_run, make_user

    c = make_collection(slug="reopen-h")
    org, a = make_user(username="rh-org"), make_user(username="rh-a")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    q = make_question(collection=c, qid="RH-1", synsets=[[("Paris", "S")]])
    q.status = "done"
    q.save()
    run_pool(
        run=make_run(collection=c, owner=org, name="secret-run-xyz", answers={"RH-1": ["Lyon"]}),
        by=org,
    )
    lines = [h["sentence"] for h in question_history(q)]
    assert "the question was reopened (answers of a run were pooled)" in lines
    assert not any("secret-run-xyz" in line for line in lines)
