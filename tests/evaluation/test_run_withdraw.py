"""Withdrawing and replacing a run: who may, all or nothing, the audit
trail, and a withdrawn run gone from every list, ranking, comparison, pooling and the API."""

from __future__ import annotations

import pytest
from django.core.cache import caches
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from annotate.exports import export_events
from annotate.models import JudgmentEvent
from api.services import api_token_create
from evaluation import services
from evaluation.analysis import score_config
from evaluation.metrics import InputError
from evaluation.models import Run
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

GOOD = b"Q1\t1\tParis\nQ2\t1\tRome\n"


@pytest.fixture
def world():
    caches["scores"].clear()
    c = make_collection(open_for_submissions=True, max_output_size=3)
    make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]], incorrect=["Lyon"])
    make_question(collection=c, qid="Q2", synsets=[[("Rome", "S")]], incorrect=["Milan"])
    users = {
        name: make_user(username=f"{name}-{c.slug}")
        for name in ("owner", "other", "organizer", "assessor")
    }
    users["staff"] = make_user(username=f"staff-{c.slug}", staff=True)
    for name, role in (
        ("owner", "participant"),
        ("other", "participant"),
        ("organizer", "organizer"),
        ("assessor", "assessor"),
    ):
        add_member(collection=c, user=users[name], role=role)
    run = make_run(
        collection=c, owner=users["owner"], name="mine", answers={"Q1": ["Lyon"], "Q2": ["Milan"]}
    )
    theirs = make_run(
        collection=c, owner=users["other"], name="theirs", answers={"Q1": ["Paris"], "Q2": ["Rome"]}
    )
    return {"c": c, "u": users, "run": run, "theirs": theirs}


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_owner_withdraws_while_open(world):
    run, owner = world["run"], world["u"]["owner"]
    services.run_withdraw(run=run, by=owner)
    run.refresh_from_db()
    assert run.withdrawn_at is not None and run.withdrawn_by == owner
    assert run.answers.count() == 2  # the record stays
    assert not Run.objects.active().filter(pk=run.pk).exists()
    event = JudgmentEvent.objects.get(collection=world["c"], action="withdraw_run")
    assert event.user == owner
    assert event.before["run_name"] == "mine" and event.before["answers"] == 2
    # the name is free again
    again = services.run_import(
        collection=world["c"], owner=owner, name="mine", data=GOOD, filename="again.tsv"
    )
    assert again.pk != run.pk


def test_owner_refused_when_closed_but_organizer_and_staff_always(world):
    c, u = world["c"], world["u"]
    c.open_for_submissions = False
    c.save()
    run = Run.objects.get(pk=world["run"].pk)
    with pytest.raises(PermissionDenied):
        services.run_withdraw(run=run, by=u["owner"])
    with pytest.raises(PermissionDenied):
        services.run_replace(run=run, data=GOOD, filename="r.tsv", by=u["owner"])
    assert (
        client_for(u["owner"]).post(f"/collections/{c.slug}/runs/{run.pk}/withdraw/").status_code
        == 403
    )
    services.run_replace(run=run, data=GOOD, filename="r.tsv", by=u["organizer"])
    services.run_withdraw(run=Run.objects.get(pk=world["theirs"].pk), by=u["staff"])
    services.run_withdraw(run=run, by=u["organizer"])
    assert Run.objects.filter(collection=c, withdrawn_at__isnull=False).count() == 2


@pytest.mark.parametrize("who", ["other", "assessor"])
def test_other_participant_and_assessor_get_403(world, who):
    c, u, run = world["c"], world["u"], world["run"]
    with pytest.raises(PermissionDenied):
        services.run_withdraw(run=run, by=u[who])
    if who == "other":  # sees the run once the leaderboard is published, without buttons
        c.leaderboard_published = True
        c.save()
        page = client_for(u[who]).get(f"/collections/{c.slug}/runs/{run.pk}/").content
        assert b"run-actions" not in page
    client = client_for(u[who])
    for page in ("withdraw", "replace"):
        assert client.get(f"/collections/{c.slug}/runs/{run.pk}/{page}/").status_code == 403
    assert client.post(f"/collections/{c.slug}/runs/{run.pk}/withdraw/").status_code == 403
    run.refresh_from_db()
    assert run.withdrawn_at is None


def test_withdraw_page_confirms_then_withdraws(world):
    c, run = world["c"], world["run"]
    client = client_for(world["u"]["owner"])
    detail = client.get(f"/collections/{c.slug}/runs/{run.pk}/").content.decode()
    assert "Withdraw" in detail and "Replace the file" in detail
    page = client.get(f"/collections/{c.slug}/runs/{run.pk}/withdraw/")
    assert page.status_code == 200 and b"Withdraw the run" in page.content
    run.refresh_from_db()
    assert run.withdrawn_at is None  # GET only asks
    done = client.post(f"/collections/{c.slug}/runs/{run.pk}/withdraw/")
    assert done.status_code == 302
    run.refresh_from_db()
    assert run.withdrawn_at is not None
    assert client.get(f"/collections/{c.slug}/runs/{run.pk}/").status_code == 404
    # organizers see it greyed in the runs list, with who and when
    org = client_for(world["u"]["organizer"])
    listing = org.get(f"/collections/{c.slug}/runs/").content.decode()
    assert "Withdrawn runs" in listing and "withdrawn by owner-" in listing


def test_replace_with_a_bad_file_changes_nothing_and_lists_errors_by_line(world):
    run, owner = world["run"], world["u"]["owner"]
    before = (run.sha256, list(run.answers.values_list("question__qid", "rank", "text")))
    bad = b"Q1\t1\tParis\nQ9\t1\tOslo\nQ2\tx\tRome\n"
    with pytest.raises(InputError) as e:
        services.run_replace(run=run, data=bad, filename="bad.tsv", by=owner)
    lines = [i.line for i in e.value.issues]
    assert 2 in lines and 3 in lines
    run.refresh_from_db()
    assert (run.sha256, list(run.answers.values_list("question__qid", "rank", "text"))) == before
    assert not JudgmentEvent.objects.filter(action="replace_run").exists()
    # the page shows them
    page = client_for(owner).post(
        f"/collections/{world['c'].slug}/runs/{run.pk}/replace/",
        {"format": "qa", "file": SimpleUploadedFile("bad.tsv", bad)},
    )
    assert page.status_code == 200
    body = page.content.decode()
    assert "The run was not changed" in body and "line 2:" in body and "line 3:" in body


def test_replace_with_a_good_file_changes_scores_and_writes_the_audit(world):
    c, run, owner = world["c"], world["run"], world["u"]["owner"]
    config = score_config.ScoreConfig(metrics=("rr",))
    assert services.score_runs(c, [run], config).means().loc["mine", "rr"] == 0
    old_sha = run.sha256
    client = client_for(owner)
    done = client.post(
        f"/collections/{c.slug}/runs/{run.pk}/replace/",
        {"format": "qa", "file": SimpleUploadedFile("good.tsv", GOOD)},
    )
    assert done.status_code == 302
    run = Run.objects.get(pk=run.pk)
    assert run.source_name == "good.tsv" and run.answers.count() == 2
    assert services.score_runs(c, [run], config).means().loc["mine", "rr"] == 1
    event = JudgmentEvent.objects.get(action="replace_run")
    assert event.before["sha256"] == old_sha and event.before["answers"] == 2
    assert event.after["source_name"] == "good.tsv" and event.after["answers"] == 2
    audit = export_events(c)
    assert "replace_run" in audit and old_sha in audit
    page = client.get(f"/collections/{c.slug}/runs/{run.pk}/").content.decode()
    assert "replaced the file" in page and "good.tsv (2 answers" in page


def test_withdrawn_runs_leave_rankings_compare_pool_and_api(world):
    c, u, run, theirs = world["c"], world["u"], world["run"], world["theirs"]
    c.leaderboard_published = True
    c.save()
    services.run_withdraw(run=run, by=u["organizer"])
    assert "withdraw_run" in export_events(c)
    org = client_for(u["organizer"])
    runs_page = org.get(f"/collections/{c.slug}/runs/").content.decode()
    assert f'/runs/{run.pk}/"' not in runs_page and f"/runs/{theirs.pk}/" in runs_page
    ranking = org.get(f"/collections/{c.slug}/ranking/").content.decode()
    assert ">mine<" not in ranking
    compare = org.get(f"/collections/{c.slug}/compare/?a={run.pk}&b={theirs.pk}")
    assert compare.status_code == 404
    assert org.post(f"/collections/{c.slug}/runs/{run.pk}/pool/").status_code == 404
    with pytest.raises(PermissionDenied):
        services.run_pool(run=Run.objects.get(pk=run.pk), by=u["organizer"])
    token = api_token_create(user=u["organizer"], name="t").secret
    api = Client(headers={"Authorization": f"Bearer {token}"})
    listed = api.get(f"/api/collections/{c.slug}/runs").json()
    assert [r["name"] for r in listed] == ["theirs"]
    assert api.get(f"/api/collections/{c.slug}/runs/{run.pk}").status_code == 404
    # nor can it be withdrawn twice
    with pytest.raises(PermissionDenied):
        services.run_withdraw(run=run, by=u["organizer"])


def test_api_delete_withdraws_for_the_owner_only(world):
    c, u, run = world["c"], world["u"], world["run"]
    url = f"/api/collections/{c.slug}/runs/{run.pk}"

    def api(user):
        return Client(
            headers={"Authorization": f"Bearer {api_token_create(user=user, name='t').secret}"}
        )

    assert api(u["other"]).delete(url).status_code == 403
    done = api(u["owner"]).delete(url)
    assert done.status_code == 200 and done.json()["withdrawn_by"] == u["owner"].username
    assert api(u["owner"]).get(url).status_code == 404
    assert api(u["organizer"]).delete(url).status_code == 404
    assert JudgmentEvent.objects.filter(action="withdraw_run").count() == 1


def test_archive_leaves_withdrawn_runs_out_and_keeps_their_events(world):
    from evaluation.archive.exporting import collection_export
    from evaluation.archive.importing import collection_import

    c, u, run = world["c"], world["u"], world["run"]
    services.run_pool(run=run, by=u["organizer"])
    services.run_withdraw(run=run, by=u["owner"])
    again = services.run_import(
        collection=c, owner=u["owner"], name="mine", data=GOOD, filename="again.tsv"
    )
    services.run_replace(run=again, data=b"Q1\t1\tParis\n", filename="less.tsv", by=u["organizer"])
    copy = collection_import(data=collection_export(collection=c), slug="copy-of-withdrawn")
    assert sorted(copy.runs.values_list("name", flat=True)) == ["mine", "theirs"]
    assert copy.runs.get(name="mine").answers.count() == 1
    actions = list(copy.events.values_list("action", flat=True))
    assert {"pool_run", "withdraw_run", "replace_run"} <= set(actions)
