"""The judging workspace and question list: full pages, htmx partials, permissions,
stale notices and bounded query counts."""

import pytest

from annotate.models import AnswerString, Question
from tests.factories import (
    add_member,
    make_big_question,
    make_collection,
    make_question,
    make_run,
    make_user,
)

pytestmark = pytest.mark.django_db
HX = {"HX-Request": "true"}


@pytest.fixture
def world():
    c = make_collection(slug="w", guidelines="Group equal answers.")
    q = make_question(
        collection=c,
        qid="Q1",
        text="Capital of France?",
        synsets=[[("Paris", "S")]],
        unjudged=["paris, france", "Lyon", "Pariss"],
    )
    users = {role: make_user(username=role) for role in ("org", "ass", "other", "part")}
    add_member(collection=c, user=users["org"], role="organizer")
    add_member(collection=c, user=users["ass"], role="assessor")
    add_member(collection=c, user=users["other"], role="assessor")
    add_member(collection=c, user=users["part"], role="participant")
    q.assessors.add(users["ass"])
    make_run(
        collection=c, owner=users["part"], name="secret-run-a", answers={"Q1": ["Lyon", "Paris"]}
    )
    make_run(collection=c, owner=users["part"], name="secret-run-b", answers={"Q1": ["lyon"]})
    return c, q, users


def url(q, what="judge"):
    return f"/questions/{q.pk}/{what}/"


def test_workspace_full_page_and_partial(client, world):
    _, q, users = world
    client.force_login(users["ass"])
    r = client.get(url(q))
    html = r.content.decode()
    assert r.status_code == 200 and "<html" in html and "judge.js" in html
    assert "Group equal answers." in html and "secret-run" not in html
    cands = r.context["candidates"]
    assert cands[0].text == "Lyon" and cands[0].freq == 2  # most frequent first
    sugg = {c.text: c.suggestion and c.suggestion.ordinal for c in cands}
    assert sugg == {"Lyon": None, "paris, france": None, "Pariss": 1}  # fuzzy: Pariss ~ paris
    r = client.get(url(q), headers=HX)
    assert r.status_code == 200 and "<html" not in r.content.decode()
    assert 'id="workspace"' in r.content.decode()


def test_participant_and_outsider_get_403(client, world):
    _, q, users = world
    for who in (users["part"], make_user()):
        client.force_login(who)
        assert client.get(url(q)).status_code == 403
        assert client.post(url(q, "act"), {"op": "undo"}).status_code == 403
    client.force_login(users["part"])
    assert client.get("/collections/w/questions/").status_code == 403


def test_unassigned_assessor_reads_but_cannot_write(client, world):
    _, q, users = world
    client.force_login(users["other"])
    r = client.get(url(q))
    assert r.status_code == 200 and "Read only" in r.content.decode()
    lyon = AnswerString.objects.get(question=q, text="Lyon")
    assert client.post(url(q, "act"), {"op": "incorrect", "string": lyon.pk}).status_code == 403
    client.force_login(users["org"])  # organizers judge anything
    r = client.post(
        url(q, "act"),
        {"op": "incorrect", "string": lyon.pk, "expect": "u", "version": q.version},
        headers=HX,
    )
    assert r.status_code == 200 and "<html" not in r.content.decode()
    lyon.refresh_from_db()
    assert lyon.state == "incorrect"


def test_post_as_htmx_and_plain_form_and_stale_notice(client, world):
    _, q, users = world
    client.force_login(users["ass"])
    paris_fr = AnswerString.objects.get(question=q, text="paris, france")
    r = client.post(
        url(q, "act"),
        {
            "op": "add",
            "string": paris_fr.pk,
            "ordinal": "1",
            "level": "A",
            "expect": "u",
            "version": q.version,
        },
        headers=HX,
    )
    assert r.status_code == 200 and "notice" not in r.content.decode()
    paris_fr.refresh_from_db()
    assert (paris_fr.synset.ordinal, paris_fr.level.code) == (1, "A")
    # the history names who did what to which string; synset cards carry their data
    history = r.content.decode().split('class="history')[1]
    assert "ass put “paris, france” in synset 1 (level A)" in history
    assert 'data-ordinal="1"' in r.content.decode() and "2 strings" in r.content.decode()
    # a second tab still shows version 0 and "u" for the same string: refused, visibly
    r = client.post(
        url(q, "act"),
        {"op": "incorrect", "string": paris_fr.pk, "expect": "u", "version": 0},
        headers=HX,
    )
    assert r.status_code == 200 and "was not applied" in r.content.decode()
    paris_fr.refresh_from_db()
    assert paris_fr.state == "correct"
    # plain form: redirect back to the page (no JS needed)
    lyon = AnswerString.objects.get(question=q, text="Lyon")
    r = client.post(url(q, "act"), {"op": "new", "string": lyon.pk, "level": "S"})
    assert r.status_code == 302 and r.headers["Location"] == url(q)
    assert Question.objects.get(pk=q.pk).synsets.count() == 2
    # typed string, then done refused while candidates remain, then done -> next question
    r = client.post(
        url(q, "act"), {"op": "type", "text": "Lutèce", "target": "new", "level": "B"}, headers=HX
    )
    assert "Lutèce" in r.content.decode()
    r = client.post(url(q, "act"), {"op": "done"}, headers=HX)
    assert "Judge every candidate" in r.content.decode()
    pariss = AnswerString.objects.get(question=q, text="Pariss")
    client.post(url(q, "act"), {"op": "incorrect", "string": pariss.pk}, headers=HX)
    r = client.post(url(q, "act"), {"op": "done"}, headers=HX)
    assert r.status_code == 200 and r.headers["HX-Redirect"] == "/collections/w/questions/"


def test_question_list_filters_partial_and_assignment(client, world):
    c, q, users = world
    q2 = make_question(collection=c, qid="Q2", text="Biggest city of Japan?")
    client.force_login(users["org"])
    r = client.get("/collections/w/questions/")
    assert r.status_code == 200 and "<progress" in r.content.decode()
    assert [x.qid for x in r.context["questions"]] == ["Q1", "Q2"]
    r = client.get("/collections/w/questions/?q=japan", headers=HX)
    html = r.content.decode()
    assert "Q2" in html and ">Q1<" not in html and "<html" not in html
    r = client.get("/collections/w/questions/?unjudged=1")
    assert [(x.qid, x.n_unjudged, x.n_synsets) for x in r.context["questions"]] == [("Q1", 3, 1)]
    r = client.post(
        "/collections/w/questions/assign/",
        {
            "questions": [q.pk, q2.pk],
            "assessors": [users["ass"].pk, users["other"].pk],
            "scope": "selected",
            "mode": "round_robin",
            "replace": "1",
        },
    )
    assert r.status_code == 302
    assert [list(x.assessors.values_list("username", flat=True)) for x in (q, q2)] == [
        ["ass"],
        ["other"],
    ]
    client.force_login(users["ass"])
    assert client.post("/collections/w/questions/assign/", {}).status_code == 403
    r = client.get("/queue/next/")
    assert r.status_code == 302 and r.headers["Location"] == url(q)


def test_workspace_query_count_is_bounded(client, django_assert_max_num_queries):
    c = make_collection(slug="big")
    q = make_big_question(collection=c)
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    client.force_login(org)
    # the first visit also records the user's presence in the (database) cache: 4 writes,
    # at most once a minute per user and question (annotate/presence.py)
    with django_assert_max_num_queries(19):
        client.get(url(q))
    with django_assert_max_num_queries(15):
        r = client.get(url(q))
    assert r.status_code == 200 and len(r.context["synsets"]) == 100
    cand = AnswerString.objects.filter(question=q, judged_at__isnull=True).first()
    with django_assert_max_num_queries(30):
        r = client.post(
            url(q, "act"),
            {"op": "add", "string": cand.pk, "ordinal": "7", "expect": "u", "version": q.version},
            headers=HX,
        )
    assert r.status_code == 200 and "notice" not in r.content.decode()
    # 12, and one for the navigation (the user's roles decide its entries)
    with django_assert_max_num_queries(13):
        r = client.get("/collections/big/questions/")
    assert r.context["questions"][0].n_strings == 1000


def test_candidate_row_shows_the_suggestion_reason(client, world):
    _, q, users = world
    client.force_login(users["ass"])
    r = client.get(url(q))
    pariss = next(c for c in r.context["candidates"] if c.text == "Pariss")
    assert pariss.suggestion_reason
    html = r.content.decode()
    from django.utils.html import escape

    reason = escape(pariss.suggestion_reason)
    assert f'<span class="suggest-reason muted">{reason}</span>' in html
    assert f"suggested synset 1: {reason}" in html  # also as the title
    assert "%)" not in html.split('class="suggest small"')[1].split("</li>")[0]


def test_guidelines_box_shows_guidelines_and_levels(client, world):
    c, q, users = world
    client.force_login(users["ass"])
    html = client.get(url(q)).content.decode()
    box = html.split('<details class="guidelines-box" id="guidelines"')[1].split("</details>")[0]
    assert 'data-remember="judge-guidelines:ass"' in box  # remembered per user
    assert "Group equal answers." in box
    for lv in c.levels.all():
        assert f">{lv.code}</span>" in box and f"gain {lv.gain}" in box
        if lv.label:
            assert lv.label in box
    c.guidelines = ""
    c.save()
    html = client.get(url(q)).content.decode()
    assert 'id="guidelines"' in html  # the levels are still explained


def test_history_lines_say_what_happened_in_words(client, world):
    from annotate import judging
    from annotate.selectors import history_sentence, question_history

    _, q, users = world
    ass = users["ass"]
    lyon = AnswerString.objects.get(question=q, text="Lyon")
    pariss = AnswerString.objects.get(question=q, text="Pariss")
    judging.string_judge(question=q, string=lyon.pk, by=ass, new_synset=True, level="A")
    judging.string_judge(
        question=q, string=pariss.pk, by=ass, synset=q.synsets.get(ordinal=1).pk, level="S"
    )
    judging.string_set_level(question=q, string=lyon.pk, level="B", by=ass)
    judging.string_judge(
        question=q, string=AnswerString.objects.get(question=q, text="paris, france").pk, by=ass
    )
    judging.synset_merge(
        question=q, by=ass, synsets=[q.synsets.get(ordinal=1).pk, q.synsets.get(ordinal=2).pk]
    )
    judging.question_undo(question=q, by=ass)
    lines = [e["sentence"] for e in question_history(q)]
    assert lines == [
        "ass undid a merge",
        "ass merged synset 2 into synset 1",
        "ass judged “paris, france” incorrect",
        "ass gave “Lyon” (synset 2) level B",
        "ass put “Pariss” in synset 1 (level S)",
        "ass put “Lyon” in new synset 2 (level A)",
    ]
    client.force_login(ass)
    html = client.get(url(q)).content.decode()
    assert "ass put “Pariss” in synset 1 (level S)" in html
    import re

    shown = re.sub(r"<[^>]+>", "", html.split('class="history')[1].split("</ol>")[0])
    assert "string_add" not in shown and "string_new_synset" not in shown
    # an action it does not know is still readable; old events without details too
    assert history_sentence({"user_name": None, "action": "foo_bar"}) == "system: foo bar"
    assert (
        history_sentence({"user_name": "a", "action": "string_add", "text": "x"})
        == "a put “x” in a synset"
    )


def test_notice_when_another_assessor_is_on_the_question(client, world):
    from datetime import timedelta

    from django.core.cache import cache
    from django.utils import timezone

    from annotate import presence

    _, q, users = world
    cache.delete(f"judge-presence:{q.pk}")
    client.force_login(users["ass"])
    html = client.get(url(q)).content.decode()
    assert "is also on this question" not in html  # alone
    client.force_login(users["org"])
    html = client.get(url(q)).content.decode()
    assert "ass is also on this question (seen just now)" in html
    # seen 3 minutes ago; more than 10 minutes ago is gone
    now = timezone.now()
    seen = presence.seen_on_question(q.pk, "other", now=now + timedelta(minutes=3))
    assert [(s.username) for s in seen] == ["org", "ass"]
    assert presence.seen_on_question(q.pk, "x", now=now + timedelta(minutes=14)) == []
    cache.set(f"judge-presence:{q.pk}", {"other": now - timedelta(minutes=3)})
    html = client.get(url(q)).content.decode()
    assert "other is also on this question (seen 3 min ago)" in html
    cache.delete(f"judge-presence:{q.pk}")
