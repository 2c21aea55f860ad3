"""Random unicode text with CR, LF, quotes, separators and formula prefixes, through the
product's CSV files and back: the judgments export re-imports the same judgments, and
``collection_export`` -> ``collection_import`` gives back every string as it was.

The CSV imports strip the whitespace around each cell (hand-made files), and the product
stores answer strings, question ids and texts stripped, so those are drawn stripped; the
archive keeps everything else (run answers, notes) as it is, so those are drawn raw."""

from __future__ import annotations

import itertools

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from annotate.exports import export_judgments, export_questions
from annotate.imports import collection_import
from annotate.models import AnswerString, AnswerSynset, Level
from annotate.normalize import normalize_answer
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import as archive_import
from evaluation.models import RunAnswer
from evaluation.services import run_name_problem
from tests.factories import make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db

SPECIAL = ["\r", "\n", "\r\n", '"', "'", ",", ";", "#", "=", "+", "-", "@", "\t", "%", " "]
PREFIX = ["", "=", "+", "-", "@", "'", "''", "'=", "''+", "\r", "\t", "\n"]
# every character but those files and forms refuse (control characters, the line and
# paragraph separators, U+FEFF: evaluation.metrics.text_rules.CONTROL_CHARACTERS); tab,
# newline and carriage return come from SPECIAL
char = st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="\ufeff")
raw = st.tuples(
    st.sampled_from(PREFIX),
    st.lists(st.one_of(st.sampled_from(SPECIAL), st.text(char, max_size=3)), max_size=5).map(
        "".join
    ),
).map("".join)
stripped = raw.map(str.strip).filter(bool)
# run names may not hold control characters nor line breaks
run_names = stripped.filter(lambda s: len(s) <= 100 and run_name_problem(s) is None)
# one answer string each: non-empty keys, distinct within a question
answer = stripped.filter(lambda a: normalize_answer(a, "normalized"))
_seq = itertools.count()


class Rollback(Exception):
    pass


def judged_strings(c):
    return sorted(
        AnswerString.objects.filter(question__collection=c, judged_at__isnull=False).values_list(
            "question__qid", "question__text", "synset__label", "text", "level__code"
        ),
        key=repr,
    )


def everything(c):
    return {
        "strings": sorted(
            AnswerString.objects.filter(question__collection=c).values_list(
                "question__qid",
                "question__text",
                "question__notes",
                "synset__ordinal",
                "synset__note",
                "text",
                "key",
                "level__code",
            ),
            key=repr,
        ),
        "runs": sorted(
            RunAnswer.objects.filter(run__collection=c).values_list(
                "run__name", "question__qid", "rank", "text", "key"
            ),
            key=repr,
        ),
        "levels": sorted(c.levels.values_list("code", "label")),
    }


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    qid=stripped.filter(lambda s: len(s) <= 100),
    qtext=stripped,
    notes=raw,
    codes=st.lists(stripped.filter(lambda s: len(s) <= 8), min_size=2, max_size=2, unique=True),
    label=stripped.filter(lambda s: len(s) <= 100),
    note=raw,
    answers=st.lists(
        answer, min_size=3, max_size=3, unique_by=lambda a: normalize_answer(a, "normalized")
    ),
    run_name=run_names,
    run_answers=st.lists(raw, max_size=3),
)
def test_export_then_import_is_the_identity(
    db, qid, qtext, notes, codes, label, note, answers, run_name, run_answers
):
    n = next(_seq)
    try:
        with transaction.atomic():
            organizer = make_user(username=f"org{n}")
            c = make_collection(slug=f"src{n}", levels=((codes[0], 3.0), (codes[1], 2.0)))
            q = make_question(
                collection=c,
                qid=qid,
                text=qtext,
                synsets=[[(answers[0], codes[0]), (answers[1], codes[1])]],
                incorrect=[answers[2]],
            )
            q.notes = notes
            q.save()
            AnswerSynset.objects.filter(question=q).update(label=label, note=note)
            AnswerString.objects.filter(question=q).update(
                judged_at=timezone.now(), judged_by=organizer
            )
            make_run(
                collection=c,
                owner=organizer,
                name=run_name,
                answers={qid: run_answers} if run_answers else {},
            )
            RunAnswer.objects.filter(run__collection=c).update(key="k")

            fresh = make_collection(slug=f"dst{n}", levels=((codes[0], 3.0), (codes[1], 2.0)))
            collection_import(
                collection=fresh,
                kind="questions",
                filename="q.csv",
                data=export_questions(c).encode(),
            )
            collection_import(
                collection=fresh,
                kind="judgments",
                filename="j.csv",
                data=export_judgments(c).encode(),
                by=organizer,
            )
            assert judged_strings(fresh) == judged_strings(c)

            copy = archive_import(data=collection_export(collection=c), slug=f"copy{n}")
            assert everything(copy) == everything(c)
            assert Level.objects.filter(collection=copy).count() == 2
            raise Rollback
    except Rollback:
        pass
