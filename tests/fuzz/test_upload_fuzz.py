"""Fuzzing the run upload page: hostile files get a page with errors, never a 500, and
nothing is stored unless the whole file is good; a good file is stored whole."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from config.middleware import CONTROL_CHARACTERS
from evaluation.management.commands.load_demo import load_demo
from evaluation.models import Run, RunAnswer

from .test_parsers_fuzz import FUZZ, almost_files

QIDS = ["EX1-BEATLES", "EX2-DVD", "QAC1-1012", "NOPE"]
# no blanks around an answer (the readers strip them)
EDGE = st.sampled_from("aZé1=+@'\"-")
ANSWER = st.one_of(
    EDGE,
    st.tuples(EDGE, st.text(st.sampled_from("aZé1 =+@'\",-\u3000#"), max_size=6), EDGE).map(
        "".join
    ),
)
GOOD_NAME = st.sampled_from(["run-a", " run b ", "ünï", "=1+1", "x" * 100])


@st.composite
def run_files(draw) -> bytes:
    if draw(st.booleans()):
        return draw(almost_files())
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(QIDS), st.integers(-1, 7), st.text(max_size=8)), max_size=12
        )
    )
    return "".join(f"{q}\t{r}\t{a}\n" for q, r, a in rows).encode("utf-8", "replace")


@st.composite
def good_runs(draw, fmt: str) -> tuple[bytes, list[tuple[str, int, str]]]:
    """A run the format ``fmt`` reads (demo question ids, ranks 1-5 once per question,
    non-empty answers), and its rows."""
    rows = draw(
        st.lists(
            st.tuples(st.sampled_from(QIDS[:3]), st.integers(1, 5), ANSWER),
            min_size=1,
            max_size=12,
            unique_by=lambda r: r[:2],
        )
    )
    if fmt == "trec":  # docnos without blanks, once per topic
        rows = [(q, r, "_".join(a.split()) + f".{k}") for k, (q, r, a) in enumerate(rows)]
        lines = [f"{q} Q0 {a} {r} {10 - r} tag\n" for q, r, a in rows]
    else:
        lines = [f"{q}\t{r}\t{a}\n" for q, r, a in rows]
    return "".join(lines).encode(), rows


@pytest.mark.django_db
class TestUploadFuzz(TestCase):
    @classmethod
    def setUpTestData(cls):
        load_demo()

    def setUp(self):
        from django.contrib.auth import get_user_model
        from django.test import Client

        self.client = Client()
        self.client.force_login(get_user_model().objects.get(username="organizer"))

    def upload(self, name: str, fmt: str, data: bytes):
        return self.client.post(
            "/collections/demo/runs/upload/",
            {"name": name, "format": fmt, "file": SimpleUploadedFile("f.tsv", data)},
        )

    @FUZZ
    @given(data=run_files(), name=st.text(max_size=12), fmt=st.sampled_from(["", "qa", "trec"]))
    def test_upload_never_fails_badly(self, data, name, fmt):
        runs, answers = Run.objects.count(), RunAnswer.objects.count()
        resp = self.upload(name, fmt, data)
        # 400: a control character in the name (config.middleware), refused before the view
        expected = (400,) if CONTROL_CHARACTERS.search(name) else (200, 302)
        assert resp.status_code in expected, resp.status_code
        event({200: "refused", 302: "stored", 400: "refused (control character)"}[resp.status_code])
        if resp.status_code in (200, 400):  # refused: the page says why, nothing written
            assert (Run.objects.count(), RunAnswer.objects.count()) == (runs, answers)
            page = resp.content.decode()
            assert (
                resp.status_code == 400
                or 'id="upload-errors"' in page
                or ('class="errorlist' in page)
            ), page
        else:
            run = Run.objects.get(collection__slug="demo", name=name.strip())
            assert run.answers.count() == RunAnswer.objects.count() - answers

    @FUZZ
    @given(draw=st.data(), name=GOOD_NAME, fmt=st.sampled_from(["", "qa", "trec"]))
    def test_a_good_run_is_stored_whole(self, draw, name, fmt):
        data, rows = draw.draw(good_runs(fmt))
        before = RunAnswer.objects.count()
        resp = self.upload(name, fmt, data)
        assert resp.status_code == 302, resp.content.decode()
        run = Run.objects.get(collection__slug="demo", name=name.strip())
        assert resp.headers["Location"] == f"/collections/demo/runs/{run.pk}/"
        assert run.format == (fmt or ("trec" if " Q0 " in data.decode() else "qa"))
        got = sorted(run.answers.values_list("question__qid", "rank", "text"))
        # each question's answers in the order of their ranks (TREC: of their scores),
        # stored as positions 1, 2, ...
        want = [
            (q, k, a)
            for q in sorted({q for q, _, _ in rows})
            for k, (_, _, a) in enumerate(
                sorted((r for r in rows if r[0] == q), key=lambda r: r[1]), 1
            )
        ]
        assert got == sorted(want)
        assert RunAnswer.objects.count() - before == len(rows)
