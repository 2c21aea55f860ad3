"""An organizer creates the account of a new member: a one-time link sets its password."""

import pytest
from django.urls import reverse

from annotate.models import JudgmentEvent, Membership
from annotate.services import Conflict, member_invite
from tests.factories import add_member, make_collection, make_user

pytestmark = pytest.mark.django_db


def test_invited_member_sets_a_password_once_and_logs_in(client):
    c = make_collection(slug="inv")
    org = make_user(username="inv-org")
    add_member(collection=c, user=org, role="organizer")
    inv = member_invite(collection=c, username=" newbie ", role="assessor", by=org,
                        email="n@example.org")
    assert inv.user.username == "newbie" and not inv.user.has_usable_password()
    assert Membership.objects.get(collection=c, user=inv.user).role == "assessor"
    assert JudgmentEvent.objects.filter(action="member_invite").count() == 1
    link = reverse("set-password", args=[inv.uidb64, inv.token])
    r = client.get(link, follow=True)
    page = r.content.decode()
    assert "Choose your password" in page and "newbie" in page
    r = client.post(r.redirect_chain[-1][0], {"new_password1": "a-Long-pass-9876",
                                              "new_password2": "a-Long-pass-9876"})
    assert r.status_code == 302 and r["Location"] == reverse("set-password-done")
    assert client.login(username="newbie", password="a-Long-pass-9876")
    client.logout()
    # the link is spent
    page = client.get(link, follow=True).content.decode()
    assert "This link cannot be used" in page


def test_a_taken_username_is_refused_and_nothing_is_written():
    c = make_collection(slug="inv2")
    org = make_user(username="inv2-org")
    make_user(username="Taken")
    with pytest.raises(Conflict, match="taken"):
        member_invite(collection=c, username="taken", role="participant", by=org)
    assert not Membership.objects.filter(collection=c).exists()
