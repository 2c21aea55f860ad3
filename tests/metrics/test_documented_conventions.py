"""The conventions docs/formats.md states for the agreement and reliability figures
("Conventions of the agreement and reliability figures"), each on its documented example:
the numbers the page gives are the numbers the engine gives."""

import math
from pathlib import Path

import numpy as np
import pytest

from evaluation.analysis.stats import format_p, p_text
from evaluation.metrics.agreement import (
    Mark,
    alpha_nominal,
    alpha_ordinal,
    cohen_kappa,
    grouping_agreement,
    pair_agreement,
)
from evaluation.metrics.csvio import read_csv
from evaluation.metrics.reliability.bootstrap import bootstrap_asl
from evaluation.metrics.reliability.comparisons import bootstrap_intervals, tukey_hsd
from evaluation.metrics.reliability.figures import metric_reliability, reliability_report
from evaluation.metrics.reliability.samples import draw_samples
from evaluation.metrics.reliability.stability import Stability
from evaluation.metrics.reliability.tables import pairs_csv

DOC = (Path(__file__).resolve().parents[2] / "docs" / "formats.md").read_text(encoding="utf-8")
SECTION = DOC.split("## Conventions of the agreement and reliability figures")[1].split("\n## ")[0]


def documented(*phrases: str) -> None:
    """The section states ``phrases`` (line breaks of the page read as spaces)."""
    text = " ".join(SECTION.split())
    for phrase in phrases:
        assert phrase in text, phrase


def test_p_values_are_never_zero():
    documented("(count + 1) / (T + 1)", "with B = 200 the ASL is 1/201", "shown `0.0010`")
    X = np.array([[0.2, 0.4, 0.6, 0.8, 1.0, 0.3], [0.1, 0.3, 0.5, 0.7, 0.9, 0.2]])
    boot = draw_samples(list("abcdef"), trials=200, seed=1).bootstrap
    assert bootstrap_asl(X, boot).asl.tolist() == [1 / 201]
    far = np.array([[1.0] * 20, [0.0] * 20])  # a permutation reaches 1 with chance 2^-19
    assert tukey_hsd(far, ["a", "b"], trials=99, seed=0).tolist() == [1 / 100]
    # the smallest value of B = 1,000 as the pages, readable CSVs and full CSVs show it
    documented("written `0.000999001` or in full `0.000999000999000999`")
    assert format_p(1 / 1001) == "0.0010" and p_text(1 / 1001) == "0.000999000999000999"
    report = reliability_report(
        {("m", "g"): far},
        ["a", "b"],
        draw_samples([str(i) for i in range(20)], trials=1000, seed=0),
    )
    _, header, rows = read_csv(pairs_csv(report))
    assert rows[0][header.index("p_tukey")] == "0.000999001"
    assert rows[0][header.index("asl")] == "0.000999001"


def test_identical_runs_get_one():
    documented("runs `r0` and `r2 = r0` of a 3-run matrix have 1.0 in all four columns")
    rng = np.random.default_rng(2)
    X = rng.random((3, 12))
    X[2] = X[0]
    s = draw_samples([str(i) for i in range(12)], trials=50, seed=3)
    r = metric_reliability(X, s, runs=["r0", "r1", "r2"])
    k = 1  # the pair (r0, r2) in run_pairs order
    assert (r.p_t[k], r.p_holm[k], r.p_tukey[k], r.discrimination.asl[k]) == (1, 1, 1, 1)


def test_sakai_difference_hand_example():
    documented(
        "ASL = (0 + 1)/(4 + 1) = 0.2 < 0.5",
        "the second largest |t| is 1 (sample 3), so the difference required is |-1/30| = 0.0333",
    )
    X = np.array([[0.5, 0.3, 0.4], [0.2, 0.2, 0.2]])
    boot = np.array([[0, 0, 2], [0, 1, 2], [1, 1, 0], [2, 2, 1]])
    d = bootstrap_asl(X, boot, alpha=0.5)
    assert d.asl.tolist() == [0.2]
    assert d.required_difference == pytest.approx(1 / 30)
    assert round(d.required_difference, 4) == 0.0333


def test_bootstrap_percentile_interval_example():
    documented("the interval is [0.05, 1]")
    lo, hi = bootstrap_intervals(
        np.array([[0.0, 1.0]]), np.array([[0, 0], [0, 1], [1, 1], [1, 0], [1, 1]])
    )
    assert lo.tolist() == pytest.approx([0.05]) and hi.tolist() == [1.0]


def test_ties_at_5pct_minority_example():
    documented("`ties_at_5pct_minority` = 0.5")
    st = Stability(
        np.array([0.0, 0.01, 0.02]),
        np.array([[7, 6, 5]]),
        np.array([[3, 1, 0]]),
        np.array([[0, 3, 5]]),
    )
    assert st.minority_rate.tolist() == pytest.approx([0.3, 0.1, 0.0])
    assert st.ties_at_minority() == 0.5
    never = Stability(np.array([0.0]), np.array([[5]]), np.array([[5]]), np.array([[0]]))
    assert math.isnan(never.ties_at_minority())


def test_one_class_gives_one():
    documented("gives kappa = 0 (p_o = 2/3 = p_e) and alpha nominal = 0")
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0
    assert alpha_nominal(np.array([[1.0, 1, 1], [1, 1, 1]])) == 1.0
    assert alpha_ordinal(np.array([[2.0, 2, 2], [2, 2, 2]])) == 1.0
    assert cohen_kappa([1, 1, 1], [1, 1, 0]) == 0.0
    assert alpha_nominal(np.array([[1.0, 1, 1], [1, 1, 0]])) == 0.0
    assert math.isnan(cohen_kappa([], []))


def test_pair_f1_example():
    documented(
        "precision = recall = F1 = 1.0",
        "give pair precision 0, recall 0, F1 0 (B-cubed, which scores every string, gives "
        "precision 1, recall 2/3, F1 0.8)",
    )
    none = grouping_agreement(["1", "2", "3"], ["7", "8", "9"])
    assert (none.pair_precision, none.pair_recall, none.pair_f1, none.ari) == (1, 1, 1, 1)
    one = grouping_agreement(["1", "1", "2"], ["7", "8", "9"])  # a = {x, y}, {z}
    assert (one.pair_precision, one.pair_recall, one.pair_f1) == (0, 0, 0)
    assert one.bcubed_precision == 1 and one.bcubed_recall == pytest.approx(2 / 3)
    assert one.bcubed_f1 == pytest.approx(0.8)


def test_all_layer_pairs_example():
    """The "all layer pairs" row of the example: every pair of layers of the question its
    own units (``agreement_report._pooled`` offsets each pair's units; the ORM report is
    checked against the engine in tests/annotate/test_layers.py)."""
    documented("the row has 3 pairs x 2 strings = 6 units, 4 of them correct in both")
    ann = {"x": Mark(1, 2), "y": Mark(1, 2)}
    bob = {"x": Mark(1, 2), "y": Mark(2, 2)}
    cid = {"x": Mark(None, 0), "y": Mark(5, 1)}
    layers = [ann, bob, cid]
    pairs = [(i, j) for i in range(3) for j in range(i + 1, 3)]
    pooled = pair_agreement(
        {("Q", i, j): layers[i] for i, j in pairs},
        {("Q", i, j): layers[j] for i, j in pairs},
        pooled=True,
        n_values=3,
    )
    assert (pooled.n_strings, pooled.n_correct_both) == (6, 4)
