"""Fixtures shared by the tests of annotate's organizer writes and of its pages."""

import pytest

from annotate import organizing
from tests.factories import add_member, make_collection, make_question, make_user


@pytest.fixture
def members_world():
    """A collection with an organizer and an assessor assigned its three questions; the
    assessor judges in another collection too."""
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
