"""An organizer creates the account of a new member: a one-time link sets its password."""

import pytest
from django.urls import reverse

from annotate.models import JudgmentEvent, Membership
from annotate.organizing import member_invite
from tests.factories import add_member, make_collection, make_user

pytestmark = pytest.mark.django_db


def test_invited_member_sets_a_password_once_and_logs_in(client):
    c = make_collection(slug="inv")
    org = make_user(username="inv-org")
    add_member(collection=c, user=org, role="organizer")
    inv = member_invite(
        collection=c, username=" newbie ", role="assessor", by=org, email="n@example.org"
    )
    assert inv.user.username == "newbie" and not inv.user.has_usable_password()
    assert Membership.objects.get(collection=c, user=inv.user).role == "assessor"
    assert JudgmentEvent.objects.filter(action="member_invite").count() == 1
    link = reverse("set-password", args=[inv.uidb64, inv.token])
    r = client.get(link, follow=True)
    page = r.content.decode()
    assert "Choose your password" in page and "newbie" in page
    r = client.post(
        r.redirect_chain[-1][0],
        {"new_password1": "a-Long-pass-9876", "new_password2": "a-Long-pass-9876"},
    )
    assert r.status_code == 302 and r["Location"] == reverse("set-password-done")
    assert client.login(username="newbie", password="a-Long-pass-9876")
    client.logout()
    # the link is spent
    page = client.get(link, follow=True).content.decode()
    assert "This link cannot be used" in page


def test_members_page_defaults_to_participant_says_what_it_did_and_invites(client):
    c = make_collection(slug="mem")
    org = make_user(username="mem-org")
    add_member(collection=c, user=org, role="organizer")
    make_user(username="mem-x")
    client.force_login(org)
    page = client.get("/collections/mem/members/").content.decode()
    # the add form's role starts at the least privileged
    add_form = page[page.index('name="action" value="add"') :]
    assert '<option value="participant" selected>' in add_form
    r = client.post(
        "/collections/mem/members/",
        {"action": "add", "username": "mem-x", "role": "participant"},
        HTTP_HX_REQUEST="true",
    )
    assert "mem-x is now a member: Participant." in r.content.decode()
    assert Membership.objects.get(collection=c, user__username="mem-x").role == "participant"
    r = client.post(
        "/collections/mem/members/",
        {"action": "invite", "username": "fresh", "email": "", "role": "assessor"},
        HTTP_HX_REQUEST="true",
    )
    page = r.content.decode()
    assert "Account fresh created (Assessor)" in page
    link = page.split('id="invite-link" readonly value="')[1].split('"')[0]
    assert link.startswith("http://testserver/accounts/set-password/")
    assert Membership.objects.get(collection=c, user__username="fresh").role == "assessor"
    # a taken name is refused on the form, nothing created
    r = client.post(
        "/collections/mem/members/",
        {"action": "invite", "username": "FRESH", "role": "assessor"},
        HTTP_HX_REQUEST="true",
    )
    assert "is taken" in r.content.decode()
    assert Membership.objects.filter(collection=c).count() == 3
