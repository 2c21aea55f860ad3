"""The import preview lives in its own table, not the session: the
session row stays small, the confirm reads the pending file from the table, and a token
that expired, belongs to someone else or was already confirmed is refused clearly."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from annotate.imports import PENDING_TTL
from annotate.models import PendingImport, Question
from tests.factories import add_member, make_collection, make_user

pytestmark = pytest.mark.django_db


def _questions_file(n: int) -> bytes:
    return (
        "question_id,question\n"
        + "".join(
            f"Q{i},What is the answer to question number {i} of this long file?\n" for i in range(n)
        )
    ).encode()


def _preview(client, slug, data, name="q.csv"):
    r = client.post(
        f"/collections/{slug}/import/",
        {"kind": "questions", "file": SimpleUploadedFile(name, data)},
    )
    assert r.status_code == 200
    html = r.content.decode()
    assert "Confirm the import" in html, html
    return html.split('name="token" value="')[1].split('"')[0]


def _session_size(client) -> int:
    return len(Session.objects.get(session_key=client.session.session_key).session_data)


def test_a_large_preview_stays_out_of_the_session_and_confirms_from_the_table(client):
    c = make_collection(slug="big")
    user = make_user(staff=True)
    client.force_login(user)
    data = _questions_file(40_000)
    assert len(data) > 2_500_000
    before = _session_size(client)
    token = _preview(client, "big", data)
    assert _session_size(client) < 1_000 and _session_size(client) <= before + 100
    pending = PendingImport.objects.get(token=token)
    assert (pending.collection, pending.user, pending.kind) == (c, user, "questions")
    assert bytes(pending.data) == data
    r = client.post("/collections/big/import/confirm/", {"token": token})
    assert r.status_code == 302 and r["Location"] == "/collections/big/"
    assert Question.objects.filter(collection=c).count() == 40_000
    assert not PendingImport.objects.exists()
    # a confirmed token cannot be replayed
    r = client.post("/collections/big/import/confirm/", {"token": token}, follow=True)
    assert "no longer pending" in r.content.decode()
    assert Question.objects.filter(collection=c).count() == 40_000


def test_an_expired_token_is_refused_and_cleaned_up(client):
    c = make_collection(slug="exp")
    client.force_login(make_user(staff=True))
    token = _preview(client, "exp", b"question_id,question\nQ1,Who?\n")
    PendingImport.objects.filter(token=token).update(
        created_at=PendingImport.objects.get(token=token).created_at
        - PENDING_TTL
        - timedelta(seconds=1)
    )
    r = client.post("/collections/exp/import/confirm/", {"token": token}, follow=True)
    html = r.content.decode()
    assert "That preview expired" in html and "upload the file again" in html
    assert not c.questions.exists() and not PendingImport.objects.exists()


def test_someone_elses_token_is_refused(client):
    c = make_collection(slug="mine")
    other_c = make_collection(slug="other")
    alice, bob = make_user(), make_user()
    for coll in (c, other_c):
        add_member(collection=coll, user=alice, role="organizer")
        add_member(collection=coll, user=bob, role="organizer")
    client.force_login(alice)
    token = _preview(client, "mine", b"question_id,question\nQ1,Who?\n")
    client.force_login(bob)
    r = client.post("/collections/mine/import/confirm/", {"token": token}, follow=True)
    assert "That preview was made by another user" in r.content.decode()
    client.force_login(alice)
    r = client.post("/collections/other/import/confirm/", {"token": token}, follow=True)
    assert "That preview is for another collection" in r.content.decode()
    assert not c.questions.exists() and not other_c.questions.exists()
    assert PendingImport.objects.filter(token=token).exists()  # still alice's to confirm
    r = client.post("/collections/mine/import/confirm/", {"token": token})
    assert r.status_code == 302 and c.questions.count() == 1


def test_expired_rows_go_on_every_preview_and_by_the_command(client):
    c = make_collection(slug="gc")
    user = make_user(staff=True)
    old = PendingImport.objects.create(
        token="old", collection=c, user=user, kind="questions", filename="o.csv", data=b"x"
    )
    PendingImport.objects.filter(pk=old.pk).update(created_at=old.created_at - 2 * PENDING_TTL)
    client.force_login(user)
    first = _preview(client, "gc", b"question_id,question\nQ1,Who?\n")
    assert list(PendingImport.objects.values_list("token", flat=True)) == [first]
    # a newer preview of the same user and collection replaces the older one
    second = _preview(client, "gc", b"question_id,question\nQ2,Who?\n")
    assert list(PendingImport.objects.values_list("token", flat=True)) == [second]
    PendingImport.objects.update(created_at=old.created_at - 2 * PENDING_TTL)
    call_command("clear_pending_imports")
    assert not PendingImport.objects.exists()
