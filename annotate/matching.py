"""A collection's matching mode changed: its strings re-keyed and the strings whose
spellings now share a key folded (DESIGN.md section 4).  The run answers follow in the
evaluation app, whose ``collection_matching_mode_change`` calls this.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction
from django.db.models import F

from config.bulk import update_rows
from evaluation.metrics.normalize import MATCH_MODES, normalize_many

from .edits import Conflict, collection_judgments_changed
from .models import (
    AnswerString,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    LayerJudgment,
)
from .spellings import spelling_keys_write

if TYPE_CHECKING:
    from .edits import AnyUser


# -- matching mode -----------------------------------------------------------------------------
@dataclass(frozen=True)
class RekeyConflict:
    """Strings of one question that share a key under the new matching mode but are judged
    differently: ``strings`` holds (text, judgment) pairs, first created first."""

    question: str
    key: str
    strings: tuple[tuple[str, str], ...]

    def __str__(self) -> str:
        listed = "; ".join(f'"{t}" ({j})' for t, j in self.strings)
        if not self.key:
            return f"question {self.question}: {listed} would have an empty matching key"
        return f"question {self.question}: {listed}"


class MatchingModeConflict(Conflict):
    """The matching mode was not changed: ``conflicts`` lists every group of strings to
    judge alike first, and every string whose key would be empty (key ""), which matches
    nothing: to edit or delete first."""

    def __init__(self, mode: str, conflicts: Sequence[RekeyConflict]):
        self.conflicts = list(conflicts)
        empty = [c for c in self.conflicts if not c.key]
        groups = [c for c in self.conflicts if c.key]
        parts = []
        if empty:
            parts.append(
                f"{len(empty)} string(s) would have an empty matching key and match nothing "
                "(string_add refuses such strings); edit or delete them first: "
                + " | ".join(map(str, empty))
            )
        if groups:
            parts.append(
                f"{len(groups)} group(s) of strings would be one string but are judged "
                "differently; judge them alike first: " + " | ".join(map(str, groups))
            )
        super().__init__(f"Under {mode} matching, " + ". And ".join(parts))


def _judgment_label(synset_ordinal: int | None, level_code: str | None, judged: bool) -> str:
    if synset_ordinal is not None:
        return f"synset {synset_ordinal}, level {level_code}"
    return "judged incorrect" if judged else "unjudged"


def _layer_folds(
    groups: Iterable[tuple[str, str, list[tuple[int, str]]]],
) -> tuple[list[RekeyConflict], dict[int, int], int]:
    """The assessors' layer judgments of strings that fold (``groups``: question qid, new
    key and the (pk, text) of its strings, the kept one first).  In each layer the first
    judgment among a group's strings goes to the kept string, identical ones are dropped
    with their strings, and different ones are conflicts.  Returns the conflicts, the
    judgments to move (pk: the kept string's pk) and how many duplicates go."""
    groups = list(groups)
    by_string: dict[int, list[tuple]] = {}
    for row in (
        LayerJudgment.objects.filter(
            string_id__in=[pk for _, _, members in groups for pk, _ in members]
        )
        .order_by("layer_id", "id")
        .values_list(
            "pk", "string_id", "layer_id", "layer__assessor__username", "group", "level__code"
        )
    ):
        by_string.setdefault(row[1], []).append(row)
    conflicts: list[RekeyConflict] = []
    moved: dict[int, int] = {}
    dropped = 0
    for qid, key, members in groups:
        layers: dict[int, list[tuple[str, tuple]]] = {}
        for pk, text in members:
            for row in by_string.get(pk, ()):
                layers.setdefault(row[2], []).append((text, row))
        for marks in layers.values():
            if len({(row[4], row[5]) for _, row in marks}) > 1:
                conflicts.append(
                    RekeyConflict(
                        qid,
                        key,
                        tuple(
                            (
                                text,
                                f"{row[3]}'s layer: "
                                + _judgment_label(row[4], row[5], judged=True),
                            )
                            for text, row in marks
                        ),
                    )
                )
                continue
            if marks[0][1][1] != members[0][0]:  # the kept string is unjudged in this layer
                moved[marks[0][1][0]] = members[0][0]
            dropped += len(marks) - 1
    return conflicts, moved, dropped


def _sharing(rows: Sequence[tuple], keys: Sequence[str], mode: str) -> dict:
    """The strings of ``rows`` (pk, question id, qid, text, key, variants, ...; first created
    first) that share a key under ``mode`` by any of their spellings, grouped (transitively:
    "a" sharing a key with "b", and "b" with "c", are one group): (question id, the key of
    the group's first string) -> row indices, first created first, in order of their first
    string.  A string whose text would have an empty key is left out (a conflict of its
    own)."""
    spelled = [(i, v) for i, r in enumerate(rows) if keys[i] for v in r[5]]
    parent = list(range(len(rows)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = i = parent[parent[i]]
        return i

    holder: dict[tuple[int, str], int] = {}
    pairs = [(i, k) for i, k in enumerate(keys) if k]
    variant_keys = normalize_many([v for _, v in spelled], mode)
    pairs += zip([i for i, _ in spelled], variant_keys, strict=True)
    for i, key in pairs:
        if not key:
            continue
        a, b = root(i), root(holder.setdefault((rows[i][1], key), i))
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[tuple[int, str], list[int]] = {}
    for i, r in enumerate(rows):
        if keys[i]:
            top = root(i)
            groups.setdefault((r[1], keys[top]), []).append(i)
    return groups


def _fold_plan(
    rows: Sequence[tuple], keys: Sequence[str], groups: dict
) -> tuple[list, list[int], dict[int, list[str]]]:
    """The strings ``collection_set_matching_mode`` folds: returns the conflicts (strings
    whose key would be empty, groups sharing a key whose judgments disagree), the pks folded
    away and, per kept string, its variants after the fold."""
    # a string whose key would be empty ("A" under squad) would match nothing, and
    # string_add refuses it: a conflict to resolve first (edit or delete it)
    conflicts = [
        RekeyConflict(r[2], "", ((r[3], _judgment_label(r[7], r[8], r[9] is not None)),))
        for i, r in enumerate(rows)
        if not keys[i]
    ]
    folded, keepers = [], {}
    for (_, key), members in groups.items():
        if len(members) < 2:
            continue
        judgments = {(rows[i][6], rows[i][8], rows[i][9] is not None) for i in members}
        if len(judgments) > 1:
            conflicts.append(
                RekeyConflict(
                    rows[members[0]][2],
                    key,
                    tuple(
                        (
                            rows[i][3],
                            _judgment_label(rows[i][7], rows[i][8], rows[i][9] is not None),
                        )
                        for i in members
                    ),
                )
            )
            continue
        first = rows[members[0]]
        spellings = [s for i in members for s in (rows[i][3], *rows[i][5])]
        keepers[first[0]] = [s for s in dict.fromkeys(spellings) if s != first[3]]
        folded += [rows[i][0] for i in members[1:]]
    return conflicts, folded, keepers


def _rekey_write(
    rows: Sequence[tuple],
    keys: Sequence[str],
    folded: list[int],
    keepers: dict[int, list[str]],
    moved: dict[int, int],
    mode: str,
) -> int:
    """Write a planned re-key: move the folded strings' layer judgments, delete the folded
    strings, store the new keys and variants and sync the spelling keys.  Returns the number
    of strings whose key changed."""
    gone = set(folded)
    if folded:
        # moved before the folded strings go: their deletion cascades to the duplicates
        update_rows(LayerJudgment, ["string_id"], moved.items())
        # an open layer page of these questions is stale now: its strings changed
        JudgingLayer.objects.filter(question_id__in={r[1] for r in rows if r[0] in gone}).update(
            version=F("version") + 1
        )
    AnswerString.objects.filter(pk__in=folded).delete()
    changed = [(r[0], keys[i]) for i, r in enumerate(rows) if r[0] not in gone and keys[i] != r[4]]
    # a key may move to a string whose own key moves away (unique per question, checked
    # row by row): such a string steps aside to a key of its own first
    taken = {(r[1], keys[i]) for i, r in enumerate(rows) if r[0] not in gone and keys[i] != r[4]}
    aside = [
        r[0]
        for i, r in enumerate(rows)
        if r[0] not in gone and keys[i] != r[4] and (r[1], r[4]) in taken
    ]
    update_rows(AnswerString, ["key"], ((pk, f"\u0001rekey {pk}") for pk in aside))
    update_rows(AnswerString, ["key"], changed)
    update_rows(AnswerString, ["variants"], keepers.items())
    spelling_keys_write(
        rows=(
            (r[0], r[1], list(dict.fromkeys((r[3], *keepers.get(r[0], r[5])))))
            for r in rows
            if r[0] not in gone
        ),
        mode=mode,
    )
    return len(changed)


@transaction.atomic
def collection_set_matching_mode(*, collection: Collection, mode: str, by: AnyUser | None) -> int:
    """Change ``collection``'s matching mode to ``mode`` and re-key every spelling of its
    strings (text and variants, ``string_keys_sync``) with the engine's key function
    (DESIGN.md section 4).  Spellings of one string that now key apart stay its spellings
    and match it still ("Richard Nixon." folded into "Richard Nixon" under normalized
    matching, after a switch to exact).  Strings of a question whose spellings now share a
    key fold into the first created when their judgments agree (same synset and level, or
    both judged incorrect, or both unjudged): its text stays, the others' texts and
    variants join its variants, so nothing typed or imported is lost.  When they disagree
    ("Radcliffe Line" incorrect, "The Radcliffe Line" correct, under ``squad``) nothing is
    written and MatchingModeConflict lists every such group, and every string whose key
    would be empty ("A" or "The" under ``squad``: it would match nothing, and ``string_add``
    refuses such a string), to edit or delete first.  The assessors' layer judgments of folded
    strings go to the kept string in their layer (an identical one there drops the
    duplicate, a different one is a conflict too), so no layer loses a judgment.  Returns
    the number of strings folded.  Run answers are keyed by the evaluation app, whose
    ``collection_matching_mode_change`` re-keys them in the same transaction."""
    if mode not in MATCH_MODES:
        raise Conflict(f"Unknown matching mode {mode!r}.")
    given, collection = collection, Collection.objects.select_for_update().get(pk=collection.pk)
    old = collection.matching_mode
    if mode == old:
        given.matching_mode = mode
        return 0
    rows = list(
        AnswerString.objects.filter(question__collection=collection)
        .order_by("question_id", "created_at", "id")
        .values_list(
            "pk",
            "question_id",
            "question__qid",
            "text",
            "key",
            "variants",
            "synset_id",
            "synset__ordinal",
            "level__code",
            "judged_at",
        )
    )
    keys = normalize_many([r[3] for r in rows], mode)
    groups = _sharing(rows, keys, mode)
    conflicts, folded, keepers = _fold_plan(rows, keys, groups)
    layer_conflicts, moved, dropped = _layer_folds(
        (rows[members[0]][2], key, [(rows[i][0], rows[i][3]) for i in members])
        for (_, key), members in groups.items()
        if len(members) > 1
    )
    conflicts += layer_conflicts
    if conflicts:
        raise MatchingModeConflict(mode, conflicts)
    rekeyed = _rekey_write(rows, keys, folded, keepers, moved, mode)
    collection.matching_mode = given.matching_mode = mode
    collection.save(update_fields=["matching_mode"])
    user = by if by is not None and by.is_authenticated else None
    JudgmentEvent.objects.create(
        collection=collection,
        user=user,
        action="matching_mode_set",
        before={"matching_mode": old},
        after={
            "matching_mode": mode,
            "folded": len(folded),
            "rekeyed": rekeyed,
            "layer_judgments_moved": len(moved),
            "layer_judgments_dropped": dropped,
        },
    )
    collection_judgments_changed(collection_id=collection.pk)
    return len(folded)
