"""The Matching mode page (evaluation/matching_views.py): it changes a collection's mode
through ``collection_matching_mode_change``, which re-keys strings and run answers in one
transaction, or names the conflicts; the edit page leaves the mode alone."""

import pytest

from annotate.models import AnswerString, Collection
from evaluation.models import RunAnswer
from tests.factories import add_member, make_collection, make_question, make_run, make_user

pytestmark = pytest.mark.django_db


def test_the_matching_mode_page_changes_the_mode_through_the_rekey_or_names_the_conflicts(
    client,
):
    c = make_collection(slug="mm")
    org = make_user(username="mm-org")
    add_member(collection=c, user=org, role="organizer")
    q = make_question(
        collection=c,
        qid="border",
        synsets=[[("The Radcliffe Line", "S")]],
        incorrect=["Radcliffe Line"],
    )
    make_run(collection=c, owner=org, name="r", answers={"border": ["the Radcliffe line"]})
    client.force_login(org)
    assert "<h1>Matching mode</h1>" in client.get("/collections/mm/matching-mode/").content.decode()
    form = {"matching_mode": "squad"}
    r = client.post("/collections/mm/matching-mode/", form)
    assert r.status_code == 200  # refused: the two spellings are judged differently
    page = r.content.decode()
    assert "judge them alike first" in page and "Radcliffe Line" in page
    assert Collection.objects.get(pk=c.pk).matching_mode == "normalized"
    # judged alike, the change goes through and re-keys strings and run answers
    AnswerString.objects.filter(question=q, text="Radcliffe Line").delete()
    r = client.post("/collections/mm/matching-mode/", form)
    assert r.status_code == 302, r.content.decode()[:2000]
    assert Collection.objects.get(pk=c.pk).matching_mode == "squad"
    assert AnswerString.objects.get(question=q).key == "radcliffe line"
    assert RunAnswer.objects.get(question=q).key == "radcliffe line"


def test_the_edit_page_leaves_the_matching_mode_to_its_page(client):
    c = make_collection(slug="ed")
    org = make_user(username="ed-org")
    add_member(collection=c, user=org, role="organizer")
    client.force_login(org)
    page = client.get("/collections/ed/edit/").content.decode()
    assert "/collections/ed/matching-mode/" in page
    form = {
        "name": c.name,
        "slug": "ed",
        "matching_mode": "squad",
        "max_output_size": 5,
        "levels-TOTAL_FORMS": "3",
        "levels-INITIAL_FORMS": "0",
        **{
            f"levels-{i}-{f}": v
            for i, (code, gain) in enumerate([("S", 3), ("A", 2), ("B", 1)])
            for f, v in (("code", code), ("label", code), ("gain", gain))
        },
    }
    assert client.post("/collections/ed/edit/", form).status_code == 302
    assert Collection.objects.get(pk=c.pk).matching_mode == "normalized"
