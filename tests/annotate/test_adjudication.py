"""Gold from layers (annotate/adjudication.py): what the layers agree on goes to gold, the
rest waits for adjudication (take a layer's judgment or synset, place a string no layer
judged), nothing before every layer is done, all undoable."""

import pytest

from annotate import adjudication, layer_selectors, layers
from annotate.edits import Conflict
from annotate.judging import question_undo
from annotate.models import AnswerString, JudgmentEvent, Question, QuestionStatus
from tests.annotate.layer_study import PLAN_A, both_done, gold, judge, layer_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    return layer_study()


def test_agreement_goes_to_gold_and_the_rest_to_adjudication(study):
    c, q, _org, _a, _b, _la, _lb, _ids = study
    assert list(layer_selectors.adjudication_queue(c)) == []
    both_done(study)
    g = gold(q)
    assert g["Lennon"] == (1, "S", True) and g["John Lennon"] == (1, "S", True)
    assert g["Yoko"] == (None, None, True)
    assert g["McCartney"][2] is False and g["Ringo"][2] is False
    assert list(layer_selectors.adjudication_queue(c)) == [q]
    q.refresh_from_db()
    assert q.status != QuestionStatus.DONE
    event = JudgmentEvent.objects.filter(action="layers_agree").get()
    assert event.after["agreed"] == 3 and event.after["disagreed"] == 2
    c.refresh_from_db()
    assert c.judgment_version > 0


def test_adjudicate_take_string_and_synset_then_undo(study):
    c, q, org, _a, _b, la, lb, ids = study
    both_done(study)
    adjudication.adjudicate_take(question=q, layer=lb, strings=[ids["Ringo"]], by=org)
    assert gold(q)["Ringo"] == (None, None, True)
    adjudication.adjudicate_take(question=q, layer=la, group=2, by=org)
    assert gold(q)["McCartney"] == (2, "S", True)
    q.refresh_from_db()
    assert list(layer_selectors.adjudication_queue(c)) == []
    question_undo(question=q, by=org)
    assert gold(q)["McCartney"][2] is False
    question_undo(question=q, by=org)
    assert gold(q)["Ringo"][2] is False
    # take the left layer's view of a string of an agreed synset: it joins that synset
    adjudication.adjudicate_take(question=q, layer=la, strings=[ids["Ringo"]], by=org)
    assert gold(q)["Ringo"] == (2, "A", True)
    actions = list(
        JudgmentEvent.objects.filter(question=q, layer__isnull=True).values_list(
            "action", flat=True
        )
    )
    assert actions.count("adjudicate_take") == 3 and "layers_agree" in actions


def test_layers_to_gold_requires_every_layer_done(study):
    _c, q, org, _a, _b, _la, _lb, _ids = study
    with pytest.raises(Conflict):
        adjudication.question_layers_to_gold(question=q, by=org)


def test_full_agreement_marks_the_question_done(study):
    _c, q, _org, a, b, la, lb, ids = study
    judge(la, a, ids, PLAN_A)
    judge(lb, b, ids, PLAN_A)
    layers.layer_mark_done(layer=la, by=a)
    layers.layer_mark_done(layer=lb, by=b)
    q.refresh_from_db()
    assert q.status == QuestionStatus.DONE
    assert gold(q)["Ringo"] == (3, "A", True)


# -- adjudication waits for every layer (red team 13) ---------------------------------------
def test_adjudication_waits_for_every_layer(study):
    """The organizer took ann's open layer for Lennon; ann then judged it incorrect, as bob
    did: gold kept Lennon correct and the question was done, for the agreement step leaves
    strings gold judged alone.  Now nothing is adjudicated before every layer is done."""
    _c, q, org, a, b, la, lb, ids = study
    judge(la, a, ids, [("Lennon", 1, "S")])
    with pytest.raises(Conflict, match="Waiting for 2 layers"):
        adjudication.adjudicate_take(question=q, layer=la, strings=[ids["Lennon"]], by=org)
    with pytest.raises(Conflict, match="Waiting for 2 layers"):
        adjudication.adjudication_lock(question=q, version=None)
    with pytest.raises(Conflict, match="Waiting for 2 layers"):
        adjudication.adjudicate_place(question=q, string=ids["Lennon"], new_synset=True, by=org)
    assert not AnswerString.objects.filter(question=q, judged_at__isnull=False).exists()
    view = layer_selectors.adjudication_view(q)
    assert view["waiting"] == 2 and view["n_layers"] == 2
    assert view["layers"] == [] and view["rows"] == [] and view["layer_synsets"] == []
    # ann changes her mind; both layers judge every string incorrect
    judge(la, a, ids, [(t, None, None) for t in ids])
    layers.layer_mark_done(layer=la, by=a)
    with pytest.raises(Conflict, match="Waiting for 1 layer:"):
        adjudication.adjudicate_take(question=q, layer=la, strings=[ids["Lennon"]], by=org)
    judge(lb, b, ids, [(t, None, None) for t in ids])
    layers.layer_mark_done(layer=lb, by=b)
    assert all(v == (None, None, True) for v in gold(q).values())
    q.refresh_from_db()
    assert q.status == QuestionStatus.DONE
    assert layer_selectors.adjudication_view(q)["waiting"] == 0
    adjudication.adjudication_lock(question=q, version=None)  # no longer refused


# -- a string no layer judged, placed in gold by the adjudicator (red team 13) --------------
def test_a_string_pooled_after_gold_was_derived_is_placed_in_gold(study):
    from annotate.judging import strings_add_unjudged

    _c, q, org, _a, _b, la, _lb, ids = study
    both_done(study)
    strings_add_unjudged(rows=[(q.pk, "lennon j", "Lennon J.")], source="pool", reason="test")
    new = AnswerString.objects.get(question=q, text="Lennon J.")
    assert adjudication.unjudged_by_layers(q) == {new.pk}
    row = next(r for r in layer_selectors.adjudication_view(q)["rows"] if r["string"].pk == new.pk)
    assert row["unlayered"] and row["differs"]
    # neither take (no layer judged it) nor set level (not in a gold synset) could place it
    with pytest.raises(Conflict):
        adjudication.adjudicate_take(question=q, layer=la, strings=[new.pk], by=org)
    # a string a layer judged is taken from the layer, not placed
    with pytest.raises(Conflict, match="take it from that layer"):
        adjudication.adjudicate_place(question=q, string=ids["Ringo"], new_synset=True, by=org)
    with pytest.raises(Conflict, match="Choose a gold synset"):
        adjudication.adjudicate_place(question=q, string=new.pk, by=org)
    lennon = AnswerString.objects.get(pk=ids["Lennon"]).synset
    event = adjudication.adjudicate_place(
        question=q, string=new.pk, synset=lennon.pk, level="A", by=org
    )
    new.refresh_from_db()
    assert new.synset_id == lennon.pk and new.level.code == "A" and new.judged_at
    assert event.action == "string_add" and event.user == org
    question_undo(question=q, by=org, any_user=True)
    new.refresh_from_db()
    assert new.synset_id is None and new.judged_at is None
    adjudication.adjudicate_place(question=q, string=new.pk, new_synset=True, level="B", by=org)
    new.refresh_from_db()
    assert new.synset_id not in (None, lennon.pk) and new.level.code == "B"


def test_adjudication_lock_refuses_a_page_older_than_gold(study):
    _c, q, org, _a, _b, la, _lb, ids = study
    both_done(study)
    version = Question.objects.get(pk=q.pk).version
    adjudication.adjudication_lock(question=q, version=version)  # the page is current
    adjudication.adjudicate_take(question=q, layer=la, strings=[ids["Ringo"]], by=org)
    with pytest.raises(Conflict, match="Someone else changed this question's gold"):
        adjudication.adjudication_lock(question=q, version=version)
    adjudication.adjudication_lock(question=q, version=None)  # no version: not checked
