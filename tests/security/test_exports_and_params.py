"""Red team: the new CSV downloads (runs.csv, ranking-matrix.csv, the layers CSV) go
through the product's CSV writer, so a run name, username or answer string that a
spreadsheet would run as a formula is neutralised; the ranking page's query parameters
are bounded (trials, seed) and untrusted names are escaped in its matrix."""

import csv
import io

import pytest
from django.urls import reverse

from annotate import layers
from annotate.models import JudgingLayer
from evaluation.metrics.csvio import read_csv
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

FORMULAS = ("=HYPERLINK(1)", "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1")
EVIL = '<script>alert(1)</script>"x'


def _formula_cells(text: str) -> list[str]:
    """Cells of the CSV (header and rows, as a spreadsheet reads them) that it would run."""
    body = "".join(line for line in text.splitlines(keepends=True) if not line.startswith("#"))
    cells = [cell for row in csv.reader(io.StringIO(body, newline="")) for cell in row]
    runs = ("=", "+", "@", "\t", "\r")
    return [c for c in cells if c in FORMULAS or c.startswith(runs) or c.startswith("-2+")]


@pytest.fixture
def world(client):
    c = make_collection(slug="evil")
    for i in range(1, 4):
        make_question(collection=c, qid=f"Q{i}", synsets=[[(f"a{i}", "S")]], unjudged=["=1+1"])
    org = make_user(username="org")
    add_member(collection=c, user=org, role="organizer")
    owner = make_user(username="@owner")
    add_member(collection=c, user=owner, role="participant")
    for k, name in enumerate([*FORMULAS, EVIL]):
        make_run(
            collection=c,
            owner=owner,
            name=name,
            answers={f"Q{i}": [f"a{i}"] if (i + k) % 2 else ["x"] for i in range(1, 4)},
        )
    client.force_login(org)
    return c


@pytest.mark.parametrize("route", ["run-list-csv", "ranking-matrix-csv", "ranking-csv"])
def test_score_csvs_neutralise_formulas(client, world, route):
    r = client.get(reverse(f"evaluation:{route}", args=[world.slug]))
    assert r.status_code == 200
    text = r.content.decode()
    assert "HYPERLINK" in text  # the run is there...
    assert _formula_cells(text) == []  # ...never as a formula
    _, header, rows = read_csv(text)
    names = {row[0] for row in rows}
    assert set(FORMULAS) <= names  # and read back as it was named
    if route == "ranking-matrix-csv":
        assert set(FORMULAS) <= set(header)


def test_layers_csv_neutralises_answer_strings_and_usernames(client, world):
    a = make_user(username="+ann")
    add_member(collection=world, user=a, role="assessor")
    q = world.questions.get(qid="Q1")
    layers.layers_request(collection=world, questions=[q], assessors=[a], by=None, k=1)
    layer = JudgingLayer.objects.get(question=q, assessor=a)
    layers.layer_judge(layer=layer, string=q.strings.get(text="=1+1").pk, new_group=True, by=a)
    text = client.get(reverse("annotate:collection-layers-csv", args=[world.slug])).content
    text = text.decode()
    assert "=1+1" in text and "+ann" in text
    assert _formula_cells(text) == []
    _, _, rows = read_csv(text)
    assert ["Q1", "1", "=1+1", "S", "+ann", ""] in rows


def test_ranking_matrix_escapes_run_names(client, world):
    html = client.get(reverse("evaluation:ranking", args=[world.slug])).content.decode()
    assert 'id="pair-matrix"' in html
    assert "<script>alert(1)" not in html
    assert 'title="&lt;script&gt;alert(1)&lt;/script&gt;&quot;x"' in html


@pytest.mark.parametrize(
    "params",
    [
        {"test": "tukey", "trials": "1000000000"},
        {"interval": "bootstrap", "trials": str(10**12)},
        {"interval": "bootstrap", "trials": "-5"},
        {"test": "tukey", "seed": "abc"},
        {"test": "tukey", "seed": str(2**70)},
        {"interval": "nonsense", "test": "nonsense"},
    ],
)
@pytest.mark.parametrize("route", ["ranking", "ranking-matrix-csv", "run-list", "run-list-csv"])
def test_abusive_test_parameters_are_refused(client, world, params, route):
    r = client.get(reverse(f"evaluation:{route}", args=[world.slug]), params)
    text = r.content.decode()
    if route.endswith("csv"):
        # a download never silently computes something else than asked: 400 with the reason
        assert r.status_code == 400
        assert "Invalid parameters:" in text
    else:
        assert r.status_code == 200
        assert 'role="alert"' in text  # the form's error is shown, the defaults computed


def test_tukey_and_bootstrap_past_the_work_bound_are_refused_not_computed(
    client, world, monkeypatch
):
    """MAX_TRIALS bounds the trials, not runs x questions x trials: past the work bound the
    page says how many trials fit instead of computing for minutes."""
    from evaluation.analysis import significance

    def never(*args, **kwargs):
        raise AssertionError("computed past the work bound")

    monkeypatch.setattr(significance, "tukey_hsd", never)
    monkeypatch.setattr(significance, "draw_bootstrap", never)
    # 7 runs x 3 questions here: a bound of 100 units leaves 4 Tukey permutations
    monkeypatch.setattr(significance, "MAX_TUKEY_WORK", 100)
    monkeypatch.setattr(significance, "MAX_BOOTSTRAP_WORK", 100)
    params = {"test": "tukey", "interval": "bootstrap", "trials": "2000", "seed": "7"}
    html = client.get(reverse("evaluation:ranking", args=[world.slug]), params).content.decode()
    assert "2000 Tukey permutations are too much work" in html
    assert "choose at most 4 trials" in html
    assert "2000 bootstrap samples are too much work" in html
    r = client.get(reverse("evaluation:ranking-matrix-csv", args=[world.slug]), params)
    assert r.status_code == 200
    r = client.get(reverse("evaluation:run-list-csv", args=[world.slug]), params)
    assert r.status_code == 200
