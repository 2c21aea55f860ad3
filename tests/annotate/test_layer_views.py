"""The pages of independent judging: an assessor's layer, blindness, adjudication by the
page's forms, the agreement page and the scores per layer (annotate/layer_views.py)."""

import pytest
from django.urls import reverse

from annotate.models import JudgingLayer, LayerJudgment, Question
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def study(client):
    c = make_collection()
    org, a, b, p = (make_user(username=n) for n in ("org", "ann", "bob", "pat"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    add_member(collection=c, user=p, role="participant")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon", "McCartney", "Yoko"])
    client.force_login(org)
    r = client.post(
        reverse("annotate:collection-layers-request", args=[c.slug]),
        {"assessors": [a.pk, b.pk], "k": "2"},
    )
    assert r.status_code == 302
    ids = {s.text: s.pk for s in q.strings.all()}
    return {"c": c, "q": q, "org": org, "a": a, "b": b, "p": p, "ids": ids}


def act(client, q, **data):
    return client.post(reverse("annotate:question-layer-act", args=[q.pk]), data)


def judge(client, q, string, target, level=""):
    """The workspace's keys: ``n`` (new synset), a digit (that synset), ``x`` (incorrect)."""
    if target == "new":
        return act(client, q, op="new", string=string, level=level)
    if target == "x":
        return act(client, q, op="incorrect", string=string)
    return act(client, q, op="add", string=string, ordinal=target, level=level)


def judge_all(client, w, user, plan):
    client.force_login(user)
    for text, target, level in plan:
        judge(client, w["q"], w["ids"][text], target, level)
    r = act(client, w["q"], op="done")
    assert r.status_code == 302
    assert JudgingLayer.objects.get(question=w["q"], assessor=user).done


def test_request_creates_layers(study):
    assert JudgingLayer.objects.filter(question=study["q"]).count() == 2


def test_layer_page_is_blind_and_keyboard_ready(client, study):
    w = study
    client.force_login(w["a"])
    judge(client, w["q"], w["ids"]["Lennon"], "new", "S")
    url = reverse("annotate:question-judge", args=[w["q"].pk])
    page = client.get(url).content.decode()
    assert 'class="item member"' in page and "js/judge.js" in page and "my layer" in page
    client.force_login(w["b"])
    page = client.get(url).content.decode()
    assert 'class="item member"' not in page  # bob sees his own, empty layer
    # an assessor cannot adjudicate, and a participant sees no layer page at all
    assert client.get(reverse("annotate:question-adjudicate", args=[w["q"].pk])).status_code == 403
    client.force_login(w["p"])
    assert client.get(url).status_code == 403
    assert (
        client.get(reverse("annotate:collection-agreement", args=[w["c"].slug])).status_code == 403
    )


def test_judge_undo_done_through_the_page(client, study):
    w = study
    client.force_login(w["a"])
    judge(client, w["q"], w["ids"]["Lennon"], "new", "S")
    judge(client, w["q"], w["ids"]["McCartney"], "1")
    act(client, w["q"], op="undo")
    assert LayerJudgment.objects.filter(layer__assessor=w["a"]).count() == 1
    r = act(client, w["q"], op="done")  # refused: strings left
    assert r.status_code == 302
    assert not JudgingLayer.objects.get(question=w["q"], assessor=w["a"]).done


def test_adjudication_and_agreement_pages(client, study):
    w = study
    judge_all(
        client, w, w["a"], [("Lennon", "new", "S"), ("McCartney", "new", "S"), ("Yoko", "x", "")]
    )
    judge_all(
        client, w, w["b"], [("Lennon", "new", "S"), ("McCartney", "x", ""), ("Yoko", "x", "")]
    )
    client.force_login(w["org"])
    url = reverse("annotate:question-adjudicate", args=[w["q"].pk])
    page = client.get(url).content.decode()
    assert "1 string left to resolve" in page
    assert page.count('class="tag">differs') == 1
    layer_a = JudgingLayer.objects.get(question=w["q"], assessor=w["a"])
    r = client.post(
        reverse("annotate:question-adjudicate-act", args=[w["q"].pk]),
        {"op": "take", "layer": layer_a.pk, "string": w["ids"]["McCartney"]},
    )
    assert r.status_code == 302 and r.url.endswith(f"#s{w['ids']['McCartney']}")
    s = w["q"].strings.get(text="McCartney")
    assert s.synset is not None and s.level.code == "S"
    client.post(reverse("annotate:question-adjudicate-act", args=[w["q"].pk]), {"op": "undo"})
    s.refresh_from_db()
    assert s.judged_at is None
    page = client.get(reverse("annotate:collection-agreement", args=[w["c"].slug])).content.decode()
    assert "<h1>Agreement</h1>" in page and "ann – bob" in page
    assert reverse("annotate:question-adjudicate", args=[w["q"].pk]) in page
    csv = client.get(reverse("annotate:collection-layers-csv", args=[w["c"].slug]))
    assert csv.content.decode().count("\n") == 7
    make_run(collection=w["c"], owner=w["org"], name="r1", answers={"Q1": ["McCartney"]})
    # McCartney waits for adjudication again: no set of judgments is scored on Q1 yet
    page = client.get(reverse("evaluation:layer-scores", args=[w["c"].slug])).content.decode()
    assert "<h1>Scores per layer</h1>" in page and "Means against layer 2" not in page
    assert "Left out: 1 question waiting for adjudication." in " ".join(page.split())
    client.post(
        reverse("annotate:question-adjudicate-act", args=[w["q"].pk]),
        {"op": "take", "layer": layer_a.pk, "string": w["ids"]["McCartney"]},
    )
    page = client.get(reverse("evaluation:layer-scores", args=[w["c"].slug])).content.decode()
    assert "Means against layer 2" in page and "No layered question is left out." in page
    out = client.get(reverse("evaluation:layer-scores-csv", args=[w["c"].slug])).content
    assert b"\njudgments,run,question_id," in out and b"layer 1,r1,Q1," in out


def test_agreement_page_query_budget(client, study, django_assert_max_num_queries):
    w = study
    judge_all(
        client, w, w["a"], [("Lennon", "new", "S"), ("McCartney", "new", "A"), ("Yoko", "x", "")]
    )
    judge_all(
        client, w, w["b"], [("Lennon", "new", "S"), ("McCartney", "new", "B"), ("Yoko", "new", "B")]
    )
    client.force_login(w["org"])
    url = reverse("annotate:collection-agreement", args=[w["c"].slug])
    with django_assert_max_num_queries(16):
        r = client.get(url)
    assert r.status_code == 200
    page = r.content.decode()
    assert "<h1>Agreement</h1>" in page and "Q1" in page


def test_the_judging_page_shows_a_layer_assessor_their_layer(client, study):
    w = study
    client.force_login(w["a"])
    r = client.get(reverse("annotate:question-judge", args=[w["q"].pk]))
    assert r.status_code == 200 and 'id="layer-note"' in r.content.decode()
    r = client.get(reverse("annotate:question-layer", args=[w["q"].pk]))
    assert r.status_code == 302
    assert r.url == reverse("annotate:question-judge", args=[w["q"].pk])
    r = client.post(
        reverse("annotate:question-act", args=[w["q"].pk]),
        {"op": "type", "text": "gold?", "target": "new"},
    )
    assert r.status_code == 403
    assert not w["q"].strings.filter(text="gold?").exists()
    client.force_login(w["org"])  # organizers still judge gold directly
    assert client.get(reverse("annotate:question-judge", args=[w["q"].pk])).status_code == 200


def test_the_others_layers_appear_once_mine_is_done(client, study):
    w = study
    judge_all(
        client, w, w["b"], [("Lennon", "new", "S"), ("McCartney", "x", ""), ("Yoko", "x", "")]
    )
    client.force_login(w["a"])
    url = reverse("annotate:question-judge", args=[w["q"].pk])
    assert "<th>bob</th>" not in client.get(url).content.decode()
    judge_all(
        client, w, w["a"], [("Lennon", "new", "S"), ("McCartney", "x", ""), ("Yoko", "x", "")]
    )
    client.force_login(w["a"])
    page = client.get(url).content.decode()
    assert "<th>bob</th>" in page and "Adjudicate" not in page


# -- a named adjudicator who is not an organizer --------------------------------------------
QID = '<span class="qid">{}</span>'


def _menu(client) -> str:
    import re

    page = client.get(reverse("annotate:my-queue")).content.decode()
    return re.search(r'<nav class="mainnav".*?</nav>', page, re.S).group(0)


def test_a_named_adjudicator_finds_their_questions(client):
    c = make_collection(slug="adj")
    org, a, b, adj = (make_user(username=n) for n in ("org", "ann", "bob", "jud"))
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b, adj):
        add_member(collection=c, user=u, role="assessor")
    q1 = make_question(collection=c, qid="Q1", text="Beatles?", unjudged=["Lennon", "Yoko"])
    q2 = make_question(collection=c, qid="Q2", text="Stones?", unjudged=["Jagger"])
    from annotate import layers

    layers.layers_request(
        collection=c, questions=[q1, q2], assessors=[a, b], by=org, adjudicator=adj
    )
    queue = reverse("annotate:adjudication-queue")
    client.force_login(adj)
    assert "To adjudicate" not in _menu(client)  # nothing waits yet: the layers are open
    assert "No question waits for your adjudication" in client.get(queue).content.decode()
    for user, yoko in ((a, "x"), (b, "new")):
        client.force_login(user)
        ids = {s.text: s.pk for s in q1.strings.all()}
        judge(client, q1, ids["Lennon"], "new", "S")
        judge(client, q1, ids["Yoko"], yoko)
        act(client, q1, op="done")
        judge(client, q2, q2.strings.get().pk, "new", "S")
        act(client, q2, op="done")
    # Q2 agreed (gold, done); Q1 disagrees on Yoko: it waits for the adjudicator
    client.force_login(adj)
    assert "To adjudicate" in _menu(client)
    page = client.get(queue).content.decode()
    assert "<h1>To adjudicate</h1>" in page and "1 question waiting" in page
    assert QID.format("Q1") in page and QID.format("Q2") not in page and "ann, bob" in page
    assert reverse("annotate:question-adjudicate", args=[q1.pk]) in page
    page = client.get(reverse("annotate:question-adjudicate", args=[q1.pk])).content.decode()
    assert "1 string left to resolve" in page and queue in page
    assert reverse("annotate:collection-agreement", args=[c.slug]) not in page
    # the assessors were not named: no entry for them
    client.force_login(a)
    assert "To adjudicate" not in _menu(client)
    assert QID.format("Q1") not in client.get(queue).content.decode()
    # an organizer adjudicates every question of their collection: theirs too (issue 23)
    client.force_login(org)
    assert "To adjudicate" in _menu(client)
    page = client.get(queue).content.decode()
    assert QID.format("Q1") in page and "1 question waiting" in page
    # once resolved, the question leaves the adjudicator's list and the menu entry goes
    client.force_login(adj)
    layer_b = JudgingLayer.objects.get(question=q1, assessor=b)
    client.post(
        reverse("annotate:question-adjudicate-act", args=[q1.pk]),
        {"op": "take", "layer": layer_b.pk, "string": q1.strings.get(text="Yoko").pk},
    )
    assert "To adjudicate" not in _menu(client)
    assert QID.format("Q1") not in client.get(queue).content.decode()


def test_a_named_adjudicator_who_left_the_collection_sees_nothing(client):
    c = make_collection(slug="adj2")
    org, a, adj = (make_user(username=n) for n in ("org", "ann", "jud"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    m = add_member(collection=c, user=adj, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon"])
    from annotate import layers

    layers.layers_request(collection=c, questions=[q], assessors=[a], k=1, by=org, adjudicator=adj)
    client.force_login(a)
    judge(client, q, q.strings.get().pk, "x")
    act(client, q, op="done")  # agreed with itself: gold judged it incorrect
    q.strings.update(judged_at=None)  # as if the organizer sent it back: it waits
    client.force_login(adj)
    assert QID.format("Q1") in client.get(reverse("annotate:adjudication-queue")).content.decode()
    m.role = "participant"
    m.save()
    client.force_login(adj)
    assert "To adjudicate" not in _menu(client)
    assert (
        QID.format("Q1") not in client.get(reverse("annotate:adjudication-queue")).content.decode()
    )


# -- the layer request form: the question list's filters, all or a sample ----------------------
def test_the_request_form_filters_as_the_question_list(client):
    c = make_collection(slug="flt")
    org, a, b = (make_user(username=n) for n in ("org", "ann", "bob"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    qs = {
        "TOK-1": make_question(collection=c, qid="TOK-1", text="Capital of Japan?", unjudged=["x"]),
        "TOK-2": make_question(collection=c, qid="TOK-2", text="Edo?", synsets=[[("y", "S")]]),
        "OSA-1": make_question(collection=c, qid="OSA-1", text="Osaka castle?", unjudged=["z"]),
        "KYO-1": make_question(collection=c, qid="KYO-1", text="Kyoto temple?", unjudged=["w"]),
    }
    qs["KYO-1"].assessors.add(b)
    client.force_login(org)
    # the question list links here with its filters, which fill in the form
    ql = client.get(reverse("annotate:question-list", args=[c.slug]), {"q": "TOK"})
    link = reverse("annotate:collection-agreement", args=[c.slug]) + "?q=TOK"
    assert link in ql.content.decode()
    page = client.get(reverse("annotate:collection-agreement", args=[c.slug]), {"q": "TOK"})
    assert 'name="f_q" value="TOK"' in page.content.decode()
    url = reverse("annotate:collection-layers-request", args=[c.slug])

    def request(**filters):
        JudgingLayer.objects.all().delete()
        from annotate.models import LayerRequest

        LayerRequest.objects.all().delete()
        # a request assigns its assessors: back to KYO-1 alone assigned (to bob)
        Question.assessors.through.objects.all().delete()
        qs["KYO-1"].assessors.add(b)
        r = client.post(url, {"assessors": [a.pk, b.pk], "k": "2", **filters})
        assert r.status_code == 302
        return set(JudgingLayer.objects.values_list("question__qid", flat=True).distinct())

    assert request(f_q="tok") == {"TOK-1", "TOK-2"}  # search in the question id
    assert request(f_q="castle") == {"OSA-1"}  # and in the text
    assert request(f_unjudged="1", f_q="TOK") == {"TOK-1"}
    assert request(f_unjudged="0") == {"TOK-2"}
    assert request(f_assessor=str(b.pk)) == {"KYO-1"}
    assert request(f_assessor="none", f_unjudged="1") == {"TOK-1", "OSA-1"}
    assert request(scope="all", sample="1") == set(qs)  # all: the sample size is ignored
    picked = request(scope="sample", sample="2", seed="3")
    assert len(picked) == 2 and picked == request(scope="sample", sample="2", seed="3")
    assert request(f_q="no-such-question") == set()
    r = client.post(url, {"assessors": [a.pk, b.pk], "f_q": "no-such-question"}, follow=True)
    assert "No question matches the filters" in r.content.decode()


def test_a_request_names_the_questions_left_out_because_gold_was_derived(client, study):
    w = study
    judge_all(client, w, w["a"], [("Lennon", "x", ""), ("McCartney", "x", ""), ("Yoko", "x", "")])
    judge_all(client, w, w["b"], [("Lennon", "x", ""), ("McCartney", "x", ""), ("Yoko", "x", "")])
    make_question(collection=w["c"], qid="Q2", unjudged=["Jagger"])
    client.force_login(w["org"])
    url = reverse("annotate:collection-layers-request", args=[w["c"].slug])
    r = client.post(
        url, {"assessors": [w["a"].pk, w["b"].pk], "k": "2", "scope": "all"}, follow=True
    )
    page = r.content.decode()
    assert "2 layers requested on 1 question." in page
    assert "1 question left out: gold was already derived from its layers" in page
    assert "Q1" in page.split("left out")[1][:200]
    assert JudgingLayer.objects.filter(question=w["q"]).count() == 2
    # only Q1 chosen: refused, with its name
    r = client.post(
        url,
        {"assessors": [w["a"].pk, w["b"].pk], "k": "2", "f_q": "Q1", "scope": "all"},
        follow=True,
    )
    assert "Gold was already derived from the layers of every question chosen (Q1)" in (
        r.content.decode()
    )


def test_agreement_questions_are_paged_with_every_figure(
    client, study, monkeypatch, django_assert_max_num_queries
):
    """Every figure per question (as per collection), and the list a page at a time --
    ``?page=`` -- with the same queries on every page."""
    from annotate import agreement_report, layer_views, layers

    w = study
    qs = [w["q"]] + [
        make_question(collection=w["c"], qid=f"Q{i}", unjudged=["Lennon", "Yoko"]) for i in (2, 3)
    ]
    layers.layers_request(
        collection=w["c"], questions=qs[1:], assessors=[w["a"], w["b"]], by=w["org"]
    )
    for q in qs:
        for user, new in ((w["a"], True), (w["b"], False)):
            layer = JudgingLayer.objects.get(question=q, assessor=user)
            for s in q.strings.order_by("id"):
                layers.layer_judge(layer=layer, string=s.pk, new_group=new, by=user)
            layers.layer_mark_done(layer=layer, by=user)
    monkeypatch.setattr(layer_views, "QUESTIONS_PER_PAGE", 2)
    client.force_login(w["org"])
    url = reverse("annotate:collection-agreement", args=[w["c"].slug])
    pages = []
    for number in ("1", "2"):
        with django_assert_max_num_queries(16):
            pages.append(client.get(url, {"page": number}).content.decode())
    table = [p.split('id="agreement-questions"')[1].split("</table>")[0] for p in pages]
    head = table[0].split("</thead>")[0]
    for name in ("Judged alike %", "Cohen's κ", "α nominal", "Pairs F1", "ARI", "B-cubed F1"):
        assert name in head, name
    assert [t.count('<span class="qid">') for t in table] == [2, 1]
    listed = [qid for t in table for qid in ("Q1", "Q2", "Q3") if f">{qid}<" in t]
    assert sorted(listed) == ["Q1", "Q2", "Q3"]
    assert "questions 1–2 of 3" in pages[0] and "questions 3–3 of 3" in pages[1]
    assert "?page=2" in pages[0] and "?page=1" in pages[1]
    # a question's row has the question's figures: ann judged every string correct, bob
    # none (kappa 0: no agreement beyond chance; nothing correct in both to group)
    f = next(
        r.figures for r in agreement_report.collection_agreement(w["c"]).questions if r.qid == "Q2"
    )
    assert (f.n_strings, f.n_agree, f.kappa) == (2, 0, 0.0)
    assert f.ari != f.ari and f.bcubed_f1 != f.bcubed_f1  # nan
    row = next(t for t in table if ">Q2<" in t).split(">Q2<")[1].split("</tr>")[0]
    assert '<td class="num">0.000</td><td class="num">-0.500</td>' in row  # κ, α nominal


def test_a_stale_adjudication_page_cannot_overwrite_another_adjudicator(client, study):
    """Two adjudicators open the page of one question; the first takes ann's judgment of
    McCartney, the second (whose page still shows it unresolved) then takes bob's: refused
    with a notice, as a stale edit on the gold judging page, and the first choice stays."""
    import re

    from django.test import Client

    w = study
    judge_all(
        client, w, w["a"], [("Lennon", "new", "S"), ("McCartney", "new", "S"), ("Yoko", "x", "")]
    )
    judge_all(
        client, w, w["b"], [("Lennon", "new", "S"), ("McCartney", "x", ""), ("Yoko", "x", "")]
    )
    other = make_user(username="olga")
    add_member(collection=w["c"], user=other, role="organizer")
    first, second = Client(), Client()
    first.force_login(w["org"])
    second.force_login(other)
    url = reverse("annotate:question-adjudicate", args=[w["q"].pk])
    act_url = reverse("annotate:question-adjudicate-act", args=[w["q"].pk])
    pages = [c.get(url).content.decode() for c in (first, second)]
    version = Question.objects.get(pk=w["q"].pk).version
    for page in pages:  # every form of the page sends the version it shows
        forms = re.findall(r"<form method=\"post\".*?</form>", page, re.S)
        assert forms and all(f'name="version" value="{version}"' in f for f in forms)
    la, lb = (JudgingLayer.objects.get(question=w["q"], assessor=w[u]) for u in ("a", "b"))
    mc = w["ids"]["McCartney"]
    first.post(act_url, {"op": "take", "layer": la.pk, "string": mc, "version": version})
    r = second.post(
        act_url, {"op": "take", "layer": lb.pk, "string": mc, "version": version}, follow=True
    )
    assert "Someone else changed this question&#x27;s gold since your page was loaded" in (
        r.content.decode()
    )
    s = w["q"].strings.get(pk=mc)
    assert s.synset is not None and s.level.code == "S"  # ann's, as the first chose
    # undo from the stale page is refused too; from the reloaded page it applies
    second.post(act_url, {"op": "undo", "version": version})
    assert w["q"].strings.get(pk=mc).judged_at is not None
    fresh = Question.objects.get(pk=w["q"].pk).version
    assert f'name="version" value="{fresh}"' in second.get(url).content.decode()
    second.post(act_url, {"op": "take", "layer": lb.pk, "string": mc, "version": fresh})
    s = w["q"].strings.get(pk=mc)
    assert s.judged_at is not None and s.synset is None  # bob's: incorrect


def test_layer_pages_answer_htmx_with_the_projects_redirect(client, study):
    """The pages of layers send the browser on as every page does (``redirect_to``): a
    302, or ``HX-Redirect`` for htmx, which loads the whole page there."""
    w = study
    client.force_login(w["org"])
    hx = {"HX-Request": "true"}
    agreement = reverse("annotate:collection-agreement", args=[w["c"].slug])
    r = client.post(
        reverse("annotate:collection-layers-request", args=[w["c"].slug]),
        {"assessors": [w["a"].pk, w["b"].pk], "k": "2"},
        headers=hx,
    )
    assert r.status_code == 200 and r.headers["HX-Redirect"] == agreement
    r = client.post(
        reverse("annotate:question-adjudicate-act", args=[w["q"].pk]),
        {"op": "undo", "string": w["ids"]["Yoko"]},
        headers=hx,
    )
    assert r.headers["HX-Redirect"] == (
        reverse("annotate:question-adjudicate", args=[w["q"].pk]) + f"#s{w['ids']['Yoko']}"
    )
    client.force_login(w["a"])
    r = client.get(reverse("annotate:question-layer", args=[w["q"].pk]), headers=hx)
    assert r.headers["HX-Redirect"] == reverse("annotate:question-judge", args=[w["q"].pk])


def test_a_layer_operation_is_validated_and_applied_by_the_workspaces_one_function(
    client, study, monkeypatch
):
    from annotate import operations as operations_module

    seen = []
    shared = operations_module.apply_operation

    def spy(request, operations, context, **data):
        seen.append((operations is operations_module.OPERATIONS, sorted(context)))
        return shared(request, operations, context, **data)

    monkeypatch.setattr(operations_module, "apply_operation", spy)
    w = study
    client.force_login(w["a"])
    judge(client, w["q"], w["ids"]["Lennon"], "new", "S")
    client.force_login(w["org"])
    client.post(
        reverse("annotate:question-act", args=[w["q"].pk]),
        {"op": "incorrect", "string": w["ids"]["Yoko"]},
    )
    assert seen == [(False, ["by", "layer"]), (True, ["by", "question"])]
    assert LayerJudgment.objects.filter(layer__assessor=w["a"]).count() == 1


# -- red team 13 -----------------------------------------------------------------------------
def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_the_adjudication_page_waits_for_every_layer(client, study):
    w = study
    client.force_login(w["a"])
    judge(client, w["q"], w["ids"]["Lennon"], "new", "S")
    client.force_login(w["org"])
    url = reverse("annotate:question-adjudicate", args=[w["q"].pk])
    page = client.get(url).content.decode()
    assert "Waiting for 2 layers of 2" in page and 'id="adjudication"' not in page
    assert "<th>ann" not in page and "Lennon" not in page  # nothing of the layers, no row
    layer_a = JudgingLayer.objects.get(question=w["q"], assessor=w["a"])
    r = client.post(
        reverse("annotate:question-adjudicate-act", args=[w["q"].pk]),
        {"op": "take", "layer": layer_a.pk, "string": w["ids"]["Lennon"]},
        follow=True,
    )
    assert any("Waiting for 2 layers" in m for m in _messages(r))
    assert not w["q"].strings.filter(judged_at__isnull=False).exists()
    for op in ({"op": "incorrect"}, {"op": "level", "level": "S"}):
        r = client.post(
            reverse("annotate:question-adjudicate-act", args=[w["q"].pk]),
            {**op, "string": w["ids"]["Yoko"]},
            follow=True,
        )
        assert any("Waiting for 2 layers" in m for m in _messages(r))
    assert not w["q"].strings.filter(judged_at__isnull=False).exists()


def test_undefined_figures_show_a_dash_that_says_why(client, study):
    """Every string judged incorrect by both layers: no grouping to compare (nan); a
    question with no string at all: nothing to compare.  The page showed "nan"."""
    w = study
    for user in (w["a"], w["b"]):
        judge_all(client, w, user, [(t, "x", "") for t in ("Lennon", "McCartney", "Yoko")])
    from annotate import layer_selectors, layers

    empty = make_question(collection=w["c"], qid="Q2", unjudged=[])
    layers.layers_request(
        collection=w["c"], questions=[empty], assessors=[w["a"], w["b"]], by=w["org"]
    )
    for user in (w["a"], w["b"]):
        layers.layer_mark_done(layer=layer_selectors.layer_for(question=empty, user=user), by=user)
    client.force_login(w["org"])
    page = client.get(reverse("annotate:collection-agreement", args=[w["c"].slug])).content.decode()
    assert "nan" not in page.lower()
    assert (
        '<span class="undefined" title="undefined: no string judged correct in both layers' in page
    )
    assert '<span class="undefined" title="undefined: no string judged by both layers">—' in page
    # the reason in visible text too (a phone has no hover): a letter beside the dash, the
    # letters' reasons under the table
    assert '—<sup class="why-mark">a</sup></span>' in page
    assert '—<sup class="why-mark">b</sup></span>' in page
    assert '—<sup class="why-mark">a</sup> undefined: no string judged by both layers' in page
    # the "all layer pairs" row counts the questions the pair rows count: Q1 (Q2 has none)
    import re

    overall = re.search(r"<th>all layer pairs</th><td class=\"num\">(\d+)</td>", page)
    pair = re.search(r"<td>ann – bob</td><td class=\"num\">(\d+)</td>", page)
    assert overall.group(1) == pair.group(1) == "1"


def test_a_named_adjudicator_places_a_string_no_layer_judged(client):
    """A string pooled after gold was derived from the layers: no layer judged it, so
    neither take nor set level could resolve it, and the adjudicator may not judge gold on
    the judging page."""
    from annotate import layer_selectors, layers
    from annotate.judging import strings_add_unjudged
    from annotate.models import AnswerString, JudgmentEvent

    c = make_collection(slug="place")
    org, a, b, x = (make_user(username=n) for n in ("org", "ann", "bob", "xav"))
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b, x):
        add_member(collection=c, user=u, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["Lennon"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org, adjudicator=x)
    s = q.strings.get()
    for u in (a, b):
        layer = layer_selectors.layer_for(question=q, user=u)
        layers.layer_judge(layer=layer, string=s.pk, new_group=True, level="S", by=u)
        layers.layer_mark_done(layer=layer, by=u)
    strings_add_unjudged(rows=[(q.pk, "john lennon", "John Lennon")], source="pool", reason="t")
    new = AnswerString.objects.get(question=q, text="John Lennon")
    gold = s.__class__.objects.get(pk=s.pk).synset
    client.force_login(x)
    url = reverse("annotate:question-adjudicate", args=[q.pk])
    page = client.get(url).content.decode()
    assert "no layer</span>" in page and 'name="op" value="place"' in page
    # the judging page's keys: the digit of a gold synset, n for a new one
    assert 'data-key="1"' in page and 'data-key="n"' in page
    q.refresh_from_db()
    act_url = reverse("annotate:question-adjudicate-act", args=[q.pk])
    r = client.post(
        act_url,
        {"op": "place", "string": new.pk, "synset": gold.pk, "level": "A", "version": q.version},
    )
    assert r.status_code == 302 and r.url.endswith(f"#s{new.pk}")
    new.refresh_from_db()
    assert new.synset_id == gold.pk and new.level.code == "A"
    event = JudgmentEvent.objects.filter(question=q).latest("id")
    assert event.user == x and event.action == "string_add"
    assert not q.strings.filter(judged_at__isnull=True).exists()
    client.post(act_url, {"op": "undo"})
    new.refresh_from_db()
    assert new.judged_at is None
    q.refresh_from_db()
    client.post(act_url, {"op": "place", "string": new.pk, "synset": "new", "version": q.version})
    new.refresh_from_db()
    assert new.synset_id not in (None, gold.pk) and new.level.code == "S"  # the highest
    # a string the layers judged is taken from a layer, not placed
    q.refresh_from_db()
    r = client.post(
        act_url,
        {"op": "place", "string": s.pk, "synset": "new", "version": q.version},
        follow=True,
    )
    assert any("take it from that layer" in m for m in _messages(r))
