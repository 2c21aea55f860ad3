"""Reads of the judging workspace (DESIGN.md section 4): one builder, ``workspace_build``,
for gold (``question_workspace``) and for an assessor's layer (``layer_selectors``), each
giving it its synsets and its strings with their judgments."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import (
    BooleanField,
    Count,
    ExpressionWrapper,
    OuterRef,
    Q,
    Subquery,
    TextField,
)
from django.db.models.functions import Cast
from django.utils.translation import gettext

from .models import AnswerString, AnswerSynset, Level, Question, SpellingKey, state_token
from .selectors import consistent_read
from .suggest import Suggester


class WorkspaceString:
    """One answer string as the judging workspace shows it: its row (with its other
    spellings, ``variants``), run frequency, level (``level_obj``, ``level_rank``),
    suggested synset (``suggestion``, ``suggestion_score``, ``suggestion_reason``) and
    ``token`` (``string_token``: the state the page sends back)."""

    __slots__ = (
        "freq",
        "judged",
        "key",
        "level_id",
        "level_obj",
        "level_rank",
        "pk",
        "suggestion",
        "suggestion_reason",
        "suggestion_score",
        "synset_id",
        "text",
        "token",
        "variants",
    )

    def __init__(
        self,
        pk: int,
        text: str,
        key: str,
        synset_id: int | None,
        level_id: int | None,
        judged: bool,
        variants: Sequence[str] = (),
    ) -> None:
        self.pk, self.text, self.key, self.variants = pk, text, key, variants or ()
        self.synset_id, self.level_id, self.judged = synset_id, level_id, judged
        self.freq, self.level_obj, self.level_rank = 0, None, None
        self.suggestion, self.suggestion_score, self.suggestion_reason = None, None, ""

    @property
    def id(self) -> int:
        return self.pk


def question_workspace(question: Question) -> Workspace:
    """Everything the judging workspace shows for ``question``, in a fixed number of
    queries whatever its size: synsets with their strings (each with its level) and best
    level, the pool of unjudged candidates most frequent first (frequency = number of runs
    that returned the key; run names are not read), a suggested synset per candidate when
    likely right (``suggestion``, ``suggestion_score`` and, in words, ``suggestion_reason``:
    the rules of annotate/suggest.py -- a suggestion only) and the incorrect strings.  The
    question's version, status and notes are read again with them, in one consistent read,
    so the page's version is that of what it shows."""
    with consistent_read():
        question.refresh_from_db(fields=["version", "status", "notes"])
        return _workspace(question)


def run_frequencies(question: Question) -> dict[int, int]:
    """How many runs returned each string of ``question`` (string id -> runs), in any of its
    spellings (``SpellingKey``: a run answering "Richard Nixon." counts for "Richard Nixon"
    holding that spelling, under every mode).  One query."""
    # the runs' answers through the reverse relation (the evaluation app's RunAnswer):
    # annotate does not import evaluation; without its default ordering, whose joins (run,
    # question and their collections) stayed in the grouped query
    # (the holder too: one string at most holds a key, and its default ordering joined
    # four tables into a subquery run for every answer: 130 ms at 100 runs)
    holder = SpellingKey.objects.filter(question=OuterRef("question"), key=OuterRef("key"))
    return dict(
        question.run_answers.order_by()
        .annotate(string=Subquery(holder.order_by().values("string_id")[:1]))
        .filter(string__isnull=False)
        .values_list("string")
        .annotate(n=Count("run_id", distinct=True))
    )


@dataclass(slots=True)
class Workspace:
    """What the judging workspace shows of one question, gold or an assessor's layer
    alike: the collection's levels, the synsets (``AnswerSynset`` or ``LayerSynset``, each
    with ``members``, ``best`` and ``best_rank``), the unjudged candidates most frequent
    first and the strings judged incorrect."""

    levels: list[Level]
    synsets: list[Any]
    candidates: list[WorkspaceString]
    incorrect: list[WorkspaceString]

    @property
    def n_strings(self) -> int:
        judged = sum(len(s.members) for s in self.synsets)
        return judged + len(self.candidates) + len(self.incorrect)

    @property
    def page_synsets(self) -> str:
        """The synsets' numbers in the order shown: every write names a synset by its
        number on the page."""
        return " ".join(str(s.pk) for s in self.synsets)


def workspace_build(
    question: Question,
    *,
    levels: list[Level],
    synsets: list[Any],
    strings: Iterable[WorkspaceString],
) -> Workspace:
    """The workspace of ``question`` from what differs between gold and a layer: the
    ``synsets`` shown (keyed by ``pk``, the number a string's ``synset_id`` names) and the
    ``strings`` with their judgments.  A string judged into a synset (or with a level) that
    is not among them is shown as a candidate, whose token makes any edit of it refused as
    stale.  Suggestions come from these synsets and incorrect strings only (for a layer,
    never gold's).  One query (the run frequencies)."""
    by_level = {lv.pk: lv for lv in levels}
    rank = {lv.pk: i for i, lv in enumerate(levels, start=1)}
    by_synset = {s.pk: s for s in synsets}
    for syn in synsets:
        syn.members, syn.best, syn.best_rank = [], None, None
    freq = run_frequencies(question)
    candidates, incorrect = [], []
    for s in strings:
        s.freq = freq.get(s.pk, 0)
        syn = by_synset.get(s.synset_id) if s.synset_id is not None else None
        if s.synset_id is not None and (syn is None or s.level_id not in by_level):
            # only possible inside a caller's READ COMMITTED transaction
            s.synset_id, s.level_id, s.judged = None, None, False
        if syn is not None and s.synset_id is not None:
            s.level_obj = lv = by_level[s.level_id]
            s.level_rank = rank[s.level_id]
            syn.members.append(s)
            if syn.best is None or lv.order < syn.best.order:
                syn.best, syn.best_rank = lv, s.level_rank
        elif s.judged:
            incorrect.append(s)
        else:
            candidates.append(s)
        s.token = state_token(s.synset_id, s.level_id, s.judged)
    candidates.sort(key=lambda s: (-s.freq, s.pk))
    _suggest(candidates, synsets, incorrect, question.collection.matching_mode)
    return Workspace(levels=levels, synsets=synsets, candidates=candidates, incorrect=incorrect)


def _suggest(
    candidates: list[WorkspaceString],
    synsets: list[Any],
    incorrect: list[WorkspaceString],
    mode: str,
) -> None:
    """Give each candidate the synset its text suggests, if likely right (annotate/suggest.py:
    a suggestion only)."""
    suggester = Suggester(
        {syn: [t for s in syn.members for t in (s.text, *s.variants)] for syn in synsets},
        incorrect=[t for s in incorrect for t in (s.text, *s.variants)],
        mode=mode,
    )
    for c, hit in zip(candidates, suggester.suggest_many(c.text for c in candidates), strict=True):
        if hit is not None:
            c.suggestion, c.suggestion_score = hit.synset, hit.score
            c.suggestion_reason = hit.reason_in(gettext)  # in the page's language


def collection_levels(question: Question) -> list[Level]:
    """The levels of ``question``'s collection, best first (one query)."""
    return list(Level.objects.filter(collection_id=question.collection_id).order_by("order"))


def _workspace(question: Question) -> Workspace:
    synsets = list(AnswerSynset.objects.filter(question=question).order_by("ordinal"))
    for s in synsets:
        # the synset id of the file it was imported from, shown unless it is the ordinal
        s.shown_label = s.label if s.label != str(s.ordinal) else ""
    # plain rows, not model instances: a question may hold 1,000 strings (and whether a
    # string was judged, not when: a datetime costs a conversion a row)
    judged = ExpressionWrapper(Q(judged_at__isnull=False), output_field=BooleanField())
    # the other spellings as the database's JSON text: most strings have none, and decoding
    # "[]" for each of them cost as much as the rest of the row
    rows = (
        AnswerString.objects.filter(question=question)
        .order_by("id")
        .annotate(judged=judged, variants_text=Cast("variants", TextField()))
        .values_list("id", "text", "key", "synset_id", "level_id", "judged", "variants_text")
    )
    strings = (
        WorkspaceString(*row[:6], json.loads(row[6]) if row[6] != "[]" else ()) for row in rows
    )
    return workspace_build(
        question, levels=collection_levels(question), synsets=synsets, strings=strings
    )
