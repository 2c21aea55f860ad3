"""Collections list, collection overview and my queue: who sees what, in how many queries."""

import html

import pytest

from annotate.models import Collection, Question
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def test_collections_list_shows_memberships_and_staff_sees_all(client):
    mine, theirs = make_collection(slug="mine"), make_collection(slug="theirs")
    user = make_user()
    add_member(collection=mine, user=user, role="participant")
    make_question(collection=mine, qid="Q1")
    client.force_login(user)
    r = client.get("/collections/")
    assert [(row["collection"].slug, row["role"]) for row in r.context["rows"]] == [
        ("mine", "participant")
    ]
    assert "theirs" not in r.content.decode()
    client.force_login(make_user(staff=True))
    r = client.get("/collections/")
    assert {row["collection"].slug for row in r.context["rows"]} == {"mine", "theirs"}
    assert {row["role"] for row in r.context["rows"]} == {"organizer"}
    assert theirs.slug in r.content.decode()


def test_home_redirects_to_the_collections(client):
    client.force_login(make_user())
    r = client.get("/")
    assert r.status_code == 302 and r.headers["Location"] == "/collections/"


def test_overview_progress_and_members_for_organizers(client):
    c = make_collection(slug="p")
    for i, status in enumerate(["done", "done", "in_progress", "todo"]):
        Question.objects.create(collection=c, qid=f"Q{i}", text="?", status=status)
    org, assessor = make_user(username="olga"), make_user(username="arne")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=assessor, role="assessor")
    client.force_login(org)
    r = client.get("/collections/p/")
    stats = r.context["stats"]
    assert (stats["done"], stats["in_progress"], stats["questions"], stats["percent_done"]) == (
        2,
        1,
        4,
        50,
    )
    html = r.content.decode()
    assert '<progress max="100" value="50"' in html and "arne" in html  # members listed
    client.force_login(assessor)
    r = client.get("/collections/p/")
    assert r.status_code == 200 and f"<h1>{c.name}</h1>" in r.content.decode()
    assert r.context["stats"]["questions"] == 4
    assert "olga" not in r.content.decode()  # members are listed to organizers only


def test_my_queue_lists_open_questions_of_every_collection_before_done_ones(client):
    a, b = make_collection(slug="a", name="A"), make_collection(slug="b", name="B")
    me, other = make_user(), make_user()
    for c in (a, b):
        add_member(collection=c, user=me, role="assessor")
    q_done = Question.objects.create(collection=a, qid="A-done", text="?", status="done")
    q_todo = Question.objects.create(collection=a, qid="A-todo", text="?", status="todo")
    q_prog = Question.objects.create(collection=a, qid="A-prog", text="?", status="in_progress")
    q_b = make_question(collection=b, qid="B-1", synsets=[[("x", "S")]], unjudged=["y"])
    not_mine = Question.objects.create(collection=a, qid="A-other", text="?")
    for q in (q_done, q_todo, q_prog, q_b):
        q.assessors.add(me)
    not_mine.assessors.add(other)
    client.force_login(me)
    r = client.get("/queue/")
    assert [q.qid for q in r.context["questions"]] == ["A-prog", "A-todo", "B-1", "A-done"]
    assert r.context["open_count"] == 3
    html = r.content.decode()
    assert "A-other" not in html and 'href="/collections/b/"' in html
    row = r.context["questions"][2]
    assert (row.n_synsets, row.n_strings, row.n_unjudged) == (1, 2, 1)


def test_pages_issue_a_fixed_number_of_queries(client, django_assert_max_num_queries):
    user = make_user()
    for i in range(30):
        c = make_collection(slug=f"c{i}")
        add_member(collection=c, user=user, role="organizer")
        q = make_question(
            collection=c, synsets=[[("a", "S")], [("b", "A")]], incorrect=["c"], unjudged=["d"]
        )
        q.assessors.add(user)
    client.force_login(user)
    # session + user, then the page's own reads (the queue: its questions and the count of
    # questions nobody is assigned to); independent of the 30 collections
    pages = {}
    # each with one query for the navigation (the user's roles decide its entries); the
    # collection page one or two more for its organizer's next steps; the queue one more for
    # the user's layers (a question judged in a layer shows the layer's progress)
    for url, queries in [("/collections/", 5), ("/collections/c7/", 12), ("/queue/", 6)]:
        with django_assert_max_num_queries(queries):
            pages[url] = client.get(url)
        assert pages[url].status_code == 200, url
    assert len(pages["/collections/"].context["rows"]) == 30
    c7 = Collection.objects.get(slug="c7")
    assert f"<h1>{c7.name}</h1>" in pages["/collections/c7/"].content.decode()
    assert pages["/collections/c7/"].context["stats"]["questions"] == 1
    assert len(pages["/queue/"].context["questions"]) == 30


def test_pages_answer_htmx_requests_too(client, demo):
    from django.contrib.auth import get_user_model

    me = get_user_model().objects.get(username="assessor1")
    client.force_login(me)
    mine = list(Question.objects.filter(assessors=me).values_list("qid", flat=True))
    assert mine
    for url, shown in [
        ("/collections/", ["<h1>Collections</h1>", demo.name]),
        ("/collections/demo/", [f"<h1>{demo.name}</h1>"]),
        ("/queue/", ["<h1>My queue</h1>", *mine]),
    ]:
        r = client.get(url, headers={"HX-Request": "true"})
        assert r.status_code == 200, url
        body = html.unescape(r.content.decode())
        for text in shown:
            assert text in body, (url, text)


def test_my_queue_puts_a_question_whose_layer_i_marked_done_after_the_open_ones(client):
    """A question judged in a layer is open or done as the assessor's layer is, not gold."""
    from annotate import layers
    from annotate.models import JudgingLayer
    from tests.annotate.layer_study import PLAN_A, judge, layer_study

    c, _q, _org, a, _b, la, _lb, ids = layer_study()
    judge(la, a, ids, PLAN_A)
    layers.layer_mark_done(layer=la, by=a)
    later = Question.objects.create(collection=c, qid="Q2", text="?")
    later.assessors.add(a)
    client.force_login(a)
    r = client.get("/queue/")
    assert [(x.qid, x.status) for x in r.context["questions"]] == [("Q2", "todo"), ("Q1", "done")]
    assert JudgingLayer.objects.get(pk=la.pk).done
