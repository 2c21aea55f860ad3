"""In Chromium, the runs page of a campaign whose scores are too many for a request: the
page shows "Computing the scores" with the job waiting for a worker; a real worker
(``manage.py jobs_worker`` on PostgreSQL, a thread on SQLite: see test_run_upload_job)
scores every run, the bar ends, the page reloads itself and shows the runs with their
means, with no click."""

from __future__ import annotations

import pytest

from annotate.models import Collection, Role
from bench.campaign_data import Size, build
from evaluation import services
from evaluation.models import Run, RunScores
from jobs.models import Job, JobStatus
from tests.factories import add_member, make_user

from .conftest import login
from .test_run_upload_job import DATABASE_QUEUE, start_worker, stop_worker

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_runs_page_waits_for_its_scores_job_and_reloads_itself(
    page, live_server, settings, monkeypatch, tmp_path, artifacts
):
    from playwright.sync_api import expect

    settings.TASKS = DATABASE_QUEUE
    monkeypatch.setattr(services, "REQUEST_SCORING_ANSWERS", 100)
    campaign = build(Size(40, 6, 5), 7, reuse=False)
    c = Collection.objects.get(pk=campaign.collection_id)
    organizer = make_user(username="boss", password="boss-pw-12345")
    add_member(collection=c, user=organizer, role=Role.ORGANIZER)

    login(page, live_server, "boss", "boss-pw-12345")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/collections/{c.slug}/runs/")
    expect(page.locator("h1")).to_have_text("Computing the scores")
    panel = page.locator("#scores-job")
    expect(panel).to_have_attribute("data-status", "queued")
    assert not RunScores.objects.exists()
    page.screenshot(path=str(artifacts / "scores-job-waiting.png"), full_page=True)

    worker, log = start_worker(tmp_path / "worker.log")
    try:
        # the job ends, the fragment answers HX-Refresh and the page reloads as the runs page
        expect(page.locator("h1")).to_have_text("Runs", timeout=120_000)
    finally:
        stop_worker(worker, log)
    job = Job.objects.get(kind="scores")
    assert job.status == JobStatus.SUCCEEDED
    runs = Run.objects.filter(collection=c)
    assert RunScores.objects.filter(run__collection=c).count() == runs.count()
    for run in runs:
        expect(page.locator("#runs").get_by_role("link", name=run.name, exact=True)).to_be_visible()
    page.screenshot(path=str(artifacts / "scores-job-done.png"), full_page=True)
