"""The workspace is read consistently: a judgment committed between the workspace's
queries (synsets, then strings) neither breaks the page (it was a KeyError on the synset
id, a 500) nor shows half of itself, and the page's version is that of what it shows.

PostgreSQL only (a write from another connection lands between two queries):
DATABASE_URL=postgres://postgres@127.0.0.1:5432/qa_x .venv/bin/pytest \
tests/annotate/test_workspace_read.py
"""

import threading

import pytest
from django.db import connection, transaction

from annotate import judging
from annotate.models import AnswerString, Question
from annotate.workspace_selectors import question_workspace
from tests.factories import make_collection, make_question, make_user

pytestmark = [
    pytest.mark.postgres(reason="needs a second PostgreSQL connection writing between two queries"),
    pytest.mark.django_db(transaction=True),
]


def write_before_strings_query(write):
    """An execute wrapper that runs ``write`` in another thread (its own connection, which
    commits) just before this connection reads the question's strings, once."""
    fired = []

    def wrapper(execute, sql, params, many, context):
        if not fired and 'FROM "annotate_answerstring"' in sql and '"variants"' in sql:
            fired.append(True)
            errors = []

            def run():
                try:
                    write()
                except Exception as e:  # reported below
                    errors.append(e)
                finally:
                    connection.close()

            t = threading.Thread(target=run)
            t.start()
            t.join(20)
            assert not t.is_alive() and not errors, errors
        return execute(sql, params, many, context)

    return wrapper, fired


@pytest.fixture
def world():
    c = make_collection()
    q = make_question(collection=c, synsets=[[("Paris", "S")]], unjudged=["Lyon", "Nice"])
    return q, make_user()


def test_a_new_synset_committed_between_the_queries_is_not_half_seen(world):
    q, user = world
    lyon = AnswerString.objects.get(question=q, text="Lyon")
    v = Question.objects.get(pk=q.pk).version
    wrapper, fired = write_before_strings_query(
        lambda: judging.string_judge(
            question=q.pk, string=lyon.pk, new_synset=True, by=user, expect="u"
        )
    )
    with connection.execute_wrapper(wrapper):
        ws = question_workspace(q)
    assert fired
    # the state before the write, whole: one synset, Lyon still a candidate, its version
    assert [len(s.members) for s in ws.synsets] == [1]
    assert sorted(c.text for c in ws.candidates) == ["Lyon", "Nice"]
    assert q.version == v
    # the next read sees the write, whole
    ws = question_workspace(q)
    assert [len(s.members) for s in ws.synsets] == [1, 1] and q.version == v + 1


def test_inside_a_read_committed_transaction_a_half_seen_write_does_not_break_the_page(world):
    q, user = world
    nice = AnswerString.objects.get(question=q, text="Nice")
    wrapper, fired = write_before_strings_query(
        lambda: judging.string_judge(
            question=q.pk, string=nice.pk, new_synset=True, by=user, expect="u"
        )
    )
    with transaction.atomic(), connection.execute_wrapper(wrapper):
        ws = question_workspace(q)  # the caller's transaction decides: statement snapshots
    assert fired
    # Nice's new synset was not read: Nice is shown as a candidate, so that an edit made
    # from this page is refused as stale (its token "u" no longer matches)
    assert [len(s.members) for s in ws.synsets] == [1]
    assert sorted(c.text for c in ws.candidates) == ["Lyon", "Nice"]
