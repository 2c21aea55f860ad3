"""Which synset an unjudged answer string probably belongs to: a suggestion offered to the
assessor only when it is likely right, with the reason it was made.

Pure Python (no Django): ``Suggester(groups, incorrect=..., mode=...)`` indexes the judged
strings of one question once, ``Suggester.suggest(text)`` answers for one candidate;
``suggest(text, groups, mode=...)`` does both for a single candidate.

The rules, strongest first; the first that matches decides (a weaker rule is not tried when a
stronger one is ambiguous).  Strings judged incorrect compete like a synset but are never
suggested: a candidate that looks most like an incorrect string gets no suggestion.

1. **Same key** under the collection's matching mode: "same key".
2. **Equal up to articles, punctuation, spacing, accents and case**: both strings are
   compared after removing a leading English article ("a", "an", "the") and "the" before
   another word (so "Vitamin A" keeps its "A"), punctuation anywhere, whitespace and
   accents on Latin letters: "differs only in articles and punctuation: 'the epidermis' ~
   'epidermis'".
3. **Same words in another order** (two words or more): "same words in another order:
   'Kawabata Yasunari' ~ 'Yasunari Kawabata'".
4. **A small typo** of one judged string: Damerau-Levenshtein (optimal string alignment)
   distance 1 between the word lists of rule 2, or 2 when both strings have at least 12
   letters; the same number of words, and in every changed word:

   - the word has at least 5 letters (a changed letter in a short word is usually another
     word: John/Joan, Iran/Iraq, ATP/ADP), a substitution at least 6 (Monet/Manet);
   - the first letter is unchanged (people rarely mistype it; di/tri, un/in differ there);
   - a letter added or dropped at the end doubles the letter before it (Pariss/Paris, but
     not Parish/Paris, Sweden/Swede);
   - a substituted letter is a neighbour on a QWERTY keyboard (a slip of the finger, not a
     different vowel: Yukawa/Yokawa is refused, Kawabata/Kawabaya accepted);
   - the edit does not turn a known prefix into another (mono/di/tri..., hypo/hyper,
     inter/intra, endo/exo...) nor a chemical suffix (-ide/-ite/-ate, -ane/-ene/-yne,
     -ose/-ase);
   - a word changed by two edits has at least 10 letters, and they are not in its first two.

   With context -- other words of the string unchanged and both strings at least 12 letters
   long -- a word may be one letter shorter and its first letter may change ("Jane Austem",
   "oMunt Everest").  Reason: "one-letter typo of 'Kawabata'", "two-letter typo of
   'adenosine monophosphate'".

Whatever the rule (but same key), never when the numbers differ (digits, with a thousands
comma ignored, and upper-case Roman numerals: 1968/1969, Henry VII/Henry VIII,
uranium-235/uranium-238, 3.5/35), and never when ambiguous:

- rules 2 and 3: the candidate matches strings of two synsets (or a synset and an incorrect
  string);
- rule 4: the candidate is as close to, or closer to, a string of another synset or an
  incorrect string; or another synset (or incorrect string) holds a string of the same
  shape as the matched one -- the same words but one, differing in at most 3 letters --
  where the candidate's edit falls: those letters tell two answers apart, so a change there
  is more likely another answer than a typo (synsets "adenosine diphosphate" and "adenosine
  triphosphate": "adenosine fiphosphate" is not suggested).

An expert assessor accepts a suggestion at a glance when the difference is one of form
(rules 1-3) or an obvious slip of the finger in a long word; every rule above that refuses
a typo stands for a pair of different answers one or two letters apart seen in QA test
collections (bench/suggest_precision.py measures them: precision and recall, old rule
against new, on the demo and a generated set).  What no rule here can know is a lexicon:
"Ben Jonson"/"Ben Johnson" and "Georgia"/"Georgina" are still suggested.

``score`` is the rapidfuzz ratio (0-100) of the two strings compared as in rule 2; 100 only
for the same key (99 at most otherwise), so a page can show it as a percentage.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz, process
from rapidfuzz.distance import OSA, Levenshtein

from evaluation.metrics.normalize import normalize_answer

__all__ = ["Suggester", "Suggestion", "suggest"]

ARTICLES = frozenset({"a", "an", "the"})
MIN_WORD = 5  # letters of a word an insertion, deletion or transposition may change
MIN_WORD_SUBSTITUTION = 6
MIN_LONG_WORD = 10  # a word two edits may change
MIN_LONG_STRING = 12  # letters (without spaces) of both strings for a distance of 2
SHAPE_WINDOW = 3  # the longest stretch by which two strings "of the same shape" differ

# Prefixes that change the meaning (numbers, opposites, positions): an edit inside one turns
# one answer into another.  Longest first, so "hyper" is found before "hyp...".
PREFIXES = tuple(
    sorted(
        {
            "mono",
            "uni",
            "di",
            "bi",
            "tri",
            "tetra",
            "penta",
            "hexa",
            "hepta",
            "octa",
            "nona",
            "deca",
            "poly",
            "multi",
            "hemi",
            "semi",
            "un",
            "in",
            "im",
            "il",
            "ir",
            "non",
            "dis",
            "anti",
            "ante",
            "pro",
            "pre",
            "post",
            "sub",
            "super",
            "supra",
            "hyper",
            "hypo",
            "inter",
            "intra",
            "endo",
            "exo",
            "ecto",
            "epi",
            "meta",
            "para",
            "ortho",
            "cis",
            "trans",
            "micro",
            "macro",
            "mega",
            "giga",
            "kilo",
            "milli",
            "nano",
            "pico",
            "homo",
            "hetero",
            "iso",
        },
        key=len,
        reverse=True,
    )
)
SUFFIXES = ("ide", "ite", "ate", "ane", "ene", "yne", "ose", "ase")

_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_POS = {ch: (r, c) for r, row in enumerate(_ROWS) for c, ch in enumerate(row)}
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
_ASCII_PUNCT = str.maketrans(
    "", "", "".join(chr(i) for i in range(128) if unicodedata.category(chr(i)).startswith("P"))
)
_ROMAN = re.compile(r"M{0,4}(CM|CD|D?C{0,3})(XC|XL|L?X{0,3})(IX|IV|V?I{0,3})")


def gettext_noop(message: str) -> str:
    """``message`` as it is: marks it for translation (``makemessages`` finds the calls by
    this name) in a module that imports no Django; the page translates the reason
    (``Suggestion.reason_in``)."""
    return message


# why a synset is suggested, in words (English; ``Suggestion.reason_in`` translates)
REASONS = {
    "key": gettext_noop("same key"),
    "differs": gettext_noop("differs only in %(what)s: %(text)s ~ %(string)s"),
    "order": gettext_noop("same words in another order: %(text)s ~ %(string)s"),
    "typo1": gettext_noop("one-letter typo of %(string)s"),
    "typo2": gettext_noop("two-letter typo of %(string)s"),
}
# what rule 2 finds different, and how a list of them is written
DIFFERENCES = {
    "case": gettext_noop("letter case"),
    "articles": gettext_noop("articles"),
    "punctuation": gettext_noop("punctuation"),
    "spacing": gettext_noop("spacing"),
    "accents": gettext_noop("accents"),
}
LIST_SEPARATOR = gettext_noop(", ")
LIST_LAST = gettext_noop("%(list)s and %(last)s")


def _same(message: str) -> str:
    return message


@dataclass(frozen=True, slots=True)
class Suggestion:
    """A suggested synset (the key of ``groups`` it was found under), how similar the
    candidate is to the judged string that suggested it (``score``, 0-100), that string
    (``string``) and why (``why``: the key of ``REASONS``, the candidate's text and, for
    rule 2, the keys of ``DIFFERENCES``), in words by ``reason``."""

    synset: Hashable
    score: int
    string: str
    why: str
    text: str = ""
    differences: tuple[str, ...] = ()

    @property
    def reason(self) -> str:
        """Why, in words (English)."""
        return self.reason_in(_same)

    def reason_in(self, gettext: Callable[[str], str]) -> str:
        """Why, in words, each message passed through ``gettext`` (the page's language)."""
        words = [gettext(DIFFERENCES[d]) for d in self.differences]
        what = (
            gettext(LIST_LAST)
            % {"list": gettext(LIST_SEPARATOR).join(words[:-1]), "last": words[-1]}
            if len(words) > 1
            else "".join(words)
        )
        return gettext(REASONS[self.why]) % {
            "what": what,
            "text": _quote(self.text),
            "string": _quote(self.string),
        }


@dataclass(frozen=True, slots=True)
class _Form:
    text: str
    key: str
    words: tuple[str, ...]  # rule 2: no articles, punctuation or accents
    spaced: str
    compact: str
    numbers: tuple[str, ...]
    articles: tuple[str, ...]
    accented: tuple[str, ...]
    bag: tuple[str, ...]  # rule 3: the words in alphabetical order


def _is_punct(ch: str) -> bool:
    return unicodedata.category(ch).startswith("P")


def _unaccent(word: str) -> str:
    """``word`` without the combining accents of Latin letters (not the Japanese voicing
    marks, which make another letter)."""
    if word.isascii():
        return word
    out = []
    for ch in unicodedata.normalize("NFD", word):
        if unicodedata.combining(ch) and out and out[-1] < "\u0250":
            continue
        out.append(ch)
    return unicodedata.normalize("NFC", "".join(out))


def _numbers(text: str, key: str) -> tuple[str, ...]:
    """The numbers of ``text`` in order: digits (a thousands comma dropped) and upper-case
    Roman numerals ("Elizabeth I.")."""
    nums = [_THOUSANDS.sub("", m) for m in _NUMBER.findall(key)]
    nums += [
        w
        for w in map(_unpunct, unicodedata.normalize("NFKC", text).split())
        if w.isupper() and w.isalpha() and w.isascii() and _ROMAN.fullmatch(w)
    ]
    return tuple(nums)


def _unpunct(word: str) -> str:
    if word.isascii():
        return word.translate(_ASCII_PUNCT)
    return "".join(ch for ch in word if not _is_punct(ch))


def _cased(text: str, articles: Iterable[str]) -> str:
    """The compact form of ``text`` with its letter case (for the reason only)."""
    words = [w for w in map(_unpunct, unicodedata.normalize("NFKC", text).split()) if w]
    for a in articles:  # drop the articles found (in order), whatever their case
        for i, w in enumerate(words):
            if w.casefold() == a:
                del words[i]
                break
    return _unaccent("".join(words))


# The judging page builds a Suggester over every judged string of its question at each
# request, and from one request to the next only the strings just judged are new: a form is
# a pure function of (text, mode), immutable, so it is computed once per process (about
# 0.7 KB each: 8,192 are the strings of 8 pages of 1,000, some 6 MB).
@lru_cache(maxsize=8192)
def _form(text: str, mode: str) -> _Form:
    norm = normalize_answer(text, "normalized")
    key = norm if mode == "normalized" else normalize_answer(text, mode)
    raw = [w for w in map(_unpunct, norm.split()) if w]
    words, articles = [], []
    for i, w in enumerate(raw):
        # a leading article, or "the" before another word; never the last word (Vitamin A)
        if i + 1 < len(raw) and (w == "the" or (w in ARTICLES and not words)):
            articles.append(w)
        else:
            words.append(w)
    plain = tuple(_unaccent(w) for w in words)
    return _Form(
        text=text,
        key=key,
        words=plain,
        spaced=" ".join(plain),
        compact="".join(plain),
        numbers=_numbers(text, norm),
        articles=tuple(articles),
        accented=tuple(words),
        bag=tuple(sorted(plain)),
    )


def _differences(a: _Form, b: _Form, mode: str) -> tuple[str, ...]:
    """What tells ``a`` from ``b`` when rule 2 finds them equal (keys of ``DIFFERENCES``)."""
    cased = mode == "exact" and _cased(a.text, a.articles) != _cased(b.text, b.articles)
    what = ["case"] if cased else []
    if a.articles != b.articles:
        what.append("articles")
    if [ch for ch in a.text if _is_punct(ch)] != [ch for ch in b.text if _is_punct(ch)]:
        what.append("punctuation")
    if len(a.words) != len(b.words):
        what.append("spacing")
    if "".join(a.accented) != "".join(b.accented):
        what.append("accents")
    if not what:
        what.append("spacing")
    return tuple(what)


def _adjacent(x: str, y: str) -> bool:
    px, py = _POS.get(x), _POS.get(y)
    if px is None or py is None:
        return False
    return abs(px[0] - py[0]) <= 1 and abs(px[1] - py[1]) <= 1


def _affix(word: str, affixes: Iterable[str], *, end: bool) -> str:
    for a in affixes:
        if (word.endswith(a) if end else word.startswith(a)) and len(word) > len(a) + 2:
            return a
    return ""


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _common_suffix(a: str, b: str, limit: int) -> int:
    n = 0
    while n < limit and a[len(a) - 1 - n] == b[len(b) - 1 - n]:
        n += 1
    return n


def _window(a: str, b: str) -> tuple[int, int, int]:
    """Where ``b`` differs from ``a``: the common prefix length ``p`` and the ends of the
    differing stretches in ``a`` and ``b`` (``a[p:ea]`` became ``b[p:eb]``)."""
    p = _common_prefix(a, b)
    s = _common_suffix(a, b, min(len(a), len(b)) - p)
    return p, len(a) - s, len(b) - s


def _word_typo_ok(m: str, c: str, context: bool) -> bool:
    """True when word ``c`` may be a typo of judged word ``m`` (rule 4); ``context``: the
    other words of a long string are the same, which makes a typo likelier.  One function
    on purpose (radon D): its branches are the exceptions of rule 4 in the module's order
    (digits, one edit, two edits, affixes), each a guard returning False; split, the rule
    would no longer read as one list."""
    if any(ch.isdigit() for ch in m + c):
        return False
    d = OSA.distance(m, c)
    p, em, _ = _window(m, c)
    if d == 1:
        shorter = min(len(m), len(c)) + context
        if shorter < MIN_WORD or (p == 0 and not (context and shorter > MIN_WORD)):
            return False
        if len(m) == len(c) and em - p == 1:  # a substitution
            if shorter < MIN_WORD_SUBSTITUTION or not _adjacent(m[p], c[p]):
                return False
        elif len(m) != len(c) and p + 1 >= max(len(m), len(c)):
            # a last letter added or dropped makes another word (Paris/Parish, Sweden/Swede)
            # unless it doubles the one before (Pariss)
            long = m if len(m) > len(c) else c
            if long[-1] != long[-2]:
                return False
    elif d == 2:
        if min(len(m), len(c)) < MIN_LONG_WORD or p < 2:
            return False
    else:
        return False
    # one known prefix (suffix) turned into another: another answer, not a typo
    pm, pc = _affix(m, PREFIXES, end=False), _affix(c, PREFIXES, end=False)
    if pm and pc and pm != pc and p < max(len(pm), len(pc)):
        return False
    sm, sc = _affix(m, SUFFIXES, end=True), _affix(c, SUFFIXES, end=True)
    return not (sm and sc and sm != sc and em > len(m) - max(len(sm), len(sc)))


def _typo_ok(m: _Form, c: _Form) -> int:
    """The number of edits when ``c`` may be a typo of ``m`` (rule 4), else 0."""
    if len(m.words) != len(c.words):
        return 0
    changed = [(x, y) for x, y in zip(m.words, c.words, strict=True) if x != y]
    context = len(changed) < len(m.words) and min(len(m.compact), len(c.compact)) >= MIN_LONG_STRING
    if not changed or not all(_word_typo_ok(x, y, context) for x, y in changed):
        return 0
    d = OSA.distance(m.spaced, c.spaced)
    if d == 2 and min(len(m.compact), len(c.compact)) < MIN_LONG_STRING:
        return 0
    return d if d in (1, 2) else 0


def _same_shape(m: _Form, c: _Form, other: _Form) -> bool:
    """True when ``other`` has the shape of ``m`` (the same words but one, which differs in a
    stretch of at most ``SHAPE_WINDOW`` letters) and that stretch is where ``c`` differs
    from ``m`` too: it tells answers apart (di/mono in adenosine diphosphate/monophosphate)."""
    if len(other.words) != len(m.words) or other.spaced == m.spaced:
        return False
    if sum(x != y for x, y in zip(m.words, other.words, strict=True)) != 1:
        return False
    p, em, _ = _window(m.spaced, c.spaced)
    q, eo_m, eo = _window(m.spaced, other.spaced)
    if eo_m - q > SHAPE_WINDOW or eo - q > SHAPE_WINDOW:
        return False
    if em == p:  # c only inserted letters: inside the stretch, not at its edges
        return q < p < eo_m
    if eo_m == q:  # other only inserted letters
        return p < q < em
    return p < eo_m and q < em  # the two stretches share a letter of m


def _quote(text: str) -> str:
    return "'" + " ".join(text.split()) + "'"


class Suggester:
    """The judged strings of one question, indexed once for many candidates.

    ``groups`` maps each synset (any hashable: a model instance, an ordinal) to the texts
    of its strings; ``incorrect`` are the texts judged incorrect; ``mode`` is the
    collection's matching mode (``normalized`` or ``exact``), which decides "same key"."""

    def __init__(
        self,
        groups: Mapping[Hashable, Iterable[str]],
        *,
        incorrect: Iterable[str] = (),
        mode: str = "normalized",
    ) -> None:
        self.mode = mode
        self._forms: list[tuple[object, _Form]] = []
        self._wrong = object()  # the group of the incorrect strings
        for group, texts in groups.items():
            self._forms += [(group, _form(t, mode)) for t in texts]
        self._forms += [(self._wrong, _form(t, mode)) for t in incorrect]
        self._by_key: dict[str, list[int]] = {}
        self._by_compact: dict[str, list[int]] = {}
        self._by_bag: dict[tuple[str, ...], list[int]] = {}
        for i, (_, f) in enumerate(self._forms):
            if f.key:  # an empty key matches nothing ("A" under squad matching)
                self._by_key.setdefault(f.key, []).append(i)
            self._by_compact.setdefault(f.compact, []).append(i)
            if len(f.words) > 1:
                self._by_bag.setdefault(f.bag, []).append(i)
        self._spaced = [f.spaced for _, f in self._forms]

    def _one(self, hits: list[int], c: _Form, *, ordered: bool = True) -> int | None:
        """The one string of ``hits`` with the numbers of ``c`` (in the same order when
        ``ordered``) whose group is unambiguous, or None."""

        def numbers(f: _Form):
            return f.numbers if ordered else sorted(f.numbers)

        hits = [i for i in hits if numbers(self._forms[i][1]) == numbers(c)]
        groups = {id(self._forms[i][0]) for i in hits}
        if len(groups) != 1 or self._forms[hits[0]][0] is self._wrong:
            return None
        return hits[0]

    def _result(self, i: int, c: _Form, why: str, differences: tuple[str, ...] = ()) -> Suggestion:
        group, m = self._forms[i]
        score = min(99, round(fuzz.ratio(c.spaced, m.spaced)))
        return Suggestion(
            synset=group,
            score=score,
            string=m.text,
            why=why,
            text=c.text,
            differences=differences,
        )

    def suggest(self, text: str) -> Suggestion | None:
        """The synset the candidate ``text`` probably belongs to, with why, or None (see the
        module's rules)."""
        return self._suggest(_form(text, self.mode), None)

    def suggest_many(self, texts: Iterable[str]) -> list[Suggestion | None]:
        """``suggest`` for each of ``texts``, the typo distances computed in one batch."""
        forms = [_form(t, self.mode) for t in texts]
        if not forms or not self._spaced:
            return [self._suggest(c, []) for c in forms]
        dist = process.cdist(
            [c.spaced for c in forms],
            self._spaced,
            scorer=OSA.distance,
            score_cutoff=2,
            dtype=np.int32,
        )
        return [
            self._suggest(c, [(int(row[i]), int(i)) for i in np.flatnonzero(row <= 2)])
            for c, row in zip(forms, dist, strict=True)
        ]

    def _suggest(self, c: _Form, near: list[tuple[int, int]] | None) -> Suggestion | None:
        if c.key and c.key in self._by_key:
            i = self._by_key[c.key][0]
            group, m = self._forms[i]
            if group is self._wrong:
                return None
            return Suggestion(synset=group, score=100, string=m.text, why="key", text=c.text)
        if not c.compact:
            return None
        if c.compact in self._by_compact:
            i = self._one(self._by_compact[c.compact], c)
            if i is None:
                return None
            m = self._forms[i][1]
            return self._result(i, c, "differs", _differences(c, m, self.mode))
        if len(c.bag) > 1 and c.bag in self._by_bag:
            i = self._one(self._by_bag[c.bag], c, ordered=False)
            if i is None:
                return None
            return self._result(i, c, "order")
        if near is None:  # (distance, index) of the strings within 2 edits
            near = [
                (d, i)
                for _, d, i in process.extract(
                    c.spaced, self._spaced, scorer=OSA.distance, score_cutoff=2, limit=None
                )
            ]
        return self._typo(c, near)

    def _typo(self, c: _Form, near: list[tuple[int, int]]) -> Suggestion | None:
        if not near:
            return None
        best = min(d for d, _ in near)
        at_best = [i for d, i in near if d == best]
        groups = {id(self._forms[i][0]) for i in at_best}
        if len(groups) != 1 or self._forms[at_best[0]][0] is self._wrong:
            return None  # nearest to an incorrect string, or equally near two synsets
        group = self._forms[at_best[0]][0]
        for i in at_best:
            m = self._forms[i][1]
            if m.numbers != c.numbers or not (d := _typo_ok(m, c)):
                continue
            # the strings of the same shape as m are within a Levenshtein distance of 3
            shape = process.extract(
                m.spaced,
                self._spaced,
                scorer=Levenshtein.distance,
                score_cutoff=SHAPE_WINDOW,
                limit=None,
            )
            if any(
                self._forms[j][0] is not group and _same_shape(m, c, self._forms[j][1])
                for _, _, j in shape
            ):
                return None
            return self._result(i, c, "typo1" if d == 1 else "typo2")
        return None


def suggest(
    text: str,
    groups: Mapping[Hashable, Iterable[str]],
    *,
    incorrect: Iterable[str] = (),
    mode: str = "normalized",
) -> Suggestion | None:
    """The synset of ``groups`` (synset -> texts of its strings) that the candidate
    ``text`` probably belongs to, with a score and the reason, or None; ``incorrect`` are
    the texts judged incorrect.  For many candidates build one ``Suggester``."""
    return Suggester(groups, incorrect=incorrect, mode=mode).suggest(text)
