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
