"""The matching key stored with answer strings and run answers (DESIGN.md section 4)."""

import pytest

from annotate.normalize import normalize_answer


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("  Paul   McCartney ", "paul mccartney"),
        ('"Chiba prefecture."', "chiba prefecture"),
        ("ＣＨＩＢＡ", "chiba"),  # full-width Latin: NFKC
        ("千葉県。", "千葉県"),  # Japanese full stop is punctuation
        ("ｶﾜﾊﾞﾀ", "カワバタ"),  # half-width katakana
        ("Straße", "strasse"),  # case-fold, not lower()
        ("Urayasu, Chiba", "urayasu, chiba"),  # inner punctuation stays
        ("NIL", "nil"),
    ],
)
def test_normalized_mode(text, key):
    assert normalize_answer(text, "normalized") == key


def test_exact_mode_strips_surrounding_whitespace_only():
    assert normalize_answer("  Paul McCartney. ", "exact") == "Paul McCartney."
    assert normalize_answer("ＣＨＩＢＡ", "exact") == "ＣＨＩＢＡ"


def test_unknown_mode_is_an_error():
    with pytest.raises(ValueError, match="matching mode"):
        normalize_answer("x", "fuzzy")
