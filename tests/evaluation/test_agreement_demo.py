"""The agreement-study demo: two assessors' layers judged through the layer services."""

import pytest

from annotate.agreement_report import collection_agreement
from annotate.layer_selectors import adjudication_queue
from annotate.models import AnswerString
from evaluation.management.commands.load_demo import load_agreement_demo, load_demo

pytestmark = pytest.mark.django_db


def test_agreement_demo_figures_and_queue():
    load_demo()
    c = load_agreement_demo()
    report = collection_agreement(c)
    pair = report.overall
    # 23 strings judged by both; 14 judged alike (both incorrect, or both correct at one
    # level with the same synset-mates: the rule that sends a string to gold directly);
    # 15 correct in both
    assert (pair.n_strings, pair.n_agree, pair.n_correct_both) == (23, 14, 15)
    # one definition: the collection's count is the sum of its questions'
    assert sum(r.figures.n_agree for r in report.questions) == 14
    assert sum(r.figures.n_strings for r in report.questions) == 23
    # the same level (or both incorrect), synset-mates aside: the confusion table's diagonal
    assert int(pair.confusion.trace()) == 19
    assert pair.kappa == pytest.approx(0.794643, abs=1e-6)
    assert pair.alpha_nominal == pytest.approx(0.799107, abs=1e-6)
    assert pair.grouping.pair_precision == 1.0
    assert pair.grouping.pair_recall == pytest.approx(7 / 9)
    # only DNA is agreed throughout; the organizer adjudicated three questions, two wait
    assert [q.qid for q in adjudication_queue(c)] == ["AG-MOON", "AG-WATER"]
    for qid in ("AG-NOBEL-LIT", "AG-EVEREST", "AG-CAPITAL-AU"):
        assert not AnswerString.objects.filter(question__qid=qid, judged_at__isnull=True).exists()
    # the adjudication took the named layer: Chomolungma is a synset of its own (assessor2)
    everest = {s.text: s.synset_id for s in AnswerString.objects.filter(question__qid="AG-EVEREST")}
    assert everest["Chomolungma"] != everest["Mount Everest"] == everest["Everest"]
    assert everest["K2"] is None
    assert not AnswerString.objects.filter(question__qid="AG-DNA", judged_at__isnull=True).exists()
    # loading again resets it
    assert load_agreement_demo().questions.count() == 6
