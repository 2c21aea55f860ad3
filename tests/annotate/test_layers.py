"""Independent layers (annotate/layers.py): requests, blind layer writes and their undo,
the layers CSV and the agreement figures; gold from layers is tested in
test_adjudication.py."""

import pytest

from annotate import agreement_report, layer_selectors, layers
from annotate.edits import Conflict
from annotate.judging import question_undo, string_judge
from annotate.models import (
    AnswerString,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
    LayerRequest,
)
from tests.annotate.layer_study import both_done, gold, judge, layer_study
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return layer_study()


def test_request_assigns_k_assessors_and_keeps_single_questions_alone():
    c = make_collection()
    org = make_user()
    judges = [make_user() for _ in range(3)]
    add_member(collection=c, user=org, role="organizer")
    for u in judges:
        add_member(collection=c, user=u, role="assessor")
    qs = [make_question(collection=c, unjudged=["x"]) for _ in range(6)]
    done = layers.layers_request(
        collection=c, questions=qs, assessors=judges, by=org, k=2, sample=4, seed=7
    )
    assert done.questions == 4 and done.layers == 8
    assert LayerRequest.objects.count() == 4
    for q in qs:
        n = JudgingLayer.objects.filter(question=q).count()
        assert n in (0, 2)
        assert set(q.assessors.values_list("pk", flat=True)) == set(
            JudgingLayer.objects.filter(question=q).values_list("assessor", flat=True)
        )
    # the same request again: the questions with layers are left out (and named), before
    # sampling; the two others get theirs
    again = layers.layers_request(
        collection=c, questions=qs, assessors=judges, by=org, k=2, sample=4, seed=7
    )
    assert again.layered == done.qids and again.questions == 2 and again.layers == 4
    assert not set(again.qids) & set(done.qids)
    assert all(JudgingLayer.objects.filter(question=q).count() == 2 for q in qs)
    with pytest.raises(Conflict, match=r"No layer was requested: .* already have layers"):
        layers.layers_request(collection=c, questions=qs, assessors=judges, by=org, k=2)
    with pytest.raises(Conflict):
        layers.layers_request(collection=c, questions=qs, assessors=judges[:1], by=org, k=2)
    assert JudgmentEvent.objects.filter(action="layers_request").count() == 2


def test_a_second_request_leaves_out_the_questions_with_layers_and_names_them():
    """Requested for a and b, then for a, b and c with k = 2 again: without the rule the
    second request gave some questions a third layer (c's) while k stayed 2."""
    c = make_collection()
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    a, b, cc = (make_user() for _ in range(3))
    for u in (a, b, cc):
        add_member(collection=c, user=u, role="assessor")
    qs = [make_question(collection=c, qid=f"Q{i}", unjudged=["x"]) for i in range(3)]
    layers.layers_request(collection=c, questions=qs[:2], assessors=[a, b], by=org, k=2)
    done = layers.layers_request(collection=c, questions=qs, assessors=[a, b, cc], by=org, k=2)
    assert done.layered == ["Q0", "Q1"] and done.qids == ["Q2"] and done.layers == 2
    for q in qs:
        assert (
            JudgingLayer.objects.filter(question=q).count()
            == LayerRequest.objects.get(question=q).k
            == 2
        )
    for q in qs[:2]:
        assert not JudgingLayer.objects.filter(question=q, assessor=cc).exists()
    event = JudgmentEvent.objects.filter(action="layers_request").latest("id")
    assert event.after["layered"] == ["Q0", "Q1"]


def test_layers_are_blind_until_done(study):
    _c, q, org, a, b, la, lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S")])
    assert set(JudgingLayer.objects.readable_by(a).filter(question=q)) == {la}
    assert set(JudgingLayer.objects.readable_by(b).filter(question=q)) == {lb}
    judge(
        la,
        a,
        ids,
        [("John Lennon", 1, "S"), ("McCartney", 2, "S"), ("Ringo", 3, "A"), ("Yoko", None, None)],
    )
    layers.layer_mark_done(layer=la, by=a)
    # ann's layer is done, bob's is not: still blind both ways (bob may still change his)
    assert set(JudgingLayer.objects.readable_by(a).filter(question=q)) == {la}
    assert set(JudgingLayer.objects.readable_by(b).filter(question=q)) == {lb}
    assert set(JudgingLayer.objects.readable_by(org, organizer=True).filter(question=q)) == {la, lb}
    # gold is untouched by layer work, and gold's history does not show it
    assert not AnswerString.objects.filter(question=q, judged_at__isnull=False).exists()
    from annotate.selectors import question_history

    assert question_history(q) == []


def test_only_the_assessor_writes_their_layer(study):
    _c, _q, _org, a, b, la, _lb, ids = study
    with pytest.raises(Conflict):
        layers.layer_judge(layer=la, string=ids["Ringo"], by=b)
    with pytest.raises(Conflict):
        layers.layer_mark_done(layer=la, by=a)  # strings left
    judge(la, a, ids, [(t, None, None) for t in ids])
    layers.layer_mark_done(layer=la, by=a)
    with pytest.raises(Conflict):
        layers.layer_judge(layer=la, string=ids["Ringo"], new_group=True, by=a)


def test_layer_undo(study):
    _c, _q, _org, a, b, la, _lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S"), ("John Lennon", 1, "S")])
    layers.layer_set_level(layer=la, string=ids["John Lennon"], level="A", by=a)
    layers.layer_undo(layer=la, by=a)
    j = LayerJudgment.objects.get(layer=la, string_id=ids["John Lennon"])
    assert j.level.code == "S" and j.group == 1
    layers.layer_undo(layer=la, by=a)
    assert not LayerJudgment.objects.filter(layer=la, string_id=ids["John Lennon"]).exists()
    layers.layer_undo(layer=la, by=a)
    assert not LayerJudgment.objects.filter(layer=la).exists()
    with pytest.raises(Conflict):
        layers.layer_undo(layer=la, by=a)
    with pytest.raises(Conflict):
        layers.layer_undo(layer=la, by=b)


def test_layer_merge_and_renumber(study):
    _c, _q, _org, a, _b, la, _lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S"), ("McCartney", 2, "S"), ("Ringo", 3, "A")])
    layers.layer_merge(layer=la, groups=[1, 3], by=a)
    rows = dict(LayerJudgment.objects.filter(layer=la).values_list("string__text", "group"))
    assert rows == {"Lennon": 1, "Ringo": 1, "McCartney": 2}


def test_gold_operations_still_work_while_layers_exist(study):
    _c, q, org, a, _b, la, _lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S")])
    string_judge(question=q, string=ids["Yoko"], by=org)
    question_undo(question=q, by=org)  # layer events are not in gold's way
    assert gold(q)["Yoko"][2] is False
    with pytest.raises(Conflict):
        question_undo(question=q, by=org)


def test_layers_csv_round_trip(study):
    from annotate.layer_io import export_layers, layers_import
    from annotate.models import Question

    c, org, a, b = study[0], study[2], study[3], study[4]
    both_done(study)
    text = export_layers(c)
    assert text.splitlines()[0] == "question_id,synset_id,answer,level,assessor,done"
    assert len(text.splitlines()) == 1 + 10
    c2 = make_collection()
    for u, role in ((org, "organizer"), (a, "assessor"), (b, "assessor")):
        add_member(collection=c2, user=u, role=role)
    make_question(collection=c2, qid="Q1", unjudged=["Lennon"])
    done = layers_import(collection=c2, data=text.encode(), filename="l.csv", by=org)
    assert done.issues == [] and done.layers == 2 and done.judgments == 10
    assert done.strings_added == 4
    assert export_layers(c2) == text
    q2 = Question.objects.get(collection=c2)
    assert JudgingLayer.objects.filter(question=q2, done_at__isnull=False).count() == 2
    bad = text.replace(",S,", ",Z,", 1)
    refused = layers_import(collection=c2, data=bad.encode(), filename="l.csv", by=org)
    assert refused.issues and "level 'Z'" in str(refused.issues[0])
    assert export_layers(c2) == text


def test_collection_agreement_matches_the_engine():
    """The page's array path (two layers vectorized, three one by one, pooled per pair)
    gives the engine's figures computed from the layers directly."""
    from evaluation.metrics.agreement import Mark, pair_agreement, question_figures

    c = make_collection()
    org = make_user()
    judges = [make_user(username=n) for n in ("ann", "bob", "cid")]
    add_member(collection=c, user=org, role="organizer")
    for u in judges:
        add_member(collection=c, user=u, role="assessor")
    texts = ["a", "b", "c", "d"]
    q2 = [make_question(collection=c, qid=f"T{i}", unjudged=texts) for i in range(3)]
    q3 = make_question(collection=c, qid="K3", unjudged=texts)
    layers.layers_request(collection=c, questions=q2, assessors=judges[:2], by=org)
    layers.layers_request(collection=c, questions=[q3], assessors=judges, by=org, k=3)
    plans = {  # per assessor: text -> (group, level)
        "ann": {"a": (1, "S"), "b": (1, "A"), "c": (2, "B"), "d": (None, None)},
        "bob": {"a": (1, "S"), "b": (2, "A"), "c": (2, "B"), "d": (3, "B")},
        "cid": {"a": (1, "A"), "b": (1, "A"), "c": (None, None), "d": (None, None)},
    }
    value = {"S": 3, "A": 2, "B": 1}
    marks = {}
    for layer in JudgingLayer.objects.select_related("assessor", "question"):
        ids = {s.text: s.pk for s in layer.question.strings.all()}
        plan = dict(plans[layer.assessor.username])
        if layer.question.qid == "T1":  # make the questions differ
            plan["d"] = (1, "B")
        judge(layer, layer.assessor, ids, [(t, g, lv) for t, (g, lv) in plan.items()])
        layers.layer_mark_done(layer=layer, by=layer.assessor)
        marks[layer.question.qid, layer.assessor.username] = {
            ids[t]: Mark(g, value[lv] if g else 0) for t, (g, lv) in plan.items()
        }
    report = agreement_report.collection_agreement(c)
    assert report.requested == 4 and report.complete == 4
    by_qid = {r.qid: r.figures for r in report.questions}
    for q in ("T0", "T1", "T2"):
        assert by_qid[q] == question_figures([marks[q, "ann"], marks[q, "bob"]])
    assert by_qid["K3"] == question_figures([marks["K3", n] for n in ("ann", "bob", "cid")])
    pair = {(p.a, p.b): p for p in report.pairs}
    expect = pair_agreement(
        {q: marks[q, "ann"] for q in ("T0", "T1", "T2", "K3")},
        {q: marks[q, "bob"] for q in ("T0", "T1", "T2", "K3")},
        pooled=True,
        n_values=4,
    )
    got = pair["ann", "bob"].figures
    assert pair["ann", "bob"].questions == 4
    assert (got.n_strings, got.n_agree, got.kappa, got.grouping) == (
        expect.n_strings,
        expect.n_agree,
        expect.kappa,
        expect.grouping,
    )
    assert got.confusion.tolist() == expect.confusion.tolist()
    assert set(pair) == {("ann", "bob"), ("ann", "cid"), ("bob", "cid")}
    assert report.overall.n_strings == 4 * 4 + 2 * 4  # 4 ann-bob questions, 2 more pairs
    assert [t.layers for t in report.throughput] == [4, 4, 1]
    assert report.questions[0].figures.percent_agree <= report.questions[-1].figures.percent_agree


def test_a_level_used_in_a_layer_cannot_be_removed(study):
    from annotate.organizing import collection_save

    c, org, a, la, ids = study[0], study[2], study[3], study[5], study[7]
    layers.layer_judge(layer=la, string=ids["Ringo"], new_group=True, level="B", by=a)
    with pytest.raises(Conflict, match="B"):
        collection_save(collection=c, levels=[("S", "S", 3.0), ("A", "A", 2.0)], by=org)


def _all_done(study) -> None:
    _c, _q, _org, a, b, la, lb, ids = study
    judge(la, a, ids, [(t, None, None) for t in ids])
    judge(lb, b, ids, [(t, 1, "S") if t == "Lennon" else (t, None, None) for t in ids])
    layers.layer_mark_done(layer=la, by=a)
    layers.layer_mark_done(layer=lb, by=b)


def test_no_more_layers_on_a_question_whose_gold_was_derived(study):
    """Gold took the agreement of Q1's two layers: a third layer could not change it
    (agreed strings are not written twice), so a request leaves Q1 out and says so; a
    request of Q1 alone is refused."""
    c, q, org, a, b, *_ = study
    _all_done(study)
    assert LayerRequest.objects.get(question=q).gold_at is not None
    carol = make_user()
    add_member(collection=c, user=carol, role="assessor")
    q2 = make_question(collection=c, qid="Q2", unjudged=["x"])
    done = layers.layers_request(
        collection=c, questions=[q, q2], assessors=[carol, a, b], by=org, k=3
    )
    assert done.refused == ["Q1"] and done.qids == ["Q2"] and done.layers == 3
    assert JudgingLayer.objects.filter(question=q).count() == 2
    assert not JudgingLayer.objects.filter(question=q, assessor=carol).exists()
    with pytest.raises(Conflict, match=r"Gold was already derived .*\(Q1\)"):
        layers.layers_request(collection=c, questions=[q], assessors=[carol, a], by=org)
    assert JudgingLayer.objects.filter(question=q).count() == 2
    # a sample is drawn among the questions that may still get layers (Q2 has them now)
    q3 = make_question(collection=c, qid="Q3", unjudged=["x"])
    assert layers.layers_request(
        collection=c, questions=[q, q2, q3], assessors=[a, b], by=org, sample=1
    ).qids == ["Q3"]


def test_a_layers_import_does_not_replace_the_layers_gold_was_derived_from(study):
    from annotate.layer_io import layers_import

    c, _q, org, a, *_ = study
    _all_done(study)
    before = list(LayerJudgment.objects.values_list("layer_id", "string_id", "group"))
    data = (
        f"question_id,synset_id,answer,level,assessor,done\nQ1,1,Lennon,S,{a.get_username()},\n"
    ).encode()
    result = layers_import(collection=c, data=data, filename="l.csv", by=org)
    [issue] = result.issues
    assert issue.line == 2 and "gold was already derived" in issue.message
    assert list(LayerJudgment.objects.values_list("layer_id", "string_id", "group")) == before


@pytest.mark.parametrize(
    "module",
    [
        "annotate.layers",
        "annotate.layer_state",
        "annotate.layer_selectors",
        "annotate.adjudication",
        "annotate.agreement_report",
        "annotate.layer_io",
        "evaluation.layer_scores",
    ],
)
def test_every_public_function_of_the_layer_modules_is_typed(module):
    import importlib
    import inspect

    mod = importlib.import_module(module)
    untyped = []
    for name, fn in vars(mod).items():
        if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != module:
            continue
        sig = inspect.signature(fn)
        missing = [p for p, v in sig.parameters.items() if v.annotation is inspect.Parameter.empty]
        if missing or sig.return_annotation is inspect.Signature.empty:
            untyped.append(f"{name}: {missing or 'return'}")
    assert untyped == []


# -- one rule of "judged alike" (red team 13) ------------------------------------------------
def test_judged_alike_on_the_agreement_page_is_what_went_to_gold(study):
    """ann judged s1 and s2 in one synset and marked her layer done; s3 was pooled; bob put
    all three in one synset.  s1 and s2 have other synset-mates in the two layers, so gold
    sends all three to adjudication -- and the page counts none of them judged alike (it
    said 2 of 2, comparing synset-mates among the strings both layers judged only)."""
    from annotate.judging import strings_add_unjudged

    c = make_collection()
    org, a, b = make_user(), make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    for u in (a, b):
        add_member(collection=c, user=u, role="assessor")
    q = make_question(collection=c, qid="Q1", unjudged=["s1", "s2"])
    layers.layers_request(collection=c, questions=[q], assessors=[a, b], by=org)
    la, lb = (JudgingLayer.objects.get(question=q, assessor=u) for u in (a, b))
    ids = {s.text: s.pk for s in q.strings.all()}
    judge(la, a, ids, [("s1", 1, "S"), ("s2", 1, "S")])
    layers.layer_mark_done(layer=la, by=a)
    strings_add_unjudged(rows=[(q.pk, "s3", "s3")], source="pool", reason="test")
    ids = {s.text: s.pk for s in q.strings.all()}
    judge(lb, b, ids, [("s1", 1, "S"), ("s2", 1, "S"), ("s3", 1, "S")])
    layers.layer_mark_done(layer=lb, by=b)
    went_to_gold = AnswerString.objects.filter(question=q, judged_at__isnull=False).count()
    assert went_to_gold == 0
    report = agreement_report.collection_agreement(c)
    row = report.questions[0]
    assert row.figures.n_strings == 2 and row.figures.n_agree == went_to_gold
    assert report.overall.n_agree == went_to_gold and report.pairs[0].figures.n_agree == 0
    assert [r["differs"] for r in layer_selectors.adjudication_view(q)["rows"]] == [
        True,
        True,
        True,
    ]


# -- the pooled figures do not depend on which layer was created first (red team 13) --------
ROUND_TRIP = {
    "Q1": {
        "ann": {"x": (1, "S"), "y": (1, "A"), "z": None},
        "bob": {"x": (1, "S"), "y": (2, "B"), "z": (3, "A")},
    },
    "Q2": {
        "cat": {"x": (1, "A"), "y": None, "z": None},
        "ann": {"x": (1, "S"), "y": (1, "S"), "z": None},
    },
    "Q3": {
        "bob": {"x": None, "y": (1, "B"), "z": (1, "B")},
        "cat": {"x": (1, "S"), "y": None, "z": (1, "B")},
    },
}


def test_agreement_figures_survive_a_layers_csv_round_trip():
    """The request gives Q2 cat's layer before ann's; the layers CSV recreates them in
    name order.  The pooled kappa was 0.0526 before and 0.0 after, the table of levels
    transposed for Q2: pooled pairs now put the assessors in name order, as the pair rows."""
    from annotate.layer_io import export_layers, layers_import

    users = {n: make_user(username=n) for n in ("ann", "bob", "cat")}
    org = make_user(username="org")
    c1, c2 = make_collection(), make_collection()
    for c in (c1, c2):
        add_member(collection=c, user=org, role="organizer")
        for u in users.values():
            add_member(collection=c, user=u, role="assessor")
        for qid in ROUND_TRIP:
            make_question(collection=c, qid=qid, unjudged=["x", "y", "z"])
    qs = list(c1.questions.order_by("id"))
    layers.layers_request(collection=c1, questions=qs, assessors=list(users.values()), by=org, k=2)
    first = JudgingLayer.objects.filter(question__qid="Q2", question__collection=c1)
    assert first.order_by("id").first().assessor.username == "cat"  # created first
    for q in qs:
        ids = {s.text: s.pk for s in q.strings.all()}
        for name, plan in ROUND_TRIP[q.qid].items():
            layer = layer_selectors.layer_for(question=q, user=users[name])
            judge(layer, users[name], ids, [(t, *(v or (None, None))) for t, v in plan.items()])
            layers.layer_mark_done(layer=layer, by=users[name])
    text = export_layers(c1)
    assert not layers_import(collection=c2, data=text.encode(), filename="l.csv", by=org).issues
    assert export_layers(c2) == text
    r1, r2 = agreement_report.collection_agreement(c1), agreement_report.collection_agreement(c2)
    o1, o2 = r1.overall, r2.overall
    assert o1 == o2  # every figure (the dataclass compares all but the table)
    assert o1.confusion.tolist() == o2.confusion.tolist()
    assert (r1.alpha_nominal, r1.alpha_ordinal) == (r2.alpha_nominal, r2.alpha_ordinal)
    assert [(p.a, p.b, p.questions, p.figures) for p in r1.pairs] == [
        (p.a, p.b, p.questions, p.figures) for p in r2.pairs
    ]
    by_qid = {r.qid: (r.assessors, r.figures) for r in r2.questions}
    assert {r.qid: (r.assessors, r.figures) for r in r1.questions} == by_qid
    assert by_qid["Q2"][0] == ["ann", "cat"]
    # in name order both sides judge 6 of the 9 strings correct, and 5 of 9 alike: p_o = p_e
    assert o1.kappa == pytest.approx(0.0)


# -- direct tests of the layer writes the views call -----------------------------------------
def _mine(layer) -> dict[str, tuple]:
    return {
        j.string.text: (j.group, j.level.code if j.level else None)
        for j in LayerJudgment.objects.filter(layer=layer).select_related("string", "level")
    }


def test_layer_token_is_the_state_the_page_sends_back(study):
    _c, _q, _org, a, _b, la, _lb, ids = study
    assert layers.layer_token(None) == "u"
    judge(la, a, ids, [("Lennon", 1, "S"), ("Yoko", None, None)])
    lennon = LayerJudgment.objects.get(layer=la, string_id=ids["Lennon"])
    yoko = LayerJudgment.objects.get(layer=la, string_id=ids["Yoko"])
    assert layers.layer_token(lennon) == f"1/{lennon.level_id}"
    assert layers.layer_token(yoko) == "x"
    # a page's token that no longer holds refuses the write
    with pytest.raises(Conflict):
        layers.layer_unjudge(layer=la, string=ids["Lennon"], by=a, expect="u")


def test_layer_unjudge_returns_a_string_to_the_candidates_and_undo_brings_it_back(study):
    _c, _q, _org, a, _b, la, _lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S"), ("John Lennon", 1, "S")])
    lennon = LayerJudgment.objects.get(layer=la, string_id=ids["Lennon"])
    event = layers.layer_unjudge(
        layer=la, string=ids["Lennon"], by=a, expect=layers.layer_token(lennon)
    )
    assert event.action == "layer_unjudge" and event.layer == la
    assert _mine(la) == {"John Lennon": (1, "S")}
    layers.layer_undo(layer=la, by=a)
    assert _mine(la) == {"Lennon": (1, "S"), "John Lennon": (1, "S")}


def test_layer_split_moves_strings_into_a_new_synset_keeping_levels(study):
    _c, _q, _org, a, _b, la, _lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S"), ("John Lennon", 1, "S"), ("Ringo", 1, "A")])
    judge(la, a, ids, [("Yoko", None, None)])
    layers.layer_split(layer=la, strings=[ids["Ringo"]], by=a)
    mine = _mine(la)
    assert mine["Lennon"] == mine["John Lennon"] == (1, "S")
    assert mine["Ringo"][1] == "A" and mine["Ringo"][0] not in (None, 1)
    with pytest.raises(Conflict, match="Only strings in a synset"):
        layers.layer_split(layer=la, strings=[ids["Yoko"]], by=a)
