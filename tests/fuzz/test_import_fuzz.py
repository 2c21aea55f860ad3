"""Fuzzing the annotation imports through their pages (upload and preview, then confirm):
hostile files get a preview listing errors, never a 500, and nothing is written unless the
whole file is good; a confirmed import writes exactly what its preview announced.
Each example is one to four requests (~15 ms): ``make fuzz``'s 12,500 take about 4 minutes."""

import csv
import io
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from django.utils.html import escape
from hypothesis import event, given
from hypothesis import strategies as st
from hypothesis.extra.django import TestCase

from annotate.imports import import_plan
from annotate.models import AnswerString, AnswerSynset, Collection, JudgmentEvent, Question
from evaluation.management.commands.load_demo import load_demo

from .test_parsers_fuzz import CELLS, FUZZ, almost_files

QIDS = ["EX1-BEATLES", "EX2-DVD", "QAC1-1012", "NOPE", "=cmd|' /C calc'!A0", "'=1+1", ""]
LEVELS = ["S", "A", "B", "", "X", "s", " A"]
HEADERS = {
    "questions": "question_id,question",
    "flat": "question_id,answer",
    "judgments": "question_id,synset_id,answer,level",
}
TEXT = st.one_of(
    CELLS,
    st.sampled_from(
        ["John Lennon", '=HYPERLINK("http://x")', "'+1", "a\x00b", "\ufeffBOM", "x" * 300, "Ringo"]
    ),
)

# answers a spreadsheet would run as formulas, or that look like quoted ones, are content
CLEAN_TEXT = st.one_of(
    st.sampled_from(
        ["John Lennon", '=HYPERLINK("http://x")', "'+1", "@SUM(A1)", "-2", "'=x", "Ringo", "＝１"]
    ),
    st.text(
        st.characters(codec="utf-8", exclude_categories=["Cc", "Cs", "Zl", "Zp"]),
        min_size=1,
        max_size=12,
    ).filter(str.strip),
)


@st.composite
def import_files(draw, kind: str) -> bytes:
    """Near-valid files for ``kind`` (right header, demo question ids, formula cells, NULs,
    stray columns) in some encoding, or almost-right files, or random bytes."""
    choice = draw(st.sampled_from([4, 5, 0, 1, 2, 3, 4, 5]))  # half of them clean
    if choice == 0:
        return draw(st.binary(max_size=300))
    if choice == 1:
        return draw(almost_files())
    clean = choice >= 4  # valid rows, so that the confirm step runs too
    qids, text = (st.sampled_from(QIDS[:3]), CLEAN_TEXT) if clean else (st.sampled_from(QIDS), TEXT)
    if clean and kind == "questions":
        qids = st.sampled_from([*QIDS[:3], "NEW-1", "NEW 2", "ＮＥＷ３"])
    row = {
        "questions": st.tuples(qids, text),
        "flat": st.tuples(qids, text),
        "judgments": st.tuples(
            qids,
            st.sampled_from(["1", "2"] if clean else ["1", "2", "", "0", "=1", "x"]),
            text,
            st.sampled_from(LEVELS[:3] if clean else LEVELS),
        ),
    }[kind]
    unique = (lambda r: r[0]) if clean and kind == "questions" else None
    rows = draw(st.lists(row.map(list), min_size=int(clean), max_size=10, unique_by=unique))
    if not clean and draw(st.booleans()) and rows:  # a missing or an extra column
        rows[0] = rows[0][:-1] if draw(st.booleans()) else [*rows[0], "extra"]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator=draw(st.sampled_from(["\n", "\r\n"])))
    if clean or draw(st.integers(0, 5)):
        out.write(HEADERS[kind] + "\n")
    writer.writerows(rows)
    encoding = draw(
        st.sampled_from(
            ["utf-8", "utf-8-sig"]
            if clean
            else ["utf-8", "utf-8", "utf-8-sig", "utf-16", "latin-1", "cp1252"]
        )
    )
    return out.getvalue().encode(encoding, errors="replace")


def counts() -> tuple[int, ...]:
    return (
        Question.objects.count(),
        AnswerString.objects.count(),
        AnswerSynset.objects.count(),
        JudgmentEvent.objects.count(),
        AnswerString.objects.filter(judged_at__isnull=False).count(),
    )


@pytest.mark.django_db
class TestImportFuzz(TestCase):
    @classmethod
    def setUpTestData(cls):
        load_demo()

    def setUp(self):
        from django.contrib.auth import get_user_model
        from django.test import Client

        self.client = Client()
        self.client.force_login(get_user_model().objects.get(username="organizer"))

    def upload(self, kind: str, data: bytes, htmx: bool):
        headers = {"HX-Request": "true"} if htmx else {}
        return self.client.post(
            "/collections/demo/import/",
            {"kind": kind, "file": SimpleUploadedFile("fuzz.csv", data)},
            headers=headers,
        )

    @FUZZ
    @given(
        data=st.data(),
        kind=st.sampled_from(["questions", "flat", "judgments"]),
        htmx=st.booleans(),
        stale=st.integers(0, 9),
    )
    def test_import_never_fails_badly(self, data, kind, htmx, stale):
        body = data.draw(import_files(kind))
        before = counts()
        response = self.upload(kind, body, htmx)
        assert response.status_code == 200, response.status_code
        assert counts() == before  # the preview writes nothing
        page = response.content.decode()
        token = re.search(r'name="token" value="(\w+)"', page)
        if not body:  # the form refuses an empty file (its error is outside the htmx partial)
            assert token is None and "nothing imported" not in page
            return
        # what the page previewed, computed the same way (the plan reads, never writes)
        plan = import_plan(
            collection=Collection.objects.get(slug="demo"),
            kind=kind,
            data=body,
            filename="fuzz.csv",
        )
        event(f"{kind} {'previewed' if plan.ok else 'refused'}")
        if not plan.ok:
            assert token is None and "nothing imported" in page
            for issue in plan.issues:
                assert issue.message and (issue.line is None or issue.line >= 1)
            assert escape(str(plan.issues[0])) in page
            return
        assert token, "a clean file gets a confirm button"
        token = token.group(1)
        if stale == 0:  # a wrong token: refused, nothing written, the preview still pending
            response = self.client.post("/collections/demo/import/confirm/", {"token": "0" * 32})
            assert response.status_code == 302
            assert response.headers["Location"].endswith("/collections/demo/import/")
            assert counts() == before
        start = timezone.now()
        response = self.client.post("/collections/demo/import/confirm/", {"token": token})
        assert response.status_code == 302, response.status_code
        after = counts()
        assert response.headers["Location"].endswith("/collections/demo/"), (
            "a file that previewed cleanly was refused on confirm"
        )
        # one import event, and one per done question that a new string reopened
        reopened = JudgmentEvent.objects.filter(
            action="question_reopen", created_at__gte=start
        ).count()
        assert after[3] == before[3] + 1 + reopened
        c = plan.counts
        if kind == "questions":
            assert after[0] - before[0] == c["questions to create"]
            assert after[1:3] == before[1:3]
        elif kind == "flat":
            assert after[1] - before[1] == c["candidate strings to add"]
            assert (after[0], after[2]) == (before[0], before[2])
        else:
            assert after[0] == before[0]
            written = AnswerString.objects.filter(judged_at__gte=start)
            assert written.filter(synset__isnull=False).count() == c["correct strings"]
            assert written.filter(synset__isnull=True).count() == c["incorrect strings"]
            assert (
                AnswerSynset.objects.filter(question__in=written.values("question")).count()
                == c["synsets to create"]
            )
        # the same token is spent: a replay writes nothing
        again = self.client.post("/collections/demo/import/confirm/", {"token": token})
        assert again.status_code == 302 and counts() == after
