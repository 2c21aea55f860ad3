"""Fuzzing the run upload page: hostile files get a page with errors, never a 500, and
nothing is stored unless the whole file is good."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from annotate.management.commands.load_demo import load_demo
from config.middleware import CONTROL_CHARACTERS
from evaluation.models import Run, RunAnswer

from .test_parsers_fuzz import FUZZ, almost_files

QIDS = ["EX1-BEATLES", "EX2-DVD", "QAC1-1012", "NOPE"]


@st.composite
def run_files(draw) -> bytes:
    if draw(st.booleans()):
        return draw(almost_files())
    rows = draw(st.lists(st.tuples(st.sampled_from(QIDS), st.integers(-1, 7),
                                   st.text(max_size=8)), max_size=12))
    return "".join(f"{q}\t{r}\t{a}\n" for q, r, a in rows).encode("utf-8", "replace")


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

    @FUZZ
    @given(data=run_files(), name=st.text(max_size=12), fmt=st.sampled_from(["", "qa", "trec"]))
    def test_upload_never_fails_badly(self, data, name, fmt):
        runs, answers = Run.objects.count(), RunAnswer.objects.count()
        resp = self.client.post("/collections/demo/runs/upload/", {
            "name": name, "format": fmt, "file": SimpleUploadedFile("f.tsv", data)})
        # 400: a control character in the name (config.middleware), refused before the view
        expected = (400,) if CONTROL_CHARACTERS.search(name) else (200, 302)
        assert resp.status_code in expected, resp.status_code
        if resp.status_code in (200, 400):  # refused: nothing written
            assert (Run.objects.count(), RunAnswer.objects.count()) == (runs, answers)
        else:
            run = Run.objects.get(collection__slug="demo", name=name.strip())
            assert run.answers.count() == RunAnswer.objects.count() - answers
