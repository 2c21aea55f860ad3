"""The writes of gold (annotate/judging.py): each judging operation writes one event, keeps
ordinals 1..R, a string in at most one synset, and can be undone; strings come unjudged
folded by key; the first change claims an unassigned question."""

import pytest

from annotate import judging
from annotate.edits import Conflict
from annotate.models import AnswerString, AnswerSynset, JudgmentEvent, Question, string_token
from tests.factories import make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup():
    c = make_collection()
    q = make_question(
        collection=c,
        qid="Q1",
        synsets=[[("Paris", "S")], [("Lyon", "A")]],
        incorrect=["Rome"],
        unjudged=["paris france", "Nice", "Marseille"],
    )
    return c, q, make_user()


def s_(q, text):
    return AnswerString.objects.get(question=q, text=text)


def state(q):
    """{ordinal: {text: level}} plus sets of incorrect and unjudged texts."""
    out = {}
    for syn in AnswerSynset.objects.filter(question=q).order_by("ordinal"):
        out[syn.ordinal] = {s.text: s.level.code for s in syn.strings.all()}
    strings = AnswerString.objects.filter(question=q)
    return (
        out,
        {s.text for s in strings if s.state == "incorrect"},
        {s.text for s in strings if s.state == "unjudged"},
    )


def check_invariants(q):
    ordinals = sorted(AnswerSynset.objects.filter(question=q).values_list("ordinal", flat=True))
    assert ordinals == list(range(1, len(ordinals) + 1))
    assert all(syn.strings.exists() for syn in AnswerSynset.objects.filter(question=q))


def test_add_new_incorrect_level_and_undo_each(setup):
    c, q, user = setup
    syn1 = q.synsets.get(ordinal=1)
    start = state(q)
    version = c.judgment_version
    judging.string_judge(
        question=q,
        string=s_(q, "paris france").pk,
        synset=syn1.pk,
        level="A",
        by=user,
        expect="u",
        version=q.version,
    )
    judging.string_judge(
        question=q, string=s_(q, "Nice").pk, new_synset=True, level="B", by=user, expect="u"
    )
    judging.string_judge(question=q, string=s_(q, "Marseille").pk, by=user)
    judging.string_set_level(question=q, string=s_(q, "Nice").pk, level="S", by=user)
    syns, incorrect, unjudged = state(q)
    assert syns == {1: {"Paris": "S", "paris france": "A"}, 2: {"Lyon": "A"}, 3: {"Nice": "S"}}
    assert incorrect == {"Rome", "Marseille"} and unjudged == set()
    q.refresh_from_db()
    c.refresh_from_db()
    assert q.version == 4 and q.status == "in_progress" and c.judgment_version == version + 4
    assert JudgmentEvent.objects.filter(question=q).count() == 4
    for _ in range(4):
        judging.question_undo(question=q, by=user)
        check_invariants(q)
    assert state(q) == start
    q.refresh_from_db()
    assert q.status == "todo"
    with pytest.raises(Conflict, match="Nothing to undo"):
        judging.question_undo(question=q, by=user)


def test_merge_split_move_keep_invariants_and_undo(setup):
    _, q, user = setup
    s1, s2 = q.synsets.order_by("ordinal")
    judging.string_judge(question=q, string=s_(q, "Nice").pk, new_synset=True, level="B", by=user)
    before_merge = state(q)
    judging.synset_merge(question=q, synsets=[s2.pk, s1.pk], by=user)
    check_invariants(q)
    syns, _, _ = state(q)
    assert syns == {1: {"Paris": "S", "Lyon": "A"}, 2: {"Nice": "B"}}  # R 3 -> 2
    judging.question_undo(question=q, by=user)
    assert state(q) == before_merge
    check_invariants(q)
    # split Paris out of nothing else: a new synset; moving Nice into synset 1 empties 3
    judging.synset_split(
        question=q, strings=[s_(q, "Paris").pk], by=user, expect=[string_token(s_(q, "Paris"))]
    )
    check_invariants(q)
    assert state(q)[0] == {1: {"Lyon": "A"}, 2: {"Nice": "B"}, 3: {"Paris": "S"}}
    syn_lyon = AnswerSynset.objects.get(question=q, ordinal=1)
    judging.string_judge(question=q, string=s_(q, "Nice").pk, synset=syn_lyon.pk, by=user)
    assert state(q)[0] == {1: {"Lyon": "A", "Nice": "B"}, 2: {"Paris": "S"}}
    assert JudgmentEvent.objects.filter(question=q).first().action == "string_move"
    check_invariants(q)
    judging.question_undo(question=q, by=user)
    judging.question_undo(question=q, by=user)
    assert state(q) == before_merge


def test_nil_typed_edit_delete_notes_done(setup):
    _, q, user = setup
    judging.string_add(question=q, text="Toulouse", by=user)
    assert s_(q, "Toulouse").state == "unjudged"
    with pytest.raises(Conflict, match="same matching key"):
        judging.string_add(question=q, text=" toulouse ", by=user)
    judging.string_edit(question=q, string=s_(q, "Toulouse").pk, text="Toulon", by=user)
    assert s_(q, "Toulon").key == "toulon"
    judging.string_delete(question=q, string=s_(q, "Toulon").pk, by=user)
    assert not AnswerString.objects.filter(question=q, text="Toulon").exists()
    judging.question_undo(question=q, by=user)
    assert s_(q, "Toulon").state == "unjudged"
    with pytest.raises(Conflict, match="Judge every candidate"):
        judging.question_set_status(question=q, status="done", by=user)
    judging.question_mark_nil(question=q, by=user)
    syns, incorrect, unjudged = state(q)
    assert syns == {1: {"NIL": "S"}} and not unjudged
    assert incorrect == {"Rome", "Paris", "Lyon", "paris france", "Nice", "Marseille", "Toulon"}
    judging.question_set_notes(question=q, notes="no answer exists", by=user)
    judging.question_set_status(question=q, status="done", by=user)
    q.refresh_from_db()
    assert (q.status, q.notes) == ("done", "no answer exists")
    judging.question_undo(question=q, by=user)
    judging.question_undo(question=q, by=user)
    judging.question_undo(question=q, by=user)  # NIL undone
    assert state(q)[0] == {1: {"Paris": "S"}, 2: {"Lyon": "A"}}


def test_stale_edits_applied_only_when_still_meaningful(setup):
    _, q, user = setup
    other = make_user()
    nice = s_(q, "Nice")
    seen_version = q.version
    judging.string_judge(question=q, string=nice.pk, by=other, expect="u")  # someone else
    with pytest.raises(Conflict, match="changed by someone else"):
        judging.string_judge(
            question=q, string=nice.pk, new_synset=True, by=user, expect="u", version=seen_version
        )
    # an edit of an untouched string still applies on a stale page
    ev = judging.string_judge(
        question=q, string=s_(q, "Marseille").pk, by=user, expect="u", version=seen_version
    )
    assert ev.before["version"] != seen_version
    with pytest.raises(Conflict, match="no longer exists"):
        judging.string_judge(question=q, string=10**9, by=user)
    syn2 = q.synsets.get(ordinal=2).pk
    judging.synset_merge(question=q, synsets=[q.synsets.get(ordinal=1).pk, syn2], by=other)
    with pytest.raises(Conflict, match="synset no longer exists"):
        judging.string_judge(question=q, string=s_(q, "Marseille").pk, synset=syn2, by=user)
    with pytest.raises(Conflict, match="made by"):
        judging.question_undo(question=q, by=user)
    judging.question_undo(question=q, by=user, any_user=True)  # an organizer may
    assert Question.objects.get(pk=q.pk).synsets.count() == 2


def test_claim_refused_when_another_assessor_took_the_question():
    c = make_collection()
    q = make_question(collection=c)
    a1, a2 = make_user(), make_user()
    assert judging.question_claim(question=q, by=a1) is True
    assert judging.question_claim(question=q, by=a1) is False
    with pytest.raises(Conflict, match="Another assessor took"):
        judging.question_claim(question=q, by=a2)


def test_spellings_fold_by_key_first_seen_first_and_skip_known_ones():
    rows = [(1, "paris", "Paris"), (1, "paris", " paris "), (1, "paris", "Paris"), (2, "", "x")]
    rows += [(1, "lyon", "Lyon"), (2, "paris", "PARIS")]
    assert judging.spellings_fold(rows) == {
        (1, "paris"): ["Paris", "paris"],
        (1, "lyon"): ["Lyon"],
        (2, "paris"): ["PARIS"],
    }
    assert judging.spellings_fold(rows, known={(1, "paris"): ["Paris", "paris"]}) == {
        (1, "lyon"): ["Lyon"],
        (2, "paris"): ["PARIS"],
    }


def test_strings_add_unjudged_folds_spellings_and_reopens_a_done_question(setup):
    _, q, user = setup
    Question.objects.filter(pk=q.pk).update(status="done")
    done = judging.strings_add_unjudged(
        rows=[
            (q.pk, "toulouse", "Toulouse"),
            (q.pk, "toulouse", "TOULOUSE"),
            (q.pk, "nice", "NICE"),
        ],
        source="pool",
        by=user,
        reason="test",
    )
    assert (done.added, done.spellings, done.questions) == (1, 2, [q.pk])
    toulouse = s_(q, "Toulouse")
    assert toulouse.variants == ["TOULOUSE"] and toulouse.judged_at is None
    assert s_(q, "Nice").variants == ["NICE"]
    assert Question.objects.get(pk=q.pk).status == "in_progress"


def test_string_unjudge_sends_a_judged_string_back_to_the_candidates(setup):
    _, q, user = setup
    lyon = s_(q, "Lyon")
    judging.string_unjudge(question=q, string=lyon.pk, by=user)
    lyon.refresh_from_db()
    assert lyon.state == "unjudged" and lyon.synset is None and lyon.level is None
    check_invariants(q)
    assert [o for o in state(q)[0]] == [1]  # its synset, left empty, went
    judging.question_undo(question=q, by=user)
    assert s_(q, "Lyon").level.code == "A"
