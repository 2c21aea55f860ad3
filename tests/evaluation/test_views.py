"""Evaluation pages: scores on the demo collection (the paper's values), uploads,
comparison statistics, visibility, exports, freshness and query counts."""

import html
import io
import re

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from scipy import stats as sps

from annotate import judging
from annotate.models import AnswerString, Question
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def runs(demo):
    return {r.name: r for r in Run.objects.filter(collection=demo)}


def csv_frame(response) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(response.content.decode()), comment="#")


def login(client, username):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username=username))


def test_demo_scores_are_the_papers_values(client, demo):
    login(client, "organizer")
    r = runs(demo)
    af = csv_frame(client.get(f"/collections/demo/runs/{r['AF'].pk}/scores.csv"))
    noaf = csv_frame(client.get(f"/collections/demo/runs/{r['noAF'].pk}/scores.csv"))
    af, noaf = af.set_index("question_id"), noaf.set_index("question_id")
    assert noaf.at["EX1-BEATLES", "q_measure"] == pytest.approx(0.722, abs=5e-4)
    assert noaf.at["EX1-BEATLES", "r_measure"] == pytest.approx(0.625)
    assert af.at["QAC1-1012", "q_measure"] == pytest.approx(0.5)  # "1968" is only B
    assert af.at["QAC1-1058", "q_measure"] == pytest.approx(0.524, abs=5e-4)
    assert noaf.at["QAC1-1058", "q_measure"] == pytest.approx(1 / 3)  # the duplicate
    assert af.at["EX3-LOVE", "q_measure"] == 1.0 and noaf.at["EX3-LOVE", "q_measure"] == 0.0
    assert af.at["EX1-BEATLES-5", "q_measure"] == 1.0
    # QAC1-1006: RR moves from 1/4 to 1/3 (the paper's 0.083), R-measure stays 0
    assert af.at["QAC1-1006", "rr"] - noaf.at["QAC1-1006", "rr"] == pytest.approx(1 / 12, abs=1e-5)
    assert af.at["QAC1-1006", "r_measure"] == noaf.at["QAC1-1006", "r_measure"] == 0.0
    assert "SNOW-COUNTRY" not in af.index  # nobody judged it: reported, never scored
    assert af.at["all", "q_measure"] == pytest.approx(af.drop("all")["q_measure"].mean())


def test_runs_page_and_run_page(client, demo):
    login(client, "organizer")
    page = client.get("/collections/demo/runs/?metric=q_measure&metric=rr&gains=1:1:1")
    assert page.status_code == 200
    assert [m for m, _ in page.context["metrics"]] == ["q_measure", "rr"]
    names = [row["run"].name for row in page.context["rows"]]
    assert names == ["AF", "noAF"]
    noaf = next(row for row in page.context["rows"] if row["run"].name == "noAF")
    assert noaf["unjudged"] > 0 and noaf["questions"] == 13
    r = runs(demo)["noAF"]
    detail = client.get(f"/collections/demo/runs/{r.pk}/")
    html = detail.content.decode()
    assert "duplicate of synset 1" in html and "unjudged" in html and "incorrect" in html
    partial = client.get(
        f"/collections/demo/runs/{r.pk}/?q=beatles",
        headers={"HX-Request": "true", "HX-Target": "question-table"},
    )
    body = partial.content.decode()
    assert "<html" not in body and "EX1-BEATLES" in body and "QAC1-1058" not in body


def test_gain_profile_and_beta_change_scores(client, demo):
    login(client, "organizer")
    af = runs(demo)["AF"]
    base = csv_frame(client.get(f"/collections/demo/runs/{af.pk}/scores.csv")).set_index(
        "question_id"
    )
    flat = csv_frame(client.get(f"/collections/demo/runs/{af.pk}/scores.csv?gains=1:1:1"))
    flat = flat.set_index("question_id")
    # Kawabata: Q = (beta*g_B + 1)/(beta*g_S + 1); with 1:1:1 the B answer is as good as S
    assert base.at["QAC1-1012", "q_measure"] == pytest.approx(0.5)
    assert flat.at["QAC1-1012", "q_measure"] == pytest.approx(1.0)
    b10 = csv_frame(client.get(f"/collections/demo/runs/{af.pk}/scores.csv?beta=10"))
    assert b10.set_index("question_id").at["QAC1-1012", "q_measure"] == pytest.approx(11 / 31)
    bad = client.get(f"/collections/demo/runs/{af.pk}/?gains=custom&custom_gains=S%3D1")
    assert "gives no gain for level" in bad.content.decode()


def test_compare_counts_and_p_values_equal_scipy(client, demo):
    login(client, "organizer")
    r = runs(demo)
    page = client.get(
        f"/collections/demo/compare/?a={r['noAF'].pk}&b={r['AF'].pk}"
        "&metric=q_measure&metric=rr&metric=r_measure"
    )
    assert page.status_code == 200
    data = csv_frame(
        client.get(
            f"/collections/demo/runs/{r['AF'].pk}/scores.csv?metric="
            "q_measure&metric=rr&metric=r_measure"
        )
    ).set_index("question_id")
    base = csv_frame(
        client.get(
            f"/collections/demo/runs/{r['noAF'].pk}/scores.csv?metric="
            "q_measure&metric=rr&metric=r_measure"
        )
    ).set_index("question_id")
    data, base = data.drop("all"), base.drop("all")
    assert [row["t"].metric for row in page.context["tests"]] == ["q_measure", "rr", "r_measure"]
    for row in page.context["tests"]:
        t = row["t"]
        d = (data[t.metric] - base[t.metric]).round(12)
        assert (t.up, t.down, t.tied) == ((d > 0).sum(), (d < 0).sum(), (d == 0).sum())
        nz = d[d != 0]
        assert t.sign_p == pytest.approx(sps.binomtest(t.up, t.up + t.down).pvalue, abs=1e-6)
        assert t.wilcoxon_p == pytest.approx(sps.wilcoxon(nz).pvalue, abs=1e-6)
        assert t.t_p == pytest.approx(
            sps.ttest_rel(data[t.metric], base[t.metric]).pvalue, abs=1e-6
        )
    html = page.content.decode()
    assert 'id="diff-plot"' in html and "QAC1-1058" in html
    # the paper: for QAC1-1058 RR does not move but Q-measure does
    disagree = [d["qid"] for d in page.context["disagree"]]
    assert "QAC1-1058" in disagree and "QAC1-1021" in disagree
    csv = client.get(f"/collections/demo/compare.csv?a={r['noAF'].pk}&b={r['AF'].pk}")
    frame = csv_frame(csv)
    assert set(frame["row"]) == {"mean", "question"}


def test_ranking_and_correlations(client, demo):
    login(client, "organizer")
    page = client.get("/collections/demo/ranking/?metric=q_measure&metric=rr&metric=ap")
    # the demo's runs in the order of their mean Q-measure, as their own score files say
    means = {}
    for name, run in runs(demo).items():
        frame = csv_frame(
            client.get(
                f"/collections/demo/runs/{run.pk}/scores.csv?metric=q_measure&metric=rr&metric=ap"
            )
        ).set_index("question_id")
        means[name] = [frame.at["all", m] for m in ("q_measure", "rr", "ap")]
    table = page.context["table"]
    assert [row["run"].name for row in table] == sorted(means, key=lambda n: -means[n][0])
    for row in table:
        assert [v for v, _, _ in row["values"]] == pytest.approx(means[row["run"].name])
    assert [(c["a"], c["b"]) for c in page.context["corr"]] == [
        ("Q-measure", "RR"),
        ("Q-measure", "AP"),
        ("RR", "AP"),
    ]
    frame = csv_frame(client.get("/collections/demo/ranking.csv"))
    assert list(frame.columns)[:2] == ["run", "q_measure"]


def test_ranking_orders_runs_by_hand_computed_means(client):
    """Three runs on two questions, scored by hand (gains S=3, A=2, beta 1).
    Q1: synsets {x: S} and {y: A}, "w" judged incorrect; Q2: one synset {z: S}.
    c-best  Q1 [x, y]  Q = 1,                     RR 1;  Q2 [z]       Q = 1,   RR 1
    b-mid   Q1 [w, x]  Q = 1/2 * (3+1)/(5+2) = 2/7, RR 1/2; Q2 [nope, z] Q = (3+1)/(3+2), RR 1/2
    a-worst Q1 [y]     Q = 1/2 * (2+1)/(3+1) = 3/8, RR 1;  Q2 [nope]    Q = 0,   RR 0
    """
    c = make_collection(slug="rk")
    make_question(collection=c, qid="Q1", synsets=[[("x", "S")], [("y", "A")]], incorrect=["w"])
    make_question(collection=c, qid="Q2", synsets=[[("z", "S")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    for name, answers in [
        ("a-worst", {"Q1": ["y"], "Q2": ["nope"]}),
        ("b-mid", {"Q1": ["w", "x"], "Q2": ["nope", "z"]}),
        ("c-best", {"Q1": ["x", "y"], "Q2": ["z"]}),
    ]:
        make_run(collection=c, owner=org, name=name, answers=answers)
    want = {
        "c-best": (1.0, 1.0),
        "b-mid": ((2 / 7 + 4 / 5) / 2, 0.5),
        "a-worst": ((3 / 8 + 0) / 2, 0.5),
    }
    client.force_login(org)
    page = client.get("/collections/rk/ranking/?metric=q_measure&metric=rr")
    table = page.context["table"]
    assert [row["run"].name for row in table] == ["c-best", "b-mid", "a-worst"]
    for row in table:
        assert [v for v, _, _ in row["values"]] == pytest.approx(want[row["run"].name])
    # ranks per metric: ties share the better rank
    assert [[r for _, r, _ in row["values"]] for row in table] == [[1, 1], [2, 2], [3, 2]]
    body = re.search(r'<table[^>]*id="ranking">.*?</table>', page.content.decode(), re.S)[0]
    assert re.findall(r"<tr><td>([\w-]+)</td>", body) == ["c-best", "b-mid", "a-worst"]
    # each mean with its 95% t interval, as scipy computes it from the two questions
    lo, hi = sps.t.interval(0.95, 1, loc=19 / 35, scale=sps.sem([2 / 7, 4 / 5]))
    assert (
        f'<td>b-mid</td><td class="num">0.5429 <span class="ci">[{lo:.4f}, {hi:.4f}] †</span></td>'
        '<td class="num">2</td>' in body
    )
    tau = sps.kendalltau([1.0, 19 / 35, 3 / 16], [1.0, 0.5, 0.5]).statistic
    rho = sps.spearmanr([1.0, 19 / 35, 3 / 16], [1.0, 0.5, 0.5]).statistic
    assert page.context["corr"] == [
        {
            "a": "Q-measure",
            "b": "RR",
            "key_a": "q_measure",
            "key_b": "rr",
            "tau": f"{tau:.4f}",
            "rho": f"{rho:.4f}",
            "why": "",
        }
    ]
    # the CSV: one row per run (by name), then the correlations
    frame = csv_frame(client.get("/collections/rk/ranking.csv?metric=q_measure&metric=rr"))
    assert list(frame["run"][:3]) == ["a-worst", "b-mid", "c-best"]
    for _, row in frame[:3].iterrows():
        assert (row["q_measure"], row["rr"]) == pytest.approx(want[row["run"]])
    assert list(frame["run"][3:]) == ["kendall_tau:q_measure:rr", "spearman_rho:q_measure:rr"]
    assert list(frame["q_measure"][3:]) == pytest.approx([tau, rho])


def upload(client, collection, name, content, filename="run.tsv", **extra):
    f = SimpleUploadedFile(filename, content if isinstance(content, bytes) else content.encode())
    return client.post(
        f"/collections/{collection.slug}/runs/upload/", {"name": name, "file": f, **extra}, **({})
    )


def test_upload_valid_run_then_scores(client, demo):
    login(client, "participant")
    body = "EX1-BEATLES\t1\tPaul McCartney\nEX1-BEATLES\t2\tJohn Lennon\nQAC1-1012\t1\t1968\n"
    resp = upload(client, demo, "mine", body)
    assert resp.status_code == 302
    run = Run.objects.get(collection=demo, name="mine")
    assert run.answers.count() == 3 and len(run.sha256) == 64 and run.format == "qa"
    page = client.get(resp.headers["Location"])
    assert page.status_code == 200 and page.context["run"] == run
    shown = html.unescape(page.content.decode())
    assert "<h1>Run mine</h1>" in shown and "Paul McCartney" in shown and "QAC1-1012" in shown
    resp = client.post(
        f"/collections/{demo.slug}/runs/upload/",
        {"name": "mine2", "file": SimpleUploadedFile("r.tsv", body.encode())},
        headers={"HX-Request": "true"},
    )
    assert resp.headers["HX-Redirect"].startswith("/collections/demo/runs/")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            "EX1-BEATLES\t1\tPaul\nEX1-BEATLES\t1\tJohn\n",
            "line 2: question 'EX1-BEATLES' has rank 1 twice",
        ),
        ("EX1-BEATLES\tx\tPaul\n", "line 1: rank 'x' is not a positive integer"),
        (
            "NOPE-1\t1\tPaul\nNOPE-2\t1\tx\nEX1-BEATLES\t1\tPaul\n",
            "line 2: question 'NOPE-2' is not in this collection",
        ),
        ("".join(f"EX1-BEATLES\t{i}\ta{i}\n" for i in range(1, 8)), "more than 5 answers"),
        ("", "The submitted file is empty"),
        ("\n\n", "no answers in the run"),
    ],
)
def test_upload_errors_store_nothing(client, demo, content, message):
    login(client, "organizer")
    before = (Run.objects.count(), RunAnswer.objects.count())
    resp = upload(client, demo, "bad", content)
    assert resp.status_code == 200
    assert message in html.unescape(resp.content.decode())
    assert (Run.objects.count(), RunAnswer.objects.count()) == before


def test_upload_refuses_a_used_name_and_a_big_file(client, demo, settings):
    login(client, "organizer")
    resp = upload(client, demo, "AF", "EX1-BEATLES\t1\tPaul\n")
    assert "a run named 'AF' already exists" in html.unescape(resp.content.decode())
    settings.RUN_UPLOAD_MAX_MB = 0
    resp = upload(client, demo, "big", "EX1-BEATLES\t1\tPaul\n")
    assert "runs may be at most 0 MB" in resp.content.decode()
    assert not Run.objects.filter(name="big").exists()


def test_upload_trec_run_and_import_command(demo, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    p = tmp_path / "t.run"
    p.write_text("EX2-DVD Q0 digital-video-disk 1 2.0 trecrun\nEX2-DVD Q0 x 2 1.0 trecrun\n")
    call_command(
        "import_run",
        "--collection",
        "demo",
        "--owner",
        "participant",
        "--name",
        "cmd",
        str(p),
        stdout=io.StringIO(),
    )
    run = Run.objects.get(name="cmd")
    assert run.format == "trec" and run.answers.count() == 2
    bad = tmp_path / "bad.tsv"
    bad.write_text("NOPE\t1\tx\n")
    with pytest.raises(CommandError):
        call_command(
            "import_run",
            "--collection",
            "demo",
            "--owner",
            "participant",
            "--name",
            "cmd2",
            str(bad),
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )


def test_closed_collection_refuses_participant_uploads(client, demo):
    demo.open_for_submissions = False
    demo.save()
    login(client, "participant")
    assert client.get("/collections/demo/runs/upload/").status_code == 403
    login(client, "organizer")
    page = client.get("/collections/demo/runs/upload/")
    assert page.status_code == 200 and 'id="upload-form"' in page.content.decode()


def test_visibility_rules(client, demo):
    r = runs(demo)
    other = make_user(username="other")
    add_member(collection=demo, user=other, role="participant")
    mine = make_run(
        collection=demo, owner=other, name="other-run", answers={"EX1-BEATLES": ["Paul"]}
    )
    login(client, "participant")
    listing = client.get("/collections/demo/runs/")
    assert {row["run"].name for row in listing.context["rows"]} == {"AF", "noAF"}
    assert client.get(f"/collections/demo/runs/{mine.pk}/").status_code == 403
    assert client.get(f"/collections/demo/compare/?a={r['AF'].pk}&b={mine.pk}").status_code == 403
    demo.leaderboard_published = True
    demo.save()
    page = client.get(f"/collections/demo/runs/{mine.pk}/")
    assert page.status_code == 200 and page.context["run"] == mine
    assert "<h1>Run other-run</h1>" in page.content.decode()
    login(client, "assessor1")  # assessors see no scores
    for url in [
        "/collections/demo/runs/",
        f"/collections/demo/runs/{r['AF'].pk}/",
        f"/collections/demo/runs/{r['AF'].pk}/scores.csv",
        "/collections/demo/compare/",
        "/collections/demo/ranking/",
        "/collections/demo/runs/upload/",
    ]:
        assert client.get(url).status_code == 403, url
    stranger = make_user()
    client.force_login(stranger)
    assert client.get("/collections/demo/runs/").status_code == 403
    login(client, "organizer")
    listing = client.get("/collections/demo/runs/")
    assert {row["run"].name for row in listing.context["rows"]} == {"AF", "noAF", "other-run"}


def test_scores_follow_the_current_judgments(client, demo):
    login(client, "organizer")
    af = runs(demo)["AF"]
    url = f"/collections/demo/runs/{af.pk}/scores.csv"
    before = csv_frame(client.get(url)).set_index("question_id")
    assert before.at["QAC1-1021", "q_measure"] == pytest.approx(0.5)
    # an assessor puts AF's unjudged consolidated answer into the "cold pizza" synset
    # (through the judging operations, which bump the versions the stored scores go by)
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    judging.string_add(
        question=q,
        text="Obuchi is as uninspiring as cold pizza",
        synset=q.synsets.get(ordinal=2).pk,
        level="S",
        by=None,
    )
    after = csv_frame(client.get(url)).set_index("question_id")
    assert after.at["QAC1-1021", "q_measure"] == pytest.approx(1.0)


def test_csv_exports_neutralise_formulas(client):
    c = make_collection(slug="f")
    make_question(collection=c, qid="=1+1", synsets=[[("x", "S")]])
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    run = make_run(collection=c, owner=org, name="@SUM(A1)", answers={"=1+1": ["x"]})
    client.force_login(org)
    text = client.get(f"/collections/f/runs/{run.pk}/scores.csv").content.decode()
    assert "'@SUM(A1),'=1+1," in text
    assert "\n@" not in text and ",=" not in text


@pytest.mark.slow
def test_run_page_query_count_is_bounded(client, django_assert_max_num_queries):
    c = make_collection(slug="big")
    qs = Question.objects.bulk_create(
        Question(collection=c, qid=f"Q{i:05d}", text=f"q {i}") for i in range(5000)
    )
    from annotate.models import AnswerSynset

    syns = AnswerSynset.objects.bulk_create(AnswerSynset(question=q, ordinal=1) for q in qs)
    s_level = c.levels.get(code="S")
    now = timezone.now()
    AnswerString.objects.bulk_create(
        AnswerString(
            question=q, text=f"a{i}", key=f"a{i}", synset=syn, level=s_level, judged_at=now
        )
        for i, (q, syn) in enumerate(zip(qs, syns, strict=True))
    )
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    run = Run.objects.create(collection=c, owner=org, name="r")
    RunAnswer.objects.bulk_create(
        RunAnswer(run=run, question=q, rank=k + 1, text=t, key=t)
        for i, q in enumerate(qs)
        for k, t in enumerate([f"w{i}", f"a{i}"])
    )
    client.force_login(org)
    # the first view scores the run and stores its scores (``score_store``): a fixed number
    # of queries more; the next ones read them
    with django_assert_max_num_queries(35):
        page = client.get(f"/collections/big/runs/{run.pk}/")
    with django_assert_max_num_queries(25):
        page = client.get(f"/collections/big/runs/{run.pk}/")
    assert page.status_code == 200
    assert page.context["means"][0] == pytest.approx(0.8)  # S at rank 2: 4 / (3 + 2)
    with django_assert_max_num_queries(25):
        listing = client.get("/collections/big/runs/")
    assert [row["run"].name for row in listing.context["rows"]] == ["r"]
    assert listing.context["rows"][0]["questions"] == 5000
    other = Run.objects.create(collection=c, owner=org, name="s")
    RunAnswer.objects.bulk_create(
        RunAnswer(run=other, question=q, rank=1, text=f"a{i}", key=f"a{i}")
        for i, q in enumerate(qs[:2500])
    )
    with django_assert_max_num_queries(35):
        page = client.get(f"/collections/big/compare/?a={run.pk}&b={other.pk}")
    with django_assert_max_num_queries(25):
        page = client.get(f"/collections/big/compare/?a={run.pk}&b={other.pk}")
    body = page.content.decode()
    # the plot shows every question; the table a page of 100, sorted like the plot
    assert page.status_code == 200 and body.count("data-qid=") == 5000
    assert body.count("both lists</a>") == 100 and "questions 1–100 of 5000" in body
    last = client.get(f"/collections/big/compare/?a={run.pk}&b={other.pk}&page=50")
    assert last.content.decode().count("both lists</a>") == 100
    with django_assert_max_num_queries(25):
        ranking = client.get("/collections/big/ranking/")
    # s: S at rank 1 for half the questions, nothing for the rest
    assert [(row["run"].name, row["values"][0][0]) for row in ranking.context["table"]] == [
        ("r", pytest.approx(0.8)),
        ("s", pytest.approx(0.5)),
    ]
