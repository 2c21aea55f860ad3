"""The role matrix of the REST API: every endpoint x every role -> the expected status.

Like tests/test_role_matrix.py for the pages (which leaves /api/ to this file): each
request runs in a savepoint that is rolled back, and an endpoint that is not a write must
not change the database, whoever asks.  A new endpoint without a row here fails
``test_the_table_covers_every_api_endpoint``."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.test import Client
from django.urls import get_resolver

from tests.test_login_required import walk
from tests.test_role_matrix import snapshot

from .conftest import ROLES, ApiClient

pytestmark = pytest.mark.django_db

# (method, URL with {slug} {run} {other} placeholders) and the status per role:
#                 anonymous nonmember assessor participant other organizer staff
# "other" is a second participant: the participant's runs are not theirs to see (the
# leaderboard is not published).  Assessors judge blind: no runs, no scores.
API_EXPECTED: dict[str, tuple[str, str, str]] = {
    "api:me": ("GET", "/api/me", "401 200 200 200 200 200 200"),
    "api:collection-list": ("GET", "/api/collections", "401 200 200 200 200 200 200"),
    "api:collection-detail": ("GET", "/api/collections/{slug}", "401 403 200 200 200 200 200"),
    # the same endpoint serves the upload (POST) and the list (GET)
    "api:run-list": ("GET", "/api/collections/{slug}/runs", "401 403 403 200 200 200 200"),
    # an upload is a job: 202 with it (a small one has ended already)
    "api:run-upload": ("POST", "/api/collections/{slug}/runs", "401 403 403 202 202 202 202"),
    # the participant's job: only they (and a superuser, as on the jobs pages) see it
    "api:job-detail": ("GET", "/api/jobs/{job}", "401 404 404 200 404 404 200"),
    "api:question-list": (
        "GET",
        "/api/collections/{slug}/questions",
        "401 403 403 403 403 200 200",
    ),
    "api:judgments-export": (
        "GET",
        "/api/collections/{slug}/judgments",
        "401 403 403 403 403 200 200",
    ),
    "api:run-detail": ("GET", "/api/collections/{slug}/runs/{run}", "401 403 403 200 403 200 200"),
    # the participant owns AF and the demo is open for submissions
    "api:run-withdraw": (
        "DELETE",
        "/api/collections/{slug}/runs/{run}",
        "401 403 403 200 403 200 200",
    ),
    "api:run-scores": (
        "GET",
        "/api/collections/{slug}/runs/{run}/scores",
        "401 403 403 200 403 200 200",
    ),
    "api:compare": (
        "GET",
        "/api/collections/{slug}/compare?a={other}&b={run}",
        "401 403 403 200 403 200 200",
    ),
}
WRITES = {"api:run-upload", "api:run-withdraw"}
# What a 2xx answer must hold, whoever asks (the right answer, not an empty list).
API_TEXT = {
    "api:me": '"username"',
    "api:collection-list": "[",  # nonmember: []
    "api:collection-detail": '"levels"',
    "api:run-list": '"sha256"',
    "api:run-upload": '"name": "matrix-',
    "api:job-detail": '"status": "succeeded"',
    "api:question-list": '"question_id": "EX1-BEATLES"',
    "api:judgments-export": '"synset_id"',
    "api:run-detail": '"name": "AF"',
    "api:run-withdraw": '"withdrawn_by"',
    "api:run-scores": '"q_measure"',
    "api:compare": '"randomization_p"',
}
# Patterns of /api/ that are no token endpoints: the schema and the docs page (a session or
# a token), the root and every other path (JSON 404, test_unknown_api_paths_answer_json_404)
API_PAGES = {"api:openapi-json", "api:openapi-view", "api:api-root", "api:not-found"}
RUN_FILE = b"EX1-BEATLES\t1\tJohn Lennon\nEX2-DVD\t1\tDigital Versatile Disk\n"


def url_for(template: str, w: dict) -> str:
    return template.format(
        slug=w["collection"].slug, run=w["af"].pk, other=w["noaf"].pk, job=w["job"].pk
    )


def call(w: dict, role: str, method: str, url: str):
    client = ApiClient(w["tokens"][role])
    if method == "GET":
        return client.get(url)
    if method == "DELETE":
        return client.client.delete(url, headers=client.headers)
    return client.post(
        url, {"name": f"matrix-{role}", "file": SimpleUploadedFile("run.tsv", RUN_FILE)}
    )


def test_the_table_covers_every_api_endpoint():
    names = {name for name, route in walk(get_resolver().url_patterns) if name.startswith("api:")}
    missing = sorted(names - API_EXPECTED.keys() - API_PAGES)
    assert not missing, f"API endpoints missing from API_EXPECTED: {missing}"
    assert not (API_EXPECTED.keys() - names), "API_EXPECTED names endpoints that do not exist"
    for _, _, statuses in API_EXPECTED.values():
        assert len(statuses.split()) == len(ROLES)
    assert API_TEXT.keys() == API_EXPECTED.keys()


@pytest.mark.parametrize("key", sorted(API_EXPECTED))
def test_api_role_matrix(world, key):
    method, template, statuses = API_EXPECTED[key]
    url = url_for(template, world)
    problems = []
    for role, want in zip(ROLES, statuses.split(), strict=True):
        with transaction.atomic():
            before = snapshot()
            response = call(world, role, method, url)
            wrote = snapshot() != before
            transaction.set_rollback(True)
        got = str(response.status_code)
        if got != want:
            problems.append(
                f"{method} {url} as {role}: expected {want}, got {got} {response.content[:200]!r}"
            )
        if got.startswith("2") and API_TEXT[key] not in response.content.decode():
            problems.append(f"{method} {url} as {role}: the answer lacks {API_TEXT[key]!r}")
        if response["Content-Type"].split(";")[0] not in ("application/json", "text/csv"):
            problems.append(f"{method} {url} as {role}: answered {response['Content-Type']}")
        if wrote and not (key in WRITES and got.startswith("2")):
            problems.append(f"{method} {url} as {role}: changed the database")
        if key in WRITES and got.startswith("2") and not wrote:
            problems.append(f"{method} {url} as {role}: the upload stored nothing")
        if got in ("401", "403", "404"):
            # a refusal names nothing of the collection
            body = response.content.decode()
            for secret in ("AF", "noAF", "run-of-other", world["collection"].name):
                assert f'"{secret}"' not in body and secret not in body.replace(
                    "Answer Formulator", ""
                ), (role, url, body)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("key", sorted(API_EXPECTED))
def test_other_methods_are_405_for_everyone(world, key):
    _, template, _ = API_EXPECTED[key]
    served = {m for m, t, _ in API_EXPECTED.values() if t.split("?")[0] == template.split("?")[0]}
    url = url_for(template, world)
    for other in {"GET", "POST", "PUT", "DELETE"} - served:
        for role in ("anonymous", "staff"):
            client = ApiClient(world["tokens"][role])
            response = client.client.generic(other, url, headers=client.headers)
            assert response.status_code == 405, (other, url, role, response.status_code)


def test_api_of_another_collection_is_refused_to_every_role_of_demo(world):
    """Members of the demo collection get 403 from every endpoint of another collection,
    and its runs and name never appear in what they can list."""
    slug, erun = world["elsewhere"].slug, world["elsewhere_run"]
    urls = [
        f"/api/collections/{slug}",
        f"/api/collections/{slug}/questions",
        f"/api/collections/{slug}/judgments",
        f"/api/collections/{slug}/runs",
        f"/api/collections/{slug}/runs/{erun.pk}",
        f"/api/collections/{slug}/runs/{erun.pk}/scores",
        f"/api/collections/{slug}/compare?a={erun.pk}&b={erun.pk}",
    ]
    for role in ("nonmember", "assessor", "participant", "other", "organizer"):
        client = ApiClient(world["tokens"][role])
        for url in urls:
            response = client.get(url)
            assert response.status_code == 403, (role, url, response.status_code)
            assert "run-elsewhere" not in response.content.decode()
            assert "Elsewhere collection" not in response.content.decode()
        response = client.post(
            f"/api/collections/{slug}/runs",
            {"name": "x", "file": SimpleUploadedFile("r.tsv", b"E1\t1\tyes\n")},
        )
        assert response.status_code == 403
        listed = client.get("/api/collections").content.decode()
        assert slug not in listed and "Elsewhere collection" not in listed
    assert world["elsewhere"].runs.count() == 1
    # a demo run asked for through the other collection's address is not found there
    staff = ApiClient(world["tokens"]["staff"])
    assert staff.get(f"/api/collections/{slug}/runs/{world['af'].pk}").status_code == 404
    assert staff.get("/api/collections/no-such-collection").status_code == 404


def test_the_docs_and_the_schema_need_a_login_or_a_token(world):
    """/api/docs is for a logged-in browser (others are sent to the login page);
    /api/openapi.json also for a token (401 without); the root only answers 404 (JSON)."""
    anonymous = Client()
    response = anonymous.get("/api/docs")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert anonymous.get("/api/openapi.json").status_code == 401
    assert anonymous.get("/api/").status_code == 404
    bad = ApiClient("qas_not-a-token")
    assert bad.get("/api/openapi.json").status_code == 401
    token = ApiClient(world["tokens"]["participant"])
    schema = token.get("/api/openapi.json")
    assert schema.status_code == 200 and "/api/collections" in schema.json()["paths"]
    assert token.get("/api/docs").status_code == 200
    client = Client()
    client.force_login(world["users"]["assessor"])
    assert client.get("/api/docs").status_code == 200
    assert client.get("/api/openapi.json").status_code == 200
    assert client.get("/api/").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/api/",
        "/api/nope",
        "/api/collections/demo/nope",
        "/api/collections/demo/runs/1/nope",
        "/api/docs/",
        "/api/me/",
    ],
)
def test_unknown_api_paths_answer_json_404(world, path):
    """A path under /api/ that is no endpoint answers like the endpoints' 404, with or
    without a token, for any method (no login page, no HTML, no CSRF refusal)."""
    token = {"Authorization": f"Bearer {world['tokens']['participant']}"}
    for headers in ({}, token):
        for method in ("get", "post", "delete"):
            response = getattr(Client(), method)(path, headers=headers)
            assert response.status_code == 404, (path, method, response.status_code)
            assert response["Content-Type"].startswith("application/json")
            assert response.json() == {"detail": "Not found"}
    # the docs and the schema are still there
    browser = Client()
    browser.force_login(world["users"]["participant"])
    assert browser.get("/api/docs").status_code == 200
    assert browser.get("/api/openapi.json").status_code == 200
    assert "swagger" in browser.get("/api/docs").content.decode().lower()
