"""Crafted values get a clear error and write nothing, never a 500: run names with line
breaks or header syntax, ranks beyond 64 bits, gains and parameters that overflow."""

import html
import io
import re
from urllib.parse import unquote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from annotate.models import Collection, Level
from config.downloads import content_disposition
from config.text import CONTROL_CHARACTERS
from evaluation import services
from evaluation.metrics import InputError, parse_gains
from evaluation.metrics.gains import check_parameters
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_question, make_run, make_user

NASTY = [
    "bad\r\nSet-Cookie: x=1",
    "x\"; filename*=UTF-8''evil.exe; a=\"",
    "tab\there",
    "Überlauf – ünïcode ✓",
    "a/b\\c",
    "\x00\x7f",
    ";",
    "",
    "...",
]


@pytest.mark.parametrize("name", NASTY)
def test_content_disposition_is_one_safe_header_for_any_name(name):
    value = content_disposition(name + ".csv")
    assert not re.search(r"[\x00-\x1f\x7f]", value)
    m = re.fullmatch(
        r"""attachment; filename="([A-Za-z0-9._+-]+)"; """
        r"""filename\*=UTF-8''([A-Za-z0-9%._~-]+)""",
        value,
    )
    assert m, value
    exact = unquote(m.group(2))
    assert "/" not in exact and "\\" not in exact and "\r" not in exact and "\n" not in exact


def test_content_disposition_keeps_a_plain_name():
    assert content_disposition("demo-AF-scores.csv") == (
        "attachment; filename=\"demo-AF-scores.csv\"; filename*=UTF-8''demo-AF-scores.csv"
    )


@pytest.fixture
def scored(db):
    c = make_collection(slug="crafted")
    make_question(collection=c, qid="Q1", synsets=[[("x", "S")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    return c, org


@pytest.mark.django_db
@pytest.mark.parametrize("name", ["bad\r\nname", "x\"; filename*=UTF-8''evil.exe"])
def test_downloads_of_a_run_with_a_crafted_name_do_not_fail(client, scored, name):
    """Runs stored before names were checked (or by other means) still download."""
    c, org = scored
    bad = make_run(collection=c, owner=org, name=name, answers={"Q1": ["x"]})
    other = make_run(collection=c, owner=org, name="other", answers={"Q1": ["y"]})
    client.force_login(org)
    for url in (
        f"/collections/crafted/runs/{bad.pk}/scores.csv",
        f"/collections/crafted/compare.csv?a={bad.pk}&b={other.pk}",
        "/collections/crafted/ranking.csv",
    ):
        resp = client.get(url)
        assert resp.status_code == 200, url
        disposition = resp.headers["Content-Disposition"]
        assert disposition.count("filename=") == 1 and disposition.count("filename*=") == 1
        assert "evil.exe;" not in disposition and "\n" not in disposition


@pytest.mark.django_db
def test_collection_exports_use_the_safe_header(client, scored):
    _, org = scored
    client.force_login(org)
    resp = client.get("/collections/crafted/export/judgments.csv")
    assert resp.headers["Content-Disposition"] == content_disposition("crafted-judgments.csv")


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name", ["bad\r\nname", "bad\nname", "nul\x00", "bell\x07", "sep\u2028line", "n\x85el"]
)
def test_run_names_with_control_characters_are_refused(client, scored, name):
    c, org = scored
    before = (Run.objects.count(), RunAnswer.objects.count())
    with pytest.raises(InputError, match="control characters or line breaks"):
        services.run_import(
            collection=c, owner=org, name=name, data=b"Q1\t1\tx\n", filename="r.tsv"
        )
    client.force_login(org)
    resp = client.post(
        "/collections/crafted/runs/upload/",
        {"name": name, "file": SimpleUploadedFile("r.tsv", b"Q1\t1\tx\n")},
    )
    body = resp.content.decode()
    if CONTROL_CHARACTERS.search(name):  # refused for every form field, before any view
        assert resp.status_code == 400
        assert "holds a control character" in body
    else:  # line breaks a text area may hold: the run form names the problem
        assert resp.status_code == 200
        assert "must not contain control characters or line breaks" in body
    assert (Run.objects.count(), RunAnswer.objects.count()) == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    "data",
    [
        b"Q1\t9223372036854775808\tx\n",
        b"Q1\t1\tx\nQ1\t99999999999999999999999\ty\n",
        b"question_id,rank,answer\nQ1,9223372036854775808,x\n",
    ],
)
def test_a_rank_beyond_64_bits_is_a_clear_error(client, scored, data):
    c, org = scored
    before = (Run.objects.count(), RunAnswer.objects.count())
    with pytest.raises(InputError) as e:
        services.run_import(collection=c, owner=org, name="big", data=data, filename="r.tsv")
    assert "is too large (at most 1000000000)" in str(e.value.issues[0].message)
    assert e.value.issues[0].line is not None
    client.force_login(org)
    resp = client.post(
        "/collections/crafted/runs/upload/",
        {"name": "big", "file": SimpleUploadedFile("r.tsv", data)},
    )
    assert resp.status_code == 200 and "is too large" in html.unescape(resp.content.decode())
    assert (Run.objects.count(), RunAnswer.objects.count()) == before


@pytest.mark.parametrize(
    "spec",
    [
        "S=1e308,A=2,B=1",
        "1e308:2:1",
        "3:2:1e7",
        "S=-1,A=1,B=1",
        "S=1e999,A=1,B=1",
        "adjusted:1e300:1:1",
    ],
)
def test_huge_or_negative_gains_are_refused(spec):
    with pytest.raises(ValueError, match="out of range"):
        parse_gains(spec)


@pytest.mark.parametrize(
    ("beta", "rbp_p"),
    [(1e308, 0.5), (-1, 0.5), (float("nan"), 0.5), (1.0, 1.0), (1.0, -0.1), (1.0, float("inf"))],
)
def test_beta_and_rbp_p_are_bounded(beta, rbp_p):
    with pytest.raises(ValueError, match="out of range"):
        check_parameters(beta=beta, rbp_p=rbp_p)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "gains=custom&custom_gains=S%3D1e308,A%3D2,B%3D1",
        "gains=custom&custom_gains=1e308:1e308:1e308",
        "beta=1e308",
    ],
)
def test_score_pages_with_huge_values_show_an_error(client, scored, query):
    c, org = scored
    make_run(collection=c, owner=org, name="r1", answers={"Q1": ["x"]})
    make_run(collection=c, owner=org, name="r2", answers={"Q1": ["y", "x"]})
    client.force_login(org)
    for page in ("ranking/", "runs/", "ranking.csv"):
        resp = client.get(f"/collections/crafted/{page}?{query}")
        # a page shows the error over the defaults' figures; a download refuses (400)
        assert resp.status_code == (400 if page.endswith(".csv") else 200), page
        body = html.unescape(resp.content.decode())
        assert "nan" not in body.lower().replace("nanosecond", ""), page
        assert "out of range" in body, page


def test_score_command_refuses_huge_values(tmp_path):
    j = tmp_path / "j.csv"
    j.write_text("question_id,synset_id,answer,level\nQ1,1,x,S\n")
    r = tmp_path / "r.tsv"
    r.write_text("Q1\t1\tx\n")
    for opts in (["--gains", "S=1e308,A=1,B=1"], ["--beta", "1e308"], ["--rbp-p", "1"]):
        with pytest.raises(CommandError, match="out of range"):
            call_command("score", "--judgments", str(j), str(r), *opts, stdout=io.StringIO())


@pytest.mark.django_db
def test_level_gains_are_bounded_in_the_form_and_the_service(client):
    from annotate import edits, organizing

    org = make_user()
    c = Collection(slug="lv", name="lv")
    with pytest.raises(edits.Conflict, match="out of range"):
        organizing.collection_save(collection=c, levels=[("S", "S", 1e308)], by=org)
    assert not Collection.objects.filter(slug="lv").exists()
    from annotate.forms import LevelForm

    form = LevelForm({"code": "S", "label": "S", "gain": "1e308"})
    assert not form.is_valid() and "gain" in form.errors
    assert not Level.objects.filter(gain__gt=1e6).exists()
