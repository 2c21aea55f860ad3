"""The run operations as jobs (evaluation/run_jobs.py): an upload's job keeps every error
of its file with its line (the list the form shows), a large upload is queued and its page
shows the job, a bad replacement leaves the run as it was, pooling all runs equals pooling
each, and the progress a job reports (lines read, answers stored, scoring; runs pooled)."""

from __future__ import annotations

import io

import pytest
from django.core.cache import caches
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from annotate.models import AnswerString, JudgmentEvent
from evaluation import run_jobs, services
from evaluation.metrics import InputError, parsers
from evaluation.models import Run
from jobs.models import Job, JobStatus
from jobs.progress import Snapshot
from jobs.runner import run_job
from jobs.terminal import TerminalProgress
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
# line 2: no such question; 3: a bad rank; 4: a QID repeated rank; 8: a fourth answer of Q1
BAD = (
    b"Q1\t1\tParis\n"
    b"NOPE\t1\tx\n"
    b"Q2\tfirst\tRome\n"
    b"Q2\t1\tRome\n"
    b"Q2\t1\tMilan\n"
    b"Q1\t2\tLyon\n"
    b"Q1\t3\tNice\n"
    b"Q1\t4\tLille\n"
)
GOOD = b"Q1\t1\tParis\nQ1\t2\tLyon\nQ2\t1\tRome\n"


@pytest.fixture
def world():
    caches["scores"].clear()
    c = make_collection(open_for_submissions=True, max_output_size=3)
    make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]], incorrect=["Lyon"])
    make_question(collection=c, qid="Q2", synsets=[[("Rome", "S")]], incorrect=["Milan"])
    owner, organizer = make_user(username="owner"), make_user(username="organizer")
    add_member(collection=c, user=owner, role="participant")
    add_member(collection=c, user=organizer, role="organizer")
    return {"c": c, "owner": owner, "organizer": organizer}


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def page_upload(client, c, name, data, filename="run.tsv", **headers):
    return client.post(
        reverse("evaluation:run-upload", args=[c.slug]),
        {"name": name, "format": "", "file": SimpleUploadedFile(filename, data)},
        headers=headers,
    )


def inline_issues(c, owner, data, name="x"):
    with pytest.raises(InputError) as e:
        services.run_import(collection=c, owner=owner, name=name, data=data, filename="run.tsv")
    return [{"file": i.file, "line": i.line, "message": i.message} for i in e.value.issues]


# -- a bad file ---------------------------------------------------------------------------
def test_a_failed_upload_job_keeps_every_error_with_its_line(world):
    c, owner = world["c"], world["owner"]
    expected = inline_issues(c, owner, BAD)
    assert [e["line"] for e in expected] == [2, 3, 5, 8]  # what the inline path gave
    job = run_jobs.run_upload_start(
        collection=c, user=owner, name="bad", data=BAD, filename="run.tsv", inline=True
    )
    assert job.status == JobStatus.FAILED
    assert job.errors == expected
    assert job.message == "The run was not stored: 4 problem(s)."
    assert not Run.objects.filter(name="bad").exists()

    # the job's page lists every one of them with its file and line
    page = client_for(owner).get(reverse("jobs:job-detail", args=[job.pk])).content.decode()
    for e in expected:
        assert f"run.tsv, line {e['line']}: " in page
    # and the upload page (a small file: the job ran in the request) shows the same list as
    # before it was a job
    form = page_upload(client_for(owner), c, "bad", BAD).content.decode()
    assert "The run was not stored.</strong> 4 problems found" in form
    for e in expected:
        assert f"<li>line {e['line']}: {e['message']}".replace("'", "&#x27;") in form


def test_a_queued_upload_that_fails_keeps_every_error(world, settings, monkeypatch):
    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(run_jobs, "RUN_INLINE_LINES", 1)
    c, owner = world["c"], world["owner"]
    response = page_upload(client_for(owner), c, "bad", BAD)
    job = Job.objects.get(kind="run-upload")
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.status == JobStatus.QUEUED and bytes(job.input) == BAD
    ended = run_job(job.pk)
    assert ended.status == JobStatus.FAILED
    assert ended.errors == inline_issues(c, owner, BAD)
    assert ended.input is None


def test_a_large_upload_from_the_page_shows_its_job_in_place_of_the_form(
    world, settings, monkeypatch
):
    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(run_jobs, "RUN_INLINE_LINES", 1)
    c, owner = world["c"], world["owner"]
    response = page_upload(client_for(owner), c, "big", GOOD, **{"HX-Request": "true"})
    job = Job.objects.get(kind="run-upload")
    html = response.content.decode()
    assert f'id="job-{job.pk}"' in html and 'hx-trigger="every 1s"' in html
    assert "Upload of run &#x27;big&#x27;" in html and "Waiting for a worker" in html
    assert 'id="upload-form"' not in html
    run_job(job.pk)
    panel = client_for(owner).get(reverse("jobs:job-status", args=[job.pk])).content.decode()
    run = Run.objects.get(name="big")
    assert "Run &#x27;big&#x27; uploaded: 3 answers." in panel
    assert f'href="/collections/{c.slug}/runs/{run.pk}/"' in panel and "Open the run" in panel
    assert 'hx-trigger="every 1s"' not in panel  # it stopped polling


def test_a_small_upload_ends_in_the_request(world):
    c, owner = world["c"], world["owner"]
    response = page_upload(client_for(owner), c, "small", GOOD)
    run = Run.objects.get(name="small")
    assert response.status_code == 302
    assert response["Location"] == reverse("evaluation:run-detail", args=[c.slug, run.pk])
    job = Job.objects.get(kind="run-upload")
    assert job.status == JobStatus.SUCCEEDED and job.result["run_id"] == run.pk
    assert job.result["answers"] == 3 and job.result["means"]["q_measure"] == pytest.approx(
        services.score_runs(c, [run], run_jobs.ScoreConfigForm.read(None, c).config)
        .means()
        .loc["small", "q_measure"]
    )


# -- replace ------------------------------------------------------------------------------
def test_replace_keeps_the_old_run_when_the_new_file_is_bad(world, settings, monkeypatch):
    c, owner = world["c"], world["owner"]
    run = make_run(collection=c, owner=owner, name="mine", answers={"Q1": ["Lyon"]})
    before = (run.sha256, run.source_name, list(run.answers.values_list("question_id", "text")))
    expected = inline_issues(c, owner, BAD)
    url = reverse("evaluation:run-replace", args=[c.slug, run.pk])

    # a small file: the page shows every problem, as before
    page = client_for(owner).post(url, {"format": "", "file": SimpleUploadedFile("run.tsv", BAD)})
    html = page.content.decode()
    assert "The run was not changed.</strong> 4 problems found" in html
    for e in expected:
        assert f"line {e['line']}: " in html
    # a queued one: its job fails with the same list
    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(run_jobs, "RUN_INLINE_LINES", 1)
    client_for(owner).post(url, {"format": "", "file": SimpleUploadedFile("run.tsv", BAD)})
    job = Job.objects.filter(kind="run-replace").latest("id")
    assert job.status == JobStatus.QUEUED
    ended = run_job(job.pk)
    assert ended.status == JobStatus.FAILED and ended.errors == expected
    assert ended.message == "The run was not changed: 4 problem(s)."
    run.refresh_from_db()
    after = (run.sha256, run.source_name, list(run.answers.values_list("question_id", "text")))
    assert after == before
    assert not JudgmentEvent.objects.filter(action="replace_run").exists()

    # a good file replaces it, through the same job
    client_for(owner).post(url, {"format": "", "file": SimpleUploadedFile("new.tsv", GOOD)})
    job = Job.objects.filter(kind="run-replace").latest("id")
    assert run_job(job.pk).message == "Run 'mine' replaced: 3 answers."
    run.refresh_from_db()
    assert run.source_name == "new.tsv" and run.answers.count() == 3


# -- pooling ------------------------------------------------------------------------------
def _pooling_world(slug: str):
    c = make_collection(slug=slug, open_for_submissions=True, max_output_size=3)
    make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]])
    make_question(collection=c, qid="Q2", synsets=[[("Rome", "S")]], unjudged=["Turin"])
    make_question(collection=c, qid="Q3")
    organizer = make_user(username=f"org-{slug}")
    add_member(collection=c, user=organizer, role="organizer")
    answers = [
        {"Q1": ["Lyon", "paris", "Nice"], "Q2": ["Milan", "turin"]},
        {"Q1": ["lyon", "Marseille"], "Q3": ["Oslo", "Bergen", "x", "beyond L'"]},
        {"Q2": ["Naples", "Milan."], "Q3": ["oslo"]},
    ]
    runs = [
        make_run(collection=c, owner=organizer, name=f"r{i}", answers=a)
        for i, a in enumerate(answers)
    ]
    withdrawn = make_run(collection=c, owner=organizer, name="gone", answers={"Q3": ["Stavanger"]})
    services.run_withdraw(run=withdrawn, by=organizer)
    return c, organizer, runs


def _strings(c):
    return sorted(
        AnswerString.objects.filter(question__collection=c).values_list(
            "question__qid", "text", "key", "variants", "source", "judged_at"
        ),
        key=repr,
    )


def _pool_events(c):
    return [
        (e["run_name"], e["added"], e["questions"], e["spellings"], e["reopened"])
        for e in JudgmentEvent.objects.filter(collection=c, action="pool_run")
        .order_by("id")
        .values_list("after", flat=True)
    ]


def test_pool_all_equals_pooling_each_run():
    a, organizer_a, _ = _pooling_world("pool-all")
    b, organizer_b, runs_b = _pooling_world("pool-each")
    response = client_for(organizer_a).post(reverse("evaluation:run-pool-all", args=[a.slug]))
    assert response.status_code == 302
    assert response["Location"] == reverse("evaluation:run-list", args=[a.slug])
    job = Job.objects.get(kind="run-pool-all")
    each = [services.run_pool(run=r, by=organizer_b) for r in runs_b]  # upload order

    assert job.status == JobStatus.SUCCEEDED
    assert [p["added"] for p in job.result["runs"]] == each
    assert [p["run"] for p in job.result["runs"]] == ["r0", "r1", "r2"]  # not the withdrawn
    assert job.result["added"] == sum(each) > 0
    assert job.message == f"{sum(each)} unjudged answer(s) of 3 run(s) sent to the assessors' pool."
    strip = lambda rows: [r[1:-1] for r in rows]  # noqa: E731 (the collection's own ids)
    assert strip(_strings(a)) == strip(_strings(b))
    assert _pool_events(a) == _pool_events(b)
    # again: nothing new, like pooling each run again
    again = run_jobs.runs_pool_all_start(collection=a, user=organizer_a)
    assert again.result["added"] == 0


def test_pool_all_reports_each_run_and_is_organizers_only(settings):
    c, organizer, _ = _pooling_world("pool-progress")
    participant = make_user(username="p")
    add_member(collection=c, user=participant, role="participant")
    assert (
        client_for(participant).post(reverse("evaluation:run-pool-all", args=[c.slug])).status_code
        == 403
    )
    settings.TASKS = DATABASE_QUEUE
    job = run_jobs.runs_pool_all_start(collection=c, user=organizer, inline=False)
    assert job.status == JobStatus.QUEUED
    seen: list[Snapshot] = []
    ended = run_job(job.pk, listener=seen.append)
    assert ended.status == JobStatus.SUCCEEDED
    assert [(s.phase, s.done, s.total, s.unit) for s in seen] == [
        ("Pooling the runs", i, 3, "runs") for i in range(4)
    ]


def test_pooling_one_run_is_a_job_with_progress_by_question(world, settings):
    c, organizer = world["c"], world["organizer"]
    run = make_run(collection=c, owner=organizer, name="r", answers={"Q1": ["Nice"], "Q2": ["x"]})
    response = client_for(organizer).post(reverse("evaluation:run-pool", args=[c.slug, run.pk]))
    assert response["Location"] == reverse("evaluation:run-detail", args=[c.slug, run.pk])
    assert Job.objects.get(kind="run-pool").result["added"] == 2
    settings.TASKS = DATABASE_QUEUE
    again = run_jobs.run_pool_start(run=run, user=organizer, inline=False)
    seen: list[Snapshot] = []
    run_job(again.pk, listener=seen.append)
    # the pooling reads every answer in one pass, then reports each run it pooled (here one)
    assert {(s.phase, s.total, s.unit) for s in seen} == {
        ("Sending answers to the assessors' pool", None, "questions"),
        ("Sending answers to the assessors' pool", 1, "runs"),
    }
    assert seen[-1].done == 1


# -- progress -----------------------------------------------------------------------------
def test_an_upload_reports_lines_read_then_answers_stored_then_scoring(world, monkeypatch):
    monkeypatch.setattr(parsers, "PROGRESS_LINES", 2)
    c, owner = world["c"], world["owner"]
    seen: list[Snapshot] = []
    job = run_jobs.run_upload_start(
        collection=c,
        user=owner,
        name="p",
        data=GOOD + b"\n",
        filename="r.tsv",
        inline=True,
        listener=seen.append,
    )
    assert job.status == JobStatus.SUCCEEDED
    steps = [(s.phase, s.done, s.total, s.unit) for s in seen]
    reading = [s for s in steps if s[0] == "Reading the file" and s[2] is not None]
    assert [s[1] for s in reading] == [0, 2, 4]  # every 2 lines, to the end (4 lines)
    assert {s[2] for s in reading} == {4} and {s[3] for s in reading} == {"lines"}
    phases = list(dict.fromkeys(s[0] for s in steps))
    assert phases == ["Reading the file", "Storing the answers", "Scoring the run"]
    assert ("Storing the answers", 3, 3, "answers") in steps
    assert steps[-1] == ("Scoring the run", 1, 1, "run")
    assert (job.phase, job.done, job.total) == ("Scoring the run", 1, 1)


def test_import_run_runs_the_job_with_plain_lines_off_a_terminal(world, tmp_path):
    path = tmp_path / "cmd.tsv"
    path.write_bytes(GOOD)
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "import_run",
        str(path),
        "--collection",
        world["c"].slug,
        "--owner",
        "owner",
        stdout=out,
        stderr=err,
    )
    assert out.getvalue().splitlines() == [
        "Reading the file: 3 lines",
        "Storing the answers: 3 answers",
        "Scoring the run: 1 run",
        "Imported run 'cmd': 3 answers (qa).",
    ]
    assert err.getvalue() == ""
    job = Job.objects.get(kind="run-upload")
    assert job.status == JobStatus.SUCCEEDED and job.user == world["owner"]


def test_the_terminal_bar_draws_each_phase():
    screen = io.StringIO()
    with TerminalProgress(screen, tty=True) as bar:
        bar(Snapshot("Reading the file", 0, 10, "lines"))
        bar(Snapshot("Reading the file", 10, 10, "lines"))
        bar(Snapshot("Storing the answers", 7, 7, "answers"))
    drawn = screen.getvalue()
    assert "Reading the file" in drawn and "10/10" in drawn
    assert "Storing the answers" in drawn and "7/7" in drawn
    quiet = io.StringIO()
    with TerminalProgress(quiet, quiet, quiet=True) as bar:
        bar(Snapshot("Reading the file", 0, 10, "lines"))
    assert quiet.getvalue() == ""


# -- refusals, cancel, the runs page's button ------------------------------------------------
def test_an_upload_beside_a_conflicting_job_is_refused_on_the_form(world):
    import os
    import socket

    from jobs.models import Conflict

    c, owner = world["c"], world["owner"]
    Job.objects.create(
        kind="matching-mode",
        label="Matching mode change",
        func="x",
        user=world["organizer"],
        collection=c,
        conflict=Conflict.EXCLUSIVE,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    html = page_upload(client_for(owner), c, "blocked", GOOD).content.decode()
    assert 'id="upload-form"' in html and "Matching mode change (started by organizer" in html
    assert not Run.objects.filter(name="blocked").exists()
    assert not Job.objects.filter(kind="run-upload").exists()


def test_an_upload_cancelled_while_its_file_is_read_stores_nothing(world, settings, monkeypatch):
    from jobs.progress import Progress

    monkeypatch.setattr(parsers, "PROGRESS_LINES", 1)
    made: list[Progress] = []
    original = Progress.__init__

    def init(self, listener=None):
        original(self, listener)
        made.append(self)

    monkeypatch.setattr(Progress, "__init__", init)

    def listener(snap: Snapshot) -> None:
        if snap.phase == "Reading the file" and snap.done == 2:
            made[-1].cancelled.set()  # as the reporter does when somebody pressed Cancel

    settings.TASKS = DATABASE_QUEUE
    c, owner = world["c"], world["owner"]
    job = run_jobs.run_upload_start(
        collection=c, user=owner, name="cancelled", data=GOOD, filename="r.tsv", inline=False
    )
    ended = run_job(job.pk, listener=listener)
    assert ended.status == JobStatus.CANCELLED and ended.done == 2
    assert not Run.objects.filter(name="cancelled").exists()


def test_the_runs_page_offers_pool_all_to_organizers(world):
    c = world["c"]
    make_run(collection=c, owner=world["owner"], name="r", answers={"Q1": ["Nice"]})
    url = reverse("evaluation:run-list", args=[c.slug])
    assert 'id="pool-all-form"' in client_for(world["organizer"]).get(url).content.decode()
    assert 'id="pool-all-form"' not in client_for(world["owner"]).get(url).content.decode()
