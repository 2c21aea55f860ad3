"""Issue 27, item 4: a request for layers and a layers import on the same questions at the
same time (PostgreSQL: real row locks) never leave a question more than k layers, whichever
comes first.  Each order is made to happen: the first call runs in a transaction held open
(its questions locked) until the second is seen waiting for a lock, then commits; the
second goes on and must see the first's layers.  Request first: the import is refused (it
would give each question k more layers); import first: the request is refused (every
question has its layers).

Before, the import read the layers it would add to before it took the questions' locks,
and did not check k: after the request it gave every question 4 layers with k = 2.  (An
earlier test of this race let the two calls start together and expected one order: it
failed when the other came first.)

Run with: DATABASE_URL=postgres://postgres@127.0.0.1:5432/qasynset_dev .venv/bin/pytest \
tests/annotate/test_layers_import_race.py"""

import threading
import time
from collections import Counter

import pytest
from django.db import connection, connections, transaction

from annotate import imports, layer_io, layers
from annotate.edits import Conflict
from annotate.models import JudgingLayer, JudgmentEvent, LayerRequest
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = [
    pytest.mark.postgres(reason="needs PostgreSQL row locks"),
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def w(settings):
    # no server process here: the cheap hasher of the other tests (tests/conftest.py)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    c = make_collection()
    org = make_user()
    add_member(collection=c, user=org, role="organizer")
    people = [make_user() for _ in range(4)]
    for u in people:
        add_member(collection=c, user=u, role="assessor")
    questions = [make_question(collection=c, qid=f"Q{i}", unjudged=["a", "b"]) for i in range(10)]
    return c, org, people, questions


def _waiting_for_a_lock() -> bool:
    """Some session of this test's database waits for a lock (the second call)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        return cursor.fetchone()[0] > 0


def one_then_other(first, second) -> list:
    """Run ``first`` in a transaction kept open until ``second`` (started meanwhile in
    another thread) waits for a lock; then commit it, and let ``second`` finish.  Returns
    what each returned or raised."""
    outcome: list = [None, None]
    done_first, commit_first = threading.Event(), threading.Event()

    def run_first():
        try:
            with transaction.atomic():
                outcome[0] = first()
                done_first.set()
                # the lock timeout is 5 s: commit well before the second call gives up
                commit_first.wait(4)
        except Exception as e:  # reported by the test
            outcome[0] = e
        finally:
            done_first.set()
            connections.close_all()

    def run_second():
        try:
            outcome[1] = second()
        except Exception as e:  # reported by the test
            outcome[1] = e
        finally:
            connections.close_all()

    a = threading.Thread(target=run_first)
    a.start()
    assert done_first.wait(30)
    b = threading.Thread(target=run_second)
    b.start()
    seen = False
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and not seen:
        seen = _waiting_for_a_lock()
        time.sleep(0.02)
    commit_first.set()
    a.join(30)
    b.join(30)
    assert seen, "the second call never waited for the first one's locks"
    return outcome


def _import(c, org, people, questions, via: str):
    data = (
        "question_id,synset_id,answer,level,assessor,done\n"
        + "".join(f"{q.qid},1,a,S,{u.username},\n" for q in questions for u in people[:2])
    ).encode()
    if via == "layers page":
        return lambda: layer_io.layers_import(
            collection=c, data=data, filename="layers.csv", by=org
        )
    return lambda: imports.collection_import(
        collection=c, kind="layers", data=data, filename="layers.csv", by=org
    )


def _request(c, org, people, questions):
    return lambda: layers.layers_request(
        collection=c, questions=questions, assessors=people[2:], by=org, k=2
    )


@pytest.mark.parametrize("via", ["layers page", "import page"])
def test_request_first_then_the_import_is_refused(w, via):
    _, _, people, questions = w
    request, imported = one_then_other(_request(*w), _import(*w, via))
    assert isinstance(request, layers.LayersRequested), request
    if via == "layers page":
        assert isinstance(imported, layer_io.LayersImported) and imported.layers == 0
        issues = imported.issues
    else:
        assert isinstance(imported, imports.ImportRefused), imported
        issues = imported.issues
    # each question is refused on the line of its first layer too many
    assert [i.line for i in issues] == [2 + 2 * n for n in range(10)]
    assert all("asks for k = 2 independent layers and has 2" in i.message for i in issues)
    assert Counter(JudgingLayer.objects.values_list("question_id", flat=True)) == {
        q.pk: 2 for q in questions
    }
    assert set(JudgingLayer.objects.values_list("assessor_id", flat=True)) == {
        u.pk for u in people[2:]
    }
    assert JudgmentEvent.objects.filter(action__endswith="layers_import").count() == 0


@pytest.mark.parametrize("via", ["layers page", "import page"])
def test_import_first_then_the_request_is_refused(w, via):
    _, _, people, questions = w
    imported, request = one_then_other(_import(*w, via), _request(*w))
    assert not isinstance(imported, Exception), imported
    assert isinstance(request, Conflict) and "already have layers" in str(request), request
    assert Counter(JudgingLayer.objects.values_list("question_id", flat=True)) == {
        q.pk: 2 for q in questions
    }
    assert set(JudgingLayer.objects.values_list("assessor_id", flat=True)) == {
        u.pk for u in people[:2]
    }
    assert set(LayerRequest.objects.values_list("k", flat=True)) == {2}
    assert JudgmentEvent.objects.filter(action="layers_request").count() == 0
