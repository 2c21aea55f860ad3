"""The reliability page: curves drawn in the template, the summary sorted by
discrimination, exports with their preamble, the samples file (the CLI recomputes the
page's figures from it), access and the query budget."""

import io
import re

import numpy as np
import pytest
from django.core.management import call_command

from annotate.exports import export_judgments
from evaluation.metrics.csvio import read_csv
from evaluation.metrics.reliability.figures import metric_reliability
from evaluation.metrics.reliability.samples import draw_samples
from evaluation.metrics.reliability.stability import FUZZINESS
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


def login(client, username):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))


def url(collection, **params):
    from urllib.parse import urlencode

    return f"/collections/{collection.slug}/reliability/" + (
        f"?{urlencode(params)}" if params else ""
    )


def download_url(collection, kind, **params):
    """The URL of one of the page's files (``kind``: a table or ``samples``)."""
    from urllib.parse import urlencode

    return f"/collections/{collection.slug}/reliability/{kind}.csv" + (
        f"?{urlencode(params)}" if params else ""
    )


def test_demo_page_shows_curves_tables_and_downloads(client, demo):
    login(client, "organizer")
    response = client.get(url(demo, trials=200))
    assert response.status_code == 200
    text = response.content.decode()
    assert "<h1>Reliability</h1>" in text
    assert text.count("<svg") == 3 and text.count("<polyline") == 3
    assert 'id="reliability-summary"' in text and 'id="reliability-pairs"' in text
    for d in ("summary", "curves", "pairs", "runs", "samples"):
        assert f'href="/collections/{demo.slug}/reliability/{d}.csv?trials=200"' in text
    page = response.context["page"]
    runs = Run.objects.filter(collection=demo).count()
    assert len(page.detail.discrimination.asl) == runs * (runs - 1) // 2
    rows = response.context["summary"]
    shares = [r["swap_share"] for r in rows]
    assert shares == sorted(shares, reverse=True)


def test_htmx_request_gets_the_results_only(client, demo):
    login(client, "organizer")
    response = client.get(url(demo, trials=50, metric="ap"), headers={"HX-Request": "true"})
    text = response.content.decode()
    assert response.status_code == 200
    assert text.lstrip().startswith('<div id="results">') and "<h1>" not in text


def test_participants_and_assessors_are_refused(client, demo):
    for name in ("participant", "assessor"):
        user = make_user(username=f"x-{name}")
        add_member(collection=demo, user=user, role=name)
        client.force_login(user)
        assert client.get(url(demo)).status_code == 403


def test_samples_file_recomputes_the_pages_figures_with_the_cli(client, demo, tmp_path):
    login(client, "organizer")
    params = {"trials": 60, "seed": 5, "metric": "q_measure"}
    samples = client.get(download_url(demo, "samples", **params))
    assert samples["Content-Disposition"].startswith("attachment")
    pairs = client.get(download_url(demo, "pairs", **params)).content.decode()
    preamble, _, rows = read_csv(pairs)
    assert preamble["collection"] == demo.slug and preamble["trials"] == "60"
    # the same figures from the exported judgments, runs and samples through the CLI
    (tmp_path / "samples.csv").write_bytes(b"".join(samples.streaming_content))
    judg = tmp_path / "j.csv"
    judg.write_text(export_judgments(demo))
    run_files = []
    for run in Run.objects.filter(collection=demo).order_by("name"):
        path = tmp_path / f"{run.name}.tsv"
        path.write_text(
            "".join(
                f"{a.question.qid}\t{a.rank}\t{a.text}\n"
                for a in run.answers.select_related("question").order_by("question_id", "rank")
            )
        )
        run_files.append(str(path))
    out = io.StringIO()
    call_command(
        "reliability",
        "--judgments",
        str(judg),
        *run_files,
        "--table",
        "pairs",
        "--samples-in",
        str(tmp_path / "samples.csv"),
        stdout=out,
    )
    _, _, cli_rows = read_csv(out.getvalue())
    page_rows = [r for r in rows if r[0] == "q_measure"]
    assert [r[2:] for r in cli_rows] == [r[2:] for r in page_rows]


def test_exports_have_a_preamble_and_every_table(client, demo):
    login(client, "organizer")
    for table, first in (
        ("summary", "metric,gains,swap_threshold"),
        ("curves", "metric,gains,curve"),
        ("runs", "metric,gains,run,mean"),
    ):
        text = client.get(download_url(demo, table, trials=30)).content.decode()
        assert text.startswith(f"# table={table}\n") and f"\n{first}" in text


def test_links_of_the_old_download_parameter_go_to_the_files(client, demo):
    """The downloads were the page with ``?download=<kind>``: such a link still gives the
    file (by a redirect to its own URL, the configuration kept)."""
    login(client, "organizer")
    response = client.get(url(demo, trials=30, download="runs", seed=4))
    assert response.status_code == 302
    assert response.url == download_url(demo, "runs", trials=30, seed=4)
    text = client.get(url(demo, trials=30, download="summary"), follow=True).content.decode()
    assert text.startswith("# table=summary\n")
    response = client.get(url(demo, download="nonsense"))
    assert response.status_code == 400 and "Invalid parameters:" in response.content.decode()
    assert client.get(download_url(demo, "nonsense")).status_code == 404
    # the page itself keeps ignoring an empty download parameter
    assert "<h1>Reliability</h1>" in client.get(url(demo, trials=30, download="")).content.decode()


def test_a_download_with_an_invalid_configuration_is_refused(client, demo):
    login(client, "organizer")
    for params in ({"trials": 0}, {"metric": "nonsense"}, {"seed": -1}):
        response = client.get(download_url(demo, "summary", **params))
        assert response.status_code == 400, params
        assert "Invalid parameters:" in response.content.decode()


def test_downloads_are_for_organizers_only(client, demo):
    for name in ("participant", "assessor"):
        user = make_user(username=f"d-{name}")
        add_member(collection=demo, user=user, role=name)
        client.force_login(user)
        for kind in ("summary", "samples"):
            assert client.get(download_url(demo, kind)).status_code == 403


def test_too_few_runs_or_a_bad_configuration_is_explained(client):
    org = make_user(username="org-rel")
    c = make_collection()
    add_member(collection=c, user=org, role="organizer")
    make_question(collection=c, qid="q1", synsets=[[("x", "S")]])
    client.force_login(org)
    text = client.get(url(c)).content.decode()
    assert "at least two runs" in text
    for name in ("r1", "r2"):
        make_run(collection=c, owner=org, name=name, answers={"q1": ["x"]})
    text = client.get(url(c)).content.decode()
    assert "at least two judged questions" in text
    make_question(collection=c, qid="q2", synsets=[[("y", "S")]])
    make_question(collection=c, qid="q3", synsets=[[("z", "A")]])
    text = client.get(url(c, subset_size=3)).content.decode()
    assert "subset size must be from 1 to 1" in text
    response = client.get(download_url(c, "samples", subset_size=3))
    assert response.status_code == 200 and "subset size must be" in response.content.decode()
    response = client.get(url(c, trials=0))
    assert response.status_code == 200 and "trials" in response.content.decode().lower()


def test_hand_checked_figures_on_a_small_collection(client):
    """Two runs on four questions: run a finds every answer, run b none; every subset
    then puts a ahead, so there is no minority, no tie above f = 0 and no swap."""
    org = make_user(username="org-hand")
    c = make_collection()
    add_member(collection=c, user=org, role="organizer")
    for i in range(4):
        make_question(collection=c, qid=f"q{i}", synsets=[[(f"a{i}", "S")]])
    make_run(collection=c, owner=org, name="a", answers={f"q{i}": [f"a{i}"] for i in range(4)})
    make_run(collection=c, owner=org, name="b", answers={f"q{i}": ["wrong"] for i in range(4)})
    client.force_login(org)
    response = client.get(url(c, trials=40, metric="rr"))
    page = response.context["page"]
    d = page.detail
    assert d.stability.gt_xy[0].tolist() == [40] * 21
    assert d.swaps.counter[20] == 40 and d.swaps.swaps.sum() == 0
    assert d.swaps.threshold == 0.2 and d.swaps.share == 1.0
    assert d.discrimination.asl.tolist() == [1 / 41]  # a constant difference of 1
    # no bootstrap sample reached it: below the resolution of B = 40, never 0 nor 0.0244
    assert '<td class="num significant">&lt; 0.025</td>' in response.content.decode()
    assert np.allclose(d.intervals.mean, [1, 0])


def test_query_count_is_bounded(client, demo, django_assert_max_num_queries):
    login(client, "organizer")
    client.get(url(demo, trials=20))  # warm the session and caches
    with django_assert_max_num_queries(40):
        client.get(url(demo, trials=21))
    assert FUZZINESS[0] == 0


def test_runs_page_links_to_it_for_organizers_only(client, demo):
    login(client, "organizer")
    link = f'href="/collections/{demo.slug}/reliability/"'
    assert link in client.get(f"/collections/{demo.slug}/runs/").content.decode()
    login(client, "participant")
    assert link not in client.get(f"/collections/{demo.slug}/runs/").content.decode()


def test_missing_figures_show_as_a_dash(client, demo):
    login(client, "organizer")
    text = client.get(url(demo, trials=50, metric="rr")).content.decode()
    assert ">nan<" not in text.lower() and "—" in text
    # each dash of a figure has the letter of its reason, listed under its table (visible
    # text: a phone has no hover)
    assert "—</td>" not in text
    marks = set(re.findall(r'—<sup class="why-mark">(\w)</sup></td>', text))
    assert marks
    notes = re.findall(r'<li>—<sup class="why-mark">(\w)</sup> undefined: ([^<]+)</li>', text)
    assert marks <= {m for m, _ in notes} and all(reason.strip() for _, reason in notes)


def test_a_generated_fifty_run_collection(client):
    """50 runs of differing quality on 12 questions: the page and its pairs table."""
    org = make_user(username="org-fifty")
    c = make_collection()
    add_member(collection=c, user=org, role="organizer")
    for i in range(12):
        make_question(collection=c, qid=f"q{i}", synsets=[[(f"s{i}", "S")], [(f"a{i}", "A")]])
    rng = np.random.default_rng(0)
    for k in range(50):
        answers = {}
        for i in range(12):
            pool = [f"s{i}", f"a{i}", "x", "y"]
            answers[f"q{i}"] = [str(a) for a in rng.permutation(pool)[: 1 + k % 4]]
        make_run(collection=c, owner=org, name=f"r{k:02d}", answers=answers)
    client.force_login(org)
    response = client.get(url(c, trials=40))
    assert response.status_code == 200
    page = response.context["page"]
    assert len(page.runs) == 50 and len(response.context["pairs"]) == 1225
    pairs = client.get(download_url(c, "pairs", trials=40)).content.decode()
    assert pairs.count("\nq_measure,default,") == 1225


def test_curve_geometry():
    """The curves the template draws: one point per existing figure, the 5% line where
    5% is, empty swap bins left out."""
    from evaluation.reliability_report import Frame, curves

    X = np.array([[0.5, 0.5, 0.25, 0, 1, 0.5, 0, 0], [0.5, 0.25, 0.25, 0, 0.75, 0.5, 0, 0.5]])
    samples = draw_samples([str(i) for i in range(8)], trials=30, seed=2)
    detail = metric_reliability(X, samples, runs=["a", "b"])
    stability, swap, asl = curves(detail)
    assert len(stability["points"]) == 21
    assert len(swap["points"]) == int((detail.swaps.counter > 0).sum())
    assert swap["level"] == Frame(xmax=0.2, ymax=1.0).y(0.05)
    assert len(asl["points"]) == 1 and asl["points"][0]["y"] == Frame().y(
        float(detail.discrimination.asl[0])
    )
    xs = [float(p.split(",")[0]) for p in swap["polyline"].split()]
    assert xs == sorted(xs) and xs[0] >= swap["left"] and xs[-1] <= swap["right"]


def test_tiny_p_values_show_in_scientific_notation(client):
    """The pairs table formats p-values as every page does (stats.format_p): a paired
    t-test p of about 1e-20 is not shown as 0.0000."""
    org = make_user(username="org-tiny-p")
    c = make_collection()
    add_member(collection=c, user=org, role="organizer")
    n = 30
    for i in range(n):
        make_question(collection=c, qid=f"q{i}", synsets=[[(f"a{i}", "S")]])
    make_run(collection=c, owner=org, name="a", answers={f"q{i}": [f"a{i}"] for i in range(n)})
    # b finds the answer at rank 2 on every third question: differences of 1 and 0.5
    make_run(
        collection=c,
        owner=org,
        name="b",
        answers={f"q{i}": ["wrong", f"a{i}"] if i % 3 == 0 else ["wrong"] for i in range(n)},
    )
    client.force_login(org)
    response = client.get(url(c, trials=40, metric="rr"))
    p_holm = response.context["pairs"][0]["p_holm"]
    assert 0 < p_holm < 1e-4
    row = response.content.decode().split("<td>a</td><td>b</td>")[1].split("</tr>")[0]
    cells = row.split("</td>")  # difference, ASL, t, Holm, Tukey
    assert cells[2].endswith(f">{response.context['pairs'][0]['p_t']:.1e}")
    assert cells[3].endswith(f">{p_holm:.1e}")


def test_table_downloads_honour_full_precision(client, demo):
    login(client, "organizer")
    short = read_csv(client.get(download_url(demo, "pairs", trials=30)).content)
    full = read_csv(client.get(download_url(demo, "pairs", trials=30, precision="full")).content)
    assert "precision" not in short[0] and full[0]["precision"] == "full"
    assert len(short[2]) == len(full[2]) and short[2] != full[2]
    for a, b in zip(short[2], full[2], strict=True):
        assert a[:4] == b[:4]
        assert [x and float(x) for x in a[4:]] == [y and float(f"{float(y):.6g}") for y in b[4:]]


def _apart():
    """Twenty questions; runs right at rank 1 everywhere, at rank 2 on every other
    question, and nearly never: the extreme pair is beyond every bootstrap sample."""
    c, org = make_runs_far_apart(slug="rel-apart", organizer="org-rel-apart")
    return c, org


def test_asl_and_tukey_below_their_samples_resolution_read_below_one_over_b(client):
    c, org = _apart()
    client.force_login(org)
    page = client.get(url(c, trials=1000, seed=1))
    pairs = page.context["pairs"]
    floor = [p for p in pairs if p["asl"] == pytest.approx(1 / 1001)]
    assert floor and any(p["p_tukey"] == pytest.approx(1 / 1001) for p in pairs)
    body = page.content.decode()
    table = re.search(r'<table class="grid compact" id="reliability-pairs">.*?</table>', body, re.S)
    assert table.group(0).count("&lt; 0.001") >= 2
    assert "0.0010<" not in table.group(0) and "0.0000" not in table.group(0)
    # the ASL curve's point titles too
    assert "ASL &lt; 0.001</title>" in body


def test_the_summary_sentence_gives_shares_as_percentages(client):
    c, org = _apart()
    client.force_login(org)
    body = client.get(url(c, trials=200, seed=1)).content.decode()
    assert "100 % of the run pairs are significant at 5%" in body
    assert re.search(r"[\d.]+ % of the comparisons reach it", body)
    assert "1.000 of the" not in body


def test_a_t_interval_passing_0_is_marked_with_a_note(client):
    c, org = _apart()
    make_run(collection=c, owner=org, name="stray", answers={"Q01": ["a1"]})  # mean 0.05
    client.force_login(org)
    body = client.get(url(c, trials=50, seed=1)).content.decode()
    table = re.search(r'id="reliability-runs">.*?</table>', body, re.S).group(0)
    assert re.search(r"\[-0\.\d{4}, 0\.\d{4}\] †</td>", table)
    assert table.count("†") == 1
    assert 'id="t-passes"' in body and "not clipped" in body
