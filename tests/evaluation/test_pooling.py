"""Unjudged answers go back to the assessors' pool; once judged, scores change."""

import io

import pandas as pd
import pytest
from django.contrib.auth import get_user_model

from annotate import judging
from annotate.models import AnswerString, Question
from evaluation.models import Run
from evaluation.services import run_pool

pytestmark = pytest.mark.django_db


def q_of(client, run, qid):
    text = client.get(f"/collections/demo/runs/{run.pk}/scores.csv").content.decode()
    return pd.read_csv(io.StringIO(text), comment="#").set_index("question_id").at[qid, "q_measure"]


def test_pool_button_then_judging_changes_scores(client, demo):
    User = get_user_model()
    organizer = User.objects.get(username="organizer")
    af = Run.objects.get(collection=demo, name="AF")
    client.force_login(organizer)
    page = client.get(f"/collections/demo/runs/{af.pk}/")
    unjudged = {(u["question_id"], u["answer"]) for u in page.context["unjudged"]}
    assert ("QAC1-1021", "Obuchi is as uninspiring as cold pizza") in unjudged
    assert q_of(client, af, "QAC1-1021") == pytest.approx(0.5)

    # only organizers may send answers to the pool
    client.force_login(User.objects.get(username="participant"))
    assert client.post(f"/collections/demo/runs/{af.pk}/pool/").status_code == 403
    client.force_login(organizer)
    before = AnswerString.objects.filter(question__collection=demo).count()
    resp = client.post(f"/collections/demo/runs/{af.pk}/pool/", follow=True)
    added = AnswerString.objects.filter(question__collection=demo).count() - before
    assert added > 0
    assert f"{added} unjudged answer(s) of AF sent" in resp.content.decode()
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    pooled = AnswerString.objects.get(question=q, text="Obuchi is as uninspiring as cold pizza")
    assert pooled.source == "pool" and pooled.judged_at is None
    # a second press adds nothing new
    client.post(f"/collections/demo/runs/{af.pk}/pool/")
    assert AnswerString.objects.filter(question__collection=demo).count() == before + added

    # an assessor judges it into the "cold pizza" synset: AF's score follows
    assessor = User.objects.get(username="assessor1")
    q.assessors.add(assessor)
    judging.string_judge(
        question=q, string=pooled.pk, by=assessor, synset=q.synsets.get(ordinal=2).pk
    )
    assert q_of(client, af, "QAC1-1021") == pytest.approx(1.0)
    page = client.get(f"/collections/demo/runs/{af.pk}/")
    assert ("QAC1-1021", "Obuchi is as uninspiring as cold pizza") not in {
        (u["question_id"], u["answer"]) for u in page.context["unjudged"]
    }


def test_run_page_counts_what_is_left_to_pool_and_pooling_reopens_done_questions(client, demo):
    """Pooling a run whose questions are done reopens them; the run page then counts its
    answers as waiting in the pool and no longer offers the button."""
    User = get_user_model()
    af = Run.objects.get(collection=demo, name="AF")
    # the organizer had marked every fully judged question done
    fully = Question.objects.filter(collection=demo).exclude(strings__judged_at__isnull=True)
    Question.objects.filter(pk__in=fully.values("pk")).update(status="done")
    client.force_login(User.objects.get(username="organizer"))
    page = client.get(f"/collections/demo/runs/{af.pk}/")
    pool = page.context["pool"]
    assert pool["to_pool"] > 0 and pool["unjudged"] == pool["to_pool"] + pool["pooled"]
    assert "to the assessors' pool</button>" in page.content.decode()
    done = set(
        Question.objects.filter(collection=demo, status="done").values_list("qid", flat=True)
    )
    added = run_pool(run=af)
    assert added == pool["to_pool"]
    still = set(
        Question.objects.filter(collection=demo, status="done").values_list("qid", flat=True)
    )
    assert "QAC1-1021" in done - still  # reopened: it gained the cold-pizza answer
    assert not Question.objects.filter(
        collection=demo, status="done", strings__judged_at__isnull=True
    ).exists()
    page = client.get(f"/collections/demo/runs/{af.pk}/")
    after = page.context["pool"]
    assert (after["to_pool"], after["pooled"], after["unjudged"]) == (
        0,
        pool["unjudged"],
        pool["unjudged"],
    )
    html = page.content.decode()
    assert "to the assessors' pool</button>" not in html and "0 are not in the pool yet" in html
