"""The organizer's writes (annotate/organizing.py): assignments, a collection and its
levels, memberships (a collection always keeps an organizer) and invitations."""

import pytest

from annotate import edits, organizing
from annotate.edits import Conflict
from annotate.models import Collection, Level, Membership
from annotate.organizing import member_invite
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def test_an_organizer_made_assessor_keeps_assignments(members_world):
    c, organizer, assessor, questions, _ = members_world
    organizing.membership_set(collection=c, user=assessor, role="organizer", by=organizer)
    organizing.membership_set(collection=c, user=assessor, role="assessor", by=organizer)
    assert questions[0].assessors.filter(pk=assessor.pk).exists()


@pytest.mark.parametrize("role", [None, "assessor", "participant"])
def test_the_last_organizer_can_neither_leave_nor_step_down(members_world, role):
    c, organizer, assessor, _, _ = members_world
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


def test_a_taken_username_is_refused_and_nothing_is_written():
    c = make_collection(slug="inv2")
    org = make_user(username="inv2-org")
    make_user(username="Taken")
    with pytest.raises(Conflict, match="taken"):
        member_invite(collection=c, username="taken", role="participant", by=org)
    assert not Membership.objects.filter(collection=c).exists()


def test_questions_assign_round_robin_or_to_all_and_refuses_strangers(members_world):
    c, organizer, assessor, questions, _ = members_world
    second = make_user(username="second")
    add_member(collection=c, user=second, role="assessor")
    n = organizing.questions_assign(
        collection=c, questions=questions, assessors=[assessor, second], by=organizer
    )
    assert n == 3
    assigned = [list(q.assessors.values_list("username", flat=True)) for q in questions]
    assert assigned == [["ass"], ["second"], ["ass"]]
    organizing.questions_assign(
        collection=c,
        questions=questions[:1],
        assessors=[assessor, second],
        by=organizer,
        round_robin=False,
    )
    assert sorted(questions[0].assessors.values_list("username", flat=True)) == ["ass", "second"]
    stranger = make_user(username="stranger")
    with pytest.raises(Conflict, match="Not an assessor of this collection: stranger"):
        organizing.questions_assign(
            collection=c, questions=questions, assessors=[stranger], by=organizer
        )
    with pytest.raises(Conflict, match="at least one assessor"):
        organizing.questions_assign(collection=c, questions=questions, assessors=[], by=organizer)


def test_collection_save_gives_a_new_collection_default_levels_and_its_organizer():
    creator = make_user(username="creator")
    c = organizing.collection_save(
        collection=Collection(name="New", slug="new"), levels=None, by=creator
    )
    assert list(c.levels.order_by("order").values_list("code", "gain")) == [
        ("S", 3.0),
        ("A", 2.0),
        ("B", 1.0),
    ]
    assert Membership.objects.get(collection=c, user=creator).role == "organizer"
    c = organizing.collection_save(collection=c, levels=[("S", "S", 2.0)], by=creator)
    assert list(c.levels.values_list("code", "gain")) == [("S", 2.0)]
    with pytest.raises(Conflict, match="at least one level"):
        organizing.collection_save(collection=c, levels=[], by=creator)


def test_collection_save_refuses_to_remove_a_level_in_use():
    c, org = make_collection(slug="lv"), make_user()
    make_question(collection=c, qid="Q1", synsets=[[("a", "B")]])
    with pytest.raises(Conflict):
        organizing.collection_save(collection=c, levels=[("S", "S", 3.0)], by=org)
    assert Level.objects.filter(collection=c, code="B").exists()
