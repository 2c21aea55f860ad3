"""The runs and ranking pages' 95% intervals and the ranking page's all-pairs matrix:
figures against scipy and the engine, the Tukey option, the seeded bootstrap
(the reliability page's for the same seed and B), CSV columns and preambles, and who
sees which runs."""

import io
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evaluation import reliability_report, services
from evaluation.analysis import score_config, significance
from evaluation.analysis.stats import format_p
from evaluation.metrics.csvio import read_csv
from evaluation.metrics.reliability.comparisons import holm, paired_t, tukey_hsd
from evaluation.metrics.reliability.pairs import run_pairs
from evaluation.models import Run
from tests.factories import (
    add_member,
    make_collection,
    make_question,
    make_run,
    make_runs_far_apart,
    make_user,
)

pytestmark = pytest.mark.django_db


def csv_frame(response) -> pd.DataFrame:
    assert response.status_code == 200
    return pd.read_csv(io.StringIO(response.content.decode()), comment="#")


def preamble(response) -> dict[str, str]:
    return read_csv(response.content.decode())[0]


@pytest.fixture
def three(client):
    """Six questions of one synset each ({a<i>: S}) and three runs of different quality;
    the organizer logged in."""
    c = make_collection(slug="tri")
    for i in range(1, 7):
        make_question(collection=c, qid=f"Q{i}", synsets=[[(f"a{i}", "S")], [(f"b{i}", "A")]])
    org = make_user(username="org-tri")
    add_member(collection=c, user=org, role="organizer")
    answers = {
        "best": {f"Q{i}": [f"a{i}", f"b{i}"] if i != 6 else ["x", f"a{i}"] for i in range(1, 7)},
        "mid": {
            "Q1": ["a1"],
            "Q2": ["x", "a2", "b2"],
            "Q3": ["b3", "a3"],
            "Q4": ["x", "y", "a4"],
            "Q5": ["b5"],
            "Q6": ["a6", "b6"],
        },
        "worst": {"Q1": ["x", "b1"], "Q2": ["a2"], "Q4": ["b4"], "Q5": ["x", "y", "b5"]},
    }
    for name, a in answers.items():
        make_run(collection=c, owner=org, name=name, answers=a)
    client.force_login(org)
    return c


def per_question(client, collection, metric="q_measure") -> dict[str, np.ndarray]:
    """Each run's per-question scores as its own scores.csv gives them (question order)."""
    out = {}
    for run in Run.objects.filter(collection=collection).order_by("name"):
        frame = csv_frame(
            client.get(f"/collections/{collection.slug}/runs/{run.pk}/scores.csv?metric={metric}")
        )
        frame = frame[frame["question_id"] != "all"]
        out[run.name] = frame[metric].to_numpy(dtype=float)
    return out


def t_interval(x: np.ndarray) -> tuple[float, float]:
    return sps.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=sps.sem(x))


def test_runs_page_and_csv_show_each_mean_with_scipys_t_interval(client, three):
    scores = per_question(client, three)
    page = client.get("/collections/tri/runs/?metric=q_measure&metric=rr")
    body = page.content.decode()
    assert "95% t interval of each mean" in body
    assert 'href="/collections/tri/runs.csv?metric=q_measure&amp;metric=rr"' in body
    for name, x in scores.items():
        lo, hi = t_interval(x)
        mark = " †" if lo < 0 or hi > 1 else ""  # a t interval passing 0 or 1, not clipped
        assert f'{x.mean():.4f} <span class="ci">[{lo:.4f}, {hi:.4f}]{mark}</span>' in body, name
    response = client.get("/collections/tri/runs.csv?metric=q_measure&metric=rr")
    frame = csv_frame(response).set_index("run")
    assert list(frame.columns) == [
        "owner",
        "q_measure",
        "rr",
        "q_measure_ci_low",
        "q_measure_ci_high",
        "rr_ci_low",
        "rr_ci_high",
        "questions_answered",
        "unjudged_answers",
    ]
    assert list(frame.index) == ["best", "mid", "worst"]
    for name, x in scores.items():
        lo, hi = t_interval(x)
        assert frame.at[name, "q_measure"] == pytest.approx(x.mean(), abs=1e-6)
        assert frame.at[name, "q_measure_ci_low"] == pytest.approx(lo, abs=1e-6)
        assert frame.at[name, "q_measure_ci_high"] == pytest.approx(hi, abs=1e-6)
    assert frame.at["worst", "questions_answered"] == 4
    head = preamble(response)
    assert head["collection"] == "tri" and head["interval"] == "t" and head["level"] == "0.95"
    assert "bootstrap_trials" not in head


def holm_by_hand(p: list[float]) -> list[float]:
    """Holm's step-down adjustment written out: the i-th smallest p times (m - i),
    kept monotone, at most 1."""
    m = len(p)
    order = sorted(range(m), key=lambda k: p[k])
    out, running = [0.0] * m, 0.0
    for i, k in enumerate(order):
        running = max(running, min(1.0, p[k] * (m - i)))
        out[k] = running
    return out


def test_ranking_matrix_holds_the_engines_holm_p_values_in_ranking_order(client, three):
    scores = per_question(client, three)
    page = client.get("/collections/tri/ranking/")
    assert page.status_code == 200
    matrix = page.context["matrix"]
    tests = matrix["tests"]
    order = [row["run"].name for row in page.context["table"]]
    assert list(tests.runs) == order == sorted(scores, key=lambda n: -scores[n].mean())
    # scipy's paired t-tests of every pair, adjusted by Holm's method by hand
    pairs = [(a, b) for i, a in enumerate(order) for b in order[i + 1 :]]
    raw = [sps.ttest_rel(scores[a], scores[b]).pvalue for a, b in pairs]
    adjusted = dict(zip(pairs, holm_by_hand(raw), strict=True))
    # ... and the engine's functions on the exact score matrix
    runs = list(Run.objects.filter(collection=three).order_by("name"))
    exact = services.score_runs(three, runs, score_config.ScoreConfig(metrics=("q_measure",)))
    X = np.stack([exact.values[exact.runs.index(n), 0] for n in order])
    engine = holm(paired_t(X))
    for k, (a, b) in enumerate(pairs):
        i, j = order.index(a), order.index(b)
        # scores.csv rounds to 6 decimals: scipy's figures on them agree to about 1e-6
        assert tests.p[i, j] == tests.p[j, i] == pytest.approx(adjusted[(a, b)], abs=1e-5)
        assert tests.p[i, j] == engine[k]
    assert np.isnan(np.diag(tests.p)).all()
    body = page.content.decode()
    table = re.search(r'<table[^>]*id="pair-matrix">.*?</table>', body, re.S)[0]
    assert re.findall(r'<th scope="row" title="[\w-]+">(\d+\. [\w-]+)</th>', table) == [
        f"{i + 1}. {n}" for i, n in enumerate(order)
    ]
    first = re.search(r'<th scope="row"[^>]*>1\. [\w-]+</th>(.*?)</tr>', table, re.S)[1]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", first)
    assert cells[1] == "" and cells[2] == format_p(tests.p[0, 1]) + (
        "*" if tests.p[0, 1] < 0.05 else ""
    )
    assert "paired t-test, Holm-corrected (correction over the 3 pairs)" in body
    assert "Randomised Tukey HSD instead" in body

    response = client.get("/collections/tri/ranking-matrix.csv")
    head = preamble(response)
    assert (head["metric"], head["test"], head["alpha"]) == ("q_measure", "holm", "0.05")
    assert "tukey_seed" not in head
    frame = csv_frame(response)
    assert list(frame.columns) == ["run", "mean", *order]
    assert list(frame["run"]) == order
    assert frame["mean"].to_numpy() == pytest.approx([scores[n].mean() for n in order], abs=1e-6)
    # full precision p-values; the diagonal empty
    np.testing.assert_allclose(frame[order].to_numpy(), tests.p, rtol=1e-12)


def test_tukey_hsd_on_request_with_its_trials_and_seed(client, three, monkeypatch):
    runs = list(Run.objects.filter(collection=three).order_by("name"))
    exact = services.score_runs(three, runs, score_config.ScoreConfig(metrics=("q_measure",)))
    by_name = list(exact.runs)  # the tests run on the runs by name, then shown ranked
    assert by_name == sorted(by_name)
    X = exact.values[:, 0, :]
    want = tukey_hsd(X, by_name, trials=200, seed=7)
    page = client.get("/collections/tri/ranking/?test=tukey&trials=200&seed=7")
    tests = page.context["matrix"]["tests"]
    order = list(tests.runs)
    x, y = run_pairs(3)
    for k in range(len(x)):
        a, b = by_name[x[k]], by_name[y[k]]
        assert tests.p[order.index(a), order.index(b)] == want[k]
    body = page.content.decode()
    assert "randomised Tukey HSD (200 permutations, seed 7)" in body
    assert "Paired t-tests with Holm's correction instead" in body

    # the default pages never run the (slow) Tukey HSD, and its CSV reuses the page's
    def refuse(*args, **kwargs):
        raise AssertionError("Tukey HSD computed again")

    monkeypatch.setattr(significance, "tukey_hsd", refuse)
    assert client.get("/collections/tri/ranking/").status_code == 200
    assert client.get("/collections/tri/ranking-matrix.csv").status_code == 200
    response = client.get("/collections/tri/ranking-matrix.csv?test=tukey&trials=200&seed=7")
    head = preamble(response)
    assert (head["test"], head["tukey_trials"], head["tukey_seed"]) == ("tukey", "200", "7")
    frame = csv_frame(response).set_index("run")
    assert frame.at[by_name[0], by_name[1]] == want[0]
    # another seed is another computation
    with pytest.raises(AssertionError, match="computed again"):
        client.get("/collections/tri/ranking/?test=tukey&trials=200&seed=8")


def test_ranking_pages_tukey_is_the_reliability_pages_for_the_same_seed_and_trials(client, three):
    """The two pages draw the Tukey permutations alike (``tukey_generator`` of the
    seed, the runs in name order): the same seed and B give the same p-values."""
    page = client.get("/collections/tri/ranking/?test=tukey&trials=300&seed=11")
    tests = page.context["matrix"]["tests"]
    runs = list(Run.objects.filter(collection=three).order_by("name"))
    config = reliability_report.ReliabilityConfig(metric="q_measure", trials=300, seed=11)
    rows = reliability_report.pair_rows(
        reliability_report.collection_reliability(collection=three, runs=runs[::-1], config=config)
    )
    assert len(rows) == 3
    order = list(tests.runs)
    for row in rows:
        assert tests.p[order.index(row["a"]), order.index(row["b"])] == row["p_tukey"]
    assert {row["p_tukey"] for row in rows} != {1.0}


def test_tiny_p_values_are_shown_in_scientific_notation_and_marked(client):
    c = make_collection(slug="sig")
    for i in range(20):
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[(f"a{i}", "S")]])
    org = make_user(username="org-sig")
    add_member(collection=c, user=org, role="organizer")
    make_run(
        collection=c, owner=org, name="good", answers={f"Q{i:02d}": [f"a{i}"] for i in range(20)}
    )
    make_run(collection=c, owner=org, name="poor", answers={"Q00": ["a0"], "Q01": ["a1"]})
    client.force_login(org)
    page = client.get("/collections/sig/ranking/?metric=rr")
    tests = page.context["matrix"]["tests"]
    d = np.array([1.0] * 18 + [0.0] * 2)
    p = sps.ttest_rel(d, np.zeros(20)).pvalue  # one pair: Holm leaves it as it is
    assert 0 < p < 1e-4 and tests.p[0, 1] == pytest.approx(p, rel=1e-9)
    shown = format_p(p)
    assert re.fullmatch(r"\d\.\de-\d\d", shown)
    body = page.content.decode()
    assert f'<td class="num significant">{shown}*</td>' in body
    assert "1 of 1 pair" in body
    # the CSV keeps its full precision
    frame = csv_frame(client.get("/collections/sig/ranking-matrix.csv?metric=rr"))
    assert frame.set_index("run").at["good", "poor"] == pytest.approx(p, rel=1e-12)


def test_bootstrap_intervals_are_seeded_and_are_the_reliability_pages(client, demo):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="organizer"))
    query = "?metric=q_measure&interval=bootstrap&trials=300&seed=3"
    page = client.get(f"/collections/demo/ranking/{query}")
    again = client.get(f"/collections/demo/ranking/{query}")
    ivs = page.context["table"]
    assert [r["values"] for r in ivs] == [r["values"] for r in again.context["table"]]
    assert "bootstrap percentile interval of each mean" in page.content.decode()
    assert "(300 bootstrap samples, seed 3)" in page.content.decode()
    runs = list(Run.objects.filter(collection=demo).order_by("name"))
    config = reliability_report.ReliabilityConfig(metric="q_measure", trials=300, seed=3)
    rows = reliability_report.run_rows(
        reliability_report.collection_reliability(collection=demo, runs=runs, config=config)
    )
    want = {r["run"]: f"[{r['boot_low']:.4f}, {r['boot_high']:.4f}]" for r in rows}
    assert {row["run"].name: row["values"][0][2] for row in ivs} == want
    # a t interval differs from it
    t_page = client.get("/collections/demo/ranking/?metric=q_measure")
    assert {row["run"].name: row["values"][0][2] for row in t_page.context["table"]} != want
    response = client.get(f"/collections/demo/ranking.csv{query}")
    head = preamble(response)
    assert (head["interval"], head["bootstrap_trials"], head["bootstrap_seed"]) == (
        "bootstrap",
        "300",
        "3",
    )
    frame = csv_frame(response).set_index("run")
    for r in rows:
        assert frame.at[r["run"], "q_measure_ci_low"] == pytest.approx(r["boot_low"], abs=1e-6)
        assert frame.at[r["run"], "q_measure_ci_high"] == pytest.approx(r["boot_high"], abs=1e-6)
    listing = client.get(f"/collections/demo/runs/{query}")
    assert {row["run"].name: row["means"][0][1] for row in listing.context["rows"]} == want


def test_an_invalid_configuration_falls_back_to_the_defaults_with_the_error(client, three):
    page = client.get("/collections/tri/ranking/?trials=0&test=nope")
    body = page.content.decode()
    assert page.status_code == 200
    assert 'role="alert"' in body and "nope" in body
    assert page.context["matrix"]["tests"].config.test == "holm"
    assert "95% t interval of each mean" in body


def test_participants_test_only_the_runs_they_see(client, three):
    participant = make_user(username="part-tri")
    add_member(collection=three, user=participant, role="participant")
    scores = per_question(client, three)
    make_run(collection=three, owner=participant, name="mine", answers={"Q1": ["a1"]})
    make_run(collection=three, owner=participant, name="mine2", answers={"Q2": ["a2"]})
    withdrawn = make_run(collection=three, owner=participant, name="gone", answers={})
    from django.utils import timezone

    Run.objects.filter(pk=withdrawn.pk).update(withdrawn_at=timezone.now())
    client.force_login(participant)
    page = client.get("/collections/tri/ranking/")
    tests = page.context["matrix"]["tests"]
    assert sorted(tests.runs) == ["mine", "mine2"] and tests.pairs == 1
    body = page.content.decode()
    assert "best" not in body and "gone" not in body
    matrix = client.get("/collections/tri/ranking-matrix.csv").content.decode()
    assert "best" not in matrix and "gone" not in matrix
    assert sorted(csv_frame(client.get("/collections/tri/runs.csv"))["run"]) == ["mine", "mine2"]
    # the organizer's matrix covers every active run, the withdrawn one left out
    client.force_login(three.memberships.get(role="organizer").user)
    tests = client.get("/collections/tri/ranking/").context["matrix"]["tests"]
    assert sorted(tests.runs) == sorted([*scores, "mine", "mine2"]) and tests.pairs == 10


def test_one_judged_question_gives_no_interval_and_no_test_and_says_why(client):
    c = make_collection(slug="one")
    make_question(collection=c, qid="Q1", synsets=[[("a", "S")]])
    org = make_user(username="org-one")
    add_member(collection=c, user=org, role="organizer")
    make_run(collection=c, owner=org, name="r1", answers={"Q1": ["a"]})
    make_run(collection=c, owner=org, name="r2", answers={"Q1": ["x", "a"]})
    client.force_login(org)
    body = client.get("/collections/one/ranking/").content.decode()
    assert "A confidence interval needs at least two judged questions." in body
    assert "The tests need at least two judged questions." in body
    assert 'class="ci"' not in body and 'id="pair-matrix"' not in body
    frame = csv_frame(client.get("/collections/one/ranking.csv?metric=rr"))
    assert frame["rr_ci_low"].isna().all() and list(frame["rr"][:2]) == [1.0, 0.5]
    runs = client.get("/collections/one/runs/").content.decode()
    assert "A confidence interval needs at least two judged questions." in runs


def test_pair_tests_need_the_order_of_every_scored_run(client, three):
    runs = list(Run.objects.filter(collection=three).order_by("name"))
    scores = services.score_runs(three, runs, score_config.ScoreConfig())
    with pytest.raises(ValueError, match="every scored run"):
        significance.pair_tests(
            scores, metric="q_measure", order=["best", "mid"], config=significance.TestConfig()
        )


def test_intervals_and_tests_add_no_query(client, three):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(url):
        client.get(url)  # scores cached: the second request counts the page alone
        with CaptureQueriesContext(connection) as ctx:
            page = client.get(url)
        assert page.status_code == 200
        body = page.content.decode()
        assert "best" in body and "mid" in body  # the runs are shown
        return len(ctx.captured_queries)

    plain = count("/collections/tri/ranking/")
    assert count("/collections/tri/ranking/?interval=bootstrap&test=tukey&trials=50") == plain
    assert count("/collections/tri/runs/?interval=bootstrap&trials=50") == count(
        "/collections/tri/runs/"
    )


@pytest.fixture
def apart(client):
    """Twenty questions, a run right at rank 1 on all of them, one right only at rank 3 on
    four and a third in between: the best and the worst differ beyond any permutation's or
    bootstrap sample's reach."""
    c, org = make_runs_far_apart(slug="apart", organizer="org-apart")
    client.force_login(org)
    return c


def test_tukey_p_values_below_the_permutations_resolution_read_below_one_over_b(client, apart):
    page = client.get("/collections/apart/ranking/?test=tukey&trials=1000&seed=3")
    tests = page.context["matrix"]["tests"]
    assert np.nanmin(tests.p) == pytest.approx(1 / 1001)  # no permutation reached it
    body = page.content.decode()
    matrix = re.search(r'<table class="grid compact matrix".*?</table>', body, re.S).group(0)
    assert "&lt; 0.001*" in matrix
    assert "0.0010" not in matrix and "0.0000" not in matrix
    # the CSV keeps the number
    text = client.get(
        "/collections/apart/ranking-matrix.csv?test=tukey&trials=1000&seed=3&precision=full"
    ).content.decode()
    assert repr(1 / 1001) in text


def test_an_interval_passing_0_says_it_is_a_t_interval_not_clipped(client):
    c = make_collection(slug="edge")
    for i in range(1, 11):
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[(f"a{i}", "S")]])
    org = make_user(username="org-edge")
    add_member(collection=c, user=org, role="organizer")
    make_run(collection=c, owner=org, name="rare", answers={"Q01": ["a1"]})  # mean 0.1
    make_run(
        collection=c, owner=org, name="all", answers={f"Q{i:02d}": [f"a{i}"] for i in range(1, 11)}
    )
    client.force_login(org)
    for page in ("runs", "ranking"):
        body = client.get(f"/collections/edge/{page}/?metric=q_measure").content.decode()
        assert re.search(r'<span class="ci">\[-0\.\d{4}, 0\.\d{4}\] †</span>', body), page
        assert "symmetric and not clipped: where it passes 0 or 1" in body
        assert "[1.0000, 1.0000]</span>" in body  # inside the range: no mark
        body = client.get(f"/collections/edge/{page}/?metric=q_measure&interval=bootstrap")
        body = body.content.decode()
        assert "†" not in body and "not clipped" not in body


def test_a_correlation_that_does_not_exist_says_why(client):
    """RR gives both runs 1: no ranking, so no tau or rho; the dash's letter and reason."""
    c = make_collection(slug="flat")
    for i in range(1, 4):
        make_question(collection=c, qid=f"Q{i}", synsets=[[(f"a{i}", "S")], [(f"b{i}", "S")]])
    org = make_user(username="org-flat")
    add_member(collection=c, user=org, role="organizer")
    make_run(
        collection=c,
        owner=org,
        name="both",
        answers={f"Q{i}": [f"a{i}", f"b{i}"] for i in range(1, 4)},
    )
    make_run(collection=c, owner=org, name="one", answers={f"Q{i}": [f"a{i}"] for i in range(1, 4)})
    client.force_login(org)
    body = client.get("/collections/flat/ranking/?metric=q_measure&metric=rr").content.decode()
    table = re.search(r'id="correlations">.*?</table>', body, re.S).group(0)
    assert table.count('—<sup class="why-mark">a</sup></td>') == 2
    assert "one of the metrics gives every run the same mean: no ranking" in body
