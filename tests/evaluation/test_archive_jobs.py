"""The archive as jobs (issue 24): Export archive makes the archive as a job's file, which
its starter downloads; Import archive makes a collection of it in a job; the round trip
gives what the commands give.  A refused archive fails its job with every problem, each
with its member and line, and writes nothing; only organizers export and only those who
may create a collection import."""

from __future__ import annotations

import io
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from annotate.models import Collection, Membership
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import
from evaluation.metrics import InputError
from jobs.models import Job, JobOutput, JobStatus
from jobs.runner import run_job
from jobs.services import job_start
from tests.evaluation.test_archive import (
    everything_else,
    judgments,
    manifest,
    rewrite,
    scores,
)
from tests.factories import add_member, make_user

pytestmark = pytest.mark.django_db


def user(name: str):
    return get_user_model().objects.get(username=name)


def login(client, name: str):
    client.force_login(user(name))


def export_url(c: Collection) -> str:
    return reverse("evaluation:archive-export", args=[c.slug])


IMPORT_URL = "/archives/import/"


def members(data: bytes) -> dict[str, bytes]:
    """The archive's members, the manifest without the time of the export."""
    z = zipfile.ZipFile(io.BytesIO(data))
    out = {name: z.read(name) for name in z.namelist()}
    out["manifest.json"] = b"\n".join(
        line for line in out["manifest.json"].splitlines() if b'"exported_at"' not in line
    )
    return out


def export_through_the_page(client, c: Collection) -> tuple[Job, bytes]:
    """Export ``c`` from its page; the job and the archive downloaded from it."""
    response = client.post(export_url(c))
    job = Job.objects.get(kind="archive-export", collection=c)
    assert response.status_code == 302 and response["Location"] == f"/jobs/{job.pk}/"
    assert job.status == JobStatus.SUCCEEDED, job.message
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    output = job.outputs.get()
    link = f"/jobs/{job.pk}/files/{output.pk}/"
    assert link in page and f"Download {c.slug}.zip" in page
    download = client.get(link)
    assert download.status_code == 200 and download["Content-Type"] == "application/zip"
    return job, download.content


def test_the_pages_round_trip_equals_the_commands(client, demo, tmp_path):
    login(client, "organizer")
    job, data = export_through_the_page(client, demo)
    assert job.result["rows"] > 0 and job.result["url"].startswith(f"/jobs/{job.pk}/files/")
    # the commands' archive, member for member
    path = tmp_path / "demo.zip"
    call_command("export_collection", "demo", str(path), stdout=io.StringIO())
    assert members(data) == members(path.read_bytes())
    # the page imports it as the command does
    upload = io.BytesIO(data)
    upload.name = "demo.zip"
    response = client.post(IMPORT_URL, {"file": upload, "slug": "demo-page", "name": ""})
    assert response.status_code == 302 and response["Location"] == "/collections/demo-page/"
    call_command("import_collection", str(path), "--slug", "demo-cli", stdout=io.StringIO())
    page, cli = Collection.objects.get(slug="demo-page"), Collection.objects.get(slug="demo-cli")
    assert judgments(page) == judgments(cli) == judgments(demo)
    # the page's importer organizes the new collection (the organizer already did)
    assert everything_else(page) == everything_else(cli) == everything_else(demo)
    a, b = scores(page), scores(cli)
    assert list(a) == list(b)
    for name in a:
        assert a[name].equals(b[name])
    imported = Job.objects.get(kind="archive-import", params__slug="demo-page")
    assert imported.status == JobStatus.SUCCEEDED and imported.input is None
    assert imported.result["slug"] == "demo-page"


def test_the_importer_becomes_an_organizer_of_the_new_collection(client, demo):
    """A creator who is not in the archive's members organizes the collection it makes."""
    creator = make_user(username="creator")
    add_member(
        collection=Collection.objects.create(slug="own", name="Own"), user=creator, role="organizer"
    )
    client.force_login(creator)
    upload = io.BytesIO(collection_export(collection=demo))
    upload.name = "demo.zip"
    response = client.post(IMPORT_URL, {"file": upload, "slug": "mine", "name": "Mine"})
    assert response.status_code == 302
    c = Collection.objects.get(slug="mine")
    assert c.name == "Mine"
    assert Membership.objects.get(collection=c, user=creator).role == "organizer"


BAD = dict(
    manifest_json=manifest(lambda m: m["levels"][0].update(gain=-1)),
    questions_csv=lambda t: t + t.splitlines()[1] + "\n",
    run_answers_csv=lambda t: t + "AF,NO-SUCH-Q,1,x,x,\nAF,EX1-BEATLES,0,y,y,abc\n",
)


def test_an_archive_with_errors_fails_its_job_with_every_error_listed(client, demo):
    data = rewrite(collection_export(collection=demo), **BAD)
    with pytest.raises(InputError) as refused:
        collection_import(data=data, slug="bad", filename="bad.zip")
    expected = [
        {"file": i.file, "line": i.line, "message": i.message} for i in refused.value.issues
    ]
    files = {e["file"] for e in expected}
    assert {"bad.zip:manifest.json", "bad.zip:questions.csv", "bad.zip:run_answers.csv"} <= files
    lines = [e["line"] for e in expected if e["file"] == "bad.zip:run_answers.csv"]
    # the unknown question, then the bad rank and the bad score of the next line
    assert len(lines) == 3 and lines[1] == lines[2] == lines[0] + 1
    login(client, "organizer")
    upload = io.BytesIO(data)
    upload.name = "bad.zip"
    response = client.post(IMPORT_URL, {"file": upload, "slug": "bad", "name": ""})
    assert response.status_code == 200
    job = Job.objects.get(kind="archive-import")
    assert job.status == JobStatus.FAILED
    assert job.message == "The archive was not imported; nothing was written."
    assert job.errors == expected
    text = response.content.decode()
    assert f"{len(expected)} problems found" in text
    for e in expected:
        where = f"{e['file']}, line {e['line']}: " if e["line"] else f"{e['file']}: "
        assert where in text
    assert not Collection.objects.filter(slug="bad").exists()


def test_a_problem_met_while_the_answers_stream_in_writes_nothing(demo):
    """An archive whose only problem is in run_answers.csv is checked as it is written: the
    job fails with that member's problems (a rank given twice among them) and the
    transaction leaves nothing."""
    data = rewrite(
        collection_export(collection=demo), run_answers_csv=lambda t: t + t.splitlines()[1] + "\n"
    )
    organizer = user("organizer")
    job = job_start(
        kind="archive-import",
        label="import",
        func="evaluation.archive_jobs.import_archive",
        user=organizer,
        params={"slug": "dup", "name": ""},
        input=data,
        input_name="dup.zip",
    )
    assert job.status == JobStatus.FAILED
    assert job.errors, job.message
    assert all(e["file"] == "dup.zip:run_answers.csv" and e["line"] > 2 for e in job.errors)
    assert any(e["message"].endswith("appears twice") for e in job.errors)
    assert not Collection.objects.filter(slug="dup").exists()
    assert not get_user_model().objects.filter(username__startswith="dup").exists()


def test_a_participant_can_neither_export_nor_import(client, demo):
    for name in ("participant", "assessor1"):
        login(client, name)
        assert client.get(export_url(demo)).status_code == 403
        assert client.post(export_url(demo)).status_code == 403
        assert client.get(IMPORT_URL).status_code == 403
        upload = io.BytesIO(collection_export(collection=demo))
        upload.name = "demo.zip"
        assert client.post(IMPORT_URL, {"file": upload, "slug": "x"}).status_code == 403
    assert not Job.objects.exists()
    assert not Collection.objects.filter(slug="x").exists()


def test_the_job_functions_check_their_user_too(demo):
    """A job runs as the user who started it: one not allowed fails, writing nothing."""
    participant = user("participant")
    export = job_start(
        kind="archive-export",
        label="export",
        func="evaluation.archive_jobs.export_archive",
        user=participant,
        collection_id=demo.pk,
    )
    assert export.status == JobStatus.FAILED
    assert export.message == "Only an organizer of the collection may export it."
    assert not JobOutput.objects.exists()
    imported = job_start(
        kind="archive-import",
        label="import",
        func="evaluation.archive_jobs.import_archive",
        user=participant,
        params={"slug": "sneaky"},
        input=collection_export(collection=demo),
        input_name="demo.zip",
    )
    assert imported.status == JobStatus.FAILED
    assert not Collection.objects.filter(slug="sneaky").exists()


def test_the_archive_is_its_owners_download_only(client, demo):
    login(client, "organizer")
    job, _ = export_through_the_page(client, demo)
    output = job.outputs.get()
    link = f"/jobs/{job.pk}/files/{output.pk}/"
    other = make_user(username="organizer2")
    add_member(collection=demo, user=other, role="organizer")
    client.force_login(other)
    assert client.get(link).status_code == 404
    assert client.get(f"/jobs/{job.pk}/").status_code == 404
    login(client, "participant")
    assert client.get(link).status_code == 404


def test_a_large_export_answers_with_the_jobs_panel_for_htmx(client, demo, monkeypatch):
    """htmx: the job's panel takes the form's place (here the job has already ended, as
    the test queue runs it at once): its download link."""
    monkeypatch.setattr("evaluation.archive_jobs.INLINE_EXPORT_ROWS", 0)
    login(client, "organizer")
    response = client.post(export_url(demo), headers={"HX-Request": "true"})
    job = Job.objects.get(kind="archive-export")
    text = response.content.decode()
    assert f'id="job-{job.pk}"' in text and "Download demo.zip" in text
    page = client.get(export_url(demo)).content.decode()
    assert f'href="/jobs/{job.pk}/"' in page  # the recent exports


def test_the_job_reports_its_phases(demo):
    """Members read, rows checked and written: the phases a worker's bar shows."""
    seen = []
    organizer = user("organizer")
    job = Job.objects.create(
        kind="archive-import",
        label="import",
        func="evaluation.archive_jobs.import_archive",
        user=organizer,
        params={"slug": "phases", "name": ""},
        input=collection_export(collection=demo),
        input_name="demo.zip",
    )
    job = run_job(job.pk, listener=lambda snap: seen.append((snap.phase, snap.unit)))
    assert job.status == JobStatus.SUCCEEDED, job.errors
    phases = list(dict.fromkeys(seen))
    assert phases[0] == ("Reading the archive", "members read")
    assert phases[-1] == ("Writing", "rows written")
    assert job.done == job.total and job.unit == "rows written"


def test_the_commands_print_progress_and_errors_without_a_traceback(demo, tmp_path):
    path = tmp_path / "demo.zip"
    err = io.StringIO()
    call_command("export_collection", "demo", str(path), stdout=io.StringIO(), stderr=err)
    assert "Writing the archive:" in err.getvalue()
    assert not JobOutput.objects.exists()  # the file is where the command put it
    assert Job.objects.get(kind="archive-export").params == {"cli": True}
    bad = tmp_path / "bad.zip"
    bad.write_bytes(rewrite(path.read_bytes(), **BAD))
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was written"):
        call_command("import_collection", str(bad), "--slug", "y", stdout=io.StringIO(), stderr=err)
    text = err.getvalue()
    assert "bad.zip:manifest.json: level 1: gain -1" in text
    assert "bad.zip:run_answers.csv:" in text and "unknown question 'NO-SUCH-Q'" in text
    assert "Traceback" not in text
