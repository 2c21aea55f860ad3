"""The main menu shows only what the user's roles can use; error pages sit in the layout."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import Permission

from tests.factories import add_member, make_collection, make_user

pytestmark = pytest.mark.django_db


def _menu(client) -> str:
    page = client.get("/collections/").content.decode()
    return re.search(r'<nav class="mainnav".*?</nav>', page, re.S).group(0)


@pytest.fixture
def people():
    collection = make_collection(slug="nav-c")
    users = {}
    for role in ("organizer", "assessor", "participant"):
        users[role] = make_user(username=f"nav-{role}")
        add_member(collection=collection, user=users[role], role=role)
    users["nobody"] = make_user(username="nav-nobody")
    return users


@pytest.mark.parametrize(
    "role, queue, runs, create",
    [
        ("organizer", True, True, True),
        ("assessor", True, False, False),
        ("participant", False, True, False),
        ("nobody", False, False, False),
    ],
)
def test_menu_entries_follow_the_roles(client, people, role, queue, runs, create):
    client.force_login(people[role])
    menu = _menu(client)
    assert ("My queue" in menu) is queue
    assert (">Runs<" in menu) is runs
    assert "Collections" in menu
    page = client.get("/collections/").content.decode()
    assert ("New collection" in page) is create
    assert client.get("/collections/new/").status_code == (200 if create else 403)


def test_the_right_to_create_collections_can_be_granted(client, people):
    user = people["assessor"]
    user.user_permissions.add(Permission.objects.get(codename="add_collection"))
    client.force_login(user)
    assert client.get("/collections/new/").status_code == 200
    assert "New collection" in client.get("/collections/").content.decode()


def test_403_page_is_in_the_layout_and_says_why(client, people):
    client.force_login(people["assessor"])
    r = client.get("/collections/new/")
    assert r.status_code == 403
    page = r.content.decode()
    assert 'class="mainnav"' in page and "You cannot open this page" in page
    assert 'class="sitefooter"' in page  # the layout of every page, the 500 page's too
    assert "Only organizers may create collections" in page
    assert "back to your collections" in page


def test_404_page_is_in_the_layout(client, people):
    client.force_login(people["participant"])
    r = client.get("/collections/no-such-collection-xyz/")
    assert r.status_code == 404
    page = r.content.decode()
    assert 'class="mainnav"' in page and "Page not found" in page
    assert 'class="sitefooter"' in page
    assert "/collections/no-such-collection-xyz/" in page


@pytest.mark.parametrize(
    "path",
    (
        "/collections/no-such-collection-xyz/",  # a view raises Http404
        "/no/such/page/",  # no URL matches
    ),
)
def test_404_page_with_debug_on_is_the_apps_not_djangos(client, people, settings, path):
    """``make demo`` runs with DEBUG on: a missing page is still the app's 404 page, not
    Django's technical one (its inline styles are blocked by the CSP); the missing final
    slash is still redirected, and API addresses still answer JSON."""
    settings.DEBUG = True
    client.force_login(people["participant"])
    r = client.get(path)
    assert r.status_code == 404
    page = r.content.decode()
    assert 'class="mainnav"' in page and "Page not found" in page and path in page
    assert "URLconf" not in page and "technical_404" not in page
    assert "<style" not in page
    assert client.get("/collections").status_code == 301
    assert client.get("/api/v1/nothing-here").json() == {"detail": "Not found"}


def test_favicon_is_named_and_served_without_login(client):
    r = client.get("/favicon.ico")
    assert r.status_code == 301 and r["Location"].endswith(".svg")
