"""In Chromium: upload a run through the page, see its scores, compare it with a demo run,
see the plot, download the CSV and check its numbers against ``manage.py score``."""

import csv
import io
import re

import pandas as pd
import pytest
from django.core.management import call_command

from annotate.models import AnswerString

from .conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

RUN = (
    "EX1-BEATLES\t1\tPaul McCartney\nEX1-BEATLES\t2\tLennon\nEX1-BEATLES\t3\tRingo\n"
    "QAC1-1058\t1\tShinichiro Tomonaga\nQAC1-1058\t2\tDoctor Hideki Yukawa\n"
    "QAC1-1058\t3\tYukawa\nEX3-LOVE\t1\tNIL\nQAC1-1012\t1\tDecember 10, 1968\n"
    "SWISS-LANG\t1\tRomansh\nSWISS-LANG\t2\tfrench\nBASTILLE\t1\t1790\n"
)


def judgments_csv(path):
    """The demo judgments as a judgments CSV file (what the command-line scorer reads)."""
    rows = (
        AnswerString.objects.filter(question__collection__slug="demo", judged_at__isnull=False)
        .order_by("question_id", "id")
        .values_list("question__qid", "synset__ordinal", "text", "level__code")
    )
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["question_id", "synset_id", "answer", "level"])
        for qid, syn, text, level in rows:
            w.writerow([qid, syn or "", text, level or ""])


def test_upload_score_compare_and_download(page, live_server, demo, artifacts, tmp_path):
    run_file = tmp_path / "mine.tsv"
    run_file.write_text(RUN)
    login(page, live_server, "participant", "demo-participant")
    page.wait_for_url(f"{live_server.url}/collections/")
    page.goto(f"{live_server.url}/collections/demo/runs/upload/")
    page.fill("input[name=name]", "mine")
    page.set_input_files("input[name=file]", str(run_file))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(re.compile(r".*/collections/demo/runs/\d+/$"))
    assert page.locator("h1").inner_text() == "Run mine"
    assert page.get_by_text("uploaded: 11 answers").is_visible()
    page.screenshot(path=str(artifacts / "run-detail.png"), full_page=True)

    # download the per-question CSV and check it against manage.py score on files
    with page.expect_download() as info:
        page.get_by_role("link", name="Download the per-question scores (CSV)").click()
    web = pd.read_csv(info.value.path(), comment="#").set_index("question_id")
    jfile = tmp_path / "judgments.csv"
    judgments_csv(jfile)
    out = io.StringIO()
    call_command(
        "score",
        "--judgments",
        str(jfile),
        str(run_file),
        "--format",
        "csv",
        stdout=out,
        stderr=io.StringIO(),
    )
    cli = pd.read_csv(io.StringIO(out.getvalue())).set_index("question_id")
    assert list(web.index) == list(cli.index)
    for metric in ("q_measure", "r_measure", "rr", "ap", "ndcg@5"):
        assert web[metric].tolist() == pytest.approx(cli[metric].tolist(), abs=1e-6), metric
    assert web.at["QAC1-1058", "q_measure"] == pytest.approx((4 / 4 + 8 / 8) / 3, abs=1e-6)

    # compare with the demo run AF and see the plot
    page.goto(f"{live_server.url}/collections/demo/compare/")
    page.select_option("select[name=a]", label="AF")
    page.select_option("select[name=b]", label="mine")
    page.get_by_role("button", name="Compare").click()
    page.wait_for_selector("#diff-plot")
    # one link per question (its column of the plot), one mark per question and metric
    assert page.locator("#diff-plot a").count() == len(web.drop("all"))
    assert page.locator("#diff-plot g.series use").count() == 2 * len(web.drop("all"))
    assert "↓" in page.locator("#tests").inner_text()
    first = page.locator("#diff-plot a").first
    qid = first.get_attribute("data-qid")
    first.click()
    page.wait_for_url(f"**#side-{qid}")
    side = page.locator(f"[id='side-{qid}']")
    assert side.is_visible() and side.locator("ol.marks").count() == 2
    page.screenshot(path=str(artifacts / "compare.png"), full_page=True)
