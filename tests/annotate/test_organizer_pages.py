"""Collection create/edit with levels, members and roles."""

import pytest
from django.contrib.auth.models import Permission

from annotate.models import Collection, Level, Membership
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def level_post(rows, **fields):
    data = {"levels-TOTAL_FORMS": str(len(rows)), "levels-INITIAL_FORMS": "0", **fields}
    for i, (code, gain, delete) in enumerate(rows):
        data |= {f"levels-{i}-code": code, f"levels-{i}-label": code, f"levels-{i}-gain": gain}
        if delete:
            data[f"levels-{i}-DELETE"] = "on"
    return data


def test_create_collection_with_default_levels_and_creator_as_organizer(client):
    user = make_user()
    # the right to start collections is granted by an administrator
    user.user_permissions.add(Permission.objects.get(codename="add_collection"))
    client.force_login(user)
    r = client.get("/collections/new/")
    assert r.status_code == 200 and 'value="S"' in r.content.decode()
    r = client.post(
        "/collections/new/",
        level_post(
            [("S", 3, False), ("A", 2, False), ("B", 1, False)],
            name="Trivia",
            slug="trivia",
            matching_mode="normalized",
            max_output_size=5,
        ),
    )
    assert r.status_code == 302
    c = Collection.objects.get(slug="trivia")
    assert [(lv.code, lv.gain, lv.order) for lv in c.levels.all()] == [
        ("S", 3, 0),
        ("A", 2, 1),
        ("B", 1, 2),
    ]
    assert Membership.objects.get(collection=c).role == "organizer"


def test_edit_levels_refuses_none_and_used_levels(client):
    c = make_collection(slug="e")
    make_question(collection=c, synsets=[[("x", "B")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    client.force_login(org)
    base = {"name": c.name, "slug": "e", "matching_mode": "exact", "max_output_size": 3}
    r = client.post("/collections/e/edit/", level_post([("S", 3, True)], **base))
    assert r.status_code == 200 and "at least one level" in r.content.decode()
    r = client.post("/collections/e/edit/", level_post([("S", 3, False)], **base))
    assert r.status_code == 200 and "used by judged strings" in r.content.decode()
    r = client.post("/collections/e/edit/", level_post([("S", 5, False), ("B", 1, False)], **base))
    assert r.status_code == 302
    assert list(Level.objects.filter(collection=c).values_list("code", "gain")) == [
        ("S", 5),
        ("B", 1),
    ]
    # the mode is changed on its own page (it re-keys run answers too): the edit page left it
    c.refresh_from_db()
    assert (c.matching_mode, c.max_output_size) == ("normalized", 3)
    r = client.post("/collections/e/matching-mode/", {"matching_mode": "exact"})
    assert r.status_code == 302
    c.refresh_from_db()
    assert (c.matching_mode, c.max_output_size) == ("exact", 3)
    assessor = make_user()
    add_member(collection=c, user=assessor, role="assessor")
    client.force_login(assessor)
    assert client.get("/collections/e/edit/").status_code == 403


def test_members_add_change_remove(client):
    c = make_collection(slug="m")
    org, bob = make_user(), make_user(username="bob")
    add_member(collection=c, user=org, role="organizer")
    client.force_login(org)
    r = client.post(
        "/collections/m/members/",
        {"action": "add", "username": "nobody", "role": "assessor"},
        headers={"HX-Request": "true"},
    )
    assert "No user" in r.content.decode() and "<html" not in r.content.decode()
    client.post("/collections/m/members/", {"action": "add", "username": "bob", "role": "assessor"})
    assert Membership.objects.get(user=bob).role == "assessor"
    client.post(
        "/collections/m/members/", {"action": "role", "user": bob.pk, "role": "participant"}
    )
    assert Membership.objects.get(user=bob).role == "participant"
    r = client.post("/collections/m/members/", {"action": "remove", "user": bob.pk})
    assert r.status_code == 302 and not Membership.objects.filter(user=bob).exists()
    r = client.get("/collections/m/members/")
    assert r.status_code == 200
    page = r.content.decode()
    table = page[page.index("<table") : page.index("</table>")]
    assert org.username in table and "bob" not in table
    # each change said what it did (messages, as the form posted without htmx)
    assert "bob is now a member: Assessor." in page and "bob removed from the collection." in page


def test_every_control_of_the_levels_formset_has_a_label(client):
    """The correctness-level table's 20 controls (3 levels and a blank row, 5 each) are each
    named by a <label for> (the column headers name nothing for a screen reader)."""
    import re

    user = make_user()
    user.user_permissions.add(Permission.objects.get(codename="add_collection"))
    client.force_login(user)
    html = client.get("/collections/new/").content.decode()
    controls = re.findall(
        r'<(?:input|textarea|select)\b[^>]*\bname="levels-\d+-[a-zA-Z]+"[^>]*>', html
    )
    ids = [re.search(r'\bid="([^"]+)"', c).group(1) for c in controls]
    labels = dict(re.findall(r'<label class="sr-only" for="([^"]+)">([^<]+)</label>', html))
    assert len(ids) == 20
    assert [labels.get(i) for i in ids[:5]] == [
        "code of level 1",
        "label of level 1",
        "gain of level 1",
        "examples of level 1",
        "delete level 1",
    ]
    assert all(labels.get(i) for i in ids), [i for i in ids if i not in labels]
