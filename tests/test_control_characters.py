"""Control characters in what a browser sends: a NUL byte (and every other C0 control
character but tab, newline and carriage return, and DEL) in a query parameter, a form field
or a field name is answered with a 400 page naming the field, and nothing is written.  On
PostgreSQL these used to reach the database and fail with a 500 (DataError: NUL in a text
value).  A value the form refuses (L' = 0) shows its error on the form.

Run on PostgreSQL as well: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qa_h6 \
.venv/bin/pytest tests/test_control_characters.py"""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import DataError, connection, transaction

from annotate.models import AnswerString, Collection, JudgmentEvent, Membership, Question
from config.middleware import CONTROL_CHARACTERS
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

REFUSED = ["\x00", "\x01", "\x08", "\x0b", "\x0c", "\x1b", "\x1f", "\x7f"]


@pytest.fixture
def world(client):
    c = make_collection(slug="cc", name="Controls")
    organizer = make_user(username="org")
    add_member(collection=c, user=organizer, role="organizer")
    q = make_question(collection=c, qid="Q1", unjudged=["Kawabata"])
    client.force_login(organizer)
    return c, q, organizer


def snapshot():
    return (
        Collection.objects.count(),
        Question.objects.count(),
        AnswerString.objects.count(),
        Membership.objects.count(),
        JudgmentEvent.objects.count(),
        list(Question.objects.values_list("notes", flat=True)),
    )


def assert_refused(response, field: str):
    assert response.status_code == 400, response.status_code
    text = response.content.decode()
    assert "control character" in text
    assert repr(field) in text.replace("&#x27;", "'")


@pytest.mark.parametrize("char", REFUSED, ids=[f"{ord(c):#04x}" for c in REFUSED])
def test_form_fields_with_control_characters_are_refused(world, client, char):
    c, q, _ = world
    before = snapshot()
    posts = [
        (
            f"/questions/{q.pk}/act/",
            {"op": "type", "text": f"Kawa{char}bata", "target": "new", "level": "S"},
            "text",
        ),
        (f"/questions/{q.pk}/act/", {"op": "notes", "notes": f"note{char}"}, "notes"),
        (
            "/collections/new/",
            {
                "name": f"N{char}",
                "slug": "new-one",
                "matching_mode": "normalized",
                "max_output_size": 5,
                "levels-TOTAL_FORMS": "1",
                "levels-INITIAL_FORMS": "0",
                "levels-0-code": "S",
                "levels-0-gain": "1",
            },
            "name",
        ),
        (
            f"/collections/{c.slug}/members/",
            {"action": "add", "username": f"org{char}", "role": "assessor"},
            "username",
        ),
    ]
    for url, data, field in posts:
        assert_refused(client.post(url, data), field)
        # htmx requests too
        assert_refused(client.post(url, data, headers={"HX-Request": "true"}), field)
    assert snapshot() == before


@pytest.mark.parametrize("char", ["\x00", "\x7f"])
def test_query_parameters_and_field_names_with_control_characters_are_refused(world, client, char):
    c, q, _ = world
    assert_refused(client.get(f"/collections/{c.slug}/questions/", {"q": f"Kawa{char}"}), "q")
    assert_refused(client.get(f"/collections/{c.slug}/questions/", {"status": char}), "status")
    assert_refused(client.get(f"/questions/{q.pk}/judge/", {f"e{char}": "1"}), f"e{char}")
    assert_refused(client.post(f"/questions/{q.pk}/act/", {f"op{char}": "x"}), f"op{char}")
    # the login page, before anyone is logged in
    client.logout()
    assert_refused(
        client.post("/accounts/login/", {"username": f"org{char}", "password": "x"}), "username"
    )


def test_uploaded_files_are_left_to_their_parsers(world, client):
    c, _, _ = world
    url = f"/collections/{c.slug}/import/"
    # Django drops the non-printable characters of a file's name itself
    upload = SimpleUploadedFile("q\x00\x01.csv", b"question_id,question\nQ9,Why?\n")
    page = client.post(url, {"kind": "questions", "file": upload})
    assert page.status_code == 200 and "q.csv" in page.content.decode()
    # a NUL byte inside the file is the parser's to report (line and reason), not a 400
    upload = SimpleUploadedFile("q.csv", b"question_id,question\nQ9,Wh\x00y?\n")
    page = client.post(url, {"kind": "questions", "file": upload})
    assert page.status_code == 200
    assert "NUL" in page.content.decode()
    assert not Question.objects.filter(qid="Q9").exists()


def test_tab_newline_and_carriage_return_are_text(world, client):
    _, q, _ = world
    notes = "line one\r\n\tline two\nthree"
    r = client.post(f"/questions/{q.pk}/act/", {"op": "notes", "notes": notes})
    assert r.status_code == 302
    q.refresh_from_db()
    assert q.notes == notes.strip()
    # other characters (emoji, right-to-left marks) are not refused either; C1 controls
    # such as U+0085, U+2028, U+2029 and U+FEFF are (tests/security/test_one_text_rule.py)
    assert not CONTROL_CHARACTERS.search("\u200f\U0001f600é")
    assert CONTROL_CHARACTERS.search("\x85")
    r = client.get(f"/collections/{q.collection.slug}/questions/", {"q": "\u200fé"})
    assert r.status_code == 200 and "<h1>Questions</h1>" in r.content.decode()
    assert 'name="q" value="\u200fé"' in r.content.decode()  # the search, as it was typed


def test_a_refused_collection_field_shows_its_error_on_the_form(world, client):
    c, _, _ = world
    data = {
        "name": "L0",
        "slug": "l0",
        "matching_mode": "normalized",
        "max_output_size": 0,
        "levels-TOTAL_FORMS": "1",
        "levels-INITIAL_FORMS": "0",
        "levels-0-code": "S",
        "levels-0-label": "S",
        "levels-0-gain": "1",
    }
    r = client.post("/collections/new/", data)
    assert r.status_code == 200
    text = r.content.decode()
    assert "greater than or equal to 1" in text
    assert not Collection.objects.filter(slug="l0").exists()
    # too large for the database column: refused by the form, not a 500
    r = client.post(
        f"/collections/{c.slug}/edit/", data | {"slug": c.slug, "max_output_size": 40000}
    )
    assert r.status_code == 200
    assert "less than or equal to 32767" in r.content.decode()
    # a negative gain and a too long level label: their errors beside the fields
    r = client.post(
        "/collections/new/",
        data | {"max_output_size": 5, "levels-0-gain": "-1", "levels-0-label": "x" * 101},
    )
    text = r.content.decode()
    assert "greater than or equal to 0" in text
    assert "at most 100 characters" in text
    assert not Collection.objects.filter(slug="l0").exists()


def test_postgresql_refuses_nul_itself():
    """Why the middleware exists: PostgreSQL cannot store NUL in text (SQLite can)."""
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: set DATABASE_URL=postgres://...")
    c = make_collection()
    with pytest.raises((DataError, ValueError)), transaction.atomic():
        Question.objects.create(collection=c, qid="Q", text="a\x00b")


def test_a_cookie_with_a_control_character_is_ignored(world, client):
    """A session cookie holding a NUL byte (quoted cookies may spell it \\000) used to reach
    the session table: a DataError 500 on PostgreSQL on every page."""
    for value in ('"abcdefgh\\000ijkl"', "abcdefgh\x00ijkl", "abcdefgh\x1bijkl"):
        client.cookies["sessionid"] = value
        page = client.get("/accounts/login/")
        assert page.status_code == 200 and "<h1>Log in</h1>" in page.content.decode()
        # a login page of an anonymous visitor: the bad session is gone
        assert client.get("/queue/").status_code == 302
