"""Red team: an assessor judging a question in their own layer sees nothing of gold, of the
other layers or of who else judges it until their layer is done (DESIGN.md section 9) --
on every page, not only the judging workspace."""

import csv
import io
import re
from datetime import timedelta

import pytest
from django.db.models import F
from django.urls import get_resolver, reverse
from django.utils import timezone

from annotate import agreement_report, layer_selectors, layer_state, layers
from annotate.models import JudgingLayer, JudgmentEvent, LayerRequest, Question, QuestionStatus
from annotate.selectors import collection_dashboard
from api.services import api_token_create
from evaluation.reliability_views import DOWNLOADS
from tests.factories import add_member, make_collection, make_question, make_run, make_user
from tests.test_login_required import walk

pytestmark = pytest.mark.django_db


@pytest.fixture
def w(client):
    c = make_collection(slug="blind")
    org, a, b = (make_user(username=n) for n in ("org", "ann", "zebedee"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    # gold holds two synsets already: a layer must not show them, nor their count
    q = make_question(
        collection=c,
        qid="Q1",
        text="Who wrote Hamlet?",
        synsets=[[("gold-one", "A")], [("gold-two", "B")]],
        unjudged=["Shakespeare", "Marlowe"],
    )
    # ann is both one of the two assessors and the named adjudicator: ``layers_request``
    # and the layers CSV refuse this now, but data from before may hold it, and the pages
    # must stay blind even so
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    LayerRequest.objects.filter(question=q).update(adjudicator=a)
    ids = {s.text: s.pk for s in q.strings.all()}
    # bob judged in his layer (not done)
    layers.layer_judge(
        layer=JudgingLayer.objects.get(question=q, assessor=b),
        string=ids["Marlowe"],
        new_group=True,
        level="S",
        by=b,
    )
    client.force_login(a)
    return {"c": c, "q": q, "org": org, "a": a, "b": b, "ids": ids}


def test_adjudicator_with_an_open_layer_cannot_open_the_adjudication_page(client, w):
    r = client.get(reverse("annotate:question-adjudicate", args=[w["q"].pk]))
    assert r.status_code == 403
    assert b"zebedee" not in r.content and b"gold-one" not in r.content


def test_adjudicator_with_an_open_layer_cannot_adjudicate(client, w):
    q = w["q"]
    layer_b = JudgingLayer.objects.get(question=q, assessor=w["b"])
    r = client.post(
        reverse("annotate:question-adjudicate-act", args=[q.pk]),
        {"op": "take", "layer": layer_b.pk, "string": w["ids"]["Marlowe"]},
    )
    assert r.status_code == 403
    q.refresh_from_db()
    assert not q.strings.get(text="Marlowe").judged_at


def _finish(layer, user, ids) -> None:
    for s in ids.values():
        if not layer.judgments.filter(string_id=s).exists():
            layers.layer_judge(layer=layer, string=s, by=user)
    layers.layer_mark_done(layer=layer, by=user)


def test_adjudicator_opens_the_page_once_every_layer_is_done(client, w):
    q, ids = w["q"], w["ids"]
    layer_a = JudgingLayer.objects.get(question=q, assessor=w["a"])
    _finish(layer_a, w["a"], ids)
    # her layer is done, zebedee's is not: the adjudication page would show his layer
    # while she may still reopen hers -- refused until his is done too
    r = client.get(reverse("annotate:question-adjudicate", args=[q.pk]))
    assert r.status_code == 403 and b"Marlowe" not in r.content
    assert not layer_selectors.can_adjudicate(w["a"], q, "assessor")
    _finish(JudgingLayer.objects.get(question=q, assessor=w["b"]), w["b"], ids)
    r = client.get(reverse("annotate:question-adjudicate", args=[q.pk]))
    assert r.status_code == 200 and b"zebedee" in r.content


# -- done is not a window onto the layers still being judged ----------------------------------
def _page(client, q, **headers) -> str:
    return client.get(
        reverse("annotate:question-judge", args=[q.pk]), headers=headers
    ).content.decode()


def test_my_layer_done_shows_nothing_of_a_layer_still_open(client, w):
    """ann marks her layer done while zebedee still judges: her page (whole or the htmx
    fragment) says she waits for one assessor and shows nothing of his layer, which she
    could otherwise copy after reopening hers."""
    q, ids = w["q"], w["ids"]
    layer_a = JudgingLayer.objects.get(question=q, assessor=w["a"])
    _finish(layer_a, w["a"], ids)
    assert set(JudgingLayer.objects.readable_by(w["a"]).filter(question=q)) == {layer_a}
    for headers in ({}, {"HX-Request": "true"}):
        html = _page(client, q, **headers)
        assert "Waiting for 1 other assessor:" in html
        assert 'id="layer-compare"' not in html and "zebedee" not in html
    assert layer_selectors.layer_others(layer_a)["others"] == []
    # nothing was shown: she may reopen her layer (and only hers)
    layers.layer_mark_done(layer=layer_a, by=w["a"], done=False)
    assert not JudgingLayer.objects.get(pk=layer_a.pk).done


def test_a_layer_cannot_be_reopened_once_every_layer_is_done(client, w):
    """Once every layer is done the others show, and gold was derived: a reopen would let
    an assessor copy another layer and mark theirs done again.  Refused by the service and
    by the page, whose Reopen button is gone."""
    from annotate.edits import Conflict

    q, ids = w["q"], w["ids"]
    layer_a = JudgingLayer.objects.get(question=q, assessor=w["a"])
    layer_b = JudgingLayer.objects.get(question=q, assessor=w["b"])
    _finish(layer_a, w["a"], ids)
    _finish(layer_b, w["b"], ids)
    html = _page(client, q)
    assert 'id="layer-compare"' in html and "<th>zebedee</th>" in html
    assert 'value="reopen"' not in html and "can no longer be reopened" in html
    with pytest.raises(Conflict, match="can no longer be reopened"):
        layers.layer_mark_done(layer=layer_a, by=w["a"], done=False)
    r = client.post(
        reverse("annotate:question-layer-act", args=[q.pk]),
        {"op": "reopen"},
        headers={"HX-Request": "true"},
    )
    assert "can no longer be reopened" in r.content.decode()
    assert JudgingLayer.objects.get(pk=layer_a.pk).done
    assert layer_state.layer_sealed(layer_a)


def test_a_layer_cannot_be_reopened_once_gold_was_derived(w):
    """Gold derived (``gold_at``) seals the question's layers even if a layer were open."""
    from annotate.edits import Conflict
    from annotate.models import LayerRequest

    q, ids = w["q"], w["ids"]
    layer_a = JudgingLayer.objects.get(question=q, assessor=w["a"])
    _finish(layer_a, w["a"], ids)
    assert not layer_state.layer_sealed(layer_a)
    LayerRequest.objects.filter(question=q).update(gold_at="2024-01-01T00:00:00Z")
    assert layer_state.layer_sealed(layer_a)
    with pytest.raises(Conflict):
        layers.layer_mark_done(layer=layer_a, by=w["a"], done=False)


def _row(html: str, qid: str) -> str:
    start = html.index(f'<span class="qid">{qid}</span>')
    return html[start : html.index("</tr>", start)]


def test_question_list_hides_the_other_layers_assessors_and_gold_counts(client, w):
    html = client.get(reverse("annotate:question-list", args=["blind"])).content.decode()
    row = _row(html, "Q1")
    assert "zebedee" not in row  # who else judges the question
    assert '<td class="num">2</td>' not in row  # gold's R (two synsets)
    assert "my layer" in row


def test_question_list_filter_by_the_other_assessor_hides_my_layered_question(client, w):
    url = reverse("annotate:question-list", args=["blind"])
    html = client.get(url, {"assessor": w["b"].pk}).content.decode()
    assert '<span class="qid">Q1</span>' not in html
    # filtering by myself still finds it
    html = client.get(url, {"assessor": w["a"].pk}).content.decode()
    assert '<span class="qid">Q1</span>' in html


def test_organizer_still_sees_everything_on_the_question_list(client, w):
    client.force_login(w["org"])
    html = client.get(reverse("annotate:question-list", args=["blind"])).content.decode()
    row = _row(html, "Q1")
    assert "zebedee" in row and "ann" in row and '<td class="num">2</td>' in row


# -- the layers CSV import: bad synset numbers are file errors, never a crash ----------------
@pytest.mark.parametrize("syn", ["²", "٣", "99999999999999999999", "0"])
def test_layers_import_refuses_strange_synset_numbers_with_their_line(client, w, syn):
    from annotate.layer_io import layers_import
    from annotate.models import LayerJudgment

    before = list(LayerJudgment.objects.values_list("layer_id", "string_id", "group"))
    data = (
        "question_id,synset_id,answer,level,assessor,done\n"
        "Q1,1,Shakespeare,S,ann,\n"
        f"Q1,{syn},Marlowe,A,ann,\n"
    ).encode()
    result = layers_import(collection=w["c"], data=data, filename="l.csv", by=w["org"])
    assert result.issues and result.issues[0].line == 3, result.issues
    after = list(LayerJudgment.objects.values_list("layer_id", "string_id", "group"))
    assert after == before  # nothing written


# -- a named adjudicator adjudicates the questions they are named on, nothing else -----------
@pytest.fixture
def two(w):
    """Q1 (w) and Q2 both layered by ann and zebedee, all layers done and disagreeing;
    carol is the named adjudicator of Q1 only."""
    c, a, b = w["c"], w["a"], w["b"]
    carol = make_user(username="carol")
    add_member(collection=c, user=carol, role="assessor")
    q2 = make_question(collection=c, qid="Q2", unjudged=["Paris", "Lyon"])
    # Q1 has its layers (w): carol replaces ann as its named adjudicator
    LayerRequest.objects.filter(question=w["q"]).update(adjudicator=carol)
    layers.layers_request(collection=c, questions=[q2], assessors=[a, b], by=w["org"])
    for q in (w["q"], q2):
        for user, new in ((a, True), (b, False)):
            layer = JudgingLayer.objects.get(question=q, assessor=user)
            for s in q.strings.exclude(pk__in=layer.judgments.values("string_id")):
                layers.layer_judge(layer=layer, string=s.pk, new_group=new, by=user)
            layers.layer_mark_done(layer=layer, by=user)
    return {**w, "carol": carol, "q2": q2}


def test_named_adjudicator_cannot_adjudicate_a_question_they_are_not_named_on(client, two):
    client.force_login(two["carol"])
    q2 = two["q2"]
    assert client.get(reverse("annotate:question-adjudicate", args=[q2.pk])).status_code == 403
    layer = JudgingLayer.objects.get(question=q2, assessor=two["a"])
    s = q2.strings.get(text="Paris")
    r = client.post(
        reverse("annotate:question-adjudicate-act", args=[q2.pk]),
        {"op": "take", "layer": layer.pk, "string": s.pk},
    )
    assert r.status_code == 403
    s.refresh_from_db()
    assert s.judged_at is None
    queue = client.get(reverse("annotate:adjudication-queue")).content.decode()
    assert '<span class="qid">Q1</span>' in queue and '<span class="qid">Q2</span>' not in queue


def test_layer_and_string_of_another_question_are_refused_on_my_question(client, two):
    client.force_login(two["carol"])
    q1, q2 = two["q"], two["q2"]
    other_layer = JudgingLayer.objects.get(question=q2, assessor=two["a"])
    other_string = q2.strings.get(text="Paris")
    mine = JudgingLayer.objects.get(question=q1, assessor=two["a"])
    for data in (
        {"op": "take", "layer": other_layer.pk, "string": q1.strings.get(text="Marlowe").pk},
        {"op": "take", "layer": mine.pk, "string": other_string.pk},
        {"op": "take_synset", "layer": other_layer.pk, "group": "1"},
        {"op": "incorrect", "string": other_string.pk},
    ):
        r = client.post(reverse("annotate:question-adjudicate-act", args=[q1.pk]), data)
        assert r.status_code == 302
    other_string.refresh_from_db()
    assert other_string.judged_at is None


@pytest.mark.parametrize(
    "row",
    [
        "Q1,1,Marlowe,S,pat,",  # a participant of the collection
        "Q1,1,Marlowe,S,stranger,",  # a user of no collection
        "Q9,1,Marlowe,S,ann,",  # a question of another collection
        "Q1,1,Marlowe,Z,ann,",  # a level of no collection
    ],
)
def test_layers_import_refuses_foreign_people_and_things_and_writes_nothing(w, row):
    from annotate.layer_io import layers_import
    from annotate.models import LayerJudgment

    add_member(collection=w["c"], user=make_user(username="pat"), role="participant")
    make_user(username="stranger")
    other = make_collection(slug="other", levels=(("Z", 1.0),))
    add_member(collection=other, user=make_user(username="zed"), role="assessor")
    make_question(collection=other, qid="Q9", unjudged=["Marlowe"])
    before = list(LayerJudgment.objects.values_list("layer_id", "string_id", "group"))
    data = "question_id,synset_id,answer,level,assessor,done\nQ1,1,Shakespeare,S,ann,\n" + row
    result = layers_import(collection=w["c"], data=data.encode(), filename="l.csv", by=w["org"])
    assert [i.line for i in result.issues] == [3]
    assert list(LayerJudgment.objects.values_list("layer_id", "string_id", "group")) == before


# -- the workspace on a layer: no gold through suggestions, history, presence, counts ---------
def test_layer_workspace_shows_nothing_of_gold_or_the_other_layer(client, w):
    from django.test import Client

    q = w["q"]
    # gold's synset "gold-one" would suggest itself for a spelling of it in gold's page
    s = q.strings.create(text="Gold One", key="gold one")
    org = Client()
    org.force_login(w["org"])
    gold_page = org.get(reverse("annotate:question-judge", args=[q.pk]), {"gold": "1"})
    assert 'class="suggest small"' in gold_page.content.decode()  # the attack has teeth
    # zebedee was here (presence), judged in his layer and left history
    other = Client()
    other.force_login(w["b"])
    other.get(reverse("annotate:question-judge", args=[q.pk]))
    for headers in ({}, {"HX-Request": "true"}):
        html = client.get(reverse("annotate:question-judge", args=[q.pk]), headers=headers)
        html = html.content.decode()
        assert 'class="suggest small"' not in html  # no suggestion from gold's synsets
        assert "zebedee" not in html  # no presence, history or layer of his
        assert 'class="synset card"' not in html  # gold's two synsets
        assert 'R = <strong id="q-r">0</strong>' in html
    html = client.post(
        reverse("annotate:question-layer-act", args=[q.pk]),
        {"op": "incorrect", "string": s.pk, "expect": "u"},
        headers={"HX-Request": "true"},
    ).content.decode()
    assert "zebedee" not in html and 'class="suggest small"' not in html
    assert "gold-one" in html  # the string itself, as a candidate: its judgment is not shown
    assert 'class="synset card"' not in html


def test_adjudicator_cannot_merge_or_relevel_gold_synsets_of_another_question(client, two):
    from annotate.models import AnswerSynset

    client.force_login(two["carol"])
    q1 = two["q"]
    victim = make_question(
        collection=make_collection(slug="victim"),
        qid="V1",
        synsets=[[("v-one", "S")], [("v-two", "A")]],
    )
    theirs = list(AnswerSynset.objects.filter(question=victim).values_list("pk", flat=True))
    mine = list(AnswerSynset.objects.filter(question=q1).values_list("pk", flat=True))
    url = reverse("annotate:question-adjudicate-act", args=[q1.pk])
    for data in (
        {"op": "merge", "synsets": [str(pk) for pk in theirs]},
        {"op": "merge", "synsets": [str(mine[0]), str(theirs[0])]},
        {"op": "level", "string": victim.strings.get(text="v-one").pk, "level": "B"},
    ):
        assert client.post(url, data).status_code == 302
    assert AnswerSynset.objects.filter(question=victim).count() == 2
    assert victim.strings.get(text="v-one").level.code == "S"


def test_question_list_filters_a_layered_question_on_my_layer_not_on_gold(client, w):
    from annotate.models import Question

    q, url = w["q"], reverse("annotate:question-list", args=["blind"])
    Question.objects.filter(pk=q.pk).update(status="done")  # gold: done, 2 unjudged

    def listed(**params) -> bool:
        return '<span class="qid">Q1</span>' in client.get(url, params).content.decode()

    assert not listed(status="done") and listed(status="todo")  # my layer: to do
    assert listed(unjudged="1") and not listed(unjudged="0")  # 4 left in my layer
    layer = JudgingLayer.objects.get(question=q, assessor=w["a"])
    for s in q.strings.all():
        layers.layer_judge(layer=layer, string=s.pk, by=w["a"])
    assert listed(status="in_progress") and not listed(status="todo")
    assert listed(unjudged="0") and not listed(unjudged="1")  # gold still has 2 unjudged
    client.force_login(w["org"])  # the organizer filters on gold
    assert listed(status="done") and listed(unjudged="1") and not listed(unjudged="0")


# -- a named adjudicator is blind too until every layer is done (red team 13) ---------------
@pytest.fixture
def named(client):
    c = make_collection(slug="named")
    org, a, b, x = (make_user(username=n) for n in ("org", "ann", "bob", "xav"))
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b, x):
        add_member(collection=c, user=u, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon", "Yoko"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org, adjudicator=x)
    ids = {s.text: s.pk for s in q.strings.all()}
    layer_a = JudgingLayer.objects.get(question=q, assessor=a)
    layers.layer_judge(layer=layer_a, string=ids["Lennon"], new_group=True, level="S", by=a)
    layers.layer_judge(layer=layer_a, string=ids["Yoko"], by=a)
    return {"c": c, "q": q, "org": org, "a": a, "b": b, "x": x, "ids": ids}


def test_named_adjudicator_reads_no_open_layer(client, named):
    """xav, named adjudicator without a layer, read ann's open layer on the adjudication
    page (and could pass it on, or be given a layer of his own afterwards)."""
    q, x = named["q"], named["x"]
    assert not JudgingLayer.objects.readable_by(x).filter(question=q).exists()
    client.force_login(x)
    page = client.get(reverse("annotate:question-adjudicate", args=[q.pk])).content.decode()
    assert "Waiting for 2 layers of 2" in page
    assert "<th>ann" not in page and "incorrect</td>" not in page and "Lennon" not in page
    for user in (named["a"], named["b"]):
        layer = JudgingLayer.objects.get(question=q, assessor=user)
        for s in named["ids"].values():
            if not layer.judgments.filter(string_id=s).exists():
                layers.layer_judge(layer=layer, string=s, by=user)
        layers.layer_mark_done(layer=layer, by=user)
    assert JudgingLayer.objects.readable_by(x).filter(question=q).count() == 2
    page = client.get(reverse("annotate:question-adjudicate", args=[q.pk])).content.decode()
    assert "<th>ann" in page and "Waiting for" not in page


def test_a_request_never_makes_the_adjudicator_an_assessor(named):
    from annotate.edits import Conflict

    c, org, a, b, x = named["c"], named["org"], named["a"], named["b"], named["x"]
    q2 = make_question(collection=c, qid="Q2", unjudged=["x"])
    with pytest.raises(Conflict, match="xav cannot both judge"):
        layers.layers_request(collection=c, questions=[q2], assessors=[a, x], by=org, adjudicator=x)
    # ann judges Q1 in a layer: she cannot be named its adjudicator
    with pytest.raises(Conflict, match=r"ann judges Q1 in a layer of their own"):
        layers.layers_request(
            collection=c, questions=[named["q"], q2], assessors=[b, x], by=org, adjudicator=a
        )
    # and xav, Q1's adjudicator, gets no layer of it: Q1 has its layers already
    with pytest.raises(Conflict, match="Q1 already has layers"):
        layers.layers_request(collection=c, questions=[named["q"]], assessors=[x], by=org, k=1)
    assert not JudgingLayer.objects.filter(assessor=x).exists()
    assert not JudgingLayer.objects.filter(question=q2).exists()


def test_a_layers_csv_never_gives_the_adjudicator_a_layer(named):
    from annotate.layer_io import layers_import

    data = b"question_id,synset_id,answer,level,assessor,done\nQ1,,Yoko,,ann,\nQ1,1,Lennon,S,xav,\n"
    result = layers_import(collection=named["c"], data=data, filename="l.csv", by=named["org"])
    assert [str(i) for i in result.issues] == [
        "l.csv:3: xav is the named adjudicator of Q1, so cannot judge it in a layer"
    ]
    assert not JudgingLayer.objects.filter(assessor=named["x"]).exists()


# -- an organizer who judges a question in a layer is blind on it too (red team round 3) -----
@pytest.fixture
def org_judges(client):
    """The organizer judges Q1 in a layer (open) beside zebedee, who judged Marlowe in a
    synset of his; Q2 is judged in layers by ann and zebedee, none of them the organizer's.
    The organizer holds an API token, and a participant's run answered both questions."""

    c = make_collection(slug="oblind")
    org, a, b, p = (make_user(username=n) for n in ("org", "ann", "zebedee", "pat"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    add_member(collection=c, user=p, role="participant")
    q1 = make_question(
        collection=c,
        qid="Q1",
        text="Who wrote Hamlet?",
        unjudged=["Shakespeare", "Marlowe", "Bacon"],
    )
    q2 = make_question(
        collection=c, qid="Q2", text="Capital of France?", unjudged=["Paris", "Lyon"]
    )
    layers.layers_request(collection=c, questions=[q1], assessors=[org, b], by=org)
    layers.layers_request(collection=c, questions=[q2], assessors=[a, b], by=org)
    run = make_run(
        collection=c, owner=p, name="run-p", answers={"Q1": ["Shakespeare"], "Q2": ["Paris"]}
    )
    s1 = {s.text: s.pk for s in q1.strings.all()}
    s2 = {s.text: s.pk for s in q2.strings.all()}
    mine = JudgingLayer.objects.get(question=q1, assessor=org)
    his = JudgingLayer.objects.get(question=q1, assessor=b)
    layers.layer_judge(layer=mine, string=s1["Shakespeare"], new_group=True, level="S", by=org)
    layers.layer_judge(layer=his, string=s1["Marlowe"], new_group=True, level="A", by=b)
    layers.layer_judge(
        layer=JudgingLayer.objects.get(question=q2, assessor=b),
        string=s2["Paris"],
        new_group=True,
        level="S",
        by=b,
    )
    token = api_token_create(user=org, name="sweep")
    client.force_login(org)
    return {
        "c": c,
        "q1": q1,
        "q2": q2,
        "org": org,
        "a": a,
        "b": b,
        "run": run,
        "s1": s1,
        "s2": s2,
        "mine": mine,
        "his": his,
        "token": token,
    }


def _csv(client, url: str) -> list[dict]:

    r = client.get(url)
    assert r.status_code == 200, url
    return list(csv.DictReader(io.StringIO(r.content.decode())))


def test_organizer_with_an_open_layer_gets_no_other_layer_of_it_in_the_csvs(client, org_judges):
    w = org_judges
    layers_csv = _csv(client, reverse("annotate:collection-layers-csv", args=["oblind"]))
    seen = {(r["question_id"], r["assessor"], r["answer"]) for r in layers_csv}
    assert ("Q1", "org", "Shakespeare") in seen  # their own layer
    assert not any(q == "Q1" and who == "zebedee" for q, who, _ in seen)
    assert ("Q2", "zebedee", "Paris") in seen  # a question they judge in no layer: all of it
    events = _csv(client, reverse("annotate:collection-export", args=["oblind", "events"]))
    assert not any(e["user"] == "zebedee" and e["question_id"] == "Q1" for e in events)
    assert any(e["user"] == "zebedee" and e["question_id"] == "Q2" for e in events)
    assert any(e["user"] == "org" and e["question_id"] == "Q1" for e in events)
    # once every layer of Q1 is done, nothing is hidden any more
    for layer, user in ((w["his"], w["b"]), (w["mine"], w["org"])):
        _finish(layer, user, w["s1"])
    layers_csv = _csv(client, reverse("annotate:collection-layers-csv", args=["oblind"]))
    assert ("Q1", "zebedee", "Marlowe") in {
        (r["question_id"], r["assessor"], r["answer"]) for r in layers_csv
    }
    events = _csv(client, reverse("annotate:collection-export", args=["oblind", "events"]))
    assert any(e["user"] == "zebedee" and e["question_id"] == "Q1" for e in events)


def test_organizer_with_a_done_layer_stays_blind_while_another_is_open(client, org_judges):
    """As an assessor: their own layer done is not enough (they may reopen it)."""
    w = org_judges
    _finish(w["mine"], w["org"], w["s1"])
    layers_csv = _csv(client, reverse("annotate:collection-layers-csv", args=["oblind"]))
    assert not any(r["question_id"] == "Q1" and r["assessor"] == "zebedee" for r in layers_csv)


def test_agreement_counts_do_not_move_as_the_other_assessor_judges(client, org_judges):

    w = org_judges
    url = reverse("annotate:collection-agreement", args=["oblind"])
    before = _shown(client.get(url))
    zeb = {
        t.assessor: t
        for t in agreement_report.collection_agreement(w["c"], reader=w["org"]).throughput
    }["zebedee"]
    assert (zeb.layers, zeb.strings) == (1, 1)  # his layer of Q2, not that of Q1
    for s in ("Shakespeare", "Bacon"):
        layers.layer_judge(layer=w["his"], string=w["s1"][s], by=w["b"])
    assert _shown(client.get(url)) == before


def _sweep_urls(w: dict) -> list[tuple[str, dict]]:
    """Every GET of every URL pattern an organizer may ask for (pages, CSV downloads, the
    REST API with their token), on both questions, with and without htmx."""

    values = {
        "slug": ["oblind"],
        "pk": [str(w["q1"].pk), str(w["q2"].pk)],
        "run_id": [str(w["run"].pk)],
        "what": ["judgments", "questions", "events"],
        "kind": list(DOWNLOADS),
        "token_id": [str(w["token"].token.pk)],
    }
    skipped = ("admin:", "login", "logout", "set-password", "password", "favicon")
    out: list[tuple[str, dict]] = []
    for name, route in walk(get_resolver().url_patterns):
        if route.startswith("^") or "(?P" in route or name.startswith(skipped) or "<path:" in route:
            continue
        urls = ["/" + route]
        for param in re.findall(r"<(?:\w+:)?(\w+)>", route):
            if param not in values:
                urls = []
                break
            urls = [
                re.sub(rf"<(?:\w+:)?{param}>", v, u, count=1) for u in urls for v in values[param]
            ]
        for url in urls:
            if name.startswith("api:"):
                out.append((url, {"Authorization": f"Bearer {w['token'].secret}"}))
            else:
                out += [(url, {}), (url, {"HX-Request": "true"})]
    return out


def _seen(client, w: dict) -> dict[str, str]:
    """What the organizer gets from every URL (``_sweep_urls``), as ``_shown``."""
    seen = {}
    for url, headers in _sweep_urls(w):
        seen[f"{url} {sorted(headers)}"] = _shown(client.get(url, headers=headers))
    return seen


def _shown(r) -> str:
    """A response's status, redirect and body, its CSRF tokens (new on every page) aside."""

    body = re.sub(
        r'(csrfmiddlewaretoken" value=|"X-CSRFToken": )"[^"]*"',
        r"\1",
        r.content.decode(errors="replace"),
    )
    return f"{r.status_code} {r.get('Location', '')}\n{body}"


def test_organizer_with_an_open_layer_sees_nothing_move_as_the_other_layer_is_judged(
    client, org_judges
):
    """The sweep: every page, download and API endpoint, as the organizer who judges Q1 in
    a layer.  zebedee then judges the rest of Q1 in his layer, changes a level and marks
    it done: nothing the organizer can read changes (no judgment, no string's synset, no
    count, no time of a change).  Then he judges in Q2, where the organizer has no layer:
    that shows."""
    w = org_judges
    before = _seen(client, w)
    assert len(before) > 80
    assert any("Marlowe" in body for body in before.values())  # the strings are shown...
    his, b, s1 = w["his"], w["b"], w["s1"]
    layers.layer_judge(layer=his, string=s1["Shakespeare"], group=1, level="S", by=b)
    layers.layer_judge(layer=his, string=s1["Bacon"], by=b)
    layers.layer_set_level(layer=his, string=s1["Marlowe"], level="B", by=b)
    layers.layer_mark_done(layer=his, by=b)
    # a day later: a "last change" read from his events would show on any page
    JudgmentEvent.objects.filter(layer=his).update(created_at=F("created_at") + timedelta(days=1))
    after = _seen(client, w)
    changed = [k for k in before if before[k] != after[k]]
    assert not changed, "\n".join(changed)
    layers.layer_judge(
        layer=JudgingLayer.objects.get(question=w["q2"], assessor=b), string=w["s2"]["Lyon"], by=b
    )
    last = _seen(client, w)
    changed = {k.split()[0] for k in after if after[k] != last[k]}
    assert reverse("annotate:collection-layers-csv", args=["oblind"]) in changed


def test_last_change_on_the_question_list_is_never_the_other_layers(client, w):
    """ann's question list: Q1's last change is not zebedee's, whose layer is open."""
    q = w["q"]
    JudgmentEvent.objects.filter(layer__assessor=w["b"]).update(
        created_at=timezone.now() + timedelta(days=3)
    )
    html = client.get(reverse("annotate:question-list", args=["blind"])).content.decode()
    later = timezone.localtime(timezone.now() + timedelta(days=3)).strftime("%Y-%m-%d")
    assert later not in _row(html, q.qid)


def test_dashboard_stuck_questions_ignore_the_layers_the_organizer_is_blind_to(org_judges):
    """Q1 in progress, the organizer's last change 2 days ago, zebedee's (open layer) now:
    stuck as far as the organizer may know, whatever zebedee does."""
    w = org_judges
    two_days_ago = timezone.now() - timedelta(days=2)
    Question.objects.filter(pk=w["q1"].pk).update(
        status=QuestionStatus.IN_PROGRESS, updated_at=two_days_ago
    )
    JudgmentEvent.objects.filter(question=w["q1"]).exclude(layer=w["his"]).update(
        created_at=two_days_ago
    )
    stuck = collection_dashboard(w["c"], reader=w["org"]).stuck
    assert [q["qid"] for q in stuck] == ["Q1"]
    assert collection_dashboard(w["c"]).stuck == []  # zebedee changed it just now
