"""The API's world: the demo collection, a token per role, another collection."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import caches
from django.test import Client

from api.services import api_token_create
from jobs.models import Job, JobStatus
from tests.factories import add_member, make_collection, make_question, make_run, make_user

# the roles of the API matrix; "anonymous" sends no token
ROLES = ("anonymous", "nonmember", "assessor", "participant", "other", "organizer", "staff")


class ApiClient:
    """A test client that sends ``Authorization: Bearer <token>`` (none when None)."""

    def __init__(self, token: str | None):
        self.client = Client()
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    def get(self, url: str, **params):
        return self.client.get(url, params, headers=self.headers)

    def post(self, url: str, data=None):
        return self.client.post(url, data or {}, headers=self.headers)


@pytest.fixture(autouse=True)
def _clear_caches():
    caches["scores"].clear()
    caches["default"].clear()  # the rate limit's counters


@pytest.fixture
def world(demo):
    User = get_user_model()
    users = {
        "nonmember": make_user(username="nonmember"),
        "assessor": User.objects.get(username="assessor1"),
        "participant": User.objects.get(username="participant"),
        "other": make_user(username="participant2"),
        "organizer": User.objects.get(username="organizer"),
        "staff": User.objects.get(username="admin"),
    }
    add_member(collection=demo, user=users["other"], role="participant")
    qids = list(demo.questions.order_by("id").values_list("qid", flat=True))
    other_run = make_run(
        collection=demo,
        owner=users["other"],
        name="run-of-other",
        answers={qids[0]: ["Paul McCartney"], qids[1]: ["nothing"]},
    )
    tokens = {
        role: api_token_create(user=user, name=f"{role} script").secret
        for role, user in users.items()
    }
    tokens["anonymous"] = None
    elsewhere = make_collection(
        slug="elsewhere", name="Elsewhere collection", open_for_submissions=True
    )
    outsider = make_user(username="elsewhere-participant")
    add_member(collection=elsewhere, user=outsider, role="participant")
    make_question(collection=elsewhere, qid="E1", text="Elsewhere?", synsets=[[("yes", "S")]])
    erun = make_run(
        collection=elsewhere, owner=outsider, name="run-elsewhere", answers={"E1": ["yes"]}
    )
    af = demo.runs.get(name="AF")
    # the participant's upload of AF, as its job recorded it
    job = Job.objects.create(
        kind="run-upload",
        label="Upload of run 'AF'",
        func="evaluation.run_jobs.run_upload",
        user=users["participant"],
        collection=demo,
        status=JobStatus.SUCCEEDED,
        phase="Scoring the run",
        done=1,
        total=1,
        unit="run",
        message="Run 'AF' uploaded: 40 answers.",
        result={"message": "Run 'AF' uploaded: 40 answers.", "run_id": af.pk, "answers": 40},
    )
    return {
        "collection": demo,
        "users": users,
        "tokens": tokens,
        "af": af,
        "job": job,
        "noaf": demo.runs.get(name="noAF"),
        "other_run": other_run,
        "elsewhere": elsewhere,
        "elsewhere_run": erun,
    }


@pytest.fixture
def as_role(world):
    """``as_role("participant")``: an API client with that role's token."""
    return lambda role: ApiClient(world["tokens"][role])
