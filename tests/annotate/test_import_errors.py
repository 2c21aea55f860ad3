"""Every error of an imported file at once, each with its line number, sorted by line: the
parser's errors and the importer's checks against the collection in one list, on the
preview page, the confirm and the command alike (the preview runs the confirm's checks)."""

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotate.imports import ImportRefused, collection_import, import_plan
from annotate.models import AnswerString, Question
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def lines(plan):
    return [i.line for i in plan.issues]


def test_judgments_syntax_unknown_question_and_disagreement_in_one_list():
    c = make_collection()
    make_question(collection=c, qid="Q1", synsets=[[("old", "S")]])
    bad = (
        "question_id,synset_id,answer,level\n"
        "Q1,1,Paris,S\n"
        "Q9,1,Rome,S\n"  # line 3: unknown question
        "Q1,2,paris,A\n"  # line 4: the same string judged otherwise
        "Q1,1,Lyon,Z\n"  # line 5: unknown level (the parser's check)
        "Q8,,Oslo,\n"  # line 6: unknown question
        "Q1,1,,S\n"
    )  # line 7: no answer (the parser's check)
    plan = import_plan(collection=c, kind="judgments", data=bad.encode(), filename="j.csv")
    assert lines(plan) == [3, 4, 5, 6, 7]
    messages = [i.message for i in plan.issues]
    assert messages[0] == "unknown question 'Q9'"
    assert "one string has one judgment" in messages[1]
    assert "unknown level 'Z'" in messages[2]
    assert messages[3] == "unknown question 'Q8'"
    assert "empty answer" in messages[4]
    with pytest.raises(ImportRefused) as e:
        collection_import(collection=c, kind="judgments", data=bad.encode(), filename="j.csv")
    assert [i.line for i in e.value.issues] == [3, 4, 5, 6, 7]
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["old"]


def test_flat_answers_parser_and_collection_errors_together():
    c = make_collection()
    make_question(collection=c, qid="Q1")
    bad = b"question_id,answer\nQ7,y\nQ1,\nQ1,x\n,z\nQ6,w\n"
    plan = import_plan(collection=c, kind="flat", data=bad, filename="a.csv")
    assert [(i.line, i.message) for i in plan.issues] == [
        (2, "unknown question 'Q7'"),
        (3, "empty answer for question 'Q1'"),
        (5, "empty question_id"),
        (6, "unknown question 'Q6'"),
    ]


def test_questions_whose_ids_collide_once_unquoted_are_refused_in_the_preview():
    c = make_collection()
    data = b"question_id,question\n'=A1,First?\n=A1,Second?\nQ2,Third?\nQ2,Again?\n"
    plan = import_plan(collection=c, kind="questions", data=data, filename="q.csv")
    assert lines(plan) == [3, 5]
    assert "'=A1'" in plan.issues[0].message and "line 2" in plan.issues[0].message
    assert "repeats line 4" in plan.issues[1].message
    with pytest.raises(ImportRefused):  # the confirm refuses it the same way: no 500
        collection_import(collection=c, kind="questions", data=data, filename="q.csv")
    assert not Question.objects.filter(collection=c).exists()


def test_the_page_shows_every_error_and_never_offers_a_confirm_that_would_fail(client):
    c = make_collection(slug="errs")
    make_question(collection=c, qid="Q1")
    client.force_login(make_user(staff=True))
    body = "question_id,answer\n" + "".join(
        f"Q9,a{i}\n" if i % 2 else "Q1,\n" for i in range(1, 301)
    )
    r = client.post(
        "/collections/errs/import/",
        {"kind": "flat", "file": SimpleUploadedFile("a.csv", body.encode())},
    )
    page = html.unescape(r.content.decode())
    plan = r.context["plan"]
    assert not plan.ok and len(plan.issues) == 300
    assert "300 errors, nothing imported" in page
    assert page.count("<li>a.csv:") == 300  # all of them, not the first 200
    assert "a.csv:300: unknown question 'Q9'" in page
    assert "a.csv:301: empty answer for question 'Q1'" in page
    assert lines(plan) == sorted(lines(plan))
    qfile = b"question_id,question\n'+1,One?\n+1,Plus one?\n"
    r = client.post(
        "/collections/errs/import/",
        {"kind": "questions", "file": SimpleUploadedFile("q.csv", qfile)},
    )
    page = html.unescape(r.content.decode())
    assert "Confirm the import" not in page and "q.csv:3:" in page


def test_the_command_prints_every_error(tmp_path):
    c = make_collection(slug="cmd")
    make_question(collection=c, qid="Q1")
    p = tmp_path / "j.csv"
    p.write_text(
        "question_id,synset_id,answer,level\n"
        + "".join(f"QX{i},1,a,S\n" for i in range(70))
        + "Q1,1,b,Z\n"
    )
    with pytest.raises(CommandError) as e:
        call_command("import_judgments", "cmd", str(p))
    text = str(e.value)
    assert "71 error(s)" in text
    assert "j.csv:71: unknown question 'QX69'" in text
    assert text.rstrip().endswith("j.csv:72: unknown level 'Z' (expected one of S, A, B)")


def test_a_confirm_that_no_longer_passes_lists_every_error_on_the_page(client):
    c = make_collection(slug="late")
    make_question(collection=c, qid="Q1")
    make_question(collection=c, qid="Q2")
    client.force_login(make_user(staff=True))
    data = b"question_id,answer\nQ1,a\nQ2,b\nQ2,c\n"
    r = client.post(
        "/collections/late/import/", {"kind": "flat", "file": SimpleUploadedFile("a.csv", data)}
    )
    token = r.content.decode().split('name="token" value="')[1].split('"')[0]
    Question.objects.filter(collection=c, qid="Q2").delete()  # meanwhile
    r = client.post("/collections/late/import/confirm/", {"token": token})
    page = html.unescape(r.content.decode())
    assert r.status_code == 200 and "2 errors, nothing imported" in page
    assert "a.csv:3: unknown question 'Q2'" in page and "a.csv:4: unknown question 'Q2'" in page
    assert not AnswerString.objects.filter(question__collection=c).exists()
