"""A stale page never acts on the wrong thing: a synset named by its number on the page
(a digit key, a typed number) goes with the synset that number meant there, and the service
resolves it under the question's lock; when the number has changed meaning since the page
was rendered the edit is refused with a notice and nothing is written."""

import re

import pytest

from annotate import judging
from annotate.edits import Conflict, PageSynset
from annotate.models import AnswerString, AnswerSynset, JudgmentEvent, Question
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def world():
    c = make_collection(slug="st")
    q = make_question(
        collection=c,
        qid="Q1",
        text="Cities?",
        synsets=[[("Paris", "S")], [("Lyon", "A")], [("Nice", "B")]],
        unjudged=["Marseille", "Toulouse"],
    )
    ass, org = make_user(username="ass"), make_user(username="org")
    add_member(collection=c, user=ass, role="assessor")
    add_member(collection=c, user=org, role="organizer")
    q.assessors.add(ass)
    return q, ass, org


def s_(q, text):
    return AnswerString.objects.get(question=q, text=text)


def page(client, q) -> dict:
    """The version and the synset list the workspace page sends back with each write."""
    html = client.get(f"/questions/{q.pk}/judge/", headers=HX).content.decode()
    version = re.search(r'id="workspace"[^>]*data-version="(\d+)"', html).group(1)
    shown = re.search(r'name="page_synsets" value="([\d ]*)"', html).group(1)
    return {"version": version, "page_synsets": shown, "html": html}


def post(client, q, **data):
    return client.post(f"/questions/{q.pk}/act/", data, headers=HX).content.decode()


def synset_of(q, text):
    s = s_(q, text)
    return s.synset.ordinal if s.synset_id else s.state


def test_the_page_sends_its_synset_list_with_every_write(client, world):
    q, ass, _ = world
    client.force_login(ass)
    p = page(client, q)
    ids = list(
        AnswerSynset.objects.filter(question=q).order_by("ordinal").values_list("pk", flat=True)
    )
    assert p["page_synsets"] == " ".join(map(str, ids))
    assert 'id="workspace"' in p["html"] and 'hx-include="#page-synsets"' in p["html"]


def test_digit_after_renumbering_is_refused_not_applied_to_another_synset(client, world):
    q, ass, org = world
    client.force_login(ass)
    p = page(client, q)  # 1 Paris, 2 Lyon, 3 Nice
    judging.string_delete(question=q.pk, string=s_(q, "Paris").pk, by=org)  # 1 Lyon, 2 Nice
    events = JudgmentEvent.objects.count()
    html = post(
        client,
        q,
        op="add",
        string=s_(q, "Marseille").pk,
        ordinal="2",
        expect="u",
        version=p["version"],
        page_synsets=p["page_synsets"],
    )
    assert "renumbered" in html and "your synset 2 is now synset 1" in html
    assert "was not applied" in html
    assert synset_of(q, "Marseille") == "unjudged"  # not put into Nice
    assert JudgmentEvent.objects.count() == events


def test_number_the_page_did_not_have_is_refused_even_if_it_exists_now(client, world):
    q, ass, org = world
    client.force_login(ass)
    p = page(client, q)  # three synsets
    judging.string_judge(
        question=q.pk, string=s_(q, "Toulouse").pk, new_synset=True, by=org
    )  # someone else makes synset 4
    html = post(
        client,
        q,
        op="add",
        string=s_(q, "Marseille").pk,
        ordinal="4",
        expect="u",
        version=p["version"],
        page_synsets=p["page_synsets"],
    )
    assert "There is no synset 4 on your page" in html
    assert synset_of(q, "Marseille") == "unjudged"


def test_synset_meant_is_gone_while_its_number_names_another(client, world):
    q, ass, org = world
    client.force_login(ass)
    p = page(client, q)
    # Paris's synset disappears (its only string moved into Nice's); numbers now 1 Lyon 2 Nice
    nice = AnswerSynset.objects.get(question=q, ordinal=3)
    judging.string_judge(question=q.pk, string=s_(q, "Paris").pk, synset=nice.pk, by=org)
    html = post(
        client,
        q,
        op="add",
        string=s_(q, "Marseille").pk,
        ordinal="1",
        expect="u",
        version=p["version"],
        page_synsets=p["page_synsets"],
    )
    assert "Synset 1 of your page no longer exists" in html
    assert synset_of(q, "Marseille") == "unjudged"


def test_same_meaning_after_another_change_still_applies_with_info(client, world):
    q, ass, org = world
    client.force_login(ass)
    p = page(client, q)
    judging.string_judge(question=q.pk, string=s_(q, "Toulouse").pk, by=org)  # incorrect
    html = post(
        client,
        q,
        op="add",
        string=s_(q, "Marseille").pk,
        ordinal="2",
        expect="u",
        level="B",
        version=p["version"],
        page_synsets=p["page_synsets"],
    )
    assert "your edit still applied" in html
    assert synset_of(q, "Marseille") == 2 and s_(q, "Marseille").synset == s_(q, "Lyon").synset


def test_merge_by_digit_after_renumbering_is_refused(client, world):
    q, ass, org = world
    client.force_login(ass)
    p = page(client, q)
    nice = AnswerSynset.objects.get(question=q, ordinal=3)
    judging.string_delete(question=q.pk, string=s_(q, "Paris").pk, by=org)  # 1 Lyon, 2 Nice
    # "m" on Nice then "2" on the stale page: merge Nice into Lyon (page number 2)
    html = post(
        client,
        q,
        op="merge",
        ordinal="2",
        merge=nice.pk,
        version=p["version"],
        page_synsets=p["page_synsets"],
    )
    assert "renumbered" in html
    assert AnswerSynset.objects.filter(question=q).count() == 2


def test_plain_post_without_the_synset_list_trusts_the_number_only_on_a_fresh_page(client, world):
    q, ass, org = world
    client.force_login(ass)
    v = Question.objects.get(pk=q.pk).version
    judging.string_delete(question=q.pk, string=s_(q, "Paris").pk, by=org)
    html = post(
        client, q, op="add", string=s_(q, "Marseille").pk, ordinal="2", expect="u", version=v
    )
    assert "synset 2 may no longer be the one you saw" in html
    assert synset_of(q, "Marseille") == "unjudged"
    v = Question.objects.get(pk=q.pk).version
    html = post(
        client, q, op="add", string=s_(q, "Marseille").pk, ordinal="2", expect="u", version=v
    )
    assert "notice" not in html
    assert s_(q, "Marseille").synset == s_(q, "Nice").synset


# -- the service: PageSynset resolved under the lock ---------------------------------------
def test_service_resolves_page_synset_under_the_lock(world):
    q, ass, org = world
    ids = list(
        AnswerSynset.objects.filter(question=q).order_by("ordinal").values_list("pk", flat=True)
    )
    v = Question.objects.get(pk=q.pk).version
    judging.string_delete(question=q.pk, string=s_(q, "Paris").pk, by=org)
    with pytest.raises(Conflict, match="renumbered"):
        judging.string_judge(
            question=q.pk,
            string=s_(q, "Marseille").pk,
            by=ass,
            synset=PageSynset(ordinal=2, pk=ids[1]),
            expect="u",
            version=v,
        )
    with pytest.raises(Conflict, match="no longer exists"):
        judging.string_add(
            question=q.pk,
            text="Bordeaux",
            by=ass,
            version=v,
            synset=PageSynset(ordinal=1, pk=ids[0]),
        )
    with pytest.raises(Conflict, match="may no longer be"):
        judging.synset_merge(
            question=q.pk, by=ass, version=v, synsets=[PageSynset(ordinal=1), ids[2]]
        )
    assert not AnswerString.objects.filter(question=q, text="Bordeaux").exists()
    # the same number meaning the same synset applies, stale version or not
    judging.string_judge(
        question=q.pk,
        string=s_(q, "Marseille").pk,
        by=ass,
        synset=PageSynset(ordinal=2, pk=ids[2]),
        expect="u",
        version=v,
    )
    assert s_(q, "Marseille").synset_id == ids[2]
