"""Runs scored against each layer and gold; rankings compared (evaluation/layer_scores.py)."""

import pytest

from annotate import adjudication, layers
from annotate.models import JudgingLayer, LayerJudgment
from evaluation.analysis.score_config import ScoreConfig
from evaluation.layer_scores import (
    GOLD,
    layer_judgments,
    layer_questions,
    layer_scores,
    layer_scores_csv,
)
from evaluation.metrics.csvio import read_csv
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def judge(layer, user, plan):
    """``plan``: text -> (group or None, level)."""
    strings = {s.text: s.pk for s in layer.question.strings.all()}
    for text, (group, level) in plan.items():
        have = set(LayerJudgment.objects.filter(layer=layer).values_list("group", flat=True))
        if group is None:
            layers.layer_judge(layer=layer, string=strings[text], by=user)
        elif group in have:
            layers.layer_judge(layer=layer, string=strings[text], group=group, level=level, by=user)
        else:
            layers.layer_judge(
                layer=layer, string=strings[text], new_group=True, level=level, by=user
            )
    layers.layer_mark_done(layer=layer, by=user)


@pytest.fixture
def study():
    c = make_collection()
    org, a, b = make_user(), make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b):
        add_member(collection=c, user=u, role="assessor")
    q1 = make_question(collection=c, qid="Q1", unjudged=["x", "y", "z"])
    q2 = make_question(collection=c, qid="Q2", unjudged=["u", "v"])
    make_question(collection=c, qid="Q3", synsets=[[("w", "S")]])  # gold only
    layers.layers_request(collection=c, questions=[q1, q2], assessors=[a, b], by=org)
    lay = {(la.question.qid, la.assessor_id): la for la in JudgingLayer.objects.all()}
    judge(lay["Q1", a.pk], a, {"x": (1, "S"), "y": (2, "S"), "z": (None, None)})
    judge(lay["Q1", b.pk], b, {"x": (1, "S"), "y": (None, None), "z": (2, "B")})
    judge(lay["Q2", a.pk], a, {"u": (1, "S"), "v": (None, None)})
    judge(lay["Q2", b.pk], b, {"u": (None, None), "v": (1, "A")})
    r1 = make_run(collection=c, owner=org, name="r1", answers={"Q1": ["x", "y"], "Q2": ["u"]})
    r2 = make_run(collection=c, owner=org, name="r2", answers={"Q1": ["z"], "Q2": ["v"]})
    r3 = make_run(collection=c, owner=org, name="r3", answers={"Q1": ["x"], "Q2": ["v", "u"]})
    return c, [r1, r2, r3], a, b


def adjudicate(c, qid, assessor):
    """Resolve every string gold left unjudged in ``qid`` as ``assessor``'s layer has it."""
    layer = JudgingLayer.objects.get(question__collection=c, question__qid=qid, assessor=assessor)
    left = list(layer.question.strings.filter(judged_at__isnull=True).values_list("pk", flat=True))
    adjudication.adjudicate_take(question=layer.question, layer=layer, strings=left, by=None)


def test_layer_judgments(study):
    c, _, a, _ = study
    # Q1 and Q2 wait for adjudication (their layers disagree on y, z and on u, v): gold
    # cannot be scored on them yet, so no set of judgments is (the same questions for all)
    lq = layer_questions(c)
    assert (list(lq.scored), lq.waiting, lq.open) == ([], 2, 0)
    js = layer_judgments(c)
    assert set(js) == {GOLD} and list(js[GOLD].questions) == []
    adjudicate(c, "Q1", a)
    lq = layer_questions(c)
    assert (len(lq.scored), lq.waiting, lq.open) == (1, 1, 0)
    js = layer_judgments(c)
    assert set(js) == {GOLD, "layer 1", "layer 2"}
    # Q3 has no layers; Q2 still waits: every set of judgments is over Q1 alone
    for name in js:
        assert list(js[name].questions) == ["Q1"], name
    assert len(js["layer 1"].str_q) == 3 and len(js[GOLD].str_q) == 3


def test_a_question_with_a_layer_still_open_is_left_out(study):
    c, _, a, b = study
    adjudicate(c, "Q1", a)
    q4 = make_question(collection=c, qid="Q4", unjudged=["t"])
    layers.layers_request(collection=c, questions=[q4], assessors=[a, b], by=None)
    judge(JudgingLayer.objects.get(question=q4, assessor=a), a, {"t": (1, "S")})
    lq = layer_questions(c)
    assert (len(lq.scored), lq.waiting, lq.open) == (1, 1, 1)
    result = layer_scores(c, [], ScoreConfig(metrics=("rr",)))
    assert (result.n_questions, result.n_waiting, result.n_open) == (1, 1, 1)


def test_layer_scores_and_rankings(study):
    c, runs, a, _ = study
    adjudicate(c, "Q1", a)
    adjudicate(c, "Q2", a)
    result = layer_scores(c, runs, ScoreConfig(metrics=("q_measure", "rr")))
    assert result.names == (GOLD, "layer 1", "layer 2")
    rr1 = result.means["layer 1"]["rr"].to_dict()
    rr2 = result.means["layer 2"]["rr"].to_dict()
    # layer 1: Q1 x,y correct, Q2 u; layer 2: Q1 x,z; Q2 v
    assert rr1 == {"r1": 1.0, "r2": 0.0, "r3": 0.75}
    assert rr2 == {"r1": 0.5, "r2": 1.0, "r3": 1.0}
    cmp = {(x.metric, x.a, x.b): x.change for x in result.comparisons}
    change = cmp["rr", "layer 1", "layer 2"]
    assert change.largest_change_run == "r2" and change.largest_change == 1.0
    assert change.n_runs == 3 and change.swaps == 2
    text = layer_scores_csv(result, ["q_measure", "rr"])
    _, header, rows = read_csv(text)
    assert header == ["judgments", "run", "question_id", "q_measure", "rr"]
    assert ["layer 2", "r2", "all"] == rows[[r[:3] for r in rows].index(["layer 2", "r2", "all"])][
        :3
    ]
    assert len(rows) == 3 * 3 * 3  # gold and each layer: Q1, Q2 + mean, for 3 runs
    # gold took layer 1's side of every disagreement: the same means
    assert result.means[GOLD]["rr"].to_dict() == rr1


def test_layer_scores_csv_honours_full_precision(study, client):
    """The download writes 6 decimals, every digit (``repr``) with ``precision=full``, as
    every score CSV does; the function writes what the download writes."""
    c, runs, a, _ = study
    adjudicate(c, "Q1", a)
    adjudicate(c, "Q2", a)
    client.force_login(runs[0].owner)
    url = f"/collections/{c.slug}/layer-scores.csv?metric=q_measure&metric=rr"
    readable = read_csv(client.get(url).content)
    full = read_csv(client.get(url + "&precision=full").content)
    assert "precision" not in readable[0] and full[0]["precision"] == "full"
    cells = [v for row in readable[2] for v in row[3:]]
    assert cells and all(len(v.split(".")[1]) == 6 for v in cells)
    result = layer_scores(c, runs, ScoreConfig(metrics=("q_measure", "rr")))
    want = [[*row[:3], *(repr(float(v)) for v in row[3:])] for row in result.rows()]
    assert full[2] == want
    assert full[2] != readable[2]  # 0.75 is 0.750000 in the readable file
    assert read_csv(layer_scores_csv(result, ["q_measure", "rr"], precision="full"))[2] == want


def test_layer_i_is_the_ith_created_layer_of_each_question(study):
    """docs/formats.md, "layer i": the first-created layer of each question is ``layer 1``
    (here the first assessor's, created first), whoever the assessor."""
    c, runs, a, b = study
    adjudicate(c, "Q1", a)
    adjudicate(c, "Q2", a)
    for qid in ("Q1", "Q2"):
        ids = list(
            JudgingLayer.objects.filter(question__qid=qid, question__collection=c)
            .order_by("id")
            .values_list("assessor_id", flat=True)
        )
        assert ids == [a.pk, b.pk]
    result = layer_scores(c, runs, ScoreConfig(metrics=("rr",)))
    assert result.means["layer 1"]["rr"].to_dict()["r1"] == 1.0
    assert result.means["layer 2"]["rr"].to_dict()["r1"] == 0.5


def test_a_ranking_of_one_run_shows_a_dash_and_says_why(study, client):
    """One run: no ranking to correlate, so no tau or rho; the page said "nan"."""
    c, runs, a, _ = study
    adjudicate(c, "Q1", a)
    adjudicate(c, "Q2", a)
    for run in runs[1:]:
        run.delete()
    client.force_login(runs[0].owner)
    page = client.get(f"/collections/{c.slug}/layer-scores/?metric=rr").content.decode()
    assert ">nan<" not in page
    assert '<td class="num">—<sup class="why-mark">a</sup></td>' in page
    assert "undefined: fewer than two runs: no ranking to compare" in page
