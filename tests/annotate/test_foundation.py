"""Models' constraints, the role helper, the overview page, load_demo."""

import pytest
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.utils import timezone

from annotate.models import AnswerString, AnswerSynset, Collection, Level, Question
from annotate.permissions import collection_role, require_role
from evaluation.models import Run, RunAnswer
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def raises_integrity(fn):
    with pytest.raises(IntegrityError), transaction.atomic():
        fn()


def test_constraints_reject_duplicates():
    c = make_collection()
    q = make_question(collection=c, qid="Q1", synsets=[[("Paul", "S")]])
    raises_integrity(lambda: Question.objects.create(collection=c, qid="Q1", text="again"))
    raises_integrity(lambda: AnswerString.objects.create(question=q, text="PAUL", key="paul"))
    raises_integrity(lambda: AnswerSynset.objects.create(question=q, ordinal=1))
    raises_integrity(lambda: Level.objects.create(collection=c, code="S", gain=1, order=9))
    run = make_run(collection=c, owner=make_user(), name="r", answers={"Q1": ["Paul"]})
    raises_integrity(
        lambda: RunAnswer.objects.create(run=run, question=q, rank=1, text="x", key="x")
    )
    raises_integrity(lambda: Run.objects.create(collection=c, owner=run.owner, name="r"))
    # same qid in another collection is fine
    Question.objects.create(collection=make_collection(), qid="Q1", text="fine")


def test_string_level_and_synset_go_together():
    c = make_collection()
    q = make_question(collection=c, synsets=[[("Paul", "S")]])
    s_level = c.levels.get(code="S")
    raises_integrity(
        lambda: AnswerString.objects.create(
            question=q, text="x", key="x", level=s_level, judged_at=timezone.now()
        )
    )
    raises_integrity(
        lambda: AnswerString.objects.create(question=q, text="y", key="y", synset=q.synsets.first())
    )  # no level


def test_role_helper_allows_and_refuses():
    c, other = make_collection(), make_collection()
    org, ass, par, stranger = (make_user() for _ in range(4))
    staff = make_user(staff=True)
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=ass, role="assessor")
    add_member(collection=c, user=par, role="participant")
    assert collection_role(org, c) == "organizer"
    assert collection_role(ass, c) == "assessor"
    assert collection_role(par, c) == "participant"
    assert collection_role(stranger, c) is None
    assert collection_role(ass, other) is None
    assert collection_role(staff, other) == "organizer"
    assert require_role(ass, c, "assessor", "organizer") == "assessor"
    for user, roles in [(par, ("organizer", "assessor")), (stranger, ()), (ass, ("participant",))]:
        with pytest.raises(PermissionDenied):
            require_role(user, c, *roles)


def test_overview_counts_and_403_for_non_members(client):
    c = make_collection(slug="c1")
    make_question(
        collection=c,
        synsets=[[("a", "S"), ("b", "A")], [("c", "B")]],
        incorrect=["d"],
        unjudged=["e", "f"],
    )
    make_question(collection=c)
    member, stranger = make_user(), make_user()
    add_member(collection=c, user=member, role="assessor")
    client.force_login(stranger)
    assert client.get("/collections/c1/").status_code == 403
    assert client.get("/collections/c1/runs/").status_code == 403
    client.force_login(member)
    r = client.get("/collections/c1/")
    assert r.status_code == 200
    stats = r.context["stats"]
    assert (
        stats["questions"],
        stats["synsets"],
        stats["judged"],
        stats["unjudged"],
        stats["runs"],
    ) == (2, 2, 4, 2, 0)
    assert client.get("/collections/c1/runs/").status_code == 403  # assessors see no runs
    r = client.get("/collections/")
    assert [row["collection"].slug for row in r.context["rows"]] == ["c1"]


def dump():
    """Every demo row as plain values, without ids and timestamps."""
    c = Collection.objects.get(slug="demo")
    return {
        "collection": (c.name, c.matching_mode, c.max_output_size, c.open_for_submissions),
        "levels": list(c.levels.values_list("code", "label", "gain", "order")),
        "members": sorted(c.memberships.values_list("user__username", "role")),
        "questions": list(c.questions.values_list("qid", "text", "status")),
        "assessors": sorted(c.questions.values_list("qid", "assessors__username")),
        "synsets": list(
            AnswerSynset.objects.filter(question__collection=c).values_list(
                "question__qid", "ordinal"
            )
        ),
        "strings": sorted(
            AnswerString.objects.filter(question__collection=c).values_list(
                "question__qid", "text", "key", "synset__ordinal", "level__code", "source"
            )
        ),
        "runs": sorted(c.runs.values_list("name", "owner__username", "sha256")),
        "answers": sorted(
            RunAnswer.objects.filter(run__collection=c).values_list(
                "run__name", "question__qid", "rank", "text", "key"
            )
        ),
    }


def test_load_demo_twice_gives_the_same_data():
    from django.contrib.auth import get_user_model

    from evaluation.management.commands.load_demo import load_demo

    load_demo()
    first = dump()
    users = get_user_model().objects.count()
    load_demo()
    assert dump() == first
    assert get_user_model().objects.count() == users
    assert len(first["questions"]) >= 12 and len(first["runs"]) == 2
    beatles = [s for s in first["strings"] if s[0] == "EX1-BEATLES" and s[3] == 1]
    assert {s[1] for s in beatles} == {"Sir Paul McCartney", "Paul McCartney", "McCartney", "Paul"}
