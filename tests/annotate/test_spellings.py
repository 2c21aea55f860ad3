"""annotate/spellings.py: the keys of every spelling of a string (``SpellingKey``), kept in
step by every writer through ``string_keys_sync``, and read by those that match answers."""

import importlib

import pytest

from annotate import judging
from annotate.edits import Conflict
from annotate.imports import collection_import
from annotate.layer_io import layers_import
from annotate.matching import collection_set_matching_mode
from annotate.models import AnswerString, Question, SpellingKey
from annotate.spellings import key_owners, spelling_keys_drift, string_keys_sync
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db

HEADER = "question_id,synset_id,answer,level\n"


def _keys(string: AnswerString) -> set[str]:
    return set(SpellingKey.objects.filter(string=string).values_list("key", flat=True))


def _nixon_exact():
    """An exact collection whose "Richard Nixon" holds "Richard Nixon." folded under
    normalized matching."""
    c = make_collection(slug="nx")
    q = make_question(collection=c, qid="Q1")
    data = HEADER + "Q1,gold,Richard Nixon,S\nQ1,gold,Richard Nixon.,S\n"
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    collection_set_matching_mode(collection=c, mode="exact", by=None)
    return c, q, AnswerString.objects.get(question=q)


def test_a_string_holds_the_key_of_every_spelling_and_one_key_once():
    c = make_collection(slug="one")
    q = make_question(collection=c, qid="Q1")
    s = AnswerString.objects.create(
        question=q, text="Paul", key="paul", variants=["paul", "PAUL!", "A"]
    )
    assert string_keys_sync(strings=[s], mode="normalized") == 2  # "paul" once, "a"
    assert _keys(s) == {"paul", "a"}
    assert string_keys_sync(strings=[s], mode="squad") == 1  # "A" has no key under squad
    assert _keys(s) == {"paul"}
    assert key_owners(question_ids=[q.pk]) == {(q.pk, "paul"): s.pk}


def test_a_switch_keeps_spellings_keyed_apart_with_their_string():
    c, _q, s = _nixon_exact()
    assert (s.text, s.key, s.variants) == ("Richard Nixon", "Richard Nixon", ["Richard Nixon."])
    assert _keys(s) == {"Richard Nixon", "Richard Nixon."}
    assert spelling_keys_drift(c) == []
    # and back: one key again, the spellings unchanged
    collection_set_matching_mode(collection=c, mode="normalized", by=None)
    s.refresh_from_db()
    assert s.variants == ["Richard Nixon."] and _keys(s) == {"richard nixon"}


def test_strings_sharing_a_key_by_a_variant_fold_on_a_switch():
    c = make_collection(slug="fold", matching_mode="exact")
    q = make_question(collection=c, qid="Q1", incorrect=["nixon."])
    s = AnswerString.objects.create(
        question=q,
        text="Nixon",
        key="Nixon",
        variants=["NIXON"],
        judged_at=q.strings.get().judged_at,
    )
    string_keys_sync(strings=[s], mode="exact")
    # under normalized, "nixon." shares the key of "NIXON", a spelling of "Nixon"
    assert collection_set_matching_mode(collection=c, mode="normalized", by=None) == 1
    (kept,) = AnswerString.objects.filter(question=q)
    assert (kept.text, kept.variants) == ("nixon.", ["Nixon", "NIXON"])
    assert spelling_keys_drift(c) == []


def test_every_writer_keeps_the_keys_in_step():
    c = make_collection(slug="writers")
    org = make_user()
    assessor = make_user()
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=assessor, role="assessor")
    q = make_question(collection=c, qid="Q1")
    q2 = make_question(collection=c, qid="Q2")
    steps = []

    def step(name):
        steps.append(name)
        assert spelling_keys_drift(c) == [], steps

    collection_import(
        collection=c,
        kind="flat",
        data=b"question_id,answer\nQ1,Lennon\nQ1,lennon.\nQ2,Paris\n",
        filename="f.csv",
    )
    step("flat import")
    data = HEADER + "Q1,1,Richard Nixon,S\nQ1,1,Richard Nixon.,S\nQ1,,Ford,\n"
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    step("judgments import")
    judging.strings_add_unjudged(
        rows=[(q.pk, "richard nixon", "RICHARD NIXON"), (q.pk, "carter", "Carter")],
        source="pool",
        reason="test",
    )
    step("pooling")
    added = judging.string_add(question=q, text="Gerald Ford.", by=org)
    step("string_add")
    ford = AnswerString.objects.get(question=q, text="Ford")
    judging.string_edit(question=q, string=ford.pk, text="Gerald R. Ford", by=org)
    step("string_edit")
    judging.question_undo(question=q, by=org)
    step("undo of an edit")
    judging.string_delete(question=q, string=added.after["strings"].popitem()[0], by=org)
    step("string_delete")
    judging.question_undo(question=q, by=org)
    step("undo of a delete")
    judging.question_mark_nil(question=q2, by=org)
    step("NIL")
    layers = (
        "question_id,synset_id,answer,level,assessor,done\n"
        f"Q2,1,Paris,S,{assessor.username},\n"
        f"Q2,,Lyon,,{assessor.username},\n"
    )
    done = layers_import(collection=c, data=layers.encode(), filename="l.csv", by=org)
    assert not done.issues
    step("layers CSV")
    for mode in ("exact", "squad", "normalized"):
        collection_set_matching_mode(collection=c, mode=mode, by=org)
        step(f"switch to {mode}")


def test_a_judgments_file_that_makes_a_spelling_its_own_string_takes_it_along():
    c, q, s = _nixon_exact()
    data = HEADER + "Q1,1,Richard Nixon,S\nQ1,2,Richard Nixon.,A\n"
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    strings = {x.text: x for x in AnswerString.objects.filter(question=q)}
    assert set(strings) == {"Richard Nixon", "Richard Nixon."}
    assert strings["Richard Nixon"].pk == s.pk and strings["Richard Nixon"].variants == []
    assert strings["Richard Nixon."].level.code == "A"
    assert spelling_keys_drift(c) == []


def test_a_judgments_file_naming_only_the_variant_takes_over_its_string():
    c, q, s = _nixon_exact()
    data = HEADER + "Q1,1,Richard Nixon.,B\n"
    collection_import(collection=c, kind="judgments", data=data.encode(), filename="j.csv")
    (kept,) = AnswerString.objects.filter(question=q)
    assert (kept.pk, kept.text, kept.key, kept.level.code) == (
        s.pk,
        "Richard Nixon.",
        "Richard Nixon.",
        "B",
    )
    assert kept.variants == ["Richard Nixon"]
    assert spelling_keys_drift(c) == []


def test_typing_or_editing_to_a_spelling_of_another_string_is_refused():
    _c, q, _s = _nixon_exact()
    with pytest.raises(Conflict, match="already has the same matching key"):
        judging.string_add(question=q, text="Richard Nixon.", by=None)
    other = judging.string_add(question=q, text="Nixon", by=None)
    pk = int(next(iter(other.after["strings"])))
    with pytest.raises(Conflict, match="already has the same matching key"):
        judging.string_edit(question=q, string=pk, text="Richard Nixon.", by=None)


def test_undo_keeps_a_spelling_keyed_apart():
    c, q, s = _nixon_exact()
    judging.string_set_level(question=q, string=s.pk, level="A", by=None)
    judging.question_undo(question=q, by=None)
    s.refresh_from_db()
    assert s.variants == ["Richard Nixon."] and s.level.code == "S"
    assert spelling_keys_drift(c) == []


def test_the_migration_keys_every_spelling_and_folds_a_spelling_pooled_again():
    """Before the table, a switch to exact left "Richard Nixon." as a variant that matched
    nothing, and pooling added it again as a string of its own: unjudged, it folds back
    into the judged string; judged by someone, it keeps the spelling."""
    from django.apps import apps

    c, q, s = _nixon_exact()
    pooled = AnswerString.objects.create(
        question=q, text="Richard Nixon.", key="Richard Nixon.", source="pool"
    )
    q2 = make_question(collection=c, qid="Q2", incorrect=["Paris."])
    judged = AnswerString.objects.create(
        question=q2, text="Paris", key="Paris", variants=["Paris."], judged_at=s.judged_at
    )
    SpellingKey.objects.all().delete()
    migration = importlib.import_module("annotate.migrations.0007_spelling_keys")
    migration.fill_spelling_keys(apps, None)
    assert not AnswerString.objects.filter(pk=pooled.pk).exists()
    s.refresh_from_db()
    assert s.variants == ["Richard Nixon."] and _keys(s) == {"Richard Nixon", "Richard Nixon."}
    judged.refresh_from_db()
    assert judged.variants == [] and _keys(judged) == {"Paris"}
    assert AnswerString.objects.get(question=q2, text="Paris.").variants == []
    assert spelling_keys_drift(c) == []
    assert Question.objects.filter(collection=c).count() == 2


def test_a_layers_file_names_a_string_by_any_spelling():
    c, _q, s = _nixon_exact()
    org, assessor = make_user(), make_user()
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=assessor, role="assessor")
    head = "question_id,synset_id,answer,level,assessor,done\n"
    apart = head + (
        f"Q1,1,Richard Nixon,S,{assessor.username},\nQ1,,Richard Nixon.,,{assessor.username},\n"
    )
    done = layers_import(collection=c, data=apart.encode(), filename="l.csv", by=org)
    assert [i.message for i in done.issues] == [
        "'Richard Nixon.' and 'Richard Nixon' (line 2) are spellings of one string, judged by "
        f"{assessor.username} in different ways"
    ]
    alike = head + (
        f"Q1,1,Richard Nixon,S,{assessor.username},\nQ1,1,Richard Nixon.,S,{assessor.username},\n"
    )
    done = layers_import(collection=c, data=alike.encode(), filename="l.csv", by=org)
    assert not done.issues and done.strings_added == 0 and done.judgments == 1
    assert list(s.layer_judgments.values_list("group", flat=True)) == [1]
