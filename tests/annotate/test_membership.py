"""Membership changes: a member who stops judging leaves every queue and assignment of the
collection; a collection always keeps an organizer."""

import pytest

from annotate import edits, organizing
from annotate.models import Membership, Question
from annotate.selectors import next_question
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    c = make_collection(slug="mem", name="Members")
    organizer, assessor = make_user(username="org"), make_user(username="ass")
    add_member(collection=c, user=organizer, role="organizer")
    add_member(collection=c, user=assessor, role="assessor")
    # ids with a dash: a CSRF token on the page never contains one
    questions = [make_question(collection=c, qid=f"q-{i}-mem", unjudged=["x"]) for i in range(3)]
    organizing.questions_assign(
        collection=c, questions=questions, assessors=[assessor], by=organizer, round_robin=False
    )
    # another collection where the assessor stays
    other = make_collection(slug="other")
    add_member(collection=other, user=assessor, role="assessor")
    kept = make_question(collection=other, qid="kept-q", unjudged=["y"])
    kept.assessors.add(assessor)
    return c, organizer, assessor, questions, kept


def queue(client, user):
    client.force_login(user)
    page = client.get("/queue/")
    assert page.status_code == 200
    return page.content.decode()


@pytest.mark.parametrize("role", [None, "participant"])
def test_a_member_who_stops_judging_leaves_queue_and_assignments(world, client, role):
    c, organizer, assessor, _questions, kept = world
    assert "q-1-mem" in queue(client, assessor)
    organizing.membership_set(collection=c, user=assessor, role=role, by=organizer)
    assert not Question.assessors.through.objects.filter(
        question__collection=c, user=assessor
    ).exists()
    page = queue(client, assessor)
    assert "q-1-mem" not in page and "kept-q" in page
    assert next_question(assessor, collection=c) is None
    assert next_question(assessor) == kept
    # the audit trail says how many assignments went
    event = c.events.filter(action="membership_set").latest("id")
    assert event.after == {
        "user": "ass",
        "role": role,
        "assignments_dropped": 3,
        "layers_removed": 0,
    }


def test_an_organizer_made_assessor_keeps_assignments(world):
    c, organizer, assessor, questions, _ = world
    organizing.membership_set(collection=c, user=assessor, role="organizer", by=organizer)
    organizing.membership_set(collection=c, user=assessor, role="assessor", by=organizer)
    assert questions[0].assessors.filter(pk=assessor.pk).exists()


def test_the_queue_ignores_assignments_left_from_an_earlier_role(world, client):
    """Rows written before this rule existed (or by hand) are not queue entries."""
    c, _organizer, assessor, _questions, _ = world
    Membership.objects.filter(collection=c, user=assessor).update(role="participant")
    page = queue(client, assessor)
    assert "q-0-mem" not in page and "kept-q" in page
    Membership.objects.filter(collection=c, user=assessor).delete()
    assert "q-0-mem" not in queue(client, assessor)
    assert list(Question.objects.assigned_to(assessor)) == [world[4]]


@pytest.mark.parametrize("role", [None, "assessor", "participant"])
def test_the_last_organizer_can_neither_leave_nor_step_down(world, role):
    c, organizer, assessor, _, _ = world
    with pytest.raises(edits.Conflict, match="last organizer"):
        organizing.membership_set(collection=c, user=organizer, role=role, by=organizer)
    assert Membership.objects.get(collection=c, user=organizer).role == "organizer"
    # with a second organizer, either may go
    organizing.membership_set(collection=c, user=assessor, role="organizer", by=organizer)
    organizing.membership_set(collection=c, user=organizer, role=role, by=organizer)
    assert list(
        c.memberships.filter(role="organizer").values_list("user__username", flat=True)
    ) == ["ass"]
    with pytest.raises(edits.Conflict, match="last organizer"):
        organizing.membership_set(collection=c, user=assessor, role=None, by=organizer)


def test_members_page_shows_the_last_organizer_rule(world, client):
    c, organizer, assessor, _, _ = world
    client.force_login(organizer)
    url = f"/collections/{c.slug}/members/"
    for data in (
        {"action": "remove", "user": organizer.pk},
        {"action": "role", "user": organizer.pk, "role": "assessor"},
    ):
        page = client.post(url, data, headers={"HX-Request": "true"})
        assert page.status_code == 200
        assert "last organizer" in page.content.decode()
        # without htmx: a redirect, and the message on the next page
        page = client.post(url, data, follow=True)
        assert "last organizer" in page.content.decode()
    # "add" of an existing member with another role goes through the same rule
    page = client.post(url, {"action": "add", "username": "org", "role": "participant"})
    assert page.status_code == 200
    assert "last organizer" in page.content.decode()
    assert Membership.objects.get(collection=c, user=organizer).role == "organizer"
    # removing the assessor from the page drops their assignments
    client.post(url, {"action": "remove", "user": assessor.pk})
    assert not Question.objects.filter(collection=c, assessors=assessor).exists()


def test_the_migration_drops_assignments_left_from_an_earlier_role(world):
    import importlib

    from django.apps import apps

    c, _organizer, assessor, _questions, kept = world
    Membership.objects.filter(collection=c, user=assessor).update(role="participant")
    migration = importlib.import_module("annotate.migrations.0003_drop_assignments_of_non_judges")
    migration.drop_stale_assignments(apps, None)
    assert list(Question.objects.filter(assessors=assessor)) == [kept]
