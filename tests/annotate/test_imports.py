"""Imports (validated completely first, all or nothing) and formula-safe exports."""

import csv
import io

import pytest
from django.core.management import call_command

from annotate.exports import export_events, export_judgments, export_questions
from annotate.imports import ImportRefused, collection_import, import_plan
from annotate.models import AnswerString, AnswerSynset, Question
from evaluation.metrics.csvio import neutralise, restore
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def judgments_of(collection):
    """{qid: (frozenset of synsets as frozensets of (text, level)), frozenset(incorrect))}"""
    out = {}
    for q in Question.objects.filter(collection=collection):
        syns = frozenset(
            frozenset((s.text, s.level.code) for s in syn.strings.all())
            for syn in AnswerSynset.objects.filter(question=q)
        )
        wrong = frozenset(
            AnswerString.objects.filter(
                question=q, synset__isnull=True, judged_at__isnull=False
            ).values_list("text", flat=True)
        )
        ordinals = list(
            AnswerSynset.objects.filter(question=q)
            .order_by("ordinal")
            .values_list("strings__text", flat=True)
            .distinct()
        )
        out[q.qid] = (syns, wrong, ordinals)
    return out


def test_formula_safe_round_trips():
    for s in ["=SUM(A1)", "+81 3", "-5 degrees", "@home", "'=x", "''", "'plain", "plain", ""]:
        assert restore(neutralise(s)) == s
    assert neutralise("=1+1") == "'=1+1" and neutralise("\tx") == "'\tx"
    # a hand-made file's quotes stay unless a formula character follows them
    assert restore("''Snow Country''") == "''Snow Country''" and restore("'=x") == "=x"


def test_export_reimports_identically_into_an_empty_collection(demo):
    q = Question.objects.get(collection=demo, qid="EX2-DVD")
    AnswerString.objects.filter(question=q, text="Digital Vinyl Disk").update(text="=cmd|x")
    text = export_judgments(demo)
    header = next(csv.reader(io.StringIO(text)))
    assert header == [
        "question_id",
        "synset_id",
        "answer",
        "level",
        "question",
        "assessor",
        "updated",
    ]
    assert "'=cmd|x" in text
    fresh = make_collection(slug="fresh")
    questions = export_questions(demo)
    collection_import(collection=fresh, kind="questions", data=questions.encode(), filename="q.csv")
    plan = collection_import(
        collection=fresh, kind="judgments", data=text.encode(), filename="j.csv"
    )
    assert (
        plan.counts["synsets to create"]
        == AnswerSynset.objects.filter(question__collection=demo).count()
    )
    assert judgments_of(fresh) == judgments_of(demo)
    assert export_judgments(fresh).split("\n")[1:] != []  # and again, same rows
    strip = lambda t: [r[:4] for r in csv.reader(io.StringIO(t))]  # noqa: E731
    assert strip(export_judgments(fresh)) == strip(text)
    fresh.refresh_from_db()
    assert fresh.judgment_version == 1
    assert "judgments_import" in export_events(fresh)


def test_judgments_import_errors_with_line_numbers_and_nothing_written():
    c = make_collection()
    make_question(collection=c, qid="Q1", synsets=[[("old", "S")]])
    bad = (
        "question_id,synset_id,answer,level\n"
        "Q1,1,Paris,S\n"
        "Q1,2,paris,A\n"  # line 3: the same string in a second synset
        "Q9,1,Rome,S\n"  # line 4: unknown question
        "Q1,1,Lyon,Z\n"
    )  # line 5: unknown level (the parser's check)
    plan = import_plan(collection=c, kind="judgments", data=bad.encode(), filename="j.csv")
    # the parser's row errors and the import's checks at once, in line order
    assert [i.line for i in plan.issues] == [3, 4, 5]
    assert "one string has one judgment" in plan.issues[0].message
    assert "unknown question 'Q9'" in plan.issues[1].message
    assert "unknown level" in plan.issues[2].message
    with pytest.raises(ImportRefused):
        collection_import(collection=c, kind="judgments", data=bad.encode(), filename="j.csv")
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["old"]


def test_questions_and_flat_imports_preview_then_write():
    c = make_collection()
    make_question(collection=c, qid="Q1", text="Old text?", synsets=[[("Paris", "S")]])
    data = b"question_id,question,topic\nQ1,New text?,geo\nQ2,Second?,geo\n"
    plan = import_plan(collection=c, kind="questions", data=data, filename="q.csv")
    assert plan.counts == {
        "questions to create": 1,
        "questions to update": 1,
        "questions unchanged": 0,
    }
    assert Question.objects.filter(collection=c).count() == 1  # a preview writes nothing
    collection_import(collection=c, kind="questions", data=data, filename="q.csv")
    assert Question.objects.get(collection=c, qid="Q1").text == "New text?"
    flat = b"question_id,answer\nQ1,paris\nQ1,Lyon\nQ2,Tokyo\nQ2,tokyo\n"
    plan = collection_import(collection=c, kind="flat", data=flat, filename="a.csv")
    assert plan.counts["candidate strings to add"] == 2
    assert plan.counts["rows naming a string already there or earlier in the file"] == 2
    assert plan.counts["spellings kept as variants"] == 2  # paris (of Paris), tokyo
    assert set(AnswerString.objects.filter(source="flat").values_list("text", flat=True)) == {
        "Lyon",
        "Tokyo",
    }
    assert AnswerString.objects.get(text="Tokyo").variants == ["tokyo"]
    assert AnswerString.objects.get(text="Paris").variants == ["paris"]
    bad = b"question_id,answer\nQ1,x\nQ7,y\nQ1,\n"
    plan = import_plan(collection=c, kind="flat", data=bad, filename="a.csv")
    assert [i.line for i in plan.issues] == [3, 4]  # unknown question, empty answer
    plan = import_plan(
        collection=c, kind="flat", data=b"question_id,answer\nQ7,y\n", filename="a.csv"
    )
    assert [(i.line, i.message) for i in plan.issues] == [(2, "unknown question 'Q7'")]
    plan = import_plan(collection=c, kind="questions", data=b"qid,text\n", filename="q.csv")
    assert plan.issues and plan.issues[0].line == 1


def test_management_commands_round_trip(demo, tmp_path, capsys):
    out = tmp_path / "j.csv"
    call_command("export_judgments", "demo", "-o", str(out))
    fresh = make_collection(slug="fresh2")
    (tmp_path / "q.csv").write_text(export_questions(demo))
    call_command("import_judgments", "fresh2", str(tmp_path / "q.csv"), "--kind", "questions")
    call_command("import_judgments", "fresh2", str(out), "--dry-run")
    assert not AnswerString.objects.filter(question__collection=fresh).exists()
    call_command("import_judgments", "fresh2", str(out))
    assert judgments_of(fresh) == judgments_of(demo)
    assert "imported" in capsys.readouterr().out


def test_import_and_export_pages(client):
    c = make_collection(slug="imp")
    make_question(collection=c, qid="Q1", synsets=[[("=1+1", "S")]])
    org = make_user(staff=True)
    client.force_login(org)
    r = client.get("/collections/imp/import/")
    assert r.status_code == 200 and "<h1>Import and export</h1>" in r.content.decode()
    from django.core.files.uploadedfile import SimpleUploadedFile

    bad = SimpleUploadedFile("j.csv", b"question_id,synset_id,answer,level\nQ2,1,x,S\n")
    r = client.post("/collections/imp/import/", {"kind": "judgments", "file": bad})
    assert r.status_code == 200 and "j.csv:2" in r.content.decode()
    good = SimpleUploadedFile("j.csv", b"question_id,synset_id,answer,level\nQ1,1,Two,A\n")
    r = client.post(
        "/collections/imp/import/",
        {"kind": "judgments", "file": good},
        headers={"HX-Request": "true"},
    )
    html = r.content.decode()
    assert "<html" not in html and "Confirm" in html
    assert AnswerString.objects.get().text == "=1+1"  # nothing written yet
    token = r.context["token"] if r.context else html.split('name="token" value="')[1][:32]
    r = client.post("/collections/imp/import/confirm/", {"token": token})
    assert r.status_code == 302
    assert list(AnswerString.objects.values_list("text", flat=True)) == ["Two"]
    r = client.get("/collections/imp/export/judgments.csv")
    assert r["Content-Type"].startswith("text/csv") and b"Q1,1,Two,A" in r.content
    for what, header, row in (
        ("questions", "question_id,question,status,assessors", "Q1,"),
        ("events", "id,created_at,user,question_id,action,before,after", ",judgments_import,"),
    ):
        r = client.get(f"/collections/imp/export/{what}.csv")
        text = b"".join(r.streaming_content) if r.streaming else r.content
        lines = text.decode().splitlines()
        assert r.status_code == 200 and lines[0] == header, what
        assert any(row in line for line in lines[1:]), (what, lines)
    assessor = make_user()
    from tests.factories import add_member

    add_member(collection=c, user=assessor, role="assessor")
    client.force_login(assessor)
    assert client.get("/collections/imp/export/judgments.csv").status_code == 403
    assert client.get("/collections/imp/import/").status_code == 403


def test_import_size_limit(client, settings):
    from django.core.files.uploadedfile import SimpleUploadedFile

    c = make_collection(slug="lim")
    client.force_login(make_user(staff=True))
    settings.IMPORT_MAX_MB = 0
    f = SimpleUploadedFile("q.csv", b"question_id,question\nQ1,Who?\n")
    r = client.post("/collections/lim/import/", {"kind": "questions", "file": f})
    assert r.status_code == 200 and "imports may be at most 0 MB" in r.content.decode()
    assert not c.questions.exists()
    # an htmx submit shows the form's error in the part of the page it swaps
    f = SimpleUploadedFile("q.csv", b"question_id,question\nQ1,Who?\n")
    r = client.post(
        "/collections/lim/import/", {"kind": "questions", "file": f}, headers={"HX-Request": "true"}
    )
    html = r.content.decode()
    assert "<html" not in html and 'id="preview"' in html and "at most 0 MB" in html
