"""Changing a collection's matching mode re-keys its strings (DESIGN.md section 4):
agreeing spellings fold, disagreeing ones refuse the change with the list of conflicts."""

import pytest

from annotate.matching import MatchingModeConflict, collection_set_matching_mode
from annotate.models import AnswerString, JudgmentEvent
from evaluation.metrics.normalize import normalize_answer
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def strings(question):
    return [
        (s.text, s.key, s.variants, s.synset_id is not None)
        for s in AnswerString.objects.filter(question=question).order_by("id")
    ]


def test_agreeing_spellings_fold_and_keys_follow_the_mode():
    c = make_collection()
    q = make_question(
        collection=c,
        qid="border",
        synsets=[[("Radcliffe Line", "S"), ("The Radcliffe Line", "S")]],
        incorrect=["Durand-Line", "Durand Line."],
        unjudged=["A Tale"],
    )
    by = make_user()
    folded = collection_set_matching_mode(collection=c, mode="squad", by=by)
    assert folded == 1  # the two Radcliffe spellings; the Durand ones key apart (hyphen)
    assert c.matching_mode == "squad"
    assert strings(q) == [
        ("Radcliffe Line", "radcliffe line", ["The Radcliffe Line"], True),
        ("Durand-Line", "durandline", [], False),
        ("Durand Line.", "durand line", [], False),
        ("A Tale", "tale", [], False),
    ]
    for s in AnswerString.objects.filter(question=q):
        assert s.key == normalize_answer(s.text, "squad")
    event = JudgmentEvent.objects.get(action="matching_mode_set")
    assert event.before == {"matching_mode": "normalized"}
    assert event.after["folded"] == 1
    # and back: nothing folds, every key is the normalized one again
    assert collection_set_matching_mode(collection=c, mode="normalized", by=by) == 0
    assert [s[1] for s in strings(q)] == ["radcliffe line", "durand-line", "durand line", "a tale"]


def test_disagreeing_spellings_refuse_the_change_and_nothing_is_written():
    c = make_collection(slug="conf")
    q = make_question(
        collection=c,
        qid="border",
        synsets=[[("The Radcliffe Line", "S")]],
        incorrect=["Radcliffe Line"],
    )
    make_question(collection=c, qid="q2", synsets=[[("U.S.A.", "S")], [("USA", "A")]])
    before = strings(q)
    with pytest.raises(MatchingModeConflict) as info:
        collection_set_matching_mode(collection=c, mode="squad", by=make_user())
    conflicts = info.value.conflicts
    assert [(k.question, k.key, k.strings) for k in conflicts] == [
        (
            "border",
            "radcliffe line",
            (("The Radcliffe Line", "synset 1, level S"), ("Radcliffe Line", "judged incorrect")),
        ),
        ("q2", "usa", (("U.S.A.", "synset 1, level S"), ("USA", "synset 2, level A"))),
    ]
    assert "judge them alike first" in str(info.value)
    c.refresh_from_db()
    assert c.matching_mode == "normalized"
    assert strings(q) == before
    assert not JudgmentEvent.objects.filter(action="matching_mode_set").exists()


def test_exact_to_normalized_folds_spellings_as_typed():
    c = make_collection(slug="exact", matching_mode="exact")
    q = make_question(collection=c, qid="q", incorrect=["paul", "Paul "], unjudged=["PAUL!"])
    # exact: three keys; normalized: all three are "paul", but two are judged incorrect
    # and one is unjudged: a conflict
    with pytest.raises(MatchingModeConflict):
        collection_set_matching_mode(collection=c, mode="normalized", by=None)
    AnswerString.objects.filter(question=q, text="PAUL!").delete()
    assert collection_set_matching_mode(collection=c, mode="normalized", by=None) == 1
    assert strings(q) == [("paul", "paul", ["Paul "], False)]  # the spelling as it was typed


def test_run_answers_are_rekeyed_with_the_strings():
    from evaluation.models import RunAnswer
    from evaluation.services import collection_matching_mode_change
    from tests.factories import make_run

    c = make_collection(slug="runs")
    q = make_question(collection=c, qid="border", synsets=[[("Radcliffe Line", "S")]])
    owner = make_user()
    run = make_run(collection=c, owner=owner, name="r")
    RunAnswer.objects.create(
        run=run,
        question=q,
        rank=1,
        text="The Radcliffe Line.",
        key=normalize_answer("The Radcliffe Line.", "normalized"),
    )
    assert collection_matching_mode_change(collection=c, mode="squad", by=owner) == 0
    assert RunAnswer.objects.get(run=run).key == "radcliffe line"
    assert AnswerString.objects.get(question=q).key == "radcliffe line"


def _layers(c, q, *assessors):
    from annotate import layers
    from annotate.models import JudgingLayer
    from tests.factories import add_member

    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    for u in assessors:
        add_member(collection=c, user=u, role="assessor")
    layers.layers_request(
        collection=c, questions=[q], assessors=list(assessors), by=org, k=len(assessors)
    )
    return [JudgingLayer.objects.get(question=q, assessor=u) for u in assessors]


def _marks(q):
    from annotate.models import LayerJudgment

    return sorted(
        (j.layer.assessor.username, j.string.text, j.group, j.level.code if j.level else None)
        for j in LayerJudgment.objects.filter(layer__question=q).select_related(
            "layer__assessor", "string", "level"
        )
    )


def test_layer_judgments_of_folded_strings_move_to_the_kept_string():
    """Nothing is lost: a folded string's layer judgment goes to the kept string when that
    one is unjudged in the layer, and an identical one there is a duplicate dropped."""
    from annotate import layers
    from annotate.models import JudgingLayer

    c = make_collection(slug="lay")
    q = make_question(
        collection=c,
        qid="border",
        synsets=[[("Radcliffe Line", "S"), ("The Radcliffe Line", "S")]],
        incorrect=["Durand Line"],
    )
    a, b = make_user(username="ann"), make_user(username="bob")
    la, lb = _layers(c, q, a, b)
    ids = {s.text: s.pk for s in q.strings.all()}
    # ann judged only the spelling that folds; bob judged both alike
    layers.layer_judge(layer=la, string=ids["The Radcliffe Line"], new_group=True, level="S", by=a)
    layers.layer_judge(layer=lb, string=ids["Radcliffe Line"], new_group=True, level="S", by=b)
    layers.layer_judge(layer=lb, string=ids["The Radcliffe Line"], group=1, level="S", by=b)
    layers.layer_judge(layer=lb, string=ids["Durand Line"], by=b)
    versions = dict(JudgingLayer.objects.values_list("pk", "version"))
    assert collection_set_matching_mode(collection=c, mode="squad", by=None) == 1
    assert _marks(q) == [
        ("ann", "Radcliffe Line", 1, "S"),
        ("bob", "Durand Line", None, None),
        ("bob", "Radcliffe Line", 1, "S"),
    ]
    for pk, v in JudgingLayer.objects.values_list("pk", "version"):
        assert v == versions[pk] + 1  # open layer pages of the question are stale
    event = JudgmentEvent.objects.get(action="matching_mode_set")
    assert event.after["layer_judgments_moved"] == 1
    assert event.after["layer_judgments_dropped"] == 1


def test_different_layer_judgments_of_folding_strings_refuse_the_change():
    from annotate import layers

    c = make_collection(slug="layc")
    q = make_question(
        collection=c,
        qid="border",
        synsets=[[("Radcliffe Line", "S"), ("The Radcliffe Line", "S")]],
    )
    a = make_user(username="ann")
    (la,) = _layers(c, q, a)
    ids = {s.text: s.pk for s in q.strings.all()}
    layers.layer_judge(layer=la, string=ids["Radcliffe Line"], new_group=True, level="S", by=a)
    layers.layer_judge(layer=la, string=ids["The Radcliffe Line"], by=a)  # incorrect
    before = _marks(q)
    with pytest.raises(MatchingModeConflict) as info:
        collection_set_matching_mode(collection=c, mode="squad", by=None)
    assert [(k.question, k.key, k.strings) for k in info.value.conflicts] == [
        (
            "border",
            "radcliffe line",
            (
                ("Radcliffe Line", "ann's layer: synset 1, level S"),
                ("The Radcliffe Line", "ann's layer: judged incorrect"),
            ),
        )
    ]
    c.refresh_from_db()
    assert c.matching_mode == "normalized"
    assert _marks(q) == before
    assert AnswerString.objects.filter(question=q).count() == 2


def test_strings_that_would_get_an_empty_key_refuse_the_change():
    """Under squad "A" and "The" key to "": they would match nothing (string_add refuses
    such a string), and they must not fold into one either: listed, nothing written."""
    c = make_collection(slug="empty")
    q = make_question(
        collection=c,
        qid="vit",
        synsets=[[("A", "S")], [("Vitamin C", "S")]],
        incorrect=["The"],
        unjudged=["an apple"],
    )
    make_question(collection=c, qid="q2", synsets=[[("U.S.A.", "S")], [("USA", "A")]])
    before = strings(q)
    with pytest.raises(MatchingModeConflict) as info:
        collection_set_matching_mode(collection=c, mode="squad", by=make_user())
    assert [(k.question, k.key, k.strings) for k in info.value.conflicts] == [
        ("vit", "", (("A", "synset 1, level S"),)),
        ("vit", "", (("The", "judged incorrect"),)),
        ("q2", "usa", (("U.S.A.", "synset 1, level S"), ("USA", "synset 2, level A"))),
    ]
    message = str(info.value)
    assert message.startswith("Under squad matching, 2 string(s) would have an empty matching key")
    assert 'question vit: "A" (synset 1, level S) would have an empty matching key' in message
    assert "1 group(s) of strings would be one string" in message
    c.refresh_from_db()
    assert c.matching_mode == "normalized" and strings(q) == before
    # with those strings gone (or edited), the change goes through
    AnswerString.objects.filter(question=q, text__in=["A", "The"]).delete()
    AnswerString.objects.filter(text="USA").delete()
    assert collection_set_matching_mode(collection=c, mode="squad", by=None) == 0


def test_an_empty_key_matches_nothing_in_scores_pool_and_suggestions():
    """A string keyed "" before this rule (squad set when it was allowed) is matched by no
    run answer keyed "" ("?", "the"): not in the scores, the unjudged counts, the pool or
    the judging page's suggestions."""
    from annotate.suggest import Suggester
    from evaluation import selectors, services
    from evaluation.analysis import score_config
    from tests.factories import make_run

    c = make_collection(slug="junk", matching_mode="squad", max_output_size=5)
    q = make_question(collection=c, qid="vit", synsets=[[("A", "S")], [("Paul", "S")]])
    assert AnswerString.objects.get(question=q, text="A").key == ""
    owner = make_user()
    run = make_run(collection=c, owner=owner, name="junk", answers={"vit": ["?", "the", "paul"]})
    config = score_config.check_config(
        metrics=["rr"], gains="default", beta=1, rbp_p=0.5, levels=["S", "A", "B"]
    )
    assert services.score_runs(c, [run], config).per_question["junk"].at["vit", "rr"] == 1 / 3
    assert selectors.unjudged_counts([run]) == {run.pk: 2}
    unjudged = selectors.unjudged_answers(run)
    assert [(u["answer"], u["pooled"], u["poolable"]) for u in unjudged] == [
        ("?", False, False)
    ]  # "?" and "the" are one key; never pooled
    assert services.run_pool(run=run, by=owner) == 0
    suggester = Suggester({1: ["A"], 2: ["Paul"]}, mode="squad")
    assert suggester.suggest("?") is None and suggester.suggest("the") is None
    assert suggester.suggest("paul!").reason == "same key"
