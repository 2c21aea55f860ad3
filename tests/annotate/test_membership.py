"""Membership changes: a member who stops judging leaves every queue and assignment of the
collection; a collection always keeps an organizer."""

import pytest

from annotate import organizing
from annotate.models import Membership, Question
from annotate.selectors import next_question

pytestmark = pytest.mark.django_db


def queue(client, user):
    client.force_login(user)
    page = client.get("/queue/")
    assert page.status_code == 200
    return page.content.decode()


@pytest.mark.parametrize("role", [None, "participant"])
def test_a_member_who_stops_judging_leaves_queue_and_assignments(members_world, client, role):
    c, organizer, assessor, _questions, kept = members_world
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


def test_the_queue_ignores_assignments_left_from_an_earlier_role(members_world, client):
    """Rows written before this rule existed (or by hand) are not queue entries."""
    c, _organizer, assessor, _questions, _ = members_world
    Membership.objects.filter(collection=c, user=assessor).update(role="participant")
    page = queue(client, assessor)
    assert "q-0-mem" not in page and "kept-q" in page
    Membership.objects.filter(collection=c, user=assessor).delete()
    assert "q-0-mem" not in queue(client, assessor)
    assert list(Question.objects.assigned_to(assessor)) == [members_world[4]]


def test_members_page_shows_the_last_organizer_rule(members_world, client):
    c, organizer, assessor, _, _ = members_world
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


def test_the_migration_drops_assignments_left_from_an_earlier_role(members_world):
    import importlib

    from django.apps import apps

    c, _organizer, assessor, _questions, kept = members_world
    Membership.objects.filter(collection=c, user=assessor).update(role="participant")
    migration = importlib.import_module("annotate.migrations.0003_drop_assignments_of_non_judges")
    migration.drop_stale_assignments(apps, None)
    assert list(Question.objects.filter(assessors=assessor)) == [kept]
