"""Who sees which runs: organizers every run of their collections, participants their own
(everyone's once the leaderboard is published), assessors none; staff everything."""

import pytest

from evaluation.models import Run
from tests.factories import add_member, make_collection, make_run, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    c, other = make_collection(slug="c"), make_collection(slug="other")
    users = {
        name: make_user(username=name) for name in ("org", "assessor", "alice", "bob", "outsider")
    }
    add_member(collection=c, user=users["org"], role="organizer")
    add_member(collection=c, user=users["assessor"], role="assessor")
    add_member(collection=c, user=users["alice"], role="participant")
    add_member(collection=c, user=users["bob"], role="participant")
    add_member(collection=other, user=users["outsider"], role="organizer")
    make_run(collection=c, owner=users["alice"], name="alice-1")
    make_run(collection=c, owner=users["bob"], name="bob-1")
    make_run(collection=other, owner=users["outsider"], name="elsewhere")
    return c, users


def visible(user, collection=None):
    return sorted(Run.objects.visible_to(user, collection).values_list("name", flat=True))


def test_visibility_by_role(world):
    c, u = world
    assert visible(u["org"]) == ["alice-1", "bob-1"]
    assert visible(u["alice"]) == ["alice-1"]
    assert visible(u["assessor"]) == []
    assert visible(u["outsider"]) == ["elsewhere"]
    assert visible(u["outsider"], c) == []
    assert visible(make_user(staff=True)) == ["alice-1", "bob-1", "elsewhere"]
    c.leaderboard_published = True
    c.save(update_fields=["leaderboard_published"])
    assert visible(u["alice"]) == ["alice-1", "bob-1"]
    assert visible(u["assessor"]) == []


def test_global_runs_page_lists_what_the_user_may_see(client, world):
    _, u = world
    client.force_login(u["alice"])
    r = client.get("/runs/")
    assert [run.name for run in r.context["runs"]] == ["alice-1"]
    assert "bob-1" not in r.content.decode()
    client.force_login(u["org"])
    assert [run.name for run in client.get("/runs/").context["runs"]] == ["alice-1", "bob-1"]


def test_per_collection_runs_page_refuses_assessors_and_strangers(client, world):
    _, u = world
    for name in ("assessor", "outsider"):
        client.force_login(u[name])
        assert client.get("/collections/c/runs/").status_code == 403
    client.force_login(u["alice"])
    r = client.get("/collections/c/runs/")
    assert r.status_code == 200
    assert [row["run"].name for row in r.context["rows"]] == ["alice-1"]
    assert "alice-1" in r.content.decode() and "bob-1" not in r.content.decode()
