"""A participant's answer with a carriage return and a formula goes through every CSV the
product writes: pooled and judged, exported and re-imported, archived and restored, named
in the score CSVs.  Every file quotes it, no line or cell of it starts a formula, and what
the product reads back is the same string."""

from __future__ import annotations

import csv
import io
import zipfile

import pytest
from django.core.management import call_command

from annotate import judging
from annotate.exports import export_judgments, export_questions
from annotate.imports import collection_import
from annotate.models import AnswerString, Collection, Question
from evaluation import services
from evaluation.archive.exporting import collection_export
from evaluation.metrics.csvio import read_csv
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_user

pytestmark = pytest.mark.django_db

ATTACK = "Berlin\r=cmd|' /C calc'!A0"
FORMULA = tuple("=+-@\t\r")


def assert_spreadsheet_safe(text: str) -> None:
    """No line (split at LFs outside quotes) and no cell of ``text`` starts a formula."""
    start, quoted = 0, False
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif c == "\n" and not quoted:
            assert not text[start:i].startswith(FORMULA), text[start:i]
            start = i + 1
    assert not quoted
    for record in csv.reader(io.StringIO(text, newline="")):
        for cell in record:
            assert not cell.startswith(FORMULA), cell


RUN = "=cmd|' /C calc'!A0;@SUM(1),x"  # a run name may not hold a line break


@pytest.fixture
def judged():
    """A collection whose one question has the answer string ``ATTACK`` (it came in with a
    flat answer list: a run file cannot hold a CR inside a line, a CR ends the line there),
    judged, and a run named ``RUN`` (and a second run for the comparison)."""
    organizer, participant = make_user(username="organizer"), make_user(username="p1")
    c = make_collection(slug="capitals", open_for_submissions=True)
    add_member(collection=c, user=organizer, role="organizer")
    add_member(collection=c, user=participant, role="participant")
    collection_import(
        collection=c,
        kind="questions",
        filename="q.csv",
        data=b"question_id,question\nDE,Capital of Germany?\n",
    )
    collection_import(
        collection=c,
        kind="flat",
        filename="flat.csv",
        data=f'question_id,answer\nDE,"{ATTACK}"\n'.encode(),
    )
    run = services.run_import(
        collection=c,
        owner=participant,
        name=RUN,
        filename="a.tsv",
        data=b"DE\t1\tBerlin =cmd|' /C calc'!A0\nDE\t2\t=1+1\n",
    )
    services.run_import(
        collection=c, owner=participant, name="plain", filename="b.tsv", data=b"DE\t1\tMunich\n"
    )
    assert RunAnswer.objects.get(run=run, rank=2).text == "=1+1"
    services.run_pool(run=run, by=organizer)
    q = Question.objects.get(collection=c, qid="DE")
    s = AnswerString.objects.get(question=q, text=ATTACK)
    judging.string_judge(question=q, string=s.pk, by=organizer, new_synset=True, level="S")
    wrong = AnswerString.objects.get(question=q, text="=1+1")
    judging.string_judge(question=q, string=wrong.pk, by=organizer)
    return c, organizer


def strings(c: Collection):
    return sorted(
        AnswerString.objects.filter(question__collection=c, judged_at__isnull=False).values_list(
            "question__qid", "synset__ordinal", "text", "level__code"
        ),
        key=repr,
    )


def test_judgments_export_quotes_the_answer_and_reimports_the_same_strings(judged):
    c, organizer = judged
    text = export_judgments(c)
    # as docs/formats.md shows it
    assert f'\nDE,1,"{ATTACK}",S,Capital of Germany?,organizer,' in text
    assert_spreadsheet_safe(text)
    _, header, rows = read_csv(text)
    assert header[:4] == ["question_id", "synset_id", "answer", "level"]
    # the run's spelling of it was pooled as a variant: the export writes both
    assert [r[2] for r in rows] == [ATTACK, "Berlin =cmd|' /C calc'!A0", "=1+1"]
    fresh = make_collection(slug="fresh")
    collection_import(
        collection=fresh, kind="questions", filename="q.csv", data=export_questions(c).encode()
    )
    collection_import(
        collection=fresh, kind="judgments", filename="j.csv", data=text.encode(), by=organizer
    )
    assert strings(fresh) == strings(c)


def test_the_score_command_reads_the_export_and_quotes_its_csv(judged, tmp_path):
    c, _ = judged
    (tmp_path / "j.csv").write_text(export_judgments(c), encoding="utf-8", newline="")
    # manage.py score names a run after its file
    run = tmp_path / "=1+1;@x,y.tsv"
    # under normalized matching the CR of the judged string is a space
    run.write_text("DE\t1\tBerlin =cmd|' /C calc'!A0\n", encoding="utf-8", newline="")
    out = io.StringIO()
    call_command(
        "score",
        "--judgments",
        str(tmp_path / "j.csv"),
        str(run),
        "--metrics",
        "q_measure",
        "--format",
        "csv",
        stdout=out,
    )
    assert_spreadsheet_safe(out.getvalue())
    _, header, rows = read_csv(out.getvalue())
    assert header == ["run", "question_id", "q_measure", "unjudged"]
    assert rows[0] == ["=1+1;@x,y", "DE", "1.000000", "0"]


def test_archive_round_trip_keeps_the_answer(judged, tmp_path):
    c, _ = judged
    path = tmp_path / "c.zip"
    call_command("export_collection", c.slug, str(path), stdout=io.StringIO())
    z = zipfile.ZipFile(path)
    for member in ("questions.csv", "synsets.csv", "strings.csv", "run_answers.csv"):
        assert_spreadsheet_safe(z.read(member).decode())
    call_command("import_collection", str(path), "--slug", "restored", stdout=io.StringIO())
    copy = Collection.objects.get(slug="restored")
    assert strings(copy) == strings(c)
    assert sorted(
        RunAnswer.objects.filter(run__collection=copy).values_list("run__name", "rank", "text")
    ) == [(RUN, 1, "Berlin =cmd|' /C calc'!A0"), (RUN, 2, "=1+1"), ("plain", 1, "Munich")]
    again = zipfile.ZipFile(io.BytesIO(collection_export(collection=copy)))
    assert again.read("strings.csv") == z.read("strings.csv")


def test_score_and_compare_csvs_quote_run_names_and_question_ids(judged, client):
    c, organizer = judged
    client.force_login(organizer)
    # the download's file name carries the run name: no CR in it here (the file name is
    # made safe elsewhere); the question id carries the CR instead
    name = "=cmd|' /C calc'!A0;@SUM(1),x"
    attack = Run.objects.get(collection=c, name=RUN)
    assert name == RUN
    Question.objects.filter(collection=c, qid="DE").update(qid=ATTACK)
    plain = Run.objects.get(collection=c, name="plain")
    for url in (
        f"/collections/{c.slug}/runs/{attack.pk}/scores.csv",
        f"/collections/{c.slug}/compare.csv?a={plain.pk}&b={attack.pk}",
        f"/collections/{c.slug}/ranking.csv",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        text = response.content.decode()
        assert_spreadsheet_safe(text)
        preamble, _, rows = read_csv(text)
        assert name in [preamble.get("run"), preamble.get("run_b"), *(r[0] for r in rows)]
        if "ranking" not in url:
            assert any(ATTACK in cell for r in rows for cell in r[:2]), url
