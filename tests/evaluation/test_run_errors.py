"""A run upload reports every error of the file at once, each with its line number and in
line order: the file's own errors, answers for questions the collection does not have,
and the line where a question first exceeds the maximum output size L'; on the page (all
of them) and from ``manage.py import_run``."""

import html
import io

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from evaluation.metrics import InputError
from evaluation.models import Run, RunAnswer
from evaluation.services import run_import
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

BAD = (
    "Q1\t1\tParis\n"
    "Q1\tx\tLyon\n"  # 2: bad rank
    "NOPE\t1\tRome\n"  # 3: unknown question
    + "".join(f"Q2\t{r}\ta{r}\n" for r in range(1, 5))  # 4-7
    + "Q2\t4\tdup\n"  # 8: rank twice
    + "Q2\t5\ta5\n"  # 9
    + "Q2\t6\ta6\n"  # 10: the first answer over L' = 5
    + "Q2\t7\ta7\n"  # 11
    + "NOPE\t2\tMilan\n"
)  # 12: unknown question


@pytest.fixture
def coll():
    c = make_collection(slug="runs", max_output_size=5)
    make_question(collection=c, qid="Q1")
    make_question(collection=c, qid="Q2")
    return c


def organizer(collection, **kw):
    """A user who may submit runs to ``collection`` (``access.may_submit``)."""
    user = make_user(**kw)
    add_member(collection=collection, user=user, role="organizer")
    return user


def issues_of(**kw):
    with pytest.raises(InputError) as e:
        run_import(**kw)
    return [(i.line, i.message) for i in e.value.issues]


def test_every_kind_of_error_at_once_with_line_numbers(coll):
    user = organizer(coll)
    got = issues_of(collection=coll, owner=user, name="r", data=BAD.encode(), filename="r.tsv")
    assert [line for line, _ in got] == [2, 3, 8, 10, 12]
    assert "rank 'x' is not a positive integer" in got[0][1]
    assert got[1][1] == "question 'NOPE' is not in this collection"
    assert "has rank 4 twice (line 7)" in got[2][1]
    assert got[3][1] == (
        "question 'Q2' has more than 5 answers, the collection's maximum "
        "output size L' (7 answers; this line is answer 6)"
    )
    assert not Run.objects.exists() and not RunAnswer.objects.exists()


def test_collection_errors_of_a_well_formed_file_have_lines_too(coll):
    user = organizer(coll)
    make_run = lambda name: run_import(  # noqa: E731
        collection=coll,
        owner=user,
        name=name,
        data=b"Q1\t1\tParis\n",
        filename="ok.tsv",
    )
    make_run("taken")
    body = "Q1\t1\tParis\nZZ\t1\tx\n" + "".join(f"Q2\t{r}\ta\n" for r in range(1, 8))
    got = issues_of(collection=coll, owner=user, name="taken", data=body.encode(), filename="r.tsv")
    assert got == [
        (None, "a run named 'taken' already exists in this collection; choose another name"),
        (2, "question 'ZZ' is not in this collection"),
        (
            8,
            "question 'Q2' has more than 5 answers, the collection's maximum output size L' "
            "(7 answers; this line is answer 6)",
        ),
    ]


def test_trec_runs_are_checked_the_same_way(coll):
    body = "Q1 Q0 d1 1 1.0 t\nQ1 Q0 d1 2 0.5 t\nNOPE Q0 d 1 1 t\n" + "".join(
        f"Q2 Q0 d{i} {i} {1 / i} t\n" for i in range(1, 7)
    )
    got = issues_of(
        collection=coll, owner=organizer(coll), name="t", data=body.encode(), filename="t.run"
    )
    assert [line for line, _ in got] == [2, 3, 9]


def test_the_page_lists_every_error_in_line_order(client, coll):
    client.force_login(make_user(staff=True))
    body = "".join(f"NOPE{i}\t1\tx\n" if i % 2 else f"Q1\t{i}\t\n" for i in range(1, 301))
    r = client.post(
        "/collections/runs/runs/upload/",
        {"name": "bad", "file": SimpleUploadedFile("r.tsv", body.encode())},
    )
    page = html.unescape(r.content.decode())
    assert "300 problems found" in page
    assert page.count("<li>line ") == 300  # all, not the first 200
    assert "line 299: question 'NOPE299' is not in this collection" in page
    assert "line 300: empty answer for question 'Q1' at rank 300" in page
    r = client.post(
        "/collections/runs/runs/upload/",
        {"name": "bad", "file": SimpleUploadedFile("r.tsv", BAD.encode())},
    )
    items = html.unescape(r.content.decode()).split('id="upload-issues">')[1].split("</ul>")[0]
    assert [li.split(":")[0] for li in items.split("<li>")[1:]] == [
        "line 2",
        "line 3",
        "line 8",
        "line 10",
        "line 12",
    ]
    assert not Run.objects.exists()


def test_the_command_prints_every_error(coll, tmp_path):
    organizer(coll, username="owner")
    p = tmp_path / "r.tsv"
    p.write_text("".join(f"NOPE{i}\t1\tx\n" for i in range(80)) + "Q1\t0\tx\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="81 error"):
        call_command(
            "import_run",
            str(p),
            "--collection",
            "runs",
            "--owner",
            "owner",
            stdout=io.StringIO(),
            stderr=err,
        )
    out = err.getvalue().splitlines()
    assert len(out) == 81 and "more error" not in err.getvalue()
    assert out[79] == "r.tsv:80: question 'NOPE79' is not in this collection"
    assert out[80] == "r.tsv:81: rank '0' is not a positive integer"


def test_a_file_far_over_questions_x_l_is_refused_before_it_is_read(coll, monkeypatch):
    """2 questions x L' 5 = 10 answers at most: a file with more than that plus the margin
    is refused with the numbers, without reading it line by line (the red team's 2.3
    million lines took 20 s to be refused for its sixth answer)."""
    from evaluation import services

    monkeypatch.setattr(services, "RUN_LINES_MARGIN", 20)
    read = []
    monkeypatch.setattr(
        services, "run_rows", lambda *a, **kw: read.append(1) or pytest.fail("read")
    )
    body = "".join(f"Q1\t{i}\tx\n\n" for i in range(1, 32))  # 31 answer lines, blank lines
    got = issues_of(
        collection=coll, owner=organizer(coll), name="r", data=body.encode(), filename="r.tsv"
    )
    assert got == [
        (
            None,
            "the file has 31 answer lines; a run of this collection holds at most 10 answers "
            "(2 questions x L' = 5): refused without reading further",
        )
    ]
    assert not read and not Run.objects.exists()


def test_a_file_within_the_margin_gets_every_error_and_is_read_once(coll, monkeypatch):
    from evaluation import services
    from evaluation.metrics import parsers

    monkeypatch.setattr(services, "RUN_LINES_MARGIN", 20, raising=False)
    reads = []
    run_rows = parsers.run_rows

    def counted(*a, **kw):
        reads.append(1)
        return run_rows(*a, **kw)

    # the line reader, wherever it is called from (parse_run calls it too)
    monkeypatch.setattr(services, "run_rows", counted)
    monkeypatch.setattr(parsers, "run_rows", counted)
    body = "".join(f"Q1\t{i}\tx\n" for i in range(1, 31))  # 30 lines: 10 + 20, not more
    got = issues_of(
        collection=coll, owner=organizer(coll), name="r", data=body.encode(), filename="r.tsv"
    )
    assert got == [
        (
            6,
            "question 'Q1' has more than 5 answers, the collection's maximum output size L' "
            "(30 answers; this line is answer 6)",
        )
    ]
    assert reads == [1]  # once: not parsed, then read again for the errors
    # a good file is read once too
    reads.clear()
    run_import(
        collection=coll, owner=organizer(coll), name="ok", data=b"Q1\t1\tx\n", filename="ok.tsv"
    )
    assert reads == [1]


def test_a_name_taken_between_the_check_and_the_create_is_refused_the_same(coll, monkeypatch):
    """Two uploads of one name at once: the second passes the name check before the first
    is stored, and its create breaks the unique name (it was a 500 IntegrityError).  The
    race is simulated: the other upload is stored while this one reads its file."""
    from evaluation import services

    user = organizer(coll)
    checked = services._run_checked

    def meanwhile(**kw):
        Run.objects.create(collection=coll, owner=user, name="same", format="qa")
        return checked(**kw)

    monkeypatch.setattr(services, "_run_checked", meanwhile)
    got = issues_of(
        collection=coll, owner=user, name="same", data=b"Q1\t1\tParis\n", filename="r.tsv"
    )
    assert got == [
        (None, "a run named 'same' already exists in this collection; choose another name")
    ]
    assert Run.objects.filter(name="same").count() == 1 and not RunAnswer.objects.exists()
    # through the API: the upload's job failed with the check's error, not a 500
    from api.services import api_token_create
    from tests.api.conftest import ApiClient

    api = ApiClient(api_token_create(user=user, name="ci").secret)
    Run.objects.filter(name="same").delete()
    r = api.post(
        f"/api/collections/{coll.slug}/runs",
        {"name": "same", "file": SimpleUploadedFile("r.tsv", b"Q1\t1\tParis\n")},
    )
    assert r.status_code == 202 and r.json()["status"] == "failed"
    assert r.json()["errors"] == [
        {
            "file": "r.tsv",
            "line": None,
            "message": "a run named 'same' already exists in this collection; choose another name",
        }
    ]
