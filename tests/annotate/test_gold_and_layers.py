"""Gold writes on questions judged in layers (DESIGN.md section 9): a judgments import, a
string deletion, who writes gold, bulk re-assignment, and a member who leaves -- none of
them loses or blocks what assessors judged in their layers."""

import pytest
from django.urls import reverse

from annotate import adjudication, agreement_report, layer_selectors, layer_state, layers
from annotate.exports import export_judgments
from annotate.imports import ImportRefused, collection_import, import_plan
from annotate.models import AnswerString, JudgingLayer, LayerJudgment

from .test_layers import judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair():
    """A question Q1 (s1, s2) judged in two layers, by ``a`` and ``b``."""
    from tests.factories import add_member, make_collection, make_question, make_user

    c = make_collection()
    org, a, b = make_user(username="org"), make_user(username="ann"), make_user(username="bob")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["s1", "s2"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    ids = {s.text: s.pk for s in q.strings.all()}
    return c, q, org, a, b, la, lb, ids


def rows(layer):
    return dict(LayerJudgment.objects.filter(layer=layer).values_list("string_id", "group"))


# -- 1. a judgments import keeps the strings it names (and their layer judgments) ------------
def test_a_judgments_import_keeps_the_layer_judgments_of_the_strings_it_names(pair):
    c, q, org, a, b, la, lb, ids = pair
    judge(la, a, ids, [("s1", 1, "S"), ("s2", None, "")])
    layers.layer_mark_done(layer=la, by=a)
    judge(lb, b, ids, [("s1", 1, "A")])
    before_a, before_b = rows(la), rows(lb)
    data = b"question_id,synset_id,answer,level\nQ1,1,s1,S\n"
    collection_import(collection=c, kind="judgments", data=data, filename="g.csv", by=org)
    s1 = AnswerString.objects.get(question=q, text="s1")
    assert s1.pk == ids["s1"] and s1.judged_at is not None and s1.level.code == "S"
    assert rows(la) == before_a and rows(lb) == before_b
    assert JudgingLayer.objects.get(pk=la.pk).done


def test_reimporting_the_export_after_adjudication_changes_no_layer(pair):
    c, q, org, a, b, la, lb, ids = pair
    judge(la, a, ids, [("s1", 1, "S"), ("s2", None, "")])
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", 1, "S")])
    layers.layer_mark_done(layer=la, by=a)
    layers.layer_mark_done(layer=lb, by=b)
    adjudication.adjudicate_take(question=q, layer=la, strings=[ids["s2"]], by=org)
    n = LayerJudgment.objects.count()
    figures = agreement_report.collection_agreement(c).questions[0].figures
    text = export_judgments(c)
    collection_import(collection=c, kind="judgments", data=text.encode(), filename="g.csv", by=org)
    assert LayerJudgment.objects.count() == n == 4
    assert set(q.strings.values_list("pk", flat=True)) == set(ids.values())
    assert agreement_report.collection_agreement(c).questions[0].figures == figures


def test_a_judgments_import_that_drops_a_string_judged_in_layers_is_refused(pair):
    c, q, org, a, b, la, lb, ids = pair
    judge(la, a, ids, [("s1", 1, "S"), ("s2", None, "")])
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", 1, "S")])
    layers.layer_mark_done(layer=la, by=a)
    layers.layer_mark_done(layer=lb, by=b)
    adjudication.adjudicate_take(
        question=q, layer=la, strings=[ids["s2"]], by=org
    )  # s2 judged in gold
    data = b"question_id,synset_id,answer,level\nQ1,1,s1,S\n"
    plan = import_plan(collection=c, kind="judgments", data=data, filename="g.csv", by=org)
    assert not plan.ok
    (issue,) = plan.issues
    assert issue.line == 2 and '"s2" is judged in 2 assessor layers' in issue.message
    with pytest.raises(ImportRefused):
        collection_import(collection=c, kind="judgments", data=data, filename="g.csv", by=org)
    assert LayerJudgment.objects.count() == 4
    assert AnswerString.objects.filter(pk=ids["s2"], judged_at__isnull=False).exists()
    # naming it keeps it, with the file's judgment
    data += b"Q1,,s2,\n"
    collection_import(collection=c, kind="judgments", data=data, filename="g.csv", by=org)
    assert AnswerString.objects.get(pk=ids["s2"]).synset_id is None
    assert LayerJudgment.objects.count() == 4


def test_a_judgments_import_still_removes_a_judged_string_no_layer_judged():
    from tests.factories import make_collection, make_question

    c = make_collection()
    q = make_question(collection=c, qid="Q1", synsets=[[("x", "S")]], incorrect=["y"])
    old = dict(q.strings.values_list("text", "pk"))
    data = b"question_id,synset_id,answer,level\nQ1,1,X,A\n"
    collection_import(collection=c, kind="judgments", data=data, filename="g.csv")
    (s,) = q.strings.all()
    assert s.pk == old["x"] and s.text == "X" and s.variants == ["x"] and s.level.code == "A"


# -- 2. a string judged in layers is not deleted from gold ------------------------------------
def test_a_string_judged_in_layers_cannot_be_deleted(pair):
    from annotate.edits import Conflict
    from annotate.judging import question_undo, string_add, string_delete

    _c, q, org, a, b, la, lb, ids = pair
    judge(la, a, ids, [("s1", 1, "S")])
    with pytest.raises(Conflict, match="judged in 1 assessor layer"):
        string_delete(question=q, string=ids["s1"], by=org)
    assert rows(la) == {ids["s1"]: 1}
    string_delete(question=q, string=ids["s2"], by=org)  # nobody judged it: deleted
    assert not AnswerString.objects.filter(pk=ids["s2"]).exists()
    question_undo(question=q, by=org)
    # a string typed in gold and judged in a layer since: undoing its arrival is refused
    string_add(question=q, text="s3", by=org)
    s3 = AnswerString.objects.get(question=q, text="s3").pk
    judge(lb, b, {"s3": s3}, [("s3", None, "")])
    with pytest.raises(Conflict, match="judged in 1 assessor layer"):
        question_undo(question=q, by=org)
    assert rows(lb) == {s3: None}


# -- 3. on a question judged in layers, gold is the organizers' (and adjudication's) ---------
@pytest.fixture
def prior(pair):
    """``cal``, an assessor assigned to Q1 before its layers were requested."""
    from annotate.organizing import questions_assign
    from tests.factories import add_member, make_user

    c, q, org, _a, _b, _la, _lb, _ids = pair
    cal = make_user(username="cal")
    add_member(collection=c, user=cal, role="assessor")
    questions_assign(collection=c, questions=[q], assessors=[cal], by=org, replace=False)
    return cal


def gold_write(client, q, string):
    q.refresh_from_db()
    return client.post(
        reverse("annotate:question-act", args=[q.pk]),
        {"op": "new", "string": string, "level": "S", "version": q.version},
    )


def test_an_assessor_without_a_layer_writes_no_gold_on_a_question_judged_in_layers(
    client, pair, prior
):
    _c, q, org, a, _b, _la, _lb, ids = pair
    client.force_login(prior)
    r = client.get(reverse("annotate:question-judge", args=[q.pk]))
    assert r.status_code == 403 and b"judged independently" in r.content
    r = gold_write(client, q, ids["s1"])
    assert r.status_code == 403
    r = client.post(
        reverse("annotate:question-act", args=[q.pk]),
        {"op": "new", "string": ids["s1"], "level": "S", "version": q.version},
        headers={"HX-Request": "true"},
    )
    assert r.headers["HX-Redirect"] == reverse("annotate:question-judge", args=[q.pk])
    assert not AnswerString.objects.filter(question=q, judged_at__isnull=False).exists()
    # nor is it in their queue, or their "next question"
    from annotate.selectors import my_queue_questions, next_question

    assert my_queue_questions(prior) == [] and next_question(prior) is None
    # the layers' assessors are sent to their layer; an organizer still writes gold
    client.force_login(a)
    assert b"layer" in client.get(reverse("annotate:question-judge", args=[q.pk])).content
    assert gold_write(client, q, ids["s1"]).status_code == 403
    client.force_login(org)
    assert gold_write(client, q, ids["s1"]).status_code == 302
    assert AnswerString.objects.get(pk=ids["s1"]).synset_id is not None


def test_a_named_adjudicator_is_sent_to_the_adjudication_page(client, pair, prior):
    from annotate.models import LayerRequest

    _c, q, _org, _a, _b, _la, _lb, _ids = pair
    LayerRequest.objects.filter(question=q).update(adjudicator=prior)
    client.force_login(prior)
    r = client.get(reverse("annotate:question-judge", args=[q.pk]))
    assert r.status_code == 302 and r.url == reverse("annotate:question-adjudicate", args=[q.pk])


def test_a_bulk_reassignment_keeps_the_layers_assessors(pair, prior):
    from annotate.organizing import questions_assign
    from annotate.selectors import my_queue_questions

    c, q, org, a, b, _la, _lb, _ids = pair
    questions_assign(collection=c, questions=[q], assessors=[prior], by=org)
    assert set(q.assessors.values_list("username", flat=True)) == {"ann", "bob", "cal"}
    assert [x.qid for x in my_queue_questions(a)] == ["Q1"]
    assert [x.qid for x in my_queue_questions(b)] == ["Q1"]


# -- 4. an assessor who leaves does not block the question ----------------------------------
def test_an_assessor_who_leaves_takes_their_open_layers_with_them(pair):
    from annotate.models import JudgmentEvent, QuestionStatus
    from annotate.organizing import membership_set
    from annotate.selectors import question_history
    from tests.factories import make_question

    c, q, org, a, b, la, lb, ids = pair
    q2 = make_question(collection=c, qid="Q2", unjudged=["t1"])
    layers.layers_request(collection=c, questions=[q2], assessors=[a, b], by=org)
    judge(la, a, ids, [("s1", 1, "S")])  # Q1: a's layer open, b's done
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", None, "")])
    layers.layer_mark_done(layer=lb, by=b)
    la2 = JudgingLayer.objects.get(question=q2, assessor=a)
    judge(la2, a, {"t1": q2.strings.get().pk}, [("t1", None, "")])
    layers.layer_mark_done(layer=la2, by=a)  # Q2: a's layer done, b's open
    membership_set(collection=c, user=a, role="participant", by=org)
    assert not JudgingLayer.objects.filter(pk=la.pk).exists()
    assert JudgingLayer.objects.filter(pk=la2.pk).exists()  # done: judgments made, kept
    event = JudgmentEvent.objects.get(action="layer_remove")
    assert event.question == q and event.user == org
    level_s = c.levels.get(code="S").pk  # ids differ between databases: no literal
    assert event.before["judgments"] == 1
    assert event.before["rows"] == {str(ids["s1"]): [1, level_s]}
    assert any(
        "removed the layer ann had not marked done (1 judgment)" in line["sentence"]
        for line in question_history(q)
    )
    # Q1's only layer left is done, but one layer is no independent judgment of k = 2: no
    # agreement step; the question waits, unsealed, for another layer (a top-up request)
    q.refresh_from_db()
    assert q.status != QuestionStatus.DONE
    assert not JudgmentEvent.objects.filter(question=q, action="layers_agree").exists()
    assert AnswerString.objects.get(pk=ids["s2"]).judged_at is None
    assert not layer_state.sealed_questions([q]) and not layer_state.layers_complete(q.pk)
    # Q2 waits for b, as before
    assert JudgingLayer.objects.filter(question=q2, done_at__isnull=True).get().assessor == b
    assert not JudgmentEvent.objects.filter(question=q2, action="layers_agree").exists()


def test_a_removed_member_leaves_a_question_free_for_another_layer(pair):
    from annotate.organizing import membership_set
    from tests.factories import add_member, make_user

    c, q, org, a, b, la, lb, ids = pair
    judge(la, a, ids, [("s1", 1, "S")])
    membership_set(collection=c, user=a, role=None, by=org)
    assert list(JudgingLayer.objects.filter(question=q)) == [lb]
    d = make_user(username="dee")
    add_member(collection=c, user=d, role="assessor")
    # the question is topped up to its k = 2 layers: one more, from an assessor without one
    assert (
        layers.layers_request(collection=c, questions=[q], assessors=[d], by=org, k=2).layers == 1
    )
    assert JudgingLayer.objects.filter(question=q).count() == 2
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", None, "")])
    layers.layer_mark_done(layer=lb, by=b)
    ld = JudgingLayer.objects.get(question=q, assessor=d)
    judge(ld, d, ids, [("s1", 1, "S"), ("s2", 1, "A")])
    layers.layer_mark_done(layer=ld, by=d)
    assert list(layer_selectors.adjudication_queue(c)) == [q]  # s2 disagreed
