"""A layer request as a job (annotate/layer_jobs.py): over a few hundred questions it is
made in the request, over more it waits for a worker while the page shows the job; either
way one job function makes it, records its progress (questions done) and says what the
agreement page said; an exclusive job on the collection refuses it."""

import os
import socket

import pytest
from django.urls import reverse

from annotate import layer_jobs
from annotate.models import JudgingLayer
from jobs.models import Conflict, Job, JobStatus
from jobs.runner import run_job
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def w(client):
    c = make_collection(slug="lj", name="Layers")
    org, a, b = (make_user(username=n) for n in ("org", "ann", "bob"))
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=a, role="assessor")
    add_member(collection=c, user=b, role="assessor")
    for i in range(5):
        make_question(collection=c, qid=f"Q{i}", unjudged=["x"])
    client.force_login(org)
    url = reverse("annotate:collection-layers-request", args=["lj"])
    return {"c": c, "org": org, "form": {"assessors": [a.pk, b.pk], "k": "2"}, "url": url}


def test_a_small_request_is_made_at_once_by_the_job(client, w):
    JudgingLayer.objects.create(question=w["c"].questions.get(qid="Q0"), assessor=w["org"])
    r = client.post(w["url"], {**w["form"], "k": "1"}, follow=True)
    page = r.content.decode()
    assert "4 layers requested on 4 questions." in page
    assert "1 question left out: it has layers already" in page  # the job's warning
    job = Job.objects.get(kind="layers_request")
    assert job.status == JobStatus.SUCCEEDED and job.conflict == Conflict.SHARED
    assert (job.phase, job.done, job.total, job.unit) == ("Requesting layers", 4, 4, "questions")
    assert job.result["url"] == reverse("annotate:collection-agreement", args=["lj"])


def test_a_failed_request_says_why_and_writes_nothing(client, w):
    r = client.post(w["url"], {**w["form"], "k": "3"}, follow=True)
    assert "3 independent judgments need at least 3 assessors." in r.content.decode()
    job = Job.objects.get(kind="layers_request")
    assert job.status == JobStatus.FAILED
    assert job.message == "3 independent judgments need at least 3 assessors."
    assert not JudgingLayer.objects.exists()


def test_a_large_request_waits_for_a_worker_and_reports_questions_done(client, w, monkeypatch):
    monkeypatch.setattr("jobs.services.queue_is_immediate", lambda: False)
    monkeypatch.setattr(layer_jobs, "INLINE_QUESTIONS", 3)
    # a sample of 3 is small: made at once
    r = client.post(w["url"], {**w["form"], "scope": "sample", "sample": "3"})
    assert r.status_code == 302 and JudgingLayer.objects.count() == 6
    JudgingLayer.objects.all().delete()
    r = client.post(w["url"], w["form"], headers={"HX-Request": "true"})
    job = Job.objects.get(status=JobStatus.QUEUED)
    assert job.label == "Layer request on 5 questions of Layers"
    assert f'id="job-{job.pk}"' in r.content.decode()
    assert not JudgingLayer.objects.exists()
    seen = []
    ended = run_job(job.pk, listener=lambda s: seen.append((s.phase, s.done, s.total)))
    assert ended.status == JobStatus.SUCCEEDED and ended.message == (
        "10 layers requested on 5 questions."
    )
    assert ("Requesting layers", 5, 5) in seen
    assert JudgingLayer.objects.count() == 10


def test_an_exclusive_job_refuses_a_request(client, w):
    Job.objects.create(
        kind="matching_mode",
        label="Matching mode change of Layers to exact",
        func="evaluation.matching_jobs.run_mode_change",
        user=w["org"],
        collection=w["c"],
        conflict=Conflict.EXCLUSIVE,
        status=JobStatus.RUNNING,
        worker=f"{socket.gethostname()}:{os.getpid()}",
    )
    r = client.post(w["url"], w["form"], follow=True)
    page = r.content.decode()
    assert "No layer was requested: Matching mode change of Layers to exact" in page
    assert not JudgingLayer.objects.exists()
