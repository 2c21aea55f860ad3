"""Normalization (DESIGN.md section 4) and its ASCII fast path."""

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics.normalize import (
    _WS,
    MATCH_MODES,
    is_nil,
    normalize_answer,
    normalize_many,
)


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


@pytest.mark.slow
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


# -- many strings at once: the same keys as one by one --------------------------------------
_MIXED = st.text(
    alphabet=st.one_of(
        st.characters(),
        st.sampled_from(
            list(" \t.,;!?'\"-‐–—「」、。・（）ＡＢａｂ ΣσςİIıßﬁ\u0301\u3000\u00a0abcTHEthe")
        ),
    ),
    max_size=14,
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_MIXED, max_size=12), st.sampled_from(MATCH_MODES))
def test_many_equals_one_by_one(texts, mode):
    assert normalize_many(texts, mode) == [normalize_answer(t, mode) for t in texts]


def test_many_examples():
    texts = ["ＴＯＫＹＯ", "Tokyo.", "東京都", "café", "CAFÉ", "cafe\u0301", "ΟΔΟΣ", "x\x00y", ""]
    assert normalize_many(texts) == [normalize_answer(t) for t in texts]
    assert normalize_many(texts)[:6] == ["tokyo", "tokyo", "東京都", "café", "café", "café"]


# -- squad: the SQuAD v1.1 evaluation script's normalize_answer -----------------------------
def squad_reference(s: str) -> str:
    """SQuAD v1.1 evaluate-v1.1.py, normalize_answer, verbatim but for the punctuation set,
    which here also holds every Unicode P* character (DESIGN.md section 4)."""
    import re
    import string

    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(
            ch for ch in text if ch not in exclude and not unicodedata.category(ch).startswith("P")
        )

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def squad_v11_ascii(s: str) -> str:
    """The script itself (ASCII punctuation only): the same keys on ASCII text."""
    import re
    import string

    exclude = set(string.punctuation)
    s = "".join(ch for ch in s.lower() if ch not in exclude)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", s).split())


@pytest.mark.slow
@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=16))
def test_squad_ascii_is_the_squad_script(text):
    assert normalize_answer(text, "squad") == squad_v11_ascii(text) == squad_reference(text)


@settings(max_examples=2000, deadline=None)
@given(_MIXED)
def test_squad_equals_definition(text):
    assert normalize_answer(text, "squad") == squad_reference(text)


def test_squad_examples():
    sq = lambda t: normalize_answer(t, "squad")  # noqa: E731
    # punctuation anywhere, not only at the edges
    assert sq("Radcliffe-Line") == "radcliffeline"
    assert sq("U.S.A.") == "usa"
    assert sq("“December 10, 1968”") == "december 10 1968"
    # articles as whole words only
    assert sq("The Radcliffe Line") == sq("Radcliffe Line") == "radcliffe line"
    assert sq("A Tale of Two Cities") == "tale of two cities"
    assert sq("Theater an Anthem") == "theater anthem"
    assert sq("thea, an, them") == "thea them"
    assert sq("the") == "" and sq("a an the") == ""
    # unicode punctuation: CJK and full-width marks, dashes, quotes
    assert sq("「東京」、日本。") == "東京日本"
    assert sq("Tokyo—Japan") == "tokyojapan"
    assert sq("¡Hola!") == "hola"
    assert sq("$5 + 3") == "5 3"  # ASCII symbols count, as in the SQuAD script
    assert sq("„The“ end") == "end"  # the quotes go first, then the article
    # no NFKC, as in SQuAD: full-width letters stay full-width (lower-cased)
    assert sq("ＴＯＫＹＯ") == "ｔｏｋｙｏ"
    assert normalize_many(["The Line!", "line"], "squad") == ["line", "line"]
