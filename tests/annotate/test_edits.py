"""The unit of work every write shares (annotate/edits.py): ``Edit`` locks a question,
refuses stale or vanished strings, renumbers synsets and writes one event;
``questions_reopen`` is the one rule that a question with an unjudged string is not done."""

import pytest
from django.db import transaction

from annotate.edits import (
    Conflict,
    Edit,
    collection_judgments_changed,
    questions_reopen,
    string_snap,
)
from annotate.models import (
    AnswerString,
    Collection,
    JudgmentEvent,
    Question,
    QuestionStatus,
    string_token,
)
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def test_collection_judgments_changed_bumps_the_version_and_its_time():
    c = make_collection()
    version = c.judgment_version
    collection_judgments_changed(collection_id=c.pk)
    c = Collection.objects.get(pk=c.pk)
    assert c.judgment_version == version + 1 and c.judgments_changed_at is not None


def test_questions_reopen_reopens_only_done_questions_with_an_unjudged_string():
    c, user = make_collection(), make_user()
    waiting = make_question(collection=c, qid="Q1", synsets=[[("a", "S")]], unjudged=["b"])
    judged = make_question(collection=c, qid="Q2", synsets=[[("a", "S")]])
    open_ = make_question(collection=c, qid="Q3", unjudged=["b"])
    Question.objects.filter(pk__in=[waiting.pk, judged.pk]).update(status=QuestionStatus.DONE)
    reopened = questions_reopen(
        question_ids=[waiting.pk, judged.pk, open_.pk], by=user, reason="pool", source="pool"
    )
    assert reopened == [waiting.pk]
    status = dict(Question.objects.values_list("qid", "status"))
    assert status == {
        "Q1": QuestionStatus.IN_PROGRESS,
        "Q2": QuestionStatus.DONE,
        "Q3": open_.status,
    }
    (event,) = JudgmentEvent.objects.filter(action="question_reopen")
    assert event.question_id == waiting.pk and event.user == user
    assert event.after == {"status": "in_progress", "reason": "pool", "source": "pool"}


def test_questions_reopen_without_record_writes_no_event():
    c = make_collection()
    q = make_question(collection=c, qid="Q1", unjudged=["b"])
    Question.objects.filter(pk=q.pk).update(status=QuestionStatus.DONE)
    assert questions_reopen(question_ids=[q.pk], reason="undo", record=False) == [q.pk]
    assert not JudgmentEvent.objects.exists()


def test_string_snap_holds_what_undo_restores():
    c = make_collection()
    q = make_question(collection=c, qid="Q1", synsets=[[("Paris", "S")]])
    s = AnswerString.objects.get(question=q)
    snap = string_snap(s)
    assert snap == {
        "text": "Paris",
        "key": s.key,
        "synset": s.synset_id,
        "level": s.level_id,
        "source": s.source,
        "judged_by": s.judged_by_id,
        "judged_at": s.judged_at.isoformat() if s.judged_at else None,
        "variants": list(s.variants),
    }


def test_an_edit_refuses_a_string_changed_since_the_page_or_gone():
    c = make_collection()
    q = make_question(collection=c, qid="Q1", unjudged=["Paris"])
    s = AnswerString.objects.get(question=q)
    with transaction.atomic():
        op = Edit(question=q, by=None, version=None, action="string_judge")
        assert op.string(s.pk, expect=string_token(s)) == s
        with pytest.raises(Conflict, match="changed by someone else"):
            op.string(s.pk, expect="not-its-token")
        with pytest.raises(Conflict, match="no longer exists"):
            op.string(s.pk + 1000)


def test_an_edit_finishes_with_one_event_a_new_version_and_ordinals_1_to_r():
    c, user = make_collection(), make_user()
    q = make_question(collection=c, qid="Q1", synsets=[[("a", "S")], [("b", "S")], [("c", "A")]])
    version, judgment_version = q.version, c.judgment_version
    with transaction.atomic():
        stale = Edit(question=q, by=user, version=version - 1, action="x").stale
        op = Edit(question=q, by=user, version=version, action="string_unjudge")
        s = op.string(AnswerString.objects.get(question=q, text="b").pk)
        s.synset, s.level, s.judged_at = None, None, None
        s.save()
        event = op.finish()
    assert stale and not op.stale
    q.refresh_from_db()
    assert q.version == version + 1 and q.status == QuestionStatus.IN_PROGRESS
    assert sorted(q.synsets.values_list("ordinal", flat=True)) == [1, 2]  # the empty one went
    assert Collection.objects.get(pk=c.pk).judgment_version == judgment_version + 1
    assert event.action == "string_unjudge" and event.user == user
    assert event.before["version"] == version and event.after["version"] == version + 1
    assert event.after["strings"][str(s.pk)]["synset"] is None
