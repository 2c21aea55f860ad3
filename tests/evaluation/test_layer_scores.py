"""Runs scored against each layer and gold; rankings compared (evaluation/layers.py)."""

import pytest

from annotate import layers as L
from annotate.models import JudgingLayer, LayerJudgment
from evaluation.layers import GOLD, layer_judgments, layer_scores, layer_scores_csv
from evaluation.metrics.csvio import read_csv
from evaluation.services import ScoreConfig
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def judge(layer, user, plan):
    """``plan``: text -> (group or None, level)."""
    strings = {s.text: s.pk for s in layer.question.strings.all()}
    for text, (group, level) in plan.items():
        have = set(LayerJudgment.objects.filter(layer=layer).values_list("group", flat=True))
        if group is None:
            L.layer_judge(layer=layer, string=strings[text], by=user)
        elif group in have:
            L.layer_judge(layer=layer, string=strings[text], group=group, level=level, by=user)
        else:
            L.layer_judge(layer=layer, string=strings[text], new_group=True, level=level, by=user)
    L.layer_mark_done(layer=layer, by=user)


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
    L.layers_request(collection=c, questions=[q1, q2], assessors=[a, b], by=org)
    lay = {(la.question.qid, la.assessor_id): la for la in JudgingLayer.objects.all()}
    judge(lay["Q1", a.pk], a, {"x": (1, "S"), "y": (2, "S"), "z": (None, None)})
    judge(lay["Q1", b.pk], b, {"x": (1, "S"), "y": (None, None), "z": (2, "B")})
    judge(lay["Q2", a.pk], a, {"u": (1, "S"), "v": (None, None)})
    judge(lay["Q2", b.pk], b, {"u": (None, None), "v": (1, "A")})
    r1 = make_run(collection=c, owner=org, name="r1", answers={"Q1": ["x", "y"], "Q2": ["u"]})
    r2 = make_run(collection=c, owner=org, name="r2", answers={"Q1": ["z"], "Q2": ["v"]})
    r3 = make_run(collection=c, owner=org, name="r3", answers={"Q1": ["x"], "Q2": ["v", "u"]})
    return c, [r1, r2, r3], a, b


def test_layer_judgments(study):
    c = study[0]
    js = layer_judgments(c)
    assert set(js) == {GOLD, "layer 1", "layer 2"}
    assert list(js["layer 1"].questions) == ["Q1", "Q2"]
    # Q3 has no layers; Q2's layers agree on nothing, so gold has not judged it yet
    assert list(js[GOLD].questions) == ["Q1"]
    assert len(js["layer 1"].str_q) == 5


def test_layer_scores_and_rankings(study):
    c, runs, _, _ = study
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
    assert len(rows) == 3 * 2 + 2 * 3 * 3  # gold: Q1 + mean; each layer: Q1, Q2 + mean
