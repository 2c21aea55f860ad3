"""The imports as jobs (annotate/import_jobs.py): the import page's confirm, the agreement
page's layers CSV and ``manage.py import_judgments`` run one job function each, which
records its progress (lines read, questions written) and every error of the file with its
line; a large file waits for a worker while the page shows the job; an exclusive job on
the collection (a matching-mode change) refuses them, and nothing is written."""

import html
import io
import os
import socket

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate import import_jobs
from annotate.models import AnswerString, JudgingLayer, PendingImport, Question
from jobs.models import Conflict, Job, JobStatus
from jobs.runner import run_job
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

JUDGMENTS = b"question_id,synset_id,answer,level\nQ1,1,Paris,S\nQ2,1,Rome,A\nQ2,,Oslo,\n"


@pytest.fixture
def org(client):
    c = make_collection(slug="jobs", name="Jobs")
    make_question(collection=c, qid="Q1", unjudged=["Lyon"])
    make_question(collection=c, qid="Q2")
    user = make_user(username="org")
    add_member(collection=c, user=user, role="organizer")
    client.force_login(user)
    return {"c": c, "user": user}


def preview(client, data=JUDGMENTS, kind="judgments", name="j.csv"):
    r = client.post(
        "/collections/jobs/import/", {"kind": kind, "file": SimpleUploadedFile(name, data)}
    )
    assert r.status_code == 200
    return r.content.decode().split('name="token" value="')[1].split('"')[0]


def exclusive_job(collection, user):
    """A matching-mode change running on ``collection`` in a live process (this one)."""
    return Job.objects.create(
        kind="matching_mode",
        label="Matching mode change of Jobs to squad",
        func="evaluation.matching_jobs.run_mode_change",
        user=user,
        collection=collection,
        conflict=Conflict.EXCLUSIVE,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )


def queue_for_a_worker(monkeypatch):
    """Jobs wait for a worker, as they do outside the tests (which run them at once)."""
    monkeypatch.setattr("jobs.services.queue_is_immediate", lambda: False)


def test_a_confirm_is_a_job_that_records_lines_read_and_questions_written(client, org):
    token = preview(client)
    r = client.post("/collections/jobs/import/confirm/", {"token": token}, follow=True)
    page = html.unescape(r.content.decode())
    assert "Imported j.csv (questions with judgments: 2," in page
    job = Job.objects.get(kind="import")
    assert job.status == JobStatus.SUCCEEDED and job.user == org["user"]
    assert job.collection == org["c"] and job.conflict == Conflict.SHARED
    assert (job.phase, job.done, job.total, job.unit) == ("Writing", 2, 2, "questions")
    assert job.result["url"] == reverse("annotate:collection-detail", args=["jobs"])
    assert set(AnswerString.objects.values_list("text", flat=True)) == {
        "Paris",
        "Rome",
        "Oslo",
        "Lyon",
    }
    assert not PendingImport.objects.exists()


def test_an_htmx_confirm_goes_to_the_collection(client, org):
    token = preview(client)
    r = client.post(
        "/collections/jobs/import/confirm/", {"token": token}, headers={"HX-Request": "true"}
    )
    assert r["HX-Redirect"] == reverse("annotate:collection-detail", args=["jobs"])


def test_a_failed_confirm_job_lists_every_error_with_its_line_and_writes_nothing(client, org):
    token = preview(client)
    Question.objects.filter(qid="Q2").delete()  # meanwhile
    r = client.post(
        "/collections/jobs/import/confirm/", {"token": token}, headers={"HX-Request": "true"}
    )
    page = html.unescape(r.content.decode())
    assert r.status_code == 200 and "<html" not in page
    assert "j.csv: 2 errors, nothing imported" in page
    assert "j.csv:3: unknown question 'Q2'" in page and "j.csv:4: unknown question 'Q2'" in page
    job = Job.objects.get(kind="import")
    assert job.status == JobStatus.FAILED
    assert job.errors == [
        {"file": "j.csv", "line": 3, "message": "unknown question 'Q2'"},
        {"file": "j.csv", "line": 4, "message": "unknown question 'Q2'"},
    ]
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["Lyon"]


def test_a_confirm_of_a_preview_no_longer_pending_says_so(client, org):
    token = preview(client)
    client.post("/collections/jobs/import/confirm/", {"token": token})
    r = client.post("/collections/jobs/import/confirm/", {"token": token}, follow=True)
    assert "That preview is no longer pending" in r.content.decode()
    assert r.redirect_chain[-1][0] == reverse("annotate:collection-import", args=["jobs"])


def test_a_large_file_waits_for_a_worker_and_the_page_shows_its_job(client, org, monkeypatch):
    queue_for_a_worker(monkeypatch)
    monkeypatch.setattr(import_jobs, "INLINE_BYTES", 10)
    token = preview(client)
    r = client.post(
        "/collections/jobs/import/confirm/", {"token": token}, headers={"HX-Request": "true"}
    )
    panel = r.content.decode()
    job = Job.objects.get(kind="import")
    assert job.status == JobStatus.QUEUED and job.label == "Import of j.csv into Jobs"
    assert f'id="job-{job.pk}"' in panel and 'hx-trigger="every 1s"' in panel
    assert not AnswerString.objects.exclude(text="Lyon").exists()  # nothing yet
    # a plain form goes to the job's page
    other = preview(client)
    r = client.post("/collections/jobs/import/confirm/", {"token": other})
    second = Job.objects.filter(kind="import").exclude(pk=job.pk).get()
    assert r["Location"] == reverse("jobs:job-detail", args=[second.pk])
    # the worker runs the first (the second preview replaced its token: it fails)
    assert run_job(job.pk).status == JobStatus.FAILED
    ended = run_job(second.pk)
    assert ended.status == JobStatus.SUCCEEDED, ended.message
    assert AnswerString.objects.filter(text="Paris").exists()
    page = client.get(reverse("jobs:job-detail", args=[second.pk])).content.decode()
    assert "Imported j.csv" in html.unescape(page) and "Open the collection" in page


def test_an_exclusive_job_refuses_the_confirm_and_nothing_is_written(client, org):
    token = preview(client)
    running = exclusive_job(org["c"], org["user"])
    r = client.post(
        "/collections/jobs/import/confirm/", {"token": token}, headers={"HX-Request": "true"}
    )
    page = html.unescape(r.content.decode())
    assert r.status_code == 200 and 'id="import-refused"' in page
    assert "Nothing imported." in page
    assert "Matching mode change of Jobs to squad (started by org at" in page
    assert "is running on this collection; try again when it has finished." in page
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["Lyon"]
    assert not Job.objects.filter(kind="import").exists()
    # the preview still waits: once the change has finished, the import goes through
    assert f'name="token" value="{token}"' in page
    Job.objects.filter(pk=running.pk).update(status=JobStatus.SUCCEEDED)
    r = client.post("/collections/jobs/import/confirm/", {"token": token})
    assert r.status_code == 302
    assert AnswerString.objects.filter(text="Paris").exists()


def test_the_agreement_pages_layers_import_is_a_job(client, org):
    c, user = org["c"], org["user"]
    ann = make_user(username="ann")
    add_member(collection=c, user=ann, role="assessor")
    url = reverse("annotate:collection-layers-import", args=["jobs"])
    data = b"question_id,synset_id,answer,level,assessor,done\nQ1,1,Lyon,S,ann,0\n"
    exclusive_job(c, user)
    r = client.post(url, {"file": SimpleUploadedFile("l.csv", data)}, follow=True)
    assert "Nothing imported: Matching mode change" in html.unescape(r.content.decode())
    assert not JudgingLayer.objects.exists()
    Job.objects.filter(kind="matching_mode").update(status=JobStatus.SUCCEEDED)
    bad = data + b"Q9,1,x,S,ann,0\n"
    r = client.post(url, {"file": SimpleUploadedFile("l.csv", bad)}, follow=True)
    assert "l.csv:3: unknown question" in html.unescape(r.content.decode())
    assert not JudgingLayer.objects.exists()
    failed = Job.objects.get(kind="layers_import")
    assert failed.status == JobStatus.FAILED and failed.errors[0]["line"] == 3
    r = client.post(url, {"file": SimpleUploadedFile("l.csv", data)}, follow=True)
    assert "Imported 1 judgments in 1 layers." in r.content.decode()
    assert JudgingLayer.objects.get().assessor == ann


def test_the_command_runs_the_same_job_and_prints_its_progress(tmp_path, org):
    p = tmp_path / "j.csv"
    p.write_bytes(JUDGMENTS)
    out, err = io.StringIO(), io.StringIO()
    call_command("import_judgments", "jobs", str(p), stdout=out, stderr=err)
    assert out.getvalue().splitlines() == [
        "questions with judgments: 2",
        "synsets to create: 2",
        "correct strings: 2",
        "incorrect strings: 1",
        "spellings folded into another string: 0",
        "questions whose judgments are replaced: 0",
        "questions fully judged by the file: 1",
        "imported",
    ]
    assert err.getvalue().splitlines() == [
        "Reading j.csv: 0 of 4 lines",
        "Reading j.csv: 4 of 4 lines",
        "Writing: 0 questions",
        "Writing: 2 of 2 questions",
    ]
    job = Job.objects.get()
    assert job.func == import_jobs.RUN_IMPORT and job.user is None
    assert job.status == JobStatus.SUCCEEDED
    assert AnswerString.objects.filter(text="Paris").exists()


def test_the_command_prints_every_error_and_a_refusal(tmp_path, org):
    p = tmp_path / "j.csv"
    p.write_bytes(JUDGMENTS + b"Q9,1,x,S\nQ1,1,y,Z\n")
    with pytest.raises(CommandError) as e:
        call_command("import_judgments", "jobs", str(p), stderr=io.StringIO())
    assert str(e.value) == (
        "nothing imported, 2 error(s):\n"
        "j.csv:5: unknown question 'Q9'\n"
        "j.csv:6: unknown level 'Z' (expected one of S, A, B)"
    )
    exclusive_job(org["c"], org["user"])
    with pytest.raises(CommandError, match="nothing imported: Matching mode change"):
        call_command("import_judgments", "jobs", str(p), stderr=io.StringIO())
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["Lyon"]
