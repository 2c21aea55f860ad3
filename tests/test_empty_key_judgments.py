"""A judged answer whose matching key is empty ("..." under ``normalized``, "the" or "A"
under ``squad``) is refused by every reader of judgments with one message naming the file,
the line and the question (docs/formats.md, "empty key"; DESIGN.md section 4: an empty key
matches nothing, so such a judgment could never credit an answer): the engine's judgments
parser (``qa-score``, ``manage.py score``), the web import of judgments and of layers, the
flat answer list, and a collection archive.  A run answer whose key is empty is still
accepted: it just matches nothing."""

import html
import io
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from annotate.imports import ImportRefused, collection_import, import_plan
from annotate.models import AnswerString, JudgingLayer
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import as archive_import
from evaluation.metrics import InputError, evaluate
from evaluation.metrics.judgment_parsers import parse_judgments_csv
from evaluation.metrics.parsers import parse_qa_run
from tests.factories import add_member, make_collection, make_question, make_user

ROOT = Path(__file__).resolve().parents[1]


def message(qid: str, answer: str, match: str = "normalized") -> str:
    return (
        f"question {qid!r}: answer {answer!r} has an empty matching key under {match} "
        "matching (an empty key matches nothing): leave it out"
    )


# line 3 judges "...", line 5 (squad) judges "the"
JUDGMENTS = b"question_id,synset_id,answer,level\nQ1,1,Lennon,S\nQ1,1,...,S\nQ2,1,Ono,S\n"
QUOTED = b'question_id,synset_id,answer,level\nQ1,1,"Lennon, John",S\nQ1,,"...",\nQ2,1,Ono,S\n'
SQUAD = JUDGMENTS + b"Q2,,the,\n"


# -- the engine's parser: qa-score and manage.py score ---------------------------------------
@pytest.mark.parametrize("data", [JUDGMENTS, QUOTED], ids=["plain", "quoted"])
def test_the_judgments_parser_refuses_a_judged_answer_whose_key_is_empty(data):
    """Both readers: the plain file's whole-column reader and the line reader."""
    with pytest.raises(InputError) as e:
        parse_judgments_csv(data, filename="j.csv")
    assert [str(i) for i in e.value.issues] == [f"j.csv:3: {message('Q1', '...')}"]
    with pytest.raises(InputError) as e:
        parse_judgments_csv(SQUAD, filename="j.csv", match="squad")
    assert [str(i) for i in e.value.issues] == [
        f"j.csv:3: {message('Q1', '...', 'squad')}",
        f"j.csv:5: {message('Q2', 'the', 'squad')}",
    ]
    # under exact matching every answer that is not blank has a key
    assert parse_judgments_csv(data, filename="j.csv", match="exact").nq == 2


def test_with_the_other_errors_of_the_file_in_line_order():
    data = JUDGMENTS + b"Q1,2,lennon,A\nQ2,1,Yoko,Z\n"
    with pytest.raises(InputError) as e:
        parse_judgments_csv(data, filename="j.csv")
    assert [(i.line, i.message[:20]) for i in e.value.issues] == [
        (3, message("Q1", "...")[:20]),
        (5, "question 'Q1': \"lenn"),
        (6, "unknown level 'Z' (e"),
    ]


def test_a_run_answer_whose_key_is_empty_is_still_read_and_matches_nothing():
    j = parse_judgments_csv(b"question_id,synset_id,answer,level\nQ1,1,Lennon,S\n")
    run = parse_qa_run(b"Q1\t1\t...\nQ1\t2\tlennon\n", filename="r.tsv")
    assert evaluate(j, [run], ["rr"]).per_question["r"].at["Q1", "rr"] == 0.5


@pytest.mark.django_db
def test_manage_py_score_and_qa_score_print_it(tmp_path):
    j = tmp_path / "j.csv"
    j.write_bytes(JUDGMENTS)
    r = tmp_path / "r.tsv"
    r.write_text("Q1\t1\tLennon\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("score", "--judgments", str(j), str(r), stdout=io.StringIO(), stderr=err)
    assert f"{j}:3: {message('Q1', '...')}" in err.getvalue()
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "-m", "evaluation.metrics.cli", "--judgments", str(j), str(r)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode != 0
    assert f"{j}:3: {message('Q1', '...')}" in done.stderr


# -- the web imports and the archive ---------------------------------------------------------
@pytest.fixture
def w(db):
    c = make_collection(slug="ek")
    org, ann = make_user(username="org"), make_user(username="ann")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=ann, role="assessor")
    make_question(collection=c, qid="Q1", unjudged=["Lennon"])
    make_question(collection=c, qid="Q2")
    return c, org


FILES = {
    "judgments": JUDGMENTS,
    "layers": (
        b"question_id,synset_id,answer,level,assessor,done\n"
        b"Q1,1,Lennon,S,ann,\nQ1,1,...,S,ann,\nQ2,1,Ono,S,ann,\n"
    ),
    "flat": b"question_id,answer\nQ1,John\nQ1,...\nQ2,Ono\n",
}


@pytest.mark.parametrize("kind", sorted(FILES))
def test_the_web_imports_refuse_it_with_the_same_message(w, client, kind):
    c, org = w
    plan = import_plan(collection=c, kind=kind, data=FILES[kind], filename="f.csv")
    assert [str(i) for i in plan.issues] == [f"f.csv:3: {message('Q1', '...')}"]
    with pytest.raises(ImportRefused):
        collection_import(collection=c, kind=kind, data=FILES[kind], filename="f.csv", by=org)
    client.force_login(org)
    r = client.post(
        reverse("annotate:collection-import", args=[c.slug]),
        {"kind": kind, "file": SimpleUploadedFile("f.csv", FILES[kind])},
    )
    assert f"f.csv:3: {message('Q1', '...')}" in html.unescape(r.content.decode())
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["Lennon"]
    assert not JudgingLayer.objects.exists()


def test_an_archive_refuses_a_string_whose_key_is_empty(w):
    c, _ = w
    src = zipfile.ZipFile(io.BytesIO(collection_export(collection=c)))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name in src.namelist():
            body = src.read(name).decode()
            if name == "strings.csv":
                body = body.replace(",Lennon,", ",...,").replace(",lennon,", ",,")
            z.writestr(name, body)
    with pytest.raises(InputError) as e:
        archive_import(data=buf.getvalue(), slug="ek-copy", filename="a.zip")
    assert [str(i) for i in e.value.issues] == [f"a.zip:strings.csv:2: {message('Q1', '...')}"]
