"""The set-based bulk writes of ``config.bulk`` (issue 24 item 5), on SQLite and on
PostgreSQL (COPY): the values written come back as the ORM writes them, ids come in row
order, and a failure inside rolls back with the caller's transaction."""

import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import AnswerString, AnswerSynset, Question, Source, SpellingKey
from config.bulk import delete_rows, ids_in, insert_rows, temp_rows, update_rows
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

# text COPY's text format escapes, JSON quotes, and characters beyond ASCII
AWKWARD = ["tab\there", "line\nbreak", "back\\slash", 'quote "x"', "\\N", "Straße ＣＨＩＢＡ", "é"]


def test_insert_rows_gives_ids_in_row_order_and_fills_defaults():
    c = make_collection()
    q = make_question(collection=c, qid="Q1")
    before = timezone.now()
    ids = insert_rows(
        AnswerString,
        ["question_id", "text", "key"],
        [(q.pk, text, f"k{i}") for i, text in enumerate(AWKWARD)],
        ids=True,
    )
    assert ids == sorted(ids) and len(set(ids)) == len(AWKWARD)
    strings = {s.pk: s for s in AnswerString.objects.filter(pk__in=ids)}
    for pk, text, i in zip(ids, AWKWARD, range(len(AWKWARD)), strict=True):
        s = strings[pk]
        assert (s.text, s.key, s.variants, s.source) == (text, f"k{i}", [], Source.ASSESSOR)
        assert s.created_at >= before and s.judged_at is None and s.synset_id is None
    # without ids, nothing is returned and the rows are there
    assert insert_rows(AnswerString, ["question_id", "text", "key"], [(q.pk, "z", "z")]) == []
    assert AnswerString.objects.filter(question=q, key="z").exists()


def test_insert_and_update_rows_write_json_datetimes_and_nulls_as_the_orm_does():
    c = make_collection()
    q = make_question(collection=c, qid="Q1")
    syn = AnswerSynset.objects.create(question=q, ordinal=1)
    level = c.levels.get(code="A")
    user = make_user()
    now = timezone.now()
    fields = ["question_id", "text", "key", "variants", "synset_id", "level_id"]
    fields += ["judged_by_id", "judged_at", "source"]
    (pk,) = insert_rows(
        AnswerString,
        fields,
        [(q.pk, "x", "x", AWKWARD, syn.pk, level.pk, user.pk, now, Source.IMPORT)],
        ids=True,
    )
    s = AnswerString.objects.get(pk=pk)
    assert (s.variants, s.synset_id, s.level_id, s.judged_by_id, s.judged_at, s.source) == (
        AWKWARD,
        syn.pk,
        level.pk,
        user.pk,
        now,
        Source.IMPORT,
    )
    other = AnswerString.objects.create(question=q, text="y", key="y", variants=["y."])
    assert (
        update_rows(
            AnswerString,
            ["variants", "synset_id", "level_id", "judged_at", "text"],
            [(pk, [], None, None, None, "x2")],
        )
        == 1
    )
    s.refresh_from_db()
    other.refresh_from_db()
    assert (s.variants, s.synset_id, s.level_id, s.judged_at) == ([], None, None, None)
    assert s.text == "x2"
    assert other.variants == ["y."]  # not named: unchanged
    assert update_rows(AnswerString, ["text"], []) == 0


def test_delete_rows_and_ids_in_take_many_values():
    c = make_collection()
    qs = Question.objects.bulk_create(
        Question(collection=c, qid=f"Q{i}", text="?") for i in range(1200)
    )
    ids = [q.pk for q in qs]
    assert Question.objects.filter(pk__in=ids_in(ids[::2])).count() == 600
    assert delete_rows(Question, "pk", ids[::2]) == 600  # past SQLite's batch of 500
    assert sorted(Question.objects.filter(collection=c).values_list("pk", flat=True)) == ids[1::2]
    assert delete_rows(Question, "pk", []) == 0


def test_temp_rows_join_and_rollback_with_the_caller():
    from django.db import connection

    c = make_collection()
    q = make_question(collection=c, qid="Q1", unjudged=["a", "b"])
    rows = [(text, f"new {text}") for text in ("a", "b", "missing")]
    with transaction.atomic():
        with temp_rows([("text", "text"), ("key", "text")], rows, index=["text"]) as t:
            with connection.cursor() as cur:
                cur.execute(
                    f'UPDATE annotate_answerstring SET "key" = {t}."key" FROM {t} '
                    f'WHERE annotate_answerstring."text" = {t}."text" '
                    f"AND annotate_answerstring.question_id = %s",
                    [q.pk],
                )
                assert cur.rowcount == 2
    assert sorted(q.strings.values_list("key", flat=True)) == ["new a", "new b"]
    # a failure inside: the table and the statements made with it roll back, and the
    # caller's transaction goes on
    with transaction.atomic():
        with pytest.raises(IntegrityError), temp_rows([("v", "text")], [("x",)]):
            SpellingKey.objects.filter(question=q).update(key="same")  # two strings, one key
        assert q.strings.count() == 2
    assert SpellingKey.objects.filter(question=q, key="same").count() == 0
