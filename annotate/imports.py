"""Imports of a collection (docs/formats.md): the entry points.

An import is planned first -- the file is parsed by the scoring engine's parsers and checked
against the collection, which gives a preview (counts) or every error with its line number
-- and written only when the plan has no error, in one transaction (all or nothing).  The
plans of each kind are in ``annotate.import_plans`` (questions, flat answer lists, layers)
and ``annotate.judgments_plan`` (judgments); each carries the write it would do.  This
module runs them: ``import_plan`` (the preview), ``collection_import`` (the write) and the
previews waiting for their confirmation (``PendingImport``).  The exports, which re-import
unchanged, are ``annotate.exports``.
"""

from __future__ import annotations

import secrets
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from config.bulk import gc_paused, ids_in
from evaluation.metrics import InputError, Issue

from .import_plans import ImportPlan, plan_flat, plan_layers, plan_questions
from .judgments_plan import plan_judgments
from .models import Collection, JudgmentEvent, PendingImport, Question, QuestionStatus

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.contrib.auth.models import AbstractBaseUser

    from .edits import AnyUser

KINDS = {
    "questions": gettext_lazy("Questions CSV (question_id,question)"),
    "flat": gettext_lazy("Flat answer list (question_id,answer)"),
    "judgments": gettext_lazy("Judgments CSV (question_id,synset_id,answer,level)"),
    "layers": gettext_lazy("Layers CSV (question_id,synset_id,answer,level,assessor,done)"),
}
# how long a previewed file waits for its confirmation (PendingImport rows)
PENDING_TTL = timedelta(hours=1)


class ImportRefused(Exception):
    def __init__(self, issues: list[Issue]):
        self.issues = issues
        super().__init__("; ".join(str(i) for i in issues[:5]))


def import_plan(
    *, collection: Collection, kind: str, data: bytes, filename: str, by: AnyUser | None = None
) -> ImportPlan:
    """Parse and check ``data`` as a ``kind`` file for ``collection`` without writing:
    the counts to preview, or every error with its line number."""
    try:
        if kind == "questions":
            return plan_questions(collection, data, filename)
        if kind == "flat":
            return plan_flat(collection, data, filename, by)
        if kind == "judgments":
            return plan_judgments(collection, data, filename, by)
        if kind == "layers":
            return plan_layers(collection, data, filename, by)
    except InputError as e:
        return ImportPlan(kind, filename, issues=e.issues)
    raise ValueError(f"unknown import kind {kind!r}")


@gc_paused()
@transaction.atomic
def collection_import(
    *,
    collection: Collection,
    kind: str,
    data: bytes,
    filename: str,
    by: AnyUser | None = None,
    mark_done: bool = False,
    progress: Callable[[int, int | None, str], None] | None = None,
) -> ImportPlan:
    """Validate the whole file, then write it (all or nothing); raise ImportRefused with
    every error when the file is bad.  With ``mark_done``, the questions a judgments file
    leaves with no unjudged string are marked done.  ``progress(done, total, unit)`` hears
    the lines read, then the write starting (a background job's bar).  Returns the plan
    that was carried out."""
    # no_key: imports of a collection wait for each other, but not the rows that refer to
    # it (their foreign key checks take a key share lock: a layers request committing its
    # event would wait for this import, which waits for the request's questions: deadlock)
    Collection.objects.select_for_update(no_key=True).filter(pk=collection.pk).first()
    lines = max(data.count(b"\n"), data.count(b"\r")) + (not data.endswith((b"\n", b"\r")))
    if progress is not None:
        progress(0, lines, "lines")
    plan = import_plan(collection=collection, kind=kind, data=data, filename=filename, by=by)
    if not plan.ok:
        raise ImportRefused(plan.issues)
    if progress is not None:
        progress(lines, lines, "lines")
        progress(0, None, "questions")
    plan._write()
    if mark_done and kind == "judgments":
        Question.objects.filter(pk__in=ids_in(plan.fully_judged)).update(status=QuestionStatus.DONE)
        plan.counts[gettext_noop("questions marked done")] = len(plan.fully_judged)
    JudgmentEvent.objects.create(
        collection=collection,
        user=by if by is not None and by.is_authenticated else None,
        action=f"{kind}_import",
        after={"file": filename, **plan.counts},
    )
    return plan


# -- previews waiting for their confirmation ---------------------------------------------------
class PendingImportRefused(Exception):
    """The confirmation of a preview that is not (or no longer) the user's to confirm."""


def pending_imports_clear(*, now: datetime | None = None) -> int:
    """Delete the previews older than ``PENDING_TTL``; returns how many went."""
    limit = (now or timezone.now()) - PENDING_TTL
    return PendingImport.objects.filter(created_at__lt=limit).delete()[0]


@transaction.atomic
def pending_import_create(
    *, collection: Collection, user: AbstractBaseUser, kind: str, filename: str, data: bytes
) -> PendingImport:
    """Keep a validated file until its confirmation, under a fresh unguessable token.  A
    user has one pending import per collection (a newer preview replaces the older), and
    expired previews of everyone are deleted on the way."""
    pending_imports_clear()
    PendingImport.objects.filter(collection=collection, user=user).delete()
    return PendingImport.objects.create(
        token=secrets.token_hex(16),
        collection=collection,
        user=user,
        kind=kind,
        filename=filename[:255],
        data=data,
    )


def pending_import_confirm(
    *,
    token: str,
    collection: Collection,
    user: AbstractBaseUser,
    mark_done: bool = False,
    progress: Callable[[int, int | None, str], None] | None = None,
) -> tuple[PendingImport, ImportPlan]:
    """Import the file previewed under ``token`` (validated again, all or nothing) and
    consume the token in the same transaction, so it cannot be confirmed twice.  Raises
    PendingImportRefused when the token is unknown, used, replaced, expired, someone
    else's or another collection's; ImportRefused (token consumed) when the file no
    longer passes.  Returns the pending import and the plan carried out."""
    refused = error = None
    with transaction.atomic():
        pending = PendingImport.objects.select_for_update().filter(token=token or "").first()
        expired = pending is not None and pending.created_at < timezone.now() - PENDING_TTL
        if pending is None:
            error = gettext(
                "That preview is no longer pending (it was imported already, replaced "
                "by a newer preview, or it expired); upload the file again."
            )
        elif pending.user_id != user.pk:
            error = gettext("That preview was made by another user; upload the file yourself.")
        elif pending.collection_id != collection.pk:
            error = gettext("That preview is for another collection; upload the file here.")
        elif expired:
            error = gettext(
                "That preview expired (previews are kept for %(minutes)s minutes); upload "
                "the file again."
            ) % {"minutes": int(PENDING_TTL.total_seconds() // 60)}
        if pending is not None and (error is None or expired):
            # the count guards against a concurrent confirmation of the same token
            if not PendingImport.objects.filter(pk=pending.pk).delete()[0] and error is None:
                error = gettext("That preview was confirmed already.")
        pending_imports_clear()
        if error is None:
            try:
                plan = collection_import(
                    collection=collection,
                    kind=pending.kind,
                    data=bytes(pending.data),
                    filename=pending.filename,
                    by=user,
                    mark_done=mark_done,
                    progress=progress,
                )
            except ImportRefused as e:
                refused = e  # the token stays consumed: the preview no longer holds
    if error is not None:
        raise PendingImportRefused(error)
    if refused is not None:
        raise refused
    return pending, plan
