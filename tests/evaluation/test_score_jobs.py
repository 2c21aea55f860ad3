"""Scores too large for a request are a job's (``evaluation.score_jobs``, issue 24): a score
page, a download or an API call that would score more run answers than a request may
answers 202 with the progress of one job per collection and configuration (viewers who
arrive meanwhile follow the same job), scores nothing itself and stores nothing; the job
stores every run's scores, then the page shows them, the engine's figures.  Within the
budget, or without a worker (the immediate backend), the request scores as before."""

from __future__ import annotations

import numpy as np
import pytest
from django.test import Client
from django.urls import reverse

from annotate.models import Collection, Role
from api.services import api_token_create
from bench.campaign_data import Size, build
from evaluation import score_store, services
from evaluation.analysis.score_config import ScoreConfig
from evaluation.models import Run, RunScores
from jobs.models import Conflict, Job, JobStatus
from jobs.runner import run_job
from jobs.services import job_start
from tests.factories import add_member, make_user

pytestmark = pytest.mark.django_db

DATABASE_QUEUE = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}


@pytest.fixture
def world():
    campaign = build(Size(12, 3, 4), 5, reuse=False)
    collection = Collection.objects.get(pk=campaign.collection_id)
    organizer, participant, assessor = (
        make_user(username="org"),
        make_user(username="part"),
        make_user(username="judge"),
    )
    add_member(collection=collection, user=organizer, role=Role.ORGANIZER)
    add_member(collection=collection, user=participant, role=Role.PARTICIPANT)
    add_member(collection=collection, user=assessor, role=Role.ASSESSOR)
    runs = list(Run.objects.filter(collection=collection).order_by("pk"))
    return {
        "c": collection,
        "runs": runs,
        "organizer": organizer,
        "participant": participant,
        "assessor": assessor,
    }


@pytest.fixture
def queued(settings, monkeypatch):
    """A real queue (nothing runs until ``run_job``) and a request budget of 10 answers."""
    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(services, "REQUEST_SCORING_ANSWERS", 10)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_page_over_the_budget_waits_for_one_job_then_shows_the_engines_scores(world, queued):
    c = world["c"]
    url = reverse("evaluation:run-list", args=[c.slug])
    first = client_for(world["organizer"]).get(url)
    assert first.status_code == 202 and first["Retry-After"]
    html = first.content.decode()
    job = Job.objects.get(kind="scores")
    assert "Computing the scores" in html
    assert reverse("evaluation:scores-progress", args=[c.slug, job.pk]) in html
    assert 'hx-trigger="every 1s"' in html
    # the page scored and stored nothing; the job is the app's, not in anybody's list
    assert not RunScores.objects.exists()
    assert job.status == JobStatus.QUEUED and job.user is None and not job.listed
    # a participant arriving meanwhile, and the CSV download, follow the same job
    assert client_for(world["participant"]).get(url).status_code == 202
    csv = client_for(world["organizer"]).get(reverse("evaluation:run-list-csv", args=[c.slug]))
    assert csv.status_code == 202
    assert Job.objects.filter(kind="scores").count() == 1

    progress_url = reverse("evaluation:scores-progress", args=[c.slug, job.pk])
    waiting = client_for(world["participant"]).get(progress_url)
    assert waiting.status_code == 200 and "HX-Refresh" not in waiting
    assert run_job(job.pk).status == JobStatus.SUCCEEDED
    assert RunScores.objects.filter(run__collection=c).count() == len(world["runs"])
    done = client_for(world["participant"]).get(progress_url)
    assert done["HX-Refresh"] == "true" and "The scores are ready." in done.content.decode()

    page = client_for(world["organizer"]).get(url)
    assert page.status_code == 200
    config = page.context["config"]
    stored = services.score_runs(c, world["runs"], config)
    fresh = score_store.run_scores(collection=c, runs=world["runs"], config=config, budget=None)
    np.testing.assert_array_equal(stored.values, fresh.values)
    assert Job.objects.filter(kind="scores").count() == 1


def test_the_progress_is_for_those_who_see_the_scores(world, queued):
    c = world["c"]
    client_for(world["organizer"]).get(reverse("evaluation:run-list", args=[c.slug]))
    job = Job.objects.get(kind="scores")
    url = reverse("evaluation:scores-progress", args=[c.slug, job.pk])
    assert client_for(world["assessor"]).get(url).status_code == 403
    assert client_for(make_user(username="stranger")).get(url).status_code == 403
    other = Job.objects.create(kind="run-upload", label="x", func="x", collection=c)
    assert (
        client_for(world["organizer"])
        .get(reverse("evaluation:scores-progress", args=[c.slug, other.pk]))
        .status_code
        == 404
    )


def test_within_the_budget_or_without_a_worker_the_request_scores(world, settings, monkeypatch):
    c = world["c"]
    url = reverse("evaluation:run-list", args=[c.slug])
    # no worker (the immediate backend): the request scores, whatever the size
    monkeypatch.setattr(services, "REQUEST_SCORING_ANSWERS", 10)
    assert client_for(world["organizer"]).get(url).status_code == 200
    assert not Job.objects.filter(kind="scores").exists()
    # a worker, and a budget the work fits: scored in the request too
    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(services, "REQUEST_SCORING_ANSWERS", 10_000)
    RunScores.objects.all().delete()
    assert client_for(world["organizer"]).get(url).status_code == 200
    assert not Job.objects.filter(kind="scores").exists()


def test_the_budget_counts_the_answers_of_runs_without_scores_and_of_questions_judged_since(
    world,
):
    c, runs = world["c"], world["runs"]
    config = ScoreConfig(metrics=("q_measure", "rr"))
    answers = sum(r.answers.count() for r in runs)
    with pytest.raises(score_store.ScoresPending) as raised:
        score_store.run_scores(collection=c, runs=runs, config=config, budget=answers - 1)
    assert raised.value.answers == answers and not RunScores.objects.exists()
    score_store.run_scores(collection=c, runs=runs, config=config, budget=answers)
    assert RunScores.objects.count() == len(runs)
    # stored and current: nothing to score, a budget of 0 is enough
    score_store.run_scores(collection=c, runs=runs, config=config, budget=0)
    # one question judged since: its answers only
    question = c.questions.order_by("pk").first()
    type(question).objects.filter(pk=question.pk).update(version=question.version + 1)
    Collection.objects.filter(pk=c.pk).update(judgment_version=c.judgment_version + 1)
    on_it = sum(r.answers.filter(question=question).count() for r in runs)
    with pytest.raises(score_store.ScoresPending) as raised:
        score_store.run_scores(collection=c, runs=runs, config=config, budget=on_it - 1)
    assert raised.value.answers == on_it
    score_store.run_scores(collection=c, runs=runs, config=config, budget=on_it)


def test_the_api_answers_202_with_the_jobs_progress_then_the_scores(world, queued):
    c, run = world["c"], world["runs"][0]
    token = api_token_create(user=world["organizer"], name="script").secret
    headers = {"Authorization": f"Bearer {token}"}
    url = f"/api/collections/{c.slug}/runs/{run.pk}/scores"
    pending = Client().get(url, headers=headers)
    assert pending.status_code == 202 and pending["Retry-After"] == "3"
    body = pending.json()
    assert body["job"]["status"] == "queued" and body["retry_after"] == 3
    run_job(Job.objects.get(kind="scores").pk)
    got = Client().get(url, headers=headers)
    assert got.status_code == 200 and got.json()["run"]["name"] == run.name


def test_while_a_mode_change_holds_the_collection_the_page_asks_again(world, queued):
    c = world["c"]
    job_start(
        kind="matching-mode",
        label="Matching mode change",
        func="evaluation.matching_jobs.run_mode_change",
        user=world["organizer"],
        collection_id=c.pk,
        conflict=Conflict.EXCLUSIVE,
        params={"mode": "exact"},
    )
    response = client_for(world["organizer"]).get(reverse("evaluation:ranking", args=[c.slug]))
    assert response.status_code == 202 and response["Refresh"] == "5"
    assert "The scores wait for another job on this collection." in response.content.decode()
    assert not Job.objects.filter(kind="scores").exists()


def test_the_scores_job_is_queued_ahead_of_the_others(
    world, queued, django_capture_on_commit_callbacks
):
    from django_tasks_db.models import DBTaskResult

    c = world["c"]
    with django_capture_on_commit_callbacks(execute=True):
        job_start(
            kind="run-pool-all",
            label="Pool all runs",
            func="evaluation.run_jobs.runs_pool_all",
            user=world["organizer"],
            collection_id=c.pk,
        )
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(world["organizer"]).get(reverse("evaluation:run-list", args=[c.slug]))
    assert response.status_code == 202
    scores = Job.objects.get(kind="scores")
    tasks = {t.args_kwargs["args"][0]: t.priority for t in DBTaskResult.objects.all()}
    assert tasks[scores.pk] == 50 and list(tasks.values()).count(0) == 1
    assert DBTaskResult.objects.ready().first().args_kwargs["args"][0] == scores.pk
