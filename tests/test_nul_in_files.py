"""A NUL byte inside an imported file: no database text column can hold one (PostgreSQL
refuses it with a DataError, a 500), so every import kind -- questions, flat answers,
judgments, layers, runs and archives -- refuses the file with the parsers' one rule
(``evaluation.metrics.text_rules.control_issues``): an error naming the file and the line, and
nothing written.  Every way in: the import page's preview and its confirmation, the layers
upload of the agreement page, the command, the services.

Run on PostgreSQL as well (the layers CSV gave a 500 there):
DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_h5 \
.venv/bin/pytest tests/test_nul_in_files.py"""

import html
import io
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.imports import ImportRefused, collection_import, pending_import_create
from annotate.layer_io import layers_import
from annotate.models import AnswerString, JudgingLayer, Question
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import as archive_import
from evaluation.metrics import InputError
from evaluation.metrics.text_rules import NUL_BYTE
from evaluation.models import Run
from evaluation.services import run_import
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

# kind -> a file whose line 3 holds a NUL byte (inside the answer, where it reached the
# database) and whose other lines are good
FILES = {
    "questions": b"question_id,question\nQ2,Who?\nQ3,Wh\x00o?\n",
    "flat": b"question_id,answer\nQ1,Lennon\nQ1,Yo\x00ko\n",
    "judgments": b"question_id,synset_id,answer,level\nQ1,1,Lennon,S\nQ1,1,Yo\x00ko,S\n",
    "layers": (
        b"question_id,synset_id,answer,level,assessor,done\n"
        b"Q1,1,Lennon,S,ann,\nQ1,1,Yo\x00ko,S,ann,\n"
    ),
}


@pytest.fixture
def w():
    c = make_collection(slug="nul")
    org, ann = make_user(username="org"), make_user(username="ann")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=ann, role="assessor")
    make_question(collection=c, qid="Q1", unjudged=["Lennon"])
    return c, org


def snapshot():
    return (
        list(Question.objects.values_list("qid", "text")),
        list(AnswerString.objects.values_list("text", "judged_at")),
        JudgingLayer.objects.count(),
        Run.objects.count(),
    )


def refused_on_line_3(issues, filename):
    assert [(i.file, i.line) for i in issues] == [(filename, 3)], issues
    assert NUL_BYTE in issues[0].message


@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_service_refuses_a_nul_byte_naming_file_and_line(w, kind):
    c, org = w
    before = snapshot()
    with pytest.raises(ImportRefused) as e:
        collection_import(collection=c, kind=kind, data=FILES[kind], filename="f.csv", by=org)
    refused_on_line_3(e.value.issues, "f.csv")
    assert snapshot() == before


@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_import_page_and_its_confirmation_refuse_a_nul_byte(w, client, kind):
    c, org = w
    client.force_login(org)
    before = snapshot()
    r = client.post(
        reverse("annotate:collection-import", args=[c.slug]),
        {"kind": kind, "file": SimpleUploadedFile("f.csv", FILES[kind])},
    )
    assert r.status_code == 200
    page = html.unescape(r.content.decode())
    assert "f.csv:3" in page and NUL_BYTE in page
    assert 'name="token"' not in page  # no confirmation is offered
    # a preview made before the rule (or a file changed under it) is refused at the confirm
    token = pending_import_create(
        collection=c, user=org, kind=kind, filename="f.csv", data=FILES[kind]
    ).token
    r = client.post(reverse("annotate:collection-import-confirm", args=[c.slug]), {"token": token})
    assert r.status_code == 200
    page = html.unescape(r.content.decode())
    assert "f.csv:3" in page and NUL_BYTE in page
    assert snapshot() == before


def test_the_layers_upload_of_the_agreement_page_refuses_a_nul_byte(w, client):
    c, org = w
    client.force_login(org)
    before = snapshot()
    r = client.post(
        reverse("annotate:collection-layers-import", args=[c.slug]),
        {"file": SimpleUploadedFile("l.csv", FILES["layers"])},
        follow=True,
    )
    assert r.status_code == 200
    assert f"l.csv:3: {NUL_BYTE}" in html.unescape(r.content.decode())
    assert snapshot() == before
    result = layers_import(collection=c, data=FILES["layers"], filename="l.csv", by=org)
    refused_on_line_3(result.issues, "l.csv")


@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_command_refuses_a_nul_byte(w, tmp_path, kind):
    c, _ = w
    path = tmp_path / "f.csv"
    path.write_bytes(FILES[kind])
    before = snapshot()
    with pytest.raises(CommandError, match=f"f.csv:3: {NUL_BYTE}"):
        call_command("import_judgments", c.slug, str(path), "--kind", kind)
    assert snapshot() == before


@pytest.mark.parametrize(
    "data",
    [
        b"Q1\t1\tLennon\nQ1\t2\tJohn\nQ1\t3\tYo\x00ko\n",
        b"question_id,rank,answer\nQ1,1,Lennon\nQ1,2,Yo\x00ko\n",
    ],
    ids=["tsv", "csv"],
)
def test_a_run_with_a_nul_byte_is_refused(w, data):
    c, org = w
    with pytest.raises(InputError) as e:
        run_import(collection=c, owner=org, name="r", data=data, filename="r.tsv", fmt="qa")
    refused_on_line_3(e.value.issues, "r.tsv")
    assert not Run.objects.exists()


def test_an_archive_with_a_nul_byte_is_refused(w):
    c, _ = w
    src = zipfile.ZipFile(io.BytesIO(collection_export(collection=c)))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in src.namelist():
            body = src.read(name)
            z.writestr(name, body.replace(b"Lennon", b"Len\x00non"))
    with pytest.raises(InputError) as e:
        archive_import(data=buf.getvalue(), slug="nul-copy", filename="a.zip")
    assert e.value.issues
    for issue in e.value.issues:  # strings.csv (the string) and run answers, if any
        assert issue.file.startswith("a.zip:") and issue.line is not None
        assert "NUL byte" in issue.message
    assert not Question.objects.filter(collection__slug="nul-copy").exists()
