"""Normalization (DESIGN.md section 4) and its ASCII fast path."""

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics.normalize import _WS, is_nil, normalize_answer


def reference(text: str) -> str:
    key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    key = _WS.sub(" ", key)
    edge = lambda ch: ch.isspace() or unicodedata.category(ch).startswith("P")  # noqa: E731
    a, b = 0, len(key)
    while a < b and edge(key[a]):
        a += 1
    while b > a and edge(key[b - 1]):
        b -= 1
    return key[a:b]


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=12))
def test_ascii_fast_path_equals_definition(text):
    assert normalize_answer(text) == reference(text)


@settings(max_examples=2000, deadline=None)
@given(st.text(max_size=12))
def test_unicode_equals_definition(text):
    assert normalize_answer(text) == reference(text)


def test_examples():
    assert normalize_answer("  Sir  Paul\tMcCartney. ") == "sir paul mccartney"
    assert normalize_answer("“December 10, 1968”") == "december 10, 1968"
    assert normalize_answer("ＴＯＫＹＯ　ディズニーランド") == normalize_answer("tokyo ﾃﾞｨｽﾞﾆｰﾗﾝﾄﾞ")
    assert normalize_answer("Straße") == normalize_answer("STRASSE")
    assert normalize_answer("  Paul ", "exact") == "Paul"
    assert normalize_answer("$5") == "$5"  # symbols are not punctuation
    assert is_nil(" nil.") and is_nil("ＮＩＬ") and not is_nil("nile")
