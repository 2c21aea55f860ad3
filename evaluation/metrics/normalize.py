"""Answer-string normalization: the one key function of the engine (DESIGN.md section 4).

``normalized`` matching: Unicode NFKC (so full-width and half-width Japanese and
Latin forms match), case-fold, collapse runs of whitespace to one space, strip
surrounding whitespace and punctuation.  ``exact`` matching compares the strings
stripped of surrounding whitespace only.  ``squad`` is the open-domain QA convention,
the SQuAD v1.1 evaluation script's ``normalize_answer``: lower-case, remove every
punctuation character (ASCII ``string.punctuation`` and every Unicode P* character),
remove the articles ``a``, ``an``, ``the`` as whole words, collapse whitespace.

``normalize_many`` keys many strings at once without a Python loop over the strings:
in ``normalized`` mode the C accelerator, when it is built, keys every string made of
characters whose key does not depend on their neighbours (``char_table``: ASCII, kana,
kanji, accented and full-width Latin, ...); the rest are joined into one text with NUL
between them, transformed by a few whole-text calls (NFKC, case folding and regular
expressions, all in C) and split again.  NUL is a boundary for every step (NFKC never
composes or reorders across it, case mapping sees it as uncased, it is not whitespace,
punctuation or a word character), so each string gets
exactly the key ``normalize_answer`` gives it; texts holding NUL are keyed one by one.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections.abc import Iterable

from .accel import fastparse as _fastparse

# the optional C accelerator normalizes ASCII strings (the same keys, faster)
_ascii_keys = _fastparse.ascii_keys if _fastparse is not None else None

MATCH_MODES = ("exact", "normalized", "squad")
NIL = "NIL"
NIL_KEY = "nil"

_WS = re.compile(r"\s+")
# ASCII characters of Unicode category P* and whitespace: what is stripped from the edges
_ASCII_EDGE = "".join(
    chr(c) for c in range(128) if unicodedata.category(chr(c)).startswith("P") or chr(c).isspace()
)
_SQUAD_ASCII = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_SEP = "\x00"


def _is_edge_char(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def _is_squad_punct(ch: str) -> bool:
    return ch in _SQUAD_ASCII or unicodedata.category(ch).startswith("P")


def _check_mode(mode: str) -> None:
    if mode not in MATCH_MODES:
        raise ValueError(
            f"unknown matching mode {mode!r} (expected one of {', '.join(MATCH_MODES)})"
        )


def normalize_answer(text: str, mode: str = "normalized") -> str:
    """Return the matching key of ``text`` under ``mode`` (``exact``, ``normalized`` or
    ``squad``; see the module docstring)."""
    if mode == "exact":
        return text.strip()
    if mode == "squad":
        text = "".join(ch for ch in text.lower() if not _is_squad_punct(ch))
        return " ".join(_ARTICLES.sub(" ", text).split())
    _check_mode(mode)
    if text.isascii():  # NFKC leaves ASCII alone and casefold is lower: the common case, fast
        return " ".join(text.lower().split()).strip(_ASCII_EDGE)
    key = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    key = _WS.sub(" ", key)
    start, end = 0, len(key)
    while start < end and _is_edge_char(key[start]):
        start += 1
    while end > start and _is_edge_char(key[end - 1]):
        end -= 1
    return key[start:end]


def _char_class(chars: Iterable[str]) -> str:
    """A regular-expression character class of ``chars`` ("" when there are none)."""
    chars = sorted(chars)
    return "[" + "".join(re.escape(c) for c in chars) + "]" if chars else ""


def _punctuation_in(text: str, *, squad: bool) -> set[str]:
    """The punctuation characters (category P*, and for squad ASCII string.punctuation)
    that occur in ``text``: one look per distinct character, not per string."""
    import numpy as np  # the distinct code points, counted in C

    points = _code_points(text)
    distinct = np.flatnonzero(np.bincount(points, minlength=128)).tolist() if len(points) else []
    test = _is_squad_punct if squad else _is_edge_punct
    return {ch for ch in map(chr, distinct) if test(ch)}


def _is_edge_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _keys_of_joined(texts: list[str], mode: str) -> list[str]:
    """``normalize_answer`` of each text, computed on the texts joined by NUL."""
    if not texts:
        return []
    blob = _SEP.join(texts)
    if blob.count(_SEP) != len(texts) - 1:  # a text holds NUL: one by one
        return [normalize_answer(t, mode) for t in texts]
    if mode == "squad":
        blob = blob.lower()
        punct = _char_class(_punctuation_in(blob, squad=True))
        if punct:
            blob = re.sub(punct + "+", "", blob)
        # every run of whitespace (NUL is none) becomes one space; then none next to a NUL
        blob = " ".join(_ARTICLES.sub(" ", blob).split())
        return blob.replace(" \x00", _SEP).replace("\x00 ", _SEP).split(_SEP)
    blob = _nfkc(_nfkc_texts(texts, blob).casefold())
    blob = " ".join(blob.split())  # _WS.sub(" ", blob), and the ends stripped
    edge = _punctuation_in(blob, squad=False) | {" "}
    # strip every text's edges: what follows each NUL, then (reversed) what precedes it;
    # a pattern that starts with NUL is searched for quickly
    after_nul = re.compile(f"\x00{_char_class(edge)}+")
    blob = after_nul.sub(_SEP, after_nul.sub(_SEP, blob)[::-1])[::-1]
    return blob.strip("".join(edge)).split(_SEP)


# blocks with characters that are unchanged by NFKC on their own but may compose with the
# character before them (Indic vowel signs, Hangul jamo, ...): never taken as stable
_COMPOSING_BLOCKS = (
    (0x0900, 0x0FFF),
    (0x1000, 0x109F),
    (0x1100, 0x11FF),
    (0x1B00, 0x1B7F),
    (0x11000, 0x10FFFF),
)


def _stable(cp: int) -> bool:
    """True when NFKC leaves the character alone wherever it stands."""
    if cp < 0x80:
        return True
    if any(lo <= cp <= hi for lo, hi in _COMPOSING_BLOCKS):
        return False
    ch = chr(cp)
    return unicodedata.combining(ch) == 0 and unicodedata.normalize("NFKC", ch) == ch


def _starts_free(text: str) -> bool:
    """True when ``text`` cannot compose with a character before it: its NFKD is empty or
    starts with a starter outside the blocks where a starter may compose with the one
    before it (Hangul jamo, Indic vowel signs, ...)."""
    d = unicodedata.normalize("NFKD", text)
    if not d:
        return True
    cp = ord(d[0])
    return unicodedata.combining(d[0]) == 0 and not any(
        lo <= cp <= hi for lo, hi in _COMPOSING_BLOCKS
    )


def char_table(points: Iterable[int]) -> tuple[list[tuple[int, str | None]], str, str]:
    """What the C accelerator needs to key strings without Python (``normalized`` mode):
    for each non-ASCII code point, its key on its own (NFKC, case fold, NFKC) when the key
    of any string of such characters is the concatenation of theirs (then whitespace
    collapsed and edges stripped), else None; and the non-ASCII characters of those keys
    that are whitespace, and that are edge characters (whitespace or punctuation).

    A character qualifies when neither it nor its case-folded NFKC can compose with a
    character before it (``_starts_free``): NFKD works character by character, canonical
    reordering stops at a starter and composition at a starter that never composes with
    the one before it, so NFKC of a concatenation is then the concatenation of NFKCs; case
    folding has no context."""
    table: list[tuple[int, str | None]] = []
    out: set[str] = set()
    for cp in points:
        ch = chr(cp)
        folded = unicodedata.normalize("NFKC", ch).casefold()
        if not (_starts_free(ch) and _starts_free(folded)):
            table.append((cp, None))
            continue
        key = unicodedata.normalize("NFKC", folded)
        table.append((cp, key))
        out.update(key)
    wide = sorted(c for c in out if not c.isascii())
    spaces = "".join(c for c in wide if c.isspace())
    edges = "".join(c for c in wide if _is_edge_char(c))
    return table, spaces, edges


def _code_points(text: str):
    import numpy as np  # off qa-score's start-up path (cli imports this module first)

    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def _nfkc_texts(texts: list[str], blob: str) -> str:
    """NFKC of ``blob`` (``texts`` joined by NUL), normalizing only the texts that hold a
    character NFKC may change (full-width forms, ...): most answers have none, and NFKC
    costs per character.  Which texts is found with array operations on the code points
    (one look per distinct character)."""
    if unicodedata.is_normalized("NFKC", blob):
        return blob
    import numpy as np  # off qa-score's start-up path, as in _code_points

    points = _code_points(blob)
    distinct = np.flatnonzero(np.bincount(points)).tolist()
    unstable = np.zeros(distinct[-1] + 1, dtype=bool)
    unstable[[cp for cp in distinct if not _stable(cp)]] = True
    seen = np.concatenate(([0], np.cumsum(unstable[points], dtype=np.int64)))
    nul = np.flatnonzero(points == 0)
    starts, ends = np.concatenate(([0], nul + 1)), np.concatenate((nul, [len(points)]))
    which = np.flatnonzero(seen[ends] > seen[starts])
    if len(which) * 4 > len(texts):  # most need it: at once
        return unicodedata.normalize("NFKC", blob)
    parts = np.empty(len(texts), dtype=object)
    parts[:] = texts
    parts[which] = unicodedata.normalize("NFKC", _SEP.join(parts[which].tolist())).split(_SEP)
    return _SEP.join(parts.tolist())


def _nfkc(text: str) -> str:
    """NFKC of ``text`` (the quick check first: most text is already normalized)."""
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def normalize_many(texts: Iterable[str], mode: str = "normalized") -> list[str]:
    """``normalize_answer`` of each of ``texts`` (a list), computed for all at once."""
    _check_mode(mode)
    texts = texts.tolist() if hasattr(texts, "tolist") else list(texts)
    if mode == "exact":
        return [t.strip() for t in texts]
    if mode == "normalized" and _fastparse is not None:
        # keyed in C character by character (see char_table); None: left to Python
        points = memoryview(_fastparse.str_code_points("".join(texts))).cast("i").tolist()
        keys = _fastparse.str_keys(texts, *char_table(points))
        rest = [i for i, key in enumerate(keys) if key is None] if None in keys else []
        if rest:
            for i, key in zip(rest, _keys_of_joined([texts[i] for i in rest], mode), strict=True):
                keys[i] = key
        return keys
    return _keys_of_joined(texts, mode)


def is_nil(text: str) -> bool:
    """True when ``text`` is an explicit NIL answer ("there is no answer")."""
    return normalize_answer(text, "normalized") == NIL_KEY
