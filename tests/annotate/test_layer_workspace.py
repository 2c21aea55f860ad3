"""An assessor judges their layer in the usual judging workspace: the same page,
operations, htmx fragment, version token and undo, on the layer's own judgments; blind to
gold and to the other layers until their layer is done (annotate/layer_views.py,
annotate/layer_selectors.py ``layer_workspace``)."""

import re

import pytest
from django.urls import reverse

from annotate import layers
from annotate.models import JudgingLayer, JudgmentEvent, LayerJudgment
from annotate.selectors import next_question
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def w(client):
    c = make_collection(slug="lw")
    org, a, b = (make_user(username=n) for n in ("org", "ann", "bob"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    # gold already holds a judgment: the layers must not show it
    q = make_question(
        collection=c,
        qid="Q1",
        text="Who wrote Hamlet?",
        synsets=[[("gold-only-judged", "A")]],
        unjudged=["Shakespeare", "William Shakespeare", "Marlowe"],
    )
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    ids = {s.text: s.pk for s in q.strings.all()}
    client.force_login(a)
    return {"c": c, "q": q, "org": org, "a": a, "b": b, "ids": ids}


def page(client, q, **params) -> str:
    return client.get(reverse("annotate:question-judge", args=[q.pk]), params).content.decode()


def version(html: str) -> str:
    return re.search(r'id="workspace"[^>]*data-version="(\d+)"', html).group(1)


def act(client, q, *, htmx=True, **data) -> str:
    r = client.post(
        reverse("annotate:question-layer-act", args=[q.pk]), data, headers=HX if htmx else {}
    )
    # htmx gets the workspace (or HX-Redirect when done), 200; a plain form a redirect
    assert r.status_code == (200 if htmx else 302), r.status_code
    return r.content.decode()


def mine(w, user=None) -> dict[str, tuple]:
    layer = JudgingLayer.objects.get(question=w["q"], assessor=user or w["a"])
    return {
        j.string.text: (j.group, j.level.code if j.level else None)
        for j in layer.judgments.select_related("string", "level")
    }


def test_the_usual_page_shows_my_layer_and_nothing_of_gold(client, w):
    html = page(client, w["q"])
    assert 'id="workspace"' in html and "js/judge.js" in html
    assert "my layer" in html and 'id="layer-note"' in html
    assert 'class="workspace layer-mode"' in html  # app.css hides the strings' edit links
    assert reverse("annotate:question-layer-act", args=[w["q"].pk]) in html
    # every string is a candidate in the layer, the gold synset is not shown
    assert html.count('class="item cand"') == 4
    assert 'class="synset card"' not in html
    assert 'R = <strong id="q-r">0</strong>' in html
    # what a layer cannot do is not offered: NIL, typing a string, gold's notes
    assert 'value="nil"' not in html and 'id="add-text"' not in html and 'id="notes"' not in html


def test_keys_judge_in_the_layer_with_htmx_fragments(client, w):
    q, ids = w["q"], w["ids"]
    v = version(page(client, q))
    html = act(client, q, op="new", string=ids["Shakespeare"], level="A", expect="u", version=v)
    assert "<html" not in html and 'id="workspace"' in html and "notice" not in html
    v = version(html)
    html = act(
        client,
        q,
        op="add",
        string=ids["William Shakespeare"],
        ordinal="1",
        page_synsets="1",
        expect="u",
        version=v,
    )
    html = act(client, q, op="incorrect", string=ids["Marlowe"], expect="u", version=version(html))
    assert mine(w) == {
        "Shakespeare": (1, "A"),
        "William Shakespeare": (1, "S"),
        "Marlowe": (None, None),
    }
    # gold is untouched: the strings stay unjudged there
    assert q.strings.filter(judged_at__isnull=True).count() == 3
    assert 'data-synset="1"' in html and html.count('class="item member"') == 2
    # a level key on a member, then r back to the candidates
    html = act(
        client,
        q,
        op="level",
        string=ids["Shakespeare"],
        level="B",
        expect="1/" + str(q.collection.levels.get(code="A").pk),
        version=version(html),
    )
    assert mine(w)["Shakespeare"] == (1, "B")
    html = act(client, q, op="unjudge", string=ids["Marlowe"], expect="x", version=version(html))
    assert "Marlowe" not in mine(w)
    # the history names the layer's own changes
    assert "judged “Marlowe” incorrect" in html and "returned “Marlowe”" in html


def test_a_stale_page_is_refused_with_a_notice_and_nothing_written(client, w):
    q, ids = w["q"], w["ids"]
    v = version(page(client, q))
    act(client, q, op="new", string=ids["Shakespeare"], expect="u", version=v)
    events = JudgmentEvent.objects.count()
    html = act(client, q, op="new", string=ids["Marlowe"], expect="u", version=v)  # old page
    assert "since your page was loaded" in html and "your edit was not applied" in html
    assert "The workspace has been refreshed." in html
    assert "Marlowe" not in mine(w) and JudgmentEvent.objects.count() == events
    # a string whose state changed (the token) is refused too, even without a version
    html = act(client, q, op="incorrect", string=ids["Shakespeare"], expect="u")
    assert "“Shakespeare” was changed in your layer" in html
    assert mine(w)["Shakespeare"][0] == 1


def test_undo_undoes_the_layers_own_events_only(client, w):
    q, ids = w["q"], w["ids"]
    act(client, q, op="new", string=ids["Shakespeare"])
    act(client, q, op="incorrect", string=ids["Marlowe"])
    html = act(client, q, op="undo")
    assert mine(w) == {"Shakespeare": (1, "S")}
    assert "undid the last change" in html
    # nothing of gold was undone
    assert q.strings.get(text="gold-only-judged").synset_id is not None


def test_merge_and_split_in_the_layer(client, w):
    q, ids = w["q"], w["ids"]
    act(client, q, op="new", string=ids["Shakespeare"])
    act(client, q, op="new", string=ids["William Shakespeare"], level="A")
    act(client, q, op="merge", ordinal="1", merge="2")
    assert mine(w) == {"Shakespeare": (1, "S"), "William Shakespeare": (1, "A")}
    act(client, q, op="split", strings=[ids["William Shakespeare"]])
    assert mine(w) == {"Shakespeare": (1, "S"), "William Shakespeare": (2, "A")}
    html = act(client, q, op="merge", merge="2")  # no target: refused, not a 500
    assert "Choose the synset of your layer to merge into" in html


def test_gold_only_operations_are_refused_in_a_layer(client, w):
    q, ids = w["q"], w["ids"]
    for op, extra in (
        ("edit", {"string": ids["Marlowe"], "text": "Kit Marlowe"}),
        ("delete", {"string": ids["Marlowe"]}),
        ("type", {"text": "Bacon"}),
        ("nil", {}),
        ("notes", {"notes": "hm"}),
    ):
        html = act(client, q, op=op, **extra)
        assert "is not available in your layer" in html, op
    assert q.strings.count() == 4 and not q.strings.filter(text="Bacon").exists()
    assert not LayerJudgment.objects.exists()


def test_done_marks_the_layer_done_and_goes_on(client, w):
    q, ids = w["q"], w["ids"]
    other = make_question(collection=w["c"], qid="Q2", unjudged=["x"])
    other.assessors.add(w["a"])
    html = act(client, q, op="done")
    assert "Judge every candidate before marking your layer done" in html
    for text in ("Shakespeare", "William Shakespeare", "Marlowe", "gold-only-judged"):
        act(client, q, op="incorrect", string=ids[text])
    r = client.post(reverse("annotate:question-layer-act", args=[q.pk]), {"op": "done"}, headers=HX)
    assert r.headers["HX-Redirect"] == reverse("annotate:question-judge", args=[other.pk])
    assert JudgingLayer.objects.get(question=q, assessor=w["a"]).done
    # the question waits for bob, but nothing is left there for ann
    assert next_question(w["a"], collection=w["c"]) == other
    html = page(client, q)
    # done, but bob's layer is still open: nothing of it shows, only that it is awaited
    assert "Your layer is done." in html and "bob" not in html
    assert "Waiting for 1 other assessor:" in html
    # nothing of another layer was shown: ann may still reopen hers
    assert 'value="reopen"' in html
    act(client, q, op="reopen")
    assert not JudgingLayer.objects.get(question=q, assessor=w["a"]).done


def test_the_others_layers_show_once_mine_is_done(client, w):
    q, ids = w["q"], w["ids"]
    client.force_login(w["b"])
    for text in ids:
        act(client, q, op="new" if text == "Shakespeare" else "incorrect", string=ids[text])
    act(client, q, op="done")
    client.force_login(w["a"])
    html = page(client, q)
    assert "bob" not in html  # blind until mine is done
    for text in ids:
        act(client, q, op="incorrect", string=ids[text])
    act(client, q, op="done")
    html = page(client, q)
    assert 'id="layer-compare"' in html and "<th>bob</th>" in html


def test_old_layer_address_and_organizers(client, w):
    q = w["q"]
    r = client.get(reverse("annotate:question-layer", args=[q.pk]))
    assert r.status_code == 302 and r.url == reverse("annotate:question-judge", args=[q.pk])
    # an organizer judges gold on the usual page (the gold synset shows); one who judges in
    # a layer too sees the layer there, and gold with ?gold=1
    client.force_login(w["org"])
    # a question with no layer yet (one with layers gets no more: ``layers_request``)
    q = make_question(
        collection=w["c"], qid="Q2", synsets=[[("gold-only-judged", "A")]], unjudged=["x"]
    )
    q.assessors.add(w["a"])
    html = page(client, q)
    assert 'class="synset card"' in html and "gold-only-judged" in html
    assert 'id="layer-note"' not in html
    layers.layers_request(collection=w["c"], questions=[q], assessors=[w["org"]], k=1, by=w["org"])
    html = page(client, q)
    assert 'id="layer-note"' in html and 'id="gold-link"' in html
    assert 'class="synset card"' not in html
    html = page(client, q, gold="1")
    assert 'id="layer-note"' not in html and 'class="synset card"' in html
    client.force_login(w["a"])
    assert 'id="gold-link"' not in page(client, q, gold="1")  # assessors: their layer only


def test_a_question_without_layers_is_judged_in_gold_as_before(client, w):
    q2 = make_question(collection=w["c"], qid="SOLO", unjudged=["only"])
    q2.assessors.add(w["a"])
    html = page(client, q2)
    assert 'id="layer-note"' not in html and 'value="nil"' in html
    assert "layer-mode" not in html
    assert reverse("annotate:question-act", args=[q2.pk]) in html


def test_my_queue_shows_the_layer_not_gold(client, w):
    q, ids = w["q"], w["ids"]
    act(client, q, op="new", string=ids["Shakespeare"])
    html = client.get(reverse("annotate:my-queue")).content.decode()
    row = re.search(r"<tr>(?:(?!</tr>).)*Q1(?:(?!</tr>).)*</tr>", html, re.S).group(0)
    assert "my layer" in row
    assert reverse("annotate:question-judge", args=[q.pk]) in row
    # R and unjudged are the layer's: one synset, three strings left of four
    assert re.findall(r'<td class="num">(\d+)</td>', row) == ["1", "4", "3"]


def test_layer_workspace_query_budget(client, w, django_assert_max_num_queries):
    q, ids = w["q"], w["ids"]
    make_run(collection=w["c"], owner=w["org"], name="r", answers={"Q1": ["Marlowe"]})
    act(client, q, op="new", string=ids["Shakespeare"])
    with django_assert_max_num_queries(20):
        html = page(client, q)
    assert "×1" in html  # run frequency, as in gold


def test_gold_and_layer_workspaces_carry_the_same_keys(w, client):
    """Both judging pages are built by one builder (annotate/judge_page.py): the template
    gets the same keys whether it shows gold or the assessor's layer, htmx or not."""
    q, gold_q = w["q"], make_question(collection=w["c"], qid="Q2", unjudged=["Paris"])
    for headers in ({}, HX):
        layer_page = client.get(reverse("annotate:question-judge", args=[q.pk]), headers=headers)
        gold_page = client.get(
            reverse("annotate:question-judge", args=[gold_q.pk]), headers=headers
        )
        assert layer_page.status_code == gold_page.status_code == 200
        assert layer_page.context_data["layer"] is not None
        assert gold_page.context_data["layer"] is None
        assert layer_page.context_data.keys() == gold_page.context_data.keys()
