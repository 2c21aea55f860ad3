"""The reliability report as a job (issue 24): a report too large for a request waits for
"Compute", which starts a job; the page then follows the job and shows its report, kept
per collection, judgment version, runs and configuration: reused for the same key (by
every organizer), computed again once a judgment changes.  Organizers only."""

from __future__ import annotations

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.utils import timezone

from annotate.models import AnswerString, Collection
from evaluation import reliability_jobs, reliability_report
from evaluation.metrics.reliability.tables import TABLES
from evaluation.models import Run
from evaluation.reliability_report import ReliabilityConfig
from jobs.models import Job, JobStatus
from jobs.runner import run_job
from tests.factories import add_member, make_user

pytestmark = pytest.mark.django_db

URL = "/collections/demo/reliability/"
COMPUTE = "/collections/demo/reliability/compute/"


@pytest.fixture
def large(monkeypatch):
    """Every report counts as large: the page waits for Compute."""
    monkeypatch.setattr("evaluation.reliability_views.INLINE_WORK", -1)


def login(client, name: str):
    client.force_login(get_user_model().objects.get(username=name))


def jobs() -> list[Job]:
    return list(Job.objects.filter(kind="reliability").order_by("id"))


def test_compute_starts_a_job_whose_report_the_page_shows_and_reuses(client, demo, large):
    login(client, "organizer")
    text = client.get(URL + "?trials=100").content.decode()
    assert 'id="reliability-compute"' in text and "<svg" not in text
    assert not jobs()  # asking for the page computes nothing
    response = client.post(COMPUTE, {"trials": 100, "metric": "q_measure", "seed": 0})
    assert response.status_code == 302
    assert response["Location"].startswith(URL + "?") and "trials=100" in response["Location"]
    (job,) = jobs()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert job.result["url"] == response["Location"]
    response = client.get(response["Location"])
    text = response.content.decode()
    assert text.count("<svg") == 3 and 'id="reliability-pairs"' in text
    # the same key: shown again, and asked again, from the job's file
    client.get(URL + "?trials=100")
    client.post(COMPUTE, {"trials": 100, "metric": "q_measure", "seed": 0})
    other = make_user(username="organizer2")
    add_member(collection=demo, user=other, role="organizer")
    client.force_login(other)
    assert client.get(URL + "?trials=100").context["page"] is not None
    assert len(jobs()) == 1
    # another configuration is another report
    assert client.get(URL + "?trials=101").context["page"] is None


def test_the_report_is_computed_again_after_a_judgment_changes(client, demo, large):
    login(client, "organizer")
    client.post(COMPUTE, {"trials": 60})
    assert client.get(URL + "?trials=60").context["page"] is not None
    string = AnswerString.objects.filter(question__collection=demo, synset__isnull=False).first()
    AnswerString.objects.filter(pk=string.pk).update(judged_at=timezone.now())
    Collection.objects.filter(pk=demo.pk).update(judgment_version=demo.judgment_version + 1)
    response = client.get(URL + "?trials=60")
    assert response.context["page"] is None
    assert 'id="reliability-compute"' in response.content.decode()
    client.post(COMPUTE, {"trials": 60})
    first, second = jobs()
    assert first.result["key"] != second.result["key"]
    assert client.get(URL + "?trials=60").context["page"] is not None


def test_organizers_asking_at_once_share_one_job(client, demo, large):
    """While a report is being computed, every organizer who opens the page sees its bar
    (polling the page), and Compute starts no second job."""
    login(client, "organizer")
    runs = list(Run.objects.visible_to(get_user_model().objects.get(username="organizer"), demo))
    config = ReliabilityConfig(trials=80)
    key = reliability_report.reliability_key(
        collection=demo, runs=sorted(runs, key=lambda r: r.name), config=config
    )
    running = Job.objects.create(
        kind="reliability",
        label="Reliability",
        func="evaluation.reliability_jobs.compute_report",
        user=get_user_model().objects.get(username="organizer"),
        collection=demo,
        status=JobStatus.RUNNING,
        params={"key": key, "config": {"trials": 80}, "runs": [r.pk for r in runs]},
        phase="Resampling: the figures of each metric",
        done=3000,
        total=12000,
        unit="bootstrap samples",
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        worker="elsewhere:1",
    )
    other = make_user(username="organizer2")
    add_member(collection=demo, user=other, role="organizer")
    client.force_login(other)
    text = client.get(URL + "?trials=80").content.decode()
    assert 'id="reliability-job"' in text and "3000 of 12000 bootstrap samples" in text
    assert "asked for by organizer" in text and f"/jobs/{running.pk}/" not in text
    assert 'hx-trigger="every 2s"' in text
    client.post(COMPUTE, {"trials": 80})
    assert jobs() == [running]
    login(client, "organizer")  # its owner may open the job (and cancel it there)
    assert f"/jobs/{running.pk}/" in client.get(URL + "?trials=80").content.decode()


def test_only_organizers_compute(client, demo):
    for name in ("participant", "assessor1"):
        login(client, name)
        assert client.post(COMPUTE, {"trials": 50}).status_code == 403
    assert not jobs()


def test_the_job_reports_bootstrap_samples_done(demo):
    organizer = get_user_model().objects.get(username="organizer")
    runs = list(Run.objects.visible_to(organizer, demo).order_by("name"))
    job = Job.objects.create(
        kind="reliability",
        label="Reliability",
        func="evaluation.reliability_jobs.compute_report",
        user=organizer,
        collection=demo,
        params={"key": "", "config": {"trials": 30}, "runs": [r.pk for r in runs]},
    )
    seen = []
    job = run_job(job.pk, listener=lambda s: seen.append((s.phase, s.done, s.total, s.unit)))
    assert job.status == JobStatus.SUCCEEDED, job.message
    resampling = [s for s in seen if s[3] == "bootstrap samples"]
    metrics = len(dict.fromkeys(["q_measure", *reliability_report.SUMMARY_METRICS]))
    assert resampling[-1][1:3] == (metrics * 30, metrics * 30)
    assert [s[1] for s in resampling] == sorted(s[1] for s in resampling)
    assert {s[0] for s in seen} >= {"Reading the runs", "Ranking under each gain profile"}


def plain(rows: list[dict]) -> str:
    """Rows of figures as text, numpy's floats as floats (NaN as NaN)."""
    import json

    return json.dumps(
        [{k: v.item() if isinstance(v, np.generic) else v for k, v in r.items()} for r in rows]
    )


def test_a_stored_report_gives_the_page_and_the_tables_of_the_computed_one(demo):
    organizer = get_user_model().objects.get(username="organizer")
    runs = list(Run.objects.visible_to(organizer, demo).order_by("name"))
    config = ReliabilityConfig(trials=40, seed=5)
    page = reliability_report.compute_reliability(collection=demo, runs=runs, config=config)
    data = reliability_report.reliability_dump(page)
    stored = reliability_report.reliability_load(data)
    for kind, table in TABLES.items():
        for precision in ("readable", "full"):
            assert table(stored.report, precision=precision) == table(
                page.report, precision=precision
            ), kind
    assert reliability_report.pair_rows(stored) == reliability_report.pair_rows(page)
    assert reliability_report.run_rows(stored) == reliability_report.run_rows(page)
    assert reliability_report.curves(stored.detail) == reliability_report.curves(page.detail)
    assert plain(stored.summary) == plain(page.summary)
    assert plain(stored.taus) == plain(page.taus)
    assert (stored.samples.trials, stored.samples.subset_size) == (40, page.samples.subset_size)
    assert np.array_equal(stored.detail.stability.gt_xy, page.detail.stability.gt_xy)
    light = reliability_report.reliability_load(data, report=False)
    assert light.report is None and light.detail is not None


def test_a_stored_report_is_read_without_pickle(demo):
    """The file holds arrays and JSON; a crafted one naming another class is refused."""
    import io
    import json

    page = reliability_report.Reliability(ReliabilityConfig(), problem="too few runs")
    data = reliability_report.reliability_dump(page)
    assert reliability_report.reliability_load(data).problem == "too few runs"
    skeleton = {
        "config": {"__type__": "Popen", "fields": {"args": "true"}},
        "runs": [],
        "questions": 0,
        "samples": None,
        "detail": None,
        "summary": [],
        "taus": [],
        "problem": None,
        "report": None,
    }
    buf = io.BytesIO()
    np.savez(buf, __report__=np.frombuffer(json.dumps(skeleton).encode(), dtype=np.uint8))
    with pytest.raises(KeyError):
        reliability_report.reliability_load(buf.getvalue())


def test_a_small_report_is_computed_in_the_request_by_the_job(client, demo):
    login(client, "organizer")
    response = client.get(URL + "?trials=70")
    assert response.context["page"] is not None
    (job,) = jobs()
    assert job.status == JobStatus.SUCCEEDED and job.user.get_username() == "organizer"
    found = reliability_jobs.finished_report(demo, job.result["key"])
    assert found is not None and found[0] == job


def test_a_small_report_computed_as_the_page_is_read_is_not_in_the_jobs_list(client, demo):
    """Reading the page computes a small report at once (kept as a job's file), but the
    reader asked for no job: their list of jobs stays as it was; Compute is listed."""
    login(client, "organizer")
    assert client.get(URL + "?trials=50").context["page"] is not None
    (job,) = jobs()
    assert job.status == JobStatus.SUCCEEDED and not job.listed
    assert "No jobs yet." in client.get("/jobs/").content.decode()
    client.post(COMPUTE, {"trials": 70, "metric": "q_measure", "seed": 0})
    listed = client.get("/jobs/").content.decode()
    assert "B = 70" in listed and "B = 50" not in listed
