"""evaluation/access.py: who may submit a run, written once and enforced by the service
(``services.run_import``) whoever calls it: the upload page, the API and ``manage.py
import_run`` refuse a participant's run while the collection is closed, an organizer's
goes in at any time, a non-member's or an assessor's never."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError

from api.services import api_token_create
from evaluation import access, services
from evaluation.models import Run
from tests.api.conftest import ApiClient
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db
RUN = b"Q1\t1\tParis\n"


@pytest.fixture
def closed():
    """A collection closed for submissions, with one member of each role."""
    c = make_collection(slug="closed", open_for_submissions=False)
    make_question(collection=c, qid="Q1")
    for role in ("organizer", "participant", "assessor"):
        add_member(collection=c, user=make_user(username=role), role=role)
    make_user(username="nonmember")
    return c


def user(name):
    return get_user_model().objects.get(username=name)


def submit(collection, owner, name="r"):
    return services.run_import(
        collection=collection, owner=owner, name=name, data=RUN, filename="r.tsv"
    )


@pytest.mark.parametrize(
    ("who", "open_", "allowed"),
    [
        ("organizer", False, True),
        ("participant", False, False),
        ("participant", True, True),
        ("assessor", True, False),
        ("nonmember", True, False),
    ],
)
def test_the_service_enforces_who_may_submit(closed, who, open_, allowed):
    closed.open_for_submissions = open_
    closed.save()
    owner = user(who)
    assert access.may_submit(owner, closed) is allowed
    if allowed:
        assert submit(closed, owner).answers.count() == 1
        return
    with pytest.raises(PermissionDenied) as refused:
        submit(closed, owner)
    assert str(refused.value) == (
        access.NOT_OPEN if who == "participant" else access.NOT_A_SUBMITTER
    )
    assert not Run.objects.exists()


def test_the_upload_page_refuses_a_participant_of_a_closed_collection(client, closed):
    client.force_login(user("participant"))
    upload = {"name": "r", "file": SimpleUploadedFile("r.tsv", RUN)}
    assert client.post("/collections/closed/runs/upload/", upload).status_code == 403
    assert not Run.objects.exists()
    client.force_login(user("organizer"))
    upload = {"name": "r", "file": SimpleUploadedFile("r.tsv", RUN)}
    assert client.post("/collections/closed/runs/upload/", upload).status_code == 302
    assert Run.objects.get().owner == user("organizer")


def test_the_api_refuses_a_participant_of_a_closed_collection(closed):
    token = api_token_create(user=user("participant"), name="ci").secret
    response = ApiClient(token).post(
        "/api/collections/closed/runs", {"name": "r", "file": SimpleUploadedFile("r.tsv", RUN)}
    )
    assert response.status_code == 403
    assert response.json() == {"detail": access.NOT_OPEN}
    assert not Run.objects.exists()


def test_the_command_line_applies_the_rule_to_the_owner_it_names(closed, tmp_path):
    path = tmp_path / "r.tsv"
    path.write_bytes(RUN)

    def import_run(owner):
        call_command(
            "import_run",
            str(path),
            "--collection",
            "closed",
            "--owner",
            owner,
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )

    with pytest.raises(CommandError, match="participant: This collection is not open"):
        import_run("participant")
    assert not Run.objects.exists()
    import_run("organizer")  # an organizer's run goes in while the collection is closed
    assert Run.objects.get().owner == user("organizer")
