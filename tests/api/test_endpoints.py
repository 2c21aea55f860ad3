"""Every API endpoint: what it answers, and that it gives the figures of the pages."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotate.models import Collection
from api.services import api_token_create
from evaluation.metrics.csvio import read_csv, read_records
from evaluation.models import Run, RunAnswer
from tests.factories import make_user

from .conftest import ApiClient

pytestmark = pytest.mark.django_db


def page_client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_me(as_role):
    assert as_role("staff").get("/api/me").json() == {"username": "admin", "staff": True}


def test_me_counts_a_superuser_as_staff_like_the_pages():
    user = make_user(username="root")
    user.is_superuser = True  # not is_staff
    user.save()
    secret = api_token_create(user=user, name="t").secret
    assert ApiClient(secret).get("/api/me").json() == {"username": "root", "staff": True}


def test_collections_list_my_role(world, as_role):
    got = as_role("participant").get("/api/collections").json()
    assert [c["slug"] for c in got] == ["demo"]
    demo = got[0]
    assert demo["role"] == "participant" and demo["questions"] == 13
    assert [lv["code"] for lv in demo["levels"]] == ["S", "A", "B"]
    assert demo["open_for_submissions"] is True and demo["max_output_size"] == 5
    staff = {c["slug"]: c["role"] for c in as_role("staff").get("/api/collections").json()}
    assert staff == {"demo": "organizer", "elsewhere": "organizer"}
    assert as_role("nonmember").get("/api/collections").json() == []
    detail = as_role("assessor").get("/api/collections/demo").json()
    assert detail["role"] == "assessor" and detail["slug"] == "demo"


def test_questions_for_organizers(world, as_role):
    got = as_role("organizer").get("/api/collections/demo/questions").json()
    assert len(got) == 13
    first = got[0]
    assert first["question_id"] == "EX1-BEATLES" and first["synsets"] == 4
    assert set(first) == {
        "question_id",
        "text",
        "status",
        "synsets",
        "strings",
        "unjudged",
        "assessors",
    }
    done = as_role("organizer").get("/api/collections/demo/questions", status="todo").json()
    assert [q["question_id"] for q in done] == ["SNOW-COUNTRY"]


def test_runs_listed_as_the_run_list_page_shows_them(world, as_role):
    mine = as_role("participant").get("/api/collections/demo/runs").json()
    assert [r["name"] for r in mine] == ["AF", "noAF"]
    assert [r["name"] for r in as_role("other").get("/api/collections/demo/runs").json()] == [
        "run-of-other"
    ]
    everything = as_role("organizer").get("/api/collections/demo/runs").json()
    assert [r["name"] for r in everything] == ["AF", "noAF", "run-of-other"]
    Collection.objects.filter(pk=world["collection"].pk).update(leaderboard_published=True)
    published = as_role("other").get("/api/collections/demo/runs").json()
    assert [r["name"] for r in published] == ["AF", "noAF", "run-of-other"]
    one = as_role("participant").get(f"/api/collections/demo/runs/{world['af'].pk}").json()
    assert one["name"] == "AF" and one["owner"] == "participant" and len(one["sha256"]) == 64


# -- upload -----------------------------------------------------------------------------
def upload(client, name: str, content: bytes, filename: str = "run.tsv", **extra):
    return client.post(
        "/api/collections/demo/runs",
        {"name": name, "file": SimpleUploadedFile(filename, content), **extra},
    )


def test_upload_stores_the_run(world, as_role):
    response = upload(
        as_role("participant"),
        "api-run",
        b"EX1-BEATLES\t1\tJohn Lennon\nEX1-BEATLES\t2\tRingo\nEX2-DVD\t1\tDigital Video Disk\n",
        description="from a script",
    )
    assert response.status_code == 202, response.content
    job = response.json()
    # a small file is read in the request: the job has ended, the run is in its result
    assert job["status"] == "succeeded" and job["job"] == f"/api/jobs/{job['id']}"
    assert response["Location"] == job["job"]
    assert job["message"] == "Run 'api-run' uploaded: 3 answers."
    run = Run.objects.get(pk=job["result"]["run"]["id"])
    assert job["result"]["run"]["name"] == "api-run" and job["result"]["answers"] == 3
    assert run.name == "api-run" and run.owner.username == "participant"
    assert run.description == "from a script" and run.format == "qa"
    assert run.answers.count() == 3
    scores = (
        as_role("participant")
        .get(f"/api/collections/demo/runs/{run.pk}/scores", metric="rr")
        .json()
    )
    assert scores["means"]["rr"] == round(2 / 12, 6)


def test_upload_trec_format(world, as_role):
    response = upload(
        as_role("organizer"),
        "trec-run",
        b"EX1-BEATLES Q0 John_Lennon 1 9.5 trec-run\n",
        filename="r.trec",
        format="trec",
    )
    assert response.status_code == 202, response.content
    assert response.json()["result"]["run"]["format"] == "trec"


BAD_FILE = (
    b"EX1-BEATLES\t1\tJohn Lennon\n"  # line 1 fine
    b"NO-SUCH-QUESTION\t1\tx\n"  # line 2 unknown question
    b"EX2-DVD\tfirst\tDigital Video Disk\n"  # line 3 bad rank
    + b"".join(b"TDL-1\t%d\tanswer %d\n" % (i, i) for i in range(1, 7))
)  # 9: 6th


def test_a_bad_file_lists_every_problem_with_its_line_and_stores_nothing(world, as_role):
    before = (Run.objects.count(), RunAnswer.objects.count())
    response = upload(as_role("participant"), "bad-run", BAD_FILE)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "failed" and body["result"] is None
    assert body["message"].startswith("The run was not stored: 3 problem(s)")
    lines = [(e["line"], e["message"]) for e in body["errors"]]
    assert [line for line, _ in lines] == [2, 3, 9], lines
    assert "'NO-SUCH-QUESTION' is not in this collection" in lines[0][1]
    assert "more than 5 answers" in lines[2][1]
    assert all(e["file"] == "run.tsv" for e in body["errors"])
    assert (Run.objects.count(), RunAnswer.objects.count()) == before


def test_the_upload_page_and_the_api_give_the_same_errors(world, as_role):
    page = page_client(world["users"]["participant"]).post(
        "/collections/demo/runs/upload/",
        {"name": "bad-run", "format": "", "file": SimpleUploadedFile("run.tsv", BAD_FILE)},
    )
    api = upload(as_role("participant"), "bad-run", BAD_FILE).json()["errors"]
    html = page.content.decode()
    for e in api:
        assert f"line {e['line']}: " in html
        assert e["message"].replace("'", "&#x27;") in html


def test_upload_refusals(world, as_role):
    client = as_role("participant")
    taken = upload(client, "AF", b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert taken.status_code == 202 and taken.json()["status"] == "failed"
    assert "already exists" in taken.json()["errors"][0]["message"]
    control = upload(client, "bad\x07name", b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert control.status_code == 400
    empty = upload(client, "empty", b"")
    assert empty.status_code == 400 and empty.json()["errors"]
    missing = client.post("/api/collections/demo/runs", {"name": "no-file"})
    assert missing.status_code == 400
    # closed for submissions: participants are refused, organizers may still upload
    Collection.objects.filter(pk=world["collection"].pk).update(open_for_submissions=False)
    closed = upload(client, "late", b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert closed.status_code == 403
    late = upload(as_role("organizer"), "late", b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert late.status_code == 202 and late.json()["status"] == "succeeded"
    assert not Run.objects.filter(name__in=["empty", "no-file"]).exists()


# -- jobs -------------------------------------------------------------------------------
DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


def test_a_large_upload_is_queued_and_its_job_followed_to_its_run(
    world, as_role, settings, monkeypatch
):
    """A file too large for the request is queued (202, ``queued``); ``GET /api/jobs/{id}``
    follows it while a worker runs it, and gives the run once it is stored."""
    from evaluation import run_jobs
    from jobs.runner import run_job

    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(run_jobs, "RUN_INLINE_LINES", 1)
    client = as_role("participant")
    response = upload(
        client, "queued-run", b"EX1-BEATLES\t1\tJohn Lennon\nEX2-DVD\t1\tDigital Video Disk\n"
    )
    assert response.status_code == 202, response.content
    queued = response.json()
    assert queued["status"] == "queued" and queued["result"] is None
    assert queued["kind"] == "run-upload" and queued["errors"] == []
    assert not Run.objects.filter(name="queued-run").exists()
    assert client.get(queued["job"]).json()["status"] == "queued"

    run_job(queued["id"])  # what the worker does
    done = client.get(queued["job"])
    assert done.status_code == 200
    job = done.json()
    assert (
        job["status"] == "succeeded" and job["message"] == "Run 'queued-run' uploaded: 2 answers."
    )
    assert (job["phase"], job["done"], job["total"], job["unit"]) == (
        "Scoring the run",
        1,
        1,
        "run",
    )
    run = Run.objects.get(name="queued-run")
    assert job["result"]["run"]["id"] == run.pk and job["result"]["run"]["owner"] == "participant"
    assert set(job["result"]["means"]) >= {"q_measure", "rr"}
    assert "url" not in job["result"]  # the page's link is for the pages


def test_a_failed_jobs_errors_keep_their_lines(world, as_role, settings, monkeypatch):
    from evaluation import run_jobs
    from jobs.runner import run_job

    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(run_jobs, "RUN_INLINE_LINES", 1)
    client = as_role("participant")
    queued = upload(client, "bad-run", BAD_FILE).json()
    run_job(queued["id"])
    job = client.get(queued["job"]).json()
    assert job["status"] == "failed" and job["result"] is None
    assert [(e["file"], e["line"]) for e in job["errors"]] == [
        ("run.tsv", 2),
        ("run.tsv", 3),
        ("run.tsv", 9),
    ]
    assert not Run.objects.filter(name="bad-run").exists()


def test_a_job_is_seen_by_its_owner_only(world, as_role):
    """Another participant, the collection's organizer and a non-member get the API's 404
    for a participant's job (its label names the run); no token, 401."""
    job = upload(as_role("participant"), "mine", b"EX1-BEATLES\t1\tJohn Lennon\n").json()
    assert as_role("participant").get(job["job"]).status_code == 200
    for role in ("other", "organizer", "nonmember", "assessor"):
        response = as_role(role).get(job["job"])
        assert response.status_code == 404, role
        assert response.json() == {"detail": "Not found"}
    assert as_role("anonymous").get(job["job"]).status_code == 401
    assert as_role("participant").get("/api/jobs/999999").status_code == 404


def test_an_upload_beside_a_conflicting_job_is_409(world, as_role):
    import os
    import socket

    from jobs.models import Conflict, Job, JobStatus

    Job.objects.create(
        kind="matching-mode",
        label="Matching mode change",
        func="x",
        user=world["users"]["organizer"],
        collection=world["collection"],
        conflict=Conflict.EXCLUSIVE,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    response = upload(as_role("participant"), "blocked", b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert response.status_code == 409
    assert "Matching mode change" in response.json()["detail"]
    assert not Run.objects.filter(name="blocked").exists()


# -- scores -----------------------------------------------------------------------------
def csv_figures(text: str) -> dict[tuple[str, str], float]:
    _, header, rows = read_csv(text)
    metrics = header[4:]
    return {(r[1], m): float(v) for r in rows for m, v in zip(metrics, r[4:], strict=True)}


@pytest.mark.parametrize(
    "params",
    [
        {},
        {
            "metric": ["q_measure", "rr", "ap", "rbp", "ndcg@3"],
            "gains": "1:1:1",
            "beta": 2,
            "rbp_p": 0.8,
        },
        {"metric": ["q_measure"], "gains": "S=4,A=2,B=1"},
        {"metric": ["q_measure"], "gains": "adjusted"},
    ],
)
def test_run_scores_match_the_score_download(world, as_role, params):
    run = world["af"]
    api = (
        as_role("participant")
        .get(f"/api/collections/demo/runs/{run.pk}/scores", **params, precision="full")
        .json()
    )
    page = page_client(world["users"]["participant"]).get(
        f"/collections/demo/runs/{run.pk}/scores.csv",
        {
            **params,
            **(
                {"gains": "custom", "custom_gains": params["gains"]}
                if params.get("gains") not in (None, "1:1:1", "adjusted")
                else {}
            ),
        },
    )
    figures = csv_figures(page.content.decode())
    metrics = api["config"]["metrics"]
    assert api["judged_questions"] == 12
    for q in api["questions"]:
        for m in metrics:
            assert q["scores"][m] == pytest.approx(figures[(q["question_id"], m)], abs=1e-6)
    for m in metrics:
        assert api["means"][m] == pytest.approx(figures[("all", m)], abs=1e-6)
    beatles = next(q for q in api["questions"] if q["question_id"] == "EX1-BEATLES")
    assert (beatles["L"], beatles["R"]) == (4, 4)


def test_full_precision_is_an_option(world, as_role):
    url = f"/api/collections/demo/runs/{world['noaf'].pk}/scores"
    client = as_role("participant")
    readable = client.get(url, metric="q_measure").json()
    full = client.get(url, metric="q_measure", precision="full").json()
    assert readable["config"]["precision"] == "readable"
    r, f = readable["means"]["q_measure"], full["means"]["q_measure"]
    assert r == round(f, 6) and r != f  # a mean of 12 questions has more than 6 decimals
    assert len(repr(f)) > 10
    # the raw text: JSON numbers round-trip the double exactly
    assert (
        json.loads(client.get(url, metric="q_measure", precision="full").content)["means"][
            "q_measure"
        ]
        == f
    )


@pytest.mark.parametrize(
    "params",
    [
        {"metric": "no_such_metric"},
        {"gains": "S=1"},
        {"gains": "X=1,Y=2,Z=3"},
        {"beta": -1},
        {"rbp_p": 1.5},
        {"rbp_p": 1},
        {"gains": "S=4,A=2,B=1,C=0"},  # the demo has no level C
        {"beta": "abc"},
        {"precision": "max"},
        {"metric": [f"p@{k}" for k in range(1, 40)]},  # more than MAX_METRICS at once
    ],
)
def test_invalid_score_parameters_are_422(world, as_role, params):
    response = as_role("organizer").get(
        f"/api/collections/demo/runs/{world['af'].pk}/scores", **params
    )
    assert response.status_code == 422, (params, response.content)
    assert response.json()["detail"]


def test_scores_of_runs_not_visible(world, as_role):
    client = as_role("participant")
    theirs = world["other_run"]
    assert client.get(f"/api/collections/demo/runs/{theirs.pk}/scores").status_code == 403
    assert client.get("/api/collections/demo/runs/999999/scores").status_code == 404
    assert (
        as_role("assessor").get(f"/api/collections/demo/runs/{world['af'].pk}/scores").status_code
        == 403
    )


# -- compare ----------------------------------------------------------------------------
def test_compare_gives_the_figures_of_the_compare_download(world, as_role):
    a, b = world["noaf"], world["af"]
    api = (
        as_role("participant")
        .get("/api/collections/demo/compare", a=a.pk, b=b.pk, precision="full")
        .json()
    )
    page = page_client(world["users"]["participant"]).get(
        "/collections/demo/compare.csv", {"a": a.pk, "b": b.pk}
    )
    _, header, rows = read_csv(page.content.decode())
    means = {r[1]: r for r in rows if r[0] == "mean"}
    assert [t["metric"] for t in api["tests"]] == ["q_measure", "rr"]
    for t in api["tests"]:
        row = dict(zip(header, means[t["metric"]], strict=True))
        for k in (
            "mean_a",
            "mean_b",
            "sign_p",
            "wilcoxon_p",
            "t_p",
            "randomization_p",
            "effect_size",
        ):
            want = row["a" if k == "mean_a" else "b" if k == "mean_b" else k]
            assert t[k] == pytest.approx(float(want), abs=1e-6), k
        assert (t["up"], t["down"], t["tied"]) == (
            int(row["up"]),
            int(row["down"]),
            int(row["tied"]),
        )
        assert t["mean_diff"] == pytest.approx(float(row["b_minus_a"]), abs=1e-6)
    per_q = {r[1]: r for r in rows if r[0] == "question"}
    assert len(api["questions"]) == 12
    for q in api["questions"]:
        for m in ("q_measure", "rr"):
            row = per_q[f"{m}:{q['question_id']}"]
            assert q["a"][m] == pytest.approx(float(row[2]), abs=1e-6)
            assert q["b"][m] == pytest.approx(float(row[3]), abs=1e-6)
            assert q["b_minus_a"][m] == pytest.approx(float(row[4]), abs=1e-6)


def test_compare_lists_where_q_measure_and_rr_disagree_as_the_page_does(world, as_role):
    a, b = world["noaf"], world["af"]
    api = as_role("participant").get("/api/collections/demo/compare", a=a.pk, b=b.pk).json()
    page = page_client(world["users"]["participant"]).get(
        "/collections/demo/compare/", {"a": a.pk, "b": b.pk}
    )
    shown = [d["qid"] for d in page.context["disagree"]]
    assert api["disagree"]["metrics"] == ["q_measure", "rr"]
    assert api["disagree"]["questions"] == shown
    assert len(shown) == page.context["disagree_total"] >= 1
    diffs = {q["question_id"]: q["b_minus_a"] for q in api["questions"]}
    for q, d in diffs.items():
        assert (q in shown) == ((d["q_measure"] == 0) != (d["rr"] == 0)), q
    one = as_role("participant").get("/api/collections/demo/compare", a=a.pk, b=b.pk, metric="ap")
    assert one.json()["disagree"] == {"metrics": ["ap"], "questions": []}
    schema = as_role("participant").get("/api/openapi.json").json()
    assert "disagree" in schema["components"]["schemas"]["ComparisonOut"]["required"]


def test_compare_refusals(world, as_role):
    client = as_role("participant")
    af, theirs = world["af"], world["other_run"]
    assert client.get("/api/collections/demo/compare", a=af.pk, b=theirs.pk).status_code == 403
    assert client.get("/api/collections/demo/compare", a=af.pk, b=999999).status_code == 404
    same = client.get("/api/collections/demo/compare", a=af.pk, b=af.pk)
    assert same.status_code == 422
    assert client.get("/api/collections/demo/compare", a=af.pk).status_code == 422
    assert (
        client.get(
            "/api/collections/demo/compare", a=af.pk, b=world["noaf"].pk, metric="nope"
        ).status_code
        == 422
    )


# -- judgments --------------------------------------------------------------------------
def test_judgments_export_csv_is_the_export_page(world, as_role):
    api = as_role("organizer").get("/api/collections/demo/judgments", format="csv")
    page = page_client(world["users"]["organizer"]).get("/collections/demo/export/judgments.csv")
    assert api.status_code == 200 and api["Content-Type"].startswith("text/csv")
    assert api.content == page.content
    assert "demo-judgments.csv" in api["Content-Disposition"]


def test_judgments_export_json_has_the_csv_records(world, as_role):
    api = as_role("organizer").get("/api/collections/demo/judgments").json()
    page = page_client(world["users"]["organizer"]).get("/collections/demo/export/judgments.csv")
    assert api == read_records(page.content)
    assert {
        "question_id": "EX3-LOVE",
        "synset_id": "1",
        "answer": "NIL",
        "level": "A",
    }.items() <= next(r for r in api if r["question_id"] == "EX3-LOVE").items()
    assert (
        as_role("organizer").get("/api/collections/demo/judgments", format="xml").status_code == 422
    )


# -- the schema --------------------------------------------------------------------------
def test_openapi_schema_names_every_endpoint_and_the_bearer_scheme(world):
    response = page_client(world["users"]["participant"]).get("/api/openapi.json")
    schema = response.json()
    paths = set(schema["paths"])
    assert {
        "/api/me",
        "/api/collections",
        "/api/collections/{slug}",
        "/api/collections/{slug}/questions",
        "/api/collections/{slug}/runs",
        "/api/collections/{slug}/runs/{run_id}",
        "/api/collections/{slug}/runs/{run_id}/scores",
        "/api/collections/{slug}/compare",
        "/api/collections/{slug}/judgments",
        "/api/jobs/{job_id}",
    } <= paths
    assert schema["components"]["securitySchemes"]["TokenAuth"]["scheme"] == "bearer"
    upload = schema["paths"]["/api/collections/{slug}/runs"]["post"]
    assert "multipart/form-data" in upload["requestBody"]["content"]
    assert {"202", "400", "409"} <= set(upload["responses"])
    job = schema["paths"]["/api/jobs/{job_id}"]["get"]["responses"]["200"]
    assert job["content"]["application/json"]["schema"]["$ref"].endswith("/JobOut")


def test_the_docs_page_loads_nothing_from_elsewhere(world):
    """The docs page uses Swagger UI's files shipped with django-ninja, served from our
    static files: no CDN (blocked offline and by the Content-Security-Policy), no inline
    script."""
    page = page_client(world["users"]["participant"]).get("/api/docs")
    html = page.content.decode()
    assert page.status_code == 200
    assert "/static/ninja/swagger-ui-bundle.js" in html
    assert "/static/ninja/swagger-ui-init.js" in html
    assert "cdn" not in html.lower() and "https://" not in html
    assert "script-src 'self'" in page["Content-Security-Policy"]
    for tag in html.split("<script")[1:]:
        assert 'src="' in tag.split(">")[0] or 'type="application/json"' in tag.split(">")[0]


def test_the_docs_page_leads_back_to_the_app(world):
    html = page_client(world["users"]["participant"]).get("/api/docs").content.decode()
    bar = html.split('<header class="docs-bar"', 1)[1].split("</header>", 1)[0]
    assert '<a href="/">Back to the app</a>' in bar
    assert '<a href="/account/tokens/">API tokens</a>' in bar
    assert '<div id="swagger-ui">' in html  # Swagger UI still renders below it


# -- errors of the middleware and the database, as JSON ------------------------------------
def test_a_control_character_is_refused_as_json(world, as_role):
    response = upload(as_role("participant"), "bad\x00name", b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert response.status_code == 400
    body = response.json()
    assert "control character" in body["detail"]
    # the shape docs/api.md gives every refused upload: an errors list naming the field
    assert body["errors"] == [
        {
            "file": "run.tsv",
            "line": None,
            "message": "name: holds a control character (such as a NUL byte); only tab, "
            "newline and carriage return are allowed in text",
        }
    ]
    assert not Run.objects.filter(name__startswith="bad").exists()


@pytest.mark.parametrize(
    ("data", "messages"),
    [
        ({"name": "no-file"}, ["file: This field is required."]),
        ({}, ["name: This field is required.", "file: This field is required."]),
    ],
)
def test_a_missing_field_is_a_refused_upload_not_a_422_list(world, as_role, data, messages):
    response = as_role("participant").post("/api/collections/demo/runs", data)
    assert response.status_code == 400
    assert response.json() == {
        "detail": "The run was not stored.",
        "errors": [{"file": "", "line": None, "message": m} for m in messages],
    }
    # and a format that is none of the three, as the upload page says it
    bad = as_role("participant").post(
        "/api/collections/demo/runs",
        {
            "name": "f",
            "format": "csv",
            "file": SimpleUploadedFile("r.tsv", b"EX1-BEATLES\t1\tJohn Lennon\n"),
        },
    )
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["message"].startswith("format: Select a valid choice.")
    assert not Run.objects.filter(name__in=["no-file", "f"]).exists()


@pytest.mark.parametrize(
    ("method", "url", "allow"),
    [
        ("put", "/api/collections/demo/runs", "GET, POST"),
        ("patch", "/api/me", "GET"),
        ("post", "/api/collections/demo/compare", "GET"),
    ],
)
def test_a_wrong_method_is_405_as_json(world, as_role, method, url, allow):
    client = as_role("participant")
    response = getattr(client.client, method)(url, headers=client.headers)
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert response.json() == {"detail": "Method not allowed"}
    assert sorted(response["Allow"].split(", ")) == sorted(allow.split(", "))


def test_a_form_error_names_its_field(world, as_role):
    response = upload(as_role("participant"), "x" * 101, b"EX1-BEATLES\t1\tJohn Lennon\n")
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert error["message"].startswith("name: ") and error["line"] is None


def test_an_oversize_request_is_refused_as_json(world, as_role, settings):
    settings.MAX_REQUEST_BODY_BYTES = 1024
    response = upload(as_role("participant"), "big", b"EX1-BEATLES\t1\tJohn Lennon\n" * 100)
    assert response.status_code == 413
    assert "at most" in response.json()["detail"]


def test_a_busy_database_is_503_with_retry_after(world, as_role, monkeypatch):
    from django.db import OperationalError

    from evaluation import services

    def busy(*args, **kwargs):
        raise OperationalError("canceling statement due to statement timeout")

    monkeypatch.setattr(services, "score_runs", busy)
    response = as_role("participant").get(f"/api/collections/demo/runs/{world['af'].pk}/scores")
    assert response.status_code == 503 and response["Retry-After"] == "30"
    assert "try again" in response.json()["detail"]


# -- a fixed number of queries, whatever the data size --------------------------------------
@pytest.mark.parametrize(
    "url",
    [
        "/api/collections",
        "/api/collections/demo",
        "/api/collections/demo/questions",
        "/api/collections/demo/runs",
        "/api/collections/demo/runs/{af}/scores",
        "/api/collections/demo/compare?a={noaf}&b={af}",
        "/api/collections/demo/judgments",
    ],
)
def test_query_budget(world, as_role, url, django_assert_max_num_queries):
    url = url.format(af=world["af"].pk, noaf=world["noaf"].pk)
    client = as_role("staff")
    # the first request of scores computes and stores them (``evaluation.score_store``):
    # a fixed number of queries more; the next ones read them
    with django_assert_max_num_queries(30):
        client.get(url)
    with django_assert_max_num_queries(20):
        response = client.get(url)
    assert response.status_code == 200
    assert response.json()  # the figures, not an empty answer


def test_compare_never_rounds_a_tiny_p_value_to_zero():
    from api.services import api_token_create
    from tests.api.conftest import ApiClient
    from tests.factories import add_member, make_collection, make_question, make_run, make_user

    c = make_collection(slug="tiny")
    for i in range(40):  # B finds every answer, A none: sign p = 2 * 0.5**40 = 1.8e-12
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[(f"right{i}", "S")]])
    org = make_user(username="tiny-organizer")
    add_member(collection=c, user=org, role="organizer")
    a = make_run(collection=c, owner=org, name="a", answers={f"Q{i:02d}": ["w"] for i in range(40)})
    b = make_run(
        collection=c, owner=org, name="b", answers={f"Q{i:02d}": [f"right{i}"] for i in range(40)}
    )
    client = ApiClient(api_token_create(user=org, name="script").secret)
    url = "/api/collections/tiny/compare"
    readable = client.get(url, a=a.pk, b=b.pk, metric="q_measure").json()
    full = client.get(url, a=a.pk, b=b.pk, metric="q_measure", precision="full").json()
    (t,), (f,) = readable["tests"], full["tests"]
    assert f["sign_p"] == 2 * 0.5**40
    for k in ("sign_p", "wilcoxon_p", "randomization_p"):
        assert 0 < f[k] < 5e-4, k  # below what 6 decimals can show
        assert t[k] == float(f"{f[k]:.6g}") and t[k] > 0, k
    assert t["sign_p"] == 1.81899e-12 and t["sign_p"] != f["sign_p"]
    assert t["mean_diff"] == 1.0  # scores keep their 6 decimals
