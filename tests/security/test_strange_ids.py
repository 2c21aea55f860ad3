"""Red team: ids in POST bodies and query strings that ``str.isdigit`` accepts but ``int``
refuses ("²", superscripts) or that overflow the database's integers are refused like any
bad id: a notice or a 4xx, never a 500, and nothing written."""

import re

import pytest
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from annotate import layers
from annotate.models import JudgingLayer, LayerJudgment, LayerRequest
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}
STRANGE = ["²", "¹²", "9" * 30]


@pytest.fixture
def w():
    c = make_collection(slug="ids")
    org, a, b = (make_user(username=n) for n in ("org", "ann", "bob"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    q = make_question(collection=c, qid="Q1", synsets=[[("gold", "A")]], unjudged=["x", "y"])
    q2 = make_question(collection=c, qid="Q2", unjudged=["z"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    return {"c": c, "q": q, "q2": q2, "org": org, "a": a, "b": b}


def client_for(user) -> Client:
    client = Client(raise_request_exception=False)
    client.force_login(user)
    return client


def messages_of(response) -> list[str]:
    """The messages a redirecting view left for the next page."""
    return [str(m) for m in get_messages(response.wsgi_request)]


def listed(response) -> list[str]:
    """The question ids of a question list page, in order."""
    return re.findall(r'<span class="qid">([^<]*)</span></a>', response.content.decode())


def notice(response) -> str:
    """The workspace's notice (why nothing was done)."""
    found = re.search(r'class="msg msg-\w+ notice"[^>]*>([^<]*)', response.content.decode())
    return found.group(1) if found else ""


def snapshot():
    return (
        list(LayerJudgment.objects.order_by("pk").values_list("layer_id", "string_id", "group")),
        list(LayerRequest.objects.order_by("pk").values_list("question_id", "k")),
        list(JudgingLayer.objects.order_by("pk").values_list("question_id", "assessor_id")),
    )


@pytest.mark.parametrize("bad", STRANGE)
@pytest.mark.parametrize("field", ["ordinal", "synset", "string"])
def test_layer_workspace_refuses_strange_ids(w, bad, field):
    client = client_for(w["a"])
    q = w["q"]
    x = q.strings.get(text="x").pk
    layers.layer_judge(
        layer=JudgingLayer.objects.get(question=q, assessor=w["a"]),
        string=x,
        new_group=True,
        by=w["a"],
    )
    before = snapshot()
    data = {"op": "add", "string": q.strings.get(text="y").pk, "ordinal": "1", field: bad}
    r = client.post(reverse("annotate:question-layer-act", args=[q.pk]), data, headers=HX)
    assert r.status_code == 200, r.status_code
    assert "notice" in r.content.decode()
    assert snapshot() == before


@pytest.mark.parametrize("bad", STRANGE)
@pytest.mark.parametrize("field", ["assessors", "adjudicator"])
def test_layer_request_refuses_strange_user_ids(w, bad, field):
    client = client_for(w["org"])
    data = {"assessors": [w["a"].pk, w["b"].pk], "k": "2", "scope": "all", field: bad}
    before = snapshot()
    r = client.post(reverse("annotate:collection-layers-request", args=["ids"]), data)
    assert r.status_code == 302, r.status_code
    assert r["Location"] == reverse("annotate:collection-agreement", args=["ids"])
    if field == "assessors":  # no assessor left: refused, nothing requested
        assert messages_of(r) == ["2 independent judgments need at least 2 assessors."]
        assert snapshot() == before
    else:  # no adjudicator named: the layers are requested without one (Q1 has them)
        assert messages_of(r) == [
            "2 layers requested on 1 question.",
            "1 question left out: it has layers already, which stay as they are (more "
            "would make more than k): Q1.",
        ]
        assert not LayerRequest.objects.filter(adjudicator__isnull=False).exists()


@pytest.mark.parametrize("bad", STRANGE)
@pytest.mark.parametrize("field", ["layer", "string", "synsets"])
def test_adjudication_refuses_strange_ids(w, bad, field):
    client = client_for(w["org"])
    q = w["q"]
    # every layer done: the adjudication reads the ids (before, it waits for the layers)
    for user in (w["a"], w["b"]):
        layer = JudgingLayer.objects.get(question=q, assessor=user)
        for s in q.strings.all():
            layers.layer_judge(layer=layer, string=s.pk, by=user)
        layers.layer_mark_done(layer=layer, by=user)
    data = {"op": "merge" if field == "synsets" else "take", "layer": "1", "string": "1"}
    data[field] = bad
    before = snapshot()
    r = client.post(reverse("annotate:question-adjudicate-act", args=[q.pk]), data)
    assert r.status_code == 302, r.status_code
    assert r["Location"].startswith(reverse("annotate:question-adjudicate", args=[q.pk]))
    (message,) = messages_of(r)
    assert message in {
        "That request was incomplete; nothing was changed.",
        "That layer is not a layer of this question.",
        "That layer has not judged those strings.",
        "Choose at least two different synsets to merge.",
    }, message
    assert snapshot() == before


@pytest.mark.parametrize("bad", STRANGE)
def test_question_list_filter_by_a_strange_assessor_id(w, bad):
    client = client_for(w["a"])
    r = client.get(reverse("annotate:question-list", args=["ids"]), {"assessor": bad})
    assert r.status_code == 200, r.status_code
    # no assessor filter; as for a filter by another assessor, the question the user judges
    # in a layer (Q1) is not listed
    assert listed(r) == ["Q2"]


@pytest.mark.parametrize("bad", STRANGE)
def test_judging_page_edit_and_bulk_assignment_with_strange_ids(w, bad):
    org = client_for(w["org"])
    r = org.get(reverse("annotate:question-judge", args=[w["q2"].pk]), {"edit": bad})
    assert r.status_code == 200, r.status_code
    html = r.content.decode()
    assert '<span class="qid">Q2</span>' in html and "edit-form" not in html  # no string
    r = org.post(
        reverse("annotate:question-assign", args=["ids"]),
        {"questions": [bad, w["q2"].pk], "assessors": [bad], "scope": "selected"},
    )
    assert r.status_code == 302, r.status_code
    assert messages_of(r) == ["Choose at least one assessor."]
    assert not w["q2"].assessors.exists()


@pytest.mark.parametrize("bad", STRANGE)
def test_compare_page_with_a_strange_run_id(w, bad):
    participant = make_user(username="pat")
    add_member(collection=w["c"], user=participant, role="participant")
    r = client_for(participant).get(reverse("evaluation:compare", args=["ids"]), {"a": bad})
    assert r.status_code == 404, r.status_code
    assert "Page not found" in r.content.decode()


@pytest.mark.parametrize("bad", [*STRANGE, "-1"])
@pytest.mark.parametrize("op", ["split", "merge"])
def test_id_lists_with_strange_ids_on_both_workspaces(w, bad, op):
    q, q2 = w["q"], w["q2"]
    data = {"op": op, "strings": [bad], "merge": [bad], "synset": "1", "version": bad}
    before = snapshot()
    r = client_for(w["a"]).post(
        reverse("annotate:question-layer-act", args=[q.pk]), data, headers=HX
    )
    assert r.status_code == 200, r.status_code
    assert notice(r).endswith("The workspace has been refreshed."), notice(r)
    r = client_for(w["org"]).post(reverse("annotate:question-act", args=[q2.pk]), data, headers=HX)
    assert r.status_code == 200, r.status_code
    assert notice(r).endswith("The workspace has been refreshed."), notice(r)
    assert snapshot() == before and not q2.synsets.exists()


@pytest.mark.parametrize("status", ["bogus", "done", ""])
@pytest.mark.parametrize("unjudged", ["x", "0", "1"])
def test_question_list_filters_with_any_value(w, status, unjudged):
    r = client_for(w["a"]).get(
        reverse("annotate:question-list", args=["ids"]), {"status": status, "unjudged": unjudged}
    )
    assert r.status_code == 200
    # an unknown status matches no question; an unjudged value other than 0 or 1 is no filter
    both_open = status == "" and unjudged != "0"
    assert listed(r) == (["Q1", "Q2"] if both_open else [])
