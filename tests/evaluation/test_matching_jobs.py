"""The matching-mode change as an exclusive job (evaluation/matching_jobs.py): it re-keys
strings and run answers through ``collection_matching_mode_change`` (its two steps on the
bar), names the conflicts as before when it fails, waits for a worker on a large
collection, and has the collection to itself: refused while another job runs there, and
refusing uploads and imports while it runs."""

import html
import os
import socket

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import AnswerString, Collection
from evaluation import matching_jobs
from evaluation.models import RunAnswer
from jobs.models import Conflict, Job, JobStatus
from jobs.runner import run_job
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def w(client):
    c = make_collection(slug="mj", name="Modes")
    org = make_user(username="mj-org")
    add_member(collection=c, user=org, role="organizer")
    q = make_question(
        collection=c,
        qid="border",
        synsets=[[("The Radcliffe Line", "S")]],
        incorrect=["Radcliffe Line"],
    )
    make_run(collection=c, owner=org, name="r", answers={"border": ["the Radcliffe line"]})
    client.force_login(org)
    return {"c": c, "org": org, "q": q, "url": "/collections/mj/matching-mode/"}


def mode(c):
    return Collection.objects.get(pk=c.pk).matching_mode


def test_the_change_is_an_exclusive_job_and_its_conflicts_show_as_before(client, w):
    r = client.post(w["url"], {"matching_mode": "squad"})
    page = html.unescape(r.content.decode())
    assert r.status_code == 200 and "judge them alike first" in page
    failed = Job.objects.get()
    assert failed.status == JobStatus.FAILED and failed.conflict == Conflict.EXCLUSIVE
    assert "Radcliffe Line" in failed.message and mode(w["c"]) == "normalized"
    AnswerString.objects.filter(question=w["q"], text="Radcliffe Line").delete()
    r = client.post(w["url"], {"matching_mode": "squad"}, follow=True)
    assert "Matching mode: SQuAD" in r.content.decode()
    job = Job.objects.exclude(pk=failed.pk).get()
    assert job.status == JobStatus.SUCCEEDED
    assert job.label == "Matching mode change of Modes to squad"
    assert (job.done, job.total, job.unit) == (2, 2, "steps")
    assert mode(w["c"]) == "squad"
    assert RunAnswer.objects.get(question=w["q"]).key == "radcliffe line"


def test_a_change_is_refused_while_another_job_runs_on_the_collection(client, w):
    upload = Job.objects.create(
        kind="upload",
        label="Upload of run.tsv",
        func="evaluation.run_jobs.run_upload",
        user=w["org"],
        collection=w["c"],
        conflict=Conflict.SHARED,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    AnswerString.objects.filter(question=w["q"], text="Radcliffe Line").delete()
    r = client.post(w["url"], {"matching_mode": "squad"}, headers={"HX-Request": "true"})
    page = html.unescape(r.content.decode())
    assert r.status_code == 200 and "<html" not in page and 'id="mode-refused"' in page
    assert "The matching mode was not changed: Upload of run.tsv (started by mj-org at" in page
    assert mode(w["c"]) == "normalized" and Job.objects.count() == 1
    Job.objects.filter(pk=upload.pk).update(status=JobStatus.SUCCEEDED)
    assert client.post(w["url"], {"matching_mode": "squad"}).status_code == 302
    assert mode(w["c"]) == "squad"


def test_a_large_collection_changes_on_a_worker_while_imports_are_refused(client, w, monkeypatch):
    monkeypatch.setattr("jobs.services.queue_is_immediate", lambda: False)
    monkeypatch.setattr(matching_jobs, "INLINE_ROWS", 2)
    AnswerString.objects.filter(question=w["q"], text="Radcliffe Line").delete()
    r = client.post(w["url"], {"matching_mode": "squad"}, headers={"HX-Request": "true"})
    job = Job.objects.get()
    assert job.status == JobStatus.QUEUED and f'id="job-{job.pk}"' in r.content.decode()
    assert mode(w["c"]) == "normalized"
    # while it waits (or runs), an import of the collection is refused
    data = b"question_id,synset_id,answer,level\nborder,1,Radcliffe,S\n"
    preview = client.post(
        "/collections/mj/import/",
        {"kind": "judgments", "file": SimpleUploadedFile("j.csv", data)},
    ).content.decode()
    token = preview.split('name="token" value="')[1].split('"')[0]
    r = client.post("/collections/mj/import/confirm/", {"token": token})
    assert "Matching mode change of Modes to squad (started by mj-org) is waiting to run" in (
        html.unescape(r.content.decode())
    )
    assert not AnswerString.objects.filter(text="Radcliffe").exists()
    seen = []
    ended = run_job(job.pk, listener=lambda s: seen.append((s.done, s.total, s.unit)))
    assert ended.status == JobStatus.SUCCEEDED, ended.message
    assert seen[-1] == (2, 2, "steps") and (1, 2, "steps") in seen
    assert mode(w["c"]) == "squad"
    page = client.get(reverse("jobs:job-detail", args=[job.pk])).content.decode()
    assert "Matching mode: SQuAD" in page
