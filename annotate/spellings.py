"""The matching keys of a string's spellings (DESIGN.md section 4, issue 23 part 5).

A string's spellings are its text and its variants (the spellings folded into it because
they had its key under the matching mode of the time).  Its keys are the keys of all its
spellings under the collection's *current* mode, one ``SpellingKey`` row per distinct
key, so a run answer equal to any spelling matches the string under every mode: "Richard
Nixon." folded into "Richard Nixon" under ``normalized`` matching keys apart from it under
``exact``, and still matches it.  ``AnswerString.key`` stays the key of the string's text
(the string's own identity: what a typed string or a file row is compared with first);
the keys of the other spellings are only in ``SpellingKey``.

Two strings of a question never share a key (the table's unique constraint): a writer that
adds a spelling finds the string holding its key with ``key_owners`` first.  Every writer of
strings keeps the table in step through ``string_keys_sync`` alone (a deleted string's keys
go with it by cascade); every reader that matches run answers to strings reads the table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection

from config.bulk import delete_rows, ids_in, insert_rows
from evaluation.metrics.normalize import normalize_many

from .models import AnswerString, Collection, SpellingKey

# rows per IN list or INSERT (SQLite's bound on query parameters is far above)
BATCH = 2000


def spellings_of(string: AnswerString) -> list[str]:
    """``string``'s text, then its variants, each once."""
    return list(dict.fromkeys((string.text, *string.variants)))


def string_keys_sync(*, strings: Iterable[AnswerString], mode: str) -> int:
    """The one writer of ``SpellingKey``: replace the keys of ``strings`` (saved, with
    their text and variants) by the distinct non-empty keys of their spellings under
    ``mode``, the collection's matching mode (an empty key matches nothing: "A" under
    squad).  Every write that creates strings or changes their text or variants calls it;
    the caller has made sure no other string of the question holds one of these keys
    (``key_owners``): the unique constraint refuses it otherwise.  Returns the number of
    keys written."""
    return spelling_keys_write(
        rows=((s.pk, s.question_id, spellings_of(s)) for s in strings if s.pk is not None),
        mode=mode,
    )


def spelling_keys_write(
    *, rows: Iterable[tuple[int, int, Sequence[str]]], mode: str, replace: bool = True
) -> int:
    """``string_keys_sync`` of strings given as (pk, question id, spellings: the text
    first) tuples, for the writers of many strings at once (a matching-mode change, an
    import): one set-based delete of their keys and one bulk insert of the new ones.
    ``replace=False`` for strings just created, which hold no key yet: no delete."""
    rows = list(rows)
    if replace:
        delete_rows(SpellingKey, "string_id", [pk for pk, _, _ in rows])
    spellings = [(pk, q, sp) for pk, q, spelled in rows for sp in spelled]
    keys = normalize_many([sp for _, _, sp in spellings], mode)
    new: dict[tuple[int, str], tuple[int, int, str]] = {}
    for (pk, q, _), key in zip(spellings, keys, strict=True):
        if key and (pk, key) not in new:
            new[(pk, key)] = (q, pk, key)
    insert_rows(SpellingKey, ["question_id", "string_id", "key"], new.values())
    return len(new)


def key_owners(*, question_ids: Iterable[int]) -> dict[tuple[int, str], int]:
    """(question id, key) -> the id of the string of that question holding the key, for
    every key of ``question_ids``' strings."""
    ids = sorted(set(question_ids))
    # one query on PostgreSQL (the ids as one array), batches under SQLite's bound
    step = max(len(ids), 1) if connection.vendor == "postgresql" else BATCH
    out: dict[tuple[int, str], int] = {}
    for i in range(0, len(ids), step):
        out.update(
            ((q, key), pk)
            for q, key, pk in SpellingKey.objects.filter(
                question_id__in=ids_in(ids[i : i + step])
            ).values_list("question_id", "key", "string_id")
        )
    return out


def strings_claim(
    keys: Iterable[tuple[int, str]], strings: Sequence[AnswerString], owners: dict
) -> dict[tuple[int, str], AnswerString]:
    """The existing string each of ``keys`` (question id, key: the strings a file names)
    takes over: the one of ``strings`` holding the key (``owners``, from ``key_owners``),
    each string at most once -- to the key of its own text first, else to the first key
    that names it.  A key of no string, or of a string taken already, is a new string."""
    keys = list(keys)
    by_pk = {s.pk: s for s in strings}
    claimed: dict[tuple[int, str], AnswerString] = {}
    taken: set[int] = set()
    for own_text in (True, False):
        for q, key in keys:
            s = by_pk.get(owners.get((q, key)))
            if s is None or s.pk in taken or (q, key) in claimed or (s.key == key) != own_text:
                continue
            claimed[(q, key)] = s
            taken.add(s.pk)
    return claimed


def spellings_settle(strings: Sequence[AnswerString], mode: str) -> None:
    """Give each variant of ``strings`` (all of one collection, texts final) to the string
    whose text has its key, when that is another string of its question (a file made that
    spelling a string of its own): no two strings then share a key, and no spelling is
    lost."""
    texts = {(s.question_id, s.key): s for s in strings}
    variants = [(s, v) for s in strings for v in s.variants]
    keys = normalize_many([v for _, v in variants], mode)
    moved: dict[int, list[str]] = {}
    for (s, v), key in zip(variants, keys, strict=True):
        home = texts.get((s.question_id, key))
        if home is not None and home is not s:
            moved.setdefault(id(s), []).append(v)
            if v != home.text and v not in home.variants:
                home.variants = [*home.variants, v]
    for s in strings:
        if id(s) in moved:
            s.variants = [v for v in s.variants if v not in moved[id(s)]]


def spelling_keys_drift(collection: Collection) -> list[tuple[int, set[str], set[str]]]:
    """The strings of ``collection`` whose ``SpellingKey`` rows are not the keys of their
    spellings under its mode, or whose ``key`` is not their text's: (string id, the keys it
    should hold, the keys it holds).  Empty when every writer kept the table in step (the
    tests check it after each writer)."""
    strings = list(
        AnswerString.objects.filter(question__collection=collection).only(
            "pk", "text", "key", "variants"
        )
    )
    held: dict[int, set[str]] = {}
    for pk, key in SpellingKey.objects.filter(question__collection=collection).values_list(
        "string_id", "key"
    ):
        held.setdefault(pk, set()).add(key)
    mode = collection.matching_mode
    out = []
    for s in strings:
        keys = normalize_many(spellings_of(s), mode)
        want = {k for k in keys if k}
        if want != held.get(s.pk, set()) or s.key != keys[0]:
            out.append((s.pk, want, held.get(s.pk, set())))
    return out
