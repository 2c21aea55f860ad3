"""Every worked value of DESIGN.md section 5 and the papers."""

import pytest

from evaluation.metrics import BASE_METRICS

from .helpers import BEATLES, binary_question, judgments, score


def beatles(with_fifth=False):
    items = list(BEATLES)
    if with_fifth:
        items += [("5", "Stuart Sutcliffe", "B"), ("5", "Sutcliffe", "B"), ("5", "Stuart", "B")]
    return judgments({"beatles": items})


def test_one_b_synset_answer_at_rank_1_scores_q_1():
    j = judgments({"q": [("1", "x", "B")]})
    assert score(j, {"q": ["x"]}, ["q_measure", "r_measure"])["q"] == {
        "q_measure": 1.0,
        "r_measure": 1.0,
    }


def test_one_b_synset_answer_at_rank_100():
    j = judgments({"q": [("1", "x", "B")]})
    s = score(j, {"q": [f"w{i}" for i in range(99)] + ["x"]}, ["q_measure", "r_measure"])["q"]
    assert s["q_measure"] == pytest.approx(2 / 101)
    assert round(s["q_measure"], 4) == 0.0198
    assert s["r_measure"] == 0.0


def test_beatles_example_1():
    s = score(
        beatles(),
        {"beatles": ["McCartney", "Lennon", "Paul", "George Harrison", "Starr"]},
        ["q_measure", "r_measure", "rr"],
    )["beatles"]
    assert s["q_measure"] == pytest.approx((3 / 4 + 6 / 8 + 10 / 16 + 13 / 17) / 4)
    assert round(s["q_measure"], 3) == 0.722
    assert s["r_measure"] == pytest.approx(0.625)
    assert s["rr"] == 1.0


def test_beatles_marks_paul_as_duplicate_with_string_levels():
    from evaluation.metrics import Ranking, evaluate

    s = evaluate(
        beatles(),
        [
            Ranking.from_lists(
                "r", {"beatles": ["McCartney", "Lennon", "Paul", "George Harrison", "Starr"]}
            )
        ],
        ["q_measure"],
    )
    f = s.marked.frame()
    assert f["status"].tolist() == ["correct", "correct", "duplicate", "correct", "correct"]
    assert f["level"].tolist() == ["A", "A", "B", "S", "A"]
    assert f["synset"].tolist() == ["1", "2", "1", "3", "4"]


def test_fifth_synset_changes_ideal():
    # R = 5, R(S) = 4, R(B) = 1: cig = 3, 6, 9, 12, 13
    s = score(
        beatles(True),
        {
            "beatles": [
                "Paul McCartney",
                "John Lennon",
                "George Harrison",
                "Ringo Starr",
                "Stuart Sutcliffe",
            ]
        },
        ["q_measure"],
    )
    assert s["beatles"]["q_measure"] == pytest.approx(1.0)


@pytest.mark.parametrize("level", ["S", "A", "B"])
def test_nil_at_rank_1_scores_1_whatever_its_level(level):
    j = judgments({"love": [("1", "NIL", level)]})
    s = score(j, {"love": ["NIL", "something"]}, ["q_measure", "r_measure", "rr"])["love"]
    assert s == {"q_measure": 1.0, "r_measure": 1.0, "rr": 1.0}


def test_nil_below_rank_1_earns_nothing():
    j = judgments({"love": [("1", "NIL", "A")]})
    s = score(j, {"love": ["romance", "NIL"]}, list(BASE_METRICS))["love"]
    for m in ("q_measure", "r_measure", "rr", "ap", "awp", "rwp", "r_prec", "ndcg", "rbp"):
        assert s[m] == 0.0, m


def test_kawabata_b_answer_at_rank_1():
    j = judgments({"k": [("1", "December 10, 1968", "S"), ("1", "1968", "B")]})
    s = score(j, {"k": ["1968"]}, ["q_measure", "rr"])["k"]
    assert s["q_measure"] == pytest.approx(0.5)
    assert s["rr"] == 1.0


def test_nobel_s_answers_at_ranks_1_and_5():
    j = judgments(
        {
            "n": [
                ("1", "Hideki Yukawa", "S"),
                ("1", "Doctor Hideki Yukawa", "S"),
                ("2", "Shinichiro Tomonaga", "S"),
                ("3", "Leo Esaki", "S"),
            ]
        }
    )
    s = score(
        j, {"n": ["Hideki Yukawa", "x", "y", "z", "Shinichiro Tomonaga"]}, ["q_measure", "rr"]
    )["n"]
    assert s["q_measure"] == pytest.approx((4 / 4 + 8 / 14) / 3)
    assert round(s["q_measure"], 3) == 0.524
    # noAF: the duplicate "Doctor Hideki Yukawa" takes rank 4, Tomonaga never appears
    s2 = score(
        j, {"n": ["Hideki Yukawa", "x", "y", "Doctor Hideki Yukawa", "z"]}, ["q_measure", "rr"]
    )["n"]
    assert s2["q_measure"] == pytest.approx(1 / 3)
    assert s2["rr"] == s["rr"] == 1.0


# Table 1 of truncated-rankings-and-nil-answers.txt: ranking, R, r_t, RR', RBP', NDCG', AP'
TABLE_1 = [
    ("00", 0, 1.000, 0.333, 0.250, 0.500, 0.333),
    ("000", 0, 1.000, 0.250, 0.125, 0.431, 0.250),
    ("111", 3, 1.000, 1.000, 1.000, 1.000, 1.000),
    ("11", 3, 0.667, 1.000, 0.917, 0.922, 0.648),
    ("11100", 3, 1.000, 1.000, 0.906, 0.971, 0.917),
    ("101", 3, 0.667, 1.000, 0.708, 0.698, 0.528),
    ("1", 3, 0.333, 1.000, 0.667, 0.742, 0.306),
    ("10100", 3, 0.667, 1.000, 0.646, 0.678, 0.491),
    ("011", 3, 0.667, 0.500, 0.458, 0.554, 0.403),
    ("01001", 3, 0.667, 0.500, 0.302, 0.490, 0.299),
]


@pytest.mark.parametrize(("ranking", "r", "rt", "rr", "rbp", "ndcg", "ap"), TABLE_1)
def test_truncation_table_1(ranking, r, rt, rr, rbp, ndcg, ap):
    j, answers = binary_question(r, ranking)
    s = score(j, answers, ["rr_trunc", "rbp_trunc", "ndcg_trunc", "ap_trunc"], rbp_p=0.5)["q"]
    assert round(s["rr_trunc"], 3) == rr
    assert round(s["rbp_trunc"], 3) == rbp
    assert round(s["ndcg_trunc"], 3) == ndcg
    assert round(s["ap_trunc"], 3) == ap


def test_truncation_cut_at_explicit_nil():
    # "101" then an explicit NIL: the answers after NIL do not count, d = 3.
    j, answers = binary_question(3, "101")
    answers["q"] = [*answers["q"], "NIL", "answer1"]
    s = score(j, answers, ["rbp_trunc", "ap_trunc"])["q"]
    assert round(s["rbp_trunc"], 3) == 0.708
    assert round(s["ap_trunc"], 3) == 0.528


def test_nil_question_truncation_metrics():
    j = judgments({"love": [("1", "NIL", "A")]})
    s = score(j, {"love": ["NIL"]}, ["rr_trunc", "ap_trunc", "ndcg_trunc", "rbp_trunc"])
    assert s["love"] == {"rr_trunc": 1.0, "ap_trunc": 1.0, "ndcg_trunc": 1.0, "rbp_trunc": 1.0}
    s = score(j, {"love": ["x", "y"]}, ["rr_trunc", "ap_trunc", "rbp_trunc"])["love"]
    assert s["rr_trunc"] == pytest.approx(1 / 3)
    assert s["ap_trunc"] == pytest.approx(1 / 3)
    assert s["rbp_trunc"] == pytest.approx(0.25)


def test_empty_ranking_of_no_answer_question_scores_1_on_truncation_metrics():
    j = judgments({"love": [("1", "NIL", "A")], "other": [("1", "x", "S")]})
    s = score(j, {"other": ["x"]}, ["rr_trunc", "ap_trunc", "ndcg_trunc", "rbp_trunc", "q_measure"])
    assert s["love"] == {
        "rr_trunc": 1.0,
        "ap_trunc": 1.0,
        "ndcg_trunc": 1.0,
        "rbp_trunc": 1.0,
        "q_measure": 0.0,
    }


def test_adjusted_gains_equation_7():
    # R = 2: one S synset, one B synset. gain'(S) = 3 - (1/2)(3-2) = 2.5; gain'(B) = 1 - (1/2)
    # (1 - 0) = 0.5; A has R(A) = 0 so it keeps 2.
    from evaluation.metrics import parse_gains

    j = judgments({"q": [("1", "s", "S"), ("2", "b", "B")]})
    s = score(j, {"q": ["s", "b"]}, ["rwp", "awp"], gains=parse_gains("adjusted"))["q"]
    assert s["rwp"] == pytest.approx(1.0)
    s = score(j, {"q": ["b"]}, ["rwp"], gains=parse_gains("adjusted"))["q"]
    assert s["rwp"] == pytest.approx(0.5 / 3.0)
    # R(X) = R: not applied
    j1 = judgments({"q": [("1", "s", "S")]})
    assert score(j1, {"q": ["s"]}, ["rbp"], gains=parse_gains("adjusted"))["q"]["rbp"] == 0.5


def test_gain_profiles_and_beta():
    from evaluation.metrics import parse_gains

    j = judgments({"k": [("1", "December 10, 1968", "S"), ("1", "1968", "B")]})
    # Q = (beta*g + 1)/(beta*gS + 1)
    for spec, gs, gb in [
        ("3:2:1", 3, 1),
        ("1:1:1", 1, 1),
        ("10:5:1", 10, 1),
        ("S=4,A=2,B=0.5", 4, 0.5),
    ]:
        for beta in (0.0, 0.5, 1.0, 10.0):
            s = score(
                j, {"k": ["1968"]}, ["q_measure", "r_measure"], gains=parse_gains(spec), beta=beta
            )["k"]
            assert s["q_measure"] == pytest.approx((beta * gb + 1) / (beta * gs + 1)), (spec, beta)
            assert s["r_measure"] == pytest.approx(s["q_measure"])


def test_rigid_ap_ignores_lowest_level():
    j = judgments({"q": [("1", "a", "S"), ("2", "b", "B"), ("3", "c", "A"), ("3", "cc", "B")]})
    s = score(j, {"q": ["b", "a", "cc"]}, ["ap", "ap_rigid"])["q"]
    assert s["ap"] == pytest.approx((1 + 1 + 1) / 3)
    # rigid: R = 2 (synsets 1 and 3 reach above B); only "a" at rank 2 counts (cc is B)
    assert s["ap_rigid"] == pytest.approx((1 / 2) / 2)
    one = judgments({"q": [("1", "a", "S")]}, levels=("S",), gains=(1,))
    s = score(one, {"q": ["x", "a"]}, ["ap", "ap_rigid"])["q"]
    assert s["ap"] == s["ap_rigid"] == 0.5


def test_judged_question_without_synsets_scores_zero_and_counts():
    from evaluation.metrics import Ranking, evaluate

    j = judgments({"q": [(None, "wrong", None)], "k": [("1", "x", "S")]})
    s = evaluate(
        j, [Ranking.from_lists("r", {"k": ["x"], "q": ["wrong"]})], ["q_measure", "rr", "ap"]
    )
    assert s.per_question["r"].loc["q"].tolist() == [0.0, 0.0, 0.0]
    assert s.means().loc["r", "q_measure"] == 0.5


def test_unknown_questions_are_counted_and_ignored():
    from evaluation.metrics import Ranking, evaluate

    j = judgments({"k": [("1", "x", "S")]})
    s = evaluate(j, [Ranking.from_lists("r", {"k": ["x"], "zzz": ["a", "b"]})], ["rr"])
    assert s.unknown == {"r": 2}
    assert list(s.per_question["r"].index) == ["k"]


def test_matching_normalized_and_exact():
    j = judgments({"q": [("1", "Digital Versatile Disk", "S"), ("1", "Digital Video Disk", "A")]})
    s = score(j, {"q": ["  digital  versatile DISK. "]}, ["q_measure"])
    assert s["q"]["q_measure"] == 1.0
    je = judgments({"q": [("1", "Digital Versatile Disk", "S")]}, match="exact")
    assert score(je, {"q": ["digital versatile disk"]}, ["rr"])["q"]["rr"] == 0.0
    assert score(je, {"q": [" Digital Versatile Disk "]}, ["rr"])["q"]["rr"] == 1.0
    # NFKC: full-width Latin and half-width katakana match their normal forms
    jj = judgments({"q": [("1", "ＤＶＤ", "S"), ("2", "ディズニー", "S")]})
    s = score(jj, {"q": ["dvd", "ﾃﾞｨｽﾞﾆｰ"]}, ["q_measure"])
    assert s["q"]["q_measure"] == 1.0
