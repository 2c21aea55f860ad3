"""The comparison of two runs: the service's dataclass, the plot (sorted, labelled, with a
legend, ties visible, a link per question), the Table-2 block, p-values in scientific
notation on the page and in full precision in the CSV, the same run chosen twice, and the
statistics that make it fast (checked against scipy and exact enumeration)."""

from __future__ import annotations

import html
import io
import math
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from evaluation import comparing
from evaluation.analysis import score_config
from evaluation.analysis.stats import format_p, p_text, paired, randomization_p, wilcoxon_p
from evaluation.models import Run
from tests.factories import add_member, make_collection, make_question, make_run, make_user


def _runs(demo):
    return {r.name: r for r in Run.objects.filter(collection=demo)}


def _login(client, username):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))


@pytest.mark.slow
# -- statistics ---------------------------------------------------------------------------
def test_wilcoxon_equals_scipy_with_ties_zeros_and_any_size():
    rng = np.random.default_rng(3)
    values = [-1, -0.5, -0.25, 0, 0.25, 0.5, 1, 1 / 3]
    for n in [*range(1, 16), 20, 40, 60]:
        for _ in range(8):
            d = rng.choice(values, size=n)
            nz = d[d != 0]
            want = sps.wilcoxon(nz).pvalue if len(nz) else math.nan
            got = wilcoxon_p(d)
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want), d


def test_randomization_matches_exact_enumeration_beyond_16_differences():
    """Above 16 non-zero differences the test samples 10,000 sign assignments; its p-value
    stays within sampling error of the exact p-value (all 2**m assignments)."""
    rng = np.random.default_rng(5)
    for m in (17, 19):
        d = np.round(rng.normal(0.15, 0.5, m), 3)
        signs = 1 - 2 * ((np.arange(2**m)[:, None] >> np.arange(m)) & 1)
        obs = abs(d.sum())
        exact = float(np.mean(np.abs(signs @ d) >= obs - 1e-9 * obs))
        p = randomization_p(d)
        sd = math.sqrt(exact * (1 - exact) / 10_000)
        assert abs(p - exact) <= 4 * sd + 1e-4, (m, p, exact)
        assert p == randomization_p(d)  # seeded


def test_paired_test_of_5000_questions_is_fast():
    import time

    rng = np.random.default_rng(1)
    a = rng.random(5000)
    b = np.clip(a + rng.normal(0.01, 0.2, 5000), 0, 1)
    start = time.process_time()
    result = paired("q_measure", a, b)
    assert time.process_time() - start < 1.0
    assert 0 < result.randomization_p <= 1


@pytest.mark.parametrize(
    ("p", "page", "cell"),
    [
        (4.5e-08, "4.5e-08", "4.5e-08"),
        (1.734723475976807e-18, "1.7e-18", "1.734723475976807e-18"),
        (0.0001, "0.0001", "0.0001"),
        (9.999e-05, "1.0e-04", "9.999e-05"),
        (0.03125, "0.0312", "0.03125"),
        (1.0, "1.0000", "1.0"),
        (math.nan, "—", None),
    ],
)
def test_p_values_below_0_0001_in_scientific_notation(p, page, cell):
    assert format_p(p) == page
    assert p_text(p) == cell


# -- the service ----------------------------------------------------------------------------
pytestmark = pytest.mark.django_db


def test_compare_service_returns_a_dataclass_sorted_by_difference(demo):
    r = _runs(demo)
    config = score_config.ScoreConfig(metrics=("q_measure", "rr"))
    c = comparing.runs_compare(collection=demo, run_a=r["noAF"], run_b=r["AF"], config=config)
    assert isinstance(c, comparing.Comparison)
    assert (c.a, c.b, c.metrics) == (r["noAF"], r["AF"], ("q_measure", "rr"))
    assert list(c.diffs.columns) == ["q_measure", "rr"]
    ordered = c.diffs.loc[list(c.order)]
    assert sorted(c.order) == sorted(c.diffs.index)
    keys = list(zip(ordered["q_measure"], ordered["rr"], ordered.index, strict=True))
    assert keys == sorted(keys)
    assert [t.metric for t in c.tests] == ["q_measure", "rr"]
    assert "QAC1-1058" in c.disagree


def test_ranking_service_returns_a_dataclass(demo):
    runs = list(Run.objects.filter(collection=demo).order_by("name"))
    config = score_config.ScoreConfig(metrics=("q_measure", "rr"))
    ranking = comparing.runs_rank(collection=demo, runs=runs, config=config)
    assert isinstance(ranking, comparing.SystemRanking)
    assert [r.name for r in ranking.runs] == ["AF", "noAF"]
    assert [r.name for r in ranking.order] == ["AF", "noAF"]  # AF has the higher Q-measure
    assert ranking.ranks.at["AF", "q_measure"] == 1
    assert list(ranking.correlations.columns)[:2] == ["metric_a", "metric_b"]
    empty = comparing.runs_rank(collection=demo, runs=[], config=config)
    assert empty.order == () and empty.correlations is None


# -- the page -------------------------------------------------------------------------------
def test_plot_is_sorted_labelled_with_a_legend_and_a_link_per_question(client, demo):
    _login(client, "organizer")
    r = _runs(demo)
    page = client.get(f"/collections/demo/compare/?a={r['noAF'].pk}&b={r['AF'].pk}")
    body = page.content.decode()
    svg = re.search(r'<svg id="diff-plot".*?</svg>\s*</div>', body, re.S)[0]
    # one link per question, left to right by Q-measure difference
    qids = re.findall(r'data-qid="([^"]+)"', svg)
    frame = pd.read_csv(
        io.StringIO(
            client.get(
                f"/collections/demo/compare.csv?a={r['noAF'].pk}&b={r['AF'].pk}"
            ).content.decode()
        ),
        comment="#",
    )
    q = frame[frame["metric_or_question"].str.startswith("q_measure:")]
    diff = dict(zip(q["metric_or_question"].str[len("q_measure:") :], q["b_minus_a"], strict=True))
    assert sorted(qids) == sorted(diff) and len(qids) == 12
    assert [diff[x] for x in qids] == sorted(diff[x] for x in qids)
    # each link leads to both ranked lists of its question, with a title naming it
    first = re.search(r'<a href="([^"]+)" data-qid="([^"]+)"><title>([^<]+)</title>', svg)
    href, qid, title = (html.unescape(g) for g in first.groups())
    assert href.endswith(f"question={qid}#side-{qid}") and title.startswith(qid)
    assert "Q-measure" in title and "RR" in title
    shown = client.get(f"/collections/demo/compare/{href}".split("#")[0])
    assert f'id="side-{qid}"' in shown.content.decode()
    # axis labels and legend
    text = html.unescape(svg)
    assert "12 questions, ordered by Q-measure difference" in text
    assert "difference B − A (AF − noAF)" in text
    assert "↑ AF better" in text and "↓ noAF better" in text
    legend = html.unescape(re.search(r'<ul class="plot-legend".*?</ul>', body, re.S)[0])
    assert "Q-measure difference" in legend and "RR difference" in legend
    assert "one inside the other: the same difference on Q-measure and RR" in legend


def test_tied_marks_are_both_visible(client, demo):
    """EX3-LOVE moves by 1 on both metrics: its dot and its square are drawn side by side
    (and the square is hollow and larger, so a dot on it still shows)."""
    _login(client, "organizer")
    r = _runs(demo)
    page = client.get(f"/collections/demo/compare/?a={r['noAF'].pk}&b={r['AF'].pk}")
    plot = page.context["plot"]
    i = [p.qid for p in plot.points].index("EX3-LOVE")
    (qx, qy), (rx, ry) = plot.series[0].marks[i], plot.series[1].marks[i]
    assert qy == ry and float(rx) - float(qx) >= 4
    assert [s.shape for s in plot.series] == ["dot", "square"]
    svg = page.content.decode()
    assert '<rect id="mk-square"' in svg and 'fill="none"' in svg.split('id="mk-square"')[1][:80]


def test_table_2_block_is_labelled_and_shows_the_difference(client, demo):
    _login(client, "organizer")
    r = _runs(demo)
    page = client.get(f"/collections/demo/compare/?a={r['noAF'].pk}&b={r['AF'].pk}")
    row = page.context["tests"][0]
    t = row["t"]
    assert row["diff"] == f"{t.mean_b - t.mean_a:+.4f}" and row["diff"] != row["mean_b"]
    table = html.unescape(
        re.search(r'<table class="grid" id="tests">.*?</table>', page.content.decode(), re.S)[0]
    )
    for label in (
        "mean A",
        "mean B",
        "B − A",
        "mean difference",
        "↑ B better",
        "↓ B worse",
        "tied",
        "questions where AF scores higher than noAF",
    ):
        assert label in table, label
    assert f"{row['diff']}</td>" in table


def test_tiny_p_values_in_scientific_notation_on_the_page_and_in_the_csv(client):
    c = make_collection(slug="tiny")
    for i in range(40):
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[(f"right{i}", "S")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    a = make_run(
        collection=c, owner=org, name="a", answers={f"Q{i:02d}": ["wrong"] for i in range(40)}
    )
    b = make_run(
        collection=c, owner=org, name="b", answers={f"Q{i:02d}": [f"right{i}"] for i in range(40)}
    )
    client.force_login(org)
    page = client.get(f"/collections/tiny/compare/?a={a.pk}&b={b.pk}&metric=q_measure")
    t = page.context["tests"][0]["t"]
    assert t.sign_p == pytest.approx(2 * 0.5**40) and t.sign_p < 1e-4
    table = re.search(r'id="tests">.*?</table>', page.content.decode(), re.S)[0]
    cells = re.findall(r'<td class="num">([^<]*)(?:<sup class="why-mark">\w</sup>)?</td>', table)
    # no t-test of a constant difference (a dash with its reason's letter); no permutation
    # of the 10,000 reached the observed sum: below their resolution
    assert cells[-5:-1] == [f"{t.sign_p:.1e}", f"{t.wilcoxon_p:.1e}", "—", "&lt; 0.0001"]
    assert "1.8e-12" in table
    csv = client.get(f"/collections/tiny/compare.csv?a={a.pk}&b={b.pk}&metric=q_measure")
    frame = pd.read_csv(io.StringIO(csv.content.decode()), comment="#", dtype=str)
    mean = frame[frame["row"] == "mean"].iloc[0]
    assert mean["sign_p"] == repr(t.sign_p) and "e-" in mean["sign_p"]
    assert float(mean["randomization_p"]) == pytest.approx(1 / 10_001)
    assert "0.000000" not in csv.content.decode().split("question,")[0]


def test_choosing_the_same_run_twice_says_so(client, demo):
    _login(client, "organizer")
    af = _runs(demo)["AF"]
    page = client.get(f"/collections/demo/compare/?a={af.pk}&b={af.pk}")
    assert page.status_code == 200 and page.context["same_run"]
    body = html.unescape(page.content.decode())
    assert "You chose AF as both run A and run B" in re.sub(r"</?strong>", "", body)
    assert 'id="diff-plot"' not in body
    assert client.get(f"/collections/demo/compare.csv?a={af.pk}&b={af.pk}").status_code == 404
    # with only A given, B defaults to another run
    page = client.get(f"/collections/demo/compare/?a={af.pk}")
    assert page.context["b"] != af and not page.context["same_run"]


def test_disagreements_are_capped_and_counted(client):
    c = make_collection(slug="many")
    for i in range(30):  # Q-measure moves, RR does not: every question disagrees
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[("x", "S")], [("y", "S")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    a = make_run(collection=c, owner=org, name="a", answers={f"Q{i:02d}": ["x"] for i in range(30)})
    b = make_run(
        collection=c, owner=org, name="b", answers={f"Q{i:02d}": ["x", "y"] for i in range(30)}
    )
    client.force_login(org)
    page = client.get(f"/collections/many/compare/?a={a.pk}&b={b.pk}")
    assert page.context["disagree_total"] == 30 and len(page.context["disagree"]) == 20
    assert "30 questions, the 20 with the largest Q-measure difference shown" in (
        html.unescape(page.content.decode())
    )


def test_htmx_gets_partials_and_client_redirects(client, demo):
    _login(client, "organizer")
    r = _runs(demo)
    form = client.get("/collections/demo/runs/upload/", headers={"HX-Request": "true"})
    body = form.content.decode()
    assert body.lstrip().startswith('<form id="upload-form"') and "<html" not in body
    pooled = client.post(
        f"/collections/demo/runs/{r['noAF'].pk}/pool/", headers={"HX-Request": "true"}
    )
    assert pooled.headers["HX-Redirect"] == f"/collections/demo/runs/{r['noAF'].pk}/"
    plain = client.post(f"/collections/demo/runs/{r['noAF'].pk}/pool/")
    assert plain.status_code == 302


def test_the_question_table_pages_by_htmx_and_by_links(client):
    c = make_collection(slug="pages")
    for i in range(120):
        make_question(collection=c, qid=f"Q{i:03d}", synsets=[[(f"x{i}", "S")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    a = make_run(collection=c, owner=org, name="a", answers={})
    b = make_run(
        collection=c,
        owner=org,
        name="b",
        answers={f"Q{i:03d}": [f"x{i}"] for i in range(0, 120, 2)},
    )
    client.force_login(org)
    url = f"/collections/pages/compare/?a={a.pk}&b={b.pk}&page=2"
    full = client.get(url).content.decode()
    assert "<html" in full and full.count("data-qid=") == 120
    assert "questions 101–120 of 120" in full and full.count("both lists</a>") == 20
    part = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in part and 'id="diff-plot"' not in part
    assert part.lstrip().startswith('<div id="diff-table">') and part.count("both lists") == 20
    assert 'hx-get="?a=' in part and "page=1" in part


def test_compare_page_query_count_does_not_grow(client, demo, django_assert_max_num_queries):
    _login(client, "organizer")
    r = _runs(demo)
    url = f"/collections/demo/compare/?a={r['noAF'].pk}&b={r['AF'].pk}"
    client.get(url)
    with django_assert_max_num_queries(20):
        page = client.get(url)
    assert page.status_code == 200
    body = page.content.decode()
    assert "<h1>Compare runs</h1>" in body and 'id="diff-plot"' in body


def test_tests_that_do_not_exist_say_why_in_visible_text(client):
    """Two runs with the same answers: every question tied, so no test and no effect size;
    each dash has a letter and the letter's reason is written under the table."""
    c = make_collection(slug="same-answers")
    for i in range(1, 5):
        make_question(collection=c, qid=f"Q{i}", synsets=[[(f"a{i}", "S")]])
    org = make_user(username="org-same")
    add_member(collection=c, user=org, role="organizer")
    answers = {f"Q{i}": ["x", f"a{i}"] for i in range(1, 5)}
    a = make_run(collection=c, owner=org, name="one", answers=answers)
    b = make_run(collection=c, owner=org, name="two", answers=answers)
    client.force_login(org)
    body = client.get(f"/collections/{c.slug}/compare/?a={a.pk}&b={b.pk}").content.decode()
    table = re.search(r'<table class="grid" id="tests">.*?</table>', body, re.S).group(0)
    assert "—</td>" not in table
    assert table.count('—<sup class="why-mark">a</sup></td>') == 10  # 2 metrics x 5 figures
    notes = '<ul class="why-notes" id="tests-why"><li>—<sup class="why-mark">a</sup> '
    assert notes + "undefined: every question is tied" in body


def _plot_svg(body: str) -> str:
    return re.search(r'<svg id="diff-plot".*?</svg>\s*</div>', body, re.S)[0]


def _labels_clear_of_marks(plot) -> None:
    """No mark lies under either corner label (its box: 7 px a character, 14 px high)."""
    marks = [(float(x), float(y)) for s in plot.series for x, y in s.marks]
    for label in (plot.better_b, plot.better_a):
        x, y, w = float(label.x), float(label.y), len(label.text) * 7
        x0, x1 = (x, x + w) if label.anchor == "start" else (x - w, x)
        for mx, my in marks:
            assert not (x0 - 5 <= mx <= x1 + 5 and y - 14 - 5 <= my <= y + 4 + 5), (label, mx, my)


def test_plot_corner_labels_stay_off_the_points_and_few_questions_show_their_ids(client, demo):
    """The questions are ordered by difference, lowest first: "A better" (B worse) goes to
    the bottom right, not under the first, lowest point; with 12 questions each column has
    its question id under the axis (turned when the ids are wider than the columns)."""
    _login(client, "organizer")
    r = _runs(demo)
    page = client.get(f"/collections/demo/compare/?a={r['noAF'].pk}&b={r['AF'].pk}")
    plot = page.context["plot"]
    _labels_clear_of_marks(plot)
    assert plot.better_a.anchor == "end" and plot.better_b.anchor == "start"
    svg = html.unescape(_plot_svg(page.content.decode()))
    assert re.search(
        r'<text class="better-a" x="[\d.]+" y="[\d.]+" text-anchor="end"[^>]*>↓ noAF better<', svg
    )
    ticks = re.findall(r'<text class="x-tick"[^>]*>([^<]+)</text>', svg)
    assert ticks == [p.qid if len(p.qid) <= 16 else p.qid[:15] + "…" for p in plot.points]
    assert len(ticks) == 12 and "rotate(-45" in svg
    height = int(re.search(r'viewBox="0 0 \d+ (\d+)"', svg)[1])
    assert height > 340  # room below the axis for the turned ids
    assert float(plot.x_label_y) == height - 12


def test_plot_with_many_questions_has_no_id_ticks_and_short_ids_stand_level(client):
    org = make_user(username="org-ticks")
    for n, slug in ((4, "few"), (40, "many")):
        c = make_collection(slug=f"ticks-{slug}")
        add_member(collection=c, user=org, role="organizer")
        for i in range(1, n + 1):
            make_question(collection=c, qid=f"q{i}", synsets=[[(f"a{i}", "S")]])
        a = make_run(
            collection=c, owner=org, name="a", answers={f"q{i}": [f"a{i}"] for i in range(1, n + 1)}
        )
        b = make_run(
            collection=c,
            owner=org,
            name="b",
            answers={f"q{i}": ["x", f"a{i}"] for i in range(1, n + 1, 2)},
        )
        client.force_login(org)
        page = client.get(f"/collections/{c.slug}/compare/?a={a.pk}&b={b.pk}")
        plot = page.context["plot"]
        _labels_clear_of_marks(plot)
        svg = _plot_svg(page.content.decode())
        if n == 4:
            assert len(plot.x_ticks) == 4 and "rotate(-45" not in svg
            assert 'viewBox="0 0 960 340"' in svg
        else:
            assert plot.x_ticks == () and 'class="x-tick"' not in svg


def test_a_sampled_randomization_p_at_its_floor_reads_below_one_over_b(client):
    """Twenty questions all better in B: beyond 16 differences the test samples 10,000
    sign assignments and none reaches the observed sum: "< 0.0001", not 1.0e-04."""
    c = make_collection(slug="rand-floor")
    for i in range(1, 21):
        make_question(collection=c, qid=f"Q{i:02d}", synsets=[[(f"a{i}", "S")]])
    org = make_user(username="org-rand-floor")
    add_member(collection=c, user=org, role="organizer")
    a = make_run(
        collection=c,
        owner=org,
        name="late",
        answers={f"Q{i:02d}": ["x", "y", f"a{i}"] for i in range(1, 21)},
    )
    b = make_run(
        collection=c,
        owner=org,
        name="early",
        answers={f"Q{i:02d}": [f"a{i}"] for i in range(1, 21)},
    )
    client.force_login(org)
    page = client.get(f"/collections/{c.slug}/compare/?a={a.pk}&b={b.pk}")
    row = page.context["tests"][0]
    assert row["t"].randomization_p == pytest.approx(1 / 10_001)
    assert row["rand_p"] == "< 0.0001"
    assert "&lt; 0.0001</td>" in page.content.decode()
