"""The mode change's set-based re-key (issue 24 item 5): keys that move between strings
of a question (one string taking the key another gives up, checked row by row by the
unique constraint) are written without a clash."""

import pytest

from annotate.matching import _rekey_write
from annotate.models import AnswerString
from tests.factories import make_collection, make_question

pytestmark = pytest.mark.django_db


def test_keys_swapped_between_strings_are_written():
    c = make_collection()
    q = make_question(collection=c, qid="Q1", unjudged=["a", "b", "c"])
    rows = [
        (s.pk, q.pk, "Q1", s.text, s.key, s.variants, None, None, None, None)
        for s in AnswerString.objects.filter(question=q).order_by("id")
    ]
    # a -> b, b -> c, c -> a: each new key is held by another string until it moves
    assert _rekey_write(rows, ["b", "c", "a"], [], {}, {}, "normalized") == 3
    assert list(
        AnswerString.objects.filter(question=q).order_by("id").values_list("text", "key")
    ) == [("a", "b"), ("b", "c"), ("c", "a")]
