"""The unit of work of every judging write on gold (STYLE.md habit 2), and what every
write of the annotation app shares: ``Conflict``, the acting user's type, the judgment
version bump and the rule that a question with an unjudged string is not done.

Every write is keyword-only, runs in one transaction and writes one ``JudgmentEvent``.
Judging operations (``annotate.judging``, and adjudication, ``annotate.adjudication``) go
through ``Edit``: it locks their question row (``select_for_update``), compares the version
the page was rendered with, checks that the edit is still meaningful (the string is still in
the state the assessor saw) and bumps ``Question.version``; a stale edit that is no longer
meaningful raises ``Conflict`` and writes nothing.  A synset the page named by its number
(``PageSynset``) is resolved under that lock too, and refused when the number no longer
means the synset the page showed.  Every change of a judgment also bumps the collection's
``judgment_version`` (scores are cached by it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db.models import (
    Exists,
    F,
    OuterRef,
)
from django.utils import timezone
from django.utils.translation import gettext

from .models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    LayerRequest,
    LayerState,
    Level,
    Question,
    QuestionStatus,
    string_token,
)
from .spellings import string_keys_sync

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

    AnyUser = AbstractBaseUser | AnonymousUser
    # a level by instance, id or code; None: the default the operation names
    LevelRef = Level | int | str | None


class Conflict(Exception):
    """A write refused because the question changed under the assessor (or the request
    no longer makes sense); nothing was written."""


@dataclass(frozen=True)
class PageSynset:
    """A synset named by its number on the assessor's page (a digit key, a typed number):
    ``ordinal`` as the page showed it and ``pk``, the synset that number meant there (None
    when the page did not say, as a plain form post without the page's synset list).
    Resolved under the question's lock by ``Edit.synset``: an edit whose number has
    changed meaning since the page was rendered is refused."""

    ordinal: int
    pk: int | None = None


def questions_lock(question_ids: Iterable[int]) -> None:
    """Lock the questions' rows (``no_key``: their strings and layers may still point at
    them) in id order, so two writes sharing questions never deadlock: the layer writes
    take it before they read the layers the questions have, and a second write on the same
    questions waits until the first committed, then reads its layers."""
    list(
        Question.objects.select_for_update(no_key=True)
        .filter(pk__in=list(question_ids))
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def collection_judgments_changed(*, collection_id: int) -> None:
    """Bump the collection's judgment version: cached scores of older versions go stale."""
    Collection.objects.filter(pk=collection_id).update(
        judgment_version=F("judgment_version") + 1, judgments_changed_at=timezone.now()
    )


# -- strings that come unjudged: the question is not done ---------------------------------
def questions_reopen(
    *,
    question_ids: Iterable[int],
    by: AnyUser | None = None,
    reason: str,
    record: bool = True,
    source: str = "",
) -> list[int]:
    """The one rule for every writer that adds strings to questions or brings strings back
    unjudged (pooling, a flat answer list, a typed string, an undo, a string sent back to
    the pool): a question that has an unjudged string is not done.  Each of ``question_ids``
    that is done and has an unjudged string goes back to in progress -- and so back into
    its assessors' queues and "next question".  With ``record``, each gets a
    ``question_reopen`` event naming ``reason`` (a judging operation records the change in
    its own event instead); ``source`` (a ``Source``: pool, import) is recorded with it, so
    the organizer's dashboard can count the questions pooling reopened.  Returns the ids
    reopened."""
    unjudged = AnswerString.objects.filter(question=OuterRef("pk"), judged_at__isnull=True)
    rows = list(
        Question.objects.filter(pk__in=list(question_ids), status=QuestionStatus.DONE)
        .filter(Exists(unjudged))
        .values_list("pk", "collection_id")
    )
    if not rows:
        return []
    Question.objects.filter(pk__in=[pk for pk, _ in rows]).update(
        status=QuestionStatus.IN_PROGRESS
    )  # the callers bump the versions
    if record:
        user = by if by is not None and by.is_authenticated else None
        JudgmentEvent.objects.bulk_create(
            JudgmentEvent(
                collection_id=c,
                question_id=pk,
                user=user,
                action="question_reopen",
                before={"status": QuestionStatus.DONE},
                after={
                    "status": QuestionStatus.IN_PROGRESS,
                    "reason": reason,
                    **({"source": source} if source else {}),
                },
            )
            for pk, c in rows
        )
    return [pk for pk, _ in rows]


# -- the judging operations ---------------------------------------------------------------
def string_snap(s: AnswerString) -> dict:
    return {
        "text": s.text,
        "key": s.key,
        "synset": s.synset_id,
        "level": s.level_id,
        "source": s.source,
        "judged_by": s.judged_by_id,
        "judged_at": s.judged_at.isoformat() if s.judged_at else None,
        "variants": list(s.variants),
    }


class Edit:
    """One judging operation on one question: locks the question row, remembers the
    before-state of what it touches, and at the end removes empty synsets, renumbers the
    others 1..R, bumps the versions and writes the JudgmentEvent."""

    def __init__(
        self, *, question: Question | int, by: AnyUser | None, version: int | None, action: str
    ) -> None:
        pk = question.pk if isinstance(question, Question) else question
        # lock the question row only: locking the joined collection row as well made every
        # edit of a collection wait for the others and deadlock with a run import (which
        # holds key-share locks on the collection and its questions); "no key" still
        # serializes edits of one question without blocking foreign-key checks
        self.question = (
            Question.objects.select_for_update(of=("self",), no_key=True)
            .select_related("collection", "layer_request")
            .get(pk=pk)
        )
        self.stale = version is not None and int(version) != self.question.version
        self.by = by if by is not None and by.is_authenticated else None
        self.action = action
        self.now = timezone.now()
        self.synsets = list(AnswerSynset.objects.filter(question=self.question).order_by("ordinal"))
        self.before = self._question_snap()
        self.before_strings: dict[int, dict | None] = {}
        self.strings: dict[int, AnswerString] = {}
        self.deleted: set[int] = set()
        self.detail: dict = {}
        # the synset the operation put strings into: its number after renumbering goes into
        # the event (``ordinal``) for the history's sentence
        self.target: AnswerSynset | None = None

    # reads under the lock
    def _question_snap(self) -> dict:
        return {
            "version": self.question.version,
            "status": self.question.status,
            "notes": self.question.notes,
            "synsets": [[s.pk, s.note, s.label] for s in self.synsets],
        }

    def string(self, pk: int | str, expect: str | None = None) -> AnswerString:
        """The string ``pk`` of this question; with ``expect`` (its token as the page
        showed it) a string whose state has changed since is refused."""
        try:
            s = AnswerString.objects.get(pk=int(pk), question=self.question)
        except (AnswerString.DoesNotExist, ValueError, TypeError):
            raise Conflict(
                gettext("That answer string no longer exists (someone deleted or edited it).")
            ) from None
        if expect is not None and expect != string_token(s):
            raise Conflict(
                gettext(
                    "“%(text)s” was changed by someone else since your page was loaded; your "
                    "edit was not applied."
                )
                % {"text": s.text}
            )
        self.touch(s)
        return s

    def touch(self, s: AnswerString, *, created: bool = False) -> None:
        if s.pk not in self.before_strings:
            self.before_strings[s.pk] = None if created else string_snap(s)
        self.strings[s.pk] = s

    def synset(self, pk: int | str | PageSynset) -> AnswerSynset:
        """The synset ``pk`` of this question, or the one a page named by its number (read
        under the question's lock, so it cannot change before this edit commits)."""
        if isinstance(pk, PageSynset):
            return self._page_synset(pk)
        for syn in self.synsets:
            if str(syn.pk) == str(pk):
                return syn
        raise Conflict(
            gettext(
                "That synset no longer exists (it was merged or emptied); your edit was not "
                "applied."
            )
        )

    def _page_synset(self, ref: PageSynset) -> AnswerSynset:
        n = ref.ordinal
        if ref.pk is None:
            # the page did not say which synset its number meant: trust the number only if
            # nothing changed since the page was rendered
            if self.stale:
                raise Conflict(
                    gettext(
                        "Someone else changed this question since your page was loaded, so "
                        "synset %(n)d may no longer be the one you saw; your edit was not "
                        "applied."
                    )
                    % {"n": n}
                )
            for syn in self.synsets:
                if syn.ordinal == n:
                    return syn
            raise Conflict(gettext("There is no synset %(n)d.") % {"n": n})
        meant = next((syn for syn in self.synsets if syn.pk == ref.pk), None)
        if meant is None:
            raise Conflict(
                gettext(
                    "Synset %(n)d of your page no longer exists (someone merged, emptied or "
                    "undid it); your edit was not applied."
                )
                % {"n": n}
            )
        if meant.ordinal != n:
            raise Conflict(
                gettext(
                    "The synsets were renumbered since your page was loaded: your synset "
                    "%(n)d is now synset %(now)d; your edit was not applied."
                )
                % {"n": n, "now": meant.ordinal}
            )
        return meant

    def level(self, level: LevelRef) -> Level:
        levels = list(Level.objects.filter(collection_id=self.question.collection_id))
        if level is None:
            return min(levels, key=lambda lv: lv.order)
        for lv in levels:
            if lv == level or str(lv.pk) == str(level) or lv.code == level:
                return lv
        raise Conflict(gettext("Unknown level %(level)r.") % {"level": level})

    # writes
    def new_synset(self) -> AnswerSynset:
        syn = AnswerSynset.objects.create(question=self.question, ordinal=len(self.synsets) + 1)
        self.synsets.append(syn)
        return syn

    def place(
        self,
        s: AnswerString,
        synset: AnswerSynset | None,
        level: Level | None,
        *,
        judged: bool = True,
    ) -> None:
        s.synset, s.level = synset, level if synset is not None else None
        s.judged_at = self.now if judged else None
        s.judged_by = self.by if judged else None
        s.save(update_fields=["synset", "level", "judged_at", "judged_by"])

    def _adjudicated(self) -> bool:
        """Whether the question is judged in layers and this edit left it complete
        (``LayerState.COMPLETE``: its k layers done, every string judged in gold): by the
        agreement step, an adjudication or an organizer's judgment in gold.  A query only
        for a question judged in layers."""
        try:
            self.question.layer_request  # noqa: B018 (read with the question: no query)
        except LayerRequest.DoesNotExist:
            return False
        state = (
            Question.objects.filter(pk=self.question.pk)
            .with_layer_state()
            .values_list("layer_state", flat=True)
            .get()
        )
        return state == LayerState.COMPLETE

    def finish(self, *, judgments: bool = True) -> JudgmentEvent:
        """End the operation: empty synsets go and the others are renumbered 1..R, the
        question's status and versions follow (``judgments``: it changed gold), the strings
        whose spellings changed get their keys, and one event records before and after."""
        q = self.question
        self._drop_empty_synsets()
        self._settle_status(judgments=judgments)
        if judgments:
            collection_judgments_changed(collection_id=q.collection_id)
        if self.target is not None:
            self.detail["ordinal"] = self.target.ordinal
        self._sync_spelling_keys()
        after = self._question_snap()
        before = dict(self.before, strings={str(k): v for k, v in self.before_strings.items()})
        after["strings"] = {
            str(k): (None if k in self.deleted else string_snap(s)) for k, s in self.strings.items()
        }
        return JudgmentEvent.objects.create(
            collection_id=q.collection_id,
            question=q,
            user=self.by,
            action=self.action,
            before=before,
            after=dict(after, **self.detail),
        )

    def _drop_empty_synsets(self) -> None:
        used = set(
            AnswerString.objects.filter(question=self.question, synset__isnull=False)
            .values_list("synset_id", flat=True)
            .distinct()
        )
        empty = [s for s in self.synsets if s.pk not in used]
        if empty:
            AnswerSynset.objects.filter(pk__in=[s.pk for s in empty]).delete()
            self.synsets = [s for s in self.synsets if s.pk in used]
        _renumber(self.synsets)

    def _settle_status(self, *, judgments: bool) -> None:
        """A judged question is in progress, one judged in layers done when its gold is,
        a done one with a string (back) unjudged reopened; the version goes up."""
        q = self.question
        if judgments and self.action != "undo" and q.status == QuestionStatus.TODO:
            q.status = QuestionStatus.IN_PROGRESS
        if judgments and q.status != QuestionStatus.DONE and self._adjudicated():
            # a question judged in layers is done when its gold is: nobody marks it done
            q.status = QuestionStatus.DONE
        q.version += 1
        q.save(update_fields=["version", "status", "notes", "updated_at"])
        if q.status == QuestionStatus.DONE and questions_reopen(
            question_ids=[q.pk], by=self.by, reason=self.action, record=False
        ):
            # a string came (back) unjudged: this event records the reopening
            q.status = QuestionStatus.IN_PROGRESS
            self.detail["reopened"] = True

    def _sync_spelling_keys(self) -> None:
        """The strings created, or whose spellings changed, get the keys of their spellings."""

        def respelled(pk: int, s: AnswerString) -> bool:
            before = self.before_strings[pk]
            return before is None or (before["text"], before["variants"]) != (
                s.text,
                list(s.variants),
            )

        spelled = [
            s for pk, s in self.strings.items() if pk not in self.deleted and respelled(pk, s)
        ]
        if spelled:
            string_keys_sync(strings=spelled, mode=self.question.collection.matching_mode)


def _renumber(synsets: Sequence[AnswerSynset]) -> None:
    """Give ``synsets`` (in this order) the ordinals 1..R, in two passes so the unique
    (question, ordinal) constraint holds at every step."""
    wrong = [s for i, s in enumerate(synsets, start=1) if s.ordinal != i]
    if not wrong:
        return
    top = max([s.ordinal for s in synsets] + [len(synsets)]) + 1
    for i, s in enumerate(wrong):
        s.ordinal = top + i
    AnswerSynset.objects.bulk_update(wrong, ["ordinal"])
    for i, s in enumerate(synsets, start=1):
        s.ordinal = i
    AnswerSynset.objects.bulk_update(wrong, ["ordinal"])
