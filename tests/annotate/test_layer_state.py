"""Where a question judged in layers stands, decided in one place and aware of its k
(annotate/models.py ``QuestionQuerySet.with_layer_state``, annotate/layer_state.py): the
adjudication queue, the menu, the Agreement page, the scores per layer and adjudication
all ask it."""

import pytest
from django.urls import reverse

from annotate import adjudication, agreement_report, layer_selectors, layer_state, layers
from annotate.edits import Conflict
from annotate.models import (
    AnswerString,
    JudgingLayer,
    JudgmentEvent,
    LayerState,
    Question,
    QuestionStatus,
)
from annotate.organizing import membership_set
from annotate.permissions import navigation_for
from evaluation.layer_scores import layer_questions
from tests.factories import add_member, make_collection, make_question, make_user

from .test_layers import judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def short():
    """Q1 (s1, s2) asked of two layers (k = 2): ann judged hers and marked it done, then
    bob left the collection with his layer open, so it went (``_open_layers_remove``).
    Q1 has one layer, done: one assessor's judgment alone, short of its k."""
    c = make_collection()
    org, a, b = make_user(username="org"), make_user(username="ann"), make_user(username="bob")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["s1", "s2"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org, k=2)
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    ids = {s.text: s.pk for s in q.strings.all()}
    judge(la, a, ids, [("s1", 1, "S"), ("s2", None, "")])
    layers.layer_mark_done(layer=la, by=a)
    judge(lb, b, ids, [("s1", 1, "S")])
    membership_set(collection=c, user=b, role=None, by=org)
    assert list(JudgingLayer.objects.filter(question=q)) == [la]
    return c, q, org, a, la, ids


# -- the regression: a question short of its k layers waits for a new layer -----------------
def test_a_question_short_of_its_k_layers_is_not_in_the_adjudication_queue(short):
    c, _q, _org, *_ = short
    assert list(layer_selectors.adjudication_queue(c)) == []
    assert list(Question.objects.awaiting_adjudication()) == []


def test_a_question_short_of_its_k_layers_is_not_counted_as_waiting_on_the_pages(short, client):
    c, _q, org, *_ = short
    # scores per layer: left out, but not as waiting for adjudication
    assert layer_questions(c).waiting == 0 and layer_questions(c).scored == {}
    # the Agreement page: nothing in the queue, nothing complete
    report = agreement_report.collection_agreement(c)
    assert report.complete == 0
    client.force_login(org)
    r = client.get(reverse("annotate:collection-agreement", args=[c.slug]))
    assert r.status_code == 200 and r.context["queue"] == 0
    # the scores per layer page: left out as a layer to come, not as waiting
    r = client.get(reverse("evaluation:layer-scores", args=[c.slug]))
    assert r.status_code == 200
    assert r.context["result"].n_waiting == 0 and r.context["result"].n_open == 1


def test_adjudication_refuses_to_write_gold_from_the_one_layer_left(short):
    _c, q, org, _a, la, ids = short
    with pytest.raises(Conflict, match="layer"):
        adjudication.adjudicate_take(question=q, layer=la, strings=[ids["s1"]], by=org)
    with pytest.raises(Conflict, match="layer"):
        adjudication.adjudicate_take(question=q, layer=la, group=1, by=org)
    with pytest.raises(Conflict, match="layer"):
        adjudication.question_layers_to_gold(question=q, by=org)
    assert not AnswerString.objects.filter(question=q, judged_at__isnull=False).exists()
    assert not JudgmentEvent.objects.filter(
        question=q, action__in=["adjudicate_take", "layers_agree"]
    ).exists()


def test_the_adjudication_page_says_the_question_waits_for_a_new_layer(short, client):
    _c, q, org, *_ = short
    client.force_login(org)
    r = client.get(reverse("annotate:question-adjudicate", args=[q.pk]))
    assert r.status_code == 200
    assert r.context["state"] == LayerState.SHORT and r.context["rows"] == []
    assert "waits for a new layer" in r.content.decode()


def test_a_top_up_request_brings_the_question_back(short):
    c, q, org, _a, _la, ids = short
    d = make_user(username="dee")
    add_member(collection=c, user=d, role="assessor")
    assert layers.layers_request(collection=c, questions=[q], assessors=[d], by=org).layers == 1
    assert layer_state.question_layer_state(q) == LayerState.OPEN
    ld = JudgingLayer.objects.get(question=q, assessor=d)
    judge(ld, d, ids, [("s1", 1, "S"), ("s2", 2, "A")])  # s2: ann incorrect, dee correct
    layers.layer_mark_done(layer=ld, by=d)
    assert layer_state.question_layer_state(q) == LayerState.WAITING
    assert list(layer_selectors.adjudication_queue(c)) == [q]
    assert layer_questions(c).waiting == 1
    adjudication.adjudicate_take(question=q, layer=ld, strings=[ids["s2"]], by=org)
    assert layer_state.question_layer_state(q) == LayerState.COMPLETE


# -- the state, one definition --------------------------------------------------------------
def test_the_states_of_a_layered_question(short):
    c, q, _org, a, la, _ids = short
    single = make_question(collection=c, qid="Q2", unjudged=["x"])
    states = dict(
        Question.objects.filter(collection=c).with_layer_state().values_list("qid", "layer_state")
    )
    assert states == {"Q1": LayerState.SHORT, "Q2": LayerState.NONE}
    assert layer_state.question_layer_state(single) == LayerState.NONE
    assert layer_state.question_layer_state(q.pk) == LayerState.SHORT
    assert not layer_state.layers_complete(q.pk) and not layer_state.sealed_questions([q])
    # reopened, ann's layer is open again: open comes first, whatever the count
    layers.layer_mark_done(layer=la, by=a, done=False)
    assert layer_state.question_layer_state(q) == LayerState.OPEN
    assert list(Question.objects.in_layer_state(LayerState.OPEN)) == [q]


def test_every_layer_of_k_done_is_waiting_then_complete():
    c = make_collection()
    org, a, b = make_user(), make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b):
        add_member(collection=c, user=u, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["s1", "s2"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org, k=2)
    assert layer_state.question_layer_state(q) == LayerState.OPEN
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    ids = {s.text: s.pk for s in q.strings.all()}
    judge(la, a, ids, [("s1", 1, "S"), ("s2", None, "")])
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", 2, "A")])
    layers.layer_mark_done(layer=la, by=a)
    assert layer_state.question_layer_state(q) == LayerState.OPEN
    layers.layer_mark_done(layer=lb, by=b)
    assert layer_state.question_layer_state(q) == LayerState.WAITING
    assert layer_state.layers_complete(q.pk) and layer_state.sealed_questions([q]) == {q.pk}
    q.refresh_from_db()
    assert q.status == QuestionStatus.IN_PROGRESS  # s1 agreed, s2 waits
    adjudication.adjudicate_take(question=q, layer=lb, strings=[ids["s2"]], by=org)
    assert layer_state.question_layer_state(q) == LayerState.COMPLETE


# -- adjudicated questions say so -----------------------------------------------------------
def test_an_adjudicated_question_is_done_and_its_undo_reopens_it():
    from annotate.judging import question_undo

    c = make_collection()
    org, a, b = make_user(), make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b):
        add_member(collection=c, user=u, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["s1", "s2"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org, k=2)
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    ids = {s.text: s.pk for s in q.strings.all()}
    judge(la, a, ids, [("s1", 1, "S"), ("s2", None, "")])
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", 2, "A")])
    layers.layer_mark_done(layer=la, by=a)
    layers.layer_mark_done(layer=lb, by=b)
    adjudication.adjudicate_take(question=q, layer=la, strings=[ids["s2"]], by=org)
    q.refresh_from_db()
    assert q.status == QuestionStatus.DONE
    question_undo(question=q, by=org, any_user=True)
    q.refresh_from_db()
    assert q.status == QuestionStatus.IN_PROGRESS
    assert list(layer_selectors.adjudication_queue(c)) == [q]


# -- an organizer finds what waits for adjudication in their menu ---------------------------
@pytest.fixture
def waiting():
    """Two questions of k = 2 whose layers disagree on s2, no adjudicator named."""
    c = make_collection()
    org, a, b = make_user(username="org"), make_user(username="ann"), make_user(username="bob")
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b):
        add_member(collection=c, user=u, role="assessor")
    qs = [make_question(collection=c, qid=f"Q{i}", unjudged=["s1", "s2"]) for i in (1, 2)]
    layers.layers_request(collection=c, questions=qs, assessors=[a, b], by=org, k=2)
    for q in qs:
        ids = {s.text: s.pk for s in q.strings.all()}
        for user, plan in (
            (a, [("s1", 1, "S"), ("s2", None, "")]),
            (b, [("s1", 1, "S"), ("s2", 2, "A")]),
        ):
            layer = JudgingLayer.objects.get(question=q, assessor=user)
            judge(layer, user, ids, plan)
            layers.layer_mark_done(layer=layer, by=user)
    return c, qs, org, a, b


def test_the_organizers_queue_counts_what_the_agreement_page_counts(waiting, client):
    c, _qs, org, a, _b = waiting
    assert navigation_for(org)["adjudicate"] is True
    assert navigation_for(a)["adjudicate"] is False  # no adjudicator named: organizers only
    client.force_login(org)
    agreement = client.get(reverse("annotate:collection-agreement", args=[c.slug]))
    queue = client.get(reverse("annotate:adjudication-queue"))
    assert agreement.context["queue"] == 2
    assert [q.qid for q in queue.context["questions"]] == ["Q1", "Q2"]
    assert "2 questions waiting" in queue.content.decode()
    assert reverse("annotate:adjudication-queue") in queue.content.decode()  # the menu link
    client.force_login(a)
    assert client.get(reverse("annotate:adjudication-queue")).context["questions"] == []


def test_an_organizer_of_another_collection_does_not_see_these(waiting):
    _c, _qs, _org, _a, _b = waiting
    other = make_user()
    add_member(collection=make_collection(), user=other, role="organizer")
    assert navigation_for(other)["adjudicate"] is False
    assert layer_selectors.adjudicator_questions(other) == []


def test_the_organizers_question_list_says_where_each_layered_question_stands(waiting, client):
    c, qs, org, a, _b = waiting
    q1 = qs[0]
    s2 = q1.strings.get(text="s2")
    la = JudgingLayer.objects.get(question=q1, assessor=a)
    adjudication.adjudicate_take(question=q1, layer=la, strings=[s2.pk], by=org)
    client.force_login(org)
    r = client.get(reverse("annotate:question-list", args=[c.slug]))
    rows = {q.qid: q for q in r.context["questions"]}
    assert rows["Q1"].status == QuestionStatus.DONE and rows["Q1"].layer_state == "complete"
    assert rows["Q2"].layer_state == "waiting"
    html = r.content.decode()
    assert "adjudicated" in html and "waiting for adjudication" in html
    assert reverse("annotate:question-adjudicate", args=[qs[1].pk]) in html
    # an assessor sees their own layer's status, nothing of where gold stands
    client.force_login(a)
    r = client.get(reverse("annotate:question-list", args=[c.slug]))
    assert "waiting for adjudication" not in r.content.decode()
    assert not any(hasattr(q, "layer_state") for q in r.context["questions"])
