"""Answer-string normalization (DESIGN.md section 4).

``normalized`` matching: Unicode NFKC (so full-width and half-width Japanese and
Latin forms match), case-fold, collapse runs of whitespace to one space, strip
surrounding whitespace and punctuation.  ``exact`` matching compares the strings
stripped of surrounding whitespace only.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from .accel import fastparse as _fastparse

# the optional C accelerator normalizes ASCII strings (the same keys, faster)
_ascii_keys = _fastparse.ascii_keys if _fastparse is not None else None

MATCH_MODES = ("exact", "normalized")
NIL = "NIL"
NIL_KEY = "nil"

_WS = re.compile(r"\s+")
# ASCII characters of Unicode category P* and whitespace: what is stripped from the edges
_ASCII_EDGE = "".join(chr(c) for c in range(128)
                      if unicodedata.category(chr(c)).startswith("P") or chr(c).isspace())


def _is_edge_char(ch: str) -> bool:
    return ch.isspace() or unicodedata.category(ch).startswith("P")


def normalize_answer(text: str, mode: str = "normalized") -> str:
    """Return the matching key of ``text`` under ``mode`` (``exact`` or ``normalized``)."""
    if mode == "exact":
        return text.strip()
    if mode != "normalized":
        raise ValueError(f"unknown matching mode {mode!r} (expected exact or normalized)")
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


def normalize_many(texts: Iterable[str], mode: str = "normalized") -> list[str]:
    """Normalize many strings, computing each distinct string once."""
    if mode == "normalized" and _ascii_keys is not None:
        texts = texts.tolist() if hasattr(texts, "tolist") else list(texts)
        keys = _ascii_keys(texts)
        for i, key in enumerate(keys):
            if key is None:  # not ASCII: NFKC and case folding, in Python
                keys[i] = normalize_answer(texts[i], mode)
        return keys
    cache: dict[str, str] = {}
    out = []
    for text in texts:
        key = cache.get(text)
        if key is None:
            key = cache[text] = normalize_answer(text, mode)
        out.append(key)
    return out


def is_nil(text: str) -> bool:
    """True when ``text`` is an explicit NIL answer ("there is no answer")."""
    return normalize_answer(text, "normalized") == NIL_KEY


# Tab, newline and carriage return are text (a textarea sends CRLF); every other C0 control
# character and DEL is not (and PostgreSQL cannot store NUL at all).  Refused in form fields
# (config.middleware) and in collection archives.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
