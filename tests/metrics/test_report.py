"""Report renderings: the trec rendering made as bytes from a template (values of one
width) is the text the general rendering writes, whatever the values."""

import numpy as np
import pytest

from evaluation.metrics import report
from evaluation.metrics.data import Judgments, Ranking
from evaluation.metrics.engine import Scores, evaluate


def scores_with(values: np.ndarray) -> Scores:
    """Scores of two runs over two questions, their values replaced by ``values``."""
    j = Judgments.from_rows([("Q1", "1", "Paul", "S"), ("Qé 2", "1", "x", "A")])
    runs = [Ranking.from_lists("a", {"Q1": ["Paul"]}), Ranking.from_lists("b ü", {})]
    s = evaluate(j, runs, ["ap", "rr", "ndcg@5"])
    return Scores(s.metrics, s.runs, s.unknown, s.marked, values.reshape(s.values.shape))


def general(scores: Scores, digits: int | None) -> str:
    texts = report._with_means(scores, digits)
    out = []
    qids = [str(q) for q in scores.questions] + ["all"]
    for i, run in enumerate(scores.runs):
        out.append(f"runid\tall\t{run}\n")
        for q, row in zip(qids, texts[i], strict=True):
            out.extend(f"{m}\t{q}\t{t}\n" for m, t in zip(scores.metrics, row, strict=True))
    return "".join(out)


HALVES = [0.46875, 0.03125, 0.5, 0.00005, 0.00015, 0.99995, 9.875, 0.125, 0.0625]


@pytest.mark.parametrize("digits", [1, 2, 4, 6])
@pytest.mark.parametrize("seed", range(20))
def test_trec_from_a_template_is_the_general_text(digits, seed):
    rng = np.random.default_rng(seed)
    values = rng.choice([*HALVES, *rng.random(20), *(rng.random(5) * 9.9)], size=12)
    fixed = report._trec_fixed(scores_with(values), digits)
    assert fixed is not None
    assert fixed.decode() == general(scores_with(values), digits)
    assert report.to_trec(scores_with(values), digits=digits) == fixed.decode()
    assert b"".join(report.render_utf8("trec", scores_with(values), digits=digits)) == fixed


@pytest.mark.parametrize("odd", [-0.0, -0.25, 10.0, 9.99996, 123.5, float("nan"), float("inf")])
def test_values_of_another_width_use_the_general_text(odd):
    values = np.full(12, 0.25)
    values[5] = odd
    s = scores_with(values)
    assert report._trec_fixed(s, 4) is None
    assert report.to_trec(s) == general(s, 4)
    for fmt, render in report.FORMATS.items():
        assert b"".join(report.render_utf8(fmt, s)) == render(s).encode()


def test_full_precision_uses_the_general_text():
    s = scores_with(np.full(12, 0.1))
    assert report._trec_fixed(s, None) is None
    assert "\t0.1\n" in report.to_trec(s, digits=None)
